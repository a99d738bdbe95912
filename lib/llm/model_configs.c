/* model_configs.c — the lab's four model numerics (model_configs.h). */
#include "model_configs.h"

#include "drift.h"

const drift_model_config_t drift_model_configs[DRIFT_NCONFS] = {
    {"fp32", "fp32/seq/fp32/fp32", "fp32", "fp32", DRIFT_FP32, 0},
    {"bf16", "bf16/tc:h100/fp32/bf16", "fp32", "bf16", DRIFT_BF16, 1},
    {"fp16", "fp16/tc:h100/fp32/fp16", "fp32", "fp16", DRIFT_FP16, 1},
    {"layercast", "fp32/seq/fp32/fp32", "bf16", "LayerCast", DRIFT_BF16, 0},
};

int drift_model_config_numerics(drift_numerics_t *nx, int c)
{
    if (c < 0 || c >= DRIFT_NCONFS) return DRIFT_EINVAL;
    const drift_model_config_t *cf = &drift_model_configs[c];
    *nx = drift_numerics_fp32();
    int rc = drift_numerics_set_recipe(nx, cf->recipe);
    return rc ? rc : drift_format_parse(&nx->weights, cf->weights);
}
