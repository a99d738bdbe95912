/* fliplaw.h — the flip law of each mechanism: how likely two logits with exact gap D > 0 swap
 * (or tie and lose the tie) when the computation adds error.
 *
 * Why a module: each mechanism has its own shape, and a critical gap taken from the wrong
 * shape is a gap at which flips cannot happen. Three laws, one parameter each:
 *
 * 1. GAUSS (accumulation noise). The computed gap is D + e with e ~ N(0, sigma^2) (many small
 *    independent rounding errors). Argmax flips iff D + e < 0:
 *        P(flip | D) = Phi(-D / sigma).
 *
 * 2. TRIANGLE (output rounding: an exact, or exactly computed, logit rounded to a grid of
 *    spacing q, e.g. stored in bf16). Rounding is monotone, so it never reverses an order; a
 *    flip needs the two logits to round to the same value, and then the tie goes to the lower
 *    token id. Derivation, same binade (both logits in one binade of spacing q): RNE cells are
 *    intervals of length q around the grid points. With the lower logit l2 at a position
 *    uniform modulo q, l2 and l1 = l2 + D share a cell iff (offset of l2 in its cell) + D < q,
 *    probability (1 - D/q)+ (the closed/open ends of RNE cells alternate with the parity of
 *    the grid point, so over two cells the count is exact: tests/test_fliplaw.c enumerates
 *    it). The id of the top token is independent of which one is on top, so the tie loses
 *    half the time:
 *        P(flip | D) = 1/2 (1 - D/q)+,   q = ulp of the output format at the top logit
 *    (at the larger-magnitude logit of the pair: for negative logits that is the lower one).
 *    Different binades: l2 < B = 2^e <= l1 with spacing qlo below B and qhi = 2 qlo above
 *    (qhi = ulp(l1)). The two round to one value only if both round to B, i.e. l2 in
 *    [B - qlo/2, B) and l1 in [B, B + qhi/2] (both ends ties that go to B, whose significand
 *    is even). The set of l2 positions for which that happens has length
 *        L(D) = min(D, qlo/2) + min(0, qhi/2 - D),  positive for D < (qlo + qhi)/2 = 0.75 qhi,
 *    (drift_fliplaw_straddle_len), so flips stop before one ulp of the top logit here too.
 *    In every case: no flip for D > ulp_out(l1). Assumptions: round to nearest (monotone);
 *    the pair's position on the output grid is uniform (the gap is tiny against the logit, and
 *    the logit's low bits are not structured); no third token within q of the pair; ties are
 *    broken by id, independently of which token is on top. A binade boundary between the two
 *    only shrinks the tie set (L(D) <= qhi - D, the same-binade length at spacing qhi), so
 *    the law with q = ulp(l1) is an envelope. Rounding toward zero (the tensor cores' fp32 output) is also monotone with cells
 *    of length q: the same law.
 *
 * 3. CONV (both: Gaussian accumulation noise, then output rounding). Given a computed gap
 *    x = D + e, the stored pair ties with probability (1 - |x|/q)+ and otherwise keeps the
 *    order of x, so P(flip | x) = clamp(1/2 - x / (2q), 0, 1), a ramp; averaging over
 *    e ~ N(0, sigma^2) with ramp = (1/2q) integral_{-q}^{q} 1{x < t} dt:
 *        P(flip | D) = sigma / (2q) [Psi((q - D)/sigma) - Psi((-q - D)/sigma)],
 *        Psi(z) = z Phi(z) + phi(z)  (the integral of Phi).
 *    It tends to GAUSS as q -> 0 and to TRIANGLE as sigma -> 0.
 *
 * Fits: maximum likelihood of the one parameter theta the mechanism leaves free:
 *    GAUSS: theta = sigma (q ignored);  TRIANGLE: theta = kappa, the law with q_i kappa (the
 *    mechanism predicts kappa = 1, so a fitted kappa far from 1 says the mechanism is wrong);
 *    CONV: theta = sigma, q_i fixed (each pair's output spacing).
 * Model choice: the log-likelihoods of the fitted laws (one parameter each, so the
 * difference is the AIC difference), a binned goodness of fit per law, and the test's power:
 * the expected log-likelihood ratio sum_i KL(Bern(P_A(D_i)) || Bern(P_B(D_i))) that the data
 * would give if A were true. When it is below log(20) = 3.0 in both directions, the design
 * (its pairs and gaps) cannot tell the laws apart, whatever the data say. */
#ifndef DRIFT_FLIPLAW_H
#define DRIFT_FLIPLAW_H

#include <stddef.h>

#include "drift.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_FLIPLAW_GAUSS = 0, DRIFT_FLIPLAW_TRIANGLE, DRIFT_FLIPLAW_CONV, DRIFT_FLIPLAW_N } drift_fliplaw_t;

const char *drift_fliplaw_name(drift_fliplaw_t law); /* "gauss" "triangle" "conv" */
DRIFT_MUST_CHECK int drift_fliplaw_parse(drift_fliplaw_t *out, const char *name);

/* P(flip | gap D >= 0) under law with parameters sigma (GAUSS, CONV) and q (TRIANGLE, CONV;
 * for TRIANGLE the effective spacing is q itself). sigma = 0 in CONV gives TRIANGLE, q = 0
 * gives GAUSS. NaN for negative or NaN arguments. */
double drift_fliplaw_p(drift_fliplaw_t law, double gap, double sigma, double q);

/* Psi(z) = integral_{-inf}^{z} Phi = z Phi(z) + phi(z), accurate in the left tail. */
double drift_fliplaw_psi(double z);

/* The length of the set of lower-logit positions for which a pair with gap D straddling a
 * binade boundary (spacing qlo below, qhi above) rounds to one value (see the top). */
double drift_fliplaw_straddle_len(double gap, double qlo, double qhi);

/* The gap at which P(flip) = p (0 < p < 1/2): GAUSS -sigma Phi^-1(p); TRIANGLE q (1 - 2p);
 * CONV by bisection (P is decreasing in D). NaN for bad arguments. */
double drift_fliplaw_gap_at(drift_fliplaw_t law, double sigma, double q, double p);

typedef struct {
    drift_fliplaw_t law;
    drift_fit_status_t status; /* OK, NO_FLIPS (theta = 0, hi = upper bound), EMPTY, ALL_FLIPS */
    long n, k;                 /* pairs used (gap > 0 finite, q > 0 finite where q is used), flips */
    double theta;              /* sigma (GAUSS, CONV) or kappa (TRIANGLE), maximum likelihood */
    double lo, hi;             /* profile-likelihood 95% interval */
    double loglik;             /* at theta */
    double g2;                 /* grouped deviance over the caller's bins (pooled to >= 5 expected
                                  flips and non-flips per group); NaN without bins */
    int groups, df;            /* groups after pooling; df = groups - 1 */
    double p_value;            /* P(chi^2_df > g2); NaN when df = 0 */
} drift_fliplaw_fit_t;

/* Fits law to the pairs (gap[i], q[i], flip[i]); q may be NULL for GAUSS. bins (over gap, may
 * be NULL) group the pairs for the goodness of fit. 0, DRIFT_EINVAL or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_fliplaw_fit(drift_fliplaw_fit_t *out, drift_fliplaw_t law, const double *gap,
    const double *q, const unsigned char *flip, size_t n, const drift_logbins_t *bins);

/* log-likelihood of the pairs under law with parameter theta (as in the fit). */
double drift_fliplaw_loglik(
    drift_fliplaw_t law, double theta, const double *gap, const double *q, const unsigned char *flip, size_t n);

/* Model choice between two fitted laws A and B on the same pairs. */
typedef struct {
    double dloglik;  /* loglik(A) - loglik(B): > 0 favours A (equal parameter counts) */
    double power_a;  /* expected log-LR for A over B if A (fitted) were true */
    double power_b;  /* expected log-LR for B over A if B were true */
    long pairs;      /* pairs the comparison used */
    int informative; /* pairs with 1e-3 < P < 1 - 1e-3 under A or B: the ones carrying evidence */
    int decided;     /* 1: |dloglik| >= 3 and the favoured law's power >= 3 */
} drift_fliplaw_choice_t;

DRIFT_MUST_CHECK int drift_fliplaw_choose(drift_fliplaw_choice_t *out, const drift_fliplaw_fit_t *A,
    const drift_fliplaw_fit_t *B, const double *gap, const double *q, const unsigned char *flip, size_t n);

#define DRIFT_FLIPLAW_DECIDE 2.995732273553991 /* log(20): a likelihood ratio of 20 */

#ifdef __cplusplus
}
#endif

#endif
