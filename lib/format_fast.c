/* format_fast.c — bit-manipulation rounding paths for fp16, bf16 and tf32.
 * TEMPORARY: forwards to the generic rounder until the fast paths land. */
#include "format.h"

double drift_round_fp16_fast(double x, const drift_round_opts_t *o, uint32_t sr_bits)
{
    return drift_round_generic(x, drift_format_info(DRIFT_FP16), o, sr_bits);
}

double drift_round_bf16_fast(double x, const drift_round_opts_t *o, uint32_t sr_bits)
{
    return drift_round_generic(x, drift_format_info(DRIFT_BF16), o, sr_bits);
}

double drift_round_tf32_fast(double x, const drift_round_opts_t *o, uint32_t sr_bits)
{
    return drift_round_generic(x, drift_format_info(DRIFT_TF32), o, sr_bits);
}
