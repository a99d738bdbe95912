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

void drift_table_meta(drift_file_t *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The standard metadata block: experiment, driftlab version, git commit, date (UTC),
 * argv, seed, profile, backend, threads, compiler, flags, MPFR and GMP versions, CPU, and
 * the CUDA runtime/driver/GPU when the backend used a device (gpu may be NULL). */
void drift_table_std_meta(drift_file_t *f, const drift_cli_t *cli, const char *gpu);

#endif
