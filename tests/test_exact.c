/* test_exact.c — the exact witnesses against witnesses of their own.
 *
 * Oracles, written here and independent of lib/core/exact_*.c:
 *   - exact sums and dot products: sequential mpfr_add (and mpfr_mul at 106 bits) at a
 *     precision where every step is exact (2200 bits for doubles, 4300 for products:
 *     multiples of 2^-1074 below 2^1088, of 2^-2148 below 2^2112); the sign of an exact
 *     zero then follows IEEE 754-2019 6.3 step by step, as MPFR's additions do;
 *   - rounding to a lab format: oracle_round scales x so that the format's quantum at x
 *     becomes 1 and rounds to an integer with MPFR's integer rounding functions
 *     (mpfr_rint RNDN = ties-to-even, mpfr_round = ties-away, mpfr_trunc, mpfr_ceil,
 *     mpfr_floor); overflow written out from IEEE 754-2019 7.4, e4m3 from the OCP 8-bit
 *     Floating Point Specification (OFP8) rev 1.0 (no infinity: overflow is NaN);
 *   - exp, log-sum-exp, softmax: the plain formula evaluated by MPFR at 3000 bits and then
 *     rounded by oracle_round (a 3000-bit value cannot sit close enough to a midpoint to
 *     be rounded the wrong way: these results are irrational, and the hardest double
 *     cases for exp need about 160 bits, Lefèvre & Muller 2001);
 *   - known values with their sources next to them.
 *
 * Every comparison is bit for bit (so +0 and -0 differ); NaNs compare equal to NaNs.
 * Loops count mismatches and assert once, printing the first mismatch. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drift.h"
#include "exact.h"
#include "format.h"
#include "philox.h"
#include "support.h"

/* ---- helpers ---------------------------------------------------------------------- */


static const drift_mode_t MODES[] = {DRIFT_RNE, DRIFT_RZ, DRIFT_RNA, DRIFT_RU, DRIFT_RD};
#define NMODES 5

static void stream(drift_stream_t *s, uint32_t point, uint32_t trial)
{
    drift_stream_init(s, 20240611u, drift_fnv1a32("test_exact"), point, trial);
}


/* Any finite double, log-uniform over the whole range (subnormals included). */
static double wide(drift_stream_t *s, int kmin, int kmax)
{
    int k = kmin + (int)drift_stream_below(s, (uint32_t)(kmax - kmin + 1));
    double m = (double)(u64(s) >> 11); /* 53 random bits */
    double x = ldexp(m, k - 52);
    return (drift_stream_u32(s) & 1) ? -x : x;
}

static double fp32_uniform(drift_stream_t *s) { return (float)(2.0 * drift_stream_uniform(s) - 1.0); }

/* fp32 values of any binade 2^-149 ... 2^127 with 24 random bits (subnormals rounded). */
static double fp32_wide(drift_stream_t *s)
{
    int k = -149 + (int)drift_stream_below(s, 277);
    double m = (double)(drift_stream_u32(s) >> 8);
    double x = (float)ldexp(m, k - 23);
    return (drift_stream_u32(s) & 1) ? -x : x;
}

static void shuffle(double *x, double *y, size_t n, drift_stream_t *s)
{
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = drift_stream_below(s, (uint32_t)(i + 1));
        double t = x[i];
        x[i] = x[j];
        x[j] = t;
        if (y) {
            t = y[i];
            y[i] = y[j];
            y[j] = t;
        }
    }
}

/* ---- the rounding oracle ---------------------------------------------------------- */

static double overflow_value(const drift_format_info_t *fi, drift_mode_t m, int neg)
{
    /* IEEE 754-2019 7.4: the nearest modes carry to infinity, toward-zero to the largest
     * finite number, and the directed modes only toward their own infinity. */
    int to_max = m == DRIFT_RZ || (m == DRIFT_RU && neg) || (m == DRIFT_RD && !neg);
    double r = to_max ? fi->max_finite : (fi->has_inf ? INFINITY : NAN);
    return neg ? -r : r;
}

static double oracle_round(mpfr_srcptr x, drift_format_t f, drift_mode_t m)
{
    const drift_format_info_t *fi = drift_format_info(f);
    if (mpfr_nan_p(x)) return NAN;
    int neg = mpfr_signbit(x) != 0;
    if (mpfr_inf_p(x)) {
        double r = fi->has_inf ? INFINITY : NAN;
        return neg ? -r : r;
    }
    if (mpfr_zero_p(x)) return neg ? -0.0 : 0.0;
    long E = (long)mpfr_get_exp(x) - 1; /* 2^E <= |x| < 2^(E+1) */
    long qexp = (E > fi->emin ? E : fi->emin) - fi->p + 1;
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(x) + 2);  /* room for the integer rounded up */
    mpfr_mul_2si(t, x, -qexp, MPFR_RNDN); /* exact: a power of two */
    switch (m) {
    case DRIFT_RNE: mpfr_rint(t, t, MPFR_RNDN); break;
    case DRIFT_RNA: mpfr_round(t, t); break;
    case DRIFT_RZ: mpfr_trunc(t, t); break;
    case DRIFT_RU: mpfr_ceil(t, t); break;
    case DRIFT_RD: mpfr_floor(t, t); break;
    default: cr_assert_fail("mode");
    }
    mpfr_mul_2si(t, t, qexp, MPFR_RNDN);
    double r;
    mpfr_t mx;
    mpfr_init2(mx, 53);
    mpfr_set_d(mx, fi->max_finite, MPFR_RNDN);
    if (mpfr_cmpabs(t, mx) > 0)
        r = overflow_value(fi, m, neg);
    else
        r = mpfr_get_d(t, MPFR_RNDN); /* exact: at most p bits, inside the range */
    mpfr_clears(t, mx, (mpfr_ptr)0);
    return r;
}

/* ---- exact sums by sequential exact MPFR additions --------------------------------- */

#define SUM_PREC 2200
#define DOT_PREC 4300

/* rnd only decides the sign of exact zeros (every addition is exact at this precision). */
static void oracle_sum(mpfr_ptr s, const double *x, size_t n, mpfr_rnd_t rnd)
{
    mpfr_t t;
    mpfr_init2(t, 53);
    mpfr_set_zero(s, 1);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t, x[i], MPFR_RNDN);
        if (i == 0)
            mpfr_set(s, t, rnd);
        else
            cr_assert_eq(mpfr_add(s, s, t, rnd), 0, "oracle_sum: inexact addition");
    }
    mpfr_clear(t);
}

static void oracle_dot(mpfr_ptr s, const double *a, const double *b, size_t n, mpfr_rnd_t rnd)
{
    mpfr_t ta, tb, p;
    mpfr_inits2(53, ta, tb, (mpfr_ptr)0);
    mpfr_init2(p, 106);
    mpfr_set_zero(s, 1);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(ta, a[i], MPFR_RNDN);
        mpfr_set_d(tb, b[i], MPFR_RNDN);
        mpfr_mul(p, ta, tb, MPFR_RNDN); /* exact: 53 + 53 bits */
        if (i == 0)
            mpfr_set(s, p, rnd);
        else
            cr_assert_eq(mpfr_add(s, s, p, rnd), 0, "oracle_dot: inexact addition");
    }
    mpfr_clears(ta, tb, p, (mpfr_ptr)0);
}

/* Compares every way the library computes the sum (fast, MPFR, the "exact sum so far"
 * object) with the oracle, in every format and mode. dot: b != NULL. */
static void check_all(const char *name, const double *a, const double *b, size_t n)
{
    mpfr_t sn, sd;
    mpfr_prec_t prec = b ? DOT_PREC : SUM_PREC;
    mpfr_inits2(prec, sn, sd, (mpfr_ptr)0);
    if (b)
        oracle_dot(sn, a, b, n, MPFR_RNDN);
    else
        oracle_sum(sn, a, n, MPFR_RNDN);
    if (mpfr_zero_p(sn)) { /* the sign of an exact zero depends on the mode */
        if (b)
            oracle_dot(sd, a, b, n, MPFR_RNDD);
        else
            oracle_sum(sd, a, n, MPFR_RNDD);
    } else {
        mpfr_set(sd, sn, MPFR_RNDN);
    }
    drift_xacc_t acc;
    drift_xacc_init(&acc);
    for (size_t i = 0; i < n; i++) {
        if (b)
            drift_xacc_add_prod(&acc, a[i], b[i]);
        else
            drift_xacc_add(&acc, a[i]);
    }
    int sgn_want = mpfr_nan_p(sn) ? 0 : mpfr_sgn(sn);
    cr_expect_eq(drift_xacc_sign(&acc), sgn_want, "%s: xacc sign %d, want %d", name, drift_xacc_sign(&acc), sgn_want);
    int bad = 0;
    char first[512] = "";
    for (int f = 0; f < DRIFT_NFORMATS; f++)
        for (int k = 0; k < NMODES; k++) {
            drift_mode_t m = MODES[k];
            double want = oracle_round(m == DRIFT_RD ? sd : sn, (drift_format_t)f, m);
            double fast, viampfr;
            int rc1 = b ? drift_exact_dot(&fast, a, b, n, (drift_format_t)f, m)
                        : drift_exact_sum(&fast, a, n, (drift_format_t)f, m);
            int rc2 = b ? drift_exact_dot_mpfr(&viampfr, a, b, n, (drift_format_t)f, m)
                        : drift_exact_sum_mpfr(&viampfr, a, n, (drift_format_t)f, m);
            double step = drift_xacc_round(&acc, (drift_format_t)f, m);
            if (rc1 || rc2 || !same(fast, want) || !same(viampfr, want) || !same(step, want)) {
                if (!bad++)
                    snprintf(first, sizeof first, "%s %s: want %a, fast %a (rc %d), mpfr %a (rc %d), xacc %a",
                        drift_format_name((drift_format_t)f), drift_mode_name(m), want, fast, rc1, viampfr, rc2, step);
            }
        }
    mpfr_clears(sn, sd, (mpfr_ptr)0);
    cr_assert_eq(bad, 0, "%s (n = %zu): %d of %d format/mode results wrong; first: %s", name, n, bad,
        DRIFT_NFORMATS * NMODES, first);
}

/* ---- sums: small adversarial lists --------------------------------------------------- */

typedef struct {
    char name[48];
    size_t n;
    double v[6];
} list_case_t;

ParameterizedTestParameters(exact_sum, lists)
{
    static list_case_t cases[] = {
        {"massive cancellation", 3, {1e308, 1, -1e308}},
        {"overflow then back", 3, {DBL_MAX, DBL_MAX, -DBL_MAX}},
        {"overflow", 2, {DBL_MAX, DBL_MAX}},
        /* DBL_MAX + 2^970 is the midpoint to 2^1024; DBL_MAX is odd, so RNE overflows */
        {"overflow at the tie", 2, {DBL_MAX, 0x1p970}},
        {"just below the overflow tie", 3, {DBL_MAX, 0x1p970, -0x1p-1074}},
        {"fp64 tie to even, down", 2, {1, 0x1p-53}},
        {"fp64 tie to even, up", 2, {0x1.0000000000001p0, 0x1p-53}},
        {"above the tie by 2^-1074", 3, {1, 0x1p-53, 0x1p-1074}},
        {"below the tie by 2^-1074", 3, {1, 0x1p-53, -0x1p-1074}},
        {"fp32 tie", 2, {1, 0x1p-24}},
        {"fp16/tf32 tie", 2, {1, 0x1p-11}},
        {"bf16 tie", 2, {1, 0x1p-8}},
        {"e4m3 tie", 2, {1, 0x1p-4}},
        {"e5m2 tie", 2, {-1, -0x1p-3}},
        {"fp16 tie in pieces", 5, {1, 0x1p-12, 1e300, 0x1p-12, -1e300}},
        /* 464 is halfway between 448 (last mantissa bit 0) and 480: RNE keeps 448; a hair
         * above it rounds to 480 > 448, which e4m3 cannot hold: NaN (OFP8 rev 1.0) */
        {"e4m3 overflow tie", 2, {448, 16}},
        {"e4m3 overflow", 3, {448, 16, 0x1p-30}},
        {"fp16 overflow threshold", 2, {65504, 16}},
        {"fp16 above overflow threshold", 3, {65504, 16, 0x1p-40}},
        {"subnormal sum", 3, {0x1p-1074, 0x1p-1074, 0x1.8p-1073}},
        {"normal minus normal = subnormal", 2, {0x1p-1022, -0x0.fffffffffffffp-1022}},
        {"half of fp16's smallest subnormal", 1, {0x1p-25}},
        {"just above half fp16 subnormal", 2, {0x1p-25, 0x1p-80}},
        {"fp8e4m3 subnormal tie", 2, {0x1p-9, 0x1p-10}},
        {"cancels to zero", 2, {1, -1}},
        {"-0 + -0", 2, {-0.0, -0.0}},
        {"+0 + +0", 2, {0.0, 0.0}},
        {"+0 + -0", 2, {0.0, -0.0}},
        {"-0 alone", 1, {-0.0}},
        {"empty", 0, {0}},
        {"-0 then cancellation", 3, {-0.0, 3, -3}},
        {"+inf", 3, {INFINITY, 1, -1e308}},
        {"-inf", 3, {-INFINITY, DBL_MAX, DBL_MAX}},
        {"inf - inf", 2, {INFINITY, -INFINITY}},
        {"nan", 3, {1, NAN, 2}},
    };
    return cr_make_param_array(list_case_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(list_case_t *c, exact_sum, lists) { check_all(c->name, c->v, NULL, c->n); }

/* ---- sums: generated vectors --------------------------------------------------------- */

enum {
    G_RANGE,         /* log-uniform over all doubles, subnormals included */
    G_SUBNORMAL,     /* subnormals only */
    G_PAIRS,         /* x and -x, shuffled: exactly zero */
    G_PAIRS_TINY,    /* the same plus 2^-1074 */
    G_PAIRS_TIE,     /* the same plus 1 and 2^-53: an fp64 tie */
    G_PAIRS_TIE16,   /* the same plus 1 and 2^-11 + 2^-60: just above an fp16 tie */
    G_NORMAL,        /* normal(0, 1) */
    G_FP32,          /* fp32-valued uniform [-1, 1) */
    G_CANCEL,        /* large values cancelling, small remainders */
    G_SAME_MANTISSA, /* many copies of the largest mantissa: the slots' capacity */
    G_HUGE_CANCEL,   /* DBL_MAX k times, -DBL_MAX k times, then ones */
    G_SPECIALS,      /* random doubles with an inf inside */
    G_SPREAD,        /* x and -RN24(x) in runs of 1024 spanning 0 to 160 binades, near
                         2^1000 and 2^-920 too, some with zeros: the SIMD extraction path
                         at every level count; the sum is the 29 low bits of every x */
};

typedef struct {
    char name[40];
    int gen;
    size_t n;
} gen_case_t;

static void generate(int gen, double *x, size_t n, uint32_t point)
{
    drift_stream_t s;
    stream(&s, point, (uint32_t)gen);
    size_t h = n / 2;
    switch (gen) {
    case G_RANGE:
        for (size_t i = 0; i < n; i++) x[i] = wide(&s, -1074, 1023);
        break;
    case G_SUBNORMAL:
        for (size_t i = 0; i < n; i++) x[i] = wide(&s, -1074, -1023);
        break;
    case G_PAIRS:
    case G_PAIRS_TINY:
    case G_PAIRS_TIE:
    case G_PAIRS_TIE16:
        for (size_t i = 0; i < h; i++) {
            x[2 * i] = wide(&s, -1074, 1023);
            x[2 * i + 1] = -x[2 * i];
        }
        if (gen == G_PAIRS_TINY) x[n - 1] = 0x1p-1074;
        if (gen == G_PAIRS_TIE) {
            x[n - 2] = 1;
            x[n - 1] = 0x1p-53;
        }
        if (gen == G_PAIRS_TIE16) {
            x[n - 2] = 1;
            x[n - 1] = 0x1p-11 + 0x1p-60;
        }
        shuffle(x, NULL, n, &s);
        break;
    case G_NORMAL:
        for (size_t i = 0; i < n; i++) x[i] = drift_stream_normal(&s);
        break;
    case G_FP32:
        for (size_t i = 0; i < n; i++) x[i] = fp32_uniform(&s);
        break;
    case G_CANCEL:
        for (size_t i = 0; i + 2 < n; i += 3) {
            double big = wide(&s, 200, 300);
            x[i] = big;
            x[i + 1] = -big;
            x[i + 2] = wide(&s, -60, 0);
        }
        for (size_t i = n - n % 3; i < n; i++) x[i] = 0;
        shuffle(x, NULL, n, &s);
        break;
    case G_SAME_MANTISSA:
        for (size_t i = 0; i < n; i++) x[i] = i < n - 3 ? 0x1.fffffffffffffp0 : -0x1.fffffffffffffp-60;
        break;
    case G_HUGE_CANCEL: { /* k copies of each sign, then ones: the sum is n - 2k */
        size_t k = (n - 1) / 2;
        for (size_t i = 0; i < n; i++) x[i] = i < k ? DBL_MAX : i < 2 * k ? -DBL_MAX : 1;
        break;
    }
    case G_SPECIALS:
        for (size_t i = 0; i < n; i++) x[i] = wide(&s, -100, 100);
        x[n / 3] = -INFINITY;
        break;
    case G_SPREAD: {
        static const int spreads[] = {0, 20, 50, 90, 130, 160};
        static const int shifts[] = {0, 0, 990, -920, 0, 0, 40, -60};
        for (size_t i = 0; i + 1 < n; i += 2) {
            size_t g = i / 1024;
            int spread = spreads[g % 6];
            int k = shifts[g % 8] - (spread ? (int)drift_stream_below(&s, (uint32_t)spread) : 0);
            double v = ldexp(drift_stream_normal(&s), k), c = v * 0x1.0000002p29; /* Veltkamp: RN24 */
            x[i] = v;
            x[i + 1] = -(c - (c - v));
            if (g % 5 == 2 && i % 14 == 0) x[i] = x[i + 1] = (i & 16) ? -0.0 : 0.0; /* runs with zeros */
        }
        if (n % 2) x[n - 1] = 0.75;
        break;
    }
    default: cr_assert_fail("generator");
    }
}

ParameterizedTestParameters(exact_sum, generated)
{
    static gen_case_t cases[] = {
        {"range", G_RANGE, 4096},
        {"range, bulk", G_RANGE, 100000},
        {"subnormals", G_SUBNORMAL, 3000},
        {"+x -x pairs", G_PAIRS, 200000},
        {"+x -x pairs (short path)", G_PAIRS, 100},
        {"pairs + 2^-1074", G_PAIRS_TINY, 100001},
        {"pairs + fp64 tie", G_PAIRS_TIE, 100002},
        {"pairs + above fp16 tie", G_PAIRS_TIE16, 50002},
        {"normal 10^6", G_NORMAL, 1000000},
        {"fp32 uniform 10^6", G_FP32, 1000000},
        {"cancellation", G_CANCEL, 300000},
        {"same mantissa", G_SAME_MANTISSA, 5003},
        {"DBL_MAX cancels", G_HUGE_CANCEL, 40000},
        {"-inf inside", G_SPECIALS, 3000},
        {"residuals, spread runs", G_SPREAD, 60007},
    };
    return cr_make_param_array(gen_case_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(gen_case_t *c, exact_sum, generated, .timeout = 120)
{
    double *x = malloc(c->n * sizeof *x);
    cr_assert(x);
    generate(c->gen, x, c->n, 1);
    check_all(c->name, x, NULL, c->n);
    free(x);
}

/* ---- dot products -------------------------------------------------------------------- */

typedef struct {
    char name[48];
    size_t n;
    double a[4], b[4];
} dot_list_t;

ParameterizedTestParameters(exact_dot, lists)
{
    static dot_list_t cases[] = {
        {"products past DBL_MAX cancel", 3, {1e200, 1e200, 1}, {1e200, -1e200, 1}},
        {"product past DBL_MAX", 1, {1e200}, {1e200}},
        {"product below the subnormals", 1, {1e-200}, {-1e-200}},
        {"tiny products add up", 3, {0x1.8p-540, 0x1p-540, 0x1p-537}, {0x1p-540, 0x1.4p-540, 0x1p-537}},
        {"subnormal times large", 2, {0x1p-1074, 3}, {0x1p60, 0x1p-1070}},
        {"general doubles", 3, {0.1, 0.2, -0.3}, {0.7, 0.9, 1.1}},
        {"TwoProd parts cancel", 2, {0x1.0000000000001p0, -0x1.0000000000001p0},
            {0x1.0000000000001p0, 0x1.0000000000001p0}},
        {"fp64 tie from products", 2, {1, 0x1p-27}, {1, 0x1p-26}},
        {"fp16 tie from products", 2, {0.75, 0x1p-6}, {1, 0x1p-6}},
        {"-0 times 1", 1, {-0.0}, {1}},
        {"-0 and +0 products", 2, {-0.0, 0.0}, {1, 1}},
        {"two -0 products", 2, {0.0, -0.0}, {-1, 1}},
        {"inf times 0", 2, {INFINITY, 1}, {0, 1}},
        {"inf times 1", 2, {INFINITY, 1}, {1, 1}},
        {"inf - inf", 2, {INFINITY, INFINITY}, {1, -1}},
        {"nan", 2, {NAN, 1}, {1, 1}},
        {"empty", 0, {0}, {0}},
    };
    return cr_make_param_array(dot_list_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(dot_list_t *c, exact_dot, lists) { check_all(c->name, c->a, c->b, c->n); }

enum {
    D_FP32,       /* fp32-valued uniform [-1, 1): the fast path, several blocks */
    D_FP32_WIDE,  /* fp32 values of every binade: products 2^-298 ... 2^256 */
    D_MIXED,      /* fp32 values with a general double every 997 pairs */
    D_GENERAL,    /* doubles 2^-700 ... 2^700: products that overflow or underflow */
    D_CANCEL,     /* (a, b) and (a, -b), shuffled: exactly zero */
    D_TIE,        /* cancelling pairs plus 1*1 and 2^-6 * 2^-5: an fp16 tie */
    D_ZEROS,      /* half the products are signed zeros */
    D_TINY_SHORT, /* short inputs with products below 2^-976 */
    D_25BIT,      /* 25 significant bits: one more than the fast path may take */
    D_NORMAL,     /* normal(0, 1) doubles: TwoProduct in the bulk loop */
    D_RESIDUAL,   /* (a, b) and (-RN(a*b), 1): the exact dot is the sum of the rounding
                     errors, so an error in any low part shows in the result */
    D_RESIDUAL32, /* the same with fp32 values and RN32(a*b): all on the fp32 fast path */
    D_SPREAD32,   /* fp32 residual pairs in runs of 512 whose products span 0 to 160 binades,
                     near 2^990 and 2^-950 too, some with zeros, some with a product that
                     underflows to 0: the SIMD extraction path at every level count */
    D_SPREAD53,   /* the same with 53-bit values and RN(a*b): TwoProduct errors by extraction */
};

/* Residual pairs (x, y), (-RN(x*y), 1) with x spread over `spread` binades below 2^shift. */
static void spread_pairs(double *a, double *b, size_t n, drift_stream_t *s, int fp32)
{
    static const int spreads[] = {0, 12, 30, 50, 75, 110, 160};
    static const int shifts[] = {0, 0, 0, 500, -470, 0, -20, 0, 0, 300, -440};
    for (size_t i = 0; i + 1 < n; i += 2) {
        size_t g = i / 512;
        int spread = spreads[g % 7], shift = shifts[g % 11];
        int k = shift - (spread ? (int)drift_stream_below(s, (uint32_t)spread) : 0);
        double x = fp32 ? fp32_uniform(s) : drift_stream_normal(s);
        double y = fp32 ? fp32_uniform(s) : drift_stream_normal(s);
        x = ldexp(x, k);
        y = ldexp(y, shift > 0 ? shift - 10 : shift); /* near 2^990 / 2^-950 with the big shifts */
        a[i] = x;
        b[i] = y;
        double p = x * y, c = p * 0x1.0000002p29; /* Veltkamp: p to 24 bits, any exponent */
        a[i + 1] = fp32 ? -(c - (c - p)) : -p;
        b[i + 1] = 1;
        if (g % 5 == 2 && i % 14 == 0) a[i] = a[i + 1] = (i & 16) ? -0.0 : 0.0; /* runs with zeros */
        if (g % 13 == 6 && i % 512 == 100) a[i] = b[i] = 0x1p-600;              /* x * y underflows to 0 */
    }
    if (n % 2) a[n - 1] = b[n - 1] = 0.5;
}

static void generate_dot(int gen, double *a, double *b, size_t n)
{
    drift_stream_t s;
    stream(&s, 2, (uint32_t)gen);
    size_t h = n / 2;
    switch (gen) {
    case D_FP32:
        for (size_t i = 0; i < n; i++) {
            a[i] = fp32_uniform(&s);
            b[i] = fp32_uniform(&s);
        }
        break;
    case D_FP32_WIDE:
        for (size_t i = 0; i < n; i++) {
            a[i] = fp32_wide(&s);
            b[i] = fp32_wide(&s);
        }
        break;
    case D_MIXED:
        for (size_t i = 0; i < n; i++) {
            a[i] = fp32_uniform(&s);
            b[i] = i % 997 == 5 ? wide(&s, -30, 30) : fp32_uniform(&s);
        }
        break;
    case D_GENERAL:
        for (size_t i = 0; i < n; i++) {
            a[i] = wide(&s, -700, 700);
            b[i] = wide(&s, -700, 700);
        }
        break;
    case D_CANCEL:
    case D_TIE:
        for (size_t i = 0; i < h; i++) {
            a[2 * i] = a[2 * i + 1] = fp32_wide(&s);
            b[2 * i] = fp32_uniform(&s);
            b[2 * i + 1] = -b[2 * i];
        }
        if (gen == D_TIE) {
            a[n - 2] = b[n - 2] = 1;
            a[n - 1] = 0x1p-6;
            b[n - 1] = 0x1p-5;
        }
        shuffle(a, b, n, &s);
        break;
    case D_ZEROS:
        for (size_t i = 0; i < n; i++) {
            a[i] = (i & 1) ? fp32_uniform(&s) : ((drift_stream_u32(&s) & 1) ? -0.0 : 0.0);
            b[i] = fp32_uniform(&s);
        }
        break;
    case D_TINY_SHORT: /* products near 2^-990 (normal, below 2^-976) and 2^-1100 */
        for (size_t i = 0; i < n; i++) {
            int deep = i % 2 ? 55 : 0;
            a[i] = ldexp(fp32_uniform(&s), -490 - deep - (int)drift_stream_below(&s, 10));
            b[i] = ldexp(fp32_uniform(&s), -490 - deep - (int)drift_stream_below(&s, 10));
        }
        break;
    case D_25BIT:
        for (size_t i = 0; i < n; i++) {
            a[i] = fp32_uniform(&s) + 0x1p-25; /* bit 2^-25 set below a 2^-1 .. 2^-24 value */
            b[i] = fp32_uniform(&s) - 0x1p-25;
        }
        break;
    case D_NORMAL:
        for (size_t i = 0; i < n; i++) {
            a[i] = drift_stream_normal(&s);
            b[i] = drift_stream_normal(&s) * (i % 7 == 3 ? 0x1p900 : 1.0); /* some past 2^995 */
        }
        break;
    case D_RESIDUAL:
    case D_RESIDUAL32:
        for (size_t i = 0; i + 1 < n; i += 2) {
            double x, y;
            if (gen == D_RESIDUAL32) {
                x = fp32_wide(&s);
                y = fp32_uniform(&s);
                a[i + 1] = -(double)(float)(x * y); /* x * y is exact in double */
            } else {
                x = drift_stream_normal(&s);
                y = drift_stream_normal(&s);
                switch (i / 2 % 4) { /* products across the TwoProduct limits */
                case 1: x = ldexp(x, 1000), y = ldexp(y, -1020); break;
                case 2: x = ldexp(x, -500), y = ldexp(y, -503); break;
                case 3: x = ldexp(x, 500), y = ldexp(y, 510); break;
                default: break;
                }
                a[i + 1] = -(x * y);
            }
            a[i] = x;
            b[i] = y;
            b[i + 1] = 1;
        }
        if (n % 2) a[n - 1] = b[n - 1] = 0;
        shuffle(a, b, n, &s);
        break;
    case D_SPREAD32:
    case D_SPREAD53: spread_pairs(a, b, n, &s, gen == D_SPREAD32); break;
    default: cr_assert_fail("generator");
    }
}

ParameterizedTestParameters(exact_dot, generated)
{
    static gen_case_t cases[] = {
        {"fp32 10^6", D_FP32, 1000000},
        {"fp32 short path", D_FP32, 200},
        {"fp32 all binades", D_FP32_WIDE, 300000},
        {"fp32 + general doubles", D_MIXED, 100000},
        {"general doubles", D_GENERAL, 50000},
        {"cancelling pairs", D_CANCEL, 200000},
        {"cancelling pairs + fp16 tie", D_TIE, 200002},
        {"signed zero products", D_ZEROS, 10000},
        {"tiny short products", D_TINY_SHORT, 5000},
        {"25-bit inputs", D_25BIT, 5000},
        {"normal doubles", D_NORMAL, 200000},
        {"rounding residuals", D_RESIDUAL, 100000},
        {"fp32 rounding residuals", D_RESIDUAL32, 300000},
        {"fp32 residuals, spread runs", D_SPREAD32, 40005},
        {"53-bit residuals, spread runs", D_SPREAD53, 40005},
    };
    return cr_make_param_array(gen_case_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(gen_case_t *c, exact_dot, generated, .timeout = 120)
{
    double *a = malloc(c->n * sizeof *a), *b = malloc(c->n * sizeof *b);
    cr_assert(a && b);
    generate_dot(c->gen, a, b, c->n);
    check_all(c->name, a, b, c->n);
    free(a);
    free(b);
}

/* All-zero dot products: the sign of the zero is the IEEE one in every mode. */
Test(exact_dot, zero_vectors)
{
    double a[300], b[300];
    for (int i = 0; i < 300; i++) {
        a[i] = -0.0;
        b[i] = 1.0;
    }
    check_all("300 x (-0 * 1)", a, b, 300);
    a[77] = 0.0;
    check_all("299 x (-0 * 1) + (0 * 1)", a, b, 300);
}

/* Bad arguments are refused, not guessed at. */
Test(exact_sum, bad_arguments)
{
    double x[2] = {1, 2}, r;
    cr_expect_eq(drift_exact_sum(&r, x, 2, DRIFT_FP16, DRIFT_SR), DRIFT_EINVAL);
    cr_expect_eq(drift_exact_sum(&r, x, 2, DRIFT_NFORMATS, DRIFT_RNE), DRIFT_EINVAL);
    cr_expect_eq(drift_exact_sum(NULL, x, 2, DRIFT_FP16, DRIFT_RNE), DRIFT_EINVAL);
    cr_expect_eq(drift_exact_sum(&r, NULL, 2, DRIFT_FP16, DRIFT_RNE), DRIFT_EINVAL);
    cr_expect_eq(drift_exact_sum_mpfr(&r, x, 2, DRIFT_FP16, DRIFT_SR), DRIFT_EINVAL);
    cr_expect_eq(drift_exact_dot(&r, x, NULL, 2, DRIFT_FP16, DRIFT_RNE), DRIFT_EINVAL);
    cr_expect_eq(drift_exact_dot_mpfr(&r, x, x, 2, DRIFT_FP16, (drift_mode_t)99), DRIFT_EINVAL);
    cr_expect(isnan(drift_xacc_round(&(drift_xacc_t){0}, DRIFT_FP16, DRIFT_SR)));
}

/* ---- the "exact sum so far", step by step -------------------------------------------- */

/* After every addition the object reports the running exact sum rounded in the format and
 * mode of that step (they rotate), and its sign. */
Test(xacc, step_by_step)
{
    drift_stream_t s;
    stream(&s, 3, 0);
    drift_xacc_t acc;
    drift_xacc_init(&acc);
    mpfr_t run, ta, tb;
    mpfr_init2(run, DOT_PREC);
    mpfr_set_zero(run, 1);
    mpfr_inits2(53, ta, tb, (mpfr_ptr)0);
    mpfr_t p;
    mpfr_init2(p, 106);
    int bad = 0;
    char first[256] = "";
    for (int i = 0; i < 3000; i++) {
        double a = i % 3 == 0 ? wide(&s, -1074, 1023) : wide(&s, -60, 60);
        if (i % 5 == 4) { /* a product every fifth step */
            double b = wide(&s, -600, 600);
            drift_xacc_add_prod(&acc, a, b);
            mpfr_set_d(ta, a, MPFR_RNDN);
            mpfr_set_d(tb, b, MPFR_RNDN);
            mpfr_mul(p, ta, tb, MPFR_RNDN);
            mpfr_add(run, run, p, MPFR_RNDN);
        } else {
            drift_xacc_add(&acc, a);
            mpfr_set_d(ta, a, MPFR_RNDN);
            mpfr_add(run, run, ta, MPFR_RNDN);
        }
        drift_format_t f = (drift_format_t)(i % DRIFT_NFORMATS);
        drift_mode_t m = MODES[(i / DRIFT_NFORMATS) % NMODES];
        double want = oracle_round(run, f, m), got = drift_xacc_round(&acc, f, m);
        if ((!same(got, want) || drift_xacc_sign(&acc) != mpfr_sgn(run)) && !bad++)
            snprintf(first, sizeof first, "step %d %s %s: got %a want %a", i, drift_format_name(f), drift_mode_name(m),
                got, want);
    }
    mpfr_clears(run, ta, tb, p, (mpfr_ptr)0);
    cr_assert_eq(bad, 0, "%d steps wrong; first: %s", bad, first);
}

/* More than 2^30 additions would be slow; what the deferred carries must survive is many
 * additions of the largest digit pattern into the same digits, both signs, then exact
 * cancellation down to one bit. */
Test(xacc, carries)
{
    drift_xacc_t acc;
    drift_xacc_init(&acc);
    for (int i = 0; i < 3000000; i++) drift_xacc_add(&acc, 0x1.fffffffffffffp1000);
    for (int i = 0; i < 3000000; i++) drift_xacc_add(&acc, -0x1.fffffffffffffp1000);
    cr_assert_eq(drift_xacc_sign(&acc), 0);
    drift_xacc_add(&acc, -0x1p-1074);
    cr_assert_eq(drift_xacc_sign(&acc), -1);
    cr_assert(same(drift_xacc_round(&acc, DRIFT_FP64, DRIFT_RNE), -0x1p-1074));
    cr_assert(same(drift_xacc_round(&acc, DRIFT_FP32, DRIFT_RD), -0x1p-149));
    cr_assert(same(drift_xacc_round(&acc, DRIFT_FP32, DRIFT_RNE), -0.0));
}

/* ---- drift_mpfr_to_format --------------------------------------------------------------- */

/* Values at the edges of every format: midpoints between neighbours (exact ties) and a
 * hair either side, the overflow threshold, half the smallest subnormal, the
 * subnormal/normal border, and values far outside the double range; both signs, every
 * mode, at 300 bits. */
Test(mpfr_to_format, edges)
{
    drift_stream_t s;
    stream(&s, 4, 0);
    mpfr_t x, h, ulp;
    mpfr_inits2(300, x, h, ulp, (mpfr_ptr)0);
    int bad = 0, count = 0;
    char first[256] = "";
    for (int f = 0; f < DRIFT_NFORMATS; f++) {
        const drift_format_info_t *fi = drift_format_info((drift_format_t)f);
        for (int i = 0; i < 400; i++) {
            /* a base value of the format: random binade (subnormal ones too), random bits */
            int e = fi->emin - fi->p + 1 + (int)drift_stream_below(&s, (uint32_t)(fi->emax - fi->emin + fi->p));
            long qe = (e > fi->emin ? e : fi->emin) - fi->p + 1;
            switch (i % 8) {
            case 0: /* the overflow threshold and around it */
                mpfr_set_d(x, fi->max_finite, MPFR_RNDN);
                qe = fi->emax - fi->p + 1;
                break;
            case 1: /* around the smallest subnormal */
                mpfr_set_ui_2exp(x, drift_stream_below(&s, 3), fi->emin - fi->p + 1, MPFR_RNDN);
                qe = fi->emin - fi->p + 1;
                break;
            case 2: /* around the smallest normal */
                mpfr_set_ui_2exp(x, 1, fi->emin, MPFR_RNDN);
                qe = fi->emin - fi->p + (int)drift_stream_below(&s, 2);
                break;
            default: {
                uint64_t m = (u64(&s) >> (64 - fi->p)) | (e >= fi->emin ? 1ULL << (fi->p - 1) : 0);
                mpfr_set_ui_2exp(x, 0, 0, MPFR_RNDN);
                mpfr_set_uj_2exp(x, m, qe, MPFR_RNDN);
            }
            }
            /* offset: half a quantum (a tie), plus -1, 0 or +1 of 2^-200 quanta, or a
             * few quarter quanta */
            mpfr_set_ui_2exp(ulp, 1, qe, MPFR_RNDN);
            int kind = (int)drift_stream_below(&s, 4);
            if (kind < 3) {
                mpfr_div_2ui(h, ulp, 1, MPFR_RNDN);
                mpfr_add(x, x, h, MPFR_RNDN);
                mpfr_div_2ui(h, ulp, 200, MPFR_RNDN);
                if (kind == 0) mpfr_sub(x, x, h, MPFR_RNDN);
                if (kind == 2) mpfr_add(x, x, h, MPFR_RNDN);
            } else {
                mpfr_mul_si(h, ulp, (long)drift_stream_below(&s, 9) - 4, MPFR_RNDN);
                mpfr_div_2ui(h, h, 2, MPFR_RNDN);
                mpfr_add(x, x, h, MPFR_RNDN);
            }
            for (int sign = 0; sign < 2; sign++) {
                if (sign) mpfr_neg(x, x, MPFR_RNDN);
                for (int k = 0; k < NMODES; k++) {
                    double want = oracle_round(x, (drift_format_t)f, MODES[k]);
                    double got = drift_mpfr_to_format(x, (drift_format_t)f, MODES[k]);
                    count++;
                    if (!same(got, want) && !bad++)
                        mpfr_snprintf(first, sizeof first, "%s %s x=%Ra: got %a want %a", fi->name,
                            drift_mode_name(MODES[k]), x, got, want);
                }
            }
        }
        /* far outside the double range */
        for (int k = 0; k < NMODES; k++)
            for (int big = 0; big < 2; big++) {
                mpfr_set_ui_2exp(x, 3, big ? 3000 : -3000, MPFR_RNDN);
                double want = oracle_round(x, (drift_format_t)f, MODES[k]);
                double got = drift_mpfr_to_format(x, (drift_format_t)f, MODES[k]);
                count++;
                if (!same(got, want) && !bad++)
                    mpfr_snprintf(first, sizeof first, "%s %s x=%Ra: got %a want %a", fi->name,
                        drift_mode_name(MODES[k]), x, got, want);
            }
    }
    mpfr_clears(x, h, ulp, (mpfr_ptr)0);
    cr_assert_eq(bad, 0, "%d of %d roundings wrong; first: %s", bad, count, first);
}

/* ---- exp ------------------------------------------------------------------------------ */

typedef struct {
    char name[64];
    double x, want;
} fn_case_t;

ParameterizedTestParameters(exact_exp, known)
{
    static fn_case_t cases[] = {
        {"exp(0) = 1", 0.0, 1.0},
        {"exp(-0) = 1", -0.0, 1.0},
        /* e = 2.71828182845904523536... (OEIS A001113); its nearest double is glibc's
         * M_E, 0x1.5bf0a8b145769p+1 = 2.718281828459045091 (the next one up,
         * ...76ap+1 = 2.718281828459045535, is farther) */
        {"exp(1) = M_E", 1.0, 0x1.5bf0a8b145769p+1},
        /* fdlibm e_exp.c (Sun, 1993): o_threshold = 0x40862E42FEFA39EF is the largest x
         * with a finite exp(x); u_threshold = 0xc0874910D52D3051 the smallest without
         * underflow to 0, where exp(x) is just above 2^-1075 and rounds to 2^-1074. */
        {"exp(next above o_threshold) = inf", 0x1.62e42fefa39f0p+9, INFINITY},
        {"exp(u_threshold) = 2^-1074", -0x1.74910d52d3051p+9, 0x1p-1074},
        {"exp(next below u_threshold) = 0", -0x1.74910d52d3052p+9, 0.0},
        /* ln 2's double, 0x1.62e42fefa39efp-1 (glibc M_LN2), is below ln 2 by about
         * 2.3e-17, so exp of it is 2 - 4.6e-17: nearer 2 than 2 - 2^-52. */
        {"exp(M_LN2) = 2", 0x1.62e42fefa39efp-1, 2.0},
        /* Taylor: exp(2^-53) = 1 + 2^-53 + 2^-107 + ..., just above the midpoint between 1
         * and 1 + 2^-52, so it rounds up; exp(-2^-54) = 1 - 2^-54 + 2^-109 - ..., just
         * above the midpoint between 1 - 2^-53 and 1, so it rounds to 1. Both need more
         * than 100 bits to decide. */
        {"exp(2^-53) rounds up", 0x1p-53, 0x1.0000000000001p0},
        {"exp(-2^-54) rounds to 1", -0x1p-54, 1.0},
        {"exp(-2^-53) rounds down", -0x1p-53, 0x1.fffffffffffffp-1},
        {"exp(inf) = inf", INFINITY, INFINITY},
        {"exp(-inf) = 0", -INFINITY, 0.0},
        {"exp(nan) = nan", NAN, NAN},
        {"exp(1e308) = inf", 1e308, INFINITY},
        {"exp(-1e308) = 0", -1e308, 0.0},
    };
    return cr_make_param_array(fn_case_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(fn_case_t *c, exact_exp, known)
{
    double r;
    cr_assert_eq(drift_exact_exp(&r, c->x), 0);
    cr_assert(same(r, c->want), "%s: got %a want %a", c->name, r, c->want);
}

/* fdlibm's o_threshold (above): exp is still finite there, in the top binade. */
Test(exact_exp, overflow_threshold)
{
    double r;
    cr_assert_eq(drift_exact_exp(&r, 0x1.62e42fefa39efp+9), 0);
    cr_assert(isfinite(r) && r >= 0x1p1023, "exp(o_threshold) = %a", r);
}

/* exp at 3000 bits, rounded by the oracle. */
static double oracle_exp(double x)
{
    mpfr_t t;
    mpfr_init2(t, 3000);
    mpfr_set_d(t, x, MPFR_RNDN);
    mpfr_exp(t, t, MPFR_RNDN);
    double r = oracle_round(t, DRIFT_FP64, DRIFT_RNE);
    mpfr_clear(t);
    return r;
}

Test(exact_exp, random_against_mpfr)
{
    drift_stream_t s;
    stream(&s, 5, 0);
    int bad = 0;
    char first[128] = "";
    for (int i = 0; i < 4000; i++) {
        double x;
        switch (i % 4) {
        case 0: x = -746.0 + 1456.0 * drift_stream_uniform(&s); break; /* subnormal to overflow */
        case 1: x = -746.0 + 40.0 * drift_stream_uniform(&s); break;   /* the subnormal results */
        case 2: x = wide(&s, -80, 3); break;                           /* near 0: exp ~ 1 + x */
        default: x = 40.0 * drift_stream_uniform(&s) - 20.0; break;
        }
        double got, want = oracle_exp(x);
        int rc = drift_exact_exp(&got, x);
        if ((rc || !same(got, want)) && !bad++) snprintf(first, sizeof first, "x=%a: got %a want %a", x, got, want);
    }
    cr_assert_eq(bad, 0, "%d of 4000 wrong; first: %s", bad, first);
}

/* ---- log-sum-exp and softmax ------------------------------------------------------------- */

static double oracle_lse(const double *x, size_t n)
{
    mpfr_t s, t;
    mpfr_inits2(3000, s, t, (mpfr_ptr)0);
    mpfr_set_zero(s, 1);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t, x[i], MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
    }
    mpfr_log(s, s, MPFR_RNDN);
    double r = oracle_round(s, DRIFT_FP64, DRIFT_RNE);
    mpfr_clears(s, t, (mpfr_ptr)0);
    return r;
}

static void oracle_softmax(double *out, const double *x, size_t n)
{
    mpfr_t s, t;
    mpfr_inits2(3000, s, t, (mpfr_ptr)0);
    mpfr_set_zero(s, 1);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t, x[i], MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
    }
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t, x[i], MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_div(t, t, s, MPFR_RNDN);
        out[i] = oracle_round(t, DRIFT_FP64, DRIFT_RNE);
    }
    mpfr_clears(s, t, (mpfr_ptr)0);
}

typedef struct {
    char name[64];
    size_t n;
    double x[4];
    double want[4]; /* softmax; want[0] is the log-sum-exp in the lse table */
} vec_case_t;

ParameterizedTestParameters(exact_lse, known)
{
    static vec_case_t cases[] = {
        /* log 2 = 0.69314718055994530942 (glibc M_LN2), nearest double 0x1.62e42fefa39efp-1 */
        {"lse(0, 0) = ln 2", 2, {0, 0}, {0x1.62e42fefa39efp-1}},
        {"lse(x) = x", 1, {-3.25}, {-3.25}},
        {"lse() = -inf", 0, {0}, {-INFINITY}},
        {"lse(-inf, -inf) = -inf", 2, {-INFINITY, -INFINITY}, {-INFINITY}},
        {"lse(-inf, 3) = 3", 2, {-INFINITY, 3}, {3}},
        {"lse(1, nan) = nan", 2, {1, NAN}, {NAN}},
        {"lse(inf, 1) = inf", 2, {INFINITY, 1}, {INFINITY}},
        /* 1e300 + ln 2: the spacing at 1e300 is 2^944, so the sum rounds to 1e300 */
        {"lse(1e300, 1e300) = 1e300", 2, {1e300, 1e300}, {1e300}},
        /* DBL_MAX + ln 2 stays DBL_MAX (half the spacing there is 2^970) */
        {"lse(DBL_MAX, DBL_MAX) = DBL_MAX", 2, {DBL_MAX, DBL_MAX}, {DBL_MAX}},
    };
    return cr_make_param_array(vec_case_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(vec_case_t *c, exact_lse, known)
{
    double r;
    cr_assert_eq(drift_exact_logsumexp(&r, c->x, c->n), 0);
    cr_assert(same(r, c->want[0]), "%s: got %a want %a", c->name, r, c->want[0]);
}

/* Random vectors (lengths 2..40) over moderate and large ranges, plus the cancellation
 * case lse(-ln2, -ln2) = ln2 - double(ln2) ~ 2.3e-17, which needs working precision well
 * beyond the first guess. */
Test(exact_lse, random_against_mpfr)
{
    drift_stream_t s;
    stream(&s, 6, 0);
    int bad = 0;
    char first[160] = "";
    double x[40];
    for (int t = 0; t < 600; t++) {
        size_t n = 2 + drift_stream_below(&s, 39);
        double scale = t % 3 == 0 ? 700.0 : t % 3 == 1 ? 30.0 : 1.0;
        for (size_t i = 0; i < n; i++) x[i] = scale * (2.0 * drift_stream_uniform(&s) - 1.0);
        if (t % 50 == 7) x[0] = -INFINITY;
        if (t % 50 == 8) x[1] = x[0]; /* a repeated maximum */
        if (t == 9) {
            n = 2;
            x[0] = x[1] = -0x1.62e42fefa39efp-1;
        }
        double got, want = oracle_lse(x, n);
        int rc = drift_exact_logsumexp(&got, x, n);
        if ((rc || !same(got, want)) && !bad++)
            snprintf(first, sizeof first, "case %d (n=%zu, x0=%a): got %a want %a", t, n, x[0], got, want);
    }
    cr_assert_eq(bad, 0, "%d of 600 wrong; first: %s", bad, first);
}

/* Inputs whose exact result lies within about 2^-100 of a midpoint between doubles, with
 * intermediate sums far from 1 so that the working-precision errors are as large as the
 * grid: an error bound that is too optimistic lets the first (64-bit) pass round to the
 * wrong side. The last input is tuned; walking it by ulps crosses the midpoint.
 *
 * lse(c, c, t) = c + log(2 + e^(t-c)): c is 1 + 2^-53 - ln 2 rounded down, so the target
 * 1 + 2^-53 needs e^(t-c) = 2 (1 + 2^-53 - c - ln 2) ~ 2^-54 (t ~ c - 37). */
Test(exact_lse, near_midpoints)
{
    mpfr_t mid, c, d;
    mpfr_inits2(300, mid, c, d, (mpfr_ptr)0);
    mpfr_set_ui_2exp(mid, 1, -53, MPFR_RNDN);
    mpfr_add_ui(mid, mid, 1, MPFR_RNDN); /* 1 + 2^-53 */
    mpfr_const_log2(d, MPFR_RNDN);
    mpfr_sub(c, mid, d, MPFR_RNDN);
    double cd = mpfr_get_d(c, MPFR_RNDD);
    mpfr_set_d(c, cd, MPFR_RNDN);
    mpfr_sub(d, mid, d, MPFR_RNDN);
    mpfr_sub(d, d, c, MPFR_RNDN); /* 1 + 2^-53 - ln 2 - c > 0 */
    mpfr_mul_2ui(d, d, 1, MPFR_RNDN);
    mpfr_log(d, d, MPFR_RNDN);
    mpfr_add(d, d, c, MPFR_RNDN);
    double t = mpfr_get_d(d, MPFR_RNDN);
    mpfr_clears(mid, c, d, (mpfr_ptr)0);
    int bad = 0;
    char first[160] = "";
    for (int k = 0; k < 20; k++) t = nextafter(t, -INFINITY);
    for (int k = -20; k <= 20; k++, t = nextafter(t, INFINITY)) {
        double x[3] = {cd, cd, t}, got;
        double want = oracle_lse(x, 3);
        int rc = drift_exact_logsumexp(&got, x, 3);
        if ((rc || !same(got, want)) && !bad++) snprintf(first, sizeof first, "t=%a: got %a want %a", t, got, want);
    }
    cr_assert_eq(bad, 0, "%d of 41 wrong; first: %s", bad, first);
}

/* softmax(0, 0, b, t)[0] = 1 / (2 + e^b + e^t): b = -0.7 puts it near 0.4; mid is the
 * midpoint just below it, and e^t = 1/mid - 2 - e^b (about 2^-51) tunes it onto mid. */
Test(exact_softmax, near_midpoints)
{
    const double b = -0.7;
    mpfr_t q, e;
    mpfr_inits2(300, q, e, (mpfr_ptr)0);
    mpfr_set_d(e, b, MPFR_RNDN);
    mpfr_exp(e, e, MPFR_RNDN);
    mpfr_add_ui(q, e, 2, MPFR_RNDN);
    mpfr_ui_div(q, 1, q, MPFR_RNDN);
    double lo = mpfr_get_d(q, MPFR_RNDD); /* the double below 1/(2 + e^b) */
    mpfr_set_d(q, lo, MPFR_RNDN);
    mpfr_set_d(e, nextafter(lo, INFINITY), MPFR_RNDN);
    mpfr_add(q, q, e, MPFR_RNDN);
    mpfr_div_2ui(q, q, 1, MPFR_RNDN); /* the midpoint above lo */
    mpfr_ui_div(q, 1, q, MPFR_RNDN);
    mpfr_sub_ui(q, q, 2, MPFR_RNDN);
    mpfr_set_d(e, b, MPFR_RNDN);
    mpfr_exp(e, e, MPFR_RNDN);
    mpfr_sub(q, q, e, MPFR_RNDN); /* e^t */
    double t = 0;
    int positive = mpfr_sgn(q) > 0;
    if (positive) {
        mpfr_log(q, q, MPFR_RNDN);
        t = mpfr_get_d(q, MPFR_RNDN);
    }
    mpfr_clears(q, e, (mpfr_ptr)0);
    cr_assert(positive, "construction: the midpoint must lie below 1/(2 + e^b)");
    int bad = 0;
    char first[200] = "";
    for (int k = 0; k < 20; k++) t = nextafter(t, -INFINITY);
    for (int k = -20; k <= 20; k++, t = nextafter(t, INFINITY)) {
        double x[4] = {0, 0, b, t}, got[4], want[4];
        oracle_softmax(want, x, 4);
        int rc = drift_exact_softmax(got, x, 4);
        for (int i = 0; i < 4; i++)
            if ((rc || !same(got[i], want[i])) && !bad++)
                snprintf(first, sizeof first, "t=%a [%d]: got %a want %a", t, i, got[i], want[i]);
    }
    cr_assert_eq(bad, 0, "%d wrong; first: %s", bad, first);
}

ParameterizedTestParameters(exact_softmax, known)
{
    static vec_case_t cases[] = {
        {"four equal: 1/4 each", 4, {0, 0, 0, 0}, {0.25, 0.25, 0.25, 0.25}},
        /* 1/3 = 0.010101...b: 53 bits 0x1.5555555555555p-2, the rest (0101...) is below
         * half an ulp, so nearest is downward */
        {"three equal: 1/3", 3, {5, 5, 5}, {0x1.5555555555555p-2, 0x1.5555555555555p-2, 0x1.5555555555555p-2}},
        {"-inf gets 0", 2, {0, -INFINITY}, {1, 0}},
        /* e^-800 < 2^-1154: far below half the smallest subnormal; 1/(1 + e^-800) is
         * 1 - e^-800 to first order, nearest double 1 */
        {"far below: 0 and 1", 2, {0, -800}, {1, 0}},
        {"nan poisons all", 2, {NAN, 1}, {NAN, NAN}},
        {"+inf is undefined", 2, {INFINITY, 1}, {NAN, NAN}},
        {"all -inf is undefined", 2, {-INFINITY, -INFINITY}, {NAN, NAN}},
    };
    return cr_make_param_array(vec_case_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(vec_case_t *c, exact_softmax, known)
{
    double r[4];
    cr_assert_eq(drift_exact_softmax(r, c->x, c->n), 0);
    for (size_t i = 0; i < c->n; i++)
        cr_expect(same(r[i], c->want[i]), "%s [%zu]: got %a want %a", c->name, i, r[i], c->want[i]);
}

/* Random vectors, some with results in the subnormal range (x_i - max near -740). */
Test(exact_softmax, random_against_mpfr)
{
    drift_stream_t s;
    stream(&s, 7, 0);
    int bad = 0, count = 0;
    char first[160] = "";
    double x[32], got[32], want[32];
    for (int t = 0; t < 300; t++) {
        size_t n = 2 + drift_stream_below(&s, 31);
        double scale = t % 3 == 0 ? 400.0 : t % 3 == 1 ? 20.0 : 1.0;
        for (size_t i = 0; i < n; i++) x[i] = scale * (2.0 * drift_stream_uniform(&s) - 1.0);
        if (t % 10 == 3) x[1] = x[0] - 740.0 - 8.0 * drift_stream_uniform(&s); /* subnormal */
        if (t % 10 == 4) x[1] = x[0];
        oracle_softmax(want, x, n);
        int rc = drift_exact_softmax(got, x, n);
        for (size_t i = 0; i < n; i++, count++)
            if ((rc || !same(got[i], want[i])) && !bad++)
                snprintf(first, sizeof first, "case %d [%zu] x=%a: got %a want %a", t, i, x[i], got[i], want[i]);
    }
    cr_assert_eq(bad, 0, "%d of %d wrong; first: %s", bad, count, first);
}

/* ---- drift-calc exact -------------------------------------------------------------------- */

#define CALC DRIFT_BIN_DIR "/drift-calc"

/* Writes text to a temporary file, runs "drift-calc exact <args>" where "@" in args is
 * the file's path; captures stdout and stderr; returns the exit status. */
static int run_exact(const char *text, const char *args, char *out, size_t outsz, char *err, size_t errsz)
{
    char fin[] = "/tmp/drift_exact_in_XXXXXX";
    int a = mkstemp(fin);
    cr_assert(a >= 0, "mkstemp failed");
    cr_assert_eq(write(a, text, strlen(text)), (ssize_t)strlen(text));
    close(a);
    char argbuf[512], cmd[2048];
    const char *at = strchr(args, '@');
    if (at)
        snprintf(argbuf, sizeof argbuf, "%.*s%s%s", (int)(at - args), args, fin, at + 1);
    else
        snprintf(argbuf, sizeof argbuf, "%s", args);
    snprintf(cmd, sizeof cmd, "%s exact %s", CALC, argbuf);
    int st = run_capture(cmd, out, outsz, err, errsz);
    remove(fin);
    return st;
}

typedef struct {
    char text[128];
    char args[32];
    char row[96];
} calc_case_t;

ParameterizedTestParameters(calc_exact, rows)
{
    static calc_case_t cases[] = {
        /* cancellation (README's calc sum example): seq in double gives 0, the exact sum is 1 */
        {"1e16\n1\n-1e16\n", "@", "3,0x1p+0,1"},
        {"1e16\n1\n-1e16\n", "- < @", "3,0x1p+0,1"},
        /* 0x1.999999999999ap-4 + 0x1.999999999999ap-3 = 0x1.33333333333338p-2 exactly: a
         * tie between ...333p-2 (odd) and ...334p-2 (even) */
        {"0.1\n0.2\n", "@", "2,0x1.3333333333334p-2,0.30000000000000004"},
        /* comments, blank lines, spaces, CRLF, hex input */
        {"# a comment\n\n  0x1p-1074 \t\n1e308\r\n  # indented comment\n-1e308\n", "@",
            "3,0x0.0000000000001p-1022,4.9406564584124654e-324"},
        {"-0\n-0.0\n", "@", "2,-0x0p+0,-0"},
        {"inf\n1\n", "@", "2,inf,inf"},
    };
    return cr_make_param_array(calc_case_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(calc_case_t *c, calc_exact, rows)
{
    char out[1024], err[1024], want[256];
    int rc = run_exact(c->text, c->args, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "exit %d, stderr: %s", rc, err);
    snprintf(want, sizeof want, "n,exact_hex,exact\n%s\n", c->row);
    cr_assert_str_eq(out, want);
}

typedef struct {
    char text[64];
    char args[48];
    char names[32]; /* what the one-line message must mention */
} calc_bad_t;

ParameterizedTestParameters(calc_exact, bad_input)
{
    static calc_bad_t cases[] = {
        {"1\n2\nabc\n", "@", ":3:"},
        {"1\n0x1.8p\n", "@", ":2:"},
        {"1e4x0\n", "@", ":1:"}, /* 1e400 is a number: it rounds to inf */
        {"1 2\n", "@", ":1:"},
        {"\n# only a comment\n", "@", "no values"},
        {"", "@", "no values"},
        {"1\n", "/nonexistent/file", "/nonexistent/file"},
        {"1\n", "", "FILE"},
        {"1\n", "@ @", "FILE"},
        {"1\n", "--bogus", "--bogus"},
    };
    return cr_make_param_array(calc_bad_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(calc_bad_t *c, calc_exact, bad_input)
{
    char out[1024], err[1024];
    int rc = run_exact(c->text, c->args, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 2, "exit %d, want 2", rc);
    cr_assert_str_eq(out, "", "printed: %s", out);
    char *nl = strchr(err, '\n');
    cr_assert(nl && nl[1] == 0, "stderr must be one line, got: %s", err);
    cr_assert(strstr(err, c->names), "stderr does not name '%s': %s", c->names, err);
}

/* A probability within a hair of a double: softmax{0, 0, -1500}. exp(-1500) < 2^-2163, so
 * p0 = p1 = 1/(2 + exp(-1500)) lies within 2^-2165 of 1/2, far inside half an ulp: RNE gives
 * exactly 1/2; p2 = exp(-1500)/(2 + ...) < 2^-2164 is below half the smallest subnormal
 * (2^-1075): +0. MPFR's can_round alone cannot decide the first two (the error interval
 * straddles the double 1/2), which once made this case fail with DRIFT_ERANGE. */
Test(exact_elementary, softmax_straddling_a_double)
{
    const double x[3] = {0.0, 0.0, -1500.0};
    double out[3];
    cr_assert_eq(drift_exact_softmax(out, x, 3), DRIFT_OK);
    cr_assert_eq(out[0], 0.5);
    cr_assert_eq(out[1], 0.5);
    cr_assert(out[2] == 0.0 && !signbit(out[2]));
}
