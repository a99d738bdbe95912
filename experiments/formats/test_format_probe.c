/* test_format_probe.c — a format's constants and spacing measured through the rounder
 * (format_probe.h). Expected values are derived by hand next to each case from the IEEE
 * parameters (p, emin, emax) of the formats, not from format.c. */
#include <criterion/criterion.h>

#include "drift.h"
#include "format_probe.h"

Test(format_probe, fp16_and_bf16_constants)
{
    /* fp16: p = 11, emin = -14, emax = 15: eps 2^-10, u 2^-11, min subnormal 2^-24,
     * max (2 - 2^-10) 2^15 = 65504; binades from 2^-24 to 2^15: 40 */
    drift_format_consts_t k;
    cr_assert_eq(drift_format_probe_constants(&k, DRIFT_FP16), 0);
    cr_assert(k.eps == 0x1p-10 && k.u == 0x1p-11 && k.min_sub == 0x1p-24 && k.max_fin == 65504 && k.p == 11);
    drift_binade_t s[64];
    cr_assert_eq(drift_format_probe_spacing(s, DRIFT_FP16), 40);
    cr_assert(drift_format_nbinades(DRIFT_FP16) >= 40);
    cr_assert(s[0].e == -24 && s[0].spacing == 0x1p-24 && s[0].subnormal);
    cr_assert(s[39].e == 15 && s[39].spacing == 32 && s[39].x_end == 65504 && !s[39].subnormal); /* 2^(15-10) */
    /* bf16: p = 8, fp32's range: eps 2^-7, max (2 - 2^-7) 2^127 */
    cr_assert_eq(drift_format_probe_constants(&k, DRIFT_BF16), 0);
    cr_assert(k.eps == 0x1p-7 && k.max_fin == 0x1.fep127 && k.min_sub == 0x1p-133);
}
