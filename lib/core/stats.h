/* stats.h — the statistics of rare events: binomial intervals, the normal distribution, log-spaced
 * bins, and the one-parameter probit fit behind "how small a logit gap flips argmax".
 *
 * Why a module: a flip rate measured on 200 rows is a binomial estimate, and "how small a
 * gap flips" is the scale of a noise model fitted to (gap, flipped) pairs. Both need
 * intervals and a goodness of fit, never a bare number. */
#ifndef DRIFT_STATS_H
#define DRIFT_STATS_H

#include <stddef.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- binomial proportions ------------------------------------------------------------- */

/* Wilson (1927) score interval for k successes in n trials at normal quantile z (1.959963984540054
 * for 95%): the p with |k/n - p| <= z sqrt(p(1-p)/n). Unlike the Wald interval it stays in
 * [0, 1] and does not collapse to zero width at k = 0 or k = n, which is the common case for
 * flip rates. 0, or DRIFT_EINVAL (n <= 0, k outside [0, n], z <= 0 or not finite). */
DRIFT_MUST_CHECK int drift_wilson(double *lo, double *hi, long k, long n, double z);

#define DRIFT_Z95 1.959963984540054 /* Phi^-1(0.975) */

/* ---- the standard normal distribution ------------------------------------------------- */

/* Phi(x) = P(N(0,1) <= x), to full double accuracy in both tails: relative error within a few
 * ulp (measured: 2.1 against MPFR) wherever Phi(x) is normal (x > -37.52), a few units of 2^-1074
 * where it is subnormal, 0 below x = -40. */
double drift_phi(double x);
/* log Phi(x), accurate for every finite x (including x << -38 where Phi underflows). */
double drift_log_phi(double x);
/* Phi^-1(p) for p in (0, 1): Wichura's AS 241 (Appl. Statist. 37:477, 1988; ~1e-16 relative)
 * polished by one Newton step on drift_phi. -inf at 0, +inf at 1, NaN outside [0, 1]. */
double drift_phi_inv(double p);
/* phi(x) = exp(-x^2/2) / sqrt(2 pi), the density. */
double drift_phi_pdf(double x);

/* ---- chi-square tail ------------------------------------------------------------------- */

/* Q(a, x) = Gamma(a, x) / Gamma(a), the regularised upper incomplete gamma function
 * (series for x < a + 1, Lentz's continued fraction otherwise; Numerical Recipes 6.2).
 * NaN for a <= 0 or x < 0. */
double drift_gamma_q(double a, double x);
/* P(chi^2_df > x) = Q(df/2, x/2). */
double drift_chi2_sf(double x, double df);

/* ---- log-spaced bins ------------------------------------------------------------------ */

#define DRIFT_BINS_MAX 256

/* nbins bins between lo and hi, equal width in log(x). edge[i] = lo * (hi/lo)^(i/nbins),
 * computed once; a value's bin is found by comparing with the stored edges (never by
 * recomputing a logarithm), so the assignment is exactly reproducible. */
typedef struct {
    int nbins;
    double edge[DRIFT_BINS_MAX + 1];
} drift_logbins_t;

/* 0, or DRIFT_EINVAL (lo <= 0, hi <= lo, nbins outside 1..DRIFT_BINS_MAX). */
DRIFT_MUST_CHECK int drift_logbins_init(drift_logbins_t *b, double lo, double hi, int nbins);
/* The bin i with edge[i] <= x < edge[i+1] (x == edge[nbins] goes in the last bin), or -1 when
 * x is outside [edge[0], edge[nbins]] or NaN. */
int drift_logbins_find(const drift_logbins_t *b, double x);
/* Geometric centre of bin i. */
double drift_logbins_center(const drift_logbins_t *b, int i);

/* A binned rate: k events in n trials with its Wilson 95% interval. */
typedef struct {
    long n, k;
    double rate, lo, hi; /* k/n and the Wilson interval; NaN when n == 0 */
} drift_rate_t;

/* Counts events per bin: for each i with x[i] in a bin, n += 1 and k += (event[i] != 0);
 * then fills rate, lo, hi. out has b->nbins entries. Values outside every bin are ignored. */
DRIFT_MUST_CHECK int drift_binned_rates(
    drift_rate_t *out, const drift_logbins_t *b, const double *x, const unsigned char *event, size_t n);

/* ---- the probit flip model P(flip | gap D) = Phi(-D / sigma) --------------------------- */

/* Why this model: the computed gap is D + e where e = (error of logit 1) - (error of logit 2).
 * If e is N(0, sigma^2) (many small independent rounding errors, central limit theorem), the
 * argmax flips when e < -D, with probability Phi(-D/sigma). The flip probability is 1/2 at
 * D = 0 (a coin toss) and falls off on the scale sigma.
 *
 * The fit is the maximum-likelihood sigma of
 *     l(sigma) = sum_i y_i log Phi(-D_i/sigma) + (1 - y_i) log Phi(D_i/sigma),
 * found by golden-section search on t = log sigma. Why that works: l is concave in
 * beta = 1/sigma (probit log-likelihood, linear predictor -beta D), hence unimodal in t, so
 * golden section cannot be trapped; it needs only values of log Phi, which drift_log_phi gives
 * accurately in both tails (no overflowing Mills ratios).
 *
 * Interval: the profile-likelihood 95% interval {sigma : l(sigma) >= l_max - 1.92073}
 * (1.92073 = chi^2_1(0.95)/2), found by bisection on each side.
 *
 * Goodness of fit (stated in every output that uses it): the pairs are grouped in the
 * caller's log-spaced gap bins, and adjacent bins are pooled (in gap order) until every group
 * expects at least DRIFT_FIT_MIN_EXPECTED flips and as many non-flips (Cochran's rule; a short
 * last group joins the previous one). Per group, O = observed flips, E = sum of the fitted
 * Phi(-D_i/sigma) over its pairs, n = pairs. The statistic is the grouped deviance
 *     G^2 = 2 sum_groups [ O ln(O/E) + (n - O) ln((n - O)/(n - E)) ]
 * (the likelihood ratio of the grouped observed counts against the fitted model's expected
 * counts, Hosmer-Lemeshow style grouping by gap), with df = groups - 1, and
 * p = P(chi^2_df > G^2). A small p (say < 0.01) says the Gaussian-noise curve is the wrong
 * shape for that configuration (e.g. logits rounded to a coarse output grid can make the flip
 * probability fall linearly, not like Phi). With fewer than two groups there is no test
 * (df = 0, p = NaN).
 *
 * Critical gaps: the gap at which P(flip) = P is D_P = -sigma Phi^-1(P). Note that P(flip)
 * reaches 50% only at D = 0: a symmetric error makes a flip at worst a coin toss. */

#define DRIFT_FIT_MIN_EXPECTED 5.0

typedef enum {
    DRIFT_FIT_OK = 0,    /* interior maximum */
    DRIFT_FIT_NO_FLIPS,  /* no flips at all: sigma = 0, sigma_hi is the 95% upper bound */
    DRIFT_FIT_SEPARATED, /* every flip at a smaller gap than every non-flip: the likelihood
                               grows as sigma -> 0; sigma = 0, sigma_hi the 95% upper bound */
    DRIFT_FIT_ALL_FLIPS, /* every pair flipped (only possible at gap 0): sigma = inf */
    DRIFT_FIT_EMPTY      /* no pairs with a positive finite gap */
} drift_fit_status_t;

const char *drift_fit_status_name(drift_fit_status_t s);

typedef struct {
    drift_fit_status_t status;
    long n, k;                 /* pairs used (gap > 0 and finite), flips among them */
    double sigma;              /* maximum-likelihood estimate */
    double sigma_lo, sigma_hi; /* profile-likelihood 95% interval */
    double loglik;             /* l(sigma) */
    double g2;                 /* grouped deviance; NaN when no bins were given */
    int df;                    /* groups - 1 */
    double p_value;            /* P(chi^2_df > g2) */
} drift_phi_fit_t;

/* Fits sigma to the pairs (gap[i], flip[i]); pairs with gap <= 0, NaN or inf are skipped (an
 * exact tie carries no information about sigma and is never a flip). bins may be NULL (no
 * goodness of fit). 0, or DRIFT_EINVAL (NULL arrays with n > 0). */
DRIFT_MUST_CHECK int drift_phi_fit(
    drift_phi_fit_t *out, const double *gap, const unsigned char *flip, size_t n, const drift_logbins_t *bins);

/* The log-likelihood l(sigma) of the pairs (exposed for tests and plots). */
double drift_phi_loglik(const double *gap, const unsigned char *flip, size_t n, double sigma);

/* The gap at which the model's flip probability is p (0 < p <= 1/2): -sigma Phi^-1(p). */
double drift_phi_gap_at(double sigma, double p);

/* ---- order statistics ------------------------------------------------------------------------ */

/* qsort comparator for doubles, increasing (NaNs compare equal to everything). */
int drift_cmp_double(const void *a, const void *b);
/* The median of x[0..n) (the mean of the two middle values for even n; NaN for n = 0), x
 * untouched. 0, or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_median(double *out, const double *x, size_t n);

#ifdef __cplusplus
}
#endif

#endif
