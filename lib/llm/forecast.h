/* forecast.h — will deployment B's greedy text part from deployment A's, forecast from A's run
 * alone: per step the risk that B's numerics carry A's top-1 / top-2 gap across zero, and per
 * prompt the chance that this happens within T tokens.
 *
 * The mechanism. While two greedy texts agree, both deployments compute the same step on the
 * same context, so their logits differ only by numerics. At step t deployment A picked a_t
 * with gap d_t = A's top-1 minus top-2 logit (>= 0). B computes the same pair with gap
 * d_t + delta_t, delta_t = B's gap minus A's (the difference of two deployments' errors). B
 * picks another token iff d_t + delta_t < 0 (a tie at 0 goes to the lower id: half the time
 * against a_t). Two facts shape delta:
 *   - it is exactly 0 at a share 1 - pi of the steps (B ran the same kernels on the same bits
 *     there: a batch whose kernel choice did not change, a card whose SM count chose the same
 *     split); pi is a property of the pair, and for pairs whose cards differ in SM count it is
 *     kept per class: steps at whose row count the vendor-like policy picks other kernels on
 *     the two cards, and the rest;
 *   - where it is not 0 it is a difference of accumulated roundings: GAUSS (many small
 *     independent errors, sd sigma), or LAPLACE (the same with a heavier tail, scale b: one
 *     dominant rounding of a large logit), fitted to the observed nonzero delta_t of the fit
 *     prompts and chosen by their held-out likelihood.
 * The step risk is p_t = pi_c P(delta < -d_t): pi_c Phi(-d_t / sigma) or pi_c exp(-d_t / b) / 2
 * (both 1/2 pi_c at d_t = 0). The text parts within T iff some step flips first; the steps'
 * risks are nearly independent (each is its own rounding of its own context), so
 *     P(part within T) = 1 - prod_{t < T} (1 - p_t).
 * The forecast needs A's per-step gaps (which A's own run, or any engine's logits dump,
 * provides) and the pair's law: not B's run. It errs where A's gaps stop describing B's path
 * (after a near-tie that B resolved the same way, the later steps are exact; the product
 * counts each step once) and where pi depends on more than the class (the batch's shape at
 * each step, which A's run does not record). */
#ifndef DRIFT_FORECAST_H
#define DRIFT_FORECAST_H

#include <stddef.h>
#include <stdint.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_DELTA_GAUSS = 0, DRIFT_DELTA_LAPLACE, DRIFT_NDELTA } drift_delta_law_t;
const char *drift_delta_law_name(drift_delta_law_t law); /* "gauss" "laplace" */

#define DRIFT_FORECAST_CLASSES 2 /* step classes: 0 the same kernels on both sides, 1 other kernels */

/* The law of delta for one pair of deployments. */
typedef struct {
    drift_delta_law_t law;              /* the one the forecast uses */
    double sigma;                       /* GAUSS: sd of the nonzero delta (ML, zero mean) */
    double b;                           /* LAPLACE: scale (ML: the mean |delta|) */
    double pi[DRIFT_FORECAST_CLASSES];  /* share of steps with delta != 0, per class */
    long steps[DRIFT_FORECAST_CLASSES]; /* steps the fit saw, per class */
    long nonzero[DRIFT_FORECAST_CLASSES];
    double loglik[DRIFT_NDELTA]; /* of the fit's nonzero deltas under each fitted law */
} drift_delta_fit_t;

/* Fits the law to n observed steps: delta[i] (B's gap minus A's) in class cls[i] (NULL: all
 * class 0); NaN: a step where delta is not 0 but its value was not seen (B ranked a third
 * token among its top two), which counts for pi only. sigma and b are the maximum-likelihood
 * parameters of the seen nonzero deltas; the law with the larger log-likelihood is chosen
 * (one parameter each). With no nonzero delta seen, sigma = b = 0: the forecast is then pi/2 at
 * a tie and 0 elsewhere. 0 or DRIFT_EINVAL (an infinite delta, a class out of range). */
DRIFT_MUST_CHECK int drift_delta_fit(drift_delta_fit_t *out, const double *delta, const unsigned char *cls, size_t n);

/* The log-likelihood of the nonzero deltas among n under law with the fit's parameter: the
 * held-out test of a fit (NaN when the parameter is 0 but a delta is not). */
double drift_delta_loglik(const drift_delta_fit_t *f, drift_delta_law_t law, const double *delta, size_t n);

/* P(B picks another token than A at a step where A's gap is gap >= 0, in class cls) under the
 * fit's law (law < 0: the fit's chosen one). NaN for a negative or NaN gap. */
double drift_forecast_step(const drift_delta_fit_t *f, int law, double gap, int cls);

typedef struct {
    double p;        /* P(B parts from A within the n steps) */
    int step;        /* the step of the largest risk (-1 when every risk is 0) */
    double step_p;   /* that risk */
    double step_gap; /* A's gap there */
} drift_forecast_t;

/* The forecast for one text: A's gaps at its n steps and their classes (NULL: class 0). 0 or
 * DRIFT_EINVAL (a NaN or negative gap). */
DRIFT_MUST_CHECK int drift_forecast_text(
    drift_forecast_t *out, const drift_delta_fit_t *f, int law, const double *gap, const unsigned char *cls, int n);

/* The empirical law: the seen nonzero deltas themselves. Deltas of bf16 logits lie on the
 * format's grid (multiples of an ulp), where a smooth law puts mass between grid points; the
 * empirical tail, symmetrized (delta and -delta equally likely: which deployment is A is a
 * naming), is
 *     Q(d) = (#{|delta_i| > d} + #{|delta_i| = d} / 2) / (2 n)   for d > 0,   Q(0) = 1/2,
 * the half at |delta| = d being the tie that B then breaks by token id, either way; it is 0
 * beyond the largest delta seen. The step risk is pi_c Q(gap). */
typedef struct {
    double *absd; /* |delta| of the n seen nonzero deltas, ascending */
    size_t n;
} drift_delta_ecdf_t;

/* From n deltas as drift_delta_fit takes them (0 and NaN skipped). 0, DRIFT_EINVAL or
 * DRIFT_ENOMEM; free with drift_delta_ecdf_free. */
DRIFT_MUST_CHECK int drift_delta_ecdf(drift_delta_ecdf_t *e, const double *delta, size_t n);
void drift_delta_ecdf_free(drift_delta_ecdf_t *e);
/* Q(d) above (NaN for a negative or NaN d; 0 when no delta was seen). */
double drift_delta_ecdf_tail(const drift_delta_ecdf_t *e, double d);
/* drift_forecast_text with the empirical tail in place of the law (pi from f). */
DRIFT_MUST_CHECK int drift_forecast_text_ecdf(drift_forecast_t *out, const drift_delta_fit_t *f,
    const drift_delta_ecdf_t *e, const double *gap, const unsigned char *cls, int n);

/* The tie rule (sampler greedy-ties:EPS): a step picks the lower id of its top two when their
 * gap is below eps, else the top one. Say A's top two are a (top) and r. When r has the lower
 * id, A and B pick apart iff their gaps fall on either side of eps; when a has it, both pick a
 * unless B's gap falls below -eps (r on top by more than eps). A third token inside eps on
 * one side (the top two differ) is not in this forecast. */

/* Whether the rule picks another token than plain greedy at some of n steps of a text (top1,
 * top2: the top two logits; tok, runner: their ids). Where it does not, a run under the rule
 * decodes the same text step for step (each step sees the same context). */
int drift_tie_rule_acts(const double *top1, const double *top2, const int *tok, const int *runner, int n, double eps);

/* P(B picks apart from A at a step under the rule with eps >= 0) where A's gap is gap >= 0
 * and runner_lower says whether A's runner-up has the lower id: the fit's step risk at
 * |gap - eps| (runner lower) or at gap + eps (top lower); at eps = 0 both are
 * drift_forecast_step's. */
double drift_tie_step_risk(const drift_delta_fit_t *f, double gap, int runner_lower, double eps);

/* Why two texts under the rule parted at a step, from each side's top two there (gap, top id,
 * runner-up id): the gaps on either side of eps; both below eps with another top two; both at
 * or above eps (the top one changed). */
enum { DRIFT_TIE_BOUNDARY = 0, DRIFT_TIE_OTHER_PAIR, DRIFT_TIE_CROSSED, DRIFT_TIE_NCAUSE };
int drift_tie_parting_cause(double gap_a, int top_a, int runner_a, double gap_b, int top_b, int runner_b, double eps);

/* Scores of probability forecasts p[i] of events y[i] (0/1) over n cases. Brier: the mean of
 * (p - y)^2. Log loss: the mean of -log(p) (y = 1) or -log(1 - p) (y = 0), p clamped to
 * [DRIFT_FORECAST_PMIN, 1 - DRIFT_FORECAST_PMIN] so that one confident miss costs a finite,
 * stated amount (-log(1e-3) = 6.9). NaN for n = 0. */
#define DRIFT_FORECAST_PMIN 1e-3
double drift_brier(const double *p, const unsigned char *y, size_t n);
double drift_log_loss(const double *p, const unsigned char *y, size_t n);

/* The Brier skill score of forecast p against reference r on the same cases,
 * 1 - Brier(p) / Brier(r), with a percentile bootstrap interval (cases resampled with
 * replacement, `reps` times, from the Philox stream (seed, "forecast.bootstrap", 0, 0);
 * resamples where the reference's Brier is 0 are left out). *skill is NaN when Brier(r) = 0
 * (a reference with no error leaves no skill to measure); *lo, *hi NaN when fewer than half
 * the resamples count. 0 or DRIFT_EINVAL / DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_brier_skill(double *skill, double *lo, double *hi, const double *p, const double *r,
    const unsigned char *y, size_t n, uint64_t seed, int reps, double level);

/* The threshold baseline: a case whose smallest gap mg[i] is below tau parts at the rate of
 * the cases below tau, else at the rate of those above; tau the value among mg (or +inf) whose
 * two rates give the smallest Brier score on the n cases (the first such, in mg's order). */
typedef struct {
    double tau, below, above;
} drift_gap_threshold_t;
drift_gap_threshold_t drift_gap_threshold_fit(const double *mg, const unsigned char *y, int n);

/* A reliability diagram's bin: cases with forecast in [lo, hi), their mean forecast, the
 * events among them and the Wilson 95 % interval of the share. */
typedef struct {
    double lo, hi, mean_p;
    long n, k;
    double rate, wilson_lo, wilson_hi;
} drift_rel_bin_t;
/* The bins [edges[b], edges[b+1]), b < nedges - 1, that hold a case, into out (nedges - 1
 * entries at most): their count. */
int drift_reliability(
    drift_rel_bin_t *out, const double *edges, int nedges, const double *p, const unsigned char *y, size_t n);

#ifdef __cplusplus
}
#endif

#endif
