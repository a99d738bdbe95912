/* errlaw.h — the law of one computed value's error against the exact value: the density of
 * which each flip law of fliplaw.h is a tail.
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

typedef enum { DRIFT_ERRLAW_GAUSS = 0, DRIFT_ERRLAW_CONV, DRIFT_ERRLAW_N } drift_errlaw_t;

const char *drift_errlaw_name(drift_errlaw_t law); /* "gauss" "conv" */

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
int drift_errlaw_fit(double *sigma, drift_errlaw_t law, const double *e, size_t n, double q);

/* KL(A || B) = the integral of f_A log(f_A / f_B): the expected log-likelihood ratio per
 * error for A over B when A is true (A and B each with its own sigma, the same q), by
 * Simpson's rule on 4000 intervals over A's support (|e| <= q/2 + 10 sigma_A). NaN for bad
 * parameters. */
double drift_errlaw_kl(drift_errlaw_t a, double sigma_a, drift_errlaw_t b, double sigma_b, double q);

#endif
