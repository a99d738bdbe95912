/* model_gpu.h — the decoder's GEMMs on the backend (backend.h): model.c's GPU path, in a file
 * of its own so that the CPU decoder reads without it. */
#ifndef DRIFT_MODEL_GPU_H
#define DRIFT_MODEL_GPU_H

#include <stddef.h>

#include "format.h"
#include "gemm.h"

/* 1 when dispatcher calls go to a device (--backend cuda, or auto with one). */
int drift_model_gpu_active(void);

/* C = A B with kernel k, inputs rounded to in, accumulated in acc, stored in out, through
 * drift_dispatch_gemm: on the device when it takes the arguments, checked bit for bit against
 * drift_gemm (a mismatch is DRIFT_ERANGE with the line in drift_backend_message()). */
int drift_model_gpu_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
                         const drift_gemm_kernel_t *k, drift_format_t in, drift_format_t acc, drift_format_t out);

#endif
