/* layer_configs.h — layer_drift's sweep: the four numerics configurations a model's hidden
 * states are measured under, how --configs names them, and how prose names them. */
#ifndef DRIFT_LAYER_CONFIGS_H
#define DRIFT_LAYER_CONFIGS_H

#include <stddef.h>

#include "format.h"
#include "model.h"

/* shown: the configuration's name in prose; rounded: the format whose unit roundoff its error
 * is measured in (LayerCast's weights are bf16); tc: computed on the tensor-core model. */
typedef struct {
    const char *name, *recipe, *weights, *shown;
    drift_format_t rounded;
    int tc;
} drift_layer_conf_t;

enum { C_FP32, C_BF16, C_FP16, C_LAYERCAST, NCONF };
extern const drift_layer_conf_t drift_layer_confs[NCONF];

/* --configs LIST (the parser has checked it as a list: no empty or repeated item): use[c] = 1
 * for each configuration named, every one for "all"; the number used. Dies on a bad name. */
int drift_layer_configs_pick(int *use, const char *list);
/* The numerics of configuration c: its recipe for every matmul, its weights' format. */
void drift_layer_config_numerics(drift_numerics_t *nx, int c);
/* The configurations used, as prose: "fp32, bf16 and fp16 (H100 tensor-core model) and
 * LayerCast" for all four, the tensor-core ones (adjacent in the table) named as one item. */
void drift_layer_configs_phrase(char *buf, size_t size, const int *use);

#endif
