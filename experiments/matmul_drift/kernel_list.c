/* kernel_list.c — GEMM kernel lists (kernel_list.h). */
#include "kernel_list.h"
#include "drift.h"

#include <stdio.h>
#include <string.h>

#define ACCEPTED "naive, tiled:BM,BN,BK, splitk:S, splitk:S:tree, tc:v100|a100|h100|b200"

int drift_kernel_list_parse(drift_gemm_kernel_t *k, char names[][DRIFT_GEMM_KERNEL_SPEC_MAX], int max, const char *list,
    char *err, size_t errsz)
{
    int n = 0;
    const char *p = list;
    if (!*p) return snprintf(err, errsz, "empty list (accepted: %s)", ACCEPTED), DRIFT_EINVAL;
    while (*p) {
        const char *end = p;
        int commas = strncmp(p, "tiled:", 6) == 0 ? 3 : 1; /* tiled specs hold two commas */
        for (int c = 0; c < commas; c++) {
            end = strchr(end, ',');
            if (!end) break;
            if (c + 1 < commas) end++;
        }
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[DRIFT_GEMM_KERNEL_SPEC_MAX];
        if (len == 0 || len >= sizeof item) return snprintf(err, errsz, "malformed list '%s'", list), DRIFT_EINVAL;
        memcpy(item, p, len);
        item[len] = 0;
        if (n == max) return snprintf(err, errsz, "more than %d kernels", max), DRIFT_EINVAL;
        if (drift_gemm_kernel_parse(&k[n], item) != DRIFT_OK)
            return snprintf(err, errsz, "malformed kernel spec '%s' (accepted: %s)", item, ACCEPTED), DRIFT_EINVAL;
        drift_gemm_kernel_print(names[n], DRIFT_GEMM_KERNEL_SPEC_MAX, &k[n]);
        for (int m = 0; m < n; m++)
            if (drift_gemm_kernel_equal(&k[m], &k[n]))
                return snprintf(err, errsz, "'%s' given twice", item), DRIFT_EINVAL;
        n++;
        if (!end) break;
        p = end + 1;
        if (!*p) return snprintf(err, errsz, "empty item in list '%s'", list), DRIFT_EINVAL;
    }
    return n;
}
