/* gemm.h — CPU emulation of GEMM kernels (the twins of the CUDA kernels, law 3):
 *
 *     C = alpha * A * B + beta * C        A: M x K, B: K x N, C: M x N, all row-major,
 *
 * every matrix held in doubles whose values are values of the lab formats.
 *
 * Per output (i, j), with a_k = RNE_in(A[i][k]) and b_k = RNE_in(B[k][j]) (A and B are
 * rounded to the input format first, nearest-even), the accumulator acc is:
 *
 *   naive            seq over k = 0 .. K-1: acc = round(a_0 b_0), then
 *                    acc = round(acc + a_k b_k) (fma) or round(acc + round(a_k b_k)) (nofma),
 *                    every rounding to opts->acc.acc in mode opts->acc.mode.
 *   tiled:BM,BN,BK   the same seq order. A tiled kernel gives each output one accumulator
 *                    (a register) that every K-block continues, so blocking M, N and K
 *                    changes where the data come from, never the order of the additions:
 *                    tiled and naive are bit-identical by construction. The tile is kept
 *                    as data because it decides split-K in the vendor-like policy (policy.h)
 *                    and the launch shape of the CUDA twin, which must keep this order.
 *   splitk:S[:tree]  K is cut into chunks of ceil(K/S) (the last shorter; there are
 *                    ceil(K / ceil(K/S)) chunks, none empty), each chunk a seq chain as
 *                    above (starting from round(a b) of its first term), and the partials
 *                    are combined in the accumulator format: seq (p0 + p1) + p2 ... or, with
 *                    :tree, pairwise (n <= 1 trivial, else m = floor(n/2), sum[0,m) +
 *                    sum[m,n)) — the order.h meaning of splitk:S, as cuBLAS-style split-K
 *                    reduces its slices in a second pass.
 *   tc:ARCH          acc = drift_tc_dot of the row and the column from c = 0
 *                    (tc_model.h); opts->acc.acc must be fp32 or fp16 (the tensor-core
 *                    output format), acc.mode and acc.fma are ignored (the model fixes them)
 *                    and `in` must be an input format that ARCH supports.
 *   K == 0 gives acc = +0.
 *
 * Epilogue (after CUTLASS's LinearCombination, with ElementCompute = the accumulator
 * format; always nearest-even):
 *   beta == 0:  y = round_acc(alpha * acc)            (C is not read, as in BLAS)
 *   otherwise:  t = round_acc(beta * C[i][j]); y = round_acc(alpha * acc + t)  (one rounding)
 *   C[i][j] = RNE_out(y).
 * With alpha = 1, beta = 0 and out = acc the result is exactly the accumulator.
 *
 * Every kernel is bit-identical to a scalar step-by-step emulation (tests/test_gemm.c
 * proves it against MPFR) and independent of the OpenMP thread count: threads split the
 * outputs, never a sum. */
#ifndef DRIFT_GEMM_H
#define DRIFT_GEMM_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "order.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_GEMM_NAIVE = 0, DRIFT_GEMM_TILED, DRIFT_GEMM_SPLITK, DRIFT_GEMM_TC } drift_gemm_family_t;

typedef struct {
    drift_gemm_family_t family;
    int bm, bn, bk;       /* tiled:BM,BN,BK (each 1 .. DRIFT_GEMM_TILE_MAX); 0 otherwise */
    int splits;           /* splitk:S (1 .. DRIFT_GEMM_SPLIT_MAX); 0 otherwise */
    int tree;             /* splitk:S:tree */
    drift_tc_arch_t arch; /* tc:ARCH; DRIFT_TC_V100 (0) otherwise */
} drift_gemm_kernel_t;

#define DRIFT_GEMM_TILE_MAX 4096
#define DRIFT_GEMM_SPLIT_MAX 65536
#define DRIFT_GEMM_KERNEL_SPEC_MAX 64

/* Kernel specs: naive | tiled:BM,BN,BK | splitk:S | splitk:S:tree | tc:v100|a100|h100|b200.
 * Strict: decimal integers without sign or leading zeros, in range, nothing trailing.
 * 0 or DRIFT_EINVAL. The printed spec is canonical: parse(print(k)) == k. */
DRIFT_MUST_CHECK int drift_gemm_kernel_parse(drift_gemm_kernel_t *k, const char *spec);
/* Canonical spec into buf; its length, or DRIFT_EINVAL (bad kernel, or it does not fit). */
int drift_gemm_kernel_print(char *buf, size_t size, const drift_gemm_kernel_t *k);
int drift_gemm_kernel_equal(const drift_gemm_kernel_t *a, const drift_gemm_kernel_t *b);
/* The reduction order each output's dot product follows (law 2): seq for naive and tiled,
 * splitk:S[:tree], tc:ARCH. */
DRIFT_MUST_CHECK int drift_gemm_kernel_order(drift_order_t *o, const drift_gemm_kernel_t *k);

typedef struct {
    drift_format_t in;  /* A and B are rounded (RNE) to this format first */
    drift_acc_t acc;    /* accumulation format, rounding mode (not SR) and fma / nofma */
    drift_format_t out; /* format of the result C */
    double alpha, beta;
} drift_gemm_opts_t;

/* in, acc format; RNE, fma, out = acc, alpha = 1, beta = 0. */
drift_gemm_opts_t drift_gemm_opts(drift_format_t in, drift_format_t acc);

/* C = alpha A B + beta C as documented above. Returns 0, DRIFT_EINVAL (NULL pointers, bad
 * kernel or options), DRIFT_EUNSUPPORTED (SR mode; tc with an unsupported format) or
 * DRIFT_ENOMEM. On error C is unchanged. */
DRIFT_MUST_CHECK int drift_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_gemm_kernel_t *kern, const drift_gemm_opts_t *opts);

/* fp32 GEMM in drift_gemm's seq order (naive / tiled kernels, fp32 accumulator, fma):
 * C[i][j] = round(A[i][0] B[0][j]) then fmaf chains over k, inputs already fp32 values;
 * bit-identical to drift_gemm with those kernels, without its per-call rounding and
 * packing of B (the decoder's fast path for small M). 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_seq_gemm_f32(float *C, const float *A, const float *B, size_t M, size_t N, size_t K);

#ifdef __cplusplus
}
#endif

#endif
