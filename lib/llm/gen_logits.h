/* gen_logits.h — the LM head's inputs: generators for realistic hidden states and weight
 * rows, and the planted-gap and planted-tie constructions (the head itself: lmhead.h).
 *
 * Conventions. K is the hidden size, V the vocabulary; token v's logit is h . w_v. The
 * generators produce "master" values that are fp32 numbers (as a model checkpoint holds);
 * each experiment configuration rounds them (RNE) to its input format. Every random number
 * comes from the caller's drift_stream_t (law 4). The logit scale of a hidden state is
 * s = ||h||_2 / sqrt(K): the standard deviation of h . w for a weight row w ~ N(0, I/K). */
#ifndef DRIFT_GEN_LOGITS_H
#define DRIFT_GEN_LOGITS_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "metrics.h"
#include "order.h"
#include "philox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- generators --------------------------------------------------------------------------- */

#define DRIFT_MAX_OUTLIERS 64

/* The outlier channels of a "model": real LLM hidden states have a few channels whose
 * magnitude is 20-100x the others, with a consistent sign, in every token (Dettmers et al.,
 * LLM.int8(), 2022; Sun et al., "Massive activations", 2024). Fixed per model, so drawn once. */
typedef struct {
    size_t K;
    int n;                              /* max(1, K/512), at most DRIFT_MAX_OUTLIERS */
    size_t channel[DRIFT_MAX_OUTLIERS]; /* distinct, increasing */
    double scale[DRIFT_MAX_OUTLIERS];   /* signed magnitude, |scale| uniform in [20, 100) */
} drift_hidden_model_t;

/* 0, or DRIFT_EINVAL (K < 2). */
DRIFT_MUST_CHECK int drift_hidden_model(drift_hidden_model_t *m, size_t K, drift_stream_t *s);
/* One hidden state (K values, fp32 numbers): channel i ~ N(0, 1), outlier channel c gets
 * scale_c * (1 + 0.1 N(0, 1)). */
void drift_gen_hidden(double *h, const drift_hidden_model_t *m, drift_stream_t *s);
/* One weight row: K values N(0, 1/K), fp32 numbers. */
void drift_gen_weight_row(double *w, size_t K, drift_stream_t *s);
/* A weight row drawn from N(0, I/K) conditioned on h . w = logit: w = g + h (logit - h.g)/||h||^2
 * with g ~ N(0, I/K) (the exact conditional law of a Gaussian vector given one linear
 * constraint), then rounded to fp32. The logit is met up to that rounding. h must not be 0. */
void drift_gen_row_with_logit(double *w, const double *h, size_t K, double logit, drift_stream_t *s);
/* A realistic head of V weight rows (drift_gen_weight_row), row v drawn from its own stream
 * drift_stream_init(seed, experiment, K, v), so the head does not depend on the thread count
 * (OpenMP over tokens). Each output may be NULL: Wd and Wf (V x K, row-major) receive the rows
 * as doubles and as floats (exact: they are fp32 numbers); l1[v] >= sum_i |w_v,i| and
 * l2[v] >= ||w_v||_2 are upper bounds (the K-term double sums of nonnegative terms err by less
 * than K 2^-53 relative, covered by the factor 1 + 1e-9 for K <= 2^20). 0, DRIFT_EINVAL (V or
 * K is 0), or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_gen_head(
    double *Wd, float *Wf, double *l1, double *l2, size_t V, size_t K, uint64_t seed, uint32_t experiment);
/* s = ||h||_2 / sqrt(K). */
double drift_logit_scale(const double *h, size_t K);
/* A draw of the largest of V independent N(0,1): Phi^-1(U^(1/V)) for U uniform, computed as
 * -Phi^-1(-expm1(log(U)/V)) so that the upper tail keeps its precision. */
double drift_gen_top_logit(size_t V, drift_stream_t *s);

/* ---- planted gaps and ties ------------------------------------------------------------------ */

/* How many spare channels the planted-gap construction reserves (set to 0 first, then used
 * as fine-adjustment knobs); K must exceed DRIFT_PLANT_FINE + 1. */
#define DRIFT_PLANT_FINE 6
/* The construction stops once |gap - target| <= DRIFT_PLANT_TOL * target. */
#define DRIFT_PLANT_TOL 1e-3

typedef struct {
    double target; /* the gap asked for */
    double gap;    /* the EXACT h.w1 - h.w2 achieved (one superaccumulator), rounded once to double */
    double l1, l2; /* the exact logits, each rounded once to double */
    int steps;     /* channels adjusted */
    int reached;   /* |gap - target| <= DRIFT_PLANT_TOL * target */
} drift_plant_t;

/* Plants an exact gap: adjusts w2 (in place; h, w1, w2 are values of f) so that the exact
 * h.w1 - h.w2 is the target as closely as f's values allow. Construction:
 *   1. the DRIFT_PLANT_FINE channels of smallest nonzero |h_i| (ties: lowest index) are
 *      reserved and w2 is set to 0 there;
 *   2. coarse step: the channel of largest |h_i| absorbs the whole residual r = (exact gap -
 *      target): w2_c = RNE_f(w2_c + r/h_c), leaving a residual ~ |h_c| ulp_f(w2_c);
 *   3. fine steps: a reserved channel j (the one whose rounding leaves the smallest residual)
 *      gets w2_j = RNE_f(r/h_j); since w2_j started at 0, each step shrinks the residual by
 *      the format's relative precision (2^-8 for bf16), until the tolerance is met or the
 *      reserved channels are used up.
 * Every residual is computed exactly (superaccumulator), never in floating point. The result
 * records the gap actually achieved: a format may not reach a tiny target (fp16 subnormal
 * weights, say), and the experiment bins by the achieved exact gap, never by the target.
 * 0, or DRIFT_EINVAL (K too small, target < 0 or not finite, h all zero there). */
DRIFT_MUST_CHECK int drift_plant_gap(
    drift_plant_t *out, double *w2, const double *h, const double *w1, size_t K, double target, drift_format_t f);

/* Plants an exact tie on fp32 master values: for npairs pairs of distinct channels (a, b)
 * drawn from s, sets h_b = h_a and makes w2 = w1 with each pair's entries swapped. Then
 * h.w1 == h.w2 exactly, and stays exact after rounding h, w1, w2 to any format (equal values
 * round equally); but the terms sit at different positions, so a computed dot product can
 * still tell the two apart. 0, or DRIFT_EINVAL (2*npairs > K). */
DRIFT_MUST_CHECK int drift_plant_tie(double *h, double *w2, const double *w1, size_t K, int npairs, drift_stream_t *s);

/* The pairs of channels drift_gen_planted_pair swaps for a tie: a tie needs K >= 2 * this. */
#define DRIFT_PLANT_TIE_PAIRS 16

/* A planted pair of weight rows on fp32 master values, drawn from s in this order: h from
 * drift_gen_hidden(m); the top logit L1 = s_h drift_gen_top_logit(V), s_h = drift_logit_scale(h);
 * w1 with h.w1 = L1 (drift_gen_row_with_logit); then, for a tie, drift_plant_tie(h, w2, w1, K,
 * DRIFT_PLANT_TIE_PAIRS) (which changes h), otherwise w2 with h.w2 = L1 - rel s_h and one more u32 whose low bit
 * says whether the top row sits second (*swap; 0 for a tie). *scale: s of the final h. The gap
 * is only approximate here: drift_plant_pair_in plants it exactly per format. 0, or
 * DRIFT_EINVAL / DRIFT_ENOMEM from drift_plant_tie. */
DRIFT_MUST_CHECK int drift_gen_planted_pair(double *h, double *w1, double *w2, double *scale, int *swap,
    const drift_hidden_model_t *m, size_t V, double rel, int tie, drift_stream_t *s);
/* The pair in format f: hf = RNE_f(h) (K values) and the 2 x K rows W2, w1 rounded in row
 * `swap` and w2 rounded in the other (fp32 values are copied: they already are); then, unless
 * tie, drift_plant_gap(pt, w2's row, hf, w1's row, K, target, f). For a tie *pt is zeroed.
 * 0, or DRIFT_EINVAL from drift_plant_gap (the rows are filled either way). */
DRIFT_MUST_CHECK int drift_plant_pair_in(drift_plant_t *pt, double *hf, double *W2, const double *h, const double *w1,
    const double *w2, size_t K, double target, int swap, int tie, drift_format_t f);

#ifdef __cplusplus
}
#endif

#endif
