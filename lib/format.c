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

const char *drift_format_name(drift_format_t f)
{
    return (unsigned)f < DRIFT_NFORMATS ? FORMATS[f].name : "?";
}

int drift_format_parse(drift_format_t *out, const char *name)
{
    for (int i = 0; i < DRIFT_NFORMATS; i++)
        if (strcmp(name, FORMATS[i].name) == 0) {
            *out = (drift_format_t)i;
            return DRIFT_OK;
        }
    return DRIFT_EINVAL;
}

const char *drift_mode_name(drift_mode_t m)
{
    return (unsigned)m < DRIFT_NMODES ? MODE_NAMES[m] : "?";
}

int drift_mode_parse(drift_mode_t *out, const char *name)
{
    for (int i = 0; i < DRIFT_NMODES; i++)
        if (strcmp(name, MODE_NAMES[i]) == 0) {
            *out = (drift_mode_t)i;
            return DRIFT_OK;
        }
    return DRIFT_EINVAL;
}

const char *drift_class_name(drift_class_t c)
{
    return (unsigned)c <= DRIFT_CLASS_NAN ? CLASS_NAMES[c] : "?";
}

/* The IEEE 754 overflow result for a positive value that rounds above max_finite. */
static double overflow_magnitude(const drift_format_info_t *fi, const drift_round_opts_t *o, int neg)
{
    int to_max = o->saturate || o->mode == DRIFT_RZ || (o->mode == DRIFT_RU && neg) ||
                 (o->mode == DRIFT_RD && !neg);
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
    double t = (e < 0) != (s < 0) ? next_toward(s, s < 0) : s; /* toward zero */
    uint64_t u = double_bits(t) | 1;
    return bits_double(u);
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
    if (!isfinite(s)) return f == DRIFT_FP64 ? s : drift_round(s, f, &(drift_round_opts_t){m, 0, 0}, 0);
    if (f == DRIFT_FP64) return round_pair_fp64(s, e, m);
    return drift_round(round_pair_odd(s, e), f, &(drift_round_opts_t){m, 0, 0}, 0);
}

double drift_add(double a, double b, drift_format_t f, drift_mode_t m)
{
    return drift_round_sum2(a, b, f, m);
}

double drift_mul(double a, double b, drift_format_t f, drift_mode_t m)
{
    double ph = a * b;
    if (!isfinite(ph)) return drift_round_sum2(ph, 0, f, m);
    return drift_round_sum2(ph, fma(a, b, -ph), f, m);
}

static mpfr_rnd_t mpfr_mode(drift_mode_t m)
{
    switch (m) {
    case DRIFT_RZ: return MPFR_RNDZ;
    case DRIFT_RU: return MPFR_RNDU;
    case DRIFT_RD: return MPFR_RNDD;
    default: return MPFR_RNDN;
    }
}

/* a*b + c when the product is not exact in double (inputs wider than 26 bits): MPFR
 * computes the exact result rounded once; to odd at 53 bits for the small formats. */
static double fma_wide(double a, double b, double c, drift_format_t f, drift_mode_t m)
{
    mpfr_t ma, mb, mc, r;
    mpfr_inits2(53, ma, mb, mc, r, (mpfr_ptr)0);
    mpfr_set_d(ma, a, MPFR_RNDN);
    mpfr_set_d(mb, b, MPFR_RNDN);
    mpfr_set_d(mc, c, MPFR_RNDN);
    double out;
    if (f == DRIFT_FP64) {
        if (m == DRIFT_RNA)
            mpfr_round_nearest_away(mpfr_fma, r, ma, mb, mc);
        else
            mpfr_fma(r, ma, mb, mc, mpfr_mode(m));
        out = mpfr_get_d(r, MPFR_RNDN);
    } else {
        int t = mpfr_fma(r, ma, mb, mc, MPFR_RNDZ);
        out = mpfr_get_d(r, MPFR_RNDN);
        if (t != 0) out = bits_double(double_bits(out) | 1);
        out = drift_round(out, f, &(drift_round_opts_t){m, 0, 0}, 0);
    }
    mpfr_clears(ma, mb, mc, r, (mpfr_ptr)0);
    return out;
}

double drift_fma(double a, double b, double c, drift_format_t f, drift_mode_t m)
{
    double ph = a * b;
    if (!isfinite(ph) || !isfinite(c)) return drift_round_sum2(ph, c, f, m);
    double pl = fma(a, b, -ph);
    if (pl == 0) return drift_round_sum2(ph, c, f, m);
    if (f == DRIFT_FP64 && m == DRIFT_RNE) return fma(a, b, c);
    return fma_wide(a, b, c, f, m);
}
