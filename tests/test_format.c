/* test_format.c — the number formats against independent witnesses.
 *
 * Witnesses, never the code under test:
 *   - MPFR as the rounding oracle (oracle_round below): mpfr_set at precision p, then
 *     mpfr_check_range + mpfr_subnormalize in the IEEE-emulating exponent range, the
 *     documented MPFR recipe for subnormals; ties-away built from RZ, RA and an exact
 *     midpoint comparison (MPFR has no such mode); overflow rules written out here from
 *     IEEE 754-2019 section 7.4 (and cross-checked against MPFR's own overflow handling);
 *   - published tables (IEEE 754-2019 binary16/binary32, the OCP 8-bit Floating Point
 *     Specification (OFP8) rev 1.0 table 1, Google's bfloat16 description) for constants
 *     and encodings;
 *   - hand derivations written next to the acceptance examples and the double-rounding
 *     traps;
 *   - C's own float conversion (IEEE binary32 hardware) and, where the compiler has it,
 *     _Float16, as second oracles for fp32/fp16 nearest-even.
 *
 * Loops count mismatches and assert once (a Criterion assertion per value would cost more
 * than the value), printing the first mismatch so a failure is readable. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "oracle.h"
#include "philox.h"
#include "support.h"

/* ---- small helpers --------------------------------------------------------------- */


static double bitsd(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}


static const drift_mode_t NONSR_MODES[] = {DRIFT_RNE, DRIFT_RZ, DRIFT_RNA, DRIFT_RU, DRIFT_RD};
#define N_NONSR 5

static void stream(drift_stream_t *s, uint32_t point, uint32_t trial)
{
    drift_stream_init(s, 20240601u, drift_fnv1a32("test_format"), point, trial);
}


/* ---- the MPFR oracle -------------------------------------------------------------- */

static mpfr_rnd_t mpfr_rnd_of(drift_mode_t m)
{
    switch (m) {
    case DRIFT_RZ: return MPFR_RNDZ;
    case DRIFT_RU: return MPFR_RNDU;
    case DRIFT_RD: return MPFR_RNDD;
    default: return MPFR_RNDN;
    }
}

/* y = X rounded to fi->p bits in direction rnd, with fi's subnormals and an exponent range
 * unbounded above (overflow is decided afterwards, on this value, as IEEE 754 defines it).
 * MPFR's exponent convention is x = 0.1b... * 2^E, one more than IEEE's 1.b... * 2^e, so
 * the smallest subnormal 2^(emin - p + 1) = 0.1b * 2^(emin - p + 2) gives the MPFR emin.
 * X is rounded under the wide default range, then brought into the narrow one with
 * mpfr_check_range and re-rounded by mpfr_subnormalize, which uses the ternary value to
 * avoid double rounding (MPFR manual, "Exceptions"). */
static void mpfr_round_sub(mpfr_t y, mpfr_srcptr X, const drift_format_info_t *fi, mpfr_rnd_t rnd)
{
    oracle_round_to(y, X, fi->p, fi->emin, INT_MAX, rnd); /* tests/oracle.h */
}

/* X (exact, nonzero, finite) rounded to fi in mode m with the lab's options. */
static double oracle_mpfr(mpfr_srcptr X, const drift_format_info_t *fi, drift_mode_t m, int flush, int sat)
{
    mpfr_t y, a, mid;
    mpfr_inits2(fi->p, y, a, (mpfr_ptr)0);
    mpfr_init2(mid, fi->p + 8);
    if (m == DRIFT_RNA) {
        /* ties away from zero: the two neighbours RZ and RA, and the exact midpoint
         * (p + 1 bits, exact at p + 8); |X| at or beyond the midpoint goes away. */
        mpfr_round_sub(y, X, fi, MPFR_RNDZ);
        mpfr_round_sub(a, X, fi, MPFR_RNDA);
        if (!mpfr_equal_p(y, a)) {
            mpfr_add(mid, y, a, MPFR_RNDN);
            mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
            if (mpfr_cmpabs(X, mid) >= 0) mpfr_set(y, a, MPFR_RNDN);
        }
    } else {
        mpfr_round_sub(y, X, fi, mpfr_rnd_of(m));
    }
    int neg = mpfr_sgn(X) < 0;
    double r;
    mpfr_set_d(mid, fi->max_finite, MPFR_RNDN);
    if (mpfr_cmpabs(y, mid) > 0) {
        /* IEEE 754-2019 7.4: nearest modes carry overflow to infinity, toward-zero to the
         * largest finite value, and the directed modes to the largest finite value on the
         * side they point away from. The lab's e4m3 has no infinity: NaN instead (OCP
         * OFP8 rev 1.0, "no saturation" conversion). Saturation: always the largest finite. */
        int to_max = sat || m == DRIFT_RZ || (m == DRIFT_RU && neg) || (m == DRIFT_RD && !neg);
        r = to_max ? fi->max_finite : (fi->has_inf ? INFINITY : NAN);
        r = neg ? -r : r;
    } else {
        r = mpfr_get_d(y, MPFR_RNDN); /* exact: y has p <= 53 bits in the double range */
        if (flush && r != 0 && fabs(r) < fi->min_normal) r = neg ? -0.0 : 0.0;
    }
    mpfr_clears(y, a, mid, (mpfr_ptr)0);
    return r;
}

/* The oracle for a double input. */
static double oracle_round(double x, drift_format_t f, drift_mode_t m, int flush, int sat)
{
    const drift_format_info_t *fi = drift_format_info(f);
    if (isnan(x)) return x;
    if (isinf(x)) {
        if (sat) return x < 0 ? -fi->max_finite : fi->max_finite;
        return fi->has_inf ? x : NAN;
    }
    if (x == 0) return x;
    mpfr_t X;
    mpfr_init2(X, 53);
    mpfr_set_d(X, x, MPFR_RNDN); /* exact */
    double r = oracle_mpfr(X, fi, m, flush, sat);
    mpfr_clear(X);
    return r;
}

/* ---- input sets ------------------------------------------------------------------- */

typedef struct {
    double *v;
    size_t n, cap;
} vec_t;

static void push(vec_t *s, double x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        cr_assert_not_null(s->v);
    }
    s->v[s->n++] = x;
}

static void push_pm(vec_t *s, double x)
{
    push(s, x);
    push(s, -x);
}

/* Spacing of f's values just below and above |x| (positive, finite |x|). */
static double spacing(double x, const drift_format_info_t *fi)
{
    int e = ilogb(fabs(x));
    if (e < fi->emin) e = fi->emin;
    return ldexp(1.0, e - fi->p + 1);
}

/* A value of f and its midpoints with both neighbours, each +-1 double ulp: every tie
 * and both sides of it. */
static void push_ties_around(vec_t *s, double v, const drift_format_info_t *fi)
{
    double up = v + spacing(v, fi) / 2;                        /* exact: p + 1 <= 53 bits */
    double dn = v - spacing(v * 0x1.fffffffffffffp-1, fi) / 2; /* below a power of two the spacing halves */
    double pts[2] = {up, dn};
    for (int i = 0; i < 2; i++) {
        if (pts[i] <= 0) continue;
        push_pm(s, pts[i]);
        push_pm(s, nextafter(pts[i], 0));
        push_pm(s, nextafter(pts[i], INFINITY));
    }
}

/* All tie cases: for the 8- and 16-bit formats every positive finite value's midpoints
 * (all of them); for tf32 and fp32, 2^14 random values of the format plus every power of
 * two in range (where the spacing changes); fp64 has no ties from double. */
static void tie_set(vec_t *s, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    if (f == DRIFT_FP64) return;
    if (fi->bits <= 16) {
        for (uint64_t b = 1; b < (1u << (fi->bits - 1)); b++) {
            double v = drift_decode(b, f);
            if (isfinite(v)) push_ties_around(s, v, fi);
        }
        return;
    }
    drift_stream_t st;
    stream(&st, (uint32_t)f, 1);
    for (int i = 0; i < 1 << 14; i++) {
        uint32_t w = drift_stream_u32(&st) & 0x7fffffffu;
        double v = drift_decode(w, f);
        if (isfinite(v) && v > 0) push_ties_around(s, v, fi);
    }
    for (int e = fi->emin - fi->p + 1; e <= fi->emax; e++) push_ties_around(s, ldexp(1.0, e), fi);
}

/* The boundary neighbourhoods: around half the smallest subnormal (the underflow tie), the
 * smallest subnormal, the smallest normal, the largest finite and the overflow threshold
 * (largest finite + half a spacing) and 2^(emax+1): steps of an eighth of the local
 * spacing, and runs of adjacent doubles. */
static void boundary_set(vec_t *s, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    double top_gap = ldexp(1.0, fi->emax - fi->p + 1);
    double b[] = {fi->min_subnormal / 2, fi->min_subnormal, fi->min_normal, fi->max_finite,
        fi->max_finite + top_gap / 2, ldexp(1.0, fi->emax) * 2};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        if (!isfinite(b[i])) continue; /* fp64's 2^1024 */
        double g = (i < 3 ? fi->min_subnormal : top_gap) / 8;
        for (int j = -40; j <= 40; j++) {
            double x = b[i] + j * g; /* exact for the small formats; fp64 rounds, harmless */
            if (x > 0 && isfinite(x)) push_pm(s, x);
        }
        double up = b[i], dn = b[i];
        for (int j = 0; j < 16; j++) {
            push_pm(s, up);
            push_pm(s, dn);
            up = nextafter(up, INFINITY);
            dn = nextafter(dn, 0);
        }
    }
    double specials[] = {0.0, INFINITY, NAN, DBL_MAX, DBL_MIN, 0x1p-1074, 1.0, 0x1p-1000, 0x1p+1000};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) push_pm(s, specials[i]);
}

/* Random doubles in f's relevant exponent range, [emin - p - 2, emax + 2], random sign and
 * 52 random fraction bits; one in four has its bits below the format's last kept bit
 * forced to a tie, a tie +- 1, or all ones, so that nearest modes see many near-ties.
 * fp64: raw random 64-bit words (every class, subnormals included). */
static double random_in_range(drift_stream_t *st, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    uint64_t w = u64(st);
    if (f == DRIFT_FP64) return bitsd(w);
    int lo = fi->emin - fi->p - 2, hi = fi->emax + 2;
    int e = lo + (int)drift_stream_below(st, (uint32_t)(hi - lo + 1));
    uint64_t frac = w & 0x000fffffffffffffull;
    uint32_t kind = drift_stream_u32(st) & 15;
    if (kind < 4) {
        int k = 53 - fi->p; /* bits below the last kept one, in the normal range */
        uint64_t half = 1ull << (k - 1), mask = (1ull << k) - 1;
        uint64_t low = kind == 0 ? half : kind == 1 ? half - 1 : kind == 2 ? half + 1 : mask;
        frac = (frac & ~mask) | low;
    }
    uint64_t sign = (w >> 63) << 63;
    return bitsd(sign | (uint64_t)(e + 1023) << 52 | frac);
}

/* ---- oracle self-checks: the oracle must itself be right on hand-derived cases ----- */

typedef struct {
    drift_format_t f;
    drift_mode_t m;
    int flush, sat;
    double x, want;
    char why[200]; /* an array, not a pointer: Criterion copies parameters into a re-executed process */
} known_t;

/* Each expected value is derived by hand in its `why` string. */
static known_t KNOWN[] = {
    {DRIFT_BF16, DRIFT_RNE, 0, 0, 0.1, 0x1.9ap-4,
        "0.1 = 0x1.999999999999ap-4; 8 bits keep 1.1001100, rest 1100... > half: up to 1.1001101 = 0x1.9a"},
    {DRIFT_FP16, DRIFT_RNE, 0, 0, 65520, INFINITY,
        "65520 = 65504 + 16 = max + half the spacing 32: tie, 0x7bff is odd, so up to 2^16: overflow"},
    {DRIFT_FP16, DRIFT_RNE, 0, 1, 65520, 65504, "same tie, saturated to the largest finite value"},
    {DRIFT_FP16, DRIFT_RZ, 0, 0, 1e6, 65504, "IEEE 754 7.4: toward zero overflows to the largest finite"},
    {DRIFT_FP16, DRIFT_RD, 0, 0, -1e6, -INFINITY, "toward -inf: a negative overflow goes to -inf"},
    {DRIFT_FP16, DRIFT_RU, 0, 0, -1e6, -65504, "toward +inf: a negative overflow stops at -max"},
    {DRIFT_TF32, DRIFT_RNA, 0, 0, 0x1.002p+0, 0x1.004p+0,
        "tf32 spacing at 1 is 2^-10 = 0x0.004: 0x1.002 is the midpoint, ties away: 0x1.004"},
    {DRIFT_TF32, DRIFT_RNE, 0, 0, 0x1.002p+0, 1.0, "same midpoint, ties to even: 1.0 (even last bit)"},
    {DRIFT_FP16, DRIFT_RNE, 0, 0, 1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-10,
        "just above the midpoint 1 + 2^-11 between 1 and 1 + 2^-10: up (single rounding)"},
    {DRIFT_FP16, DRIFT_RNE, 0, 0, 0x1p-25, 0.0, "half the smallest subnormal 2^-24: tie to even zero"},
    {DRIFT_FP16, DRIFT_RNE, 0, 0, 0x1.8p-25, 0x1p-24, "three quarters of 2^-24: nearest is 2^-24"},
    {DRIFT_FP16, DRIFT_RU, 0, 0, 0x1p-60, 0x1p-24, "toward +inf, a tiny positive becomes the smallest subnormal"},
    {DRIFT_FP16, DRIFT_RNE, 1, 0, 0x1p-20, 0.0, "flushed: 2^-20 is subnormal in fp16 (min normal 2^-14)"},
    {DRIFT_FP16, DRIFT_RNE, 1, 0, 0x1.ffcp-15, 0x1p-14,
        "flush judges the rounded result: 0x1.ffcp-15 = 2^-14 - 2^-25 is the midpoint of the largest subnormal "
        "(odd) and 2^-14 (even): rounds to 2^-14, normal, kept"},
    {DRIFT_FP8E4M3, DRIFT_RNE, 0, 0, 464, 448,
        "e4m3 spacing at 256 is 32; 464 is the midpoint of 448 (1.110b) and 480 (1.111b): even is 448"},
    {DRIFT_FP8E4M3, DRIFT_RNE, 0, 0, 465, NAN, "past the midpoint it rounds to 480 > 448: no infinity, NaN"},
    {DRIFT_FP8E4M3, DRIFT_RNE, 0, 1, 1e9, 448, "saturation clamps to 448 (OCP OFP8 max)"},
    {DRIFT_FP8E5M2, DRIFT_RNE, 0, 0, 61440, INFINITY,
        "e5m2 max 57344 = 1.75 * 2^15, spacing 8192: 61440 is the midpoint, 1.11b odd: up, overflow"},
    {DRIFT_FP8E5M2, DRIFT_RNE, 0, 0, 0x1p-17, 0.0, "half of the smallest subnormal 2^-16: tie to zero"},
    {DRIFT_FP32, DRIFT_RNE, 0, 0, 0x1.000001p+0, 1.0, "fp32 midpoint 1 + 2^-24: even is 1"},
    {DRIFT_FP32, DRIFT_RNA, 0, 0, 0x1.000001p+0, 0x1.000002p+0, "same midpoint, ties away: 1 + 2^-23"},
    {DRIFT_FP64, DRIFT_RZ, 1, 0, 0x1p-1030, 0.0, "a subnormal double flushed"},
    {DRIFT_FP64, DRIFT_RZ, 0, 1, INFINITY, DBL_MAX, "saturation: an infinite input becomes the largest finite"},
};

ParameterizedTestParameters(oracle, known_answers)
{
    return cr_make_param_array(known_t, KNOWN, sizeof KNOWN / sizeof KNOWN[0]);
}

/* The oracle, the generic rounder and drift_round (fast path where one exists) all give
 * the hand-derived answer. */
ParameterizedTest(known_t *k, oracle, known_answers)
{
    drift_round_opts_t o = {k->m, k->flush, k->sat};
    double o_r = oracle_round(k->x, k->f, k->m, k->flush, k->sat);
    double g_r = drift_round_generic(k->x, drift_format_info(k->f), &o, 0);
    double d_r = drift_round(k->x, k->f, &o, 0);
    cr_expect(same(o_r, k->want), "oracle %s %s x=%a: %a, want %a (%s)", drift_format_name(k->f), drift_mode_name(k->m),
        k->x, o_r, k->want, k->why);
    cr_expect(same(g_r, k->want), "generic %s %s x=%a: %a, want %a (%s)", drift_format_name(k->f),
        drift_mode_name(k->m), k->x, g_r, k->want, k->why);
    cr_expect(same(d_r, k->want), "drift_round %s %s x=%a: %a, want %a (%s)", drift_format_name(k->f),
        drift_mode_name(k->m), k->x, d_r, k->want, k->why);
}

/* For the IEEE formats, MPFR's own overflow handling (exponent range capped at emax + 1)
 * must agree with the rule the oracle writes out, on every overflow-boundary input. */
Test(oracle, overflow_rule_matches_mpfr)
{
    drift_format_t fs[] = {DRIFT_FP32, DRIFT_TF32, DRIFT_FP16, DRIFT_BF16, DRIFT_FP8E5M2};
    int bad = 0;
    char first[256] = "";
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
        const drift_format_info_t *fi = drift_format_info(fs[i]);
        vec_t s = {0};
        boundary_set(&s, fs[i]);
        for (size_t j = 0; j < s.n; j++) {
            double x = s.v[j];
            if (!isfinite(x) || x == 0) continue;
            for (int mi = 0; mi < N_NONSR; mi++) {
                drift_mode_t m = NONSR_MODES[mi];
                if (m == DRIFT_RNA) continue; /* no MPFR mode */
                mpfr_t X, y;
                mpfr_init2(X, 53);
                mpfr_init2(y, fi->p);
                mpfr_set_d(X, x, MPFR_RNDN);
                mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
                int t = mpfr_set(y, X, mpfr_rnd_of(m));
                mpfr_set_emin(fi->emin - fi->p + 2);
                mpfr_set_emax(fi->emax + 1);
                t = mpfr_check_range(y, t, mpfr_rnd_of(m));
                mpfr_subnormalize(y, t, mpfr_rnd_of(m));
                mpfr_set_emin(emin);
                mpfr_set_emax(emax);
                double native = mpfr_get_d(y, MPFR_RNDN);
                double rule = oracle_round(x, fs[i], m, 0, 0);
                if (!same(native, rule) && bad++ == 0)
                    snprintf(first, sizeof first, "%s %s x=%a: native %a, rule %a", fi->name, drift_mode_name(m), x,
                        native, rule);
                mpfr_clears(X, y, (mpfr_ptr)0);
            }
        }
        free(s.v);
    }
    cr_assert_eq(bad, 0, "%d disagreements; first: %s", bad, first);
}

/* ---- format constants and encodings against published tables --------------------- */

typedef struct {
    drift_format_t f;
    int p, emin, emax, has_inf;
    double max_finite, min_subnormal;
    char source[100]; /* an array: parameters are copied into another process */
} consts_t;

static consts_t CONSTS[] = {
    {DRIFT_FP64, 53, -1022, 1023, 1, DBL_MAX, 0x1p-1074, "IEEE 754-2019 table 3.5 binary64"},
    {DRIFT_FP32, 24, -126, 127, 1, 0x1.fffffep127, 0x1p-149, "IEEE 754-2019 table 3.5 binary32"},
    {DRIFT_TF32, 11, -126, 127, 1, 0x1.ffcp127, 0x1p-136, "NVIDIA A100 whitepaper: 8 exponent, 10 mantissa bits"},
    {DRIFT_FP16, 11, -14, 15, 1, 65504, 0x1p-24, "IEEE 754-2019 table 3.5 binary16"},
    {DRIFT_BF16, 8, -126, 127, 1, 0x1.fep127, 0x1p-133, "Google Cloud TPU bfloat16: 8 exponent, 7 mantissa bits"},
    {DRIFT_FP8E4M3, 4, -6, 8, 0, 448, 0x1p-9, "OCP OFP8 rev 1.0 table 1 (E4M3)"},
    {DRIFT_FP8E5M2, 3, -14, 15, 1, 57344, 0x1p-16, "OCP OFP8 rev 1.0 table 1 (E5M2)"},
};

ParameterizedTestParameters(format, constants)
{
    return cr_make_param_array(consts_t, CONSTS, sizeof CONSTS / sizeof CONSTS[0]);
}

ParameterizedTest(consts_t *c, format, constants)
{
    const drift_format_info_t *fi = drift_format_info(c->f);
    cr_assert_not_null(fi);
    cr_expect_eq(fi->p, c->p, "%s p (%s)", fi->name, c->source);
    cr_expect_eq(fi->emin, c->emin, "%s emin (%s)", fi->name, c->source);
    cr_expect_eq(fi->emax, c->emax, "%s emax (%s)", fi->name, c->source);
    cr_expect_eq(fi->has_inf, c->has_inf, "%s has_inf (%s)", fi->name, c->source);
    cr_expect(fi->max_finite == c->max_finite, "%s max %a (%s)", fi->name, fi->max_finite, c->source);
    cr_expect(fi->min_subnormal == c->min_subnormal, "%s min_sub %a (%s)", fi->name, fi->min_subnormal, c->source);
    cr_expect(fi->min_normal == ldexp(1, c->emin), "%s min_normal", fi->name);
    cr_expect(fi->unit_roundoff == ldexp(1, -c->p), "%s u = 2^-p", fi->name);
    cr_expect(fi->epsilon == ldexp(1, 1 - c->p), "%s eps = 2^(1-p)", fi->name);
    drift_format_t back;
    cr_expect_eq(drift_format_parse(&back, fi->name), 0);
    cr_expect_eq(back, c->f);
}

typedef struct {
    drift_format_t f;
    uint64_t bits;
    double value;
    char source[100]; /* an array: parameters are copied into another process */
} enc_t;

/* Published encodings. */
static enc_t ENCODINGS[] = {
    {DRIFT_FP16, 0x3c00, 1.0, "IEEE binary16: bias 15"},
    {DRIFT_FP16, 0x7bff, 65504, "binary16 largest finite"},
    {DRIFT_FP16, 0x0400, 0x1p-14, "binary16 smallest normal"},
    {DRIFT_FP16, 0x0001, 0x1p-24, "binary16 smallest subnormal"},
    {DRIFT_FP16, 0x03ff, 0x1.ff8p-15, "binary16 largest subnormal"},
    {DRIFT_FP16, 0x7c00, INFINITY, "binary16 +inf"},
    {DRIFT_FP16, 0xfc00, -INFINITY, "binary16 -inf"},
    {DRIFT_FP16, 0xc000, -2.0, "binary16 -2"},
    {DRIFT_FP16, 0x3555, 0x1.554p-2, "binary16 nearest to 1/3 (Wikipedia half-precision examples)"},
    {DRIFT_BF16, 0x3f80, 1.0, "bfloat16 = top half of binary32: 1.0f is 0x3f800000"},
    {DRIFT_BF16, 0x3dcd, 0x1.9ap-4, "bf16(0.1): 0 01111011 1001101, rounded up"},
    {DRIFT_BF16, 0x7f7f, 0x1.fep127, "bfloat16 largest finite"},
    {DRIFT_BF16, 0x0001, 0x1p-133, "bfloat16 smallest subnormal"},
    {DRIFT_BF16, 0xff80, -INFINITY, "bfloat16 -inf"},
    {DRIFT_FP8E4M3, 0x7e, 448, "OFP8 E4M3 max normal S.1111.110"},
    {DRIFT_FP8E4M3, 0x08, 0x1p-6, "OFP8 E4M3 min normal S.0001.000"},
    {DRIFT_FP8E4M3, 0x07, 0x1.cp-7, "OFP8 E4M3 max subnormal S.0000.111 = 0.875 * 2^-6"},
    {DRIFT_FP8E4M3, 0x01, 0x1p-9, "OFP8 E4M3 min subnormal S.0000.001"},
    {DRIFT_FP8E4M3, 0x78, 256, "OFP8 E4M3 S.1111.000 is a number (256), not infinity"},
    {DRIFT_FP8E4M3, 0x38, 1.0, "E4M3 bias 7"},
    {DRIFT_FP8E4M3, 0xfe, -448, "negative max"},
    {DRIFT_FP8E5M2, 0x7b, 57344, "OFP8 E5M2 max normal S.11110.11"},
    {DRIFT_FP8E5M2, 0x04, 0x1p-14, "OFP8 E5M2 min normal S.00001.00"},
    {DRIFT_FP8E5M2, 0x03, 0x1.8p-15, "OFP8 E5M2 max subnormal S.00000.11 = 0.75 * 2^-14"},
    {DRIFT_FP8E5M2, 0x01, 0x1p-16, "OFP8 E5M2 min subnormal S.00000.01"},
    {DRIFT_FP8E5M2, 0x7c, INFINITY, "OFP8 E5M2 infinity S.11111.00"},
    {DRIFT_FP8E5M2, 0x3c, 1.0, "E5M2 bias 15"},
    {DRIFT_FP32, 0x3f800000, 1.0, "IEEE binary32 1.0"},
    {DRIFT_FP32, 0x7f7fffff, 0x1.fffffep127, "binary32 largest finite"},
    {DRIFT_FP32, 0x00000001, 0x1p-149, "binary32 smallest subnormal"},
    {DRIFT_TF32, 0x3f802000, 0x1.004p+0, "tf32 keeps the top 10 fraction bits of the fp32 word"},
    {DRIFT_TF32, 0x7f7fe000, 0x1.ffcp127, "tf32 largest finite"},
    {DRIFT_FP64, 0x3ff0000000000000ull, 1.0, "IEEE binary64 1.0"},
};

ParameterizedTestParameters(encoding, published)
{
    return cr_make_param_array(enc_t, ENCODINGS, sizeof ENCODINGS / sizeof ENCODINGS[0]);
}

ParameterizedTest(enc_t *c, encoding, published)
{
    double v = drift_decode(c->bits, c->f);
    cr_expect(same(v, c->value), "%s decode(0x%llx) = %a, want %a (%s)", drift_format_name(c->f),
        (unsigned long long)c->bits, v, c->value, c->source);
    uint64_t b = drift_encode(c->value, c->f);
    cr_expect_eq(b, c->bits, "%s encode(%a) = 0x%llx, want 0x%llx (%s)", drift_format_name(c->f), c->value,
        (unsigned long long)b, (unsigned long long)c->bits, c->source);
}

Test(encoding, nan_patterns)
{
    /* OFP8 rev 1.0 table 1: E4M3 NaN only S.1111.111; E5M2 NaN S.11111.{01,10,11};
     * binary16 NaN: exponent all ones, fraction nonzero. */
    cr_expect(isnan(drift_decode(0x7f, DRIFT_FP8E4M3)) && isnan(drift_decode(0xff, DRIFT_FP8E4M3)));
    cr_expect(isnan(drift_decode(0x7d, DRIFT_FP8E5M2)) && isnan(drift_decode(0x7e, DRIFT_FP8E5M2)) &&
              isnan(drift_decode(0x7f, DRIFT_FP8E5M2)));
    cr_expect(isnan(drift_decode(0x7c01, DRIFT_FP16)) && isnan(drift_decode(0x7e00, DRIFT_FP16)));
    cr_expect(isnan(drift_decode(0x7fc0, DRIFT_BF16)));
    cr_expect_eq(drift_encode(NAN, DRIFT_FP8E4M3) & 0x7f, 0x7f, "e4m3 has one NaN pattern per sign");
}

/* Every bit pattern of the 8- and 16-bit formats: decode, re-encode, same pattern (a NaN
 * pattern may come back as another NaN pattern). The decoded value is also checked
 * against an independent construction with MPFR from the fields: (-1)^s * 2^(E - bias) *
 * 1.M for normal fields, 2^(1 - bias) * 0.M for a zero exponent field. */
typedef struct {
    drift_format_t f;
    int ebits, mbits, bias;
} layout_t;

static layout_t LAYOUTS[] = {
    {DRIFT_FP16, 5, 10, 15},   /* IEEE 754 binary16 */
    {DRIFT_BF16, 8, 7, 127},   /* bfloat16 */
    {DRIFT_FP8E4M3, 4, 3, 7},  /* OFP8 E4M3 */
    {DRIFT_FP8E5M2, 5, 2, 15}, /* OFP8 E5M2 */
};

ParameterizedTestParameters(encoding, every_pattern)
{
    return cr_make_param_array(layout_t, LAYOUTS, sizeof LAYOUTS / sizeof LAYOUTS[0]);
}

ParameterizedTest(layout_t *L, encoding, every_pattern)
{
    int nbits = 1 + L->ebits + L->mbits;
    uint64_t emask = (1u << L->ebits) - 1, mmask = (1u << L->mbits) - 1;
    int bad = 0, nans = 0;
    char first[200] = "";
    mpfr_t v;
    mpfr_init2(v, 64);
    for (uint64_t b = 0; b < (1u << nbits); b++) {
        int s = (int)(b >> (nbits - 1));
        uint64_t E = (b >> L->mbits) & emask, M = b & mmask;
        double want;
        int is_nan = L->f == DRIFT_FP8E4M3 ? (E == emask && M == mmask) : (E == emask && M != 0);
        if (is_nan)
            want = NAN;
        else if (E == emask && L->f != DRIFT_FP8E4M3)
            want = INFINITY;
        else {
            if (E == 0)
                mpfr_set_ui_2exp(v, (unsigned long)M, 1 - L->bias - L->mbits, MPFR_RNDN);
            else
                mpfr_set_ui_2exp(v, (unsigned long)(M | (mmask + 1)), (long)E - L->bias - L->mbits, MPFR_RNDN);
            want = mpfr_get_d(v, MPFR_RNDN);
        }
        if (s) want = -want;
        double got = drift_decode(b, L->f);
        uint64_t back = drift_encode(got, L->f);
        int ok = same(got, want) && (is_nan ? isnan(drift_decode(back, L->f)) : back == b);
        nans += is_nan;
        if (!ok && bad++ == 0)
            snprintf(first, sizeof first, "0x%llx: decode %a want %a, encode 0x%llx", (unsigned long long)b, got, want,
                (unsigned long long)back);
        /* classification agrees with the fields */
        drift_class_t c = drift_classify(got, L->f);
        drift_class_t wc = is_nan                                  ? DRIFT_CLASS_NAN
                           : (E == emask && L->f != DRIFT_FP8E4M3) ? DRIFT_CLASS_INF
                           : E == 0                                ? (M == 0 ? DRIFT_CLASS_ZERO : DRIFT_CLASS_SUBNORMAL)
                                                                   : DRIFT_CLASS_NORMAL;
        if (c != wc && bad++ == 0)
            snprintf(first, sizeof first, "0x%llx: class %d want %d", (unsigned long long)b, c, wc);
    }
    mpfr_clear(v);
    cr_assert_eq(bad, 0, "%s: %d failures; first %s", drift_format_name(L->f), bad, first);
    /* NaN counts from the specs: e4m3 2 (one per sign); e5m2 2*3; binary16 2*1023; bf16 2*127 */
    int want_nans = L->f == DRIFT_FP8E4M3 ? 2 : 2 * (int)mmask;
    cr_assert_eq(nans, want_nans);
}

/* fp32 and tf32 words: decode agrees with C's own float reading of the word (the
 * platform's IEEE binary32), and encode gives the word back; tf32 reads only the top 19
 * bits (sign, 8 exponent, 10 fraction: NVIDIA's definition), so its low 13 bits vanish. */
Test(encoding, fp32_tf32_words)
{
    drift_stream_t st;
    stream(&st, 900, 0);
    int bad = 0;
    char first[200] = "";
    for (int i = 0; i < 1 << 20; i++) {
        uint32_t w = i < 64 ? (uint32_t)(0x7f7fffc0u + (uint32_t)i) : drift_stream_u32(&st);
        if (i == 64) w = 0x80000000u;
        if (i == 65) w = 0x7f800000u;
        if (i == 66) w = 0x00000001u;
        float fl;
        memcpy(&fl, &w, sizeof fl);
        uint32_t wt = w & ~0x1fffu;
        float ft;
        memcpy(&ft, &wt, sizeof ft);
        double d32 = drift_decode(w, DRIFT_FP32), dt = drift_decode(w, DRIFT_TF32);
        int ok = same(d32, (double)fl) && same(dt, (double)ft);
        if (!isnan(fl)) ok = ok && drift_encode(d32, DRIFT_FP32) == w;
        if (!isnan(ft)) ok = ok && drift_encode(dt, DRIFT_TF32) == wt;
        if (!ok && bad++ == 0) snprintf(first, sizeof first, "word 0x%08x: fp32 %a tf32 %a", w, d32, dt);
    }
    cr_assert_eq(bad, 0, "%d failures; first %s", bad, first);
}

/* ---- the generic rounder (and drift_round) against the oracle ---------------------- */

typedef struct {
    drift_format_t f;
    drift_mode_t m;
} fm_t;

static fm_t ALL_FM[DRIFT_NFORMATS * N_NONSR];

static size_t fill_all_fm(void)
{
    size_t n = 0;
    for (int f = 0; f < DRIFT_NFORMATS; f++)
        for (int i = 0; i < N_NONSR; i++) ALL_FM[n++] = (fm_t){(drift_format_t)f, NONSR_MODES[i]};
    return n;
}

typedef struct {
    long checked, bad;
    char first[320];
} tally_t;

/* One input through the oracle, the generic rounder and drift_round, with the option set
 * (flush, sat). */
static void check_one(tally_t *t, double x, drift_format_t f, drift_mode_t m, int flush, int sat)
{
    drift_round_opts_t o = {m, flush, sat};
    double want = oracle_round(x, f, m, flush, sat);
    double g = drift_round_generic(x, drift_format_info(f), &o, 0);
    double d = drift_round(x, f, &o, 0);
    t->checked++;
    if ((!same(g, want) || !same(d, want)) && t->bad++ == 0)
        snprintf(t->first, sizeof t->first, "%s %s flush=%d sat=%d x=%a: generic %a, drift_round %a, oracle %a",
            drift_format_name(f), drift_mode_name(m), flush, sat, x, g, d, want);
}

/* all four option combinations for each value, or one (cycling) when `cycle` is set */
static void check_set(tally_t *t, const vec_t *s, drift_format_t f, drift_mode_t m, int cycle)
{
    for (size_t i = 0; i < s->n; i++)
        for (int opt = cycle ? (int)(i % 4) : 0; opt < (cycle ? (int)(i % 4) + 1 : 4); opt++)
            check_one(t, s->v[i], f, m, opt & 1, opt >> 1);
}

ParameterizedTestParameters(generic, ties_and_boundaries)
{
    size_t n = fill_all_fm();
    return cr_make_param_array(fm_t, ALL_FM, n);
}

/* Every tie case (each with one of the four option combinations, in turn) and every
 * boundary neighbourhood (with all four, since that is where the options act). */
ParameterizedTest(fm_t *c, generic, ties_and_boundaries)
{
    vec_t ties = {0}, bounds = {0};
    tie_set(&ties, c->f);
    boundary_set(&bounds, c->f);
    tally_t t = {0};
    check_set(&t, &ties, c->f, c->m, 1);
    check_set(&t, &bounds, c->f, c->m, 0);
    free(ties.v);
    free(bounds.v);
    cr_assert_eq(t.bad, 0, "%ld of %ld wrong; first: %s", t.bad, t.checked, t.first);
}

ParameterizedTestParameters(generic, random)
{
    size_t n = fill_all_fm();
    return cr_make_param_array(fm_t, ALL_FM, n);
}

/* 10^6 random doubles per format and mode with the default options, and another 2.5 * 10^5
 * for each of flush, saturate, and both (the options only matter near the range ends,
 * which the boundary test covers exhaustively; these catch interactions). */
#define N_RANDOM 1000000
#define N_RANDOM_OPTS 250000
ParameterizedTest(fm_t *c, generic, random)
{
    drift_stream_t st;
    stream(&st, 100 + (uint32_t)c->f, (uint32_t)c->m);
    tally_t t = {0};
    for (long i = 0; i < N_RANDOM; i++) check_one(&t, random_in_range(&st, c->f), c->f, c->m, 0, 0);
    for (long i = 0; i < 3 * N_RANDOM_OPTS; i++) {
        int opt = 1 + (int)(i % 3);
        check_one(&t, random_in_range(&st, c->f), c->f, c->m, opt & 1, opt >> 1);
    }
    cr_assert_eq(t.bad, 0, "%ld of %ld wrong; first: %s", t.bad, t.checked, t.first);
}

/* Second oracles for nearest-even: C's double -> float conversion (IEEE binary32 hardware,
 * correctly rounded with subnormals under the default rounding mode), and _Float16 where
 * GCC provides it (its double -> _Float16 conversion rounds once, straight from double). */
Test(generic, fp32_fp16_rne_against_hardware)
{
    drift_stream_t st;
    stream(&st, 200, 0);
    long bad = 0;
    char first[200] = "";
    for (long i = 0; i < 1000000; i++) {
        double x = random_in_range(&st, DRIFT_FP32);
        float fl = (float)x;
        if (!same(drift_rne(x, DRIFT_FP32), (double)fl) && bad++ == 0)
            snprintf(first, sizeof first, "fp32 x=%a: %a, hardware %a", x, drift_rne(x, DRIFT_FP32), (double)fl);
#ifdef __FLT16_MANT_DIG__
        double y = random_in_range(&st, DRIFT_FP16);
        _Float16 h = (_Float16)y;
        if (!same(drift_rne(y, DRIFT_FP16), (double)h) && bad++ == 0)
            snprintf(first, sizeof first, "fp16 x=%a: %a, _Float16 %a", y, drift_rne(y, DRIFT_FP16), (double)h);
#endif
    }
    cr_assert_eq(bad, 0, "%ld wrong; first %s", bad, first);
}

/* ---- fast paths == generic ------------------------------------------------------- */

typedef double (*fast_fn)(double, const drift_round_opts_t *, uint32_t);

typedef struct {
    drift_format_t f;
    drift_mode_t m;
} fast_case_t;

static fast_case_t FAST_CASES[3 * DRIFT_NMODES];

static fast_fn fast_of(drift_format_t f)
{
    return f == DRIFT_FP16 ? drift_round_fp16_fast : f == DRIFT_BF16 ? drift_round_bf16_fast : drift_round_tf32_fast;
}

ParameterizedTestParameters(fast, equals_generic)
{
    drift_format_t fs[3] = {DRIFT_FP16, DRIFT_BF16, DRIFT_TF32};
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        for (int m = 0; m < DRIFT_NMODES; m++) FAST_CASES[n++] = (fast_case_t){fs[i], (drift_mode_t)m};
    return cr_make_param_array(fast_case_t, FAST_CASES, n);
}

/* Same sets as above (all four option combinations) plus 4 * 10^6 random inputs (one
 * option combination each, in turn), every mode including sr (with a random sr word per
 * input: the fast path must make the same decision for every word). The random inputs mix
 * the format's range with raw random doubles (every class). */
ParameterizedTest(fast_case_t *c, fast, equals_generic)
{
    const drift_format_info_t *fi = drift_format_info(c->f);
    fast_fn fast = fast_of(c->f);
    vec_t s = {0};
    tie_set(&s, c->f);
    boundary_set(&s, c->f);
    drift_stream_t st;
    stream(&st, 300 + (uint32_t)c->f, (uint32_t)c->m);
    size_t n_sets = s.n;
    for (long i = 0; i < 4000000; i++) push(&s, (i & 7) ? random_in_range(&st, c->f) : bitsd(u64(&st)));
    long bad = 0;
    char first[256] = "";
    for (size_t i = 0; i < s.n; i++) {
        uint32_t sr = drift_stream_u32(&st);
        if (i < 64) sr = i < 32 ? (uint32_t)i : 0xffffffffu - (uint32_t)i; /* extreme words */
        int o0 = i < n_sets ? 0 : (int)(i % 4), o1 = i < n_sets ? 4 : o0 + 1;
        for (int opt = o0; opt < o1; opt++) {
            drift_round_opts_t o = {c->m, opt & 1, opt >> 1};
            double g = drift_round_generic(s.v[i], fi, &o, sr), q = fast(s.v[i], &o, sr);
            if (!same(g, q) && bad++ == 0)
                snprintf(first, sizeof first, "%s %s opt=%d x=%a sr=0x%08x: fast %a, generic %a", fi->name,
                    drift_mode_name(c->m), opt, s.v[i], sr, q, g);
        }
    }
    /* sr: words at the decision boundary. Rounding goes up iff sr < frac * 2^32, so the
     * words floor(frac * 2^32) - 1, floor(frac * 2^32) and + 1 straddle it (a random word
     * lands there with probability ~2^-31). frac from the RZ neighbour and the spacing. */
    if (c->m == DRIFT_SR) {
        drift_round_opts_t rz = {DRIFT_RZ, 0, 0};
        for (size_t i = 0; i < s.n; i++) {
            double x = s.v[i];
            if (!isfinite(x) || x == 0 || fabs(x) > fi->max_finite) continue;
            double lo = drift_round_generic(x, fi, &rz, 0);
            double frac = (fabs(x) - fabs(lo)) / spacing(x, fi); /* exact */
            double b = floor(ldexp(frac, 32));                   /* exact: frac has < 53 bits */
            for (int d = -1; d <= 1; d++) {
                double w = b + d;
                if (w < 0 || w > 4294967295.0) continue;
                drift_round_opts_t o = {DRIFT_SR, (int)(i & 1), 0};
                double g = drift_round_generic(x, fi, &o, (uint32_t)w), q = fast(x, &o, (uint32_t)w);
                if (!same(g, q) && bad++ == 0)
                    snprintf(first, sizeof first, "%s sr x=%a word=0x%08x: fast %a, generic %a", fi->name, x,
                        (uint32_t)w, q, g);
            }
        }
    }
    /* a NULL options pointer means nearest-even with the defaults */
    for (size_t i = 0; i < s.n && c->m == DRIFT_RNE; i++)
        if (!same(fast(s.v[i], NULL, 0), drift_round_generic(s.v[i], fi, NULL, 0)) && bad++ == 0)
            snprintf(first, sizeof first, "NULL opts x=%a", s.v[i]);
    free(s.v);
    cr_assert_eq(bad, 0, "%ld wrong; first: %s", bad, first);
}

/* ---- stochastic rounding ----------------------------------------------------------- */

/* The documented decision, on hand-derived fractions: up iff sr_bits * 2^-32 < frac. */
typedef struct {
    drift_format_t f;
    double x;
    uint32_t sr;
    double want;
    char why[200]; /* an array, not a pointer: Criterion copies parameters into a re-executed process */
} sr_known_t;

static sr_known_t SR_KNOWN[] = {
    {DRIFT_FP16, 1 + 0x1p-12, 0x3fffffffu, 1 + 0x1p-10, "frac = 2^-12 / 2^-10 = 1/4; 0x3fffffff/2^32 < 1/4: up"},
    {DRIFT_FP16, 1 + 0x1p-12, 0x40000000u, 1.0, "sr/2^32 = 1/4 is not < 1/4: down"},
    {DRIFT_FP16, 1 + 0x1p-40, 3, 1 + 0x1p-10, "frac = 2^-30: up iff sr < 2^32 * 2^-30 = 4"},
    {DRIFT_FP16, 1 + 0x1p-40, 4, 1.0, "sr = 4: 4 * 2^-32 = 2^-30 is not < frac"},
    {DRIFT_FP16, 1 + 0x1p-42 + 0x1p-50, 1, 1 + 0x1p-10, "frac = 2^-32 + 2^-40: up iff sr < 1 + 2^-8, so sr in {0, 1}"},
    {DRIFT_FP16, 1 + 0x1p-42 + 0x1p-50, 2, 1.0, "sr = 2 > 1 + 2^-8: down"},
    {DRIFT_FP16, -(1 + 0x1p-12), 0, -(1 + 0x1p-10), "negative: away from zero is down, sr = 0 < 1/4"},
    {DRIFT_FP16, 1.0, 0, 1.0, "exact values never move"},
    {DRIFT_BF16, 1 + 0x1p-9, 0x3fffffffu, 1 + 0x1p-7, "bf16 spacing 2^-7 at 1: frac = 2^-9 / 2^-7 = 1/4; up"},
    {DRIFT_BF16, 1 + 0x1p-9, 0x7fffffffu, 1.0, "0x7fffffff/2^32 ~ 1/2 is not < 1/4: down"},
    {DRIFT_TF32, 0x1p-137, 0x7fffffffu, 0x1p-136, "tf32 subnormal: frac = 2^-137 / 2^-136 = 1/2; up"},
    {DRIFT_TF32, 0x1p-137, 0x80000000u, 0.0, "sr/2^32 = 1/2 is not < 1/2: down to zero"},
    {DRIFT_FP8E4M3, 0x1.1p0, 0x7fffffffu, 0x1.2p0, "e4m3 spacing 1/8 at 1, frac = (1/16)/(1/8) = 1/2: up"},
};

ParameterizedTestParameters(sr, decision)
{
    return cr_make_param_array(sr_known_t, SR_KNOWN, sizeof SR_KNOWN / sizeof SR_KNOWN[0]);
}

ParameterizedTest(sr_known_t *k, sr, decision)
{
    drift_round_opts_t o = {DRIFT_SR, 0, 0};
    double d = drift_round(k->x, k->f, &o, k->sr);
    double g = drift_round_generic(k->x, drift_format_info(k->f), &o, k->sr);
    cr_expect(same(d, k->want), "drift_round %s x=%a sr=0x%x: %a want %a (%s)", drift_format_name(k->f), k->x, k->sr, d,
        k->want, k->why);
    cr_expect(same(g, k->want), "generic %s x=%a sr=0x%x: %a want %a (%s)", drift_format_name(k->f), k->x, k->sr, g,
        k->want, k->why);
}

/* Each sr result is one of the two neighbours of x (the oracle's RZ and away-from-zero
 * roundings, inside the finite range), for random x and random words. */
Test(sr, result_is_a_neighbour)
{
    drift_format_t fs[] = {DRIFT_FP32, DRIFT_TF32, DRIFT_FP16, DRIFT_BF16, DRIFT_FP8E4M3, DRIFT_FP8E5M2};
    drift_stream_t st;
    stream(&st, 400, 0);
    long bad = 0;
    char first[200] = "";
    drift_round_opts_t o = {DRIFT_SR, 0, 0};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
        const drift_format_info_t *fi = drift_format_info(fs[i]);
        for (int j = 0; j < 100000; j++) {
            double x = random_in_range(&st, fs[i]);
            if (fabs(x) > fi->max_finite) continue; /* beyond it the upper neighbour does not exist */
            double r = drift_round(x, fs[i], &o, drift_stream_u32(&st));
            mpfr_t X, y;
            mpfr_init2(X, 53);
            mpfr_init2(y, fi->p);
            mpfr_set_d(X, x, MPFR_RNDN);
            mpfr_round_sub(y, X, fi, MPFR_RNDZ);
            double lo = mpfr_get_d(y, MPFR_RNDN);
            mpfr_round_sub(y, X, fi, MPFR_RNDA);
            double hi = mpfr_get_d(y, MPFR_RNDN);
            mpfr_clears(X, y, (mpfr_ptr)0);
            if (!same(r, lo) && !same(r, hi) && bad++ == 0)
                snprintf(first, sizeof first, "%s x=%a: %a not in {%a, %a}", fi->name, x, r, lo, hi);
        }
    }
    cr_assert_eq(bad, 0, "%ld wrong; first %s", bad, first);
}

/* The mean of many sr roundings approaches x.
 *
 * For x strictly between neighbours lo < hi (same sign, |lo| < |hi|), each rounding is hi
 * with probability q = ceil(frac * 2^32) / 2^32 (frac = |x - lo| / |hi - lo|; the
 * documented contract, so |q - frac| < 2^-32), independently for independent words. With
 * K ups out of N, Hoeffding's inequality gives P(|K/N - q| >= eps) <= 2 exp(-2 N eps^2).
 * With M = 36 cases (6 formats x 6 fractions) and a union bound, the whole test fails
 * falsely with probability <= 2 M exp(-2 N eps^2); asking for 1e-10 (< 1e-9) gives
 * eps = sqrt(ln(2 M / 1e-10) / (2 N)) = sqrt(27.30 / 2^19) = 0.00722 for N = 2^18.
 * (The probability is over the choice of the Philox seed: the stream is a fixed
 * function of it, so the test is deterministic for the committed seed.)
 * Then |mean - x| <= (eps + 2^-32) * |hi - lo|, which is what is asserted: a biased
 * rounder (always down, nearest, off by one in the comparison's scale) fails it, since
 * every fraction below is at least 0.01 from 0 and 1. */
#define SR_N (1 << 18)
#define SR_M 36
Test(sr, mean_approaches_x)
{
    const double eps = sqrt(log(2.0 * SR_M / 1e-10) / (2.0 * SR_N));
    cr_assert(eps > 0.0072 && eps < 0.0073, "eps as derived in the comment: %g", eps);
    drift_format_t fs[6] = {DRIFT_FP32, DRIFT_TF32, DRIFT_FP16, DRIFT_BF16, DRIFT_FP8E4M3, DRIFT_FP8E5M2};
    /* fractions of the spacing; bases in the normal and the subnormal range, both signs */
    double fracs[6] = {0.5, 0.25, 0.1, 0.01, 0.99, 0.7};
    int cases = 0;
    drift_round_opts_t o = {DRIFT_SR, 0, 0};
    for (int i = 0; i < 6; i++) {
        const drift_format_info_t *fi = drift_format_info(fs[i]);
        for (int j = 0; j < 6; j++) {
            cases++;
            /* lo: a value of the format: 1.5 (normal), or 3 * min_subnormal, negative half the time */
            double lo = (j % 2) ? 3 * fi->min_subnormal : 1.5;
            double gap = (j % 2) ? fi->min_subnormal : ldexp(1.0, 1 - fi->p); /* spacing at lo */
            double sign = (j % 3 == 0) ? -1.0 : 1.0;
            double x = sign * (lo + fracs[j] * gap); /* not exact in double: frac is recomputed */
            double lo_s = sign * lo, hi_s = sign * (lo + gap);
            double frac = (fabs(x) - lo) / gap; /* exact: |x| - lo and a power-of-two divide */
            drift_stream_t st;
            stream(&st, 500 + (uint32_t)i, (uint32_t)j);
            long ups = 0, others = 0;
            for (int n = 0; n < SR_N; n++) {
                double r = drift_round(x, fs[i], &o, drift_stream_u32(&st));
                if (same(r, hi_s))
                    ups++;
                else if (!same(r, lo_s))
                    others++;
            }
            cr_assert_eq(others, 0, "%s x=%a: results outside {%a, %a}", fi->name, x, lo_s, hi_s);
            double mean = lo_s + (double)ups / SR_N * (hi_s - lo_s);
            double tol = (eps + 0x1p-32) * gap;
            cr_assert(fabs(mean - x) <= tol, "%s x=%a frac=%g: mean %a, |mean - x| = %g > %g", fi->name, x, frac, mean,
                fabs(mean - x), tol);
        }
    }
    cr_assert_eq(cases, SR_M);
}

/* ---- exact-once arithmetic against MPFR ------------------------------------------- */

typedef enum { OP_ADD, OP_MUL, OP_FMA } op_t;

static const char *op_name(op_t op) { return op == OP_ADD ? "add" : op == OP_MUL ? "mul" : "fma"; }

static int exp_of(double v) { return v == 0 ? -2200 : ilogb(v); }

/* Exponent of the lowest bit a double can carry: its last place, never below 2^-1074;
 * a zero carries none (a large value keeps it out of the minimum). */
static int lsb_of(double v)
{
    if (v == 0) return 4000;
    int e = ilogb(v) - 52;
    return e < -1074 ? -1074 : e;
}

/* The exact result in MPFR, with a precision big enough to hold it (checked: the ternary
 * value must be 0), then the oracle's single rounding. The exact zero's sign follows
 * IEEE 754 6.3 because MPFR's does, given the mode. */
static double oracle_op(op_t op, double a, double b, double c, drift_format_t f, drift_mode_t m)
{
    const drift_format_info_t *fi = drift_format_info(f);
    double hw = op == OP_ADD ? a + b : op == OP_MUL ? a * b : fma(a, b, c);
    if (!isfinite(a) || !isfinite(b) || (op == OP_FMA && !isfinite(c))) /* IEEE specials: exact */
        return isnan(hw) ? hw : oracle_round(hw, f, m, 0, 0);
    mpfr_t A, B, C, X;
    mpfr_inits2(53, A, B, C, (mpfr_ptr)0);
    mpfr_set_d(A, a, MPFR_RNDN);
    mpfr_set_d(B, b, MPFR_RNDN);
    mpfr_set_d(C, c, MPFR_RNDN);
    /* the exact result's bits lie between its top exponent (+2 for carries) and the
     * lowest bit of any term; that many bits hold it exactly */
    int top, low;
    if (op == OP_ADD) {
        top = (exp_of(a) > exp_of(b) ? exp_of(a) : exp_of(b)) + 2;
        low = lsb_of(a) < lsb_of(b) ? lsb_of(a) : lsb_of(b);
    } else {
        top = exp_of(a) + exp_of(b) + 3;
        low = lsb_of(a) + lsb_of(b);
        if (op == OP_FMA) {
            if (exp_of(c) + 2 > top) top = exp_of(c) + 2;
            if (lsb_of(c) < low) low = lsb_of(c);
        }
    }
    long prec = (long)top - low + 2;
    mpfr_init2(X, prec > 106 ? prec : 106);
    mpfr_rnd_t rnd = m == DRIFT_RD ? MPFR_RNDD : MPFR_RNDN; /* only the sign of an exact zero depends on it */
    int t = op == OP_ADD ? mpfr_add(X, A, B, rnd) : op == OP_MUL ? mpfr_mul(X, A, B, rnd) : mpfr_fma(X, A, B, C, rnd);
    cr_assert_eq(t, 0, "exact %s not exact at precision %ld", op_name(op), (long)mpfr_get_prec(X));
    double r = mpfr_zero_p(X) ? mpfr_get_d(X, MPFR_RNDN) : oracle_mpfr(X, fi, m, 0, 0);
    mpfr_clears(A, B, C, X, (mpfr_ptr)0);
    return r;
}

static double lib_op(op_t op, double a, double b, double c, drift_format_t f, drift_mode_t m)
{
    return op == OP_ADD ? drift_add(a, b, f, m) : op == OP_MUL ? drift_mul(a, b, f, m) : drift_fma(a, b, c, f, m);
}

/* Random operands: half are values of the target format (the common use: inputs already in
 * the format), the rest arbitrary doubles around the target's range, with rare extremes
 * that take the library's special paths (tiny products, products beyond DBL_MAX). */
static double op_operand(drift_stream_t *st, drift_format_t f)
{
    uint32_t k = drift_stream_u32(st) % 16;
    const drift_format_info_t *fi = drift_format_info(f);
    if (k == 0)
        return ldexp((double)(drift_stream_u32(st) | 1), -560 - (int)drift_stream_below(st, 60)) *
               ((drift_stream_u32(st) & 1) ? -1 : 1); /* tiny: products below 2^-968 */
    if (k == 1)
        return ldexp(1.0 + drift_stream_uniform(st), 500 + (int)drift_stream_below(st, 23)) *
               ((drift_stream_u32(st) & 1) ? -1 : 1); /* huge: products near 2^1024 */
    if (k == 2) return bitsd(u64(st) & 0x7fefffffffffffffull) * ((drift_stream_u32(st) & 1) ? -1 : 1);
    double x = random_in_range(st, f);
    if (!isfinite(x)) x = fi->max_finite;
    return k < 9 ? drift_rne(x, f) : x;
}

typedef struct {
    op_t op;
    drift_format_t f;
    drift_mode_t m;
} opcase_t;

static opcase_t OP_CASES[3 * 5 * N_NONSR];

ParameterizedTestParameters(arith, against_mpfr)
{
    drift_format_t fs[5] = {DRIFT_FP64, DRIFT_FP32, DRIFT_FP16, DRIFT_BF16, DRIFT_TF32};
    size_t n = 0;
    for (int op = 0; op < 3; op++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < N_NONSR; j++) OP_CASES[n++] = (opcase_t){(op_t)op, fs[i], NONSR_MODES[j]};
    return cr_make_param_array(opcase_t, OP_CASES, n);
}

/* 20000 random operand sets per (op, format, mode), plus cancellations (b = -a*(1+tiny)):
 * the library's result equals MPFR's exact result rounded once. */
ParameterizedTest(opcase_t *c, arith, against_mpfr)
{
    drift_stream_t st;
    stream(&st, 600 + 16 * (uint32_t)c->op + (uint32_t)c->f, (uint32_t)c->m);
    long bad = 0;
    char first[320] = "";
    for (int i = 0; i < 20000; i++) {
        double a = op_operand(&st, c->f), b = op_operand(&st, c->f), cc = op_operand(&st, c->f);
        if (i % 8 == 1) b = -a * (1 + 0x1p-30);         /* add: heavy cancellation */
        if (i % 8 == 2 && c->op == OP_FMA) cc = -a * b; /* fma: the product's rounding error is all that is left */
        if (i % 8 == 3 && c->op == OP_FMA) cc = -(a * b) * (1 + 0x1p-40);
        double want = oracle_op(c->op, a, b, cc, c->f, c->m);
        double got = lib_op(c->op, a, b, cc, c->f, c->m);
        if (!same(got, want) && bad++ == 0)
            snprintf(first, sizeof first, "%s %s %s a=%a b=%a c=%a: %a, oracle %a", op_name(c->op),
                drift_format_name(c->f), drift_mode_name(c->m), a, b, cc, got, want);
    }
    cr_assert_eq(bad, 0, "%ld wrong; first: %s", bad, first);
}

/* Double-rounding traps, each with a hand-derived answer (`why`), checked against the
 * library and the MPFR oracle in every mode (the oracle for the modes not derived). */
typedef struct {
    op_t op;
    drift_format_t f;
    drift_mode_t m;
    double a, b, c, want;
    char why[200];   /* an array, not a pointer: Criterion copies parameters into a re-executed process */
    int naive_wrong; /* 1: computing in double and then rounding gives another answer */
} trap_t;

static trap_t TRAPS[] = {
    {OP_ADD, DRIFT_FP16, DRIFT_RNE, 1.0, 0x1p-11 + 0x1p-63, 0, 1 + 0x1p-10,
        "b = 2^-11 + 2^-63 is a double (53 bits); exact 1 + 2^-11 + 2^-63 is above the fp16 midpoint; the double "
        "sum drops 2^-63 (64 bits needed) and is the tie 1 + 2^-11, which goes to 1",
        1},
    {OP_ADD, DRIFT_FP16, DRIFT_RNA, 1.0, 0x1p-11 - 0x1p-64, 0, 1.0,
        "exact just below the midpoint: 1; the double sum rounds up to the midpoint, which RNA would take up", 1},
    {OP_ADD, DRIFT_BF16, DRIFT_RNE, 1.0, 0x1p-8 + 0x1p-60, 0, 1 + 0x1p-7, "bf16 spacing 2^-7: same trap", 1},
    {OP_ADD, DRIFT_TF32, DRIFT_RNE, 1.0, 0x1p-11 + 0x1p-63, 0, 1 + 0x1p-10, "tf32 spacing 2^-10: same trap", 1},
    {OP_ADD, DRIFT_FP32, DRIFT_RNE, 1.0, 0x1p-24 + 0x1p-76, 0, 1 + 0x1p-23, "fp32 spacing 2^-23: same trap", 1},
    {OP_ADD, DRIFT_FP32, DRIFT_RU, 1.0, 0x1p-80, 0, 1 + 0x1p-23, "RU of anything above 1: the next fp32", 1},
    {OP_ADD, DRIFT_FP64, DRIFT_RU, 1.0, 0x1p-80, 0, 1 + 0x1p-52, "RU in fp64 sees the lost 2^-80", 1},
    {OP_ADD, DRIFT_FP64, DRIFT_RD, 1.0, -1.0, 0, -0.0, "IEEE 754 6.3: an exact zero sum is -0 under RD", 1},
    {OP_ADD, DRIFT_FP64, DRIFT_RNE, 1.0, -1.0, 0, 0.0, "and +0 in the other modes", 0},
    {OP_ADD, DRIFT_FP32, DRIFT_RZ, DBL_MAX, DBL_MAX, 0, 0x1.fffffep127,
        "exact 2^1025 - 2^971 overflows fp32; toward zero gives the largest fp32 (IEEE 754 7.4)", 1},
    {OP_ADD, DRIFT_FP64, DRIFT_RZ, DBL_MAX, DBL_MAX, 0, DBL_MAX, "and the largest double for fp64", 1},
    {OP_ADD, DRIFT_FP64, DRIFT_RNE, DBL_MAX, DBL_MAX, 0, INFINITY, "nearest: infinity", 0},
    {OP_MUL, DRIFT_FP64, DRIFT_RU, 0x1p-600, 0x1p-600, 0, 0x1p-1074,
        "exact 2^-1200 > 0: RU gives the smallest subnormal double (the double product is 0)", 1},
    {OP_MUL, DRIFT_FP32, DRIFT_RU, 0x1p-600, 0x1p-600, 0, 0x1p-149, "and fp32's smallest subnormal", 1},
    {OP_MUL, DRIFT_FP64, DRIFT_RNE, -0.0, 1.0, 0, -0.0, "the sign of a zero product is the xor of signs", 0},
    {OP_MUL, DRIFT_FP64, DRIFT_RZ, 0x1p600, 0x1p600, 0, DBL_MAX, "overflow toward zero: the largest double", 1},
    {OP_MUL, DRIFT_FP64, DRIFT_RD, 0x1.8p-537, 0x1p-537, 0, 0x1p-1074,
        "exact 1.5 * 2^-1074 on the subnormal grid 2^-1074: down to 2^-1074 (the double product says 2^-1073)", 1},
    {OP_MUL, DRIFT_FP64, DRIFT_RNA, 0x1.8p-537, 0x1p-537, 0, 0x1p-1073, "the same tie, away from zero: 2^-1073", 0},
    {OP_MUL, DRIFT_FP64, DRIFT_RNE, 0x1.8p-537, 0x1p-537, 0, 0x1p-1073, "ties to even: 2 * 2^-1074", 0},
    {OP_FMA, DRIFT_FP16, DRIFT_RNE, 1 + 0x1p-30, 1 + 0x1p-30, 0x1p-11 - 0x1p-29, 1 + 0x1p-10,
        "exact 1 + 2^-29 + 2^-60 + 2^-11 - 2^-29 = 1 + 2^-11 + 2^-60: above the midpoint; a double fma gives the "
        "tie 1 + 2^-11, which goes to 1",
        1},
    {OP_FMA, DRIFT_FP64, DRIFT_RNE, 0x1p512, 0x1p512, -DBL_MAX, 0x1p971,
        "a*b = 2^1024 overflows a double, but 2^1024 - (2^1024 - 2^971) = 2^971 (a hardware fma agrees)", 0},
    {OP_FMA, DRIFT_FP32, DRIFT_RZ, 0x1p512, 0x1p512, -DBL_MAX, 0x1.fffffep127, "2^971 overflows fp32: RZ gives max", 0},
    {OP_FMA, DRIFT_FP32, DRIFT_RU, 0x1p-600, 0x1p-600, 0.0, 0x1p-149, "tiny exact product, c = 0, RU", 1},
    {OP_FMA, DRIFT_FP64, DRIFT_RD, 1.0, 1.0, -1.0, -0.0, "exact zero under RD: -0", 0},
};

ParameterizedTestParameters(arith, traps) { return cr_make_param_array(trap_t, TRAPS, sizeof TRAPS / sizeof TRAPS[0]); }

ParameterizedTest(trap_t *t, arith, traps)
{

    double got = lib_op(t->op, t->a, t->b, t->c, t->f, t->m);
    double orc = oracle_op(t->op, t->a, t->b, t->c, t->f, t->m);
    cr_expect(same(orc, t->want), "oracle %s %s %s: %a, hand %a (%s)", op_name(t->op), drift_format_name(t->f),
        drift_mode_name(t->m), orc, t->want, t->why);
    cr_expect(same(got, orc), "%s %s %s a=%a b=%a c=%a: %a, oracle %a (%s)", op_name(t->op), drift_format_name(t->f),
        drift_mode_name(t->m), t->a, t->b, t->c, got, orc, t->why);
    if (t->naive_wrong) { /* the trap is real: the double operation then one rounding misses */
        drift_round_opts_t o = {t->m, 0, 0};
        double hw = t->op == OP_ADD ? t->a + t->b : t->op == OP_MUL ? t->a * t->b : fma(t->a, t->b, t->c);
        double naive = t->f == DRIFT_FP64 ? hw : drift_round(hw, t->f, &o, 0);
        cr_expect(!same(naive, t->want), "not a trap: naive %a equals %a (%s)", naive, t->want, t->why);
    }
    for (int i = 0; i < N_NONSR; i++) {
        drift_mode_t m = NONSR_MODES[i];
        double g = lib_op(t->op, t->a, t->b, t->c, t->f, m), w = oracle_op(t->op, t->a, t->b, t->c, t->f, m);
        cr_expect(same(g, w), "%s %s %s a=%a b=%a c=%a: %a, oracle %a", op_name(t->op), drift_format_name(t->f),
            drift_mode_name(m), t->a, t->b, t->c, g, w);
    }
}

/* A product whose double rounding lands exactly on a target midpoint. With u = 2^(1-p) the
 * spacing at 1, the midpoint of 1 + j*u and 1 + (j+1)*u is 1 + (2j+1) * 2^-p. Take
 * a * b = N * 2^-54 with N = 2^54 + (2j+1) * 2^(54-p) + 1: N has 55 bits, the double
 * product keeps 53 of them (its last place is 4 in units of N) and drops the final +1,
 * landing exactly on the midpoint, where nearest-even picks the even neighbour 1 + j*u
 * for even j; the exact product is just above the midpoint, so the right answer is
 * 1 + (j+1)*u. a, b: a factorisation of N with both factors below 2^53, found by trial
 * division over a few even j. */
Test(arith, mul_double_rounding_trap)
{
    drift_format_t fs[] = {DRIFT_FP32, DRIFT_TF32, DRIFT_FP16, DRIFT_BF16};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
        int p = drift_format_info(fs[i])->p;
        int found = 0;
        for (uint64_t j = 0; j < 64 && !found; j += 2) {
            uint64_t N = (1ull << 54) + (2 * j + 1) * (1ull << (54 - p)) + 1;
            for (uint64_t d = 3; d < (1u << 20) && !found; d += 2) {
                if (N % d || N / d >= (1ull << 53)) continue;
                double a = (double)d, b = ldexp((double)(N / d), -54); /* both exact: < 2^53 */
                double u = ldexp(1, 1 - p), mid = 1 + (2 * j + 1) * ldexp(1, -p);
                double want = 1 + (double)(j + 1) * u, naive = 1 + (double)j * u;
                cr_assert(fma(a, b, -(a * b)) != 0, "the product must be inexact in double");
                cr_assert(a * b == mid, "the double product must be the midpoint");
                cr_expect(same(drift_rne(a * b, fs[i]), naive), "the naive double-then-round goes to even");
                cr_expect(same(drift_mul(a, b, fs[i], DRIFT_RNE), want), "%s mul %a * %a: %a, want %a",
                    drift_format_name(fs[i]), a, b, drift_mul(a, b, fs[i], DRIFT_RNE), want);
                cr_expect(same(oracle_op(OP_MUL, a, b, 0, fs[i], DRIFT_RNE), want), "oracle agrees");
                found = 1;
            }
        }
        cr_expect(found, "no small factorisation found for %s", drift_format_name(fs[i]));
    }
}

/* ---- worked examples: bf16(0.1), fp16 65520, tf32 rna, double rounding ----------- */

Test(acceptance, examples)
{
    /* bf16(0.1) = 0x1.9ap-4, bits 0x3dcd (derivation in KNOWN above: 0 01111011 1001101) */
    cr_expect(same(drift_rne(0.1, DRIFT_BF16), 0x1.9ap-4));
    cr_expect_eq(drift_encode(0.1, DRIFT_BF16), 0x3dcd);
    /* fp16(65520) = inf; saturated 65504 */
    cr_expect(same(drift_rne(65520, DRIFT_FP16), INFINITY));
    cr_expect(same(drift_round(65520, DRIFT_FP16, &(drift_round_opts_t){DRIFT_RNE, 0, 1}, 0), 65504));
    /* tf32 rna(0x1.002p+0) = 0x1.004p+0 */
    cr_expect(same(drift_round(0x1.002p+0, DRIFT_TF32, &(drift_round_opts_t){DRIFT_RNA, 0, 0}, 0), 0x1.004p+0));
    /* single rounding: 1 + 2^-11 + 2^-40 -> fp16 1 + 2^-10 directly; via fp32 the 2^-40 is
     * lost (below half of fp32's 2^-23 spacing), leaving the tie 1 + 2^-11, which goes to 1 */
    double x = 1 + 0x1p-11 + 0x1p-40;
    cr_expect(same(drift_rne(x, DRIFT_FP16), 1 + 0x1p-10));
    cr_expect(same(drift_rne(drift_rne(x, DRIFT_FP32), DRIFT_FP16), 1.0), "the trap is real");
    cr_expect(same(drift_round_fp16_fast(x, NULL, 0), 1 + 0x1p-10));
}

Test(format, names_and_helpers)
{
    drift_mode_t m;
    cr_expect_eq(drift_mode_parse(&m, "rna"), 0);
    cr_expect_eq(m, DRIFT_RNA);
    cr_expect_neq(drift_mode_parse(&m, "nearest"), 0);
    drift_format_t f;
    cr_expect_neq(drift_format_parse(&f, "fp8"), 0);
    cr_expect_str_eq(drift_class_name(DRIFT_CLASS_SUBNORMAL), "subnormal");
    /* spacing: fp16 at 1 is 2^-10; below 2^-14 the subnormal spacing 2^-24 (binary16 table) */
    cr_expect(drift_ulp(1.0, DRIFT_FP16) == 0x1p-10);
    cr_expect(drift_ulp(0x1p-20, DRIFT_FP16) == 0x1p-24);
    cr_expect(drift_ulp(448, DRIFT_FP8E4M3) == 32);
    cr_expect_eq(drift_classify(0x1p-24, DRIFT_FP16), DRIFT_CLASS_SUBNORMAL);
    cr_expect_eq(drift_classify(0x1p-14, DRIFT_FP16), DRIFT_CLASS_NORMAL);
}

/* ---- drift_fma's error-free path: 53-bit inputs, narrow results ------------------ */

static opcase_t FMA53_CASES[5 * N_NONSR];

ParameterizedTestParameters(arith, fma_53bit_near_midpoints)
{
    drift_format_t fs[5] = {DRIFT_FP32, DRIFT_TF32, DRIFT_FP16, DRIFT_BF16, DRIFT_FP8E5M2};
    size_t n = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < N_NONSR; j++) FMA53_CASES[n++] = (opcase_t){OP_FMA, fs[i], NONSR_MODES[j]};
    return cr_make_param_array(opcase_t, FMA53_CASES, n);
}

/* drift_fma with full 53-bit operands (a product that is not exact in double) and a narrow
 * result takes the error-free path (TwoProduct, TwoSum, rounding to odd). The hard cases are
 * the exact results next to a midpoint or a boundary of the format, where the product's
 * low part decides: c = (a midpoint or a value of f next to a*b) - fl(a*b), so that
 * a*b + c = that point + the product's rounding error (and a few more bits of c's own
 * rounding); plus plain random triples. Expected: MPFR's exact fma rounded once (oracle_op). */
ParameterizedTest(opcase_t *c, arith, fma_53bit_near_midpoints)
{
    drift_stream_t st;
    stream(&st, 700 + (uint32_t)c->f, (uint32_t)c->m);
    long bad = 0;
    char first[320] = "";
    const drift_format_info_t *fi = drift_format_info(c->f);
    for (int i = 0; i < 40000; i++) {
        /* a, b: 53-bit significands, exponents keeping a*b inside the format's range */
        int span = fi->emax - fi->emin;
        int ea = fi->emin / 2 + (int)drift_stream_below(&st, (uint32_t)(span / 2 > 1 ? span / 2 : 1));
        double a = ldexp(1 + drift_stream_uniform(&st), ea / 2) * ((drift_stream_u32(&st) & 1) ? -1 : 1);
        double b = ldexp(1 + drift_stream_uniform(&st), ea - ea / 2) * ((drift_stream_u32(&st) & 1) ? -1 : 1);
        double ph = a * b, cc;
        switch (i % 4) {
        case 0: { /* next to the midpoint above or below fl(a*b)'s rounding to f */
            double q = drift_rne(ph, c->f), u = drift_ulp(q, c->f);
            cc = (q + ((i / 4) % 2 ? u : -u) / 2) - ph;
            break;
        }
        case 1: /* next to a value of f */ cc = drift_rne(ph, c->f) - ph; break;
        case 2: /* a random c of a similar size */ cc = ph * (drift_stream_uniform(&st) * 4 - 2); break;
        default: /* a c far below or far above the product */
            cc = ldexp(ph, (int)drift_stream_below(&st, 120) - 60) * (drift_stream_uniform(&st) + 0.5);
            break;
        }
        double want = oracle_op(OP_FMA, a, b, cc, c->f, c->m);
        double got = drift_fma(a, b, cc, c->f, c->m);
        if (!same(got, want) && bad++ == 0)
            snprintf(first, sizeof first, "fma %s %s a=%a b=%a c=%a: %a, oracle %a", drift_format_name(c->f),
                drift_mode_name(c->m), a, b, cc, got, want);
    }
    cr_assert_eq(bad, 0, "%ld wrong; first: %s", bad, first);
}
