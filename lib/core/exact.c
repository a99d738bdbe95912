/* exact.c — exact witnesses: a superaccumulator (the fast path), MPFR (the independent
 * path), and correctly rounded exp / log-sum-exp / softmax by Ziv's strategy.
 *
 * Fast path. A double is m * 2^(e - 1075) with an integer m < 2^53, so adding it exactly
 * is integer arithmetic on a long fixed-point number: drift_xacc_t holds that number in
 * 32-bit digits stored in int64 words, so that a shifted mantissa is added to three
 * digits with no carry handling; carries are propagated only every 2^30 additions.
 * For long vectors that is still too slow (three read-modify-writes per value), so the
 * bulk loops first gather values whose exponent field is the same into one int64 "slot"
 * per exponent (Neal, "Fast exact summation using small and large superaccumulators",
 * arXiv:1505.05571): one integer add per value, and the slots are flushed into the
 * superaccumulator every block, before any of them can overflow.
 *
 * Rounding. The exact value is read off the digits as its leading 53 bits plus a round
 * bit and a sticky bit. fp64 rounds from those directly; the narrower formats (p <= 24)
 * take the 53 bits rounded to odd and round that double once more with drift_round:
 * round-to-odd with two or more extra bits makes the second rounding equal to the
 * direct one in every mode (Boldo & Melquiond, IEEE TC 57(4), 2008).
 *
 * The code assumes two's complement int64 with arithmetic right shifts (GCC and Clang
 * document both). */
#include "exact.h"
#include "drift.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DIGIT_MASK 0xffffffffULL
#define FRAC_MASK 0x000fffffffffffffULL
#define HIDDEN_BIT 0x0010000000000000ULL
#define NORMALISE_EVERY (1 << 30) /* digit drift < 2^30 * 1.5 * 2^32 < 2^63 */

enum { ZS_EMPTY = 0, ZS_NEGZERO = 1, ZS_POSZERO = 2, ZS_OTHER = 3 };

static uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static int mode_ok(drift_format_t f, drift_mode_t m)
{
    return (unsigned)f < DRIFT_NFORMATS && (unsigned)m < DRIFT_NMODES && m != DRIFT_SR;
}

/* ---- the superaccumulator ------------------------------------------------------- */

void drift_xacc_init(drift_xacc_t *a)
{
    memset(a, 0, sizeof *a);
}

/* Carries up: digits 0..D-2 end in [0, 2^32), the top digit keeps the sign. */
static void normalise(drift_xacc_t *a)
{
    int64_t c = 0;
    for (int i = 0; i < DRIFT_XACC_DIGITS - 1; i++) {
        int64_t v = a->d[i] + c;
        c = v >> 32;
        a->d[i] = (int64_t)((uint64_t)v & DIGIT_MASK);
    }
    a->d[DRIFT_XACC_DIGITS - 1] += c;
    a->pending = 0;
}

/* Adds (neg ? -mag : mag) * 2^(pos + DRIFT_XACC_LSB). The three chunks are each below
 * 1.5 * 2^32, which is what NORMALISE_EVERY counts on. Branch-free in the sign: signs of
 * data are random, and a mispredicted branch costs more than the whole addition. */
static inline void add_at(drift_xacc_t *a, uint64_t mag, int neg, int pos)
{
    int i = pos >> 5, sh = pos & 31;
    uint64_t lo = (mag & DIGIT_MASK) << sh; /* < 2^63 */
    uint64_t hi = (mag >> 32) << sh;        /* < 2^63 */
    uint64_t s = 0 - (uint64_t)(neg != 0);  /* all ones when negative */
    uint64_t c0 = lo & DIGIT_MASK;
    uint64_t c1 = (lo >> 32) + (hi & DIGIT_MASK);
    uint64_t c2 = hi >> 32;
    /* (c ^ s) - s is c or -c, in two's complement */
    a->d[i] += (int64_t)((c0 ^ s) - s);
    a->d[i + 1] += (int64_t)((c1 ^ s) - s);
    a->d[i + 2] += (int64_t)((c2 ^ s) - s);
    if (++a->pending >= NORMALISE_EVERY) normalise(a);
}

static void note_zero(drift_xacc_t *a, int negative)
{
    int want = negative ? ZS_NEGZERO : ZS_POSZERO;
    if (a->zstate == ZS_EMPTY)
        a->zstate = want;
    else if (a->zstate != want)
        a->zstate = ZS_OTHER;
}

static void add_special(drift_xacc_t *a, double x)
{
    a->zstate = ZS_OTHER;
    if (isnan(x)) {
        a->nan = 1;
        return;
    }
    int s = signbit(x) ? -1 : 1;
    if (a->inf && a->inf != s) a->nan = 1; /* inf - inf */
    a->inf = s;
}

/* x * 2^scale for finite x, exactly. The callers guarantee the range (see the header). */
static void add_scaled(drift_xacc_t *a, double x, int scale)
{
    uint64_t u = dbits(x);
    int e = (int)((u >> 52) & 0x7ff);
    if (x == 0) {
        note_zero(a, (int)(u >> 63));
        return;
    }
    a->zstate = ZS_OTHER;
    uint64_t m = (u & FRAC_MASK) | (e ? HIDDEN_BIT : 0);
    add_at(a, m, (int)(u >> 63), (e ? e : 1) - 1075 + scale - DRIFT_XACC_LSB);
}

void drift_xacc_add(drift_xacc_t *a, double x)
{
    if (!isfinite(x)) {
        add_special(a, x);
        return;
    }
    add_scaled(a, x, 0);
}

void drift_xacc_add_prod(drift_xacc_t *a, double x, double y)
{
    if (!isfinite(x) || !isfinite(y)) {
        add_special(a, x * y); /* inf * 0 is NaN, as IEEE says */
        return;
    }
    if (x == 0 || y == 0) {
        note_zero(a, (signbit(x) != 0) != (signbit(y) != 0));
        return;
    }
    double ph = x * y;
    double aph = fabs(ph);
    /* TwoProd is exact when ph neither overflows nor comes near the subnormals (the
     * error term must be a double: e_x + e_y >= emin + p - 1, Boldo & Muller). */
    if (aph >= 0x1p-960 && aph <= DBL_MAX) {
        double pl = fma(x, y, -ph);
        add_scaled(a, ph, 0);
        if (pl != 0) add_scaled(a, pl, 0);
        return;
    }
    /* Otherwise multiply the mantissas in [0.5, 1) (exact TwoProd, no underflow) and
     * put the exponents back in the accumulator, where the range covers 2^-2148. */
    int ex, ey;
    double mx = frexp(x, &ex), my = frexp(y, &ey);
    ph = mx * my;
    double pl = fma(mx, my, -ph);
    add_scaled(a, ph, ex + ey);
    if (pl != 0) add_scaled(a, pl, ex + ey);
}

/* A normalised copy holding |value|; returns the sign (-1, 0, +1) of the value. */
static int magnitude(drift_xacc_t *c, const drift_xacc_t *a)
{
    *c = *a;
    normalise(c);
    int neg = c->d[DRIFT_XACC_DIGITS - 1] < 0;
    if (neg) {
        for (int i = 0; i < DRIFT_XACC_DIGITS; i++) c->d[i] = -c->d[i];
        normalise(c);
    }
    for (int i = DRIFT_XACC_DIGITS - 1; i >= 0; i--)
        if (c->d[i]) return neg ? -1 : 1;
    return 0;
}

int drift_xacc_sign(const drift_xacc_t *a)
{
    if (a->nan) return 0;
    if (a->inf) return a->inf;
    drift_xacc_t c;
    return magnitude(&c, a);
}

/* Bit k (from DRIFT_XACC_LSB) of a normalised magnitude. */
static unsigned bit_at(const drift_xacc_t *c, int k)
{
    if (k < 0) return 0;
    return (unsigned)(((uint64_t)c->d[k >> 5] >> (k & 31)) & 1);
}

/* Bits [k, k + 53) of a normalised magnitude as an integer (digits are 32 bits wide, so
 * three of them cover any 53-bit window). */
static uint64_t bits_from(const drift_xacc_t *c, int k)
{
    int i = k >> 5, sh = k & 31;
    uint64_t w = (uint64_t)c->d[i] >> sh;
    if (i + 1 < DRIFT_XACC_DIGITS) w |= (uint64_t)c->d[i + 1] << (32 - sh);
    if (sh && i + 2 < DRIFT_XACC_DIGITS) w |= (uint64_t)c->d[i + 2] << (64 - sh);
    return w & ((1ULL << 53) - 1);
}

static int sticky_below(const drift_xacc_t *c, int k)
{
    if (k <= 0) return 0;
    int i = k >> 5;
    for (int j = 0; j < i; j++)
        if (c->d[j]) return 1;
    uint64_t mask = (1ULL << (k & 31)) - 1;
    return ((uint64_t)c->d[i] & mask) != 0;
}

static double zero_result(int zstate, drift_mode_t m)
{
    /* IEEE 754 6.3: same-signed zeros keep their sign; any other exact zero is +0,
     * except -0 when rounding toward -inf. mpfr_sum follows the same rule. */
    if (zstate == ZS_NEGZERO) return -0.0;
    if (zstate == ZS_OTHER && m == DRIFT_RD) return -0.0;
    return 0.0;
}

static double overflow_fp64(int neg, drift_mode_t m)
{
    int to_max = m == DRIFT_RZ || (m == DRIFT_RU && neg) || (m == DRIFT_RD && !neg);
    double r = to_max ? DBL_MAX : INFINITY;
    return neg ? -r : r;
}

double drift_xacc_round(const drift_xacc_t *a, drift_format_t f, drift_mode_t m)
{
    if (!mode_ok(f, m) || a->nan) return NAN;
    drift_round_opts_t o = {m, 0, 0};
    if (a->inf) return drift_round(a->inf > 0 ? INFINITY : -INFINITY, f, &o, 0);
    drift_xacc_t c;
    int s = magnitude(&c, a);
    if (s == 0) return zero_result(a->zstate, m);
    int neg = s < 0;
    int t = DRIFT_XACC_DIGITS - 1;
    while (!c.d[t]) t--;
    int top = 32 * t + 31 - __builtin_clz((unsigned)c.d[t]); /* leading bit index */
    int etop = top + DRIFT_XACC_LSB;                          /* its exponent */
    int lsb = etop - 52 > -1074 ? etop - 52 : -1074;           /* double's quantum there */
    int k = lsb - DRIFT_XACC_LSB;
    uint64_t mant = bits_from(&c, k);
    unsigned round = bit_at(&c, k - 1);
    int sticky = sticky_below(&c, k - 1);
    if (f == DRIFT_FP64) {
        int inc = 0;
        switch (m) {
        case DRIFT_RNE: inc = round && (sticky || (mant & 1)); break;
        case DRIFT_RNA: inc = round; break;
        case DRIFT_RU: inc = !neg && (round || sticky); break;
        case DRIFT_RD: inc = neg && (round || sticky); break;
        default: break;
        }
        double r = ldexp((double)(mant + (uint64_t)inc), lsb); /* exact, or inf on overflow */
        if (isinf(r)) return overflow_fp64(neg, m);
        return neg ? -r : r;
    }
    /* Beyond the double range every narrower format overflows whatever the mode, and
     * 2^1000 overflows them the same way (drift_round judges the rounded value). */
    double d = etop > 1023 ? 0x1p1000 : ldexp((double)(mant | (uint64_t)(round || sticky)), lsb);
    return drift_round(neg ? -d : d, f, &o, 0);
}

/* ---- fast bulk paths -------------------------------------------------------------- */

/* Below this length the slot array costs more to clear and flush than it saves. */
#define BULK_MIN 256

typedef struct {
    int64_t slot[2048]; /* indexed by the exponent field */
} slots_t;

/* Adds slot e (a sum of mantissas, each scaled by 2^shift) into a and clears it. */
static void flush_slot(drift_xacc_t *a, slots_t *s, int e, int shift)
{
    int64_t v = s->slot[e];
    if (!v) return;
    s->slot[e] = 0;
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    add_at(a, mag, v < 0, (e ? e : 1) - 1075 + shift - DRIFT_XACC_LSB);
}

/* Exact-zero sign when the inputs (or the products) were all zeros. */
static void zstate_of_sum(drift_xacc_t *a, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (x[i] != 0 || isnan(x[i])) {
            a->zstate = ZS_OTHER;
            return;
        }
        note_zero(a, signbit(x[i]) != 0);
    }
}

static void zstate_of_dot(drift_xacc_t *a, const double *x, const double *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] == 0 || y[i] == 0) || isnan(x[i]) || isnan(y[i])) {
            a->zstate = ZS_OTHER;
            return;
        }
        note_zero(a, (signbit(x[i]) != 0) != (signbit(y[i]) != 0));
    }
}

static void sum_bulk(drift_xacc_t *acc, const double *x, size_t n)
{
    slots_t *s = calloc(1, sizeof *s);
    if (!s) { /* no room for the slots: the plain superaccumulator is still exact */
        for (size_t i = 0; i < n; i++) drift_xacc_add(acc, x[i]);
        return;
    }
    /* A slot takes 2^10 mantissas below 2^53 before it could pass 2^63. */
    const size_t block = 1024;
    for (size_t b0 = 0; b0 < n; b0 += block) {
        size_t b1 = n - b0 < block ? n : b0 + block;
        unsigned lo = 2047, hi = 0;
        for (size_t i = b0; i < b1; i++) {
            uint64_t u = dbits(x[i]);
            unsigned e = (unsigned)(u >> 52) & 0x7ff;
            if (e == 0x7ff) {
                add_special(acc, x[i]);
                continue;
            }
            uint64_t m = (u & FRAC_MASK) | ((uint64_t)(e != 0) << 52);
            uint64_t sg = u >> 63;
            s->slot[e] += (int64_t)((m ^ (0 - sg)) + sg); /* -m when negative */
            lo = e < lo ? e : lo;
            hi = e > hi ? e : hi;
        }
        for (unsigned e = lo; e <= hi; e++) flush_slot(acc, s, (int)e, 0);
    }
    free(s);
}

/* Products of two values with at most 24 significant bits (every fp32, tf32, fp16, bf16
 * and fp8 value; "short" below) have at most 48 bits, so their double product p is exact
 * wherever it is normal. In binade e (the exponent field) p's last bit is worth
 * 2^(e - 1070), so p * 2^(1070 - e) is an integer below 2^48 — one multiplication by a
 * power of two and one conversion, exact, with the sign for free — and a slot takes 2^15
 * of them. 2^(1070 - e) is a double for e >= 47; smaller products, zeros, infinities and
 * NaNs go through drift_xacc_add_prod.
 *
 * Whether the inputs are short is checked per sub-block with a loop the compiler turns
 * into vector ORs, so the main loop carries no test for it. Four slot arrays, used in
 * turn, keep consecutive products with the same exponent from waiting on each other's
 * store (otherwise the loop runs at store-forwarding latency). */
#define DOT_LANES 4
#define DOT_BLOCK 32768 /* terms per lane between flushes: 2^15 * 2^48 <= 2^63 */
#define DOT_SUB 512      /* sub-block checked for short inputs: 8 KiB, stays in L1 */
#define SHORT_MASK 0x1fffffffULL /* the 29 mantissa bits a 24-bit value leaves clear */

typedef struct {
    double scale[2048];
    slots_t lane[DOT_LANES];
    slots_t general; /* for sub-blocks of wider inputs (dot_general) */
} dot_work_t;

/* OR of all the bit patterns, in GCC/Clang vector types (SSE2 or NEON registers without
 * any -m flag): this check must cost much less than the main loop. */
typedef uint64_t or_vec_t __attribute__((vector_size(16)));

static uint64_t or_bits(const double *x, const double *y, size_t n)
{
    or_vec_t v0 = {0, 0}, v1 = {0, 0};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        or_vec_t a0, a1, b0, b1;
        memcpy(&a0, x + i, sizeof a0);
        memcpy(&a1, x + i + 2, sizeof a1);
        memcpy(&b0, y + i, sizeof b0);
        memcpy(&b1, y + i + 2, sizeof b1);
        v0 |= a0 | b0;
        v1 |= a1 | b1;
    }
    v0 |= v1;
    uint64_t r = v0[0] | v0[1];
    for (; i < n; i++) r |= dbits(x[i]) | dbits(y[i]);
    return r;
}

/* Flushes every nonzero slot; groups of 8 are tested together (vector ORs), since most
 * of the 2048 exponents are never used. */
static void flush_all(drift_xacc_t *acc, slots_t *s, int shift)
{
    for (int g = 0; g < 2048; g += 8) {
        int64_t any = 0;
        for (int j = 0; j < 8; j++) any |= s->slot[g + j];
        if (any)
            for (int j = 0; j < 8; j++) flush_slot(acc, s, g + j, shift);
    }
}

/* A sub-block (at most DOT_SUB pairs) of general doubles: Dekker's TwoProduct (Veltkamp
 * splitting, no fma needed: libm's fma is a function call) gives p + e = a * b exactly
 * when nothing overflows or underflows: |a|, |b| < 2^995 (the splitting multiplies by
 * 2^27 + 1) and 2^-960 <= |p| < 2^1018 (Dekker 1971; Boldo & Muller for the underflow
 * condition e_a + e_b >= emin + p - 1). Both parts go to 53-bit slots, at most 2 * DOT_SUB
 * = 2^10 per slot before the flush: 2^10 * 2^53 <= 2^63. */
static void dot_general(drift_xacc_t *acc, slots_t *g, const double *x, const double *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double a = x[i], b = y[i], p = a * b;
        uint64_t up = dbits(p);
        unsigned ep = (unsigned)(up >> 52) & 0x7ff;
        unsigned ea = (unsigned)(dbits(a) >> 52) & 0x7ff, eb = (unsigned)(dbits(b) >> 52) & 0x7ff;
        if (ep - 63u > 2040u - 63u || ea > 2017u || eb > 2017u) {
            drift_xacc_add_prod(acc, a, b);
            continue;
        }
        double ca = 0x1.0000002p27 * a, cb = 0x1.0000002p27 * b; /* 2^27 + 1 */
        double ah = ca - (ca - a), bh = cb - (cb - b);
        double al = a - ah, bl = b - bh;
        double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
        uint64_t ue = dbits(e);
        unsigned ee = (unsigned)(ue >> 52) & 0x7ff;
        uint64_t mp = (up & FRAC_MASK) | HIDDEN_BIT, sp = up >> 63;
        uint64_t me = (ue & FRAC_MASK) | ((uint64_t)(ee != 0) << 52), se = ue >> 63;
        g->slot[ep] += (int64_t)((mp ^ (0 - sp)) + sp);
        g->slot[ee] += (int64_t)((me ^ (0 - se)) + se);
    }
    flush_all(acc, g, 0);
}

static void dot_bulk(drift_xacc_t *acc, const double *x, const double *y, size_t n)
{
    dot_work_t *w = calloc(1, sizeof *w);
    if (!w) {
        for (size_t i = 0; i < n; i++) drift_xacc_add_prod(acc, x[i], y[i]);
        return;
    }
    for (uint64_t e = 47; e <= 2046; e++) { /* 2^(1070 - e): biased exponent 2093 - e */
        uint64_t b = (2093 - e) << 52;
        memcpy(&w->scale[e], &b, sizeof b);
    }
    const size_t block = (size_t)DOT_LANES * DOT_BLOCK;
    for (size_t b0 = 0; b0 < n; b0 += block) {
        size_t b1 = n - b0 < block ? n : b0 + block;
        for (size_t s0 = b0; s0 < b1; s0 += DOT_SUB) {
            size_t s1 = b1 - s0 < DOT_SUB ? b1 : s0 + DOT_SUB;
            if (or_bits(x + s0, y + s0, s1 - s0) & SHORT_MASK) {
                dot_general(acc, &w->general, x + s0, y + s0, s1 - s0);
                continue;
            }
#define DOT_TERM(k, j)                                                           \
    do {                                                                         \
        double p = x[j] * y[j];                                                  \
        unsigned e = (unsigned)(dbits(p) >> 52) & 0x7ff;                         \
        if (__builtin_expect(e - 47u > 2046u - 47u, 0))                          \
            drift_xacc_add_prod(acc, x[j], y[j]);                                \
        else                                                                     \
            w->lane[k].slot[e] += (int64_t)(p * w->scale[e]); /* exact integer */ \
    } while (0)
            size_t i = s0;
            for (; i + DOT_LANES <= s1; i += DOT_LANES) {
                DOT_TERM(0, i);
                DOT_TERM(1, i + 1);
                DOT_TERM(2, i + 2);
                DOT_TERM(3, i + 3);
            }
            for (; i < s1; i++) DOT_TERM(0, i);
#undef DOT_TERM
        }
        /* slot e holds a multiple of 2^(e - 1070) = 2^(e - 1075 + 5) */
        for (int k = 0; k < DOT_LANES; k++) flush_all(acc, &w->lane[k], 5);
    }
    free(w);
}

int drift_exact_sum(double *out, const double *x, size_t n, drift_format_t f, drift_mode_t m)
{
    if (!out || (!x && n) || !mode_ok(f, m)) return DRIFT_EINVAL;
    drift_xacc_t acc;
    drift_xacc_init(&acc);
    if (n < BULK_MIN)
        for (size_t i = 0; i < n; i++) drift_xacc_add(&acc, x[i]);
    else
        sum_bulk(&acc, x, n);
    if (!acc.nan && !acc.inf && drift_xacc_sign(&acc) == 0) {
        acc.zstate = ZS_EMPTY;
        zstate_of_sum(&acc, x, n);
    }
    *out = drift_xacc_round(&acc, f, m);
    return DRIFT_OK;
}

int drift_exact_dot(double *out, const double *a, const double *b, size_t n, drift_format_t f, drift_mode_t m)
{
    if (!out || ((!a || !b) && n) || !mode_ok(f, m)) return DRIFT_EINVAL;
    drift_xacc_t acc;
    drift_xacc_init(&acc);
    if (n < BULK_MIN)
        for (size_t i = 0; i < n; i++) drift_xacc_add_prod(&acc, a[i], b[i]);
    else
        dot_bulk(&acc, a, b, n);
    if (!acc.nan && !acc.inf && drift_xacc_sign(&acc) == 0) {
        acc.zstate = ZS_EMPTY;
        zstate_of_dot(&acc, a, b, n);
    }
    *out = drift_xacc_round(&acc, f, m);
    return DRIFT_OK;
}

/* ---- MPFR path -------------------------------------------------------------------- */

/* Output precisions at which mpfr_sum is exact: a sum of n <= 2^64 doubles is a multiple
 * of 2^-1074 below 2^1088 (2162 bits); of products, a multiple of 2^-2148 below 2^2112
 * (4260 bits). */
#define SUM_EXACT_PREC 2200
#define DOT_EXACT_PREC 4300

static mpfr_rnd_t mpfr_rnd(drift_mode_t m)
{
    switch (m) {
    case DRIFT_RZ: return MPFR_RNDZ;
    case DRIFT_RU: return MPFR_RNDU;
    case DRIFT_RD: return MPFR_RNDD;
    default: return MPFR_RNDN;
    }
}

double drift_mpfr_to_format(mpfr_srcptr x, drift_format_t f, drift_mode_t m)
{
    if (!mode_ok(f, m)) return NAN;
    const drift_format_info_t *fi = drift_format_info(f);
    if (mpfr_nan_p(x)) return NAN;
    int neg = mpfr_signbit(x) != 0;
    if (mpfr_inf_p(x)) {
        double r = fi->has_inf ? INFINITY : NAN; /* e4m3 has no infinity: NaN */
        return neg ? -r : r;
    }
    if (mpfr_zero_p(x)) return neg ? -0.0 : 0.0;

    /* |x| in [2^E, 2^(E+1)); below 2^emin the format keeps fewer bits (subnormals). */
    long E = (long)mpfr_get_exp(x) - 1;
    long peff = fi->p - (E < fi->emin ? fi->emin - E : 0);
    double r;
    if (peff >= 1) {
        mpfr_rnd_t rnd = mpfr_rnd(m);
        /* ties away: x is a tie exactly when it needs one bit more than kept */
        if (m == DRIFT_RNA) rnd = (long)mpfr_min_prec(x) == peff + 1 ? MPFR_RNDA : MPFR_RNDN;
        mpfr_t y;
        mpfr_init2(y, (mpfr_prec_t)peff);
        mpfr_set(y, x, rnd);
        /* Overflow is judged on the value rounded with unbounded exponent, as IEEE 754
         * and drift_round_generic do; e4m3 overflows above 448, its largest value. */
        if (mpfr_cmpabs_ui(y, 0) > 0 && mpfr_get_exp(y) > fi->emax + 1) {
            r = INFINITY;
        } else {
            r = fabs(mpfr_get_d(y, MPFR_RNDN)); /* exact: p <= 53 bits inside the range */
        }
        mpfr_clear(y);
        if (r > fi->max_finite) {
            int to_max = m == DRIFT_RZ || (m == DRIFT_RU && neg) || (m == DRIFT_RD && !neg);
            r = to_max ? fi->max_finite : (fi->has_inf ? INFINITY : NAN);
        }
    } else {
        /* |x| < min_subnormal: the result is 0 or min_subnormal; compare with the half */
        mpfr_t ax;
        mpfr_init2(ax, mpfr_get_prec(x));
        mpfr_abs(ax, x, MPFR_RNDN);
        int c = mpfr_cmp_ui_2exp(ax, 1, fi->emin - fi->p); /* vs min_subnormal / 2 */
        mpfr_clear(ax);
        int up = 0;
        switch (m) {
        case DRIFT_RNE: up = c > 0; break; /* a tie goes to 0, the even neighbour */
        case DRIFT_RNA: up = c >= 0; break;
        case DRIFT_RU: up = !neg; break;
        case DRIFT_RD: up = neg; break;
        default: break;
        }
        r = up ? fi->min_subnormal : 0.0;
    }
    return neg ? -r : r;
}

/* n MPFR numbers of precision prec in one allocation (mpfr's custom interface), so that
 * the MPFR path is timed on arithmetic, not on a million mallocs. */
typedef struct {
    mpfr_t *v;
    mpfr_ptr *p;
    void *mem;
} mpfr_vec_t;

static int vec_init(mpfr_vec_t *vec, size_t n, mpfr_prec_t prec)
{
    size_t sz = mpfr_custom_get_size(prec);
    vec->v = NULL;
    vec->p = NULL;
    vec->mem = NULL;
    if (n > SIZE_MAX / (sz + sizeof(mpfr_t) + sizeof(mpfr_ptr))) return DRIFT_ENOMEM;
    vec->v = malloc((n ? n : 1) * sizeof(mpfr_t));
    vec->p = malloc((n ? n : 1) * sizeof(mpfr_ptr));
    vec->mem = malloc((n ? n : 1) * sz);
    if (!vec->v || !vec->p || !vec->mem) {
        free(vec->v);
        free(vec->p);
        free(vec->mem);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        void *limbs = (char *)vec->mem + i * sz;
        mpfr_custom_init(limbs, prec);
        mpfr_custom_init_set(vec->v[i], MPFR_ZERO_KIND, 0, prec, limbs);
        vec->p[i] = vec->v[i];
    }
    return DRIFT_OK;
}

static void vec_free(mpfr_vec_t *vec)
{
    free(vec->v);
    free(vec->p);
    free(vec->mem); /* custom-interface numbers own no memory of their own */
}

/* Rounds the exact sum of vec once; the mode passed to mpfr_sum only decides the sign
 * of an exact zero (IEEE 754 6.3), because the sum itself is exact at prec. */
static int sum_vec(double *out, mpfr_vec_t *vec, size_t n, mpfr_prec_t prec, drift_format_t f, drift_mode_t m)
{
    mpfr_t s;
    mpfr_init2(s, prec);
    int t = mpfr_sum(s, vec->p, (unsigned long)n, m == DRIFT_RD ? MPFR_RNDD : MPFR_RNDN);
    int rc = t == 0 ? DRIFT_OK : DRIFT_ERANGE; /* cannot happen: prec covers the range */
    *out = drift_mpfr_to_format(s, f, m);
    mpfr_clear(s);
    return rc;
}

int drift_exact_sum_mpfr(double *out, const double *x, size_t n, drift_format_t f, drift_mode_t m)
{
    if (!out || (!x && n) || !mode_ok(f, m)) return DRIFT_EINVAL;
    mpfr_vec_t vec;
    int rc = vec_init(&vec, n, 53);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) mpfr_set_d(vec.v[i], x[i], MPFR_RNDN); /* exact */
    rc = sum_vec(out, &vec, n, SUM_EXACT_PREC, f, m);
    vec_free(&vec);
    return rc;
}

int drift_exact_dot_mpfr(double *out, const double *a, const double *b, size_t n, drift_format_t f, drift_mode_t m)
{
    if (!out || ((!a || !b) && n) || !mode_ok(f, m)) return DRIFT_EINVAL;
    mpfr_vec_t vec;
    int rc = vec_init(&vec, n, 106); /* a product of two 53-bit numbers is exact in 106 */
    if (rc) return rc;
    mpfr_t ma, mb;
    mpfr_inits2(53, ma, mb, (mpfr_ptr)0);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(ma, a[i], MPFR_RNDN);
        mpfr_set_d(mb, b[i], MPFR_RNDN);
        mpfr_mul(vec.v[i], ma, mb, MPFR_RNDN); /* exact */
    }
    mpfr_clears(ma, mb, (mpfr_ptr)0);
    rc = sum_vec(out, &vec, n, DOT_EXACT_PREC, f, m);
    vec_free(&vec);
    return rc;
}

/* ---- correctly rounded elementary results (Ziv) ----------------------------------- */

/* Working precisions tried: 64, 128, ..., ZIV_MAX_PREC bits. Hard cases of exp in double
 * need about 160 bits (Lefèvre & Muller); the error analyses below hold up to 2048. */
#define ZIV_MIN_PREC 64
#define ZIV_MAX_PREC 2048
/* exp(d) for d < FAR_BELOW is below 2^-2885: such terms are left out of the sums and
 * counted in the error bound instead (n of them add at most n * 2^-2885 <= 2^-2821). */
#define FAR_BELOW (-2000.0)

/* y approximates a real value v with |v - y| <= 2^(EXP(y) - err), v never a double nor a
 * midpoint between doubles. If every value in that interval rounds (RNE) to the same
 * double, stores it and returns 1. */
static int ziv_decide(double *out, mpfr_srcptr y, mpfr_exp_t err)
{
    if (mpfr_zero_p(y) || !mpfr_number_p(y)) return 0;
    long E = (long)mpfr_get_exp(y) - 1;
    long peff = 53 - (E < -1022 ? -1022 - E : 0);
    if (peff >= 1 && E <= 1023) {
        /* MPFR's documented test for nearest: directed rounding at one bit more */
        if (mpfr_can_round(y, err, MPFR_RNDN, MPFR_RNDZ, (mpfr_prec_t)peff + 1)) {
            *out = drift_mpfr_to_format(y, DRIFT_FP64, DRIFT_RNE);
            return 1;
        }
        /* That test is conservative when the interval straddles a double (softmax of
         * {0, 0, -1500} is 1/2 minus 2^-2165): the end test below decides such cases. */
    }
    /* Past the double range, below half the smallest subnormal, or straddling a double:
     * round both ends of the interval (rounding is monotone, so equal ends decide every
     * value between). */
    mpfr_prec_t pr = mpfr_get_prec(y) > err ? mpfr_get_prec(y) + 2 : (mpfr_prec_t)err + 2;
    mpfr_t lo, hi, eps;
    mpfr_inits2(pr, lo, hi, eps, (mpfr_ptr)0);
    mpfr_set_ui_2exp(eps, 1, mpfr_get_exp(y) - err, MPFR_RNDN);
    mpfr_sub(lo, y, eps, MPFR_RNDN); /* exact at pr bits */
    mpfr_add(hi, y, eps, MPFR_RNDN);
    double rl = drift_mpfr_to_format(lo, DRIFT_FP64, DRIFT_RNE);
    double rh = drift_mpfr_to_format(hi, DRIFT_FP64, DRIFT_RNE);
    mpfr_clears(lo, hi, eps, (mpfr_ptr)0);
    if (rl != rh || signbit(rl) != signbit(rh)) return 0;
    *out = rl;
    return 1;
}

int drift_exact_exp(double *out, double x)
{
    if (!out) return DRIFT_EINVAL;
    if (isnan(x)) {
        *out = x;
        return DRIFT_OK;
    }
    /* exp(0) = 1 is the only double argument with a rational result (Lindemann). */
    if (x == 0) {
        *out = 1.0;
        return DRIFT_OK;
    }
    /* exp(1000) > 2^1442 overflows, exp(-1000) < 2^-1442 is far below half the smallest
     * subnormal: no need to bother MPFR's exponent range with them. */
    if (x > 1000) {
        *out = INFINITY;
        return DRIFT_OK;
    }
    if (x < -1000) {
        *out = 0.0;
        return DRIFT_OK;
    }
    int rc = DRIFT_ERANGE;
    mpfr_t mx, y;
    mpfr_init2(mx, 53);
    mpfr_set_d(mx, x, MPFR_RNDN);
    mpfr_init2(y, ZIV_MIN_PREC);
    for (mpfr_prec_t w = ZIV_MIN_PREC; w <= ZIV_MAX_PREC; w *= 2) {
        mpfr_set_prec(y, w);
        mpfr_exp(y, mx, MPFR_RNDN); /* within half an ulp: 2^(EXP(y) - w - 1) */
        if (ziv_decide(out, y, w)) {
            rc = DRIFT_OK;
            break;
        }
    }
    mpfr_clears(mx, y, (mpfr_ptr)0);
    return rc;
}

/* Scan for NaN, +inf, the largest finite value and how many finite values there are. */
typedef struct {
    int nan, posinf;
    size_t nfinite;
    double max;
    int all_equal; /* every finite value equals max */
} scan_t;

static scan_t scan(const double *x, size_t n)
{
    scan_t s = {0, 0, 0, -INFINITY, 1};
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i])) s.nan = 1;
        else if (x[i] == INFINITY) s.posinf = 1;
        else if (x[i] != -INFINITY) {
            s.nfinite++;
            if (x[i] > s.max) s.max = x[i];
        }
    }
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && x[i] != s.max) s.all_equal = 0;
    return s;
}

/* d = x - max exactly (two doubles differ by a number of at most 2099 bits). */
static void exact_diff(mpfr_ptr d, double x, double max)
{
    double t = x - max, bv = t - x, e = (x - (t - bv)) + (-max - bv); /* TwoSum */
    if (e == 0) {
        mpfr_set_prec(d, 53);
        mpfr_set_d(d, t, MPFR_RNDN);
        return;
    }
    mpfr_t mx;
    mpfr_init2(mx, 53);
    mpfr_set_d(mx, max, MPFR_RNDN);
    mpfr_set_prec(d, 2200);
    mpfr_set_d(d, x, MPFR_RNDN);
    mpfr_sub(d, d, mx, MPFR_RNDN);
    mpfr_clear(mx);
}

/* The terms exp(x_i - max) at precision w for the near entries (far ones set to 0) and
 * s = their sum rounded to w bits: s = S * (1 + theta), |theta| <= 2^(2 - w), where S is
 * the exact sum of exp(x_i - max) over all i (analysis at drift_exact_logsumexp). */
static void exp_terms(mpfr_vec_t *vec, mpfr_ptr s, const double *x, size_t n, double max, mpfr_prec_t w)
{
    mpfr_t d;
    mpfr_init2(d, 53);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_prec(vec->v[i], w);
        if (isfinite(x[i]) && x[i] - max >= FAR_BELOW) {
            exact_diff(d, x[i], max);
            mpfr_exp(vec->v[i], d, MPFR_RNDN);
        } else {
            mpfr_set_zero(vec->v[i], 1);
        }
    }
    mpfr_clear(d);
    mpfr_set_prec(s, w);
    mpfr_sum(s, vec->p, (unsigned long)n, MPFR_RNDN);
}

static int vec_init_plain(mpfr_vec_t *vec, size_t n)
{
    vec->mem = NULL;
    vec->v = malloc((n ? n : 1) * sizeof(mpfr_t));
    vec->p = malloc((n ? n : 1) * sizeof(mpfr_ptr));
    if (!vec->v || !vec->p) {
        free(vec->v);
        free(vec->p);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        mpfr_init2(vec->v[i], ZIV_MIN_PREC);
        vec->p[i] = vec->v[i];
    }
    return DRIFT_OK;
}

static void vec_free_plain(mpfr_vec_t *vec, size_t n)
{
    for (size_t i = 0; i < n; i++) mpfr_clear(vec->v[i]);
    free(vec->v);
    free(vec->p);
}

/* Error analysis at working precision w (every MPFR operation rounds to nearest, so each
 * is off by at most 2^-w relative):
 *   s = S (1 + theta), |theta| <= 2^-w + 2^-w + 2^-2w + 2^-2821 <= 2^(2-w)
 *   l = log(s) (1 + d1): |l - log S| <= |log(1 + theta)| + 2^-w |log s|
 *                                    <= 2^(3-w) + 45 * 2^-w      (S <= n <= 2^64)
 *   r = (max + l) (1 + d2): |r - lse| <= 2^(EXP(r) - w - 1) + 53 * 2^-w
 *                                     <= 2^(max(EXP(r), 7) - w).
 * So err = w - max(0, 7 - EXP(r)) in ziv_decide's terms. The result is irrational unless
 * only one value is finite (Lindemann–Weierstrass), which is handled exactly. */
int drift_exact_logsumexp(double *out, const double *x, size_t n)
{
    if (!out || (!x && n)) return DRIFT_EINVAL;
    scan_t sc = scan(x, n);
    if (sc.nan) {
        *out = NAN;
        return DRIFT_OK;
    }
    if (sc.posinf) {
        *out = INFINITY;
        return DRIFT_OK;
    }
    if (sc.nfinite == 0) { /* log(0) */
        *out = -INFINITY;
        return DRIFT_OK;
    }
    if (sc.nfinite == 1) { /* log(exp(max)) exactly */
        *out = sc.max;
        return DRIFT_OK;
    }
    mpfr_vec_t vec;
    if (vec_init_plain(&vec, n)) return DRIFT_ENOMEM;
    int rc = DRIFT_ERANGE;
    mpfr_t s, mmax;
    mpfr_inits2(ZIV_MIN_PREC, s, (mpfr_ptr)0);
    mpfr_init2(mmax, 53);
    mpfr_set_d(mmax, sc.max, MPFR_RNDN);
    for (mpfr_prec_t w = ZIV_MIN_PREC; w <= ZIV_MAX_PREC; w *= 2) {
        exp_terms(&vec, s, x, n, sc.max, w);
        mpfr_log(s, s, MPFR_RNDN);
        mpfr_add(s, s, mmax, MPFR_RNDN);
        long e = mpfr_zero_p(s) ? 0 : (long)mpfr_get_exp(s);
        mpfr_exp_t err = w - (e < 7 ? 7 - e : 0);
        if (err > 0 && ziv_decide(out, s, err)) {
            rc = DRIFT_OK;
            break;
        }
    }
    mpfr_clears(s, mmax, (mpfr_ptr)0);
    vec_free_plain(&vec, n);
    return rc;
}

/* out[i] = exp(x_i - max) / S. With s as in exp_terms and the terms and the quotient
 * rounded to w bits, the relative error is at most 2^-w + 2^-w + 2^(2-w) + cross terms
 * <= 2^(3-w): err = w - 3. A far term is below e^-2000 / 1 and rounds to +0. The value
 * is irrational unless all finite inputs are equal (then it is 1/count, handled exactly):
 * any other x_j - x_i != 0 makes sum_j exp(x_j - x_i) transcendental. */
int drift_exact_softmax(double *out, const double *x, size_t n)
{
    if ((!out || !x) && n) return DRIFT_EINVAL;
    if (n == 0) return DRIFT_OK;
    scan_t sc = scan(x, n);
    if (sc.nan || sc.posinf || sc.nfinite == 0) { /* inf/inf and 0/0: undefined */
        for (size_t i = 0; i < n; i++) out[i] = NAN;
        return DRIFT_OK;
    }
    if (sc.all_equal) {
        mpfr_t q;
        mpfr_init2(q, 53);
        mpfr_set_ui(q, 1, MPFR_RNDN);
        mpfr_div_ui(q, q, (unsigned long)sc.nfinite, MPFR_RNDN); /* 1/count, normal: RNE */
        double v = mpfr_get_d(q, MPFR_RNDN);
        mpfr_clear(q);
        for (size_t i = 0; i < n; i++) out[i] = isfinite(x[i]) ? v : 0.0;
        return DRIFT_OK;
    }
    mpfr_vec_t vec;
    if (vec_init_plain(&vec, n)) return DRIFT_ENOMEM;
    unsigned char *todo = malloc(n);
    if (!todo) {
        vec_free_plain(&vec, n);
        return DRIFT_ENOMEM;
    }
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        todo[i] = isfinite(x[i]) && x[i] - sc.max >= FAR_BELOW;
        if (!todo[i]) out[i] = 0.0;
        left += todo[i];
    }
    mpfr_t s, q;
    mpfr_inits2(ZIV_MIN_PREC, s, q, (mpfr_ptr)0);
    for (mpfr_prec_t w = ZIV_MIN_PREC; w <= ZIV_MAX_PREC && left; w *= 2) {
        exp_terms(&vec, s, x, n, sc.max, w);
        mpfr_set_prec(q, w);
        for (size_t i = 0; i < n; i++) {
            if (!todo[i]) continue;
            mpfr_div(q, vec.v[i], s, MPFR_RNDN);
            if (ziv_decide(&out[i], q, w - 3)) {
                todo[i] = 0;
                left--;
            }
        }
    }
    mpfr_clears(s, q, (mpfr_ptr)0);
    vec_free_plain(&vec, n);
    free(todo);
    return left ? DRIFT_ERANGE : DRIFT_OK;
}
