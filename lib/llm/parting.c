/* parting.c — where two greedy completions part, against the exact reference (parting.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "metrics.h"
#include "model.h"
#include "parting.h"
#include "stats.h"

int drift_prefix_logits_init(drift_prefix_logits_t *p, drift_model_t *m)
{
    if (!p || !m) return DRIFT_EINVAL;
    memset(p, 0, sizeof *p);
    const drift_llm_config_t *c = drift_model_config(m);
    p->m = m, p->V = c->vocab_size, p->cap = c->seq_len;
    p->seq = malloc((size_t)p->cap * sizeof *p->seq);
    p->logits = malloc((size_t)p->cap * (size_t)p->V * sizeof *p->logits);
    if (!p->seq || !p->logits) {
        drift_prefix_logits_free(p);
        return DRIFT_ENOMEM;
    }
    return 0;
}

void drift_prefix_logits_free(drift_prefix_logits_t *p)
{
    if (!p) return;
    free(p->seq), free(p->logits);
    p->seq = NULL, p->logits = NULL, p->len = 0;
}

int drift_prefix_logits(const double **out, drift_prefix_logits_t *p, const int *seq, int n)
{
    if (!out || !p || !p->seq || !seq || n < 1 || n > p->cap) return DRIFT_EINVAL;
    for (int k = 0; k < n; k++)
        if (seq[k] < 0 || seq[k] >= p->V) return DRIFT_EINVAL;
    int same = 0;
    while (same < p->len && same < n && p->seq[same] == seq[same]) same++;
    for (int k = same; k < n; k++) {
        p->seq[k] = seq[k];
        p->len = k; /* rows up to k-1 stay valid if this step fails */
        drift_seq_step_t st = {0, k, 1, &p->seq[k]};
        int rc = drift_model_step(p->m, p->logits + (size_t)k * (size_t)p->V, &st, 1);
        if (rc) return rc;
        p->steps++;
    }
    if (n > p->len) p->len = n;
    *out = p->logits + (size_t)(n - 1) * (size_t)p->V;
    return 0;
}

int drift_first_difference(const int *x, const int *y, int n)
{
    for (int i = 0; i < n; i++)
        if (x[i] != y[i]) return i;
    return -1;
}

int drift_parting(drift_parting_t *out, const int *tok_a, const double *la, const int *tok_b, const double *lb, int n,
    int V, const int *prompt, int np, drift_prefix_logits_t *exact)
{
    if (!out || !tok_a || !tok_b || n < 0 || V < 1 || !prompt || np < 1 || (exact && exact->V != V))
        return DRIFT_EINVAL;
    *out = (drift_parting_t){-1, -1, -1, NAN, NAN, NAN, NAN, -1};
    int t = drift_first_difference(tok_a, tok_b, n);
    if (t < 0) return 0;
    out->step = t, out->tok_a = tok_a[t], out->tok_b = tok_b[t];
    if (la && lb) {
        double s = 0;
        for (size_t v = (size_t)t * (size_t)V; v < (size_t)(t + 1) * (size_t)V; v++) s = fmax(s, fabs(la[v] - lb[v]));
        out->spread = s;
    }
    if (!exact) return 0;
    int *ctx = malloc((size_t)(np + t) * sizeof *ctx);
    if (!ctx) return DRIFT_ENOMEM;
    memcpy(ctx, prompt, (size_t)np * sizeof *ctx);
    memcpy(ctx + np, tok_a, (size_t)t * sizeof *ctx);
    const double *E;
    int rc = drift_prefix_logits(&E, exact, ctx, np + t);
    free(ctx);
    if (rc) return rc;
    drift_top2_t tt;
    drift_top2(&tt, E, (size_t)V);
    out->gap_ab = E[out->tok_a] - E[out->tok_b];
    out->gap12 = E[tt.top1] - E[tt.top2];
    out->exact_top1 = (int)tt.top1;
    if (la && lb) {
        double d = 0;
        const double *xa = la + (size_t)t * (size_t)V, *xb = lb + (size_t)t * (size_t)V;
        for (int v = 0; v < V; v++) d = fmax(d, fmax(fabs(xa[v] - E[v]), fabs(xb[v] - E[v])));
        out->dev = d;
    }
    return 0;
}

int drift_parting_summary(drift_parting_summary_t *s, const drift_parting_t *const *p, size_t n)
{
    if (!s || (n && !p)) return DRIFT_EINVAL;
    *s = (drift_parting_summary_t){0, 0, 0, -1, -1, NAN, NAN, NAN, NAN, NAN};
    double *x = malloc((4 * n + 1) * sizeof *x);
    if (!x) return DRIFT_ENOMEM;
    double *step = x, *g12 = x + n, *spr = x + 2 * n, *dev = x + 3 * n;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const drift_parting_t *q = p[i];
        if (q->step < 0) continue;
        step[m] = q->step, g12[m] = q->gap12, spr[m] = q->spread, dev[m] = q->dev;
        if (!m || q->step < s->step_min) s->step_min = q->step;
        if (!m || q->step > s->step_max) s->step_max = q->step;
        s->gap12_max = m ? fmax(s->gap12_max, q->gap12) : q->gap12;
        s->within += fabs(q->gap_ab) <= 2 * q->dev;
        s->exact_among += q->exact_top1 == q->tok_a || q->exact_top1 == q->tok_b;
        m++;
    }
    s->n = m;
    int rc = 0;
    if (m) {
        rc = drift_median(&s->step_median, step, m);
        if (!rc) rc = drift_median(&s->gap12_median, g12, m);
        if (!rc) rc = drift_median(&s->spread_median, spr, m);
        if (!rc) rc = drift_median(&s->dev_median, dev, m);
    }
    free(x);
    return rc;
}
