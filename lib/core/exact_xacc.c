/* exact_xacc.c — the fast exact path: a superaccumulator and the bulk sum / dot loops
 * that feed it (the MPFR path is exact_mpfr.c, exp / softmax exact_func.c).
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
#include "exact_impl.h"
#include "drift.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DIGIT_MASK 0xffffffffULL
#define FRAC_MASK 0x000fffffffffffffULL
#define HIDDEN_BIT 0x0010000000000000ULL
#define NORMALISE_EVERY (1 << 30) /* digit drift < 2^30 * 1.5 * 2^32 < 2^63 */

#define dbits exact_dbits
#define mode_ok exact_mode_ok

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

