/* sweep.h — a sweep is data: one experiment, a grid of option values whose cartesian product
 * is the list of runs, the options every run shares, and the number of shares the runs are
 * dealt into. Everything drift-sweep does (run a share, verify it, merge, write a Slurm script)
 * reads this one description, which is also what the sweep directory's sweep.txt holds.
 *
 * Run order: the odometer over the axes as written, the last axis fastest. Share I of N holds
 * the runs r with r mod N == I (0 <= I < N), so that a share mixes cheap and costly points.
 *
 * Sweep directory layout:
 *   sweep.txt                       the definition (a sweep file: --file DIR/sweep.txt re-reads it)
 *   runs/NNNNNN/                    run r's result files, renamed there only when it succeeded
 *   runs/NNNNNN.part-HOST-PID/      a run in progress (or one that was killed): never merged
 *   shares/share-I-of-N.manifest    written last: file names, sizes, SHA-256, commit, host, argv
 *   logs/run-NNNNNN.log             the experiment's stdout and stderr
 *   merged/                         the merge: EXP*.csv with leading run and grid columns,
 *                                   EXP.md (one report fragment), sweep_runs.csv and
 *                                   merge.manifest (written last: what a later merge may replace)
 *   slurm/                          with --slurm: shares.sbatch, merge.sbatch, submit.sh */
#ifndef DRIFT_SWEEP_H
#define DRIFT_SWEEP_H

#include <stdarg.h>
#include <stdnoreturn.h>
#include "drift.h"

#define SWEEP_MAX_AXES 16
#define SWEEP_MAX_RUNS 1000000L
#define SWEEP_NAME_MAX 64

typedef struct {
    char name[SWEEP_NAME_MAX]; /* the experiment option without dashes: "K" is --K */
    char **values;             /* ranges already expanded: "1..3" is 1, 2, 3 */
    int nvalues;
} sweep_axis_t;

typedef struct {
    char experiment[SWEEP_NAME_MAX];
    sweep_axis_t axes[SWEEP_MAX_AXES];
    int naxes;
    char **options; /* the experiment options every run gets, one argv word each */
    int noptions;
    long nruns;
    long nshares; /* 0 until decided: then 1..nruns */
} sweep_t;

/* Errors: one line "drift-sweep: ..." on stderr and exit 2 (bad input) — printed by rank 0
 * only when several MPI ranks parse the same bad command line. */
noreturn void sweep_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sweep_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int sweep_quiet;

/* util.c */
void *sweep_xrealloc(void *p, size_t n); /* dies "out of memory (N bytes ...)" rather than return NULL */
char *sweep_xstrdup(const char *s);
typedef struct {
    char *p;
    size_t len, cap;
} sweep_text_t; /* {0} is the empty text */
void sweep_text_add(sweep_text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* grid.c — parsing and the canonical text */
/* Adds the axes of a grid spec: words "name=v1,v2,A..B" separated by blanks. */
void sweep_add_grid(sweep_t *s, const char *spec, const char *where);
/* Adds one experiment option word (validated: no --out, --help, ...; no axis twice). */
void sweep_add_option(sweep_t *s, const char *word);
/* Reads a sweep file: "experiment: X", "grid: SPEC", "options: WORDS", "option: WORD",
 * "shares: N" lines, "#" comments, blank lines. */
void sweep_read_file(sweep_t *s, const char *path);
/* Frees what the parsing allocated. */
void sweep_free(sweep_t *s);
/* Checks the whole and computes nruns; dies on an empty grid or one too large. */
void sweep_finish(sweep_t *s);
/* The canonical definition, malloc'd: with the number of shares it is the text of sweep.txt;
 * without, the identity of the sweep's data (its SHA-256 is in every manifest and merged file),
 * which does not depend on how the runs were dealt out. */
char *sweep_definition(const sweep_t *s, int with_shares);
/* Value of axis a in run r. */
const char *sweep_value(const sweep_t *s, long r, int a);
/* "seed=1 formats=fp16" for run r, or the whole grid "seed=1..64 formats=fp16,bf16" (r < 0),
 * integer runs written back as A..B. Into buf. */
void sweep_describe(char *buf, size_t size, const sweep_t *s, long r);
/* The experiment options as one line, words separated by blanks. */
void sweep_options_line(char *buf, size_t size, const sweep_t *s);
/* The argv of run r (without --out and --quiet): options, then one --axis value per axis.
 * Returns a malloc'd NULL-terminated array of pointers into s (free only the array); *n words. */
const char **sweep_run_args(const sweep_t *s, long r, int *n);

/* share.c — running a share and checking one */
typedef enum { SHARE_OK = 0, SHARE_MISSING, SHARE_CORRUPT, SHARE_FOREIGN, SHARE_COMMIT } share_state_t;

typedef struct {
    const char *dir;    /* the sweep directory */
    const char *bindir; /* where the experiment binaries are */
    const char *commit; /* this build's commit */
    const char *host;
    const char *argv_line; /* drift-sweep's own command line, for the manifest */
    char def_sha[65];      /* SHA-256 of the definition without the shares */
} sweep_ctx_t;

/* Runs every run of share `share` in order, then writes its manifest. 0, 1 (a run failed or was
 * killed) or 2 (a run refused its options). */
int sweep_run_share(const sweep_t *s, const sweep_ctx_t *c, long share);
/* Checks share `share`'s manifest and every file it lists. Writes why it is not OK into err. */
share_state_t sweep_check_share(const sweep_t *s, const sweep_ctx_t *c, long share, char *err, size_t errsz);
/* "DIR/shares/share-I-of-N.manifest" */
void sweep_manifest_path(char *buf, size_t size, const sweep_t *s, const char *dir, long share);
/* The regular files of dir sorted bytewise (a manifest must not depend on readdir order):
 * the count, or -1 when dir cannot be read; *others counts entries that are not regular files. */
DRIFT_MUST_CHECK int sweep_list_files(const char *dir, char ***names, int *others);
void sweep_free_names(char **names, int n);
/* Removes path and everything below it; 0 or -1. */
int sweep_remove_tree(const char *path);
/* mkdir -p; dies when it cannot. */
void sweep_mkdirs(const char *path);

/* merge.c — 0, or 2 (refused: one line naming the shares, or the --out it will not touch) */
DRIFT_MUST_CHECK int sweep_merge(const sweep_t *s, const sweep_ctx_t *c, const char *outdir);

/* target.c — where a merge may go (see there). sweep_merge_target: 0 when outdir is new
 * (outside the sweep's own directories) or a previous merge of this sweep and nothing else
 * (*old_names: the files it lists, malloc'd); -1 with err (one line) otherwise. Touches
 * nothing. sweep_write_merge_manifest: "part/merge.manifest" (the sweep's definition SHA-256
 * and every file), written last; 0 or -1. sweep_replace_merge: the previous merge renamed
 * aside, part renamed to outdir, then the old listed files removed; 0 or -1 with err. */
DRIFT_MUST_CHECK int sweep_merge_target(
    char *err, size_t errsz, const sweep_t *s, const sweep_ctx_t *c, const char *outdir, char ***old_names, int *nold);
DRIFT_MUST_CHECK int sweep_write_merge_manifest(const sweep_t *s, const sweep_ctx_t *c, const char *part);
DRIFT_MUST_CHECK int sweep_replace_merge(
    char *err, size_t errsz, const char *part, const char *outdir, char **old_names, int nold);

/* slurm.c — writes DIR/slurm/{shares,merge}.sbatch and submit.sh. */
void sweep_write_slurm(const sweep_t *s, const sweep_ctx_t *c, const char *self_exe, char **extra, int nextra);

#endif
