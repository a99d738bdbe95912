/* arch_greedy.h — the same transformer decoded greedily on several GPU generations' tensor
 * cores, and where their texts part (gpu_generations_greedy).
 *
 * Per architecture one model over the checkpoint (created in turn, one at a time: a real
 * model's weights are the largest allocation; an architecture whose tensor-core model for the
 * input equals an earlier one's, as B200's is H100's, shares that one's decode) whose five matmul groups (QKV, attention
 * output, MLP up, MLP down, LM head) all use IN/tc:ARCH/fp32/fp32 (inputs rounded RNE to IN,
 * the tensor core's block FMA with an fp32 accumulator, fp32 results); everything else as
 * drift_numerics_fp32 (fp32 residual stream, norms, softmax, attention; fp32 weights), with
 * the batch-invariant policy so that a prompt's bits do not depend on the prompts decoded
 * beside it (greedy_batch.h). Plus the exact reference (drift_numerics_exact) for the
 * partings (parting.h). The header keeps model.h out (see parting.h). */
#ifndef DRIFT_ARCH_GREEDY_H
#define DRIFT_ARCH_GREEDY_H

#include <stddef.h>

#include "drift.h"
#include "checkpoint.h"
#include "format.h"
#include "order.h"
#include "parting.h"

typedef struct drift_arch_greedy drift_arch_greedy_t;

/* Models for the n architectures arch[] with inputs in, each with nprompts KV slots, over ck
 * (not copied: it must outlive *g). ok[a] = 1 when arch a has a tensor-core path for in
 * (else it has no model and is skipped). 0, or DRIFT_EINVAL / DRIFT_EUNSUPPORTED /
 * DRIFT_ENOMEM with the reason in err. */
DRIFT_MUST_CHECK int drift_arch_greedy_create(drift_arch_greedy_t **g, const drift_checkpoint_t *ck, drift_format_t in,
    const drift_tc_arch_t *arch, int n, int nprompts, int *ok, char *err, size_t errsz);
void drift_arch_greedy_free(drift_arch_greedy_t *g);

/* Every architecture decodes the nprompts prompts (prompt r: prompts[r][0 .. np[r]-1]) for
 * ntokens greedy tokens (no stop at BOS); then every pair a < b of architectures with a path
 * is compared per prompt: part[r * drift_pair_count(n) + drift_pair_index(a, b, n)]
 * (pair_stats.h; entries of pairs without a path, and b == n, are left alone).
 * topgap[r * ntokens + t] (may be NULL) = the computed top-1 - top-2 logit gap of the first
 * architecture with a path at step t of prompt r. 0, or DRIFT_EINVAL / DRIFT_ENOMEM / a
 * model's error (the reason in err when a model could not be made). */
DRIFT_MUST_CHECK int drift_arch_greedy_run(drift_arch_greedy_t *g, drift_parting_t *part, double *topgap,
    const int *const *prompts, const int *np, int ntokens, char *err, size_t errsz);

/* The earlier architecture whose decode architecture a shares (the same tensor-core model
 * for the input), or -1. */
int drift_arch_greedy_same_as(const drift_arch_greedy_t *g, int a);

/* Forward steps the exact reference has run so far (each prefix once). */
long drift_arch_greedy_exact_steps(const drift_arch_greedy_t *g);

#endif
