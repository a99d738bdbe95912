/* gpu_gemm.h — a GEMM kernel as a GPU of one tensor-core architecture runs it: bf16, fp16 and
 * tf32 inputs on its tensor cores when the architecture has a path for them (tc_model.h), the
 * kernel's split-K plan as mma:ARCH,ceil(K/S) (gemm_mma.h, fp32 output); every other input on
 * fp32 FMA in the kernel's own order (gemm.h, through the dispatcher). batch_invariance's
 * cost model makes the same choice (its cost_model.h: tensor_cores for the same formats).
 * drift_gpu_gemm and drift_gpu_row0_of branch on the tensor-core case, so they live with the
 * dispatcher (dispatch_gpu_gemm.c). */
#ifndef DRIFT_GPU_GEMM_H
#define DRIFT_GPU_GEMM_H

#include <stddef.h>

#include "drift.h"
#include "gemm.h"
#include "row0.h"
#include "tc_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tensor-core architecture named like a device of policy.h ("v100", "a100", "h100",
 * "b200"): 0, or DRIFT_EINVAL for a name that is none. */
DRIFT_MUST_CHECK int drift_gpu_arch(drift_tc_arch_t *arch, const char *device);
/* 1 when a GPU of arch runs `in` on its tensor cores, else 0. */
int drift_gpu_uses_tc(drift_format_t in, drift_tc_arch_t arch);
/* C (M x N) = A (M x K) B (K x N) under kernel k with opts->in inputs as a GPU of arch computes
 * it. Errors of drift_mma_from_gemm and drift_mma_gemm, or of drift_dispatch_gemm. */
DRIFT_MUST_CHECK int drift_gpu_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_gemm_kernel_t *k, const drift_gemm_opts_t *opts, drift_tc_arch_t arch);
/* drift_row0_of (row0.h) computed by drift_gpu_gemm: the index of k in the cache, its row
 * a0 B computed the first time k is seen. */
DRIFT_MUST_CHECK int drift_gpu_row0_of(drift_row0_cache_t *c, const drift_gemm_kernel_t *k, const double *a0,
    const double *B, size_t N, size_t K, const drift_gemm_opts_t *opts, drift_tc_arch_t arch);

#ifdef __cplusplus
}
#endif

#endif
