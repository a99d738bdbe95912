/* table.c — a run's result files as one transaction (manifest.h) and the standard metadata block. */
#include "table.h"
#include "drift.h"
#include "backend.h"
#include "envinfo.h"

#include "digest.h"
#include "escape.h"
#include "manifest.h"
#include "outlock.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

int drift_file_open(drift_file_t *f, const char *path)
{
    memset(f, 0, sizeof *f);
    if (strlen(path) >= sizeof f->path) return DRIFT_EINVAL;
    drift_pathf(f->path, sizeof f->path, "%s", path);
    drift_pathf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", path, (long)getpid());
    f->fp = fopen(f->tmp, "w");
    return f->fp ? DRIFT_OK : DRIFT_EIO;
}

int drift_file_commit(drift_file_t *f)
{
    if (!f->fp) return DRIFT_EIO;
    int bad = ferror(f->fp) != 0;
    bad |= fclose(f->fp) != 0;
    f->fp = NULL;
    if (!bad && rename(f->tmp, f->path) == 0) return DRIFT_OK;
    remove(f->tmp);
    return DRIFT_EIO;
}

void drift_file_abort(drift_file_t *f)
{
    if (!f->fp) return;
    fclose(f->fp);
    f->fp = NULL;
    remove(f->tmp);
}

/* The set being written: one per program (an experiment writes one set). manifest.h says how
 * it is committed and why that is safe to interrupt. */
static struct {
    char dir[1024];     /* --out */
    char name[96];      /* the experiment */
    char staging[1100]; /* "<dir>/.<name>.staging.<pid>" */
    const drift_cli_t *cli;
} set;

static void abort_all(drift_file_t *files, int n)
{
    for (int m = 0; m < n; m++) drift_file_abort(&files[m]);
    if (set.staging[0]) rmdir(set.staging);
}

/* A result file's final name must be free or a regular file (the previous run's): a directory
 * or anything else in the way is refused before the first rename, so a failed run moves none
 * of its files (before, 2 of formats' 5 files had moved when the third rename failed). */
static void check_target(drift_file_t *files, int n, const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        abort_all(files, n);
        drift_die("--out: '%s' is in the way (not a regular file; accepted: a missing or regular file)", path);
    }
}

#define OWN_MAX 64 /* result files of one set (a manifest lists at most DRIFT_MANIFEST_FILES) */

void drift_out_lock_cli(const drift_cli_t *cli)
{
    struct stat st;
    char why[2400];
    /* A missing --out is made now (and removed at exit while empty): locking only an existing
     * one let a second run into a fresh directory compute alongside the first and be refused
     * only when it opened its files. */
    drift_out_create(cli->out_dir);
    if (stat(cli->out_dir, &st) != 0 || !S_ISDIR(st.st_mode)) return; /* drift_files_open says why */
    if (drift_out_lock(why, sizeof why, cli->out_dir, cli->spec->name) != DRIFT_OK) drift_die("--out: %s", why);
}

void drift_files_open(drift_file_t *files, int n, const drift_cli_t *cli, const char *const *suffixes)
{
    memset(files, 0, (size_t)n * sizeof *files);
    char path[1024], why[2400];
    drift_out_path(path, sizeof path, cli, ""); /* creates --out */
    snprintf(set.dir, sizeof set.dir, "%s", cli->out_dir);
    snprintf(set.name, sizeof set.name, "%s", cli->spec->name);
    set.cli = cli;
    /* One writer of this experiment's files in --out from here to the end of the commit. */
    if (drift_out_lock(why, sizeof why, set.dir, set.name) != DRIFT_OK) drift_die("--out: %s", why);
    /* What an earlier run left: a commit it could not finish is finished, its staging
     * directory and temporaries are removed (only those of processes no longer alive). */
    char own[OWN_MAX][256];
    const char *ownp[OWN_MAX];
    int nown = 0;
    for (int k = 0; k < n && nown < OWN_MAX; k++)
        if (suffixes[k]) {
            snprintf(own[nown], sizeof own[nown], "%s%s", set.name, suffixes[k]);
            ownp[nown] = own[nown];
            nown++;
        }
    if (drift_manifest_recover_with(why, sizeof why, set.dir, set.name, ownp, nown) != DRIFT_OK)
        drift_die("--out: %s", why);
    drift_pathf(set.staging, sizeof set.staging, "%s/.%s.staging.%ld", set.dir, set.name, (long)getpid());
    if (mkdir(set.staging, 0777) != 0) {
        set.staging[0] = 0;
        drift_die("--out: cannot write in '%s' (%s)", set.dir, strerror(errno));
    }
    for (int k = 0; k < n; k++) {
        if (!suffixes[k]) continue;
        drift_out_path(path, sizeof path, cli, suffixes[k]);
        check_target(files, n, path);
        drift_file_t *f = &files[k];
        drift_pathf(f->path, sizeof f->path, "%s", path);
        drift_pathf(f->tmp, sizeof f->tmp, "%s/%s%s", set.staging, set.name, suffixes[k]);
        if (!(f->fp = fopen(f->tmp, "w"))) {
            abort_all(files, n);
            drift_die("--out: cannot write '%s'", path);
        }
    }
}

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void write_argv(FILE *fp, const drift_cli_t *cli);

static const drift_envinfo_t *env(void)
{
    static drift_envinfo_t e;
    static int have;
    if (!have) drift_envinfo_collect(&e), have = 1;
    return &e;
}

/* "<staging>/<name>.manifest", written last: every file's size and SHA-256, the build's
 * commit and the argv; and ".obsolete": the previous set's files the new one lacks. */
static int write_manifest(const drift_file_t *files, int n)
{
    char path[1200];
    drift_pathf(path, sizeof path, "%s/%s" DRIFT_MANIFEST_SUFFIX, set.staging, set.name);
    FILE *fp = fopen(path, "w");
    if (!fp) return DRIFT_EIO;
    fprintf(
        fp, "# driftlab run manifest, written last: trust the files only when each matches (drift-manifest check)\n");
    /* Every value escaped (escape.h): one newline in an argument once made this file unreadable
     * and the directory unusable until the journal was removed by hand. */
    fputs("experiment: ", fp);
    drift_escape_fputs(fp, set.name, NULL);
    fputs("\ngit: ", fp);
    drift_escape_fputs(fp, env()->git, NULL);
    fputs("\nargv:", fp);
    write_argv(fp, set.cli);
    fputc('\n', fp);
    for (int k = 0; k < n; k++) {
        if (!files[k].tmp[0]) continue;
        char hex[65];
        long long size;
        if (drift_sha256_file(hex, &size, files[k].tmp) != 0) {
            fclose(fp);
            return DRIFT_EIO;
        }
        fprintf(fp, "file: %lld %s ", size, hex);
        drift_escape_fputs(fp, base(files[k].path), " ");
        fputc('\n', fp);
    }
    int bad = ferror(fp) != 0 || fflush(fp) != 0 || fsync(fileno(fp)) != 0;
    bad |= fclose(fp) != 0;
    if (bad) return DRIFT_EIO;
    drift_manifest_t old;
    drift_pathf(path, sizeof path, "%s/%s" DRIFT_MANIFEST_SUFFIX, set.dir, set.name);
    if (drift_manifest_read(&old, path) != DRIFT_OK) return DRIFT_OK;
    drift_pathf(path, sizeof path, "%s/.obsolete", set.staging);
    if (!(fp = fopen(path, "w"))) return DRIFT_EIO;
    for (int i = 0; i < old.nfiles; i++) {
        int kept = 0;
        for (int k = 0; k < n; k++) kept |= files[k].tmp[0] && !strcmp(base(files[k].path), old.files[i].name);
        if (kept) continue;
        drift_escape_fputs(fp, old.files[i].name, NULL);
        fputc('\n', fp);
    }
    bad = ferror(fp) != 0;
    return (fclose(fp) != 0 || bad) ? DRIFT_EIO : DRIFT_OK;
}

/* Before the commit point: the staging directory with everything in it goes; the previous set
 * is untouched. */
static void remove_staging(drift_file_t *files, int n)
{
    char p[1200];
    for (int m = 0; m < n; m++)
        if (files[m].tmp[0]) remove(files[m].tmp);
    drift_pathf(p, sizeof p, "%s/%s" DRIFT_MANIFEST_SUFFIX, set.staging, set.name);
    remove(p);
    drift_pathf(p, sizeof p, "%s/.obsolete", set.staging);
    remove(p);
    rmdir(set.staging);
}

/* Why a write into the staging directory failed, for the one line: a stream's error flag
 * keeps no errno, so a file system with no block left for the user (looked at before the
 * staging files are removed and free it) is named as what it is; anything else is errno's
 * text when there is one. */
static void write_cause(char *buf, size_t size, int e)
{
    struct statvfs v;
    if (set.staging[0] && statvfs(set.staging, &v) == 0 && v.f_bavail == 0)
        snprintf(buf, size, "%s", strerror(ENOSPC));
    else
        snprintf(buf, size, "%s", e ? strerror(e) : "write error");
}

void drift_files_commit(drift_file_t *files, int n)
{
    char cause[128];
    for (int k = 0; k < n; k++)
        if (files[k].fp && ferror(files[k].fp)) {
            char p[1024];
            drift_pathf(p, sizeof p, "%s", files[k].path);
            write_cause(cause, sizeof cause, 0);
            abort_all(files, n);
            drift_die("--out: write error in '%s' (%s)", p, cause);
        }
    for (int k = 0; k < n; k++) { /* on disk before the commit point */
        if (!files[k].fp) continue;
        errno = 0;
        int bad = fflush(files[k].fp) != 0 || fsync(fileno(files[k].fp)) != 0;
        bad |= fclose(files[k].fp) != 0;
        int e = errno;
        files[k].fp = NULL;
        if (bad) {
            char p[1024];
            drift_pathf(p, sizeof p, "%s", files[k].path);
            write_cause(cause, sizeof cause, e);
            for (int m = 0; m < n; m++) remove(files[m].tmp);
            abort_all(files, n);
            drift_die("--out: cannot write '%s' (%s)", p, cause);
        }
    }
    for (int k = 0; k < n; k++)
        if (files[k].tmp[0]) check_target(files, n, files[k].path);
    char why[2400];
    if (write_manifest(files, n) != DRIFT_OK) {
        remove_staging(files, n);
        drift_die("--out: cannot write the manifest in '%s'", set.dir);
    }
    drift_fault_point();
    char journal[1200];
    drift_pathf(journal, sizeof journal, "%s/.%s.commit", set.dir, set.name);
    struct stat jst;
    if (lstat(journal, &jst) == 0) { /* only a journal rolled forward at open, under the lock, is ours */
        remove_staging(files, n);
        drift_die(
            "--out: '%s' appeared during the run (another writer without the lock?); nothing of this run was moved",
            journal);
    }
    if (rename(set.staging, journal) != 0) { /* 1: the commit point */
        int e = errno;
        remove_staging(files, n);
        drift_die("--out: cannot commit in '%s' (%s)", set.dir, strerror(e));
    }
    set.staging[0] = 0;
    drift_fault_point();
    if (drift_manifest_commit_journal(why, sizeof why, set.dir, set.name) != DRIFT_OK) drift_die("--out: %s", why);
    drift_out_unlock();
}

void drift_fmt_num(char *buf, size_t size, double x, const char *fmt)
{
    if (isnan(x))
        snprintf(buf, size, "nan");
    else if (isinf(x))
        snprintf(buf, size, x > 0 ? "inf" : "-inf");
    else
        snprintf(buf, size, fmt, x);
}

void drift_table_meta(drift_file_t *f, const char *key, const char *fmt, ...)
{
    char small[1024], *buf = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(buf, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (!buf) drift_die("out of memory writing the metadata line '%s' (%d bytes)", key, n);
    /* Escaped (escape.h): a value can never end its line early or smuggle in another key. */
    fprintf(f->fp, "# %s: ", key);
    drift_escape_fputs(f->fp, n < 0 ? "" : buf, NULL);
    fputc('\n', f->fp);
    if (buf != small) free(buf);
}

/* The argv words, escaped: the program's own path differs between build trees; its name is
 * what matters. */
static void write_argv(FILE *fp, const drift_cli_t *cli)
{
    for (int i = 0; i < cli->argc; i++) {
        const char *a = i == 0 ? base(cli->argv[0]) : cli->argv[i];
        drift_argv_fputs(fp, 1, &a);
    }
}

void drift_table_std_meta(drift_file_t *f, const drift_cli_t *cli, const char *gpu)
{
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

    drift_table_meta(f, "experiment", "%s", cli->spec->name);
    drift_table_meta(f, "driftlab", "%s", DRIFT_VERSION);
    drift_table_meta(f, "git", "%s", env()->git);
    if (env()->checkout[0])
        drift_table_meta(f, "git-checkout", "%s (the checkout's commit now; the build's is above)", env()->checkout);
    drift_table_meta(f, "date", "%s", date);
    fprintf(f->fp, "# argv:");
    write_argv(f->fp, cli);
    fputc('\n', f->fp);
    drift_table_meta(f, "seed", "%llu", (unsigned long long)cli->seed);
    drift_table_meta(f, "profile", "%s", drift_profile_name(cli->profile));
    if (!gpu && drift_backend_active()) gpu = env()->cuda; /* device, driver, runtime, cuBLAS (gpu_hook.c) */
    drift_table_meta(f, "backend", "%s", gpu ? "cuda" : "cpu");
    drift_table_meta(f, "compiler", "%s", env()->compiler);
    drift_table_meta(f, "cflags", "%s", env()->cflags);
    drift_table_meta(f, "mpfr", "%s", env()->mpfr);
    drift_table_meta(f, "gmp", "%s", env()->gmp);
    drift_table_meta(f, "cpu", "%s", env()->cpu);
    if (gpu) drift_table_meta(f, "gpu", "%s", gpu);
}
