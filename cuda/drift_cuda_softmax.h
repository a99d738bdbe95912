/* drift_cuda_softmax.h — softmax on the GPU, the bit-exact twin of drift_softmax
 * (lib/ops/softmax.h) for the subset a kernel can decide on the device.
 *
 * out[r*n + i] = drift_softmax of row r of x (batch x n), for options with: variant naive,
 * safe, online or online:B; exp = expf; accumulator fp32, rne (fma or not for online's
 * d * alpha + r); order seq; in and out any format but fp64; any finite scale > 0.
 * Everything else the CPU accepts is DRIFT_EUNSUPPORTED here (reason in drift_cuda_message()).
 *
 * How it stays bit-exact: every step is the F32 path of softmax.c (one fp32 operation,
 * rounded to nearest) and the exponential is the correctly rounded fp32 exp, decided on the
 * device as the CPU decides it: y = exp((double)t) (CUDA's double exp, error <= 1 ulp), and
 * round(y) is accepted when y +- 2 ulp(double) round alike; a row where some exp cannot be
 * decided so is recomputed on the host by drift_softmax itself (*host_rows counts them; the
 * chance per exp is about 2^-27). Kernel 1: one thread per row. */
#ifndef DRIFT_CUDA_SOFTMAX_H
#define DRIFT_CUDA_SOFTMAX_H

#include <stddef.h>

#include "drift.h"
#include "softmax.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Plain C, no device (cuda/args.c): the CPU's verdict first (drift_softmax_validate, NULL
 * buffers with work: DRIFT_EINVAL), then the subset above (DRIFT_EUNSUPPORTED). */
DRIFT_MUST_CHECK int drift_cuda_check_softmax(
    const double *out, const double *x, size_t n, size_t batch, const drift_softmax_opts_t *o);

/* The entry point (cuda/softmax.cu): host pointers. host_rows may be NULL. */
DRIFT_MUST_CHECK int drift_cuda_softmax(
    double *out, const double *x, size_t n, size_t batch, const drift_softmax_opts_t *o, size_t *host_rows);

#ifdef __cplusplus
}
#endif

#endif
