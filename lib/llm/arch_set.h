/* arch_set.h — a set of GPU generations compared through their tensor-core models (for
 * gpu_generations, the LM head, and gpu_generations_greedy, the greedy text): the --archs
 * list, and each generation's recipe for an input format.
 *
 * A generation computes a GEMM with inputs in IN (bf16, fp16, tf32), its tensor core's block
 * FMA (tc_model.h) accumulating in fp32, the result left in fp32: the recipe
 * IN/tc:ARCH/fp32/fp32 for the LM head (dispatch.h) and for every matmul of the transformer
 * (gpu_generations_greedy). Not every generation has every input (V100: no bf16). */
#ifndef DRIFT_ARCH_SET_H
#define DRIFT_ARCH_SET_H

#include <stddef.h>

#include "drift.h"
#include "recipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The names --archs accepts, for messages. */
#define DRIFT_ARCH_SET_ACCEPTED "v100, a100, a2, a30, ada, l40s, h100, h200, b200, rtxpro6000, mi100, mi250, mi300x"

/* Parse a comma-separated list of architecture names (as in tc:ARCH) into arch[0 .. *n-1]:
 * at most max, each once, at least two (something to compare). 0, or DRIFT_EINVAL with the
 * reason (naming the offending entry) in err. */
DRIFT_MUST_CHECK int drift_arch_set_parse(
    drift_tc_arch_t *arch, int *n, int max, const char *list, char *err, size_t errsz);

/* The LM-head recipe IN/tc:ARCH/fp32/fp32 in *r. 0, or DRIFT_EUNSUPPORTED when the
 * architecture has no tensor-core path for IN (*r is still filled). */
DRIFT_MUST_CHECK int drift_arch_head_recipe(drift_recipe_t *r, drift_format_t in, drift_tc_arch_t arch);

#ifdef __cplusplus
}
#endif

#endif
