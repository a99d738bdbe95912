/* errlaw.h — the law of one computed value's error against the exact value: the density of
 * which each flip law of fliplaw.h is a tail. real_gaps fits it to a model's logits; drift-calc
 * errlaw to a user's two dumps (exact and computed).
 *
 * Two mechanisms, one free parameter each:
 *   GAUSS: many small independent roundings inside the computation (accumulation noise):
 *          e ~ N(0, sigma^2).
 *   CONV:  that noise, then the result rounded to an output grid of spacing q (a logit stored
 *          in bf16 or fp16). Round to nearest adds r = round(x) - x, uniform on [-q/2, q/2]
 *          when x's position on the grid is uniform (the value is large against q and its
 *          low bits are not structured), independent of the noise, so e = g + r has density
 *              f(e) = (1/q) [Phi((e + q/2) / sigma) - Phi((e - q/2) / sigma)],
 *          which tends to N(0, sigma^2) as q / sigma -> 0 and to the uniform as sigma -> 0.
 * Both laws are symmetric about 0 (round to nearest has no bias). The test of the two on
 * errors held out from the fit, and the power of that test, say which mechanism a set of
 * errors shows: where q is small against sigma the two coincide and no data can tell them
 * apart; where q is not, a stored format's rounding shows as the flat top and hard edges of
 * the CONV density. */
#ifndef DRIFT_ERRLAW_H
#define DRIFT_ERRLAW_H

#include <stddef.h>

#include "drift.h"
#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_ERRLAW_GAUSS = 0, DRIFT_ERRLAW_CONV, DRIFT_ERRLAW_N } drift_errlaw_t;

/* log f(e) under law with parameters sigma >= 0 and q >= 0 (GAUSS ignores q; CONV with
 * q = 0 is GAUSS, with sigma = 0 the uniform: log(1/q) inside, -log(2q) on the edges, -inf
 * beyond). NaN for NaN or negative parameters, and for GAUSS with sigma = 0. */
double drift_errlaw_logpdf(drift_errlaw_t law, double e, double sigma, double q);

/* The sum of log f(e_i) over n errors. */
double drift_errlaw_loglik(drift_errlaw_t law, const double *e, size_t n, double sigma, double q);

/* The maximum-likelihood sigma of n >= 1 finite errors under law, q fixed: GAUSS the root
 * mean square (closed form); CONV by golden-section search on log sigma over
 * [1e-6 q, 2 rms + q] (the log-likelihood is unimodal in sigma), to a relative step of 1e-6.
 * A set whose errors all lie within [-q/2, q/2] may fit sigma at the lower end: the data then
 * show no noise beyond the rounding. 0 or DRIFT_EINVAL (n = 0, a non-finite error, q < 0, or
 * CONV with q = 0 and all errors 0). */
DRIFT_MUST_CHECK int drift_errlaw_fit(double *sigma, drift_errlaw_t law, const double *e, size_t n, double q);

/* KL(A || B) = the integral of f_A log(f_A / f_B): the expected log-likelihood ratio per
 * error for A over B when A is true (A and B each with its own sigma, the same q), by
 * Simpson's rule on 4000 intervals over A's support (|e| <= q/2 + 10 sigma_A). NaN for bad
 * parameters. */
double drift_errlaw_kl(drift_errlaw_t a, double sigma_a, drift_errlaw_t b, double sigma_b, double q);

/* The law of n errors err[i] (computed minus exact) of values whose exact value is val[i],
 * per binade [2^k, 2^(k+1)) of |val|, k = k_lo .. k_lo + nbin - 1, where the output format's
 * spacing q = drift_ulp(2^k, fmt) is one value (values outside the binades are left out).
 * unit[i] in 0 .. units-1 is the independent unit an error belongs to (a text: the errors of
 * one position share its hidden state's error); each unit is held out in turn: both laws
 * fitted on the other units, tested on it. The power is the expected log-likelihood ratio over
 * the binade's errors under each law fitted on all of them; it counts errors as independent,
 * so it overstates what units that share errors can show. The binade is decided for a law
 * when at least two units were tested, the law predicted better on every one, and both the
 * summed held-out ratio and its power reach log 20 (DRIFT_ERRLAW_DECIDE). */
#define DRIFT_ERRLAW_DECIDE 2.995732273553991 /* log 20 */
#define DRIFT_ERRLAW_MIN_N 100                /* errors a binade needs before a law is fitted */
typedef struct {
    double lo, hi, q;                    /* the binade of |exact value| and the output spacing there */
    long n;                              /* errors in it */
    int folds, folds_conv;               /* units tested, and those on which CONV predicted better */
    double rms, sigma_gauss, sigma_conv; /* of all its errors; the two laws' ML sigma */
    double dloglik;                      /* held out, summed over the units: loglik(CONV) - loglik(GAUSS) */
    double power_conv, power_gauss;      /* n KL(CONV || GAUSS) and n KL(GAUSS || CONV), fitted on all */
    char winner;                         /* 'c' CONV, 'g' GAUSS, 'u' undecided */
} drift_errlaw_bin_t;

/* Fills out[] with the binades that hold at least DRIFT_ERRLAW_MIN_N errors (nbin entries at
 * most), in increasing order; their count, or DRIFT_EINVAL / DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_errlaw_binades(drift_errlaw_bin_t *out, const double *err, const double *val,
    const int *unit, size_t n, int units, int k_lo, int nbin, drift_format_t fmt);

#ifdef __cplusplus
}
#endif

#endif
