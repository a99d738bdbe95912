/* dispatch_streams.c — a device GEMM on concurrent streams (dispatch_streams.h). */
#include "dispatch_streams.h"

#include <stdio.h>

#include "backend.h"
#include "drift.h"

int drift_dispatch_gemm_streams(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const char *spec, const drift_gemm_opts_t *opts, int nstreams, char *ran, size_t ran_size)
{
    const drift_backend_ops_t *dev = drift_backend_active() ? drift_backend_registered() : NULL;
    char what[96];
    snprintf(what, sizeof what, "gemm %s on %d streams", spec ? spec : "(none)", nstreams);
    if (!spec || !opts) return DRIFT_EINVAL;
    if (!dev || !dev->gemm_streams) return drift_backend_failed(DRIFT_EUNSUPPORTED, what);
    drift_backend_lock();
    int rc = dev->gemm_streams(C, A, B, M, N, K, spec, opts, nstreams, ran, ran_size);
    drift_backend_unlock();
    if (rc) return drift_backend_failed(rc, what);
    drift_backend_count(0, 1, 0);
    return DRIFT_OK;
}
