/* manifest.h — a run's files as one unit.
 *
 * Every file of a run is written into a staging directory "<out>/.<name>.staging.<pid>", and
 * "<name>.manifest" (each file's name, size and SHA-256, the build's commit and the argv) is
 * written there last. The commit then goes (table.c, drift_files_commit):
 *   1. rename staging -> "<out>/.<name>.commit"      the commit point: one rename(2)
 *   2. remove the old "<name>.manifest"              the old set is no longer trusted
 *   3. remove the old set's files the new set lacks
 *   4. rename each file into <out>
 *   5. rename the new manifest into <out>, last
 *   6. remove ".<name>.commit"
 * Several renames cannot be one atomic step on POSIX, so the ".commit" directory is an intent
 * journal: it exists from step 1 to step 6 and holds the new manifest and every file not yet
 * moved, so a kill anywhere in 2..6 is completed (rolled forward) by the next run, by
 * `drift-manifest recover DIR`, or by `./lab plot`. A kill before step 1 leaves the previous
 * set untouched (the staging directory is removed by the next run). A reader trusts a set only
 * when no journal is pending and every file matches the manifest (drift_manifest_check), so
 * between a kill and the roll-forward a reader refuses rather than reads a mix. Files keep
 * their names in <out> (data/<name>-prefixed CSVs for the plots/ scripts); the manifest sits beside them. */
#ifndef DRIFT_MANIFEST_H
#define DRIFT_MANIFEST_H

#include <stddef.h>
#include <stdio.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DRIFT_MANIFEST_SUFFIX ".manifest"
#define DRIFT_MANIFEST_FILES 64

typedef struct {
    char name[256];
    long long size;
    char sha[65];
} drift_manifest_file_t;

typedef struct {
    char experiment[96];
    char git[64];
    int nfiles;
    drift_manifest_file_t files[DRIFT_MANIFEST_FILES];
} drift_manifest_t;

/* snprintf for paths: every caller's buffer holds a --out of at most 800 characters
 * (drift_out_check) plus a file name, so nothing is cut. */
void drift_pathf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Every value in a manifest (experiment, git, argv words, file names) and every name in the
 * journal's ".obsolete" list is escaped (escape.h): a newline in an argument once split the
 * argv line and jammed the directory. A file name must start with the experiment's name (the
 * files of a set are "<name><suffix>"), so a manifest can never name another program's file. */

/* Parses the text of a manifest (n bytes). 0 or DRIFT_EINVAL (malformed). */
DRIFT_MUST_CHECK int drift_manifest_parse(drift_manifest_t *m, const char *text, size_t n);
/* Reads the manifest at path (a regular file of at most DRIFT_MANIFEST_MAX_BYTES). 0,
 * DRIFT_EIO (missing, unreadable or not a regular file) or DRIFT_EINVAL (malformed). */
#define DRIFT_MANIFEST_MAX_BYTES (16L << 20)
DRIFT_MUST_CHECK int drift_manifest_read(drift_manifest_t *m, const char *path);
/* The argv words of the manifest at path, unescaped, each malloc'd: the count, or <0. */
DRIFT_MUST_CHECK int drift_manifest_argv(char **words, int max, const char *path);

/* An experiment name as the lab spells them: letters, digits, '_' and '-', starting with a
 * letter, shorter than 96 bytes (an empty name once matched every file of a directory). */
int drift_manifest_name_ok(const char *name);

/* Checks the set of experiment name in dir: no pending journal, the manifest readable, and
 * every file it lists a regular file of its size and digest (a FIFO or a device where a file
 * is listed is refused, never opened). 0, or <0 with the reason (one line) in err. */
DRIFT_MUST_CHECK int drift_manifest_check(char *err, size_t errsz, const char *dir, const char *name);

/* Completes an interrupted commit of name in dir (steps 2..6 above) and removes what dead
 * runs of name left: their staging directories ".<name>.staging.<pid>" (only the set's own
 * files in them) and "F.tmp.<pid>" for the files F named by the manifest, by the journal,
 * or in own[0..nown) (the names the caller is about to write). Nothing else is touched.
 * Holds the directory's lock (outlock.h) meanwhile, unless the caller holds it already;
 * refuses (DRIFT_EIO, err) while another process holds it, and refuses a bad name or a dir
 * longer than 1024 characters (DRIFT_EINVAL). 0, or <0 with err. */
DRIFT_MUST_CHECK int drift_manifest_recover(char *err, size_t errsz, const char *dir, const char *name);
DRIFT_MUST_CHECK int drift_manifest_recover_with(
    char *err, size_t errsz, const char *dir, const char *name, const char *const *own, int nown);

/* Steps 2..6 on an existing journal "<dir>/.<name>.commit" (table.c calls it right after step 1). */
DRIFT_MUST_CHECK int drift_manifest_commit_journal(char *err, size_t errsz, const char *dir, const char *name);

/* fopen(path, "rb") of a regular file only: a FIFO, a device, a directory or a symlink in
 * its place is refused (NULL, errno EINVAL) without blocking. */
FILE *drift_fopen_regular(const char *path);
/* SHA-256 and size of a regular file (never opened when it is not one: a FIFO would block).
 * 0, or -1. */
DRIFT_MUST_CHECK int drift_sha256_regular(char hex[65], long long *size, const char *path);

/* The test hook of the commit path: when DRIFT_FAULT_AT=N is set, the N-th step (counted
 * from 1 across drift_files_commit) kills the process with SIGKILL, as kill -9 would. */
void drift_fault_point(void);

#ifdef __cplusplus
}
#endif

#endif
