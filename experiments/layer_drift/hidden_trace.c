/* hidden_trace.c — the hidden states of one pass, sub-block by sub-block (hidden_trace.h). */
#include "hidden_trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int drift_hidden_trace_alloc(drift_hidden_trace_t *t, int L, size_t dim, size_t T)
{
    const size_t nd = (size_t)L * DRIFT_TRACE_BLOCKS + 1;
    *t = (drift_hidden_trace_t){L, dim, T, malloc(nd * T * dim * sizeof(double)), calloc(nd, sizeof(size_t))};
    if (t->h && t->count) return 0;
    drift_hidden_trace_free(t);
    return DRIFT_ENOMEM;
}

void drift_hidden_trace_free(drift_hidden_trace_t *t)
{
    free(t->h), free(t->count);
    t->h = NULL, t->count = NULL;
}

static void on_trace(void *ctx, int layer, drift_block_t block, const double *x, size_t M, size_t dim)
{
    drift_hidden_trace_t *t = ctx;
    size_t d = block == DRIFT_BLOCK_FINAL_NORM ? (size_t)t->L * DRIFT_TRACE_BLOCKS
                                               : (size_t)layer * DRIFT_TRACE_BLOCKS + (size_t)block;
    for (size_t i = 0; i < M && t->count[d] < t->T; i++, t->count[d]++)
        memcpy(t->h + (d * t->T + t->count[d]) * t->dim, x + i * dim, dim * sizeof(double));
}

void drift_hidden_trace_run(
    drift_hidden_trace_t *t, const drift_checkpoint_t *ck, const drift_numerics_t *nx, const int *tok)
{
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    if (drift_model_create(&m, ck, nx, 1, err, sizeof err)) drift_die("model: %s", err);
    memset(t->count, 0, ((size_t)t->L * DRIFT_TRACE_BLOCKS + 1) * sizeof(size_t));
    double *lg = malloc(t->T * (size_t)ck->cfg.vocab_size * sizeof(double));
    if (!lg)
        drift_die_oom((double)t->T * ck->cfg.vocab_size * sizeof(double),
            "the logits of %zu tokens x %d (--tokens: fewer)", (size_t)t->T, ck->cfg.vocab_size);
    drift_model_set_trace(m, on_trace, t);
    if (drift_model_score(m, lg, tok, (int)t->T)) drift_die("forward pass failed");
    drift_model_free(m);
    free(lg);
}

double drift_hidden_trace_err(double *max, const drift_hidden_trace_t *a, const drift_hidden_trace_t *b, size_t d)
{
    const size_t T = a->T, dim = a->dim;
    double sum = 0, mx = 0;
    for (size_t i = 0; i < T; i++) {
        const double *x = a->h + (d * T + i) * dim, *y = b->h + (d * T + i) * dim;
        double num = 0, den = 0;
        for (size_t j = 0; j < dim; j++) num += (x[j] - y[j]) * (x[j] - y[j]), den += y[j] * y[j];
        double e = den > 0 ? sqrt(num / den) : 0;
        sum += e, mx = fmax(mx, e);
    }
    *max = mx;
    return sum / (double)T;
}
