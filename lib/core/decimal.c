/* decimal.c — the exact value of a decimal or hex string, rounded once.
 *
 * How: MPFR reads the string rounded to odd at 64 bits (truncate to 63 bits, then a
 * sticky bit). Rounding to odd at precision >= p + 2 followed by any rounding to p bits
 * equals rounding the exact value once (Boldo & Melquiond, "Emulation of FMA and
 * correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 2008).
 * For formats with p <= 51 the 64-bit odd value is rounded to odd again at 53 bits (a
 * double; round-to-odd composes) and drift_round does the final rounding, so every mode,
 * flush and saturation rule is the lab's own. fp64 (p = 53) is rounded here from the
 * 64-bit odd value, on the double grid (subnormal spacing 2^-1074, overflow at 2^1024). */
#include "decimal.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <string.h>

#include "drift.h"

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != *b) return 0;
    return *a == 0 && *b == 0;
}

int drift_decimal_valid(const char *s)
{
    if (!s) return 0;
    if (*s == '+' || *s == '-') s++;
    if (ieq(s, "inf") || ieq(s, "infinity") || ieq(s, "nan")) return 1;
    int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    if (hex) s += 2;
    int digits = 0;
    while (hex ? isxdigit((unsigned char)*s) : isdigit((unsigned char)*s)) s++, digits++;
    if (*s == '.') {
        s++;
        while (hex ? isxdigit((unsigned char)*s) : isdigit((unsigned char)*s)) s++, digits++;
    }
    if (!digits) return 0;
    if ((hex && (*s == 'p' || *s == 'P')) || (!hex && (*s == 'e' || *s == 'E'))) {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!isdigit((unsigned char)*s)) return 0;
        while (isdigit((unsigned char)*s)) s++;
    }
    return *s == 0;
}

/* t = s rounded to odd at 64 bits (MPFR's default exponent range, 2^+-(2^30), holds any
 * value a format can tell apart from zero or infinity). */
static void read_odd64(mpfr_t t, const char *s)
{
    mpfr_t z;
    mpfr_init2(z, 63);
    int inexact = mpfr_strtofr(z, s, NULL, 0, MPFR_RNDZ);
    mpfr_set(t, z, MPFR_RNDN); /* exact: 63 bits into 64 */
    if (inexact && mpfr_zero_p(z)) {
        /* below MPFR's range: any nonzero value far below every format's subnormals will do */
        mpfr_set_ui_2exp(t, 1, -100000, MPFR_RNDN);
        if (mpfr_signbit(z)) mpfr_neg(t, t, MPFR_RNDN);
    } else if (inexact && mpfr_number_p(z)) {
        /* the sticky bit: half an ulp of the 63-bit value, away from zero */
        mpfr_t half;
        mpfr_init2(half, 2);
        mpfr_set_ui_2exp(half, 1, mpfr_get_exp(z) - 64, MPFR_RNDN);
        if (mpfr_sgn(z) < 0) mpfr_neg(half, half, MPFR_RNDN);
        mpfr_add(t, t, half, MPFR_RNDN); /* exact: the bit below the 63 */
        mpfr_clear(half);
    }
    mpfr_clear(z);
}

/* The double round-to-odd of t (t already odd at 64 bits). */
static double odd53(const mpfr_t t)
{
    double d = mpfr_get_d(t, MPFR_RNDZ); /* DBL_MAX beyond the range, a subnormal or 0 below */
    if (mpfr_cmp_d(t, d) != 0) {
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        if (!(bits & 1)) d = nextafter(d, signbit(d) || mpfr_sgn(t) < 0 ? -INFINITY : INFINITY);
    }
    return d;
}

/* fp64: round |t| on the double grid by mode, with the lab's flush and saturate rules. */
static double round_fp64(const mpfr_t t, const drift_round_opts_t *o, uint32_t sr_bits)
{
    int neg = mpfr_signbit(t);
    if (mpfr_zero_p(t)) return neg ? -0.0 : 0.0;
    mpfr_t a, n, frac;
    mpfr_inits2(80, a, n, frac, (mpfr_ptr)0);
    mpfr_abs(a, t, MPFR_RNDN);
    long e = (long)mpfr_get_exp(a) - 1; /* |t| in [2^e, 2^(e+1)) */
    if (e >= 1024) {                    /* beyond the last binade: DBL_MAX or infinity, by direction */
        int toward_zero = o->mode == DRIFT_RZ || (o->mode == DRIFT_RU && neg) || (o->mode == DRIFT_RD && !neg);
        double r = toward_zero || o->saturate ? DBL_MAX : INFINITY;
        mpfr_clears(a, n, frac, (mpfr_ptr)0);
        return neg ? -r : r;
    }
    long q = e - 52 > -1074 ? e - 52 : -1074;
    mpfr_div_2si(a, a, q, MPFR_RNDN); /* exact */
    mpfr_trunc(n, a);
    mpfr_sub(frac, a, n, MPFR_RNDN); /* exact: the bits below the grid */
    int cmp_half = mpfr_cmp_d(frac, 0.5);
    double lo_n = mpfr_get_d(n, MPFR_RNDN); /* an integer < 2^53: exact */
    int away;
    switch (o->mode) {
    case DRIFT_RZ: away = 0; break;
    case DRIFT_RU: away = !neg && !mpfr_zero_p(frac); break;
    case DRIFT_RD: away = neg && !mpfr_zero_p(frac); break;
    case DRIFT_RNA: away = cmp_half >= 0; break;
    case DRIFT_SR: {
        mpfr_t r;
        mpfr_init2(r, 40);
        mpfr_set_ui_2exp(r, sr_bits, -32, MPFR_RNDN);
        away = mpfr_cmp(r, frac) < 0;
        mpfr_clear(r);
        break;
    }
    default: away = cmp_half > 0 || (cmp_half == 0 && fmod(lo_n, 2.0) != 0); break;
    }
    double m = away ? lo_n + 1 : lo_n; /* <= 2^53: exact */
    int too_big = q > 971 || (q == 971 && m >= 0x1p53);
    double r = too_big ? INFINITY : ldexp(m, (int)q);
    mpfr_clears(a, n, frac, (mpfr_ptr)0);
    if (isinf(r) && o->saturate) r = DBL_MAX;
    if (o->flush_subnormals && r < DBL_MIN) r = 0;
    return neg ? -r : r;
}

int drift_decimal_round(double *out, const char *s, drift_format_t f, const drift_round_opts_t *o, uint32_t sr_bits)
{
    if (!drift_decimal_valid(s) || (unsigned)f >= DRIFT_NFORMATS) return DRIFT_EINVAL;
    drift_round_opts_t rne = DRIFT_ROUND_RNE;
    if (!o) o = &rne;
    mpfr_t t;
    mpfr_init2(t, 64);
    read_odd64(t, s);
    double r;
    if (mpfr_nan_p(t))
        r = NAN;
    else if (mpfr_inf_p(t))
        r = drift_round(mpfr_sgn(t) < 0 ? -INFINITY : INFINITY, f, o, sr_bits);
    else if (f == DRIFT_FP64)
        r = round_fp64(t, o, sr_bits);
    else
        r = drift_round(odd53(t), f, o, sr_bits);
    mpfr_clear(t);
    *out = r;
    return DRIFT_OK;
}
