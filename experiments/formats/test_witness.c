/* test_witness.c — exact witnesses (witness.h) and a format's constants measured through
 * the rounder (format_probe.h). Expected values are derived by hand next to each case
 * from the IEEE parameters (p, emin, emax) of the formats, not from format.c. */
#include <criterion/criterion.h>
#include <math.h>

#include "drift.h"
#include "format_probe.h"
#include "witness.h"

Test(witness, reads_fractions_pi_and_refuses_junk)
{
    mpfr_t x;
    mpfr_init2(x, DRIFT_WITNESS_PREC);
    cr_assert_eq(drift_witness_read(x, "1/3"), 0);
    /* 1/3 to 256 bits, then to double: 0x1.5555555555555p-2 (binary 0.0101... rounded at 53 bits) */
    cr_assert_eq(mpfr_get_d(x, MPFR_RNDN), 0x1.5555555555555p-2);
    cr_assert_eq(drift_witness_read(x, "pi"), 0);
    cr_assert_eq(mpfr_get_d(x, MPFR_RNDN), 0x1.921fb54442d18p+1); /* M_PI's bits */
    cr_assert_eq(drift_witness_read(x, "0x1.002p0"), 0);
    cr_assert_eq(mpfr_get_d(x, MPFR_RNDN), 1 + 0x1p-11);
    cr_assert_eq(drift_witness_read(x, "1/0"), DRIFT_EINVAL, "a zero denominator");
    cr_assert_eq(drift_witness_read(x, "0.1x"), DRIFT_EINVAL, "trailing junk");
    cr_assert_eq(drift_witness_read(x, ""), DRIFT_EINVAL);
    mpfr_clear(x);
}

Test(witness, rounds_once_and_measures_the_error)
{
    mpfr_t x, d, q;
    mpfr_inits2(DRIFT_WITNESS_PREC, x, (mpfr_ptr)0);
    mpfr_init2(d, DRIFT_WITNESS_DIFF_PREC);
    mpfr_init2(q, 53);
    /* 1 + 2^-11 + 2^-40 in fp16 (p = 11): just above the tie between 1 and 1 + 2^-10, so up;
     * a double rounding through fp32 (p = 24) would first give 1 + 2^-11, a tie, then 1. */
    cr_assert_eq(drift_witness_read(x, "0x1.0020000004p0"), 0);
    cr_assert_eq(drift_witness_round(x, DRIFT_FP16), 1 + 0x1p-10);
    /* 65520 = 65504 + 16 is fp16's overflow tie (max 65504, next would be 65536): to inf */
    cr_assert_eq(drift_witness_read(x, "65520"), 0);
    cr_assert(isinf(drift_witness_round(x, DRIFT_FP16)));
    /* 0.1 in bf16 (p = 8): 0.1 = 1.6 * 2^-4, 1.6 * 128 = 204.8 -> 205, so 205/2048 =
     * 0.10009765625, up; error 205/2048 - 1/10 = 1/10240 exactly; bf16's spacing at 0.1 is
     * 2^-4 * 2^-7 = 2^-11, so ulp_err = 2048/10240 = 0.2; rel_err = 10/10240 = 1/1024. */
    cr_assert_eq(drift_witness_read(x, "0.1"), 0);
    drift_stored_t c;
    drift_witness_error(&c, drift_witness_round(x, DRIFT_BF16), x, DRIFT_BF16, d, q);
    cr_assert_eq(c.result, 0.10009765625);
    cr_assert_str_eq(c.dir, "up");
    /* abs_err 1/10240 and ulp_err 0.2 are the exact values rounded up: at most one double above
     * the nearest one (the nearest may itself be the upper neighbour) */
    cr_assert(c.abs_err >= 1.0 / 10240 && c.abs_err <= nextafter(1.0 / 10240, 1));
    cr_assert(c.ulp_err >= 0.2 && c.ulp_err <= nextafter(0.2, 1));
    cr_assert(c.rel_err >= 1.0 / 1024 && c.rel_err <= nextafter(1.0 / 1024, 1)); /* (1/10240) / (1/10) */
    drift_witness_error(&c, INFINITY, x, DRIFT_FP16, d, q);
    cr_assert_str_eq(c.dir, "overflow");
    mpfr_clears(x, d, q, (mpfr_ptr)0);
}

Test(witness, summary_classifies_by_the_real)
{
    /* fp16: p = 11, smallest normal 2^-14, subnormal spacing 2^-24, largest finite 65504.
     * X[2] = 2^-14 - 2^-25 + 2^-40 lies just above the tie between 1023 and 1024 times 2^-24,
     * so it goes up to 2^-14, a normal; but the real is below the normal range, and its
     * relative error (2^-25 - 2^-40) / X[2] = 1.00046 u is above u. */
    static const char *const X[] = {
        "0.1",             /* normal range: 0x1.998p-4, error 1/40960, relative 2^-12 = u/2 */
        "0x1p-14",         /* the smallest normal itself: exact, in the normal range */
        "0x1.ffc0008p-15", /* below the normal range, stored as the normal 2^-14 */
        "0x1p-20",         /* a subnormal, exact: below the normal range, not zero */
        "0x1p-26",         /* below half the smallest subnormal: zero */
        "65520",           /* the overflow tie: inf */
    };
    mpfr_t x, d, q;
    mpfr_init2(x, DRIFT_WITNESS_PREC);
    mpfr_init2(d, DRIFT_WITNESS_DIFF_PREC);
    mpfr_init2(q, 53);
    drift_stored_summary_t s = {0};
    drift_stored_t c[6];
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(drift_witness_read(x, X[i]), 0);
        drift_witness_error(&c[i], drift_witness_round(x, DRIFT_FP16), x, DRIFT_FP16, d, q);
        drift_stored_summary_add(&s, &c[i]);
    }
    cr_assert(!c[0].below_normal && !c[1].below_normal && c[2].below_normal && c[3].below_normal && c[4].below_normal);
    /* the case the stored value misclassifies: stored as the normal 2^-14, its error above u */
    cr_assert(c[2].result == 0x1p-14 && c[2].cls == DRIFT_CLASS_NORMAL && c[2].rel_err > 0x1p-11);
    cr_assert(s.n_normal == 2 && s.n_below == 2 && s.n_zero == 1 && s.n_overflow == 1);
    cr_assert(s.max_rel_normal >= 0x1p-12 && s.max_rel_normal <= nextafter(0x1p-12, 1)); /* 0.1's */
    cr_assert_eq(s.max_rel_below, c[2].rel_err);
    mpfr_clears(x, d, q, (mpfr_ptr)0);
}

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
