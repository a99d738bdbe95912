/* arch_head.h — one LM head computed under several recipes (GPU generations' tensor cores)
 * and exactly: which token each picks, and how far apart the logits are (for
 * gpu_generations' realistic head). */
#ifndef DRIFT_ARCH_HEAD_H
#define DRIFT_ARCH_HEAD_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "pair_stats.h"
#include "recipe.h"

/* Distances in output ulps binned 0, 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, >64. */
#define DRIFT_ULP_NBIN 9
int drift_ulp_bin(int64_t d);
const char *drift_ulp_bin_name(int bin);

/* R hidden states H0 (R x K) against the head W (V x K), both rounded RNE to in, under every
 * recipe c < n with use[c] (drift_recipe_gemm) and exactly (in/exact/-/fp64, index n). For
 * every pair p = drift_pair_index(a, b, n), b <= n, both with a path:
 *   arg[lg * npair + p] += rows whose argmax (first maximum) differs: lg 0 the fp32 logits,
 *     lg 1 the logits rounded RNE to in (the exact ones are never rounded);
 *   ulps[p][at + r V + v] = the distance of logit (r, v) between a and b in fp32 steps (b
 *     exact: its logit rounded to fp32), sdiff[p][at + r V + v] = |a - b| / s_r with
 *     s_r = drift_logit_scale of row r; hist[p * DRIFT_ULP_NBIN + bin] += 1 per logit.
 *   rowdiff (when not NULL) [(r * 2 + lg) * npair + p] = 1 where row r's argmax differs
 *     between a and b (0 elsewhere): the hidden state is the independent unit of these
 *     comparisons, so intervals are clustered by it;
 * npair = drift_pair_count(n). 0, or DRIFT_EINVAL / DRIFT_ENOMEM / a GEMM's error. */
DRIFT_MUST_CHECK int drift_arch_head_compare(drift_count_t *arg, unsigned char *rowdiff, int64_t *const *ulps,
    double *const *sdiff, size_t at, long *hist, const double *H0, const double *W, size_t R, size_t V, size_t K,
    drift_format_t in, const drift_recipe_t *rec, const int *use, int n);

#endif
