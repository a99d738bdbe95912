/* flips.h — argmax flips: when the computed top-1 of an LM head differs from the exact top-1,
 * how often that happens at a given exact gap, and how large the rounding noise that causes it
 * is predicted to be.
 *
 * A flip set holds, for n trials (hidden states, or planted pairs of weight rows) and ncfg
 * configurations (lmhead.h), each trial's exact top-2 and each configuration's computed top-2
 * and flip flag, as drift_lmhead_eval_* return them (drift_flipset_record). The analyses read
 * one configuration c at a time:
 *   - the flip rate per bin of the exact relative gap, with Wilson 95% intervals;
 *   - the maximum-likelihood sigma of P(flip | gap D) = Phi(-D/sigma) (stats.h) and the
 *     critical gaps D_50 = 0.674 sigma (P = 25%: half the coin-toss limit, since P reaches 50%
 *     only at D = 0) and D_0.1% = 3.09 sigma;
 *   - the predicted sigma, in two forms (below);
 *   - on realistic heads, the flips, their prediction sum_i Phi(-rel_i/sigma) and the rows
 *     whose exact gap lies below the critical gaps; on planted exact ties, how the kernels
 *     resolved them (a tie is never a flip).
 *
 * The prediction sigma ~ c sqrt(K) u ||h||_rms ||w1 - w2||_2, and how c is obtained: a rounding
 * to a format with unit roundoff u changes a value x by e, uniform on [-ulp/2, ulp/2] with
 * ulp = 2u 2^floor(log2|x|), so Var e = u^2 x^2 (2^floor(log2|x|)/|x|)^2 / 3; averaged over a
 * log-uniform significand m in [1, 2), E[m^-2] = 3/(8 ln 2), Var e = u^2 x^2 / (8 ln 2). The
 * error of a sum is the sum of the errors of its roundings, and a rounded partial sum s_k has
 * E s_k^2 = sum over its terms of (h_i w_i)^2 (random signs). If term i lies in n_i rounded
 * partial sums, Var(error of h.w) = u^2/(8 ln 2) sum_i n_i h_i^2 w_i^2, and for the gap of two
 * rows with independent errors, ~ u^2/(8 ln 2) nbar ||h||_rms^2 ||w1 - w2||^2 with nbar the
 * mean n_i (E||w1 - w2||^2 = E||w1||^2 + E||w2||^2). Writing nbar = nu K:
 *     c = sqrt(nu / (8 ln 2)),   seq: nu = (K+1)/(2K) -> c = 0.300,
 * pairwise nu = (1 + log2 K)/K, splitk:S and warp:W a chunk's chain plus the combination,
 * tc (block b, neab extra bits): the accumulator is rounded once per block and the alignment
 * truncation of b terms at 2^-(2 neab) of its variance each adds (b / 4^neab) roundings' worth:
 * nu = (1 + b/4^neab) / (2b). (Taking the relative error uniform on [-u, u] instead, variance
 * u^2/3, gives c = sqrt(nu/3) = 0.408 for seq; the significand average lowers it to 0.300.)
 * Logits stored in a format with unit roundoff u_out add 2 u_out^2 l1^2 / (8 ln 2) to sigma^2
 * (a rounding of each logit; l1 the top logit) - though a coarse output grid makes the flip
 * probability fall linearly rather than like Phi, which the goodness of fit shows.
 *
 * The partial-sum form. The norm form assumes partial sums that wander like a random walk. A
 * top logit is not typical: it is ~4 s above the mean because its terms lean the same way, so
 * its partial sums drift towards it (E sum_k s_k^2 gains ~K l^2/3 in a seq chain), and that
 * drift, not the walk, dominates the error of a top-1/top-2 comparison. This second prediction
 * keeps the same model (each rounding of a value x to the accumulator adds an independent
 * uniform error of variance ulp(x)^2/12) but applies it to the actual intermediate values of
 * the kernel's reduction tree, computed in double from the exact products: variances add up the
 * tree. tc: per block, every term (b products and the accumulator) is truncated on the grid
 * 2^(E-23-neab) (variance 4^(E-23-neab)/12 each, E the block's largest exponent) and the block
 * result is rounded to the output format (RZ: uniform on [0, ulp), the same variance). Logits
 * stored narrower add ulp_out(l)^2/12. Biases (RZ) and correlations are ignored: the fit says
 * whether that holds. */
#ifndef DRIFT_FLIPS_H
#define DRIFT_FLIPS_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "lmhead.h"
#include "order.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- flip sets ------------------------------------------------------------------------------- */

typedef struct {
    double gap, rel;   /* exact top-1 minus top-2 gap (absolute), and / s */
    double s, l1;      /* logit scale, exact top logit */
    double p2;         /* sum_i h_i^2 (w1_i^2 + w2_i^2) of the rounded values (planted) */
    double target;     /* planted target / s; NAN for realistic rows */
    size_t top1, top2; /* exact */
    int tie, steps, reached;
} drift_flip_trial_t;

typedef struct {
    size_t n; /* trials */
    int ncfg;
    drift_flip_trial_t *t; /* [n], zeroed */
    unsigned char *flip;   /* [n * ncfg]: entry i * ncfg + c */
    size_t *pick, *pick2;  /* computed top-1 / top-2 ids [n * ncfg] */
    double *cgap;          /* computed v1 - v2 [n * ncfg] */
    size_t *neval;         /* tokens emulated [n * ncfg] */
    double *pvar;          /* the partial-sum model's variance of the computed gap [n * ncfg];
                              NAN where it was not evaluated (the initial value) */
    size_t *nstage1;       /* [n] */
} drift_flipset_t;

/* Allocates a set of n trials x ncfg configurations (everything zero, pvar NAN). 0, or
 * DRIFT_ENOMEM (nothing left allocated). */
DRIFT_MUST_CHECK int drift_flipset_alloc(drift_flipset_t *s, size_t n, int ncfg);
void drift_flipset_free(drift_flipset_t *s);
/* Trial i from an evaluation: exact top1, top2, gap, tie, l1 = exact v1; per configuration
 * flip, computed top-1/top-2/gap, n_eval; n_stage1. The caller fills rel, s, p2, target,
 * steps, reached. */
void drift_flipset_record(drift_flipset_t *s, size_t i, const drift_lmhead_result_t *r);
/* Flips of configuration c over all trials. */
long drift_flipset_flips(const drift_flipset_t *s, int c);
/* 1 when the computed top-1 of trial i differs between configuration cfg[0] and any of
 * cfg[1..n) (e.g. one kernel per batch size), else 0. */
int drift_flipset_changed(const drift_flipset_t *s, size_t i, const int *cfg, int n);

/* The gap-threshold tie-breaker: when the top two differ by less than eps, the smaller id. */
size_t drift_flip_tiebreak(size_t top1, size_t top2, double gap, double eps);

/* ---- flip rates per gap bin -------------------------------------------------------------------- */

typedef struct {
    long n, k;           /* trials (exact ties excluded) whose rel falls in the bin, flips */
    double rate, lo, hi; /* k/n and its Wilson 95% interval; NAN when n = 0 */
    double gap_abs;      /* mean absolute exact gap; NAN when n = 0 */
    double gap_ulp;      /* mean gap / ulp(l1) in format `in`; NAN when n = 0 */
} drift_flip_bin_t;

/* Bin b of configuration c. 0, or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_flipset_bin(
    drift_flip_bin_t *out, const drift_flipset_t *s, int c, const drift_logbins_t *bins, int b, drift_format_t in);

/* ---- the Phi fit, the predictions and the critical gaps ---------------------------------------- */

typedef struct {
    drift_phi_fit_t fit;
    double sigma_pred;    /* norm form, relative to s (RMS over the trials of sigma_i / s_i) */
    double sigma_sums;    /* the partial-sum form, relative to s (RMS over the trials with pvar) */
    double s_med, l1_med; /* medians over the trials of s and |l1| */
    double half, p001;    /* critical gaps / s: P = 25% and P = 0.1%; from sigma when the fit is
                             ok, else from sigma_hi (upper bounds) */
} drift_flip_fit_t;

/* c of the norm form for a given nu: sqrt(nu / (8 ln 2)). */
double drift_flip_c(double nu);
/* nu = (mean number of rounded partial sums a term lies in) / K, for order o on K terms of
 * format `in` (see the top); NAN for a tc arch without a path for `in`. */
double drift_flip_nu(const drift_order_t *o, drift_format_t in, size_t K);
/* Fits configuration c (cfg, with its nu) of the planted set s (relative gaps; ties at gap 0)
 * and evaluates both predictions. K is the hidden size. 0, DRIFT_EINVAL or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_flipset_fit(drift_flip_fit_t *F, const drift_flipset_t *s, int c, const drift_recipe_t *cfg,
    double nu, size_t K, const drift_logbins_t *bins);

/* ---- the partial-sum model -------------------------------------------------------------------- */

typedef struct {
    double v, var;
} drift_flip_vv_t;

/* Scratch the model needs for K products under orders with at most wmax warp lanes. */
size_t drift_flip_model_scratch(size_t K, size_t wmax);
/* The model's variance of configuration c's computed logit error, for the exact products
 * p[0..K); tmp holds drift_flip_model_scratch(K, W) entries. */
double drift_flip_model_var(const drift_recipe_t *c, const double *p, size_t K, drift_flip_vv_t *tmp);

/* ---- realistic heads and exact ties ------------------------------------------------------------ */

typedef struct {
    long flips;
    double rate, lo, hi;         /* flips / n with its Wilson 95% interval */
    double predicted;            /* sum over non-tie trials of Phi(-rel/sigma); NAN without a fit */
    double eval_mean;            /* mean n_eval */
    long below_half, below_p001; /* trials with rel < F->half, rel < F->p001 */
} drift_flip_real_t;

/* Configuration c of a realistic set against the planted fit F of the same configuration. */
void drift_flipset_realistic(drift_flip_real_t *out, const drift_flipset_t *s, int c, const drift_flip_fit_t *F);

typedef struct {
    long confirmed;     /* trials whose exact gap is 0 */
    long distinguished; /* computed logits differ */
    long picked_higher; /* computed top-1 is id 1 (the higher of the pair) */
    long flips;         /* always 0 by definition */
} drift_flip_ties_t;

/* Configuration c of a set of planted ties (two rows, ids 0 and 1); adds to *out. */
void drift_flipset_ties(drift_flip_ties_t *out, const drift_flipset_t *s, int c);

#ifdef __cplusplus
}
#endif

#endif
