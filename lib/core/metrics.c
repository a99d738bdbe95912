/* metrics.c — distances between a computed value and its exact witness.
 *
 * Errors are reported rounded up, never down: a measured error is evidence, and an error
 * printed smaller than it is would understate the drift. */
#include "metrics.h"

#include <math.h>
#include <string.h>

/* |c - e| rounded toward +inf. d = fl(c - e) (RNE) and the exact residual
 * r = (c - e) - d (TwoSum, exact); if r points away from zero relative to d, the exact
 * difference is larger in magnitude than |d|, so step |d| up by one ulp. */
double drift_abs_err(double computed, double exact)
{
    if (isnan(computed) || isnan(exact)) return NAN;
    if (computed == exact) return 0; /* also equal infinities and signed zeros */
    if (isinf(computed) || isinf(exact)) return INFINITY;
    double d = computed - exact;
    if (isinf(d)) return INFINITY; /* the exact difference exceeds the double range */
    double bv = d - computed;
    double av = d - bv;
    double r = (computed - av) + (-exact - bv);
    double ad = fabs(d);
    if (r != 0 && (r > 0) == (d > 0)) ad = nextafter(ad, INFINITY);
    return ad;
}

/* abs_err / |e| rounded toward +inf: q = fl(a / b); if q * b < a exactly (fma residual
 * a - q b > 0), the true quotient is above q. */
double drift_rel_err(double computed, double exact)
{
    double a = drift_abs_err(computed, exact);
    if (isnan(a)) return NAN;
    if (a == 0) return 0;
    if (exact == 0) return INFINITY;
    double b = fabs(exact);
    double q = a / b;
    if (isfinite(q) && fma(-q, b, a) > 0) q = nextafter(q, INFINITY);
    return q;
}

/* abs_err / ulp: the ulp is a power of two, so the division is exact unless it leaves the
 * double range (then it overflows to INFINITY, still an upper bound). */
double drift_ulp_err(double computed, double exact, drift_format_t f)
{
    double a = drift_abs_err(computed, exact);
    if (isnan(a)) return NAN;
    if (a == 0) return 0;
    if (!isfinite(exact)) return INFINITY;
    return a / drift_ulp(exact, f);
}

/* Index of a non-negative value v of f in the increasing list of f's non-negative
 * values: v / min_subnormal below 2^emin; (e - emin + 1) 2^(p-1) + (m - 2^(p-1)) for
 * v = m 2^(e-p+1) in binade e; infinity is one past max_finite. */
static int64_t value_index(double v, const drift_format_info_t *fi)
{
    if (isinf(v)) return value_index(fi->max_finite, fi) + 1;
    if (v < fi->min_normal) return (int64_t)(v / fi->min_subnormal);
    int e = ilogb(v);
    int64_t m = (int64_t)ldexp(v, fi->p - 1 - e);
    int64_t half = (int64_t)1 << (fi->p - 1);
    return (int64_t)(e - fi->emin + 1) * half + (m - half);
}

/* |index(a) - index(b)| with signs (the negative values mirror the positive ones around
 * the zeros, which count as one point). Values that are not members of f are rounded to
 * nearest-even first. NaN gives INT64_MAX, as does a distance beyond int64_t (only fp64's
 * extremes). */
int64_t drift_ulp_distance(double a, double b, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    a = drift_rne(a, f);
    b = drift_rne(b, f);
    if (isnan(a) || isnan(b)) return INT64_MAX;
    int64_t ia = value_index(fabs(a), fi), ib = value_index(fabs(b), fi);
    int na = signbit(a) && a != 0, nb = signbit(b) && b != 0;
    if (na == nb) return ia > ib ? ia - ib : ib - ia;
    /* opposite signs: the sum of both indices, saturating */
    if (ia > INT64_MAX - ib) return INT64_MAX;
    return ia + ib;
}

/* sum (c - e)^2 / sum e^2 in double (a statistic, not a witness: it only needs to be
 * accurate to a few digits). Both sums are formed on values scaled by the largest |e|
 * (a power of two) so that squares of large or tiny values neither overflow nor vanish. */
double drift_nmse(const double *computed, const double *exact, size_t n)
{
    double emax = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(computed[i]) || isnan(exact[i])) return NAN;
        if (fabs(exact[i]) > emax) emax = fabs(exact[i]);
    }
    int sc = emax > 0 && isfinite(emax) ? ilogb(emax) : 0;
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = ldexp(computed[i], -sc) - ldexp(exact[i], -sc);
        double e = ldexp(exact[i], -sc);
        num += d * d;
        den += e * e;
    }
    if (num == 0) return 0;
    if (den == 0) return INFINITY;
    return num / den;
}

/* a beats b: larger, NaN never beats anything and everything beats NaN. */
static int beats(double a, double b) { return !isnan(a) && (isnan(b) || a > b); }

void drift_top2(drift_top2_t *out, const double *x, size_t n)
{
    memset(out, 0, sizeof *out);
    if (n < 2) {
        out->v1 = out->v2 = n ? x[0] : NAN;
        out->gap = NAN;
        return;
    }
    size_t i1 = 0;
    for (size_t i = 1; i < n; i++)
        if (beats(x[i], x[i1])) i1 = i;
    size_t i2 = i1 == 0 ? 1 : 0;
    for (size_t i = 0; i < n; i++)
        if (i != i1 && beats(x[i], x[i2])) i2 = i;
    out->top1 = i1;
    out->top2 = i2;
    out->v1 = x[i1];
    out->v2 = x[i2];
    out->gap = out->v1 - out->v2;
    out->tie = out->gap == 0;
}
