/* close_calls.h — planted close calls between the top two rows of an LM head, computed under
 * several recipes: which of the two tokens each recipe picks (gpu_generations; the
 * planted construction is gen_logits.h's). */
#ifndef DRIFT_CLOSE_CALLS_H
#define DRIFT_CLOSE_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "gen_logits.h"
#include "pair_stats.h"
#include "recipe.h"

/* np planted pairs: pair i drawn from the stream (seed, key, point, i) by
 * drift_gen_planted_pair(model, V, gap) and planted exactly in format in at gap * s
 * (drift_plant_pair_in, no tie); then every recipe c < n with use[c] computes both logits
 * (drift_lmhead_eval_full) in one call. pick[i * (n + 1) + c] = the token (0 or 1) recipe c
 * picks (left alone when !use[c]), pick[i * (n + 1) + n] = the exact pick; missed[i] = 1 when
 * the format could not plant the gap within DRIFT_PLANT_TOL (else 0). Pairs run in parallel
 * (OpenMP); the result does not depend on the thread count. 0, or DRIFT_EINVAL (n < 1,
 * n > DRIFT_LMHEAD_MAXCFG) / DRIFT_ENOMEM / the error of a failed construction. */
DRIFT_MUST_CHECK int drift_close_call_picks(unsigned char *pick, unsigned char *missed,
    const drift_hidden_model_t *model, size_t V, size_t K, double gap, drift_format_t in, const drift_recipe_t *rec,
    const int *use, int n, uint64_t seed, uint32_t key, uint32_t point, size_t np);

/* The same pairs, counted: cnt[drift_pair_index(a, b, n)] += pairs where a and b (b == n:
 * exact) pick different tokens, for every a < b <= n with use[a] and (b == n or use[b]);
 * *missed += pairs the format could not plant within DRIFT_PLANT_TOL. 0 or the error of
 * drift_close_call_picks. */
DRIFT_MUST_CHECK int drift_close_call_counts(drift_count_t *cnt, long *missed, const drift_hidden_model_t *model,
    size_t V, size_t K, double gap, drift_format_t in, const drift_recipe_t *rec, const int *use, int n, uint64_t seed,
    uint32_t key, uint32_t point, size_t np);

#endif
