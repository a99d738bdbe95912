/* format.c — number formats, single correct rounding, exact-once arithmetic.
 *
 * The generic rounder works for any (p, emin, emax): it scales |x| so that the quantum of
 * the target (the value of the last kept bit) becomes 1, splits integer and fraction
 * (both exact in double because the scaled value is below 2^53), decides the increment
 * from the fraction and the mode, and scales back. Overflow is judged on the result
 * rounded with an unbounded exponent, as IEEE 754 defines it. */
#include "format.h"
#include "drift.h"

#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <string.h>
#include <strings.h>

static const drift_format_info_t FORMATS[DRIFT_NFORMATS] = {
    [DRIFT_FP64] = {"fp64", 64, 53, -1022, 1023, 1, DBL_MAX, 0x1p-1022, 0x1p-1074, 0x1p-53, 0x1p-52},
    [DRIFT_FP32] = {"fp32", 32, 24, -126, 127, 1, 0x1.fffffep127, 0x1p-126, 0x1p-149, 0x1p-24, 0x1p-23},
    [DRIFT_TF32] = {"tf32", 32, 11, -126, 127, 1, 0x1.ffcp127, 0x1p-126, 0x1p-136, 0x1p-11, 0x1p-10},
    [DRIFT_FP16] = {"fp16", 16, 11, -14, 15, 1, 65504.0, 0x1p-14, 0x1p-24, 0x1p-11, 0x1p-10},
    [DRIFT_BF16] = {"bf16", 16, 8, -126, 127, 1, 0x1.fep127, 0x1p-126, 0x1p-133, 0x1p-8, 0x1p-7},
    [DRIFT_FP8E4M3] = {"fp8e4m3", 8, 4, -6, 8, 0, 448.0, 0x1p-6, 0x1p-9, 0x1p-4, 0x1p-3},
    [DRIFT_FP8E5M2] = {"fp8e5m2", 8, 3, -14, 15, 1, 57344.0, 0x1p-14, 0x1p-16, 0x1p-3, 0x1p-2},
};

static const char *const MODE_NAMES[DRIFT_NMODES] = {"rne", "rz", "rna", "ru", "rd", "sr"};
static const char *const CLASS_NAMES[] = {"zero", "subnormal", "normal", "inf", "nan"};

const char *drift_strerror(int code)
{
    switch (code) {
    case DRIFT_OK: return "success";
    case DRIFT_EINVAL: return "invalid argument";
    case DRIFT_ENOMEM: return "out of memory";
    case DRIFT_EIO: return "input/output error";
    case DRIFT_ERANGE: return "value out of range";
    case DRIFT_EUNSUPPORTED: return "unsupported combination";
    default: return "unknown error";
    }
}

const drift_format_info_t *drift_format_info(drift_format_t f)
{
    return (unsigned)f < DRIFT_NFORMATS ? &FORMATS[f] : NULL;
}

const char *drift_format_name(drift_format_t f) { return (unsigned)f < DRIFT_NFORMATS ? FORMATS[f].name : "?"; }

/* The names users bring from elsewhere, each for exactly one of our formats: PyTorch's dtypes
 * (torch.bfloat16, float16 = half, float32 = float, float64 = double, float8_e4m3fn,
 * float8_e5m2), NumPy/C's single and double, ml_dtypes' and OCP's fp8 names (e4m3 = E4M3FN,
 * the variant without infinities that fp8e4m3 is: max 448; e5m2 keeps IEEE infinities, as
 * fp8e5m2). Parsing only: every printed name stays the canonical one of FORMATS, so no
 * data file depends on how the format was typed. "fp8" alone names no format (ambiguous). */
static const struct {
    const char *alias;
    drift_format_t f;
} ALIASES[] = {
    {"bfloat16", DRIFT_BF16},
    {"float16", DRIFT_FP16},
    {"half", DRIFT_FP16},
    {"float32", DRIFT_FP32},
    {"single", DRIFT_FP32},
    {"float", DRIFT_FP32},
    {"float64", DRIFT_FP64},
    {"double", DRIFT_FP64},
    {"e4m3", DRIFT_FP8E4M3},
    {"fp8_e4m3fn", DRIFT_FP8E4M3},
    {"fp8_e4m3", DRIFT_FP8E4M3},
    {"float8_e4m3fn", DRIFT_FP8E4M3},
    {"fp8e4m3fn", DRIFT_FP8E4M3},
    {"e4m3fn", DRIFT_FP8E4M3},
    {"e5m2", DRIFT_FP8E5M2},
    {"fp8_e5m2", DRIFT_FP8E5M2},
    {"float8_e5m2", DRIFT_FP8E5M2},
    {"tensorfloat32", DRIFT_TF32},
};

int drift_format_parse(drift_format_t *out, const char *name)
{
    /* Case never matters (BF16, FP32, Float16): no two names differ only in case. */
    for (int i = 0; i < DRIFT_NFORMATS; i++)
        if (strcasecmp(name, FORMATS[i].name) == 0) {
            *out = (drift_format_t)i;
            return DRIFT_OK;
        }
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (strcasecmp(name, ALIASES[i].alias) == 0) {
            *out = ALIASES[i].f;
            return DRIFT_OK;
        }
    return DRIFT_EINVAL;
}

const char *drift_format_alias(int i, drift_format_t *f)
{
    if (i < 0 || (size_t)i >= sizeof ALIASES / sizeof ALIASES[0]) return NULL;
    if (f) *f = ALIASES[i].f;
    return ALIASES[i].alias;
}

const char *drift_mode_name(drift_mode_t m) { return (unsigned)m < DRIFT_NMODES ? MODE_NAMES[m] : "?"; }

int drift_mode_parse(drift_mode_t *out, const char *name)
{
    for (int i = 0; i < DRIFT_NMODES; i++)
        if (strcmp(name, MODE_NAMES[i]) == 0) {
            *out = (drift_mode_t)i;
            return DRIFT_OK;
        }
    return DRIFT_EINVAL;
}

const char *drift_class_name(drift_class_t c) { return (unsigned)c <= DRIFT_CLASS_NAN ? CLASS_NAMES[c] : "?"; }

/* The IEEE 754 overflow result for a positive value that rounds above max_finite. */
static double overflow_magnitude(const drift_format_info_t *fi, const drift_round_opts_t *o, int neg)
{
    int to_max = o->saturate || o->mode == DRIFT_RZ || (o->mode == DRIFT_RU && neg) || (o->mode == DRIFT_RD && !neg);
    if (to_max) return fi->max_finite;
    return fi->has_inf ? INFINITY : NAN;
}

double drift_round_generic(double x, const drift_format_info_t *fi, const drift_round_opts_t *o, uint32_t sr_bits)
{
    static const drift_round_opts_t rne = {DRIFT_RNE, 0, 0};
    if (!o) o = &rne;
    if (isnan(x)) return x;
    int neg = signbit(x) != 0;
    if (isinf(x)) {
        if (fi->has_inf && !o->saturate) return x;
        double m = o->saturate ? fi->max_finite : NAN;
        return neg ? -m : m;
    }
    if (x == 0) return x;

    double ax = fabs(x);
    int e = ilogb(ax);
    double r;
    if (e > fi->emax + 1) {
        r = INFINITY; /* rounds (unbounded) to at least 2^(emax+1) > max_finite */
    } else {
        int qexp = (e > fi->emin ? e : fi->emin) - (fi->p - 1);
        double t = ldexp(ax, -qexp); /* exact: a power-of-two scaling, t < 2^p */
        double fl = floor(t);
        double frac = t - fl; /* exact: t has at most 53 significant bits */
        int inc = 0;
        switch (o->mode) {
        case DRIFT_RNE: inc = frac > 0.5 || (frac == 0.5 && fmod(fl, 2.0) != 0.0); break;
        case DRIFT_RNA: inc = frac >= 0.5; break;
        case DRIFT_RZ: inc = 0; break;
        case DRIFT_RU: inc = frac > 0 && !neg; break;
        case DRIFT_RD: inc = frac > 0 && neg; break;
        case DRIFT_SR: inc = frac > 0 && ldexp((double)sr_bits, -32) < frac; break;
        default: return NAN;
        }
        r = ldexp(fl + inc, qexp);
    }
    if (r > fi->max_finite) {
        r = overflow_magnitude(fi, o, neg);
    } else if (o->flush_subnormals && r < fi->min_normal) {
        r = 0.0;
    }
    return neg ? -r : r;
}

double drift_round(double x, drift_format_t f, const drift_round_opts_t *o, uint32_t sr_bits)
{
    switch (f) {
    case DRIFT_FP16: return drift_round_fp16_fast(x, o, sr_bits);
    case DRIFT_BF16: return drift_round_bf16_fast(x, o, sr_bits);
    case DRIFT_TF32: return drift_round_tf32_fast(x, o, sr_bits);
    case DRIFT_FP32:
        /* The hardware conversion is IEEE round-to-nearest-even into binary32, subnormals and
         * overflow to inf included (the lab never sets flush-to-zero): the generic rounder's
         * answer, bit for bit, at a fraction of its cost. NaN keeps its payload as there. */
        if ((!o || (o->mode == DRIFT_RNE && !o->saturate && !o->flush_subnormals)) && !isnan(x))
            return (double)(float)x;
        return drift_round_generic(x, drift_format_info(f), o, sr_bits); /* the other modes and options */
    default: return drift_round_generic(x, drift_format_info(f), o, sr_bits);
    }
}

double drift_rne(double x, drift_format_t f)
{
    if (f == DRIFT_FP64) return x;
    return drift_round(x, f, NULL, 0);
}

double drift_ulp(double x, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    double ax = fabs(x);
    if (!isfinite(ax)) return NAN;
    int e = ax == 0 ? fi->emin : ilogb(ax);
    if (e < fi->emin) e = fi->emin;
    return ldexp(1.0, e - (fi->p - 1));
}

drift_class_t drift_classify(double x, drift_format_t f)
{
    if (isnan(x)) return DRIFT_CLASS_NAN;
    if (isinf(x)) return DRIFT_CLASS_INF;
    if (x == 0) return DRIFT_CLASS_ZERO;
    return fabs(x) < drift_format_info(f)->min_normal ? DRIFT_CLASS_SUBNORMAL : DRIFT_CLASS_NORMAL;
}

/* ---- encodings ------------------------------------------------------------------- */

static uint64_t double_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double bits_double(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Small formats: sign | exponent field (bias 1 - emin) | p - 1 fraction bits. */
uint64_t drift_encode(double x, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    if (f == DRIFT_FP64) return double_bits(x);
    x = drift_rne(x, f);
    if (f == DRIFT_FP32 || f == DRIFT_TF32) {
        float v = (float)x; /* exact: x is an fp32 (or tf32) value */
        uint32_t u;
        memcpy(&u, &v, sizeof u);
        return u;
    }
    int mbits = fi->p - 1;
    int ebits = fi->bits - 1 - mbits;
    uint64_t sign = (uint64_t)(signbit(x) != 0) << (fi->bits - 1);
    uint64_t emask = (1u << ebits) - 1;
    if (isnan(x)) /* canonical quiet NaN: e4m3 has only S.1111.111 */
        return sign | (emask << mbits) | (f == DRIFT_FP8E4M3 ? (1u << mbits) - 1 : 1u << (mbits - 1));
    if (isinf(x)) return sign | (emask << mbits);
    double ax = fabs(x);
    if (ax == 0) return sign;
    int e = ilogb(ax);
    if (e < fi->emin) /* subnormal: field 0, fraction = ax / min_subnormal */
        return sign | (uint64_t)ldexp(ax, -(fi->emin - mbits));
    uint64_t frac = (uint64_t)(ldexp(ax, mbits - e) - ldexp(1.0, mbits));
    uint64_t biased = (uint64_t)(e + (1 - fi->emin));
    return sign | (biased << mbits) | frac;
}

double drift_decode(uint64_t bits, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    if (f == DRIFT_FP64) return bits_double(bits);
    if (f == DRIFT_FP32 || f == DRIFT_TF32) {
        uint32_t u = (uint32_t)bits;
        if (f == DRIFT_TF32) u &= ~(uint32_t)0x1fff;
        float v;
        memcpy(&v, &u, sizeof v);
        return v;
    }
    int mbits = fi->p - 1;
    int ebits = fi->bits - 1 - mbits;
    uint64_t emask = (1u << ebits) - 1;
    int neg = (bits >> (fi->bits - 1)) & 1;
    uint64_t ef = (bits >> mbits) & emask;
    uint64_t mf = bits & ((1u << mbits) - 1);
    double v;
    if (f == DRIFT_FP8E4M3 && ef == emask && mf == (1u << mbits) - 1)
        v = NAN;
    else if (f != DRIFT_FP8E4M3 && ef == emask)
        v = mf ? NAN : INFINITY;
    else if (ef == 0)
        v = ldexp((double)mf, fi->emin - mbits);
    else
        v = ldexp((double)(mf | (1u << mbits)), (int)ef - (1 - fi->emin) - mbits);
    return neg ? -v : v;
}

/* ---- exact-once arithmetic -------------------------------------------------------- */

static double next_toward(double x, int up) { return nextafter(x, up ? INFINITY : -INFINITY); }

static double round_once(double exact, drift_format_t f, drift_mode_t m)
{
    return f == DRIFT_FP64 ? exact : drift_round(exact, f, &(drift_round_opts_t){m, 0, 0}, 0);
}

/* IEEE 754 overflow result in binary64 for a finite exact value beyond the overflow
 * threshold (what RNE rounds to infinity): RZ, and the directed mode pointing back
 * toward zero, give the largest finite double. */
static double overflow_fp64(int neg, drift_mode_t m)
{
    int to_max = m == DRIFT_RZ || (m == DRIFT_RU && neg) || (m == DRIFT_RD && !neg);
    double r = to_max ? DBL_MAX : INFINITY;
    return neg ? -r : r;
}

/* Round the exact value s + e, where (s, e) is an error-free pair (s = fl(s + e)), to double
 * in mode m. */
static double round_pair_fp64(double s, double e, drift_mode_t m)
{
    if (e == 0 || m == DRIFT_RNE) return s;
    switch (m) {
    case DRIFT_RZ: return (e < 0) != (s < 0) ? next_toward(s, s < 0) : s;
    case DRIFT_RU: return e > 0 ? next_toward(s, 1) : s;
    case DRIFT_RD: return e < 0 ? next_toward(s, 0) : s;
    case DRIFT_RNA: {
        double n = next_toward(s, e > 0);
        return (n - s == 2 * e && fabs(n) > fabs(s)) ? n : s;
    }
    default: return NAN;
    }
}

/* Round-to-odd of the exact value s + e to 53 bits: the neighbour with an odd last bit
 * when inexact. A second rounding of this to any p <= 51 bits equals the direct rounding. */
static double round_pair_odd(double s, double e)
{
    if (e == 0) return s;
    /* s is finite and nonzero (e != 0); its neighbour toward zero is one less in the
     * sign-magnitude bit pattern (what nextafter gives, without the library call) */
    uint64_t u = double_bits(s);
    if ((e < 0) != (s < 0)) u -= 1;
    return bits_double(u | 1);
}

static void two_sum(double a, double b, double *s, double *e)
{
    double x = a + b;
    double bv = x - a;
    double av = x - bv;
    *s = x;
    *e = (a - av) + (b - bv);
}

double drift_round_sum2(double hi, double lo, drift_format_t f, drift_mode_t m)
{
    double s, e;
    two_sum(hi, lo, &s, &e);
    if (!isfinite(s)) {
        if (isfinite(hi) && isfinite(lo)) {
            /* Finite operands whose RNE sum overflowed: the exact sum lies at or beyond
             * binary64's overflow threshold 2^1024 - 2^970, so it overflows every format,
             * but the directed modes must still give max_finite (IEEE 754 7.4), not inf. */
            int neg = s < 0;
            if (f == DRIFT_FP64) return overflow_fp64(neg, m);
            return drift_round(neg ? -DBL_MAX : DBL_MAX, f, &(drift_round_opts_t){m, 0, 0}, 0);
        }
        return round_once(s, f, m); /* an infinite or NaN operand: IEEE special arithmetic */
    }
    if (s == 0 && e == 0 && m == DRIFT_RD) {
        /* An exact zero sum is +0 in every mode but roundTowardNegative, where it is -0,
         * unless both operands are +0 (IEEE 754 6.3); the hardware sum above used RNE. */
        s = (hi == 0 && lo == 0 && !signbit(hi) && !signbit(lo)) ? 0.0 : -0.0;
    }
    if (f == DRIFT_FP64) return round_pair_fp64(s, e, m);
    return drift_round(round_pair_odd(s, e), f, &(drift_round_opts_t){m, 0, 0}, 0);
}

double drift_add(double a, double b, drift_format_t f, drift_mode_t m) { return drift_round_sum2(a, b, f, m); }

static mpfr_rnd_t mpfr_mode(drift_mode_t m)
{
    switch (m) {
    case DRIFT_RZ: return MPFR_RNDZ;
    case DRIFT_RU: return MPFR_RNDU;
    case DRIFT_RD: return MPFR_RNDD;
    default: return MPFR_RNDN;
    }
}

/* Round a nonzero MPFR value x, rounded to odd at >= 55 bits with an unbounded exponent
 * (so it stands for the exact result), once to f in mode m.
 * fp64: mpfr_get_d rounds correctly into subnormals and applies the overflow rules;
 * ties-away has no MPFR mode, so it compares |x| with the midpoint of its two neighbours
 * (representable in 54 bits, so the odd rounding cannot cross it).
 * Other formats (p <= 24): round to odd at 53 bits as a double, then round that. Values
 * outside the normal double range are clamped to a stand-in of the same rounding class:
 * below 2^-1000 every small format sees "positive, under half its smallest subnormal"
 * (the smallest is bf16's 2^-133), and above DBL_MAX every small format overflows. */
static double round_mpfr_once(mpfr_srcptr x, drift_format_t f, drift_mode_t m)
{
    int neg = mpfr_sgn(x) < 0;
    if (f == DRIFT_FP64) {
        if (m != DRIFT_RNA) return mpfr_get_d(x, mpfr_mode(m));
        double z = mpfr_get_d(x, MPFR_RNDZ);
        if (mpfr_cmp_d(x, z) == 0) return z;
        double n = next_toward(z, !neg);
        mpfr_t mid;
        mpfr_init2(mid, 64);
        mpfr_set_d(mid, z, MPFR_RNDN);
        if (isinf(n)) { /* the neighbour beyond DBL_MAX is 2^1024 with an unbounded exponent */
            mpfr_t big;
            mpfr_init2(big, 8);
            mpfr_set_si_2exp(big, neg ? -1 : 1, 1024, MPFR_RNDN);
            mpfr_add(mid, mid, big, MPFR_RNDN); /* exact: 64 bits hold DBL_MAX + 2^1024 */
            mpfr_clear(big);
        } else {
            mpfr_add_d(mid, mid, n, MPFR_RNDN); /* exact: adjacent doubles, 54 bits */
        }
        mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
        double r = mpfr_cmpabs(x, mid) >= 0 ? n : z;
        mpfr_clear(mid);
        return r;
    }
    double v;
    if (mpfr_cmp_d(x, 0x1p-1000) < 0 && mpfr_cmp_d(x, -0x1p-1000) > 0) {
        v = neg ? -0x1p-1000 : 0x1p-1000;
    } else {
        v = mpfr_get_d(x, MPFR_RNDZ); /* DBL_MAX when |x| is beyond it: odd and overflowing */
        if (mpfr_cmp_d(x, v) != 0) v = bits_double(double_bits(v) | 1);
    }
    return drift_round(v, f, &(drift_round_opts_t){m, 0, 0}, 0);
}

/* The exact a*b + c (or a*b when c is NULL) rounded once to f, via MPFR: for the cases the
 * double-word tricks cannot cover (a product error that underflows, a product that
 * overflows while the sum does not, an fma whose product is not exact in double).
 * The exponent range is widened for the call so that a caller's mpfr_set_emin/emax (the
 * tests' IEEE emulation, say) cannot clip the intermediate. */
static double exact_mpfr(double a, double b, const double *c, drift_format_t f, drift_mode_t m)
{
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    mpfr_t ma, mb, mc, r;
    mpfr_inits2(53, ma, mb, mc, (mpfr_ptr)0);
    mpfr_init2(r, 64);
    mpfr_set_d(ma, a, MPFR_RNDN); /* exact: 53 bits hold a double */
    mpfr_set_d(mb, b, MPFR_RNDN);
    int t;
    if (c) {
        mpfr_set_d(mc, *c, MPFR_RNDN);
        t = mpfr_fma(r, ma, mb, mc, MPFR_RNDZ);
    } else {
        t = mpfr_mul(r, ma, mb, MPFR_RNDZ);
    }
    /* round to odd at 64 bits: truncate, then make the last bit 1 when inexact (the
     * truncated value's last bit is 0 exactly when it needs fewer than 64 bits). */
    if (t != 0 && mpfr_min_prec(r) < 64) {
        if (mpfr_sgn(r) > 0)
            mpfr_nextabove(r);
        else
            mpfr_nextbelow(r);
    }
    double out;
    if (mpfr_zero_p(r)) /* exact cancellation: +0, or -0 under RD (IEEE 754 6.3) */
        out = m == DRIFT_RD ? -0.0 : 0.0;
    else
        out = round_mpfr_once(r, f, m);
    mpfr_clears(ma, mb, mc, r, (mpfr_ptr)0);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    return out;
}

/* Below this magnitude a double product's rounding error may not be a double: the error is
 * a multiple of 2^(ea + eb - 104), which is representable only when ea + eb >= -970, and
 * |a*b| >= 2^-968 guarantees that. */
#define PRODUCT_ERROR_EXACT_MIN 0x1p-968

double drift_mul(double a, double b, drift_format_t f, drift_mode_t m)
{
    double ph = a * b;
    if (!isfinite(a) || !isfinite(b)) return round_once(ph, f, m); /* inf * x, NaN */
    if (a == 0 || b == 0) return round_once(ph, f, m);             /* exact signed zero */
    if (!isfinite(ph) || fabs(ph) < PRODUCT_ERROR_EXACT_MIN) return exact_mpfr(a, b, NULL, f, m);
    double pl = fma(a, b, -ph);
    /* pl == 0: ph is the exact product; rounding it alone keeps the sign of a zero right
     * (ph + 0 would turn -0 into +0). */
    if (pl == 0) return round_once(ph, f, m);
    return drift_round_sum2(ph, pl, f, m);
}

/* ph + pl + c (ph + pl = a*b exactly, both normal-range doubles) rounded once to f, a format
 * of at most 24 bits, without MPFR: Boldo and Melquiond's emulated FMA ("Emulation of FMA and
 * correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 57(4), 2008,
 * Algorithm 5.4 with the last addition rounded to odd): (th, tl) = TwoSum(c, ph),
 * v = RO(tl + pl), z = RO(th + v) = RO53(a*b + c); then z rounded to f equals the direct
 * rounding, since 53 >= p + 2 (rounding to odd, ibid. Theorem 1). RO of an error-free pair is
 * round_pair_odd. 0 (the caller falls back to MPFR) when a sum overflows or the result is an
 * exact zero (whose sign IEEE 754 6.3 fixes by the mode). */
static int fma_odd(double *out, double ph, double pl, double c, drift_format_t f, drift_mode_t m)
{
    double th, tl, vs, ve, s, e;
    two_sum(c, ph, &th, &tl);
    two_sum(tl, pl, &vs, &ve);
    two_sum(th, round_pair_odd(vs, ve), &s, &e);
    if (!isfinite(s) || (s == 0 && e == 0)) return 0;
    double z = round_pair_odd(s, e);
    /* fp32 nearest-even: the hardware conversion is that rounding (gradual underflow,
     * overflow to inf), as drift_rne(z, DRIFT_FP32) */
    *out = f == DRIFT_FP32 && m == DRIFT_RNE ? (double)(float)z : drift_round(z, f, &(drift_round_opts_t){m, 0, 0}, 0);
    return 1;
}

double drift_fma(double a, double b, double c, drift_format_t f, drift_mode_t m)
{
    double ph = a * b;
    if (!isfinite(a) || !isfinite(b)) return drift_round_sum2(ph, c, f, m); /* inf or NaN product: exact */
    if (!isfinite(c)) return round_once(c, f, m); /* the exact product is finite, even when ph overflowed */
    if (a == 0 || b == 0) return drift_round_sum2(ph, c, f, m); /* exact signed-zero product */
    if (!isfinite(ph) || fabs(ph) < PRODUCT_ERROR_EXACT_MIN) return exact_mpfr(a, b, &c, f, m);
    double pl = fma(a, b, -ph);
    if (pl == 0) return drift_round_sum2(ph, c, f, m); /* product exact: a two-term sum */
    if (f == DRIFT_FP64 && m == DRIFT_RNE) return fma(a, b, c);
    double r;
    if (f != DRIFT_FP64 && fma_odd(&r, ph, pl, c, f, m)) return r;
    return exact_mpfr(a, b, &c, f, m);
}
