/* test_metrics.c — errors, ulp distances, NMSE and top-2, on hand-derived values. */
#include <criterion/criterion.h>
#include <math.h>

#include "metrics.h"

Test(metrics, abs_err)
{
    cr_assert_eq(drift_abs_err(1 + 0x1p-52, 1), 0x1p-52); /* exact difference */
    cr_assert_eq(drift_abs_err(1, 1 + 0x1p-52), 0x1p-52);
    /* 2^60 - 1 rounds (RNE, ulp 128 below 2^60) to 2^60, which is already above the true
     * difference: kept. 2^60 + 1 rounds down to 2^60, below the truth: bumped to the next
     * double, 2^60 + 256. */
    cr_assert_eq(drift_abs_err(0x1p60, 1), 0x1p60);
    cr_assert_eq(drift_abs_err(0x1p60, -1), 0x1p60 + 256);
    cr_assert_eq(drift_abs_err(-1, 0x1p60), 0x1p60 + 256);
    cr_assert_eq(drift_abs_err(INFINITY, INFINITY), 0);
    cr_assert_eq(drift_abs_err(-0.0, 0.0), 0);
    cr_assert(isinf(drift_abs_err(INFINITY, 1)));
    cr_assert(isinf(drift_abs_err(0x1.fffffffffffffp+1023, -0x1.fffffffffffffp+1023))); /* beyond double */
    cr_assert(isnan(drift_abs_err(NAN, 1)));
}

Test(metrics, rel_err)
{
    cr_assert_eq(drift_rel_err(1.5, 1), 0.5);
    cr_assert_eq(drift_rel_err(0, 0), 0);
    cr_assert(isinf(drift_rel_err(1, 0)));
    /* |1 - 3| / 3 = 2/3 = 0.101010...b: RNE gives 0x1.5555555555555p-1, below 2/3, so the
     * rounded-up quotient is the next double. */
    cr_assert_eq(drift_rel_err(1, 3), 0x1.5555555555556p-1);
    cr_assert_eq(drift_rel_err(-1, -2), 0.5);
}

Test(metrics, ulp_err)
{
    cr_assert_eq(drift_ulp_err(1 + 0x1p-10, 1, DRIFT_FP16), 1); /* fp16 ulp at 1 is 2^-10 */
    cr_assert_eq(drift_ulp_err(1 + 0x1p-23, 1, DRIFT_FP32), 1);
    cr_assert_eq(drift_ulp_err(1.5, 1, DRIFT_BF16), 64);    /* 0.5 / 2^-7 */
    cr_assert_eq(drift_ulp_err(0x1p-24, 0, DRIFT_FP16), 1); /* at 0: the subnormal spacing */
    cr_assert_eq(drift_ulp_err(1.25, 1.25, DRIFT_FP64), 0);
    cr_assert_eq(drift_ulp_err(2 - 0x1p-10, 2, DRIFT_FP16), 0.5); /* spacing of 2's binade: 2^-9 */
}

/* For non-negative values the index of a value is its encoding (the fp16 word of 1.0 is
 * 0x3C00, of 65504 0x7BFF, of +inf 0x7C00; IEEE 754 binary16), so distances are
 * differences of encodings. */
Test(metrics, ulp_distance)
{
    cr_assert_eq(drift_ulp_distance(1, 2, DRIFT_FP16), 1024);
    cr_assert_eq(drift_ulp_distance(2, 1, DRIFT_FP16), 1024);
    cr_assert_eq(drift_ulp_distance(1, 65504, DRIFT_FP16), 0x7BFF - 0x3C00);
    cr_assert_eq(drift_ulp_distance(INFINITY, 65504, DRIFT_FP16), 1);
    cr_assert_eq(drift_ulp_distance(1, -1, DRIFT_FP16), 2 * 0x3C00);
    cr_assert_eq(drift_ulp_distance(0x1p-24, -0x1p-24, DRIFT_FP16), 2);
    cr_assert_eq(drift_ulp_distance(-0.0, 0.0, DRIFT_FP64), 0);
    cr_assert_eq(drift_ulp_distance(0, 0x1p-1074, DRIFT_FP64), 1);
    cr_assert_eq(drift_ulp_distance(1, 2, DRIFT_FP32), 1 << 23);
    cr_assert_eq(drift_ulp_distance(1, 1 + 0x1p-7, DRIFT_BF16), 1);
    cr_assert_eq(drift_ulp_distance(1, 1 + 0x1p-12, DRIFT_FP16), 0); /* rounded to fp16 first */
    cr_assert_eq(drift_ulp_distance(0x1.fffffffffffffp+1023, -0x1.fffffffffffffp+1023, DRIFT_FP64), INT64_MAX);
    cr_assert_eq(drift_ulp_distance(NAN, 1, DRIFT_FP32), INT64_MAX);
    /* fp64: 1.0 is 0x3FF0000000000000 */
    cr_assert_eq(drift_ulp_distance(0, 1, DRIFT_FP64), (int64_t)0x3FF0000000000000);
}

Test(metrics, nmse)
{
    double c[2] = {1, 2}, e[2] = {1, 3};
    cr_assert_eq(drift_nmse(c, e, 2), 0.1); /* (0 + 1) / (1 + 9), both exact then one division */
    cr_assert_eq(drift_nmse(e, e, 2), 0);
    double z[2] = {0, 0};
    cr_assert(isinf(drift_nmse(c, z, 2)));
    double big_c[2] = {0x1p600, 0}, big_e[2] = {0x1p601, 0}; /* squares overflow unscaled */
    cr_assert_eq(drift_nmse(big_c, big_e, 2), 0.25);
}

Test(metrics, top2)
{
    drift_top2_t t;
    double a[4] = {3, 5, 5, 1};
    drift_top2(&t, a, 4);
    cr_assert_eq(t.top1, 1);
    cr_assert_eq(t.top2, 2);
    cr_assert_eq(t.gap, 0);
    cr_assert(t.tie);
    double b[3] = {1, 4, 2};
    drift_top2(&t, b, 3);
    cr_assert_eq(t.top1, 1);
    cr_assert_eq(t.top2, 2);
    cr_assert_eq(t.v1, 4);
    cr_assert_eq(t.v2, 2);
    cr_assert_eq(t.gap, 2);
    cr_assert(!t.tie);
    double c[3] = {NAN, 1, 2}; /* NaN never wins */
    drift_top2(&t, c, 3);
    cr_assert_eq(t.top1, 2);
    cr_assert_eq(t.top2, 1);
    double d[2] = {7, 9};
    drift_top2(&t, d, 2);
    cr_assert_eq(t.top1, 1);
    cr_assert_eq(t.top2, 0);
}
