/* greedy_batch.h — greedy decoding of n prompts side by side, one forward pass per step over
 * all of them (each in its own KV-cache slot): n completions for the cost of batched GEMMs.
 *
 * Each prompt's completion is what drift_generate gives it alone (greedy, no stop at BOS)
 * whenever the model's numerics make a row independent of its companions: the batch-invariant
 * policy, or any policy whose GEMMs never split K at these shapes (model.h: none of
 * stories260K's do at the default min slice); tests/test_greedy_batch.c holds the two against
 * each other bit for bit. */
#ifndef DRIFT_GREEDY_BATCH_H
#define DRIFT_GREEDY_BATCH_H

#include "drift.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* prompts: n prompts of np tokens each (row-major); out[i] receives prompt i's ntokens greedy
 * tokens (first maximum), the runner-up and both logits per step, and with keep_logits every
 * step's logits (ntokens x vocab), as drift_generate fills them (rows[k] = the step's M).
 * The model needs nslots >= n and np + ntokens - 1 <= seq_len. Free each out[i] with
 * drift_gen_free. 0, or DRIFT_EINVAL / DRIFT_ENOMEM / the model's error (out all empty). */
DRIFT_MUST_CHECK int drift_greedy_batch(
    drift_gen_t *out, drift_model_t *m, const int *prompts, int n, int np, int ntokens, int keep_logits);

/* The same for prompts of different lengths: prompt i is prompts[i][0 .. np[i]-1] (a chat
 * model's wrapped prompts); all prefill in the first step. drift_greedy_batch is this with
 * every np[i] = np. */
DRIFT_MUST_CHECK int drift_greedy_batch_var(
    drift_gen_t *out, drift_model_t *m, const int *const *prompts, const int *np, int n, int ntokens, int keep_logits);

#ifdef __cplusplus
}
#endif

#endif
