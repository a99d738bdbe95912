/* table.h — result files: written to a temporary name, renamed only on success, so a
 * failed or interrupted run leaves no partial file and loses nothing already written.
 *
 * CSV convention (design brief): `# key: value` metadata lines, one header row, tidy rows
 * (one measurement per row), hex floats (%a) beside decimal ones where bits matter. */
#ifndef DRIFT_TABLE_H
#define DRIFT_TABLE_H

#include <stdio.h>

#include "cli.h"

typedef struct {
    FILE *fp;          /* write rows with fprintf(f->fp, ...) */
    char path[1024];
    char tmp[1100];
} drift_file_t;

/* Opens "<path>.tmp.<pid>" for writing. 0, or DRIFT_EIO / DRIFT_EINVAL. */
int drift_file_open(drift_file_t *f, const char *path);
/* Flushes, closes and renames onto path. 0, or DRIFT_EIO (the temporary is removed). */
int drift_file_commit(drift_file_t *f);
/* Closes and removes the temporary; path is untouched. Safe on a closed file. */
void drift_file_abort(drift_file_t *f);

/* A set of result files committed together: an experiment opens all of them, writes, and
 * commits all at the end, so that a failed run leaves none of them behind. Like
 * drift_out_path these die (one line, exit 2) rather than return: they are the programs' end.
 *
 * Opens "<out>/<name><suffixes[k]>" for k < n; a NULL suffix leaves files[k] closed (an
 * optional file). On failure aborts those already open and dies "--out: cannot write '<path>'". */
void drift_files_open(drift_file_t *files, int n, const drift_cli_t *cli, const char *const *suffixes);
/* Checks every open file for write errors (all aborted, dies "--out: write error in '<path>'"),
 * then commits each open file in turn (on failure aborts the rest, dies "--out: cannot write"). */
void drift_files_commit(drift_file_t *files, int n);

/* printf of one double with fmt, but "nan", "inf" and "-inf" spelled the same on every libc. */
void drift_fmt_num(char *buf, size_t size, double x, const char *fmt);

void drift_table_meta(drift_file_t *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The standard metadata block: experiment, driftlab version, git commit, date (UTC),
 * argv, seed, profile, backend, threads, compiler, flags, MPFR and GMP versions, CPU, and
 * the CUDA runtime/driver/GPU when the backend used a device (gpu may be NULL). */
void drift_table_std_meta(drift_file_t *f, const drift_cli_t *cli, const char *gpu);

#endif
