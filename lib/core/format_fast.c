/* format_fast.c — bit-manipulation rounding paths for fp16, bf16 and tf32.
 *
 * Why: rounding to these three formats sits in every inner loop of the CPU emulation
 * kernels, and the generic rounder (ilogb, ldexp, floor, fmod) is several times slower.
 * These paths work on the double's 64-bit word with integer operations only, and round
 * once, straight from the double (never via fp32).
 *
 * How: a double is sign | 11-bit biased exponent E | 52-bit fraction. With the hidden bit
 * made explicit, the significand m = 2^52 + fraction is an integer and |x| = m * 2^(e-52),
 * e = E - 1023. Rounding to precision p in the normal range keeps the top p bits of m,
 * i.e. drops k = 53 - p low bits. Because the IEEE encoding is monotone, dropping those
 * bits from the whole magnitude word (exponent and fraction together) and adding 2^k on
 * an increment is exactly "round the significand, carry into the exponent": a carry out of
 * the fraction bumps the exponent and leaves a zero fraction, which is the next binade's
 * first value. In the target's subnormal range the kept bits are fewer: the quantum is
 * fixed at 2^(emin - p + 1), so k grows by emin - e.
 *
 * The decision to increment reads only the dropped bits r (0 <= r < 2^k) and the last
 * kept bit, exactly as the generic rounder reads frac = r / 2^k:
 *   rne: r > half, or r == half and the kept value is odd     (half = 2^(k-1))
 *   rna: r >= half
 *   rz : never;  ru: r != 0 and x > 0;  rd: r != 0 and x < 0
 *   sr : sr_bits * 2^-32 < r * 2^-k   (see sr_up below for the exact integer form)
 *
 * Rare cases go to drift_round_generic, which the tests prove these paths equal anyway:
 * zero, NaN, infinities, values that overflow the target, and values below half the
 * target's smallest subnormal (|x| < 2^(emin - p)), where the result is 0 or the smallest
 * subnormal depending on the mode. */
#include "format.h"

#include <string.h>

#define SIGN_MASK 0x8000000000000000ull
#define FRAC_MASK 0x000fffffffffffffull
#define HIDDEN_BIT 0x0010000000000000ull

static inline uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline double bitsd(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Stochastic decision: up iff sr * 2^-32 < r * 2^-k, with both sides exact.
 * k <= 32: multiply r up; r << (32 - k) < 2^32 so no overflow.
 * k > 32 : sr * 2^s < r  <=>  sr < r / 2^s  <=>  sr < ceil(r / 2^s)  (sr is an integer),
 *          with s = k - 32 <= 21 and r < 2^53, so the ceiling fits easily. */
static inline int sr_up(uint64_t r, int k, uint32_t sr)
{
    if (k <= 32) return (uint64_t)sr < (r << (32 - k));
    int s = k - 32;
    return (uint64_t)sr < ((r + (1ull << s) - 1) >> s);
}

/* Whether to add one quantum, given the dropped bits r of width k and the kept value q. */
static inline int round_up(drift_mode_t mode, uint64_t q, uint64_t r, int k, int neg, uint32_t sr)
{
    uint64_t half = 1ull << (k - 1);
    switch (mode) {
    case DRIFT_RNE: return r > half || (r == half && (q & 1));
    case DRIFT_RNA: return r >= half;
    case DRIFT_RZ: return 0;
    case DRIFT_RU: return r != 0 && !neg;
    case DRIFT_RD: return r != 0 && neg;
    case DRIFT_SR: return sr_up(r, k, sr);
    default: return -1;
    }
}

/* The shared body; P, EMIN, EMAX and MAXBITS are compile-time constants in each caller,
 * so the compiler specialises it three times. MAXBITS is the double word of max_finite. */
static inline double round_bits(
    double x, const drift_round_opts_t *o, uint32_t sr, int P, int EMIN, int EMAX, uint64_t MAXBITS, drift_format_t f)
{
    static const drift_round_opts_t rne = {DRIFT_RNE, 0, 0};
    if (!o) o = &rne;
    uint64_t u = dbits(x);
    uint64_t sign = u & SIGN_MASK;
    uint64_t a = u & ~SIGN_MASK; /* |x| as a word */
    int e = (int)(a >> 52) - 1023;
    int neg = sign != 0;

    if (e >= EMIN && e <= EMAX) {
        /* Normal target range: drop k = 53 - P bits of the magnitude word. */
        const int k = 53 - P;
        uint64_t r = a & ((1ull << k) - 1);
        uint64_t t = a - r; /* truncated magnitude */
        int inc = round_up(o->mode, t >> k, r, k, neg, sr);
        if (inc < 0) return drift_round_generic(x, drift_format_info(f), o, sr); /* bad mode: let generic answer */
        t += (uint64_t)inc << k;
        if (t > MAXBITS) return drift_round_generic(x, drift_format_info(f), o, sr); /* overflow */
        return bitsd(sign | t);
    }
    if (e < EMIN && e >= EMIN - P) {
        /* Subnormal target range (and a normal double, since EMIN - P >= -137 > -1023):
         * |x| = m * 2^(e - 52) and the quantum is 2^(EMIN - P + 1), so drop
         * k = (EMIN - P + 1) - (e - 52) bits of m, 54 - P <= k <= 53. */
        const int k = (EMIN - P + 1) - (e - 52);
        uint64_t m = (a & FRAC_MASK) | HIDDEN_BIT;
        uint64_t r = m & ((1ull << k) - 1);
        uint64_t q = m >> k; /* q < 2^(P-1): a count of smallest subnormals */
        int inc = round_up(o->mode, q, r, k, neg, sr);
        if (inc < 0) return drift_round_generic(x, drift_format_info(f), o, sr);
        q += (uint64_t)inc; /* q == 2^(P-1) is the smallest normal: fine */
        if (o->flush_subnormals && q < (1ull << (P - 1))) q = 0;
        /* q * 2^(EMIN - P + 1) as a double word: exact, since q < 2^53 and the scale is a
         * normal power of two; written as an integer-to-double conversion plus an exponent
         * add so that no floating multiply is involved. */
        if (q == 0) return bitsd(sign);
        double qd = (double)q; /* exact: q <= 2^(P-1) */
        uint64_t w = dbits(qd) - ((uint64_t)(P - 1 - EMIN) << 52);
        return bitsd(sign | w);
    }
    /* zero, tiny (|x| < 2^(EMIN - P)), overflowing exponents, inf and NaN */
    if (a == 0) return x;
    return drift_round_generic(x, drift_format_info(f), o, sr);
}

/* fp16: p = 11, emin = -14, emax = 15, max 65504 = 0x1.ffcp15. */
double drift_round_fp16_fast(double x, const drift_round_opts_t *o, uint32_t sr_bits)
{
    return round_bits(x, o, sr_bits, 11, -14, 15, 0x40effc0000000000ull, DRIFT_FP16);
}

/* bf16: p = 8, emin = -126, emax = 127, max 0x1.fep127. */
double drift_round_bf16_fast(double x, const drift_round_opts_t *o, uint32_t sr_bits)
{
    return round_bits(x, o, sr_bits, 8, -126, 127, 0x47efe00000000000ull, DRIFT_BF16);
}

/* tf32: p = 11, emin = -126, emax = 127, max 0x1.ffcp127. */
double drift_round_tf32_fast(double x, const drift_round_opts_t *o, uint32_t sr_bits)
{
    return round_bits(x, o, sr_bits, 11, -126, 127, 0x47effc0000000000ull, DRIFT_TF32);
}
