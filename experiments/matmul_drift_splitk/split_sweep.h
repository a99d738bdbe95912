/* split_sweep.h — one product C = A B (the inputs of matmul_drift's K sweep at this K,
 * product_error.h) computed with every split factor S = 1 .. DRIFT_MM_SPLIT_MAX (splitk:S, seq
 * combination, fp32 accumulation), each against the exact product of the same rounded inputs,
 * and how many distinct values each output takes over S. All GEMMs go through the dispatcher
 * (dispatch.h), so --backend applies. */
#ifndef DRIFT_SPLIT_SWEEP_H
#define DRIFT_SPLIT_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "format.h"
#include "gen.h"

#define DRIFT_MM_SPLIT_MAX 64

typedef struct {
    size_t M, N, K;
    const drift_dist_t *dists;
    int nd;
    const drift_format_t *in; /* the input formats, each accumulated in fp32 */
    int nf;
    uint64_t seed;
} drift_mm_split_sweep_t;

typedef struct {
    int dist, format, S; /* indices into dists and in */
    double nmse, err_mean, c00;
    long changed; /* outputs whose value differs from S = 1 (seq) */
} drift_mm_split_t;

typedef struct {
    int dist, format;
    double mean_distinct;
    int max_distinct;
    long changed_any; /* outputs that take more than one value over S */
} drift_mm_distinct_t;

/* split[] receives nd x nf x DRIFT_MM_SPLIT_MAX rows, distinct[] nd x nf, distribution by
 * distribution, each in the order of the formats. 0, DRIFT_ENOMEM, or the dispatcher's error. */
DRIFT_MUST_CHECK int drift_mm_split_run(
    drift_mm_split_t *split, drift_mm_distinct_t *distinct, const drift_mm_split_sweep_t *w);

#endif
