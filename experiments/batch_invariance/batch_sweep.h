/* batch_sweep.h — the batch-invariance measurement: row 0 of (A[:M] B) against row 0 of
 * (A[:1] B) for every M = 1..Mmax, under each GEMM policy (policy.h), per input format and K,
 * as a GPU of the device's tensor-core architecture computes it (gpu_gemm.h). What the kernels
 * cost is the batch_invariance_cost experiment's question.
 *
 * Every emulated kernel computes each output in an order that depends only on the kernel, so
 * row 0 is computed once per distinct kernel (row0.h); the first full product A[:M] B whose
 * kernel differs from M = 1's (M <= 512, M N K <= 2^31) checks that claim once per format.
 * Inputs: A (Mmax x K) and B (K x N) drawn row by row (matrix_rows.h, streams
 * "batch_invariance.A" and "batch_invariance.B" keyed by K), then rounded to the format. */
#ifndef DRIFT_BATCH_SWEEP_H
#define DRIFT_BATCH_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "matrix_rows.h"
#include "policy.h"
#include "row0.h"

typedef struct { /* one batch size M under one (format, policy, K) */
    size_t M;
    int kc;          /* M's kernel: its index in the (format, K) row-0 cache */
    double max_diff; /* over row 0's outputs against M = 1 (drift_row_diff) */
    long n_diff;     /* outputs of row 0 whose bits differ from M = 1's */
} drift_batch_row_t;

typedef struct {                         /* per (format, policy, K), over M */
    int distinct;                        /* distinct row-0 vectors */
    long m_changed;                      /* M values whose row 0 differs from M = 1 */
    size_t first_M;                      /* the smallest of them (0: none) */
    double max_diff, nmse_min, nmse_max; /* NMSE of row 0 against the exact row, over the kernels used */
    double cond_med;                     /* median over row 0's outputs of sum|a b| / |sum a b| (dot_cond.h) */
    int tc;                              /* tensor-core arithmetic */
} drift_batch_sum_t;

typedef struct {
    const drift_format_t *formats; /* inputs, none fp64 */
    int nformats;
    const long *K; /* inner dimensions */
    int nK;
    size_t N, Mmax;
    drift_rows_kind_t data; /* DRIFT_ROWS_NORMAL (seeded) or DRIFT_ROWS_LINSPACE */
    uint64_t seed;
    const char *device; /* policy.h's device: its SMs and tensor-core architecture */
} drift_batch_sweep_cfg_t;

typedef struct {
    drift_batch_sweep_cfg_t cfg;
    drift_device_t dev;
    drift_tc_arch_t arch;
    drift_batch_row_t *rows;   /* [((f * NPOLICIES + p) * nK + ki) * Mmax + M - 1] */
    drift_batch_sum_t *sum;    /* [(f * NPOLICIES + p) * nK + ki] */
    drift_row0_cache_t *cache; /* [f * nK + ki]: row 0 under each distinct kernel */
} drift_batch_sweep_t;

/* Runs the sweep into b (drift_batch_sweep_free releases it, also after an error). progress, when
 * not NULL, is called with (ctx, ki, nK) before each K and (ctx, nK, nK) at the end. 0, or an
 * error code with err saying what failed (DRIFT_EINVAL: an unknown device; DRIFT_ERANGE: the
 * self-check found a full product that differs from the row-0 shortcut). */
DRIFT_MUST_CHECK int drift_batch_sweep_run(drift_batch_sweep_t *b, const drift_batch_sweep_cfg_t *cfg,
    void (*progress)(void *ctx, size_t done, size_t total), void *ctx, char *err, size_t errsz);
void drift_batch_sweep_free(drift_batch_sweep_t *b);

/* Row M = 1..Mmax of (format f, policy p, K index ki) is drift_batch_sweep_rows(...)[M - 1]. */
const drift_batch_row_t *drift_batch_sweep_rows(const drift_batch_sweep_t *b, int f, int p, int ki);
const drift_batch_sum_t *drift_batch_sweep_sum(const drift_batch_sweep_t *b, int f, int p, int ki);
const drift_row0_cache_t *drift_batch_sweep_cache(const drift_batch_sweep_t *b, int f, int ki);

/* Whether batch size index M0 (M = M0 + 1) of blk belongs to the sample the CSV shows below
 * the full profile (drift_policy_sampled_m, the runs of one kernel read from blk). */
int drift_batch_sweep_sampled(const drift_batch_row_t *blk, size_t Mmax, size_t M0);

/* The median condition number (dot_cond.h) of row 0 of linspace data (the labelled worst case)
 * at inner dimension K, inputs rounded to in. */
DRIFT_MUST_CHECK int drift_batch_sweep_linspace_cond(
    double *med, const drift_batch_sweep_cfg_t *cfg, size_t K, drift_format_t in);

#endif
