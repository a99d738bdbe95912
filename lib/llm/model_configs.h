/* model_configs.h — the four numerics under which the lab measures a whole model: fp32; bf16
 * and fp16 inputs on the H100 tensor-core model with fp32 accumulation and logits stored in the
 * format; LayerCast (bf16 weights, fp32 compute). The experiments that hold a model's hidden
 * states or logits against the exact model (layer_drift, real_gaps) sweep the same four, so a
 * result of one is read beside the other's. */
#ifndef DRIFT_MODEL_CONFIGS_H
#define DRIFT_MODEL_CONFIGS_H

#include "format.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* name: in data and on the command line; recipe: every matmul's (recipe.h); weights: the
 * weights' format; shown: the name in prose; rounded: the format whose unit roundoff its error
 * is measured in (LayerCast's weights are bf16); tc: computed on the tensor-core model. */
typedef struct {
    const char *name, *recipe, *weights, *shown;
    drift_format_t rounded;
    int tc;
} drift_model_config_t;

enum { DRIFT_CONF_FP32, DRIFT_CONF_BF16, DRIFT_CONF_FP16, DRIFT_CONF_LAYERCAST, DRIFT_NCONFS };
extern const drift_model_config_t drift_model_configs[DRIFT_NCONFS];

/* nx = the numerics of configuration c (drift_numerics_fp32 with its recipe and weights).
 * 0, or DRIFT_EINVAL for c out of range. */
DRIFT_MUST_CHECK int drift_model_config_numerics(drift_numerics_t *nx, int c);

#ifdef __cplusplus
}
#endif

#endif
