/* layer_configs.c — layer_drift's configurations (layer_configs.h). */
#include "layer_configs.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output.h"

const drift_layer_conf_t drift_layer_confs[NCONF] = {
    {"fp32", "fp32/seq/fp32/fp32", "fp32", "fp32", DRIFT_FP32, 0},
    {"bf16", "bf16/tc:h100/fp32/bf16", "fp32", "bf16", DRIFT_BF16, 1},
    {"fp16", "fp16/tc:h100/fp32/fp16", "fp32", "fp16", DRIFT_FP16, 1},
    {"layercast", "fp32/seq/fp32/fp32", "bf16", "LayerCast", DRIFT_BF16, 0},
};

int drift_layer_configs_pick(int *use, const char *list)
{
    static const char *const CONF_NAMES[NCONF + 1] = {"fp32", "bf16", "fp16", "layercast", "all"};
    char buf[256], *save = NULL;
    int nuse = 0;
    if (strlen(list) >= sizeof buf) drift_die("--configs: too long (accepted: fp32, bf16, fp16, layercast, all)");
    strcpy(buf, list);
    for (int k = 0; k < NCONF; k++) use[k] = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int c = drift_name_pick("--configs", t, CONF_NAMES, NCONF + 1);
        if (c == NCONF && strcmp(list, "all"))
            drift_die("--configs: 'all' stands alone (accepted: all, or names from fp32, bf16, fp16, layercast)");
        for (int k = 0; k < NCONF; k++) use[k] |= c == NCONF || c == k;
    }
    for (int k = 0; k < NCONF; k++) nuse += use[k];
    return nuse;
}

void drift_layer_config_numerics(drift_numerics_t *nx, int c)
{
    const drift_layer_conf_t *cf = &drift_layer_confs[c];
    *nx = drift_numerics_fp32();
    if (drift_numerics_set_recipe(nx, cf->recipe)) drift_die("bad recipe %s", cf->recipe);
    if (drift_format_parse(&nx->weights, cf->weights)) drift_die("bad weights %s", cf->weights);
}

void drift_layer_configs_phrase(char *buf, size_t size, const int *use)
{
    int nitem = 0, ntc = 0, item = 0, tc = 0;
    for (int c = 0; c < NCONF; c++)
        if (use[c]) drift_layer_confs[c].tc ? ntc++ : nitem++;
    nitem += ntc > 0;
    size_t at = 0;
    buf[0] = 0;
    for (int c = 0; c < NCONF && at < size; c++) {
        if (!use[c]) continue;
        if (!drift_layer_confs[c].tc) {
            at += (size_t)snprintf(
                buf + at, size - at, "%s%s", drift_list_sep(item++, nitem), drift_layer_confs[c].shown);
            continue;
        }
        at += (size_t)snprintf(buf + at, size - at, "%s%s%s", tc ? "" : drift_list_sep(item++, nitem),
            drift_list_sep(tc, ntc), drift_layer_confs[c].shown);
        if (++tc == ntc && at < size) at += (size_t)snprintf(buf + at, size - at, " (H100 tensor-core model)");
    }
}
