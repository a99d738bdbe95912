/* table.c — a run's result files as one transaction (manifest.h) and the standard metadata block. */
#include "table.h"
#include "drift.h"
#include "backend.h"
#include "envinfo.h"

#include "digest.h"
#include "manifest.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

void drift_files_open(drift_file_t *files, int n, const drift_cli_t *cli, const char *const *suffixes)
{
    memset(files, 0, (size_t)n * sizeof *files);
    char path[1024], why[2400];
    drift_out_path(path, sizeof path, cli, ""); /* creates --out */
    snprintf(set.dir, sizeof set.dir, "%s", cli->out_dir);
    snprintf(set.name, sizeof set.name, "%s", cli->spec->name);
    set.cli = cli;
    /* What an earlier run left: a commit it could not finish is finished, its staging
     * directory and temporaries are removed (only those of processes no longer alive). */
    if (drift_manifest_recover(why, sizeof why, set.dir, set.name) != DRIFT_OK) drift_die("--out: %s", why);
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
    fprintf(fp, "# driftlab run manifest, written last: trust the files only when each matches (drift-manifest check)\n");
    fprintf(fp, "experiment: %s\ngit: %s\nargv:", set.name, env()->git);
    for (int i = 0; i < set.cli->argc; i++) fprintf(fp, " %s", i == 0 ? base(set.cli->argv[0]) : set.cli->argv[i]);
    fputc('\n', fp);
    for (int k = 0; k < n; k++) {
        if (!files[k].tmp[0]) continue;
        char hex[65];
        long long size;
        if (drift_sha256_file(hex, &size, files[k].tmp) != 0) {
            fclose(fp);
            return DRIFT_EIO;
        }
        fprintf(fp, "file: %lld %s %s\n", size, hex, base(files[k].path));
    }
    int bad = fflush(fp) != 0 || fsync(fileno(fp)) != 0;
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
        if (!kept) fprintf(fp, "%s\n", old.files[i].name);
    }
    return fclose(fp) != 0 ? DRIFT_EIO : DRIFT_OK;
}

/* Before the commit point: the staging directory with everything in it goes; the previous set
 * is untouched. */
static void remove_staging(drift_file_t *files, int n)
{
    char p[1200];
    for (int m = 0; m < n; m++) if (files[m].tmp[0]) remove(files[m].tmp);
    drift_pathf(p, sizeof p, "%s/%s" DRIFT_MANIFEST_SUFFIX, set.staging, set.name);
    remove(p);
    drift_pathf(p, sizeof p, "%s/.obsolete", set.staging);
    remove(p);
    rmdir(set.staging);
}

void drift_files_commit(drift_file_t *files, int n)
{
    for (int k = 0; k < n; k++)
        if (files[k].fp && ferror(files[k].fp)) {
            char p[1024];
            drift_pathf(p, sizeof p, "%s", files[k].path);
            abort_all(files, n);
            drift_die("--out: write error in '%s'", p);
        }
    for (int k = 0; k < n; k++) { /* on disk before the commit point */
        if (!files[k].fp) continue;
        int bad = fflush(files[k].fp) != 0 || fsync(fileno(files[k].fp)) != 0;
        bad |= fclose(files[k].fp) != 0;
        files[k].fp = NULL;
        if (bad) {
            char p[1024];
            drift_pathf(p, sizeof p, "%s", files[k].path);
            for (int m = 0; m < n; m++) remove(files[m].tmp);
            abort_all(files, n);
            drift_die("--out: cannot write '%s'", p);
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
    if (rename(set.staging, journal) != 0) { /* 1: the commit point */
        int e = errno;
        remove_staging(files, n);
        drift_die("--out: cannot commit in '%s' (%s)", set.dir, strerror(e));
    }
    set.staging[0] = 0;
    drift_fault_point();
    if (drift_manifest_commit_journal(why, sizeof why, set.dir, set.name) != DRIFT_OK) drift_die("--out: %s", why);
}

void drift_fmt_num(char *buf, size_t size, double x, const char *fmt)
{
    if (isnan(x)) snprintf(buf, size, "nan");
    else if (isinf(x)) snprintf(buf, size, x > 0 ? "inf" : "-inf");
    else snprintf(buf, size, fmt, x);
}

void drift_table_meta(drift_file_t *f, const char *key, const char *fmt, ...)
{
    va_list ap;
    fprintf(f->fp, "# %s: ", key);
    va_start(ap, fmt);
    vfprintf(f->fp, fmt, ap);
    va_end(ap);
    fputc('\n', f->fp);
}

void drift_table_std_meta(drift_file_t *f, const drift_cli_t *cli, const char *gpu)
{
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

    drift_table_meta(f, "experiment", "%s", cli->spec->name);
    drift_table_meta(f, "driftlab", "%s", DRIFT_VERSION);
    drift_table_meta(f, "git", "%s", env()->git);
    if (env()->checkout[0]) drift_table_meta(f, "git-checkout", "%s (the checkout's commit now; the build's is above)", env()->checkout);
    drift_table_meta(f, "date", "%s", date);
    fprintf(f->fp, "# argv:");
    for (int i = 0; i < cli->argc; i++) {
        /* The program's own path differs between build trees; its name is what matters. */
        const char *a = i == 0 && strrchr(cli->argv[0], '/') ? strrchr(cli->argv[0], '/') + 1 : cli->argv[i];
        fprintf(f->fp, " %s", a);
    }
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
