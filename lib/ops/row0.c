/* row0.c — row 0 under each distinct kernel (row0.h). */
#include "row0.h"
#include "drift.h"
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int drift_row0_of(drift_row0_cache_t *c, const drift_gemm_kernel_t *k, const double *a0, const double *B, size_t N,
    size_t K, const drift_gemm_opts_t *opts)
{
    for (int t = 0; t < c->n; t++)
        if (drift_gemm_kernel_equal(&c->kern[t], k)) return t;
    if (c->n == 64) return DRIFT_ENOMEM;
    double *row = malloc(N * sizeof *row);
    if (!row) return DRIFT_ENOMEM;
    int rc = drift_gemm(row, a0, B, 1, N, K, k, opts);
    if (rc) {
        free(row);
        return rc;
    }
    c->kern[c->n] = *k;
    c->row[c->n] = row;
    c->N = N;
    return c->n++;
}

void drift_row0_free(drift_row0_cache_t *c)
{
    for (int t = 0; t < c->n; t++) free(c->row[t]);
    c->n = 0;
}

void drift_row_diff(long *n_diff, double *max_diff, const double *a, const double *b, size_t n)
{
    *n_diff = 0, *max_diff = 0;
    for (size_t j = 0; j < n; j++)
        if (memcmp(&a[j], &b[j], sizeof a[j]) != 0) {
            ++*n_diff;
            double d = drift_abs_err(a[j], b[j]);
            if (d > *max_diff || isnan(d)) *max_diff = d;
        }
}
