/* storage_sweep.h — kv_cache's storage formats at one cache length L: the cache is filled by
 * one append of L tokens, the last queries attend to it with the given kernel, and each output
 * row is held against the MPFR attention of the unrounded values and, through a fixed random
 * projection W (fp64: a measuring device, not a kernel), its next token against the exact
 * output's. */
#ifndef DRIFT_STORAGE_SWEEP_H
#define DRIFT_STORAGE_SWEEP_H

#include "kv_run.h"

typedef struct {
    double rel, maxabs, mingap, maxlog;
    long flips;
} drift_kv_err_t;

/* For every compute format f and storage c of S: res[f * S->nkv + c] (zeroed by the caller) over
 * the last min(nq, L) query rows; W is the V x (heads * dim) projection. Dies when an attention
 * kernel fails or memory runs out. */
void drift_kv_storage_point(drift_kv_err_t *res, const drift_kv_setup_t *S, const drift_attn_kernel_t *kernel, size_t L,
    size_t nq, const double *W, size_t V);

#endif
