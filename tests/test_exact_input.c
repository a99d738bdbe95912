/* test_exact_input.c — decimal input is rounded ONCE from its exact value (decimal.h).
 *
 * Cases: for every format, pairs of neighbours (a, b) at 1, at 1/3 and 0.1 and 100, at the
 * top of the range (and the overflow tie max + ulp/2 where the format has infinities), at
 * the bottom of the normal range and among the subnormals; the midpoint m = (a + b)/2 and
 * the neighbours themselves are written as 40-significant-digit decimals rounded down and
 * up (so a tie gives the exact tie when it fits in 40 digits, and values 10^-40 either side
 * of it otherwise), both signs. Each is rounded by drift_decimal_round in every mode.
 *
 * Oracle (independent of lib/core/format.c and decimal.c): MPFR reading the same string at
 * the format's precision, with the exponent range of the format set here from its
 * published parameters (IEEE 754-2019 binary64/32/16; bfloat16; NVIDIA tf32; OCP OFP8
 * e4m3/e5m2), then mpfr_subnormalize. Ties-away, and stochastic rounding with the random
 * word 0 (away whenever inexact) and 2^31 (away iff beyond the midpoint), are derived
 * from MPFR's RNDZ / RNDA / RNDN results and an exact tie test at 400 bits. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <string.h>

#include "decimal.h"
#include "drift.h"
#include "format.h"

typedef struct {
    drift_format_t f;
    int p, emin, emax; /* precision with the hidden bit; exponents of the smallest/largest normal binade */
    double max;        /* largest finite */
    int has_inf;
} fmt_t;

static const fmt_t FMT[] = {
    {DRIFT_FP64, 53, -1022, 1023, DBL_MAX, 1},
    {DRIFT_FP32, 24, -126, 127, 0x1.fffffep127, 1},
    {DRIFT_TF32, 11, -126, 127, 0x1.ffcp127, 1},
    {DRIFT_FP16, 11, -14, 15, 65504.0, 1},
    {DRIFT_BF16, 8, -126, 127, 0x1.fep127, 1},
    {DRIFT_FP8E4M3, 4, -6, 8, 448.0, 0},
    {DRIFT_FP8E5M2, 3, -14, 15, 57344.0, 1},
};

/* s rounded to the format by MPFR in mode rnd (RNDN, RNDZ, RNDU, RNDD, RNDA). */
static double mpfr_round_fmt(const char *s, const fmt_t *F, mpfr_rnd_t rnd)
{
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    /* MPFR writes x = 0.1b...b * 2^e: the largest binade [2^emax, 2^(emax+1)) is e = emax + 1,
     * the smallest subnormal 2^(emin - p + 1) is e = emin - p + 2. */
    mpfr_set_emin(F->emin - F->p + 2);
    mpfr_set_emax(F->emax + 1);
    mpfr_t r;
    mpfr_init2(r, F->p);
    int t = mpfr_strtofr(r, s, NULL, 10, rnd);
    t = mpfr_check_range(r, t, rnd);
    mpfr_subnormalize(r, t, rnd);
    double d = mpfr_get_d(r, MPFR_RNDN); /* exact: p <= 53 bits within the double range */
    mpfr_clear(r);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    return d;
}

/* Is the exact value of s the midpoint z + d/2 (z and z + d neighbours; binary, so the
 * midpoint has few bits and 400 bits hold it at any exponent)? */
static int is_tie(const char *s, double z, double d)
{
    mpfr_t x, m;
    mpfr_inits2(400, x, m, (mpfr_ptr)0);
    int t = mpfr_strtofr(x, s, NULL, 10, MPFR_RNDN);
    mpfr_set_d(m, d, MPFR_RNDN);
    mpfr_div_2ui(m, m, 1, MPFR_RNDN);
    mpfr_add_d(m, m, z, MPFR_RNDN);
    int tie = t == 0 && mpfr_equal_p(x, m);
    mpfr_clears(x, m, (mpfr_ptr)0);
    return tie;
}

typedef enum { M_RNE, M_RZ, M_RNA, M_RU, M_RD, M_SR0, M_SRHALF, M_COUNT } mode_case_t;

static double expected(const char *s, const fmt_t *F, mode_case_t m)
{
    switch (m) {
    case M_RNE: return mpfr_round_fmt(s, F, MPFR_RNDN);
    case M_RZ: return mpfr_round_fmt(s, F, MPFR_RNDZ);
    case M_RU: return mpfr_round_fmt(s, F, MPFR_RNDU);
    case M_RD: return mpfr_round_fmt(s, F, MPFR_RNDD);
    case M_SR0: return mpfr_round_fmt(s, F, MPFR_RNDA);
    default: break;
    }
    double z = mpfr_round_fmt(s, F, MPFR_RNDZ), a = mpfr_round_fmt(s, F, MPFR_RNDA);
    if (z == a) return z;
    /* above max the next step is the one to 2^(emax+1), where the format overflows */
    double d = isinf(a) ? copysign(ldexp(1.0, F->emax - F->p + 1), a) : a - z;
    int tie = is_tie(s, z, d);
    if (m == M_RNA) return tie ? mpfr_round_fmt(s, F, MPFR_RNDA) : mpfr_round_fmt(s, F, MPFR_RNDN);
    return tie ? z : mpfr_round_fmt(s, F, MPFR_RNDN); /* SR with word 2^31: away iff frac > 1/2 */
}

static const drift_mode_t LAB_MODE[M_COUNT] = {DRIFT_RNE, DRIFT_RZ, DRIFT_RNA, DRIFT_RU, DRIFT_RD, DRIFT_SR, DRIFT_SR};
static const uint32_t SR_WORD[M_COUNT] = {0, 0, 0, 0, 0, 0, 0x80000000u};
static const char *const MODE_NAME[M_COUNT] = {"rne", "rz", "rna", "ru", "rd", "sr(0)", "sr(2^31)"};

/* v (a binary number) as a decimal of 40 significant digits, rounded with rnd. */
static void dec40(char *buf, size_t size, const mpfr_t v, mpfr_rnd_t rnd)
{
    mpfr_exp_t e;
    char *digits = mpfr_get_str(NULL, &e, 10, 40, v, rnd);
    const char *d = digits[0] == '-' ? digits + 1 : digits;
    snprintf(buf, size, "%s%c.%se%ld", digits[0] == '-' ? "-" : "", d[0], d + 1, (long)e - 1);
    mpfr_free_str(digits);
}

static long checked, ties_seen;

static void check_string(const char *s, const fmt_t *F)
{
    for (int m = 0; m < M_COUNT; m++) {
        drift_round_opts_t o = {LAB_MODE[m], 0, 0};
        double got;
        cr_assert_eq(drift_decimal_round(&got, s, F->f, &o, SR_WORD[m]), DRIFT_OK, "%s refused", s);
        double want = expected(s, F, (mode_case_t)m);
        if (!F->has_inf && fabs(want) > F->max) continue; /* e4m3 overflow: NaN, tested below */
        cr_assert(got == want && signbit(got) == signbit(want), "%s in %s %s: got %a, MPFR says %a", s,
            drift_format_name(F->f), MODE_NAME[m], got, want);
        checked++;
    }
}

/* a and its upper neighbour b (b = a + spacing; may be max + spacing = 2^(emax+1)). */
static void check_pair(const fmt_t *F, double a)
{
    int e;
    frexp(a, &e); /* a in [2^(e-1), 2^e) */
    int q = (a >= ldexp(1.0, F->emin) ? e - 1 : F->emin) - F->p + 1;
    mpfr_t va, vb, mid;
    mpfr_inits2(2000, va, vb, mid, (mpfr_ptr)0);
    mpfr_set_d(va, a, MPFR_RNDN);
    mpfr_set_ui_2exp(vb, 1, q, MPFR_RNDN);
    mpfr_add(vb, vb, va, MPFR_RNDN);
    mpfr_add(mid, va, vb, MPFR_RNDN);
    mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
    for (int sign = 0; sign < 2; sign++) {
        mpfr_ptr pts[3] = {va, mid, vb};
        for (int k = 0; k < 3; k++) {
            char lo[128], hi[128];
            dec40(lo, sizeof lo, pts[k], MPFR_RNDD);
            dec40(hi, sizeof hi, pts[k], MPFR_RNDU);
            if (k == 1 && !strcmp(lo, hi)) ties_seen++;
            check_string(lo, F);
            check_string(hi, F);
        }
        mpfr_neg(va, va, MPFR_RNDN);
        mpfr_neg(vb, vb, MPFR_RNDN);
        mpfr_neg(mid, mid, MPFR_RNDN);
    }
    mpfr_clears(va, vb, mid, (mpfr_ptr)0);
}

Test(exact_input, forty_digit_decimals_at_and_around_ties_in_every_format_and_mode)
{
    for (size_t i = 0; i < sizeof FMT / sizeof FMT[0]; i++) {
        const fmt_t *F = &FMT[i];
        double minsub = ldexp(1.0, F->emin - F->p + 1), minnorm = ldexp(1.0, F->emin);
        double top_spacing = ldexp(1.0, F->emax - F->p + 1);
        double as[] = {1.0, 1.5, 100.0, 0.75, minnorm, minnorm - minsub, minsub, 0.0, 3 * minsub, F->max - top_spacing,
            F->has_inf ? F->max : F->max - 2 * top_spacing};
        for (size_t j = 0; j < sizeof as / sizeof as[0]; j++) check_pair(F, as[j]);
        /* numbers that are not near a power of two: 1/3 and 0.1 as the format stores them */
        const char *const odd[] = {"0.3333333333333333333333333333333333333333",
            "0.1000000000000000000000000000000000000001", "3.141592653589793238462643383279502884197"};
        for (size_t j = 0; j < 3; j++) {
            double a = mpfr_round_fmt(odd[j], F, MPFR_RNDZ);
            check_pair(F, a);
        }
    }
    cr_assert_gt(ties_seen, 50, "the cases must include exact ties (got %ld)", ties_seen);
    cr_log_info("%ld roundings checked, %ld exact ties", checked, ties_seen);
}

/* Round-to-nearest ties at the edge of a decimal input, derived by hand:
 * 1.00048828125 = 1 + 2^-11 is the fp16 tie between 1 and 1 + 2^-10; anything above it
 * rounds up. 1.00390625 = 1 + 2^-8 is the bf16 tie between 1 and 1 + 2^-7. */
Test(exact_input, decimal_ties)
{
    double r;
    cr_assert_eq(drift_decimal_round(&r, "1.00048828125000000000001", DRIFT_FP16, NULL, 0), DRIFT_OK);
    cr_assert_eq(r, 0x1.004p+0);
    cr_assert_eq(drift_decimal_round(&r, "1.00048828125", DRIFT_FP16, NULL, 0), DRIFT_OK);
    cr_assert_eq(r, 1.0); /* the exact tie: to even */
    cr_assert_eq(drift_decimal_round(&r, "1.00390625000000000000001", DRIFT_BF16, NULL, 0), DRIFT_OK);
    cr_assert_eq(r, 0x1.02p+0);
    /* beyond the double range: inf in nearest, DBL_MAX toward zero (IEEE 754 7.4) */
    cr_assert_eq(drift_decimal_round(&r, "1e309", DRIFT_FP64, NULL, 0), DRIFT_OK);
    cr_assert(isinf(r) && r > 0);
    cr_assert_eq(drift_decimal_round(&r, "0x1p+1024", DRIFT_FP64, NULL, 0), DRIFT_OK);
    cr_assert(isinf(r) && r > 0);
    drift_round_opts_t rz = {DRIFT_RZ, 0, 0};
    cr_assert_eq(drift_decimal_round(&r, "-1e309", DRIFT_FP64, &rz, 0), DRIFT_OK);
    cr_assert_eq(r, -DBL_MAX);
    cr_assert_eq(drift_decimal_round(&r, "1e309", DRIFT_FP16, NULL, 0), DRIFT_OK);
    cr_assert(isinf(r));
    /* e4m3 has no infinity: overflow is NaN, or 448 when saturating (OCP OFP8) */
    cr_assert_eq(drift_decimal_round(&r, "1e309", DRIFT_FP8E4M3, NULL, 0), DRIFT_OK);
    cr_assert(isnan(r));
    drift_round_opts_t sat = {DRIFT_RNE, 0, 1};
    cr_assert_eq(drift_decimal_round(&r, "1e309", DRIFT_FP8E4M3, &sat, 0), DRIFT_OK);
    cr_assert_eq(r, 448.0);
    /* far below every format: zero with the sign, or the smallest subnormal rounding up */
    cr_assert_eq(drift_decimal_round(&r, "-1e-99999", DRIFT_FP64, NULL, 0), DRIFT_OK);
    cr_assert(r == 0 && signbit(r));
    drift_round_opts_t ru = {DRIFT_RU, 0, 0};
    cr_assert_eq(drift_decimal_round(&r, "1e-99999", DRIFT_FP32, &ru, 0), DRIFT_OK);
    cr_assert_eq(r, 0x1p-149);
    /* hex floats with more bits than a double are rounded once too: 1 + 2^-53 + 2^-80 */
    cr_assert_eq(drift_decimal_round(&r, "0x1.00000000000008000001p+0", DRIFT_FP64, NULL, 0), DRIFT_OK);
    cr_assert_eq(r, 0x1.0000000000001p+0);
}

Test(exact_input, malformed_strings_are_refused)
{
    const char *const bad[] = {
        "", " 1", "1 ", "abc", "1e", "0x", ".", "1.2.3", "--1", "1e+", "0x1p", "nan1", "1,5", "0b101"};
    double r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(drift_decimal_round(&r, bad[i], DRIFT_FP32, NULL, 0), DRIFT_EINVAL, "'%s' accepted", bad[i]);
    const char *const good[] = {
        "1", "-1.5", ".5", "5.", "1e-3", "2.5E+10", "0x1.8p+3", "0X10", "inf", "-Infinity", "NaN", "+0"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        cr_assert_eq(drift_decimal_round(&r, good[i], DRIFT_FP32, NULL, 0), DRIFT_OK, "'%s' refused", good[i]);
}
