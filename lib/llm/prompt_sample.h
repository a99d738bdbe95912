/* prompt_sample.h — which prompts of a set a seed draws (law 4: a seed is a sample).
 *
 * drift_prompt_sample: n distinct indices of p's prompts, without replacement, in draw order:
 * the first n places of a partial Fisher-Yates shuffle of 0 .. p->n - 1, where place i swaps
 * with i + drift_stream_below(st, p->n - i) on the Philox stream
 * drift_stream_init(st, seed, drift_fnv1a32(stream_name), 0, 0). The same (set size, n, seed,
 * name) always gives the same indices; the name keeps two experiments' draws apart.
 *
 * drift_prompt_sample_by_kind: a sample stratified by kind (a file with kinds only): kind k of
 * the set (drift_prompt_kinds order) gets n_k = floor(n * c_k / p->n) places, c_k its prompts,
 * and the places left (n minus the sum) go one each to the kinds of largest remainder
 * n * c_k mod p->n (the earlier kind among equals), so each kind's share of the sample follows its
 * share of the set within one prompt. Kind k's n_k are then the first n_k of a partial
 * Fisher-Yates over its prompts' indices (in file order) on the stream with point = k + 1 (the
 * same seed and name); the result lists kind 0's draws, then kind 1's, ... */
#ifndef DRIFT_PROMPT_SAMPLE_H
#define DRIFT_PROMPT_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "prompt_file.h"

#ifdef __cplusplus
extern "C" {
#endif

/* idx: n ints. 0, or DRIFT_EINVAL (n < 0, n > p->n, no set, no name; by_kind: a set without
 * kinds) or DRIFT_ENOMEM, with one line in err. */
DRIFT_MUST_CHECK int drift_prompt_sample(
    int *idx, int n, const drift_prompt_file_t *p, uint64_t seed, const char *stream_name, char *err, size_t errsz);
DRIFT_MUST_CHECK int drift_prompt_sample_by_kind(
    int *idx, int n, const drift_prompt_file_t *p, uint64_t seed, const char *stream_name, char *err, size_t errsz);

#ifdef __cplusplus
}
#endif

#endif
