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
 * superaccumulator every block, before any of them can overflow. Faster still, runs of
 * terms whose exponents lie in a window are summed exactly in SIMD floating point by
 * Rump's extraction, level by level, with no integer work per term (see "the extraction
 * path" below); the slots take what that path does not.
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
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define DIGIT_MASK 0xffffffffULL
#define FRAC_MASK 0x000fffffffffffffULL
#define HIDDEN_BIT 0x0010000000000000ULL
#define NORMALISE_EVERY (1 << 30) /* digit drift < 2^30 * 1.5 * 2^32 < 2^63 */

#define dbits exact_dbits
#define mode_ok exact_mode_ok

/* ---- the superaccumulator ------------------------------------------------------- */

void drift_xacc_init(drift_xacc_t *a) { memset(a, 0, sizeof *a); }

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

/* A normalised copy holding |value| (digits in [0, 2^32)); returns the sign (-1, 0, +1) of
 * the value and, when it is not 0, the lowest and highest nonzero digits of c in *lo, *hi.
 * Only the span of nonzero digits is walked: carrying through all DRIFT_XACC_DIGITS one
 * after another is most of the cost of a read otherwise (a short dot product touches a
 * dozen digits). Above the span the carry is 0 or -1 once a digit or two have taken it;
 * -1 means the value is R - 2^(32 s) with R the digits below s, so |value| = 2^(32 s) - R. */
static int magnitude(drift_xacc_t *c, const drift_xacc_t *a, int *lo, int *hi)
{
    int l = 0, h = DRIFT_XACC_DIGITS - 1;
    while (l < DRIFT_XACC_DIGITS && !a->d[l]) l++;
    if (l == DRIFT_XACC_DIGITS) return 0;
    while (!a->d[h]) h--;
    memset(c->d, 0, sizeof c->d);
    int64_t carry = 0;
    int i = l;
    for (; i < DRIFT_XACC_DIGITS && (i <= h || (carry != 0 && carry != -1)); i++) {
        int64_t v = a->d[i] + carry;
        carry = v >> 32;
        c->d[i] = (int64_t)((uint64_t)v & DIGIT_MASK);
    }
    int neg = carry < 0;
    if (neg) { /* 2^(32 i) - R: negate the digits with borrows, then the 2^(32 i) */
        int64_t b = 0;
        for (int j = l; j < i; j++) {
            int64_t v = b - c->d[j];
            b = v >> 32;
            c->d[j] = (int64_t)((uint64_t)v & DIGIT_MASK);
        }
        if (i < DRIFT_XACC_DIGITS) c->d[i] = 1 + b; /* 0 unless R was 0 */
    }
    int t = i < DRIFT_XACC_DIGITS ? i : DRIFT_XACC_DIGITS - 1;
    while (t >= l && !c->d[t]) t--;
    if (t < l) return 0;
    while (!c->d[l]) l++;
    *lo = l;
    *hi = t;
    return neg ? -1 : 1;
}

int drift_xacc_sign(const drift_xacc_t *a)
{
    if (a->nan) return 0;
    if (a->inf) return a->inf;
    drift_xacc_t c;
    int lo, hi;
    return magnitude(&c, a, &lo, &hi);
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

static int sticky_below(const drift_xacc_t *c, int k, int lo)
{
    if (k <= 0) return 0;
    int i = k >> 5;
    for (int j = lo; j < i; j++) /* the digits below lo are zero */
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
    int lo, t;
    int s = magnitude(&c, a, &lo, &t);
    if (s == 0) return zero_result(a->zstate, m);
    int neg = s < 0;
    int top = 32 * t + 31 - __builtin_clz((unsigned)c.d[t]); /* leading bit index */
    int etop = top + DRIFT_XACC_LSB;                         /* its exponent */
    int lsb = etop - 52 > -1074 ? etop - 52 : -1074;         /* double's quantum there */
    int k = lsb - DRIFT_XACC_LSB;
    uint64_t mant = bits_from(&c, k);
    unsigned round = bit_at(&c, k - 1);
    int sticky = sticky_below(&c, k - 1, lo);
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

/* Below this length the per-value superaccumulator is as fast as the slots. */
#define BULK_MIN 64

/* The slots (Neal's large superaccumulator, in xsum's layout): one uint64 per value of the
 * top 12 bits of a double, sign and exponent field, so that the index is one shift and no
 * negation is needed. A slot adds the 53-bit integer mantissas (hidden bit included) of
 * the values it is given: 2048 of them stay below 2048 * 2^53 = 2^64. SLOT_LANES arrays
 * are used in turn, so that consecutive values with the same exponent do not wait on each
 * other's store (a single array runs at store-forwarding latency). The work area belongs
 * to the thread and is all zero between calls: every flush clears what it reads, and only
 * the exponent range a block touched is flushed. */
#define SLOT_LANES 4
#define NSLOT 4096
#define LANE_CAP 2048 /* additions a lane's slot takes between flushes */
#define SIGN_IDX 0x800u

typedef struct {
    uint64_t slot[SLOT_LANES][NSLOT];
} work_t;

static _Thread_local work_t work;

/* Adds slot e and slot e | sign (each a sum of mantissas with units 2^((e ? e : 1) - 1075
 * + shift)) into acc and clears both. */
static inline void flush_pair(drift_xacc_t *acc, uint64_t *slot, unsigned e, int shift)
{
    uint64_t p = slot[e], q = slot[e | SIGN_IDX];
    if (!(p | q)) return;
    slot[e] = 0;
    slot[e | SIGN_IDX] = 0;
    int pos = (int)(e ? e : 1) - 1075 + shift - DRIFT_XACC_LSB;
    if (p) add_at(acc, p, 0, pos);
    if (q) add_at(acc, q, 1, pos);
}

static void flush_range(drift_xacc_t *acc, uint64_t *slot, unsigned lo, unsigned hi, int shift)
{
    for (unsigned e = lo; e <= hi; e++) flush_pair(acc, slot, e, shift);
}

/* Flushes every lane. A block of fewer than LANE_CAP additions in all (short vectors) may
 * add its lanes first, since their total is below LANE_CAP * 2^53 = 2^64: one superaccumulator
 * addition per exponent instead of one per lane. */
static void flush_lanes(drift_xacc_t *acc, work_t *w, unsigned lo, unsigned hi, size_t adds)
{
    if (adds >= LANE_CAP) {
        for (int k = 0; k < SLOT_LANES; k++) flush_range(acc, w->slot[k], lo, hi, 0);
        return;
    }
    for (unsigned e = lo; e <= hi; e++) {
        uint64_t p = 0, q = 0;
        for (int k = 0; k < SLOT_LANES; k++) {
            p += w->slot[k][e];
            q += w->slot[k][e | SIGN_IDX];
            w->slot[k][e] = w->slot[k][e | SIGN_IDX] = 0;
        }
        int pos = (int)(e ? e : 1) - 1075 - DRIFT_XACC_LSB;
        if (p) add_at(acc, p, 0, pos);
        if (q) add_at(acc, q, 1, pos);
    }
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

/* The main loops add every value as if it were normal and finite. Exponent fields 0
 * (zeros, subnormals: no hidden bit) and 0x7ff (inf, NaN) are rare, so instead of a test
 * per value the block's exponent range is tracked (min / max of the bits shifted left
 * once, which drops the sign), and a block that reached either end has those four slots
 * cleared in every lane and its values with such exponents redone exactly. */
static void clear_edge_slots(work_t *w)
{
    for (int k = 0; k < SLOT_LANES; k++) {
        w->slot[k][0] = w->slot[k][SIGN_IDX] = 0;
        w->slot[k][0x7ff] = w->slot[k][0x7ff | SIGN_IDX] = 0;
    }
}

/* The exponent-field range [*lo, *hi] of x[i] (y == NULL) or of the products x[i] * y[i]
 * (rounded as double, as the main loop rounds them); returns the OR of the bits of every
 * x[i] and y[i] (0 when y == NULL). A pass of its own over data that is
 * in L1 anyway: with SSE2 it costs a third of tracking min and max in the main loop. */
#ifdef __SSE2__
static uint64_t exp_range(const double *x, const double *y, size_t n, unsigned *lo, unsigned *hi)
{
    /* the top 16 bits of each double (lanes 3 and 7): exponent << 4 once the sign and
     * the 4 fraction bits are masked off; other lanes held neutral (0 for max, 0x7fff
     * for min) */
    const __m128i top = _mm_set_epi16(0x7ff0, 0, 0, 0, 0x7ff0, 0, 0, 0);
    const __m128i rest = _mm_set_epi16(0, 0x7fff, 0x7fff, 0x7fff, 0, 0x7fff, 0x7fff, 0x7fff);
    __m128i mx0 = _mm_setzero_si128(), mx1 = mx0, mn0 = _mm_set1_epi16(0x7fff), mn1 = mn0, bits = mx0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128d a0 = _mm_loadu_pd(x + i), a1 = _mm_loadu_pd(x + i + 2);
        if (y) {
            __m128d b0 = _mm_loadu_pd(y + i), b1 = _mm_loadu_pd(y + i + 2);
            bits = _mm_or_si128(bits, _mm_castpd_si128(_mm_or_pd(_mm_or_pd(a0, a1), _mm_or_pd(b0, b1))));
            a0 = _mm_mul_pd(a0, b0);
            a1 = _mm_mul_pd(a1, b1);
        }
        __m128i t0 = _mm_and_si128(_mm_castpd_si128(a0), top), t1 = _mm_and_si128(_mm_castpd_si128(a1), top);
        mx0 = _mm_max_epi16(mx0, t0);
        mx1 = _mm_max_epi16(mx1, t1);
        mn0 = _mm_min_epi16(mn0, _mm_or_si128(t0, rest));
        mn1 = _mm_min_epi16(mn1, _mm_or_si128(t1, rest));
    }
    int16_t a[8], b[8];
    _mm_storeu_si128((__m128i *)a, _mm_max_epi16(mx0, mx1));
    _mm_storeu_si128((__m128i *)b, _mm_min_epi16(mn0, mn1));
    unsigned l = (unsigned)b[3] < (unsigned)b[7] ? (unsigned)b[3] : (unsigned)b[7];
    unsigned h = (unsigned)a[3] > (unsigned)a[7] ? (unsigned)a[3] : (unsigned)a[7];
    l >>= 4;
    h >>= 4;
    if (i == 0) l = 0x7ff, h = 0; /* nothing seen yet */
    uint64_t or2[2];
    _mm_storeu_si128((__m128i *)or2, bits);
    uint64_t r = or2[0] | or2[1];
    for (; i < n; i++) {
        unsigned e = (unsigned)(dbits(y ? x[i] * y[i] : x[i]) >> 52) & 0x7ff;
        l = e < l ? e : l;
        h = e > h ? e : h;
        if (y) r |= dbits(x[i]) | dbits(y[i]);
    }
    *lo = l;
    *hi = h;
    return r;
}
#else
static uint64_t exp_range(const double *x, const double *y, size_t n, unsigned *lo, unsigned *hi)
{
    unsigned l = 0x7ff, h = 0;
    uint64_t r = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned e = (unsigned)(dbits(y ? x[i] * y[i] : x[i]) >> 52) & 0x7ff;
        l = e < l ? e : l;
        h = e > h ? e : h;
        if (y) r |= dbits(x[i]) | dbits(y[i]);
    }
    *lo = l;
    *hi = h;
    return r;
}
#endif

/* Products of two values with at most 24 significant bits (every fp32, tf32, fp16, bf16
 * and fp8 value; "short" below) have at most 48 bits, so their double product p is exact
 * wherever it is normal: it goes to the slots like a summand, one multiplication per pair.
 * Products that are zero, subnormal (maybe rounded), infinite or NaN land in the edge
 * slots and are redone by drift_xacc_add_prod.
 *
 * Whether the inputs are short is learnt per sub-block by the pass that finds the
 * exponent range, so the main loop carries no test for it; wider sub-blocks take the
 * TwoProduct path (dot_general) into the same slots, two additions per pair: a block is
 * half a lane's capacity. */
#define DOT_BLOCK ((size_t)SLOT_LANES * LANE_CAP / 2)
#define DOT_SUB 512              /* sub-block: 8 KiB of each input, stays in L1 for both passes */
#define SHORT_MASK 0x1fffffffULL /* the 29 mantissa bits a 24-bit value leaves clear */

/* A pair whose TwoProduct p + e = a * b is exact with e normal or zero: p's exponent field
 * in [123, 2040], i.e. 2^-900 <= |p| < 2^1018. e is a multiple of ulp(a) * ulp(b) >=
 * 2^(e_a + e_b - 104) >= 2^-1005 (Boldo & Muller's condition e_a + e_b >= emin + p - 1
 * with room to spare), and no overflow. Others go to drift_xacc_add_prod. */
#define GEN_OK(ep) ((ep)-123u <= 2040u - 123u)

static inline void gen_add(uint64_t *g, double p, double e, unsigned *lo, unsigned *hi)
{
    uint64_t up = dbits(p), ue = dbits(e);
    unsigned ep = (unsigned)(up >> 52) & 0x7ff, ee = (unsigned)(ue >> 52) & 0x7ff;
    g[up >> 52] += (up & FRAC_MASK) | HIDDEN_BIT;
    g[ue >> 52] += (ue & FRAC_MASK) | ((uint64_t)(ee != 0) << 52); /* e = 0 adds nothing */
    unsigned el = ee ? ee : ep;
    *hi = ep > *hi ? ep : *hi;
    *lo = el < *lo ? el : *lo;
}

/* TwoProduct by FMA where the CPU has it (one instruction: libm's fma is a call), else by
 * Dekker's splitting (Veltkamp, 2^27 + 1; exact for |a|, |b| < 2^995 besides GEN_OK).
 * Pair i goes to lane i mod SLOT_LANES (the caller's sub-blocks start at multiples of 4). */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define HAVE_FMA_CLONE 1
__attribute__((target("fma"))) static void dot_general_fma(
    drift_xacc_t *acc, work_t *w, const double *x, const double *y, size_t n, unsigned *lo, unsigned *hi)
{
    unsigned l = *lo, h = *hi; /* in registers: the slot stores could alias *lo, *hi */
    for (size_t i = 0; i < n; i++) {
        double a = x[i], b = y[i], p = a * b;
        unsigned ep = (unsigned)(dbits(p) >> 52) & 0x7ff;
        if (!GEN_OK(ep)) {
            drift_xacc_add_prod(acc, a, b);
            continue;
        }
        gen_add(w->slot[i & (SLOT_LANES - 1)], p, __builtin_fma(a, b, -p), &l, &h);
    }
    *lo = l;
    *hi = h;
}
#endif

static void dot_general_dekker(
    drift_xacc_t *acc, work_t *w, const double *x, const double *y, size_t n, unsigned *lo, unsigned *hi)
{
    unsigned l = *lo, h = *hi; /* in registers: the slot stores could alias *lo, *hi */
    for (size_t i = 0; i < n; i++) {
        double a = x[i], b = y[i], p = a * b;
        unsigned ep = (unsigned)(dbits(p) >> 52) & 0x7ff;
        unsigned ea = (unsigned)(dbits(a) >> 52) & 0x7ff, eb = (unsigned)(dbits(b) >> 52) & 0x7ff;
        if (!GEN_OK(ep) || ea > 2017u || eb > 2017u) {
            drift_xacc_add_prod(acc, a, b);
            continue;
        }
        double ca = 0x1.0000002p27 * a, cb = 0x1.0000002p27 * b; /* 2^27 + 1 */
        double ah = ca - (ca - a), bh = cb - (cb - b);
        double al = a - ah, bl = b - bh;
        double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
        gen_add(w->slot[i & (SLOT_LANES - 1)], p, e, &l, &h);
    }
    *lo = l;
    *hi = h;
}

static void dot_general(
    drift_xacc_t *acc, work_t *w, const double *x, const double *y, size_t n, unsigned *lo, unsigned *hi)
{
#ifdef HAVE_FMA_CLONE
    static int has_fma = -1; /* a benign race: every thread computes the same value */
    if (has_fma < 0) has_fma = __builtin_cpu_supports("fma") ? 1 : 0;
    if (has_fma) {
        dot_general_fma(acc, w, x, y, n, lo, hi);
        return;
    }
#endif
    dot_general_dekker(acc, w, x, y, n, lo, hi);
}

/* ---- the extraction path: whole sub-blocks in SIMD floating point ------------------- *
 *
 * When a sub-block's terms lie in a known exponent window, they are summed exactly with no
 * integer work per term, by Rump's ExtractScalar (Rump, Ogita & Oishi, "Accurate floating-
 * point summation part I", SISC 31(1), 2008) applied level by level. With sigma = 1.5 * 2^k
 * and |r| <= 2^(k-1), fl(sigma + r) lies in [2^k, 2^(k+1)] where the spacing is
 * u = 2^(k-52), so q = fl(fl(sigma + r) - sigma) is r rounded to a multiple of u (the
 * subtraction is exact: both are multiples of u less than 2^(k-1) apart), and r - q is
 * exact (a multiple of ulp(r) no larger than |r|) with |r - q| <= u / 2. A lane adds at
 * most 2^B such q, each |q| <= 2^E + u/2 with k = E + B: every partial sum is a multiple
 * of u below 2^(k+1) = 2^53 u, so the lane's sum is exact in any order. The remainders
 * (|r| <= 2^(k-53)) go to the next level, whose E is k - 53.
 *
 * Every term is a multiple of a quantum Q = 2^qe known from the smallest exponent in the
 * sub-block (products of <= 24-bit values: M * 2^s with M < 2^48, so s >= lead - 47;
 * TwoProduct parts: M < 2^106 and the exact product's lead is at most one below p's, so
 * s >= lead(p) - 106; summands: their own ulp). Once 2^(E+B) <= 2^(qe+53), a lane can add
 * the remainders themselves exactly (multiples of Q below 2^53 Q): that is the last level,
 * so a sub-block whose terms span the usual 60-120 bits takes two or three levels, about
 * five to nine flops a term, four terms per instruction. At the end the lanes of each
 * level are integers in units of u (|lane / u| <= 2^53), their sum over eight lanes fits
 * an int64, and one add_at per level puts it into the superaccumulator.
 *
 * The path takes sub-blocks with no zero, subnormal, infinite or NaN term, whose exponents
 * keep sigma finite (k <= 1023) and Q >= 2^-1000 (so every remainder and TwoProduct error
 * is a normal double) and that need at most EX_LMAX levels; the others take the slots. */
#if defined(HAVE_FMA_CLONE)
#include <immintrin.h>
#define HAVE_EXTRACT 1
#define EX_LANES 8 /* two 4-wide accumulators per level */
#define EX_LMAX 4

typedef struct {
    int levels;
    int unit[EX_LMAX];     /* a level's lanes are integers in units of 2^unit */
    double sigma[EX_LMAX]; /* 1.5 * 2^k for the extraction levels */
} ex_plan_t;

/* The levels for a sub-block with exponent fields in [lo, hi]; B = log2 of the terms a lane
 * adds per level; qe from the quantum rule above. 0 when the path does not apply. */
static int ex_plan(ex_plan_t *pl, unsigned lo, unsigned hi, int B, int qe)
{
    if (lo == 0 || hi > 2030 || qe < -1000) return 0;
    int E = (int)hi - 1022; /* every term is below 2^E in magnitude */
    for (int j = 0; j < EX_LMAX; j++) {
        int k = E + B;
        if (k - 53 <= qe) { /* remainders are multiples of 2^qe below 2^(qe + 53) */
            pl->levels = j + 1;
            pl->unit[j] = qe;
            return 1;
        }
        uint64_t sb = ((uint64_t)(k + 1023) << 52) | (1ULL << 51); /* 1.5 * 2^k */
        memcpy(&pl->sigma[j], &sb, sizeof sb);
        pl->unit[j] = k - 52;
        E = k - 53;
    }
    return 0;
}

static inline double ex_pow2(int k) /* 2^k for -1022 <= k <= 1023 */
{
    uint64_t b = (uint64_t)(k + 1023) << 52;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* Scalar form of one term for the tail (the same exact operations). */
#define EX_SCALAR_LEVELS(r, first)                           \
    do {                                                     \
        for (int j = (first); j < L - 1; j++) {              \
            double q_ = ((r) + pl->sigma[j]) - pl->sigma[j]; \
            (r) -= q_;                                       \
            lane[j][i & (EX_LANES - 1)] += q_;               \
        }                                                    \
        lane[L - 1][i & (EX_LANES - 1)] += (r);              \
    } while (0)

/* Sums the sub-block's terms (x[i] * y[i] and, when general, its TwoProduct error; x[i]
 * when y == NULL) into lane[level][i mod EX_LANES]. L and general are constants at every
 * call, so each instance is unrolled into straight-line SIMD. */
__attribute__((target("avx2,fma"), always_inline)) static inline void ex_kernel(double lane[EX_LMAX][EX_LANES],
    const double *x, const double *y, size_t n, const ex_plan_t *pl, const int L, const int general)
{
    __m256d acc[EX_LMAX][2], sg[EX_LMAX];
    for (int j = 0; j < L; j++) {
        acc[j][0] = acc[j][1] = _mm256_setzero_pd();
        sg[j] = _mm256_set1_pd(j < L - 1 ? pl->sigma[j] : 0.0);
    }
    /* The TwoProduct error is below u/2 of level 0 (|e| <= ulp(p)/2), so its level-0 part
     * is zero: it joins at level 1 (or at the last level when there is only one). */
    const int efirst = L > 1 ? 1 : 0;
    size_t i = 0;
    for (; i + EX_LANES <= n; i += EX_LANES) {
        /* one cache line of the next sub-block a step, which exp_range reads first (a
         * prefetch past the end never faults) */
        __builtin_prefetch(x + i + n);
        if (y) __builtin_prefetch(y + i + n);
        for (int h = 0; h < 2; h++) {
            __m256d a = _mm256_loadu_pd(x + i + 4 * h), r = a, e = _mm256_setzero_pd();
            if (y) {
                __m256d b = _mm256_loadu_pd(y + i + 4 * h);
                r = _mm256_mul_pd(a, b);
                if (general) e = _mm256_fmsub_pd(a, b, r);
            }
            for (int j = 0; j < L - 1; j++) {
                __m256d q = _mm256_sub_pd(_mm256_add_pd(r, sg[j]), sg[j]);
                r = _mm256_sub_pd(r, q);
                acc[j][h] = _mm256_add_pd(acc[j][h], q);
                if (general && j >= efirst) {
                    __m256d qe = _mm256_sub_pd(_mm256_add_pd(e, sg[j]), sg[j]);
                    e = _mm256_sub_pd(e, qe);
                    acc[j][h] = _mm256_add_pd(acc[j][h], qe);
                }
            }
            acc[L - 1][h] = _mm256_add_pd(acc[L - 1][h], r);
            if (general) acc[L - 1][h] = _mm256_add_pd(acc[L - 1][h], e);
        }
    }
    for (int j = 0; j < L; j++) {
        _mm256_storeu_pd(lane[j], acc[j][0]);
        _mm256_storeu_pd(lane[j] + 4, acc[j][1]);
    }
    for (; i < n; i++) {
        double r = y ? x[i] * y[i] : x[i];
        if (general) {
            double e = __builtin_fma(x[i], y[i], -r);
            EX_SCALAR_LEVELS(e, efirst);
        }
        EX_SCALAR_LEVELS(r, 0);
    }
}

#define EX_INSTANCE(name, L, general)                                                                    \
    __attribute__((target("avx2,fma"))) static void name(                                                \
        double lane[EX_LMAX][EX_LANES], const double *x, const double *y, size_t n, const ex_plan_t *pl) \
    {                                                                                                    \
        ex_kernel(lane, x, y, n, pl, L, general);                                                        \
    }
EX_INSTANCE(ex_short1, 1, 0)
EX_INSTANCE(ex_short2, 2, 0)
EX_INSTANCE(ex_short3, 3, 0)
EX_INSTANCE(ex_short4, 4, 0)
EX_INSTANCE(ex_gen1, 1, 1)
EX_INSTANCE(ex_gen2, 2, 1)
EX_INSTANCE(ex_gen3, 3, 1)
EX_INSTANCE(ex_gen4, 4, 1)
#undef EX_INSTANCE

static int has_avx2_fma(void)
{
    static int has = -1; /* a benign race: every thread computes the same value */
    if (has < 0) has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
    return has;
}

/* The smallest exponent field of the nonzero terms when every term with field 0 is an
 * exact zero (x[i] == 0, or x[i] or y[i] == 0 for a product: a product that underflowed to
 * zero is not one), else 0. Exact zeros add nothing in the extraction path, so a run with
 * zeros in it (ReLU outputs, padding) need not go to the slots; this pass runs only for
 * runs whose smallest field is 0. */
__attribute__((target("avx2"))) static unsigned min_exp_nonzero(const double *x, const double *y, size_t n)
{
    const __m256d zd = _mm256_setzero_pd();
    const __m256i emask = _mm256_set1_epi64x(0x7ff0000000000000LL), zi = _mm256_setzero_si256();
    __m256i mn = emask, bad = zi;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) { /* branch-free: zeros come in any pattern */
        __m256d a = _mm256_loadu_pd(x + i), p = a;
        __m256d z = _mm256_cmp_pd(a, zd, _CMP_EQ_OQ);
        if (y) {
            __m256d b = _mm256_loadu_pd(y + i);
            p = _mm256_mul_pd(a, b);
            z = _mm256_or_pd(z, _mm256_cmp_pd(b, zd, _CMP_EQ_OQ));
        }
        __m256i e = _mm256_and_si256(_mm256_castpd_si256(p), emask);
        __m256i e0 = _mm256_cmpeq_epi64(e, zi);
        bad = _mm256_or_si256(bad, _mm256_andnot_si256(_mm256_castpd_si256(z), e0));
        e = _mm256_or_si256(e, _mm256_and_si256(e0, emask)); /* zeros out of the minimum */
        mn = _mm256_blendv_epi8(mn, e, _mm256_cmpgt_epi64(mn, e));
    }
    if (!_mm256_testz_si256(bad, bad)) return 0; /* a subnormal term */
    uint64_t m4[4];
    _mm256_storeu_si256((__m256i *)m4, mn);
    unsigned l = 0x7ff;
    for (int k = 0; k < 4; k++) l = (unsigned)(m4[k] >> 52) < l ? (unsigned)(m4[k] >> 52) : l;
    for (; i < n; i++) {
        unsigned e = (unsigned)(dbits(y ? x[i] * y[i] : x[i]) >> 52) & 0x7ff;
        if (e == 0) {
            if (x[i] == 0 || (y && y[i] == 0)) continue;
            return 0;
        }
        l = e < l ? e : l;
    }
    return l; /* 0x7ff when all are zeros: the plan then has one level, and the lanes are 0 */
}

/* Adds the terms of x[0..n) (y == NULL) or of the products x[i] * y[i] to acc exactly when
 * the extraction path applies to this sub-block (n <= EX_LANES * 2^B / (general ? 2 : 1)
 * for the caller's B); returns 0, having done nothing, otherwise. */
static int ex_add(
    drift_xacc_t *acc, const double *x, const double *y, size_t n, unsigned lo, unsigned hi, int B, int qe, int general)
{
    static void (*const fns[2][EX_LMAX])(double[EX_LMAX][EX_LANES], const double *, const double *, size_t,
        const ex_plan_t *) = {{ex_short1, ex_short2, ex_short3, ex_short4}, {ex_gen1, ex_gen2, ex_gen3, ex_gen4}};
    ex_plan_t pl;
    if (!has_avx2_fma() || hi == 0x7ff) return 0;
    if (lo == 0) { /* zeros or subnormals */
        lo = min_exp_nonzero(x, y, n);
        qe += (int)lo; /* the callers' qe is lo - constant */
    }
    if (!ex_plan(&pl, lo, hi, B, qe)) return 0;
    double lane[EX_LMAX][EX_LANES];
    fns[general][pl.levels - 1](lane, x, y, n, &pl);
    for (int j = 0; j < pl.levels; j++) {
        double scale = ex_pow2(-pl.unit[j]); /* exact: lanes are integers in these units */
        int64_t s = 0;
        for (int l = 0; l < EX_LANES; l++) s += (int64_t)(lane[j][l] * scale);
        if (s) add_at(acc, s < 0 ? 0 - (uint64_t)s : (uint64_t)s, s < 0, pl.unit[j] - DRIFT_XACC_LSB);
    }
    return 1;
}
#endif

#define RANGE_CHUNK 1024
#define SUM_BLOCK ((size_t)SLOT_LANES * LANE_CAP)

static void sum_bulk(drift_xacc_t *acc, const double *x, size_t n)
{
    work_t *w = &work;
    for (size_t b0 = 0; b0 < n; b0 += SUM_BLOCK) {
        size_t b1 = n - b0 < SUM_BLOCK ? n : b0 + SUM_BLOCK;
        unsigned elo = 0x7ff, ehi = 0;
#define SUM_TERM(k, j)                                       \
    do {                                                     \
        uint64_t u = dbits(x[j]);                            \
        w->slot[k][u >> 52] += (u & FRAC_MASK) | HIDDEN_BIT; \
    } while (0)
        for (size_t c0 = b0; c0 < b1; c0 += RANGE_CHUNK) { /* chunks stay in L1 for both passes */
            size_t c1 = b1 - c0 < RANGE_CHUNK ? b1 : c0 + RANGE_CHUNK;
            unsigned l, h;
            exp_range(x + c0, NULL, c1 - c0, &l, &h);
#ifdef HAVE_EXTRACT
            /* B: RANGE_CHUNK / EX_LANES = 128 values a lane; a normal summand is a multiple
             * of its ulp, 2^(e - 1075) */
            _Static_assert(RANGE_CHUNK / EX_LANES == 128, "B below assumes 128 values a lane");
            if (ex_add(acc, x + c0, NULL, c1 - c0, l, h, 7, (int)l - 1075, 0)) continue;
#endif
            elo = l < elo ? l : elo;
            ehi = h > ehi ? h : ehi;
            size_t i = c0;
            for (; i + SLOT_LANES <= c1; i += SLOT_LANES) {
                __builtin_prefetch(x + i + RANGE_CHUNK); /* the next chunk, while this one computes */
                SUM_TERM(0, i);
                SUM_TERM(1, i + 1);
                SUM_TERM(2, i + 2);
                SUM_TERM(3, i + 3);
            }
            for (; i < c1; i++) SUM_TERM((i - b0) & (SLOT_LANES - 1), i); /* c0 - b0 is a multiple of 4 */
        }
#undef SUM_TERM
        if (elo == 0 || ehi == 0x7ff) {
            clear_edge_slots(w);
            for (size_t j = b0; j < b1; j++) {
                unsigned e = (unsigned)(dbits(x[j]) >> 52) & 0x7ff;
                if (e == 0 || e == 0x7ff) drift_xacc_add(acc, x[j]);
            }
            elo = elo ? elo : 1;
            ehi = ehi < 0x7ff ? ehi : 0x7fe;
        }
        if (elo <= ehi) flush_lanes(acc, w, elo, ehi, b1 - b0);
    }
}

static void dot_bulk(drift_xacc_t *acc, const double *x, const double *y, size_t n)
{
    work_t *w = &work;
    for (size_t b0 = 0; b0 < n; b0 += DOT_BLOCK) {
        size_t b1 = n - b0 < DOT_BLOCK ? n : b0 + DOT_BLOCK;
        unsigned elo = 0x7ff, ehi = 0; /* exponent range of everything in the slots */
        uint32_t general = 0;          /* bit j: sub-block j was added exactly (TwoProduct or extraction) */
        int edge = 0;                  /* a short sub-block had an edge product */
        for (size_t s0 = b0, j = 0; s0 < b1; s0 += DOT_SUB, j++) {
            size_t s1 = b1 - s0 < DOT_SUB ? b1 : s0 + DOT_SUB;
            unsigned l, h;
            int wide = (exp_range(x + s0, y + s0, s1 - s0, &l, &h) & SHORT_MASK) != 0;
#ifdef HAVE_EXTRACT
            /* B: DOT_SUB / EX_LANES = 64 pairs a lane, one term each (short) or two */
            _Static_assert(DOT_SUB / EX_LANES == 64, "B below assumes 64 pairs a lane");
            if (ex_add(acc, x + s0, y + s0, s1 - s0, l, h, wide ? 7 : 6, wide ? (int)l - 1129 : (int)l - 1070, wide)) {
                general |= 1u << j; /* done exactly, nothing in the slots */
                continue;
            }
#endif
            if (wide) {
                general |= 1u << j;
                dot_general(acc, w, x + s0, y + s0, s1 - s0, &elo, &ehi);
                continue;
            }
            edge |= l == 0 || h == 0x7ff;
            elo = l < elo ? l : elo;
            ehi = h > ehi ? h : ehi;
#define DOT_TERM(k, j)                                       \
    do {                                                     \
        uint64_t u = dbits(x[j] * y[j]);                     \
        w->slot[k][u >> 52] += (u & FRAC_MASK) | HIDDEN_BIT; \
    } while (0)
            size_t i = s0;
            for (; i + SLOT_LANES <= s1; i += SLOT_LANES) {
                /* the next sub-block is read by exp_range first: fetch it while this one
                 * computes (a prefetch past the end is harmless: it never faults) */
                __builtin_prefetch(x + i + DOT_SUB);
                __builtin_prefetch(y + i + DOT_SUB);
                DOT_TERM(0, i);
                DOT_TERM(1, i + 1);
                DOT_TERM(2, i + 2);
                DOT_TERM(3, i + 3);
            }
            for (; i < s1; i++) DOT_TERM(i & (SLOT_LANES - 1), i); /* s0 is a multiple of 4 */
#undef DOT_TERM
        }
        if (edge) { /* the general path never adds to the edge slots (GEN_OK) */
            clear_edge_slots(w);
            for (size_t s0 = b0, j = 0; s0 < b1; s0 += DOT_SUB, j++) {
                if (general >> j & 1) continue; /* done exactly */
                size_t s1 = b1 - s0 < DOT_SUB ? b1 : s0 + DOT_SUB;
                for (size_t i = s0; i < s1; i++) {
                    unsigned e = (unsigned)(dbits(x[i] * y[i]) >> 52) & 0x7ff;
                    if (e == 0 || e == 0x7ff) drift_xacc_add_prod(acc, x[i], y[i]);
                }
            }
            elo = elo ? elo : 1;
            ehi = ehi < 0x7ff ? ehi : 0x7fe;
        }
        if (elo <= ehi) flush_lanes(acc, w, elo, ehi, 2 * (b1 - b0)); /* general pairs add twice */
    }
}

/* Rounds acc; an exact zero (rare: the rounded value is then zero too) takes its sign
 * from the inputs, since the bulk loops do not track it. */
#define FINISH(acc, zstate_fn)                                                 \
    do {                                                                       \
        *out = drift_xacc_round(&acc, f, m);                                   \
        if (*out == 0 && !acc.nan && !acc.inf && drift_xacc_sign(&acc) == 0) { \
            acc.zstate = ZS_EMPTY;                                             \
            zstate_fn;                                                         \
            *out = drift_xacc_round(&acc, f, m);                               \
        }                                                                      \
    } while (0)

int drift_exact_sum(double *out, const double *x, size_t n, drift_format_t f, drift_mode_t m)
{
    if (!out || (!x && n) || !mode_ok(f, m)) return DRIFT_EINVAL;
    drift_xacc_t acc;
    drift_xacc_init(&acc);
    if (n < BULK_MIN)
        for (size_t i = 0; i < n; i++) drift_xacc_add(&acc, x[i]);
    else
        sum_bulk(&acc, x, n);
    FINISH(acc, zstate_of_sum(&acc, x, n));
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
    FINISH(acc, zstate_of_dot(&acc, a, b, n));
    return DRIFT_OK;
}
