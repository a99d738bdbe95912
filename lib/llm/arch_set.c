/* arch_set.c — the GPU generations an experiment compares (arch_set.h). */
#include <stdio.h>
#include <string.h>

#include "arch_set.h"
#include "dispatch.h"
#include "dispatch_order.h"
#include "drift.h"

static int tc_order(drift_order_t *o, const char *name)
{
    char spec[DRIFT_ORDER_SPEC_MAX];
    if (snprintf(spec, sizeof spec, "tc:%s", name) >= (int)sizeof spec) return DRIFT_EINVAL;
    if (drift_order_parse(o, spec) || !drift_order_tc_arch(NULL, o)) return DRIFT_EINVAL;
    return 0;
}

int drift_arch_set_parse(drift_tc_arch_t *arch, int *n, int max, const char *list, char *err, size_t errsz)
{
    char buf[256];
    if (!arch || !n || max < 2 || !list) return DRIFT_EINVAL;
    *n = 0;
    if (strlen(list) >= sizeof buf) {
        snprintf(err, errsz, "too long (at most %zu characters)", sizeof buf - 1);
        return DRIFT_EINVAL;
    }
    strcpy(buf, list);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        drift_order_t o;
        if (tc_order(&o, t)) {
            snprintf(err, errsz, "unknown architecture '%s' (accepted: %s)", t, DRIFT_ARCH_SET_ACCEPTED);
            return DRIFT_EINVAL;
        }
        if (*n == max) {
            snprintf(err, errsz, "at most %d", max);
            return DRIFT_EINVAL;
        }
        for (int i = 0; i < *n; i++)
            if (arch[i] == o.arch) {
                snprintf(err, errsz, "%s given twice", t);
                return DRIFT_EINVAL;
            }
        arch[(*n)++] = o.arch;
    }
    if (*n < 2) {
        snprintf(err, errsz, "give at least two architectures to compare");
        return DRIFT_EINVAL;
    }
    return 0;
}

int drift_arch_head_recipe(drift_recipe_t *r, drift_format_t in, drift_tc_arch_t arch)
{
    drift_order_t o = {0};
    if (!r || tc_order(&o, drift_tc_arch_name(arch))) return DRIFT_EINVAL;
    *r = drift_recipe(in, &o, DRIFT_FP32, DRIFT_FP32);
    return drift_recipe_check(r, NULL, 0) ? DRIFT_EUNSUPPORTED : 0;
}
