/* test_witness.c — exact witnesses (witness.h): read, rounded once, and the error against
 * them. Expected values are derived by hand next to each case from the IEEE parameters
 * (p, emin, emax) of the formats, not from format.c. */
#include <criterion/criterion.h>
#include <math.h>

#include "drift.h"
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
