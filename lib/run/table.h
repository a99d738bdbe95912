/* table.h — result files: a single file is written to a temporary name and renamed on
 * success; a run's set of files (drift_files_open/commit) is one transaction with a manifest
 * (manifest.h), so a failed or killed run leaves the previous complete set or the new one.
 *
 * CSV convention (docs/design.md): `# key: value` metadata lines, one header row, tidy rows
 * (one measurement per row), hex floats (%a) beside decimal ones where bits matter. */
#ifndef DRIFT_TABLE_H
#define DRIFT_TABLE_H

#include <stdio.h>

#include "drift.h"
#include "cli.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    FILE *fp; /* write rows with fprintf(f->fp, ...) */
    char path[1024];
    char tmp[1100];
} drift_file_t;

/* Opens "<path>.tmp.<pid>" for writing. 0, or DRIFT_EIO / DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_file_open(drift_file_t *f, const char *path);
/* Flushes, closes and renames onto path. 0, or DRIFT_EIO (the temporary is removed). */
DRIFT_MUST_CHECK int drift_file_commit(drift_file_t *f);
/* Closes and removes the temporary; path is untouched. Safe on a closed file. */
void drift_file_abort(drift_file_t *f);

/* A set of result files committed together: an experiment opens all of them, writes, and
 * commits all at the end, so that a failed run leaves none of them behind. Like
 * drift_out_path these die (one line, exit 2) rather than return: they are the programs' end.
 *
 * Takes the lock of the experiment in --out (outlock.h: a second run refuses, one line, exit 2,
 * naming the directory and the holder's pid), completes what an earlier killed run left in
 * --out (drift_manifest_recover), then opens
 * "<out>/.<name>.staging.<pid>/<name><suffixes[k]>" for k < n, each to become
 * "<out>/<name><suffixes[k]>"; a NULL suffix leaves files[k] closed (an optional file). A final
 * name taken by anything but a regular file, or a file that cannot be opened: everything is
 * removed and it dies "--out: ..." before any computing. */
void drift_files_open(drift_file_t *files, int n, const drift_cli_t *cli, const char *const *suffixes);
/* The experiment's lock on --out (outlock.h), taken now, --out created first when missing
 * (drift_out_create: removed at exit while empty): a program that calls it right after
 * validating --out refuses a second concurrent run before computing rather than at
 * drift_files_open. Dies (one line, exit 2) when another process holds it. */
void drift_out_lock_cli(const drift_cli_t *cli);
/* Checks every open file for write errors, syncs and closes them, writes "<name>.manifest"
 * (sizes, SHA-256, the build's commit, argv) and commits the set (manifest.h: one rename is the
 * commit point, the moves after it are completed by the next run if interrupted). Any failure
 * before the commit point removes the staging directory and dies "--out: ..." with the previous
 * set untouched. DRIFT_FAULT_AT=N kills the process at the N-th step (the transaction test).
 * The lock is released (its file removed) at the end. */
void drift_files_commit(drift_file_t *files, int n);

/* printf of one double with fmt, but "nan", "inf" and "-inf" spelled the same on every libc. */
void drift_fmt_num(char *buf, size_t size, double x, const char *fmt);

/* One "# key: value" line; the value is escaped (escape.h: control bytes, backslash, invalid
 * UTF-8 as \xHH), so it stays one line and a value with nothing to escape is written as is. */
void drift_table_meta(drift_file_t *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The standard metadata block: experiment, driftlab version, git commit, date (UTC),
 * argv (each word escaped with the blank too: drift_argv_parse reads it back), seed, profile, backend, threads, compiler, flags, MPFR and GMP versions, CPU, and
 * the CUDA runtime/driver/GPU when the backend used a device (gpu may be NULL). */
void drift_table_std_meta(drift_file_t *f, const drift_cli_t *cli, const char *gpu);

#ifdef __cplusplus
}
#endif

#endif
