/* row0.h — one output row of a GEMM under many kernels, computed once per distinct kernel:
 * the batch-invariance question (is row 0 of A[:M] B the row of A[:1] B?) reduces to it
 * because every emulated kernel computes each output in an order that depends only on the
 * kernel (gemm.h), never on the other rows. */
#ifndef DRIFT_ROW0_H
#define DRIFT_ROW0_H

#include <stddef.h>

#include "drift.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    drift_gemm_kernel_t kern[64];
    double *row[64]; /* row 0 of A B under kern[i] (N values each) */
    int n;
    size_t N;
} drift_row0_cache_t;

/* The index of kernel k in the cache, computing row 0 = a0 B (a0: 1 x K, B: K x N) with
 * drift_gemm(k, opts) the first time k is seen. DRIFT_ENOMEM (also when 64 distinct kernels
 * are already held), or the error of drift_gemm. */
DRIFT_MUST_CHECK int drift_row0_of(drift_row0_cache_t *c, const drift_gemm_kernel_t *k, const double *a0,
    const double *B, size_t N, size_t K, const drift_gemm_opts_t *opts);
void drift_row0_free(drift_row0_cache_t *c);

/* Bitwise comparison of two rows: *n_diff = entries whose bits differ, *max_diff = the largest
 * |a - b| among them (NaN when one is NaN). */
void drift_row_diff(long *n_diff, double *max_diff, const double *a, const double *b, size_t n);

#ifdef __cplusplus
}
#endif

#endif
