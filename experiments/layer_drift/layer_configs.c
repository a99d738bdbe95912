/* layer_configs.c — layer_drift's configurations (layer_configs.h). */
#include "layer_configs.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output.h"

int drift_layer_configs_pick(int *use, const char *list)
{
    static const char *const CONF_NAMES[DRIFT_NCONFS + 1] = {"fp32", "bf16", "fp16", "layercast", "all"};
    char buf[256], *save = NULL;
    int nuse = 0;
    if (strlen(list) >= sizeof buf) drift_die("--configs: too long (accepted: fp32, bf16, fp16, layercast, all)");
    strcpy(buf, list);
    for (int k = 0; k < DRIFT_NCONFS; k++) use[k] = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int c = drift_name_pick("--configs", t, CONF_NAMES, DRIFT_NCONFS + 1);
        if (c == DRIFT_NCONFS && strcmp(list, "all"))
            drift_die("--configs: 'all' stands alone (accepted: all, or names from fp32, bf16, fp16, layercast)");
        for (int k = 0; k < DRIFT_NCONFS; k++) use[k] |= c == DRIFT_NCONFS || c == k;
    }
    for (int k = 0; k < DRIFT_NCONFS; k++) nuse += use[k];
    return nuse;
}

void drift_layer_configs_phrase(char *buf, size_t size, const int *use)
{
    int nitem = 0, ntc = 0, item = 0, tc = 0;
    for (int c = 0; c < DRIFT_NCONFS; c++)
        if (use[c]) drift_model_configs[c].tc ? ntc++ : nitem++;
    nitem += ntc > 0;
    size_t at = 0;
    buf[0] = 0;
    for (int c = 0; c < DRIFT_NCONFS && at < size; c++) {
        if (!use[c]) continue;
        if (!drift_model_configs[c].tc) {
            at += (size_t)snprintf(
                buf + at, size - at, "%s%s", drift_list_sep(item++, nitem), drift_model_configs[c].shown);
            continue;
        }
        at += (size_t)snprintf(buf + at, size - at, "%s%s%s", tc ? "" : drift_list_sep(item++, nitem),
            drift_list_sep(tc, ntc), drift_model_configs[c].shown);
        if (++tc == ntc && at < size) at += (size_t)snprintf(buf + at, size - at, " (H100 tensor-core model)");
    }
}
