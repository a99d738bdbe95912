/* greedy_batch.c — n prompts decoded greedily side by side (greedy_batch.h). */
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "greedy_batch.h"
#include "metrics.h"

static int alloc_gen(drift_gen_t *g, int T, int V, int keep)
{
    size_t n1 = (size_t)T + 1;
    memset(g, 0, sizeof *g);
    g->token = malloc(n1 * sizeof(int)), g->top2 = malloc(n1 * sizeof(int));
    g->top1_logit = malloc(n1 * sizeof(double)), g->top2_logit = malloc(n1 * sizeof(double));
    g->rows = malloc(n1 * sizeof(int));
    g->logits = keep ? malloc(n1 * (size_t)V * sizeof(double)) : NULL;
    return g->token && g->top2 && g->top1_logit && g->top2_logit && g->rows && (!keep || g->logits) ? 0 : DRIFT_ENOMEM;
}

int drift_greedy_batch_var(
    drift_gen_t *out, drift_model_t *m, const int *const *prompts, const int *np, int n, int ntokens, int keep_logits)
{
    if (!out || !m || !prompts || !np || n < 1 || ntokens < 1) return DRIFT_EINVAL;
    const drift_llm_config_t *c = drift_model_config(m);
    const int V = c->vocab_size;
    int rows0 = 0;
    for (int i = 0; i < n; i++) {
        if (!prompts[i] || np[i] < 1 || np[i] + ntokens - 1 > c->seq_len) return DRIFT_EINVAL;
        for (int k = 0; k < np[i]; k++)
            if (prompts[i][k] < 0 || prompts[i][k] >= V) return DRIFT_EINVAL;
        rows0 += np[i];
    }
    int rc = 0;
    for (int i = 0; i < n; i++) rc |= alloc_gen(&out[i], ntokens, V, keep_logits);
    drift_seq_step_t *seq = malloc((size_t)n * sizeof *seq);
    int *feed = malloc((size_t)n * sizeof *feed);
    double *lg = malloc((size_t)n * (size_t)V * sizeof *lg);
    if (rc || !seq || !feed || !lg) rc = DRIFT_ENOMEM;
    for (int t = 0; !rc && t < ntokens; t++) {
        for (int i = 0; i < n; i++)
            seq[i] = t == 0 ? (drift_seq_step_t){i, 0, np[i], prompts[i]}
                            : (drift_seq_step_t){i, np[i] + t - 1, 1, &feed[i]};
        if ((rc = drift_model_step(m, lg, seq, n))) break;
        for (int i = 0; i < n; i++) {
            const double *l = lg + (size_t)i * (size_t)V;
            drift_top2_t tt;
            drift_top2(&tt, l, (size_t)V);
            drift_gen_t *g = &out[i];
            g->token[t] = feed[i] = (int)tt.top1, g->top2[t] = (int)tt.top2;
            g->top1_logit[t] = l[tt.top1], g->top2_logit[t] = l[tt.top2];
            g->rows[t] = t == 0 ? rows0 : n;
            if (keep_logits) memcpy(g->logits + (size_t)t * (size_t)V, l, (size_t)V * sizeof *l);
            g->n = t + 1;
        }
    }
    free(seq), free(feed), free(lg);
    if (rc)
        for (int i = 0; i < n; i++) drift_gen_free(&out[i]);
    return rc;
}

int drift_greedy_batch(
    drift_gen_t *out, drift_model_t *m, const int *prompts, int n, int np, int ntokens, int keep_logits)
{
    if (!out || !m || !prompts || n < 1 || np < 1 || ntokens < 1) return DRIFT_EINVAL;
    const int **pp = malloc((size_t)n * sizeof *pp);
    int *len = malloc((size_t)n * sizeof *len);
    int rc = pp && len ? 0 : DRIFT_ENOMEM;
    for (int i = 0; !rc && i < n; i++) pp[i] = prompts + (size_t)i * (size_t)np, len[i] = np;
    if (!rc) rc = drift_greedy_batch_var(out, m, pp, len, n, ntokens, keep_logits);
    free(pp), free(len);
    return rc;
}
