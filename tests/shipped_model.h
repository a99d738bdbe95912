/* shipped_model.h — the checkpoint shipped for tests (models/stories260K.bin) and models of a
 * checkpoint with every matmul under one recipe; each asserts on any failure. */
#ifndef DRIFT_TESTS_SHIPPED_MODEL_H
#define DRIFT_TESTS_SHIPPED_MODEL_H

#include <criterion/criterion.h>

#include "checkpoint.h"
#include "model.h"

#define SHIPPED_CHECKPOINT DRIFT_SOURCE_DIR "/models/stories260K.bin"

static inline void shipped_checkpoint_read(drift_checkpoint_t *ck)
{
    char err[256];
    cr_assert_eq(drift_checkpoint_read(ck, SHIPPED_CHECKPOINT, err, sizeof err), 0, "%s", err);
}

/* Every matmul under recipe (IN/ORDER/ACC/OUT, model.h) and the GEMM policy, the rest fp32. */
static inline drift_model_t *recipe_model(
    const drift_checkpoint_t *c, const char *recipe, drift_policy_t policy, int slots)
{
    drift_numerics_t nx = drift_numerics_fp32();
    drift_recipe_t r;
    cr_assert_eq(drift_model_recipe_parse(&r, recipe), 0, "%s", recipe);
    drift_numerics_set_mm(&nx, &r);
    nx.policy = policy;
    drift_model_t *m;
    char err[256];
    cr_assert_eq(drift_model_create(&m, c, &nx, slots, err, sizeof err), 0, "%s", err);
    return m;
}

#endif
