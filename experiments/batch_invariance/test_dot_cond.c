/* test_dot_cond.c — the median condition number of a row of dot products (dot_cond.h), against
 * hand computations. */
#include <criterion/criterion.h>
#include <math.h>

#include "dot_cond.h"
#include "drift.h"

/* a = (1, 1, 1); B's columns (1, 1, 1) and (1, -1, 0.5): sum|ab| / |sum ab| = 3/3 = 1 and
 * 2.5/0.5 = 5; the median of two values is their mean, 3. */
Test(dot_cond, median_by_hand)
{
    const double a[3] = {1, 1, 1}, B[6] = {1, 1, 1, -1, 1, 0.5};
    double med;
    cr_assert_eq(drift_dot_cond_median(&med, a, B, 3, 2, DRIFT_FP32, NULL), 0);
    cr_assert_eq(med, 3);
    const double exact[2] = {3, 0.5}; /* the caller's exact dot products give the same */
    cr_assert_eq(drift_dot_cond_median(&med, a, B, 3, 2, DRIFT_FP32, exact), 0);
    cr_assert_eq(med, 3);
}

/* a = (1, 1), b = (1, -(1 - 2^-20)). In fp32 (24 bits) b is exact: sum = 2^-20, sum|ab| =
 * 2 - 2^-20, condition number 2^21 - 1. In bf16 (8 bits) b rounds to -1: the sum cancels to 0
 * and the condition number is infinite. The inputs are rounded before anything is summed. */
Test(dot_cond, inputs_rounded_to_the_format_first)
{
    const double a[2] = {1, 1}, b[2] = {1, -(1 - ldexp(1, -20))};
    double med;
    cr_assert_eq(drift_dot_cond_median(&med, a, b, 2, 1, DRIFT_FP32, NULL), 0);
    cr_assert_eq(med, ldexp(1, 21) - 1);
    cr_assert_eq(drift_dot_cond_median(&med, a, b, 2, 1, DRIFT_BF16, NULL), 0);
    cr_assert(isinf(med) && med > 0);
}

/* fp64 products are not exact in a double: refused. */
Test(dot_cond, fp64_refused)
{
    const double a[1] = {1}, b[1] = {1};
    double med;
    cr_assert_eq(drift_dot_cond_median(&med, a, b, 1, 1, DRIFT_FP64, NULL), DRIFT_EINVAL);
}
