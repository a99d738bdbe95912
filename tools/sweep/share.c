/* share.c — running one share of a sweep, and deciding whether a share on disk can be trusted.
 *
 * Nothing appears under a final name until it is complete: each run writes into
 * runs/NNNNNN.part-HOST-PID/ (the experiment itself writes temporaries and renames), the
 * directory is renamed to runs/NNNNNN/ when the experiment exits 0, and the share's manifest,
 * written last through a temporary and a rename, lists every file with its size and SHA-256.
 * A share killed at any point therefore has no manifest, and a rerun redoes it. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "escape.h"
#include "manifest.h"
#include "outlock.h"
#include "sweep.h"
#include "table.h"

extern char **environ;

void sweep_manifest_path(char *buf, size_t size, const sweep_t *s, const char *dir, long share)
{
    snprintf(buf, size, "%s/shares/share-%ld-of-%ld.manifest", dir, share, s->nshares);
}

/* The last line of a log, for a one-line error. */
static void last_line(char *out, size_t size, const char *path)
{
    out[0] = 0;
    FILE *fp = fopen(path, "r");
    if (!fp) return;
    char line[1024];
    while (fgets(line, sizeof line, fp))
        if (line[0] != '\n') {
            line[strcspn(line, "\n")] = 0;
            snprintf(out, size, "%s", line);
        }
    fclose(fp);
}

/* runs/NNNNNN.part-* left by a killed attempt at run r: the rerun owns the run now. */
static void remove_stale_parts(const char *dir, long r)
{
    char runs[4096], prefix[32];
    snprintf(runs, sizeof runs, "%s/runs", dir);
    snprintf(prefix, sizeof prefix, "%06ld.part-", r);
    DIR *d = opendir(runs);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix))) {
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", runs, e->d_name);
            sweep_remove_tree(path);
        }
    closedir(d);
}

/* Runs run r into its .part directory, then renames it into place. 0, 1 or 2 (as the run). */
static int run_one(const sweep_t *s, const sweep_ctx_t *c, long r)
{
    char part[4096], final[4096], log[4096], exe[4096], desc[1024];
    snprintf(part, sizeof part, "%s/runs/%06ld.part-%s-%ld", c->dir, r, c->host, (long)getpid());
    snprintf(final, sizeof final, "%s/runs/%06ld", c->dir, r);
    snprintf(log, sizeof log, "%s/logs/run-%06ld.log", c->dir, r);
    snprintf(exe, sizeof exe, "%s/%s", c->bindir, s->experiment);
    sweep_describe(desc, sizeof desc, s, r);
    remove_stale_parts(c->dir, r);

    int n;
    const char **args = sweep_run_args(s, r, &n);
    const char **argv = malloc((size_t)(n + 8) * sizeof *argv);
    if (!argv) sweep_die("out of memory for run %ld's %d arguments (fewer options or axes)", r, n + 8);
    int k = 0;
    argv[k++] = s->experiment;
    for (int i = 0; i < n; i++) argv[k++] = args[i];
    argv[k++] = "--out";
    argv[k++] = part;
    argv[k++] = "--quiet";
    argv[k] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int err = posix_spawn(&pid, exe, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    free(args);
    if (err) {
        fprintf(stderr, "drift-sweep: run %ld (%s): cannot start %s: %s\n", r, desc, exe, strerror(err));
        return 1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return 1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char why[1024];
        last_line(why, sizeof why, log);
        if (WIFSIGNALED(st))
            fprintf(stderr, "drift-sweep: run %ld (%s) killed by signal %d (log: %s)\n", r, desc, WTERMSIG(st), log);
        else
            fprintf(stderr, "drift-sweep: run %ld (%s) failed with status %d: %s\n", r, desc, WEXITSTATUS(st), why);
        sweep_remove_tree(part);
        return WIFEXITED(st) && WEXITSTATUS(st) == 2 ? 2 : 1;
    }
    struct stat dst;
    if (stat(part, &dst) != 0 || !S_ISDIR(dst.st_mode)) {
        fprintf(stderr, "drift-sweep: run %ld (%s) wrote no files into %s\n", r, desc, part);
        return 1;
    }
    if (sweep_remove_tree(final) != 0 || rename(part, final) != 0) {
        fprintf(stderr, "drift-sweep: run %ld: cannot rename %s to %s: %s\n", r, part, final, strerror(errno));
        return 1;
    }
    return 0;
}

static int run_share_locked(const sweep_t *s, const sweep_ctx_t *c, long share);

static void utc_now(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The share's lock (lib/run/outlock.h) on "DIR/shares/.share-I-of-N.lock": a second process
 * given the same share (the same command twice, a requeued Slurm task) once removed the first
 * one's live run directory as a stale part. It now refuses that share: status 1. */
static int lock_share(const sweep_t *s, const sweep_ctx_t *c, long share)
{
    char dir[4096], name[96], why[4096];
    snprintf(dir, sizeof dir, "%s/shares", c->dir);
    snprintf(name, sizeof name, "share-%ld-of-%ld", share, s->nshares);
    if (drift_out_lock(why, sizeof why, dir, name) == 0) return 0;
    fprintf(stderr, "drift-sweep: share %ld/%ld: ", share, s->nshares);
    drift_escape_fputs(stderr, why, NULL);
    fputc('\n', stderr);
    return -1;
}

int sweep_run_share(const sweep_t *s, const sweep_ctx_t *c, long share)
{
    if (lock_share(s, c, share) != 0) return 1;
    int rc = run_share_locked(s, c, share);
    drift_out_unlock();
    return rc;
}

static int run_share_locked(const sweep_t *s, const sweep_ctx_t *c, long share)
{
    char manifest[1000];
    sweep_manifest_path(manifest, sizeof manifest, s, c->dir, share);
    /* A stale manifest (another commit, or a damaged share) must not outlive a rerun that dies. */
    if (remove(manifest) != 0 && errno != ENOENT) sweep_die("--out: cannot remove '%s': %s", manifest, strerror(errno));
    double t0 = seconds_now();
    for (long r = share; r < s->nruns; r += s->nshares) {
        int rc = run_one(s, c, r);
        if (rc) return rc;
    }
    sweep_text_t t = {0};
    char when[32];
    utc_now(when, sizeof when);
    sweep_text_add(&t, "# drift-sweep share manifest: written last, so a share without one is not complete\n");
    /* The host and the command line escaped (escape.h): a newline in either would start a
     * line the check reads as a key. */
    char host[1100], *argv_esc = sweep_xrealloc(NULL, 4 * strlen(c->argv_line) + 1);
    drift_escape(host, sizeof host, c->host, NULL);
    drift_escape(argv_esc, 4 * strlen(c->argv_line) + 1, c->argv_line, NULL);
    sweep_text_add(&t,
        "sweep: %s\nexperiment: %s\nshare: %ld/%ld\ncommit: %s\nhost: %s\nargv: %s\nfinished: %s\nseconds: %.1f\n",
        c->def_sha, s->experiment, share, s->nshares, c->commit, host, argv_esc, when, seconds_now() - t0);
    free(argv_esc);
    for (long r = share; r < s->nruns; r += s->nshares) {
        char rundir[4096];
        snprintf(rundir, sizeof rundir, "%s/runs/%06ld", c->dir, r);
        char **names;
        int others, n = sweep_list_files(rundir, &names, &others);
        if (n <= 0) {
            fprintf(stderr, "drift-sweep: run %ld: no result files in %s\n", r, rundir);
            free(t.p);
            return 1;
        }
        sweep_text_add(&t, "run: %ld\n", r);
        for (int i = 0; i < n; i++) {
            char path[4400], hex[65];
            long long size;
            snprintf(path, sizeof path, "%s/%s", rundir, names[i]);
            if (drift_sha256_regular(hex, &size, path) != 0) {
                fprintf(stderr, "drift-sweep: cannot read %s\n", path);
                free(t.p);
                sweep_free_names(names, n);
                return 1;
            }
            sweep_text_add(&t, "file: runs/%06ld/%s %lld %s\n", r, names[i], size, hex);
        }
        sweep_free_names(names, n);
    }
    drift_sha256_t h;
    char hex[65];
    drift_sha256_init(&h);
    drift_sha256_update(&h, t.p, t.len);
    drift_sha256_hex(hex, &h);
    sweep_text_add(&t, "check: %s\n", hex);
    drift_file_t f;
    int ok = drift_file_open(&f, manifest) == 0 && fwrite(t.p, 1, t.len, f.fp) == t.len && fflush(f.fp) == 0 &&
             fsync(fileno(f.fp)) == 0 && drift_file_commit(&f) == 0;
    free(t.p);
    if (!ok) {
        drift_file_abort(&f);
        fprintf(stderr, "drift-sweep: cannot write %s\n", manifest);
        return 1;
    }
    return 0;
}

/* The value of "key: value" line, or NULL. */
static const char *field(const char *line, const char *key)
{
    size_t n = strlen(key);
    return !strncmp(line, key, n) && line[n] == ':' && line[n + 1] == ' ' ? line + n + 2 : NULL;
}

static share_state_t why_not(share_state_t st, char *err, size_t errsz, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static share_state_t why_not(share_state_t st, char *err, size_t errsz, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errsz, fmt, ap);
    va_end(ap);
    return st;
}

/* A run directory holds exactly the nfiles regular files its manifest listed (and checked). */
static int all_listed(const char *rundir, int nfiles)
{
    char **names;
    int others, k = sweep_list_files(rundir, &names, &others);
    if (k >= 0) sweep_free_names(names, k);
    return k == nfiles && others == 0;
}

share_state_t sweep_check_share(const sweep_t *s, const sweep_ctx_t *c, long share, char *err, size_t errsz)
{
    char path[4096];
    sweep_manifest_path(path, sizeof path, s, c->dir, share);
    struct stat mst;
    if (lstat(path, &mst) == 0 && !S_ISREG(mst.st_mode))
        return why_not(SHARE_CORRUPT, err, errsz, "manifest is not a regular file");
    FILE *fp = drift_fopen_regular(path);
    if (!fp) return why_not(SHARE_MISSING, err, errsz, "no manifest");
    sweep_text_t t = {0};
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0) {
        if (t.len + n + 1 > t.cap) {
            t.cap = (t.len + n + 1) * 2;
            t.p = sweep_xrealloc(t.p, t.cap);
        }
        memcpy(t.p + t.len, buf, n);
        t.len += n;
    }
    fclose(fp);
    if (!t.p) return why_not(SHARE_CORRUPT, err, errsz, "empty manifest");
    t.p[t.len] = 0;

    /* Integrity first: the last line is the SHA-256 of everything before it. */
    share_state_t st = SHARE_OK;
    char *last = t.len > 1 ? t.p + t.len - 2 : t.p;
    while (last > t.p && *last != '\n') last--;
    if (*last == '\n') last++;
    const char *check = field(last, "check");
    if (!check || t.p[t.len - 1] != '\n' || strlen(check) != 65) {
        st = why_not(SHARE_CORRUPT, err, errsz, "manifest truncated");
        goto out;
    }
    drift_sha256_t h;
    char hex[65];
    drift_sha256_init(&h);
    drift_sha256_update(&h, t.p, (size_t)(last - t.p));
    drift_sha256_hex(hex, &h);
    if (strncmp(hex, check, 64)) {
        st = why_not(SHARE_CORRUPT, err, errsz, "manifest checksum differs");
        goto out;
    }

    char want_share[64];
    snprintf(want_share, sizeof want_share, "%ld/%ld", share, s->nshares);
    long next_run = share;
    int in_run = 0, nfiles = 0, seen = 0;
    char other_commit[128] = "";
    char rundir[4096] = "";
    for (char *line = t.p, *end; line < last; line = end + 1) {
        end = strchr(line, '\n');
        *end = 0;
        const char *v;
        seen |= (field(line, "sweep") ? 1 : 0) | (field(line, "share") ? 2 : 0) | (field(line, "commit") ? 4 : 0);
        if (!strncmp(line, "run: ", 5) && seen != 7) {
            st = why_not(SHARE_CORRUPT, err, errsz, "manifest lacks its sweep, share or commit line");
            goto out;
        }
        if ((v = field(line, "sweep")) && strcmp(v, c->def_sha)) {
            st = why_not(SHARE_FOREIGN, err, errsz, "made by another sweep: other grid or options");
            goto out;
        } else if ((v = field(line, "share")) && strcmp(v, want_share)) {
            st = why_not(SHARE_FOREIGN, err, errsz, "manifest says share %s", v);
            goto out;
        } else if ((v = field(line, "commit")) && strcmp(v, c->commit)) {
            /* Said only if nothing worse is found: a damaged file matters more. */
            snprintf(other_commit, sizeof other_commit, "%s", v);
        } else if ((v = field(line, "run"))) {
            char *e;
            long r = strtol(v, &e, 10);
            if (*e || r != next_run) {
                st = why_not(SHARE_FOREIGN, err, errsz, "lists run %s where run %ld belongs", v, next_run);
                goto out;
            }
            if (in_run && !all_listed(rundir, nfiles)) {
                st = why_not(SHARE_CORRUPT, err, errsz, "%s holds files the manifest does not list",
                    rundir + strlen(c->dir) + 1);
                goto out;
            }
            snprintf(rundir, sizeof rundir, "%s/runs/%06ld", c->dir, r);
            in_run = 1;
            nfiles = 0;
            next_run += s->nshares;
        } else if ((v = field(line, "file"))) {
            char rel[4096], sum[128];
            long long want, got;
            if (!in_run || sscanf(v, "%4095s %lld %127s", rel, &want, sum) != 3 || strlen(sum) != 64) {
                st = why_not(SHARE_CORRUPT, err, errsz, "malformed line '%s'", line);
                goto out;
            }
            char full[8200];
            snprintf(full, sizeof full, "%s/%s", c->dir, rel);
            if (strncmp(full, rundir, strlen(rundir)) || strchr(full + strlen(rundir) + 1, '/')) {
                st = why_not(SHARE_CORRUPT, err, errsz, "file %s outside its run", rel);
                goto out;
            }
            if (drift_sha256_regular(hex, &got, full) != 0) {
                st = why_not(SHARE_CORRUPT, err, errsz, "%s missing", rel);
                goto out;
            }
            if (got != want || strcmp(hex, sum)) {
                st = why_not(SHARE_CORRUPT, err, errsz, "%s: %s differs from the manifest", rel,
                    got != want ? "size" : "checksum");
                goto out;
            }
            nfiles++;
        }
    }
    if (in_run && !all_listed(rundir, nfiles)) {
        st = why_not(
            SHARE_CORRUPT, err, errsz, "%s holds files the manifest does not list", rundir + strlen(c->dir) + 1);
        goto out;
    }
    if (seen != 7)
        st = why_not(SHARE_CORRUPT, err, errsz, "manifest lacks its sweep, share or commit line");
    else if (next_run < s->nruns)
        st = why_not(SHARE_FOREIGN, err, errsz, "run %ld not listed", next_run);
    else if (other_commit[0])
        st = why_not(SHARE_COMMIT, err, errsz, "from commit %s, not this build's %s", other_commit, c->commit);
out:
    free(t.p);
    return st;
}
