/* beam.h — beam search over the lab's decoder, and the ties that can reorder it.
 *
 * Scores. Each step gives every live beam its logits l (V doubles, as the model returns them).
 * Its log-probabilities, in fp64, in this order of operations:
 *     mx = max_v l[v];  z = sum_{v = 0 .. V-1} exp(l[v] - mx)  (seq, index order, glibc exp);
 *     lp[v] = (l[v] - mx) - log(z)                              (glibc log)
 * and a candidate's score is the parent's score + lp[v] (fp64, one addition per step). A beam's
 * score is thus the sum, left to right, of its tokens' log-probabilities: no length penalty.
 *
 * Selection. The candidates of a step are every live beam b extended by every token v, and
 * every finished beam carried over unchanged; the beams of the next step are the `beams`
 * highest scores, in descending order (beam 0 the best). Equal scores are ordered by
 *   - stable:   (beam index, token id) ascending (a finished beam counts as token -1), so
 *               beams = 1 is first-maximum greedy (drift_generate's choice);
 *   - unstable: a random permutation of the step's candidates (Fisher-Yates on the stream
 *               (seed, "beam.ties", step, 0)), as a GPU top-k whose equal keys come out in
 *               whatever order its threads finished: any order of a tie can occur.
 * Scores that differ are ordered alike by both; the modes part only on an exact tie.
 *
 * Length. Every beam gets ntokens tokens (no stop) unless a stop token is given (stop_token,
 * or stop_mask[v] != 0, e.g. drift_tokenizer_t's eog): a beam that picks one is finished, its
 * score includes the stop token's log-probability, the stop token is not among its tokens,
 * and it competes, unchanged, with the live beams' extensions at every later step. The search
 * ends after ntokens steps or when no beam is live.
 *
 * Ties are counted per step on the sorted top beams + 1 candidates: `boundary` when the last
 * kept and the first dropped candidate have equal scores (which beams survive depends on the
 * tie order), `inside` for each pair of neighbours with equal scores among the kept ones (only
 * their ranks depend on it). */
#ifndef DRIFT_BEAM_H
#define DRIFT_BEAM_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_BEAM_TIES_STABLE = 0, DRIFT_BEAM_TIES_UNSTABLE, DRIFT_NBEAM_TIES } drift_beam_ties_t;
DRIFT_MUST_CHECK int drift_beam_ties_parse(drift_beam_ties_t *t, const char *name);

typedef struct {
    int beams;   /* width, >= 1 */
    int ntokens; /* steps, >= 0 */
    drift_beam_ties_t ties;
    uint64_t seed;                  /* unstable: the permutations' stream */
    int stop_token;                 /* -1: none */
    const unsigned char *stop_mask; /* V entries, NULL: none */
} drift_beam_opts_t;

/* stable ties, no stop token, seed 0 */
drift_beam_opts_t drift_beam_opts(int beams, int ntokens);

typedef struct {
    int nbeams;      /* final beams, best first (fewer than asked when there were fewer candidates) */
    int stride;      /* ntokens: row length of tokens and logprob */
    int *tokens;     /* nbeams x stride; beam b's first len[b] entries */
    double *logprob; /* nbeams x stride: each token's lp */
    int *len;
    double *score; /* the beam's score (with the stop token's lp when finished) */
    int *finished; /* 1: ended by a stop token */
    int steps;     /* selection steps run */
    long ties_boundary, ties_inside;
} drift_beam_t;
void drift_beam_free(drift_beam_t *b);

/* A source of logits for the live beams. The first call (nbeams 1, parent and last NULL) asks
 * for the logits after the context alone; each later call for the logits of nbeams beams,
 * beam r being beam parent[r] of the previous call extended by token last[r]. Writes
 * nbeams x V values; 0 or a negative status. */
typedef int (*drift_beam_step_fn)(void *ctx, double *logits, int nbeams, const int *parent, const int *last);

/* The search over any logit source with a vocabulary of V tokens. 0, DRIFT_EINVAL (bad options,
 * NaN logits, every logit -inf), DRIFT_ENOMEM, or the source's status. Free out with
 * drift_beam_free. */
DRIFT_MUST_CHECK int drift_beam_search_fn(
    drift_beam_t *out, int V, const drift_beam_opts_t *o, drift_beam_step_fn step, void *ctx);

/* The search over a model: the prompt (nprompt >= 1 ids) is prefilled in slot 0; each later
 * step is one drift_model_step with one row per live beam (so all beams advance in one batched
 * pass, and under the vendor-like policy the kernels see M = live beams); beam r lives in a KV
 * slot of its own, a beam forked from another gets a copy of its parent's cache
 * (drift_model_copy_slot). The model needs nslots >= beams. ntokens is cut to what the
 * context holds, as drift_generate does. 0 or a negative status with the reason in err. */
DRIFT_MUST_CHECK int drift_beam_search(drift_beam_t *out, drift_model_t *m, const int *prompt, int nprompt,
    const drift_beam_opts_t *o, char *err, size_t errsz);

#ifdef __cplusplus
}
#endif

#endif
