/* dispatch_gpu_gemm.c — a GEMM kernel as a GPU of one architecture runs it (gpu_gemm.h): the
 * tensor-core model's split-K plan for the inputs that architecture runs on its tensor cores,
 * the kernel's own order through the dispatcher for the others. Kept with the dispatcher
 * because it branches on the tensor-core case. */
#include "gpu_gemm.h"
#include "dispatch.h"
#include "drift.h"
#include "gemm_mma.h"

#include <stdlib.h>

int drift_gpu_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_gemm_kernel_t *k, const drift_gemm_opts_t *opts, drift_tc_arch_t arch)
{
    if (!k || !opts) return DRIFT_EINVAL;
    if (!drift_gpu_uses_tc(opts->in, arch)) return drift_dispatch_gemm(C, A, B, M, N, K, k, opts);
    drift_mma_kernel_t m;
    int rc = drift_mma_from_gemm(&m, k, arch, K);
    return rc ? rc : drift_mma_gemm(C, A, B, M, N, K, &m, opts->in, DRIFT_FP32);
}

int drift_gpu_row0_of(drift_row0_cache_t *c, const drift_gemm_kernel_t *k, const double *a0, const double *B, size_t N,
    size_t K, const drift_gemm_opts_t *opts, drift_tc_arch_t arch)
{
    if (!drift_gpu_uses_tc(opts->in, arch)) return drift_row0_of(c, k, a0, B, N, K, opts);
    for (int t = 0; t < c->n; t++)
        if (drift_gemm_kernel_equal(&c->kern[t], k)) return t;
    if (c->n == 64) return DRIFT_ENOMEM;
    double *row = malloc(N * sizeof *row);
    if (!row) return DRIFT_ENOMEM;
    int rc = drift_gpu_gemm(row, a0, B, 1, N, K, k, opts, arch);
    if (rc) {
        free(row);
        return rc;
    }
    c->kern[c->n] = *k, c->row[c->n] = row, c->N = N;
    return c->n++;
}
