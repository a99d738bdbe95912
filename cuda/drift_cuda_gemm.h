/* drift_cuda_gemm.h — GEMM on the GPU with a C ABI: the twins of lib/ops/gemm.h, the
 * GPU-only nondeterministic kernel, tensor cores, and the vendor libraries.
 *
 * A GPU kernel spec is the CPU kernel spec (gemm.h) or one of the GPU-only paths:
 *   naive, tiled:BM,BN,BK, splitk:S, splitk:S:tree   twins of drift_gemm: bit-identical
 *   tc:ARCH                  tensor cores: WMMA fp16, bf16 16x16x16, tf32 16x16x8; mma.sync
 *                            m16n8k32 for fp8 (sm_89+);
 *                            the accumulator carried along K); ARCH must be the device's
 *                            (h100 on sm_90); held against drift_gemm's tc:ARCH model, the
 *                            difference is a finding (the model is validated elsewhere)
 *   splitk:S:atomic          S slices atomicAdd'ed into C: nondeterministic by design
 *   cublas, cublas:pedantic, cublas:tf32        cublasGemmEx with compute type 32F,
 *                            32F_PEDANTIC, 32F_FAST_TF32
 *   cublaslt, cublaslt:pedantic, cublaslt:tf32  cublasLtMatmul, default heuristic (first
 *                            result), with the chosen algorithm reported in info
 *   cublaslt:fixed           cublasLtMatmul with the algorithm passed in info->algo (the one
 *                            a previous call chose): one algorithm for every M
 * Vendor paths have no CPU twin; they are held against the exact product.
 *
 * Twin kernels and their versions (cuda/gemm.cu): naive 1; tiled: 1 = one output per thread,
 * 32x32 shared tiles; 2 = 128x128 block tile, BK = 8, 8x8 outputs per thread (the
 * batch-invariant fixed tile of policy.h; fast); every version keeps one fp32 accumulator per
 * output that each K-block continues, so every tiled version is order seq whatever the tile
 * and bit-identical to naive. splitk: partial kernel + combine kernel (seq or pairwise).
 *
 * Options (drift_gemm_opts_t, the CPU's): A and B are rounded to opts->in (RNE) on the host
 * exactly as drift_gemm does; accumulation fp32, mode rne, fma or not (tc and the vendor
 * paths: fma ignored, as on the CPU for tc); alpha = 1, beta = 0, out = fp32. Others:
 * DRIFT_EUNSUPPORTED. Inputs: SIMT paths any format up to fp32; tc fp16, bf16, tf32 (WMMA) and
 * fp8e4m3, fp8e5m2 (mma.sync m16n8k32, sm_89+); cublas fp32, tf32 (as fp32 data), fp16, bf16;
 * :tf32 needs fp32/tf32 input. Sizes: M, N, K <= 2^31 - 1 and each matrix < 2^31 elements. */
#ifndef DRIFT_CUDA_GEMM_H
#define DRIFT_CUDA_GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "drift.h"
#include "format.h"
#include "gemm.h"
#include "order.h"

typedef enum {
    DRIFT_CUDA_TWIN = 0, /* kern is a CPU kernel spec: naive, tiled, splitk, tc */
    DRIFT_CUDA_ATOMIC,   /* splitk:S:atomic (kern.splits = S) */
    DRIFT_CUDA_CUBLAS,   /* cublasGemmEx */
    DRIFT_CUDA_CUBLASLT  /* cublasLtMatmul */
} drift_cuda_gemm_path_t;

typedef enum {
    DRIFT_CUDA_MATH_DEFAULT = 0,
    DRIFT_CUDA_MATH_PEDANTIC,
    DRIFT_CUDA_MATH_TF32,
    DRIFT_CUDA_MATH_FIXED /* cublaslt only: the algorithm in info->algo */
} drift_cuda_math_t;

typedef struct {
    drift_cuda_gemm_path_t path;
    drift_gemm_kernel_t kern; /* TWIN: the CPU kernel; ATOMIC: family SPLITK, splits = S */
    drift_cuda_math_t math;   /* CUBLAS, CUBLASLT */
    int version;              /* kernel version for TWIN naive/tiled (0 = default) */
} drift_cuda_gemm_t;

#define DRIFT_CUDA_GEMM_SPEC_MAX 64

/* Spec grammar above; strict like gemm.h. 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_cuda_gemm_parse(drift_cuda_gemm_t *g, const char *spec);
/* Canonical spec into buf; its length, or DRIFT_EINVAL. */
int drift_cuda_gemm_print(char *buf, size_t size, const drift_cuda_gemm_t *g);
/* 1 when the path is a deterministic twin of a CPU kernel (naive, tiled, splitk[:tree]). */
int drift_cuda_gemm_is_twin(const drift_cuda_gemm_t *g);

/* What cuBLASLt chose (or was given) and what ran; filled by drift_cuda_gemm when info is
 * not NULL. algo is the opaque cublasLtMatmulAlgo_t (64 bytes), reusable with :fixed. */
typedef struct {
    uint64_t algo[8];
    int have_algo;   /* 1 when algo holds an algorithm */
    int algo_id;     /* CUBLASLT_ALGO_CONFIG_ID */
    int tile_id;     /* CUBLASLT_ALGO_CONFIG_TILE_ID */
    int splitk;      /* CUBLASLT_ALGO_CONFIG_SPLITK_NUM (1 = none) */
    int reduction;   /* CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME */
    int stages;      /* CUBLASLT_ALGO_CONFIG_STAGES_ID */
    char kernel[64]; /* what ran: "tiled/2", "wmma fp16 16x16x16", "cublasLt algo 6 ..." */
} drift_cuda_gemm_info_t;

/* Plain C, no device (cuda/args.c): the code drift_cuda_gemm returns before it touches CUDA.
 * First exactly the CPU's checks (drift_gemm's: NULL pointers with nonzero sizes and bad
 * kernel or options DRIFT_EINVAL, SR and tc formats DRIFT_EUNSUPPORTED, sizes that cannot
 * fit DRIFT_ENOMEM), then the GPU restrictions listed above (DRIFT_EUNSUPPORTED). */
DRIFT_MUST_CHECK int drift_cuda_check_gemm(const double *C, const double *A, const double *B, size_t M, size_t N,
    size_t K, const drift_cuda_gemm_t *g, const drift_gemm_opts_t *opts);

/* C = A B on the GPU (host pointers, doubles holding values as drift_gemm takes them).
 * Returns 0 or a DRIFT_E* code (drift_cuda.h's convention); C is unchanged on error. */
DRIFT_MUST_CHECK int drift_cuda_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_cuda_gemm_t *g, const drift_gemm_opts_t *opts, drift_cuda_gemm_info_t *info);

/* The same on device memory, for benchmarks and repeated runs (no allocation, no copy, no
 * synchronisation: the work is queued on the default stream). dA and dB hold the input
 * format's storage: float for SIMT paths and fp32/tf32 (the floats' values already rounded),
 * __half for fp16, __nv_bfloat16 for bf16, one byte for fp8 (tc and cublas paths); dC is
 * float. The caller has checked the arguments with drift_cuda_check_gemm. */
DRIFT_MUST_CHECK int drift_cuda_gemm_device(float *dC, const void *dA, const void *dB, int M, int N, int K,
    const drift_cuda_gemm_t *g, const drift_gemm_opts_t *opts, drift_cuda_gemm_info_t *info);
/* Bytes per element of dA/dB for (g, in) in drift_cuda_gemm_device: 4, 2 or 1. */
int drift_cuda_gemm_storage_bytes(const drift_cuda_gemm_t *g, drift_format_t in);

/* The same GEMM queued on nstreams concurrent CUDA streams (1..DRIFT_CUDA_MAX_STREAMS), each
 * with its own output, cuBLAS handle and workspace: C receives nstreams results of M x N, one
 * after the other. For the paths whose bits may depend on scheduling: splitk:S:atomic,
 * cublas[...] and cublaslt (not :fixed); twins are deterministic by construction
 * (DRIFT_EUNSUPPORTED). drift_cuda_check_gemm_streams: the same checks, plain C. */
#define DRIFT_CUDA_MAX_STREAMS 16
DRIFT_MUST_CHECK int drift_cuda_check_gemm_streams(const double *C, const double *A, const double *B, size_t M,
    size_t N, size_t K, const drift_cuda_gemm_t *g, const drift_gemm_opts_t *opts, int nstreams);
DRIFT_MUST_CHECK int drift_cuda_gemm_streams(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_cuda_gemm_t *g, const drift_gemm_opts_t *opts, int nstreams, drift_cuda_gemm_info_t *info);

/* Versions of the libraries: "cuBLAS 13.0.0, cuBLASLt 130000" (needs the backend). */
void drift_cuda_blas_versions(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
