/* layer_configs.h — how layer_drift's --configs picks from the lab's four model numerics
 * (model_configs.h), and how prose names the ones picked. */
#ifndef DRIFT_LAYER_CONFIGS_H
#define DRIFT_LAYER_CONFIGS_H

#include <stddef.h>

#include "model_configs.h"

/* --configs LIST (the parser has checked it as a list: no empty or repeated item): use[c] = 1
 * for each configuration named, every one for "all"; the number used. Dies on a bad name. */
int drift_layer_configs_pick(int *use, const char *list);
/* The configurations used, as prose: "fp32, bf16 and fp16 (H100 tensor-core model) and
 * LayerCast" for all four, the tensor-core ones (adjacent in the table) named as one item. */
void drift_layer_configs_phrase(char *buf, size_t size, const int *use);

#endif
