/* stats.c — binomial intervals, the normal distribution, log bins and the probit flip fit.
 * See stats.h for what each function promises; comments here say how and why. */
#include "stats.h"
#include "drift.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Wilson interval ------------------------------------------------------------------ */

int drift_wilson(double *lo, double *hi, long k, long n, double z)
{
    if (!lo || !hi || n <= 0 || k < 0 || k > n || !(z > 0) || !isfinite(z)) return DRIFT_EINVAL;
    double nn = (double)n, kk = (double)k, z2 = z * z;
    double den = nn + z2;
    double center = (kk + z2 / 2) / den;
    double half = z * sqrt(kk * (nn - kk) / nn + z2 / 4) / den;
    /* At k = 0 (k = n) the exact lower (upper) end is 0 (1); the formula gets there only up
     * to rounding, and a rate interval must never leave [0, 1]. */
    *lo = k == 0 ? 0.0 : fmax(0.0, center - half);
    *hi = k == n ? 1.0 : fmin(1.0, center + half);
    return DRIFT_OK;
}

/* ---- the normal distribution ---------------------------------------------------------- */

/* 1/sqrt(2) as a double-double: hi = RN(1/sqrt 2), lo = RN(1/sqrt 2 - hi). */
static const double RSQRT2_HI = 0x1.6a09e667f3bcdp-1;
static const double RSQRT2_LO = -0x1.bdd3413b26456p-55;
static const double TWO_OVER_SQRTPI = 1.1283791670955126; /* 2/sqrt(pi) */
static const double LOG_SQRT_2PI = 0.91893853320467274;   /* log(sqrt(2 pi)) */

/* Phi(x) = erfc(-x/sqrt2)/2. The argument t = -x/sqrt2 is formed as a double-double
 * t_hi + t_lo, and erfc is corrected to first order: erfc(t_hi + t_lo) = erfc(t_hi) -
 * (2/sqrt pi) exp(-t_hi^2) t_lo. Why: d log erfc(t)/dt ~ -2t, so the rounding of t alone would
 * cost a relative error ~2 t^2 u (1e-13 at x = -37); with the correction only erfc's own
 * error (an ulp or two in glibc) remains. */
/* (-1)^k (2k-1)!!: the asymptotic series Phi(x) = phi(x)/|x| * sum C[k] x^-2k (x -> -inf). */
static const double MILLS[8] = {1, -1, 3, -15, 105, -945, 10395, -135135};

static double mills_series(double x)
{
    double r = 1.0 / (x * x), s = 0, term = 1;
    for (int k = 0; k < 8; k++) {
        s += MILLS[k] * term;
        term *= r;
    }
    return s;
}

/* Phi(x) for x < -37.52, where the result is subnormal. Why not erfc: its intermediates
 * underflow there and lose ~10 units of 2^-1074. Here x^2 is split exactly (hi + lo, fma), the
 * exponent -hi/2 is reduced by Cody-Waite to n ln2 + r (LN2_HI has 21 trailing zero bits, so
 * n LN2_HI is exact), and 2^n is applied last by ldexp, which rounds once. */
static double phi_subnormal(double x)
{
    static const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10; /* fdlibm */
    double hi = x * x, lo = fma(x, x, -hi);
    double z = -0.5 * hi; /* exact */
    double n = nearbyint(z / LN2_HI);
    double r = (z - n * LN2_HI) - n * LN2_LO;
    double small = -0.5 * lo - log(-x) - 0.91893853320467274 + log(mills_series(x));
    return ldexp(exp(r + small), (int)n);
}

double drift_phi(double x)
{
    if (isnan(x)) return NAN;
    if (x < -40) return 0.0;                 /* Phi(-40) = 3.7e-350: below half of 2^-1074 */
    if (x < -37.52) return phi_subnormal(x); /* Phi(-37.5194) = 2^-1022 */
    double mx = -x;
    double t_hi = mx * RSQRT2_HI;
    double t_lo = fma(mx, RSQRT2_HI, -t_hi) + mx * RSQRT2_LO;
    double e = erfc(t_hi);
    if (t_lo != 0 && e != 0 && e != 2) e -= TWO_OVER_SQRTPI * exp(-t_hi * t_hi) * t_lo;
    return 0.5 * e;
}

double drift_phi_pdf(double x) { return exp(-0.5 * x * x - LOG_SQRT_2PI); }

/* log Phi(x). x > 0: log1p(-Phi(-x)) keeps the tiny deficit from 1. -30 <= x <= 0: log of
 * drift_phi (no underflow there: Phi(-30) ~ 5e-198). x < -30: the asymptotic (Mills ratio)
 * series Phi(x) = phi(x)/|x| (1 - 1/x^2 + 3/x^4 - 15/x^6 + ...); at |x| >= 30 the first omitted
 * term (2027025/x^16) is below 5e-18 relative, so eight terms give full accuracy. */
double drift_log_phi(double x)
{
    if (isnan(x)) return NAN;
    if (x > 0) return log1p(-drift_phi(-x));
    if (x >= -30) return log(drift_phi(x));
    if (isinf(x)) return -INFINITY;
    return -0.5 * x * x - log(-x) - LOG_SQRT_2PI + log(mills_series(x));
}

/* Wichura, AS 241 (PPND16), Appl. Statist. 37(3):477-484, 1988. */
static double as241(double p)
{
    static const double a[8] = {3.3871328727963666080e0, 1.3314166789178437745e+2, 1.9715909503065514427e+3,
        1.3731693765509461125e+4, 4.5921953931549871457e+4, 6.7265770927008700853e+4, 3.3430575583588128105e+4,
        2.5090809287301226727e+3};
    static const double b[8] = {1.0, 4.2313330701600911252e+1, 6.8718700749205790830e+2, 5.3941960214247511077e+3,
        2.1213794301586595867e+4, 3.9307895800092710610e+4, 2.8729085735721942674e+4, 5.2264952788528545610e+3};
    static const double c[8] = {1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
        3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1, 2.27238449892691845833e-2,
        7.74545014278341407640e-4};
    static const double d[8] = {1.0, 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
        1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4, 1.05075007164441684324e-9};
    static const double e[8] = {6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
        2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3, 2.71155556874348757815e-5,
        2.01033439929228813265e-7};
    static const double f[8] = {1.0, 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
        7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7, 2.04426310338993978564e-15};
    double q = p - 0.5, num, den, r;
    if (fabs(q) <= 0.425) {
        r = 0.180625 - q * q;
        num = den = 0;
        for (int i = 7; i >= 0; i--) {
            num = num * r + a[i];
            den = den * r + b[i];
        }
        return q * num / den;
    }
    r = q < 0 ? p : 1.0 - p;
    r = sqrt(-log(r));
    const double *P = c, *Q = d;
    if (r <= 5.0) {
        r -= 1.6;
    } else {
        r -= 5.0;
        P = e;
        Q = f;
    }
    num = den = 0;
    for (int i = 7; i >= 0; i--) {
        num = num * r + P[i];
        den = den * r + Q[i];
    }
    return q < 0 ? -num / den : num / den;
}

/* The lower half (p <= 1/2) is computed and the upper half mirrored: 1 - p is exact for p in
 * [1/2, 1] (Sterbenz), so the mirror loses nothing. The Newton step is taken on log Phi, whose
 * relative accuracy holds deep in the tail: x1 = x0 - (log Phi(x0) - log p) Phi(x0)/phi(x0). */
double drift_phi_inv(double p)
{
    if (isnan(p) || p < 0 || p > 1) return NAN;
    if (p == 0) return -INFINITY;
    if (p == 1) return INFINITY;
    if (p > 0.5) return -drift_phi_inv(1.0 - p);
    if (p == 0.5) return 0.0;
    double x = as241(p);
    double ph = drift_phi(x), pd = drift_phi_pdf(x);
    if (ph > 0 && pd > 0)
        x -= (log(ph) - log(p)) * ph / pd;
    else
        x -= (drift_log_phi(x) - log(p)) / (-x); /* Phi/phi -> 1/|x| where both underflow */
    return x;
}

/* ---- chi-square tail -------------------------------------------------------------------- */

/* Numerical Recipes (2nd ed.) 6.2: gser / gcf. lgamma is called only from serial code in the
 * lab (glibc's lgamma writes the global signgam). */
double drift_gamma_q(double a, double x)
{
    if (!(a > 0) || !(x >= 0) || isnan(x)) return NAN;
    if (x == 0) return 1.0;
    if (isinf(x)) return 0.0;
    const double EPS = 1e-16, FPMIN = 1e-300;
    double lpre = -x + a * log(x) - lgamma(a);
    if (x < a + 1) {
        double ap = a, sum = 1.0 / a, del = sum;
        for (int n = 0; n < 100000; n++) {
            ap += 1;
            del *= x / ap;
            sum += del;
            if (fabs(del) < fabs(sum) * EPS) break;
        }
        return 1.0 - sum * exp(lpre);
    }
    double b = x + 1 - a, c = 1 / FPMIN, d = 1 / b, h = d;
    for (int i = 1; i < 100000; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < FPMIN) d = FPMIN;
        c = b + an / c;
        if (fabs(c) < FPMIN) c = FPMIN;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < EPS) break;
    }
    return exp(lpre) * h;
}

double drift_chi2_sf(double x, double df) { return drift_gamma_q(df / 2, x / 2); }

/* ---- bins ------------------------------------------------------------------------------- */

int drift_logbins_init(drift_logbins_t *b, double lo, double hi, int nbins)
{
    if (!b || !(lo > 0) || !(hi > lo) || !isfinite(hi) || nbins < 1 || nbins > DRIFT_BINS_MAX) return DRIFT_EINVAL;
    memset(b, 0, sizeof *b);
    b->nbins = nbins;
    double ratio = hi / lo;
    for (int i = 0; i <= nbins; i++) b->edge[i] = lo * pow(ratio, (double)i / nbins);
    b->edge[0] = lo;
    b->edge[nbins] = hi;
    return DRIFT_OK;
}

int drift_logbins_find(const drift_logbins_t *b, double x)
{
    if (!(x >= b->edge[0]) || !(x <= b->edge[b->nbins])) return -1;
    int lo = 0, hi = b->nbins; /* invariant: edge[lo] <= x, and x < edge[hi] or hi == nbins */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (x >= b->edge[mid])
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

double drift_logbins_center(const drift_logbins_t *b, int i) { return sqrt(b->edge[i] * b->edge[i + 1]); }

int drift_binned_rates(
    drift_rate_t *out, const drift_logbins_t *b, const double *x, const unsigned char *event, size_t n)
{
    if (!out || !b || (n && (!x || !event))) return DRIFT_EINVAL;
    for (int i = 0; i < b->nbins; i++) out[i] = (drift_rate_t){0, 0, NAN, NAN, NAN};
    for (size_t i = 0; i < n; i++) {
        int j = drift_logbins_find(b, x[i]);
        if (j < 0) continue;
        out[j].n++;
        out[j].k += event[i] != 0;
    }
    for (int i = 0; i < b->nbins; i++) {
        if (!out[i].n) continue;
        out[i].rate = (double)out[i].k / (double)out[i].n;
        int rc = drift_wilson(&out[i].lo, &out[i].hi, out[i].k, out[i].n, DRIFT_Z95);
        if (rc) return rc;
    }
    return DRIFT_OK;
}

/* ---- the probit fit ---------------------------------------------------------------------- */

const char *drift_fit_status_name(drift_fit_status_t s)
{
    static const char *const N[] = {"ok", "no_flips", "separated", "all_flips", "empty"};
    return (unsigned)s < 5 ? N[s] : "?";
}

static int usable(double g) { return g > 0 && isfinite(g); }

double drift_phi_loglik(const double *gap, const unsigned char *flip, size_t n, double sigma)
{
    double l = 0;
    for (size_t i = 0; i < n; i++) {
        if (!usable(gap[i])) continue;
        double z = gap[i] / sigma;
        l += flip[i] ? drift_log_phi(-z) : drift_log_phi(z);
    }
    return l;
}

double drift_phi_gap_at(double sigma, double p) { return -sigma * drift_phi_inv(p); }

/* 1.92073 = chi^2_1 quantile 0.95 (3.841459) / 2: the profile-likelihood drop of a 95% interval. */
#define LR_DROP 1.9207294103470618

/* Bisection on t = log sigma for l(e^t) = target, l(e^a) and l(e^b) on opposite sides. */
static double solve_t(const double *gap, const unsigned char *flip, size_t n, double a, double b, double target)
{
    double la = drift_phi_loglik(gap, flip, n, exp(a)) - target;
    for (int it = 0; it < 200 && fabs(b - a) > 1e-12 * fmax(1.0, fabs(a)); it++) {
        double m = 0.5 * (a + b);
        double lm = drift_phi_loglik(gap, flip, n, exp(m)) - target;
        if ((lm >= 0) == (la >= 0)) {
            a = m;
            la = lm;
        } else {
            b = m;
        }
    }
    return 0.5 * (a + b);
}

int drift_phi_fit(
    drift_phi_fit_t *out, const double *gap, const unsigned char *flip, size_t n, const drift_logbins_t *bins)
{
    if (!out || (n && (!gap || !flip))) return DRIFT_EINVAL;
    memset(out, 0, sizeof *out);
    out->g2 = out->p_value = NAN;
    out->sigma = out->sigma_lo = out->sigma_hi = out->loglik = NAN;
    double gmin = INFINITY, gmax = 0, max_flip_gap = 0, min_keep_gap = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!usable(gap[i])) continue;
        out->n++;
        gmin = fmin(gmin, gap[i]);
        gmax = fmax(gmax, gap[i]);
        if (flip[i]) {
            out->k++;
            max_flip_gap = fmax(max_flip_gap, gap[i]);
        } else {
            min_keep_gap = fmin(min_keep_gap, gap[i]);
        }
    }
    if (out->n == 0) {
        out->status = DRIFT_FIT_EMPTY;
        return DRIFT_OK;
    }
    if (out->k == out->n) {
        out->status = DRIFT_FIT_ALL_FLIPS;
        out->sigma = out->sigma_hi = INFINITY;
        out->loglik = out->n * log(0.5);
        return DRIFT_OK;
    }
    /* Coarse scan over t = log sigma in unit steps, wide enough that the maximum is interior
     * whenever it exists (flip rates between Phi(-e^10) and Phi(-e^-10) at the extreme gaps);
     * then golden section inside the bracket around the best grid point (unimodality, stats.h). */
    double t0 = log(gmin) - 10, t1 = log(gmax) + 10;
    int ng = (int)ceil(t1 - t0) + 1;
    int best = 0;
    double lbest = -INFINITY;
    for (int i = 0; i < ng; i++) {
        double l = drift_phi_loglik(gap, flip, n, exp(t0 + i));
        if (l > lbest) {
            lbest = l;
            best = i;
        }
    }
    double tlast = t0 + (ng - 1);
    if (out->k == 0 || max_flip_gap < min_keep_gap) {
        /* No flips, or flips only below every non-flip: l increases towards sigma = 0, where
         * every pair is predicted perfectly (l -> 0). The MLE is 0; the 95% upper bound is the
         * sigma where l has dropped by LR_DROP from that supremum. (Otherwise some flip sits
         * at a gap >= some non-flip, l -> -inf at both ends, and the maximum is interior.) */
        out->status = out->k == 0 ? DRIFT_FIT_NO_FLIPS : DRIFT_FIT_SEPARATED;
        out->sigma = out->sigma_lo = 0;
        out->loglik = 0;
        double target = -LR_DROP;
        if (drift_phi_loglik(gap, flip, n, exp(t0)) < target)
            out->sigma_hi = exp(t0);
        else if (drift_phi_loglik(gap, flip, n, exp(tlast)) >= target)
            out->sigma_hi = INFINITY;
        else
            out->sigma_hi = exp(solve_t(gap, flip, n, t0, tlast, target));
    } else {
        double a = t0 + (best > 0 ? best - 1 : 0), b = t0 + (best < ng - 1 ? best + 1 : ng - 1);
        const double R = 0.6180339887498949; /* (sqrt 5 - 1)/2 */
        double c = b - R * (b - a), d = a + R * (b - a);
        double lc = drift_phi_loglik(gap, flip, n, exp(c)), ld = drift_phi_loglik(gap, flip, n, exp(d));
        while (b - a > 1e-10) {
            if (lc >= ld) {
                b = d;
                d = c;
                ld = lc;
                c = b - R * (b - a);
                lc = drift_phi_loglik(gap, flip, n, exp(c));
            } else {
                a = c;
                c = d;
                lc = ld;
                d = a + R * (b - a);
                ld = drift_phi_loglik(gap, flip, n, exp(d));
            }
        }
        double th = 0.5 * (a + b);
        out->status = DRIFT_FIT_OK;
        out->sigma = exp(th);
        out->loglik = drift_phi_loglik(gap, flip, n, out->sigma);
        double target = out->loglik - LR_DROP;
        out->sigma_lo =
            drift_phi_loglik(gap, flip, n, exp(t0)) >= target ? 0 : exp(solve_t(gap, flip, n, t0, th, target));
        out->sigma_hi = drift_phi_loglik(gap, flip, n, exp(tlast)) >= target
                            ? INFINITY
                            : exp(solve_t(gap, flip, n, th, tlast, target));
    }
    if (!bins) return DRIFT_OK;

    /* Goodness of fit: binned deviance against the fitted expected counts (stats.h). */
    double O[DRIFT_BINS_MAX], E[DRIFT_BINS_MAX], N[DRIFT_BINS_MAX];
    for (int j = 0; j < bins->nbins; j++) O[j] = E[j] = N[j] = 0;
    for (size_t i = 0; i < n; i++) {
        if (!usable(gap[i])) continue;
        int j = drift_logbins_find(bins, gap[i]);
        if (j < 0) continue;
        N[j] += 1;
        O[j] += flip[i] != 0;
        E[j] += out->sigma > 0 ? drift_phi(-gap[i] / out->sigma) : 0;
    }
    /* Pool adjacent bins (in gap order) until each group expects at least DRIFT_FIT_MIN_EXPECTED
     * flips and as many non-flips (Cochran's rule for the chi-square approximation); a short
     * last group joins the one before. Why: bins far above sigma expect ~0 flips and see 0;
     * left alone they would add degrees of freedom without information and push p towards 1. */
    double gO[DRIFT_BINS_MAX], gE[DRIFT_BINS_MAX], gN[DRIFT_BINS_MAX];
    int ng2 = 0;
    double aO = 0, aE = 0, aN = 0;
    for (int j = 0; j < bins->nbins; j++) {
        aO += O[j];
        aE += E[j];
        aN += N[j];
        if (aE >= DRIFT_FIT_MIN_EXPECTED && aN - aE >= DRIFT_FIT_MIN_EXPECTED) {
            gO[ng2] = aO, gE[ng2] = aE, gN[ng2] = aN;
            ng2++;
            aO = aE = aN = 0;
        }
    }
    if (aN > 0) {
        if (ng2 > 0) {
            gO[ng2 - 1] += aO, gE[ng2 - 1] += aE, gN[ng2 - 1] += aN;
        } else {
            gO[0] = aO, gE[0] = aE, gN[0] = aN;
            ng2 = 1;
        }
    }
    double g2 = 0;
    for (int j = 0; j < ng2; j++) {
        /* The model can predict a probability that underflows to 0 (or rounds to 1) where a
         * flip (non-flip) was seen; clamping keeps G^2 finite but huge, which is the honest
         * verdict: p ~ 0. */
        double e = fmin(fmax(gE[j], 1e-300), gN[j] - 1e-300 * gN[j]);
        if (gO[j] > 0) g2 += gO[j] * log(gO[j] / e);
        if (gN[j] - gO[j] > 0) g2 += (gN[j] - gO[j]) * log((gN[j] - gO[j]) / (gN[j] - e));
    }
    g2 *= 2;
    out->g2 = g2 < 0 ? 0 : g2; /* a sum of nonnegative KL terms; rounding can leave -1e-16 */
    out->df = ng2 - 1;
    out->p_value = out->df >= 1 ? drift_chi2_sf(out->g2, out->df) : NAN;
    return DRIFT_OK;
}

/* ---- order statistics ------------------------------------------------------------------------ */

int drift_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int drift_median(double *out, const double *x, size_t n)
{
    *out = NAN;
    if (!n) return DRIFT_OK;
    double *c = malloc(n * sizeof *c);
    if (!c) return DRIFT_ENOMEM;
    memcpy(c, x, n * sizeof *c);
    qsort(c, n, sizeof *c, drift_cmp_double);
    *out = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return DRIFT_OK;
}
