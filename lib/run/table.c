/* table.c — atomic result files and the standard metadata block. */
#include "table.h"
#include "drift.h"
#include "backend.h"
#include "envinfo.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int drift_file_open(drift_file_t *f, const char *path)
{
    memset(f, 0, sizeof *f);
    if (snprintf(f->path, sizeof f->path, "%s", path) >= (int)sizeof f->path) return DRIFT_EINVAL;
    snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", path, (long)getpid());
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

void drift_files_open(drift_file_t *files, int n, const drift_cli_t *cli, const char *const *suffixes)
{
    memset(files, 0, (size_t)n * sizeof *files);
    for (int k = 0; k < n; k++) {
        if (!suffixes[k]) continue;
        char path[1024];
        drift_out_path(path, sizeof path, cli, suffixes[k]);
        if (drift_file_open(&files[k], path) != DRIFT_OK) {
            for (int m = 0; m < k; m++) drift_file_abort(&files[m]);
            drift_die("--out: cannot write '%s'", path);
        }
    }
}

void drift_files_commit(drift_file_t *files, int n)
{
    for (int k = 0; k < n; k++)
        if (files[k].fp && ferror(files[k].fp)) {
            for (int m = 0; m < n; m++) drift_file_abort(&files[m]);
            drift_die("--out: write error in '%s'", files[k].path);
        }
    for (int k = 0; k < n; k++)
        if (files[k].fp && drift_file_commit(&files[k]) != DRIFT_OK) {
            for (int m = k + 1; m < n; m++) drift_file_abort(&files[m]);
            drift_die("--out: cannot write '%s'", files[k].path);
        }
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
    static drift_envinfo_t env;
    static int have_env;
    if (!have_env) {
        drift_envinfo_collect(&env);
        have_env = 1;
    }
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

    drift_table_meta(f, "experiment", "%s", cli->spec->name);
    drift_table_meta(f, "driftlab", "%s", DRIFT_VERSION);
    drift_table_meta(f, "git", "%s", env.git);
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
    if (!gpu && drift_backend_active()) gpu = env.cuda; /* device, driver, runtime, cuBLAS (gpu_hook.c) */
    drift_table_meta(f, "backend", "%s", gpu ? "cuda" : "cpu");
    drift_table_meta(f, "compiler", "%s", env.compiler);
    drift_table_meta(f, "cflags", "%s", env.cflags);
    drift_table_meta(f, "mpfr", "%s", env.mpfr);
    drift_table_meta(f, "gmp", "%s", env.gmp);
    drift_table_meta(f, "cpu", "%s", env.cpu);
    if (gpu) drift_table_meta(f, "gpu", "%s", gpu);
}
