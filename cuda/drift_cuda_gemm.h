/* drift_cuda_gemm.h — GPU GEMM kernels with a C ABI, each the twin of a CPU emulation.
 *
 * C = A * B (row-major, M x K times K x N), fp32 accumulation, inputs given as floats that
 * are values of `in` (fp32, bf16 or fp16). Which CPU order each version reproduces:
 *   NAIVE   one thread per output, acc = fmaf(a, b, acc) for k = 0..K-1: order `seq`, fma
 *   TILED   shared-memory tiles, the K loop blocked by 32 but the chain carried across
 *           blocks: still order `seq`, fma, bit-identical to NAIVE
 *   SPLITK  `splits` slices of ceil(K/splits), each a seq fma chain from 0, partials
 *           added left to right: order `splitk:S`
 *   WMMA    tensor cores (fp16/bf16 inputs, 16x16x16 fragments, the accumulator carried
 *           along K): the twin of the model drift_tc_dot for the device's architecture
 *   CUBLAS  cublasSgemm / cublasGemmEx with the library's own choices: no CPU twin; the
 *           check reports its error against the exact product instead
 * Host pointers in and out; the functions allocate, copy and free (they serve the
 * conformance check, not speed). Return 0, or a negative DRIFT_E* code after printing the
 * failing CUDA call. */
#ifndef DRIFT_CUDA_GEMM_H
#define DRIFT_CUDA_GEMM_H

#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DRIFT_CUDA_GEMM_NAIVE = 1,
    DRIFT_CUDA_GEMM_TILED,
    DRIFT_CUDA_GEMM_SPLITK,
    DRIFT_CUDA_GEMM_WMMA,
    DRIFT_CUDA_GEMM_CUBLAS
} drift_cuda_gemm_version_t;

const char *drift_cuda_gemm_name(drift_cuda_gemm_version_t v);
int drift_cuda_gemm(float *C, const float *A, const float *B, int M, int N, int K, drift_cuda_gemm_version_t v,
                    int splits, drift_format_t in);

#ifdef __cplusplus
}
#endif

#endif
