/* lmhead.h — the LM head h . W and its exact argmax: configurations (input format, order,
 * accumulator, output format), one logit per configuration, a rigorous bound on each logit's
 * error, and the pruned evaluation that lets a 32000-token head be checked against exact
 * arithmetic. Inputs come from gen_logits.h; K is the hidden size, V the vocabulary, and
 * token v's logit is h . w_v. */
#ifndef DRIFT_LMHEAD_H
#define DRIFT_LMHEAD_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "metrics.h"
#include "order.h"
#include "recipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- LM head configurations ------------------------------------------------------------------ */

/* One way of computing the logits is a recipe (recipe.h), and every function below takes
 * drift_recipe_t: inputs rounded (RNE) to `in`, the dot product in order `order` with
 * accumulator `acc` (for tc:ARCH, acc.acc is the tensor core's output format, fp32 or fp16,
 * and acc.mode/fma are fixed by the model), then the logit stored in `out` (RNE; out ==
 * acc.acc means no extra rounding). exact = 1 ignores order and acc: the logit is the exact
 * dot product rounded once to `out` (the "exact LM head" mitigation). A configuration is
 * checked with drift_recipe_check, one logit is drift_recipe_dot (h and w already values of
 * c->in; dispatch.h), and drift_recipe_label names it in a table of one input format. */

#define DRIFT_LMHEAD_MAXCFG 48

/* 1 when f is an input format of the LM head experiments (bf16, fp16, tf32, fp32), else 0. */
int drift_lmhead_input_ok(drift_format_t f);

/* A rigorous bound on |computed - exact| for one logit of configuration c, from
 *   sum_abs = an upper bound on sum |h_i w_i| (of the values in c->in),
 *   sum_l1  = an upper bound on sum (|h_i| + |w_i|),
 *   mag     = an upper bound on |exact logit|.
 * Scalar orders: (u + gamma_k (1 + u)) sum_abs with k = drift_order_depth(o, K) and u the
 * accumulator's unit roundoff (2u for directed modes): u for a rounded product (or the fma's
 * share), gamma_k for the additions (Higham, ch. 3-4), plus K times the accumulator's smallest
 * subnormal for underflow. tc:ARCH (tc_model.h): per block of b products, each term is
 * truncated below 2^(E-23-neab), E bounded by the largest term, accumulator, or min_exp, and
 * the block result rounded (RZ: < 1 ulp, RNE: 1/2 ulp); with P = sum max(|a|,m) max(|b|,m)
 * (m = the input format's smallest normal: a subnormal input keeps the minimum exponent),
 * nb = ceil(K/b) blocks and alpha = (b+1) 2^(-23-neab) + 2 u_out:
 *   err <= nb (alpha (P + err) + beta)  =>  err <= nb (alpha P + beta) / (1 - nb alpha),
 * beta = (b+1) 2^(min_exp-23-neab) + the output's smallest subnormal; doubled for safety
 * (the model's fine print, e.g. unnormalised products in [2, 4), is inside a factor 2).
 * Output rounding to c->out adds u_out (mag + err) + its smallest subnormal. exact = 1: only
 * that output rounding. INFINITY when no bound exists (k u >= 1: e.g. bf16 accumulation of
 * K >= 256 terms). */
double drift_lmhead_bound(const drift_recipe_t *c, size_t K, double sum_abs, double sum_l1, double mag);

/* ---- evaluating a head: exact top-2, computed top-2, pruning ----------------------------------- */

/* The outcome for one hidden state and one input format. Token ids are positions in W.
 * exact: top1/top2 by exact logits (an exact tie goes to the lower id), v1/v2 the exact
 *   logits rounded once to double, gap = the exact v1 - v2 rounded once (so gap == 0 iff
 *   the exact logits tie), tie = (gap == 0).
 * computed[c]: top-2 of configuration c's logits; equal computed logits go to the lower id
 *   (as torch.argmax returns the first maximal index); gap = v1 - v2 (exact: both are values
 *   of a narrower format).
 * flip[c] = !exact.tie && computed[c].top1 != exact.top1. A tie is never a flip.
 * n_stage1: tokens that survived the first pruning stage; n_eval[c]: tokens whose logit was
 *   computed for c. */
typedef struct {
    drift_top2_t exact;
    int ncfg;
    drift_top2_t computed[DRIFT_LMHEAD_MAXCFG];
    unsigned char flip[DRIFT_LMHEAD_MAXCFG];
    size_t n_stage1;
    size_t n_eval[DRIFT_LMHEAD_MAXCFG];
} drift_lmhead_result_t;

/* Reference evaluation with no pruning: every logit of every configuration. h (K) and W (V x K,
 * row-major) are any doubles; they are rounded to cfg[0].in, which every cfg must share.
 * V >= 2, 1 <= ncfg <= DRIFT_LMHEAD_MAXCFG. 0, DRIFT_EINVAL, DRIFT_EUNSUPPORTED, DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_lmhead_eval_full(drift_lmhead_result_t *r, const double *h, const double *W, size_t V,
    size_t K, const drift_recipe_t *cfg, int ncfg);

/* Approximate logits for pruning: out[r*V + v] ~ H[r] . W[v] for R hidden states (fp32
 * numbers) and V rows of fp32 master weights, in float arithmetic (16 lanes of ceil(K/16)
 * terms each, then the lanes added in sequence; OpenMP over tokens). The error is at most
 * gamma_n(2^-24) sum|h_i w_i| <= drift_lmhead_approx_coef(K) * ||h||_2 ||w_v||_2 with
 * n = ceil(K/16) + 16 (the most roundings a term passes through; Higham's dot-product bound;
 * Cauchy-Schwarz). */
DRIFT_MUST_CHECK int drift_lmhead_approx(double *out, const double *H, size_t R, const float *W, size_t V, size_t K);
double drift_lmhead_approx_coef(size_t K);

/* Pruned evaluation, bit-identical in outcome to drift_lmhead_eval_full on the same inputs.
 *   h: the fp32 master hidden state; W: V x K fp32 master weights; approx: its row of
 *   drift_lmhead_approx; row_l1, row_l2: sum |w_v,i| and ||w_v||_2 per token (upper bounds).
 * Why it is rigorous (stage 1): for each token v, one radius R_v bounds how far EVERY
 *   configuration's computed logit and the exact logit (both for inputs rounded to `in`)
 *   can lie from approx_v:
 *     R_v = approx error (above) + input rounding (from the norms of the actual rounding
 *           residuals of h and w_v; 0 when in is fp32, the master format) + the largest
 *           drift_lmhead_bound over the configurations
 *   (drift_lmhead_stage1 below, with its proof). With L2 = the second largest of
 *   approx_u - R_u, at least two tokens have every value (exact or computed) >= L2, so a
 *   token with approx_v + R_v < L2 is below two others in every configuration and exactly:
 *   it can be neither top-1 nor top-2 anywhere, and it can never tie with a top-2 value.
 *   The test is made with the largest R_v first (cheap), then with each survivor's own.
 * Stage 2, per configuration: the same test is repeated around the survivors' exact logits
 *   with the configuration's own bound (now from the exact sum|h w| of the rounded values);
 *   only the tokens left get the emulated dot product. Each survivor first gets an fp64 dot
 *   product with a rigorous interval for its exact logit; the exact logit (superaccumulator)
 *   is computed only where that interval cannot decide a test, so the sets kept are the ones
 *   the exact logits give, at the cost of a double loop for most survivors.
 * The exact top-2 is resolved exactly: doubles first (rounding is monotone), and an exact
 * comparison (superaccumulator of the difference) where two rounded exact logits are equal.
 * 0, DRIFT_EINVAL, DRIFT_ENOMEM, or DRIFT_EUNSUPPORTED when some configuration has no finite
 * bound (drift_lmhead_bound = INFINITY): nothing could be pruned. */
DRIFT_MUST_CHECK int drift_lmhead_eval_pruned(drift_lmhead_result_t *r, const double *h, const float *W, size_t V,
    size_t K, const double *approx, const double *row_l1, const double *row_l2, const drift_recipe_t *cfg, int ncfg);

/* drift_lmhead_eval_pruned over the configurations c with use[c] != 0 only (those whose bound
 * is finite, say), the outcome spread over the full list cfg[0..ncfg): r->ncfg = ncfg, the
 * exact top-2 and n_stage1 as evaluated, and for every configuration left out computed = {0},
 * flip = 0, n_eval = 0. Return values as drift_lmhead_eval_pruned's (DRIFT_EINVAL when no
 * configuration is used). */
DRIFT_MUST_CHECK int drift_lmhead_eval_pruned_some(drift_lmhead_result_t *r, const double *h, const float *W, size_t V,
    size_t K, const double *approx, const double *row_l1, const double *row_l2, const drift_recipe_t *cfg, int ncfg,
    const unsigned char *use);

/* ---- the head as the pruning sees it, and a tighter first stage --------------------------------- */

#define DRIFT_LMHEAD_MAXSPLIT 64

/* W (V x K fp32 master weights, row-major) with the per-token upper bounds the pruning needs,
 * and two optional aids to the first stage (both only tighten it; any values that are true
 * bounds keep it rigorous):
 *   row_dl2: per token, >= ||w_v - rnd(w_v)||_2 with rnd = RNE to the configurations' input
 *     format (drift_lmhead_round_norms); NULL: u ||w_v||_2 + eta sqrt(K) is used.
 *   split, nsplit, split_cols: channels whose input-rounding terms are bounded one by one
 *     instead of through Cauchy-Schwarz (the outlier channels of the hidden states:
 *     drift_lmhead_split_choose), split_cols[v * nsplit + j] = W[v][split[j]]; nsplit = 0: none.
 * stage1_global = 1 selects the global first stage (one radius from the largest ||w||_2 and
 * the worst-case input rounding): looser, and the baseline bench/argmax measures against. */
typedef struct {
    const float *W;
    size_t V, K;
    const double *row_l1, *row_l2;
    const double *row_dl2;
    size_t nsplit;
    const size_t *split;
    const float *split_cols;
    int stage1_global;
    /* filled by drift_lmhead_head_prepare (else computed on every call): the largest row_l2,
     * row_l1, row_dl2 and |split_cols| per split channel over the tokens */
    int prepared;
    double l2max, l1max, dl2max;
    float colmax[DRIFT_LMHEAD_MAXSPLIT];
} drift_lmhead_head_t;

/* Fills hd's maxima once, so that the pruning does not scan the V tokens' bounds per row
 * (the outcome is the same). 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_lmhead_head_prepare(drift_lmhead_head_t *hd);

/* The first pruning stage on its own: keep (room for V) receives, in increasing order, the
 * *nkeep tokens that may be top-1 or top-2 of the exact logits or of any configuration's
 * (inputs h and W rounded to cfg[0].in), from approx (drift_lmhead_approx of the master h).
 * rad (NULL or V entries) receives each token's radius: every configuration's computed logit
 * and the exact logit of token v lie within rad[v] of approx[v] (for the tokens the first,
 * global test drops, the common radius; for the others their own). The proof is at the
 * function in lmhead.c. 0, DRIFT_EINVAL, DRIFT_ENOMEM, or DRIFT_EUNSUPPORTED (no finite bound). */
DRIFT_MUST_CHECK int drift_lmhead_stage1(size_t *keep, size_t *nkeep, double *rad, const double *h,
    const drift_lmhead_head_t *hd, const double *approx, const drift_recipe_t *cfg, int ncfg);

/* drift_lmhead_eval_pruned (use = NULL) or drift_lmhead_eval_pruned_some (use != NULL) on a
 * head: the outcome does not depend on the optional fields, only n_stage1 (and the time) does. */
DRIFT_MUST_CHECK int drift_lmhead_eval_pruned_head(drift_lmhead_result_t *r, const double *h,
    const drift_lmhead_head_t *hd, const double *approx, const drift_recipe_t *cfg, int ncfg, const unsigned char *use);

/* dl2[v] >= ||w_v - rnd(w_v)||_2 for the V rows of W (V x K), rnd = RNE to f (0 for fp32 and
 * fp64, which hold every fp32 value). 0, DRIFT_EINVAL, DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_lmhead_round_norms(double *dl2, const float *W, size_t V, size_t K, drift_format_t f);

/* The M channels (M <= min(K, DRIFT_LMHEAD_MAXSPLIT)) with the largest max_r |H[r][i]| over R
 * hidden states (ties to the lower index), in increasing order, into chan; and the columns
 * cols[v * M + j] = W[v][chan[j]]. 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_lmhead_split_choose(size_t *chan, size_t M, const double *H, size_t R, size_t K);
DRIFT_MUST_CHECK int drift_lmhead_split_cols(
    float *cols, const float *W, size_t V, size_t K, const size_t *chan, size_t M);

/* The pruning test on its own (exposed for tests): keep[] receives, in increasing order, the
 * indices v with value[v] + radius[v] >= (second largest of value[u] - radius[u]), the
 * comparison made safe against rounding; returns how many. n >= 2. */
size_t drift_prune_top2(size_t *keep, const double *value, const double *radius, size_t n);

#ifdef __cplusplus
}
#endif

#endif
