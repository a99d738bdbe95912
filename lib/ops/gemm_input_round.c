/* gemm_input_round.c — A and B rounded to the input format (RNE) before any kernel sees
 * them (gemm.h: a_k = RNE_in(A[i][k])).
 *
 * The rounding itself is the lab's one bulk rounding, drift_round_array (lib/core), which
 * is bit-identical to drift_rne and picks its own SIMD kernel; this file only cuts the
 * array into chunks that the OpenMP threads share. The chunk is what one call rounds
 * while its source and destination stay in L1/L2 (4096 doubles = 32 KiB). */
#include "gemm_internal.h"

#define ROUND_CHUNK 4096

void drift_gemm_round_inputs(double *dd, float *df, const double *src, size_t n, drift_format_t f)
{
    drift_round_array_opts_t o = {f, DRIFT_RNE, 0, 0, NULL};
    /* Neither call can fail: f is a lab format, RNE needs no random stream, and the float
     * copy is only asked for on the F32 path, whose input format is never fp64. */
#pragma omp parallel for schedule(dynamic, 1) if (n >= DRIFT_PAR_MIN_ELEMS_FAST)
    for (size_t t0 = 0; t0 < n; t0 += ROUND_CHUNK) {
        size_t m = n - t0 < ROUND_CHUNK ? n - t0 : ROUND_CHUNK;
        if (df)
            (void)drift_round_array_float(df + t0, src + t0, m, &o);
        else
            (void)drift_round_array(dd + t0, src + t0, m, &o);
    }
}
