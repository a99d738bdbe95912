/* pair_stats.c — pairwise comparison bookkeeping (pair_stats.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "pair_stats.h"
#include "stats.h"

int drift_rate_text(char *buf, size_t size, long k, long n)
{
    if (n <= 0) return snprintf(buf, size, "%ld/%ld", k, n);
    double lo, hi;
    if (drift_wilson(&lo, &hi, k, n, DRIFT_Z95)) return snprintf(buf, size, "%ld/%ld", k, n); /* k outside 0..n */
    return snprintf(
        buf, size, "%ld/%ld = %.3g%% [%.3g%%, %.3g%%]", k, n, 100.0 * (double)k / (double)n, 100 * lo, 100 * hi);
}

int drift_counts_text(char *buf, size_t size, const drift_count_t *c, int count, size_t stride, drift_count_t *all)
{
    size_t l = 0;
    drift_count_t s = {0, 0};
    if (size) buf[0] = 0;
    for (int i = 0; i < count; i++) {
        const drift_count_t *x = c + (size_t)i * stride;
        if (l < size) l += (size_t)snprintf(buf + l, size - l, "%s%ld/%ld", i ? ", " : "", x->k, x->n);
        s.n += x->n, s.k += x->k;
    }
    if (all) *all = s;
    return (int)l;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

int drift_distance_summary(drift_distance_summary_t *s, int64_t *u, double *d, size_t n)
{
    if (!s || !u || n < 1) return DRIFT_EINVAL;
    qsort(u, n, sizeof *u, cmp_i64);
    if (d) qsort(d, n, sizeof *d, drift_cmp_double);
    s->n = n, s->same = 0;
    while (s->same < n && u[s->same] == 0) s->same++;
    s->median = u[n / 2], s->p99 = u[n - 1 - n / 100], s->max = u[n - 1];
    s->d_p99 = d ? d[n - 1 - n / 100] : NAN, s->d_max = d ? d[n - 1] : NAN;
    return 0;
}

int drift_distance_summary_of(drift_distance_summary_t *s, const int64_t *u, const double *d, size_t n)
{
    if (!s || !u || n < 1) return DRIFT_EINVAL;
    int64_t *uc = malloc(n * sizeof *uc);
    double *dc = d ? malloc(n * sizeof *dc) : NULL;
    int rc = uc && (!d || dc) ? 0 : DRIFT_ENOMEM;
    if (!rc) {
        memcpy(uc, u, n * sizeof *uc);
        if (d) memcpy(dc, d, n * sizeof *dc);
        rc = drift_distance_summary(s, uc, dc, n);
    }
    free(uc), free(dc);
    return rc;
}
