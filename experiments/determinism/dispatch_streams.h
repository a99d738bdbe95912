/* dispatch_streams.h — one device-only GEMM path (dispatch.h's drift_dispatch_gemm_spec) queued
 * on several concurrent CUDA streams at once, for the run-to-run determinism experiment: do
 * results depend on what else the GPU runs at the same time? Kept apart from dispatch.h (the
 * recipe dispatcher) as a measurement of the device, not a recipe. */
#ifndef DRIFT_DISPATCH_STREAMS_H
#define DRIFT_DISPATCH_STREAMS_H

#include <stddef.h>

#include "drift.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* C receives nstreams results of M x N (stream s at C + s M N) of spec (splitk:S:atomic,
 * cublas[...], cublaslt) computed concurrently; ran: what ran. DRIFT_EUNSUPPORTED when no
 * device is selected or it has no such path (drift_backend_message() says why). */
DRIFT_MUST_CHECK int drift_dispatch_gemm_streams(double *C, const double *A, const double *B, size_t M, size_t N,
    size_t K, const char *spec, const drift_gemm_opts_t *opts, int nstreams, char *ran, size_t ran_size);

#ifdef __cplusplus
}
#endif

#endif
