/* errlaw.c — the law of a computed value's error (errlaw.h). */
#include "errlaw.h"

#include <math.h>
#include <stdlib.h>

#include "drift.h"
#include "stats.h"

/* log(Phi(b) - Phi(a)) for a < b, without cancellation in either tail: with both above 0 the
 * mirror Phi(-a) - Phi(-b) puts them in the left tail, where log Phi is accurate. */
static double log_phi_diff(double a, double b)
{
    if (a > 0) {
        double t = -a;
        a = -b, b = t;
    }
    double lb = drift_log_phi(b), la = drift_log_phi(a);
    return lb + log1p(-exp(la - lb));
}

static double log_gauss(double e, double sigma)
{
    double z = e / sigma;
    return -0.5 * z * z - log(sigma) - 0.5 * log(2 * M_PI);
}

double drift_errlaw_logpdf(drift_errlaw_t law, double e, double sigma, double q)
{
    if (isnan(e) || !(sigma >= 0) || !(q >= 0)) return NAN;
    switch (law) {
    case DRIFT_ERRLAW_GAUSS: return sigma > 0 ? log_gauss(e, sigma) : NAN;
    case DRIFT_ERRLAW_CONV:
        if (q == 0) return sigma > 0 ? log_gauss(e, sigma) : NAN;
        if (sigma == 0) {
            double a = fabs(e);
            return a < q / 2 ? -log(q) : a == q / 2 ? -log(2 * q) : -INFINITY;
        }
        /* with q below 1e-6 sigma the uniform is a point at sigma's scale: the density differs
         * from the Gaussian by O((q / sigma)^2) < 1e-12, less than the difference of the two
         * Phi values would lose to cancellation */
        if (q < 1e-6 * sigma) return log_gauss(e, sigma);
        return log_phi_diff((e - q / 2) / sigma, (e + q / 2) / sigma) - log(q);
    default: return NAN;
    }
}

double drift_errlaw_loglik(drift_errlaw_t law, const double *e, size_t n, double sigma, double q)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += drift_errlaw_logpdf(law, e[i], sigma, q);
    return s;
}

int drift_errlaw_fit(double *sigma, drift_errlaw_t law, const double *e, size_t n, double q)
{
    if (!sigma || !e || n == 0 || !(q >= 0) || (unsigned)law >= DRIFT_ERRLAW_N) return DRIFT_EINVAL;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(e[i])) return DRIFT_EINVAL;
        ss += e[i] * e[i];
    }
    const double rms = sqrt(ss / (double)n);
    if (law == DRIFT_ERRLAW_GAUSS || q == 0) {
        if (rms == 0) return DRIFT_EINVAL;
        *sigma = rms;
        return 0;
    }
    /* golden section on s = log sigma, maximising the log-likelihood */
    const double g = 0.6180339887498949;
    double lo = log(1e-6 * q), hi = log(2 * rms + q);
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = drift_errlaw_loglik(law, e, n, exp(x1), q), f2 = drift_errlaw_loglik(law, e, n, exp(x2), q);
    while (hi - lo > 1e-6) {
        if (f1 >= f2) {
            hi = x2, x2 = x1, f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = drift_errlaw_loglik(law, e, n, exp(x1), q);
        } else {
            lo = x1, x1 = x2, f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = drift_errlaw_loglik(law, e, n, exp(x2), q);
        }
    }
    *sigma = exp(0.5 * (lo + hi));
    return 0;
}

double drift_errlaw_kl(drift_errlaw_t a, double sigma_a, drift_errlaw_t b, double sigma_b, double q)
{
    if (!(sigma_a >= 0) || !(sigma_b >= 0) || !(q >= 0)) return NAN;
    const double L = (a == DRIFT_ERRLAW_CONV ? q / 2 : 0) + 10 * sigma_a;
    if (!(L > 0)) return NAN;
    const int m = 4000; /* Simpson: an even number of intervals */
    const double h = 2 * L / m;
    double s = 0;
    for (int i = 0; i <= m; i++) {
        double e = -L + h * i, la = drift_errlaw_logpdf(a, e, sigma_a, q);
        if (isnan(la)) return NAN;
        if (la == -INFINITY) continue;
        double lb = drift_errlaw_logpdf(b, e, sigma_b, q);
        if (isnan(lb)) return NAN;
        if (lb == -INFINITY) return INFINITY;
        double w = i == 0 || i == m ? 1 : i % 2 ? 4 : 2;
        s += w * exp(la) * (la - lb);
    }
    return s * h / 3;
}

int drift_errlaw_binades(drift_errlaw_bin_t *out, const double *err, const double *val, const int *unit, size_t n,
    int units, int k_lo, int nbin, drift_format_t fmt)
{
    if (!out || !err || !val || !unit || units < 1 || nbin < 1) return DRIFT_EINVAL;
    double *fit = malloc((n ? n : 1) * sizeof(double)), *test = malloc((n ? n : 1) * sizeof(double)),
           *all = malloc((n ? n : 1) * sizeof(double));
    if (!fit || !test || !all) {
        free(fit), free(test), free(all);
        return DRIFT_ENOMEM;
    }
    int nb = 0;
    for (int b = 0; b < nbin; b++) {
        const double lo = ldexp(1, k_lo + b), hi = 2 * lo, q = drift_ulp(lo, fmt);
        size_t m = 0;
        double ss = 0;
        for (size_t i = 0; i < n; i++)
            if (fabs(val[i]) >= lo && fabs(val[i]) < hi) all[m++] = err[i], ss += err[i] * err[i];
        if (m < DRIFT_ERRLAW_MIN_N) continue;
        drift_errlaw_bin_t *o = &out[nb];
        *o = (drift_errlaw_bin_t){lo, hi, q, (long)m, 0, 0, sqrt(ss / (double)m), NAN, NAN, 0, NAN, NAN, 'u'};
        for (int t = 0; t < units; t++) {
            size_t nf = 0, nt = 0;
            double sg, sc;
            for (size_t i = 0; i < n; i++)
                if (fabs(val[i]) >= lo && fabs(val[i]) < hi) {
                    if (unit[i] == t)
                        test[nt++] = err[i];
                    else
                        fit[nf++] = err[i];
                }
            if (!nt || nf < DRIFT_ERRLAW_MIN_N / 2 || drift_errlaw_fit(&sg, DRIFT_ERRLAW_GAUSS, fit, nf, q) ||
                drift_errlaw_fit(&sc, DRIFT_ERRLAW_CONV, fit, nf, q))
                continue;
            double d = drift_errlaw_loglik(DRIFT_ERRLAW_CONV, test, nt, sc, q) -
                       drift_errlaw_loglik(DRIFT_ERRLAW_GAUSS, test, nt, sg, q);
            o->dloglik += d, o->folds++, o->folds_conv += d > 0;
        }
        if (drift_errlaw_fit(&o->sigma_gauss, DRIFT_ERRLAW_GAUSS, all, m, q) ||
            drift_errlaw_fit(&o->sigma_conv, DRIFT_ERRLAW_CONV, all, m, q))
            continue; /* all errors 0: no law to fit */
        o->power_conv =
            (double)m * drift_errlaw_kl(DRIFT_ERRLAW_CONV, o->sigma_conv, DRIFT_ERRLAW_GAUSS, o->sigma_gauss, q);
        o->power_gauss =
            (double)m * drift_errlaw_kl(DRIFT_ERRLAW_GAUSS, o->sigma_gauss, DRIFT_ERRLAW_CONV, o->sigma_conv, q);
        const double D = DRIFT_ERRLAW_DECIDE;
        if (o->folds >= 2 && o->dloglik >= D && o->power_conv >= D && o->folds_conv == o->folds)
            o->winner = 'c';
        else if (o->folds >= 2 && -o->dloglik >= D && o->power_gauss >= D && o->folds_conv == 0)
            o->winner = 'g';
        nb++;
    }
    free(fit), free(test), free(all);
    return nb;
}
