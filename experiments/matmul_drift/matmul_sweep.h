/* matmul_sweep.h — C = A B in many numerics against the exact product of the same rounded
 * inputs (product_error.h), the K sweep: for every (distribution, K) one pair A (M x K, from
 * the distribution), B (K x N, standard normal) from its own Philox stream, computed with every
 * kernel in every (input format, accumulator) setting the kernel takes. All GEMMs go through
 * the dispatcher (dispatch.h), so --backend applies. */
#ifndef DRIFT_MATMUL_SWEEP_H
#define DRIFT_MATMUL_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "gemm.h"
#include "gen.h"
#include "product_error.h"

typedef struct {
    drift_format_t in, acc;
} drift_mm_setting_t;

typedef struct {
    size_t M, N;
    const size_t *Kv; /* the inner dimensions */
    int nK;
    const drift_dist_t *dists;
    int nd;
    const drift_mm_setting_t *set;
    int ns;
    const drift_gemm_kernel_t *kern;
    int nk;
    uint64_t seed;
    void (*progress)(void *ctx, size_t done, size_t total); /* may be NULL */
    void *ctx;
} drift_mm_sweep_t;

typedef struct {
    int ran; /* 0: the kernel does not take the setting */
    drift_product_err_t err;
    double c00, e00; /* output (0, 0) and its exact value: bits matter */
} drift_mm_cell_t;

/* Does kernel k run setting s? Tensor-core models: only the inputs their architecture takes,
 * and only into fp32 or fp16 (the model's output format). */
int drift_mm_kernel_runs(const drift_gemm_kernel_t *k, drift_mm_setting_t s);
/* Cell (distribution d, setting si, kernel kk, K index ki) of nd x ns x nk x nK. */
size_t drift_mm_at(const drift_mm_sweep_t *w, int d, int si, int kk, int ki);
/* Inputs from the stream (seed, "matmul_drift", K, 2 d + matrix). 0, DRIFT_ENOMEM, or the
 * dispatcher's error. */
DRIFT_MUST_CHECK int drift_mm_sweep_run(drift_mm_cell_t *cells, const drift_mm_sweep_t *w);

#endif
