/* test_budget.c — the error budget adds up, and each part is the correctly rounded exact value.
 *
 * Witness: MPFR at 4096 bits, where every product of two doubles and every sum of a few
 * thousand of them is exact (products need 106 bits; the exponents of the lab's values span
 * far less than 4096 - 106 bits), so each part computed there and rounded once to double is
 * the correctly rounded exact part. */
#include <criterion/criterion.h>
#include <math.h>
#include <mpfr.h>

#include "budget.h"
#include "drift.h"
#include "format.h"
#include "order.h"
#include "philox.h"

#define PREC 4096

/* acc += sign * sum a_k b_k (inputs rounded to `in` when round_in), exactly */
static void mp_dot(mpfr_t acc, const double *a, const double *b, size_t n, drift_format_t in, int round_in, int sign)
{
    mpfr_t p;
    mpfr_init2(p, PREC);
    for (size_t k = 0; k < n; k++) {
        double x = round_in ? drift_rne(a[k], in) : a[k], y = round_in ? drift_rne(b[k], in) : b[k];
        mpfr_set_d(p, x, MPFR_RNDN);
        mpfr_mul_d(p, p, y, MPFR_RNDN);
        if (sign > 0) mpfr_add(acc, acc, p, MPFR_RNDN);
        else mpfr_sub(acc, acc, p, MPFR_RNDN);
    }
    mpfr_clear(p);
}

Test(budget, parts_add_up_to_the_total_on_random_cases)
{
    const drift_format_t ins[] = {DRIFT_BF16, DRIFT_FP16, DRIFT_TF32, DRIFT_FP8E4M3};
    const drift_format_t outs[] = {DRIFT_BF16, DRIFT_FP16, DRIFT_FP32, DRIFT_FP32};
    mpfr_t Eu, Er, t;
    mpfr_inits2(PREC, Eu, Er, t, (mpfr_ptr)0);
    for (int c = 0; c < 200; c++) {
        drift_stream_t s;
        drift_stream_init(&s, 11, drift_fnv1a32("test_budget"), (uint32_t)c, 0);
        size_t n = 1 + drift_stream_below(&s, 700);
        drift_format_t in = ins[c % 4], out = outs[c % 4];
        double a[700], b[700], ar[700], br[700];
        for (size_t k = 0; k < n; k++) {
            a[k] = drift_rne(drift_stream_normal(&s) * (in == DRIFT_FP8E4M3 ? 4 : 1), DRIFT_FP32);
            b[k] = drift_rne(drift_stream_normal(&s), DRIFT_FP32);
            ar[k] = drift_rne(a[k], in);
            br[k] = drift_rne(b[k], in);
        }
        /* a kernel: seq fp32 fma over the rounded inputs, result stored in `out` */
        drift_order_t o;
        drift_order_parse(&o, "seq");
        drift_acc_t acc = {DRIFT_FP32, DRIFT_RNE, 1};
        double computed, stored;
        cr_assert_eq(drift_dot(&computed, ar, br, n, NULL, &o, &acc), 0);
        stored = drift_rne(computed, out);
        drift_budget_t B;
        cr_assert_eq(drift_budget_dot(&B, a, b, n, in, computed, stored), 0);

        mpfr_set_zero(Eu, 1);
        mpfr_set_zero(Er, 1);
        mp_dot(Eu, a, b, n, in, 0, 1);
        mp_dot(Er, a, b, n, in, 1, 1);
        cr_assert_eq(B.exact_unrounded, mpfr_get_d(Eu, MPFR_RNDN));
        cr_assert_eq(B.exact_rounded, mpfr_get_d(Er, MPFR_RNDN));
        mpfr_set_d(t, stored, MPFR_RNDN);
        mpfr_sub(t, t, Eu, MPFR_RNDN);
        cr_assert_eq(B.total, mpfr_get_d(t, MPFR_RNDN), "case %d total", c);
        mpfr_sub(t, Er, Eu, MPFR_RNDN);
        cr_assert_eq(B.input, mpfr_get_d(t, MPFR_RNDN), "case %d input", c);
        mpfr_set_d(t, computed, MPFR_RNDN);
        mpfr_sub(t, t, Er, MPFR_RNDN);
        cr_assert_eq(B.accumulation, mpfr_get_d(t, MPFR_RNDN), "case %d accumulation", c);
        mpfr_set_d(t, stored, MPFR_RNDN);
        mpfr_sub_d(t, t, computed, MPFR_RNDN);
        cr_assert_eq(B.output, mpfr_get_d(t, MPFR_RNDN), "case %d output", c);

        /* The rounded parts add up to the rounded total up to their own roundings: the exact
         * residual is at most half an fp64 ulp of each of the four (each was rounded once). */
        mpfr_set_d(t, B.total, MPFR_RNDN);
        mpfr_sub_d(t, t, B.input, MPFR_RNDN);
        mpfr_sub_d(t, t, B.accumulation, MPFR_RNDN);
        mpfr_sub_d(t, t, B.output, MPFR_RNDN);
        cr_assert_eq(B.residual, mpfr_get_d(t, MPFR_RNDN), "case %d residual", c);
        double bound = 0.5 * (drift_ulp(B.total, DRIFT_FP64) + drift_ulp(B.input, DRIFT_FP64) +
                              drift_ulp(B.accumulation, DRIFT_FP64) + drift_ulp(B.output, DRIFT_FP64));
        cr_assert(fabs(B.residual) <= bound, "case %d: residual %a > %a", c, B.residual, bound);
    }
    mpfr_clears(Eu, Er, t, (mpfr_ptr)0);
}

/* Hand case: a = (1 + 2^-10), b = (1), bf16 inputs (p = 8): RNE_bf16(1 + 2^-10) = 1, so
 * input = 1 - (1 + 2^-10) = -2^-10; the kernel computes 1 exactly (accumulation 0); storing
 * 1 in any format is exact (output 0); total = -2^-10. */
Test(budget, hand_case)
{
    double a = 1 + 0x1p-10, b = 1;
    drift_budget_t B;
    cr_assert_eq(drift_budget_dot(&B, &a, &b, 1, DRIFT_BF16, 1.0, 1.0), 0);
    cr_assert_eq(B.input, -0x1p-10);
    cr_assert_eq(B.accumulation, 0);
    cr_assert_eq(B.output, 0);
    cr_assert_eq(B.total, -0x1p-10);
    cr_assert_eq(B.residual, 0);
    cr_assert_eq(drift_budget_dot(&B, &a, &b, 1, DRIFT_BF16, NAN, 1.0), DRIFT_EINVAL);
    cr_assert_eq(drift_budget_dot(NULL, &a, &b, 1, DRIFT_BF16, 1.0, 1.0), DRIFT_EINVAL);
}
