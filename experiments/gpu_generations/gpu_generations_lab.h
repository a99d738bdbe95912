/* gpu_generations_lab.h — what one run of the gpu_generations experiment knows once its heads
 * and close calls are in: the architectures and their paths per format, the counts per (seed,
 * format, pair), every logit distance; and its declared output (five CSV tables, the
 * fragment's three tables and takeaway, stdout). */
#ifndef DRIFT_GPU_GENERATIONS_LAB_H
#define DRIFT_GPU_GENERATIONS_LAB_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "pair_stats.h"
#include "order.h"

#define DRIFT_GG_MAXA 8 /* architectures */
#define DRIFT_GG_MAXG 8 /* planted gaps */
#define DRIFT_GG_MAXS 8 /* seeds */

/* a pair of architectures a < b (b = na: exact) under format f; p its pair index; shown: in
 * the fragment's tables (b is exact or a's next generation) */
typedef struct {
    int f, a, b, p, shown;
} drift_gg_pair_t;

typedef struct {
    const drift_cli_t *cli;
    const char *archs_opt;     /* the option as given */
    size_t K, V, R, NP;        /* head shape, hidden states and planted pairs per seed */
    int nf, ns, ng, na, npair; /* formats, seeds, gaps, architectures, pairs */
    const double *gaps;
    const drift_tc_arch_t *arch;
    const int (*ok)[DRIFT_GG_MAXA]; /* [f][a]: the architecture has a path for the format */
    const drift_gg_pair_t *fab;     /* the (format, a, b) with a path for both, in that order */
    int nfab;
    const drift_count_t *arg;     /* [seed][f][logits fp32/stored][pair] */
    const unsigned char *rowdiff; /* [seed][f][row][logits][pair]: 1 where the row's argmax differs */
    const drift_count_t *close;   /* [seed][f][gap (MAXG)][pair] */
    const long *hist;             /* [f][pair][bin] */
    int64_t **ulps;               /* [f][pair]: all seeds' ulp distances (sorted in place by the summaries) */
    double **sdiff;               /* [f][pair]: the same in units of s */
    size_t nlog;                  /* logits per (f, pair): ns R V */
    long unreached;               /* planted pairs that missed their target gap */
} drift_gpu_gen_lab_t;

/* Every output file, committed together; stdout unless --quiet. */
void drift_gpu_gen_write(const drift_gpu_gen_lab_t *L);

#endif
