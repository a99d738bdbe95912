/* model_gpu.c — the decoder's GEMMs on the backend (model_gpu.h). */
#include "model_gpu.h"

#include "backend.h"
#include "dispatch.h"

int drift_model_gpu_active(void) { return drift_backend_active(); }

int drift_model_gpu_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
                         const drift_gemm_kernel_t *k, drift_format_t in, drift_format_t acc, drift_format_t out)
{
    drift_gemm_opts_t o = drift_gemm_opts(in, acc);
    o.out = out;
    return drift_dispatch_gemm(C, A, B, M, N, K, k, &o);
}
