/* sampler.h — samplers as data: how a decoder or an inference engine turns logits into one
 * token. One type, drift_sampler_t, describes every sampler the lab runs; its kind says which
 * computation draws the token, and a spec string names it (parsed and printed here).
 *
 * Why a module: "the sampled token changed" depends on the sampler as much as on the logits.
 * Walking the inverse CDF in token-id order makes every logit error that moves the cumulative
 * sum across the uniform change the token; an exponential race changes it only when the
 * winner's lead is overturned. The kinds:
 *
 *   greedy       the argmax of the logits (lowest id among equal values), drawing nothing;
 *                greedy-ties:EPS gives a top-1 that beats the top-2 by less than EPS logits
 *                to the lower id of the two (a deterministic tie-breaker). Deployments decode
 *                with it.
 *   sorted-cdf   the decoder's (drift_generate, drift-generate --temperature): p_i ~
 *                exp((l_i - max) / T) in double; tokens ordered by decreasing p (ties by id);
 *                top-k keeps the first k, top-p the shortest prefix of those whose mass reaches
 *                p; the token is the first in that order whose cumulative mass exceeds u times
 *                the kept mass. T = 0 is greedy. The stream is (seed, "model.sample", 0, 0),
 *                one uniform per step.
 *   full, top-k, top-p   the plain inverse-CDF sampler, identical for every numerics so that
 *                only the logits differ, named by its cut: the candidates are all tokens
 *                (full), the k largest logits (top-k; equal logits ordered by token id), or the
 *                fewest largest whose probabilities reach p (top-p); the weights are
 *                exp((l_v - l_max)/T) in double for the candidates and 0 for the rest; the
 *                token is the first v in token-id order whose running sum of weights exceeds
 *                u * (sum of weights), as torch.multinomial over a masked vocabulary does.
 *                T = 0 is the argmax and builds no distribution.
 * The engines' samplers (filters first, then the draw):
 *   inverse-cdf  u ~ U[0,1); the first token (in id order) whose cumulative probability exceeds
 *                u Z. (torch.multinomial's general path; FlashInfer's sampling_from_probs.)
 *   exp-race     argmax_i p_i / E_i with E_i ~ Exp(1) one per token: PyTorch's multinomial fast
 *                path for one sample and vLLM's sampler (probs.div_(q.exponential_()).argmax()).
 *                P(i wins) = p_i / sum p exactly: P(p_i/E_i > p_j/E_j for all j) =
 *                integral e^-x prod_j e^(-x p_j/p_i) dx = p_i / sum_j p_j.
 *   gumbel       argmax_i z_i + G_i with G_i = -log E_i (Gumbel-max on the scaled logits z =
 *                logits / T): the same draw as exp-race in exact arithmetic (log is monotone),
 *                computed without the softmax.
 *   rejection    FlashInfer's top-k/top-p sampling: draw by inverse CDF among tokens with
 *                p > pivot (pivot starts at 0); accept token j if it passes the filters
 *                (fewer than k tokens with p > p_j; mass of tokens with p > p_j below top_p Z;
 *                p_j >= min_p p_max), otherwise set pivot = p_j and draw again with the next
 *                uniform. Exact: each round samples the target restricted to a superset of
 *                the kept set, and the accepted draw is proportional to p on the kept set.
 *
 * The engines' filters (the other three apply them before drawing, in vLLM's order):
 * temperature z = logits / T; top-k keeps every token with p >= the k-th largest p (ties at the
 * boundary kept, as vLLM's mask `logits < kth value`); top-p sorts the kept tokens by ascending
 * p (id breaking ties) and drops them while their cumulative mass <= (1 - top_p) Z, never the
 * last; min-p keeps p >= min_p p_max. Probabilities are p_i = exp(z_i - max z) in double.
 * Their greedy: T == 0, or T < greedy_below, takes argmax of the logits (lowest id among equal
 * values) and draws nothing. vLLM treats T < 1e-5 as greedy (_SAMPLING_EPS); the lab's default
 * greedy_below = 0 keeps T = 1e-8 a real (and tie-splitting) sample.
 *
 * Randomness of the engines (law 4): every uniform is a pure function of (seed, point, trial,
 * lane) through Philox: lane i < V is token i's exponential, rounds of the inverse-CDF /
 * rejection draws have their own stream. The same key therefore drives the same draw under two
 * numerics of the logits, which is what "fixing the seed" means. */
#ifndef DRIFT_SAMPLER_H
#define DRIFT_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DRIFT_SAMPLER_GREEDY = 0, /* greedy, greedy-ties:EPS */
    DRIFT_SAMPLER_SORTED,     /* sorted-cdf */
    DRIFT_SAMPLER_PLAIN,      /* full, top-k, top-p: the plain inverse-CDF sampler and its cut */
    DRIFT_SAMPLER_INVCDF,     /* the engines' */
    DRIFT_SAMPLER_EXPRACE,
    DRIFT_SAMPLER_GUMBEL,
    DRIFT_SAMPLER_REJECTION,
    DRIFT_SAMPLER_NKINDS
} drift_sampler_kind_t;

/* The plain sampler's cut. */
typedef enum { DRIFT_CUT_FULL, DRIFT_CUT_TOPK, DRIFT_CUT_TOPP, DRIFT_NCUTS } drift_cut_t;

/* A field a kind does not use keeps the kind's default (drift_sampler_default), so that a
 * spec names every sampler once. */
typedef struct {
    drift_sampler_kind_t kind;
    drift_cut_t cut;     /* plain: full, top-k (top_k >= 1) or top-p */
    double temperature;  /* >= 0; 0 is greedy (greedy: 0) */
    int top_k;           /* 0: off */
    double top_p;        /* (0, 1]; 1: off */
    double min_p;        /* engines: [0, 1); 0: off */
    double greedy_below; /* engines: T < greedy_below is greedy; 0: only T == 0 */
    double tie_eps;      /* greedy: a top-two gap below it goes to the lower id; 0: off */
    uint64_t seed;       /* sorted-cdf: the decoder's stream (the engines' draws take a key) */
} drift_sampler_t;

#define DRIFT_SAMPLER_VLLM_GREEDY 1e-5 /* vLLM's _SAMPLING_EPS */
#define DRIFT_SAMPLER_SPEC_MAX 128

/* kind, T = 1 (greedy: 0), no filters, cut full, greedy_below = tie_eps = seed = 0. */
drift_sampler_t drift_sampler_default(drift_sampler_kind_t kind);
/* 0, or DRIFT_EINVAL with *why (may be NULL) naming the bad field and what is accepted. */
DRIFT_MUST_CHECK int drift_sampler_validate(const drift_sampler_t *s, const char **why);
/* Spec: NAME[:KEY=VALUE,...] with NAME greedy, sorted-cdf, full, top-k, top-p, inverse-cdf,
 * exp-race, gumbel or rejection, and the keys the kind uses: T, k, p, minp, greedy (a
 * threshold, or vllm for 1e-5), seed (e.g. "exp-race:T=0.6,k=50", "top-k:k=50",
 * "inverse-cdf:greedy=vllm"); or greedy-ties:EPS with EPS > 0. Strict; 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_sampler_parse(drift_sampler_t *s, const char *spec);
/* Canonical spec (the name, then the kind's keys that differ from its defaults, in the order
 * T,k,p,minp,greedy,seed); its length, or DRIFT_EINVAL. parse(print(s)) == s. */
int drift_sampler_print(char *buf, size_t size, const drift_sampler_t *s);
/* The spec's name: the kind's, the plain sampler's cut ("full", "top-k", "top-p"), or
 * "greedy-ties"; "?" for an unknown kind. */
const char *drift_sampler_name(const drift_sampler_t *s);

/* ---- greedy and sorted-cdf: the decoder's draw ------------------------------------------ */

/* Sample from logits (V values) with a greedy or sorted-cdf sampler (kinds above); u is a
 * uniform in [0, 1), which greedy ignores. The token, or DRIFT_EINVAL (another kind, NULL
 * pointers, V < 1) / DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_sample(const double *logits, int V, const drift_sampler_t *s, double u);
/* Greedy with a tie-breaker: the top-1 token (first maximum), unless its logit exceeds the
 * top-2's by less than eps: then the lower id of the two. */
int drift_greedy_tie(const double *logits, int V, double eps);

/* ---- full, top-k, top-p: the plain inverse-CDF draw ------------------------------------- */

/* The argmax of l[0..V) with the lowest id among equal maxima. */
size_t drift_cdf_argmax(const double *l, size_t V);
/* order = the token ids by decreasing logit, ties by increasing id (a total order, so the
 * result is unique); scratch holds V ids. */
void drift_cdf_order(size_t *order, size_t *scratch, const double *l, size_t V);
/* Fills w (per token id) for a plain sampler s with temperature > 0; returns the sum of the
 * weights. */
double drift_cdf_weights(double *w, const double *l, const size_t *order, size_t V, const drift_sampler_t *s);
/* The first v in token-id order whose running sum of w exceeds u * sum (the last candidate
 * when u * sum rounds up to the total). */
size_t drift_cdf_draw(const double *w, size_t V, double sum, double u);

/* ---- the engines' draw --------------------------------------------------------------------- */

/* The key of one sampling step. */
typedef struct {
    uint64_t seed;
    uint32_t point, trial;
} drift_draw_key_t;

/* Token lane's uniform in (0, 1] (53 bits) and the uniform in [0, 1) of draw round r. */
double drift_sampler_token_uniform(const drift_draw_key_t *key, uint32_t lane);
double drift_sampler_draw_uniform(const drift_draw_key_t *key, uint32_t round);
/* E_i = -log(token uniform i) for i < V: the exponentials of exp-race and gumbel, which depend
 * only on the key (compute once per step, reuse across numerics and temperatures). */
void drift_sampler_exponentials(double *e, size_t V, const drift_draw_key_t *key);

/* Draws one token from logits[0..V) under an engine's sampler s, with the step's exponentials
 * e[0..V) (may be NULL for inverse-cdf, rejection and greedy) and its draw uniforms from key.
 * 0, DRIFT_EINVAL (not an engine's sampler, a bad one, NULL pointers, V == 0, a NaN logit) or
 * DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_sampler_draw(size_t *out, const double *logits, size_t V, const drift_sampler_t *s,
    const double *e, const drift_draw_key_t *key);

/* The same transform with explicit randomness: e[0..V) as above and draw uniforms
 * u_draw[0..n_draw) in [0, 1); DRIFT_ERANGE when a rejection draw needs more rounds than
 * n_draw. For tests and for hand-worked examples. */
DRIFT_MUST_CHECK int drift_sampler_draw_given(size_t *out, const double *logits, size_t V, const drift_sampler_t *s,
    const double *e, const double *u_draw, size_t n_draw);

#ifdef __cplusplus
}
#endif

#endif
