/* cdf_sampler.c — the inverse-CDF sampler (cdf_sampler.h). */
#include "cdf_sampler.h"

#include <math.h>
#include <string.h>

const char *drift_cut_name(drift_cut_t c)
{
    static const char *const NAME[DRIFT_NCUTS] = {"full", "top-k", "top-p"};
    return c < DRIFT_NCUTS ? NAME[c] : "?";
}

/* i before j: larger logit first, then lower id */
static int before(const double *l, size_t i, size_t j) { return l[i] != l[j] ? l[i] > l[j] : i < j; }

/* merge sort of the ids in x[0..n) by `before`, with scratch t (qsort has no context argument) */
static void sort_ids(size_t *x, size_t *t, size_t n, const double *l)
{
    if (n < 2) return;
    size_t m = n / 2;
    sort_ids(x, t, m, l);
    sort_ids(x + m, t, n - m, l);
    size_t i = 0, j = m, k = 0;
    while (i < m && j < n) t[k++] = before(l, x[j], x[i]) ? x[j++] : x[i++];
    while (i < m) t[k++] = x[i++];
    while (j < n) t[k++] = x[j++];
    memcpy(x, t, n * sizeof *x);
}

size_t drift_cdf_argmax(const double *l, size_t V)
{
    size_t b = 0;
    for (size_t v = 1; v < V; v++)
        if (l[v] > l[b]) b = v;
    return b;
}

void drift_cdf_order(size_t *order, size_t *scratch, const double *l, size_t V)
{
    for (size_t v = 0; v < V; v++) order[v] = v;
    sort_ids(order, scratch, V, l);
}

double drift_cdf_weights(double *w, const double *l, const size_t *order, size_t V, double T, const drift_cdf_sampler_t *s)
{
    double lmax = l[order[0]];
    for (size_t v = 0; v < V; v++) w[v] = 0;
    size_t keep = V;
    if (s->cut == DRIFT_CUT_TOPK) keep = s->topk < V ? s->topk : V;
    double sum = 0;
    for (size_t q = 0; q < keep; q++) {
        size_t v = order[q];
        w[v] = exp((l[v] - lmax) / T);
        sum += w[v];
    }
    if (s->cut == DRIFT_CUT_TOPP) {
        /* the fewest largest tokens whose probability reaches p (in sorted order) */
        double run = 0;
        size_t q = 0;
        for (; q < V; q++) {
            run += w[order[q]];
            if (run >= s->topp * sum) break;
        }
        for (size_t r = q + 1; r < V; r++) w[order[r]] = 0;
        sum = 0;
        for (size_t r = 0; r <= q && r < V; r++) sum += w[order[r]];
    }
    return sum;
}

size_t drift_cdf_draw(const double *w, size_t V, double sum, double u)
{
    double t = u * sum, run = 0;
    size_t last = 0;
    for (size_t v = 0; v < V; v++) {
        if (w[v] == 0) continue;
        run += w[v];
        last = v;
        if (run > t) return v;
    }
    return last;
}
