/* dot_cond.c — the condition number of a row of dot products (dot_cond.h). */
#include "dot_cond.h"
#include "drift.h"
#include "exact.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>

int drift_dot_cond_median(
    double *med, const double *a, const double *B, size_t K, size_t N, drift_format_t in, const double *exact)
{
    if (!med || in == DRIFT_FP64) return DRIFT_EINVAL;
    double *cond = malloc((N ? N : 1) * sizeof *cond), *ar = malloc((K ? K : 1) * sizeof *ar);
    double *br = malloc((K ? K : 1) * sizeof *br);
    int rc = cond && ar && br ? DRIFT_OK : DRIFT_ENOMEM;
    for (size_t k = 0; !rc && k < K; k++) ar[k] = drift_rne(a[k], in);
    for (size_t j = 0; !rc && j < N; j++) {
        for (size_t k = 0; k < K; k++) br[k] = drift_rne(B[k * N + j], in);
        double dot, sa;
        if (exact)
            dot = exact[j];
        else if ((rc = drift_exact_dot(&dot, ar, br, K, DRIFT_FP64, DRIFT_RNE)))
            break;
        for (size_t k = 0; k < K; k++) br[k] = fabs(ar[k] * br[k]); /* exact: narrow products */
        if ((rc = drift_exact_sum(&sa, br, K, DRIFT_FP64, DRIFT_RNE))) break;
        cond[j] = sa / fabs(dot);
    }
    if (!rc) rc = drift_median(med, cond, N);
    free(cond), free(ar), free(br);
    return rc;
}
