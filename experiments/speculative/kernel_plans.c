/* kernel_plans.c — the pass sizes that change a model's kernels (kernel_plans.h). */
#include "kernel_plans.h"

#include <string.h>

#include "cli.h"

int drift_plans_differ(int *dif, const drift_model_t *m, int kv_len, int Mmax)
{
    long p1[256], pm[256];
    int n1 = drift_model_plan(m, 1, 1, kv_len, p1, 256), first = -1;
    if (n1 < 0) drift_die("plan failed");
    for (int M = 2; M <= Mmax; M++) {
        int nm = drift_model_plan(m, (size_t)M, M, kv_len, pm, 256);
        if (nm < 0) drift_die("plan failed");
        dif[M] = nm != n1 || memcmp(p1, pm, (size_t)n1 * sizeof(long)) != 0;
        if (dif[M] && first < 0) first = M;
    }
    return first;
}
