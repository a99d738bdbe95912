/* drift_cuda_reduce.h — sums and dot products on the GPU in every deterministic order of
 * lib/core/order.h, each the bit-exact twin of drift_sum / drift_dot (law 3).
 *
 * Batched: out[r] = the reduction of row r (r < batch) of x (batch x n, row-major), or of the
 * dot product of rows r of a and b. The CPU twin of out[r] is drift_sum(&out[r], x + r*n, n,
 * o, acc) / drift_dot(&out[r], a + r*n, b + r*n, n, NULL, o, acc).
 *
 * How each order runs (kernel versions, llm.c style; cuda/reduce.cu):
 *   seq, rev, pairwise, kahan, neumaier   one thread per row (pairwise with an explicit
 *                                         stack of the m = floor(n/2) recursion)
 *   blocked:B                              one thread per block of B, then one thread seq over
 *                                         the block sums (kernel 1); the block sums in shared
 *                                         memory (kernel 2)
 *   splitk:S, splitk:S:tree                one thread per chunk, partials combined seq or
 *                                         pairwise by one thread
 *   warp:W                                 W lanes; kernel 1: butterfly in shared memory
 *                                         (W <= 1024), kernel 2: __shfl_xor_sync (W <= 32);
 *                                         warp:32 kernel 2 is the shuffle tree
 * Arithmetic: acc fp32 (float, __fadd_r?/__fmul_r?/__fmaf_r?) or fp64 (double, __dadd_r?...),
 * modes rne rz ru rd; fma = 1 uses the fused instruction, 0 rounds the product first. Built
 * with --fmad=false, so nothing else is contracted.
 *
 * GPU restrictions beyond the CPU (DRIFT_EUNSUPPORTED, reason in drift_cuda_message()):
 * acc fp16/bf16/tf32/fp8; mode rna; order random (a host permutation: permute, then seq);
 * warp:W with W > 1024; inputs that are not values of acc (round them first: the GPU reads
 * them as acc values); n >= 2^31 or batch > 65535 (one grid row per dot product). tc and sr are refused exactly as the CPU
 * refuses them. The initial value c of drift_dot is not offered. */
#ifndef DRIFT_CUDA_REDUCE_H
#define DRIFT_CUDA_REDUCE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "drift.h"
#include "format.h"
#include "order.h"

/* Kernel versions per order (see above): warp and blocked have 2, the others 1. 0 = the
 * dispatcher's choice (the highest that applies). */
int drift_cuda_reduce_kernels(const drift_order_t *o);

/* Plain C, no device needed (cuda/args.c): the code the entry points return before they
 * touch CUDA. b == NULL means a sum. First the CPU's own checks (drift_sum / drift_dot with
 * the same order and acc), so a bad order or acc gives the CPU's code; then the pointers
 * (NULL with n * batch > 0: DRIFT_EINVAL), then the GPU restrictions above. */
DRIFT_MUST_CHECK int drift_cuda_check_reduce(const double *out, const double *a, const double *b, size_t n,
    size_t batch, const drift_order_t *o, const drift_acc_t *acc, int kernel);

/* The entry points (cuda/reduce.cu): host pointers, allocation and copies inside. Return 0 or
 * a DRIFT_E* code (see drift_cuda.h). kernel 0 = default. */
DRIFT_MUST_CHECK int drift_cuda_sum(
    double *out, const double *x, size_t n, size_t batch, const drift_order_t *o, const drift_acc_t *acc, int kernel);
DRIFT_MUST_CHECK int drift_cuda_dot(double *out, const double *a, const double *b, size_t n, size_t batch,
    const drift_order_t *o, const drift_acc_t *acc, int kernel);

#ifdef __cplusplus
}
#endif

#endif
