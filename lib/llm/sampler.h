/* sampler.h — samplers as data: how an inference engine turns logits into one token.
 *
 * Why a module: "the sampled token changed" depends on the sampler as much as on the logits.
 * Walking the inverse CDF in token-id order makes every logit error that moves the cumulative
 * sum across the uniform change the token; an exponential race changes it only when the
 * winner's lead is overturned. Engines differ:
 *
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
 * Filters (the other three samplers apply them before drawing, in vLLM's order): temperature
 * z = logits / T; top-k keeps every token with p >= the k-th largest p (ties at the boundary
 * kept, as vLLM's mask `logits < kth value`); top-p sorts the kept tokens by ascending p (id
 * breaking ties) and drops them while their cumulative mass <= (1 - top_p) Z, never the last;
 * min-p keeps p >= min_p p_max. Probabilities are p_i = exp(z_i - max z) in double.
 *
 * Greedy: T == 0, or T < greedy_below, takes argmax of the logits (lowest id among equal
 * values) and draws nothing. vLLM treats T < 1e-5 as greedy (_SAMPLING_EPS); the lab's default
 * greedy_below = 0 keeps T = 1e-8 a real (and tie-splitting) sample.
 *
 * Randomness (law 4): every uniform is a pure function of (seed, point, trial, lane) through
 * Philox: lane i < V is token i's exponential, rounds of the inverse-CDF / rejection draws
 * have their own stream. The same key therefore drives the same draw under two numerics of
 * the logits, which is what "fixing the seed" means. */
#ifndef DRIFT_SAMPLER_H
#define DRIFT_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include "drift.h"

typedef enum {
    DRIFT_SAMPLER_INVCDF = 0,
    DRIFT_SAMPLER_EXPRACE,
    DRIFT_SAMPLER_GUMBEL,
    DRIFT_SAMPLER_REJECTION,
    DRIFT_SAMPLER_NKINDS
} drift_sampling_kind_t;

typedef struct {
    drift_sampling_kind_t kind;
    double temperature;  /* >= 0; 0 is greedy */
    int top_k;           /* 0: off */
    double top_p;        /* (0, 1]; 1: off */
    double min_p;        /* [0, 1); 0: off */
    double greedy_below; /* T < greedy_below is greedy; 0: only T == 0 */
} drift_sampling_t;

#define DRIFT_SAMPLER_VLLM_GREEDY 1e-5 /* vLLM's _SAMPLING_EPS */
#define DRIFT_SAMPLER_SPEC_MAX 128
/* (named drift_sampling_*: model.h's drift_sampler_t / drift_sample are the decoder's own sampler) */

/* kind, T = 1, no filters, greedy_below = 0. */
drift_sampling_t drift_sampling_default(drift_sampling_kind_t kind);
/* 0, or DRIFT_EINVAL with *why (may be NULL) naming the bad field and what is accepted. */
DRIFT_MUST_CHECK int drift_sampling_validate(const drift_sampling_t *s, const char **why);
/* Spec: NAME[:KEY=VALUE,...] with keys T, k, p, minp, greedy (e.g. "exp-race:T=0.6,k=50",
 * "inverse-cdf:greedy=vllm" for 1e-5). Strict; 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_sampling_parse(drift_sampling_t *s, const char *spec);
/* Canonical spec (keys that differ from the defaults, in the order T,k,p,minp,greedy); its
 * length, or DRIFT_EINVAL. parse(print(s)) == s. */
int drift_sampling_print(char *buf, size_t size, const drift_sampling_t *s);

/* The key of one sampling step. */
typedef struct {
    uint64_t seed;
    uint32_t point, trial;
} drift_sampling_key_t;

/* Token lane's uniform in (0, 1] (53 bits) and the uniform in [0, 1) of draw round r. */
double drift_sampling_token_uniform(const drift_sampling_key_t *key, uint32_t lane);
double drift_sampling_draw_uniform(const drift_sampling_key_t *key, uint32_t round);
/* E_i = -log(token uniform i) for i < V: the exponentials of exp-race and gumbel, which depend
 * only on the key (compute once per step, reuse across numerics and temperatures). */
void drift_sampling_exponentials(double *e, size_t V, const drift_sampling_key_t *key);

/* Draws one token from logits[0..V) under s, with the step's exponentials e[0..V) (may be NULL
 * for inverse-cdf, rejection and greedy) and its draw uniforms from key. 0, DRIFT_EINVAL (bad
 * sampler, NULL pointers, V == 0, a NaN logit) or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_sampling_draw(size_t *out, const double *logits, size_t V, const drift_sampling_t *s, const double *e,
                 const drift_sampling_key_t *key);

/* The same transform with explicit randomness: e[0..V) as above and draw uniforms
 * u_draw[0..n_draw) in [0, 1); DRIFT_ERANGE when a rejection draw needs more rounds than
 * n_draw. For tests and for hand-worked examples. */
DRIFT_MUST_CHECK int drift_sampling_draw_given(size_t *out, const double *logits, size_t V, const drift_sampling_t *s, const double *e,
                       const double *u_draw, size_t n_draw);

#endif
