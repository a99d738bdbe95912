/* decode.c — greedy and sampled decoding of one request, alone or inside a continuously
 * batched set of random companions (model.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "metrics.h"
#include "model.h"
#include "philox.h"

void drift_gen_free(drift_gen_t *g)
{
    if (!g) return;
    free(g->token), free(g->top2), free(g->top1_logit), free(g->top2_logit), free(g->logits), free(g->rows);
    memset(g, 0, sizeof *g);
}

/* One batch slot: a sequence with the tokens it feeds next. */
typedef struct {
    int pos;   /* tokens already in its cache */
    int *feed; /* tokens to feed this step */
    int nfeed;
    int left; /* companions: tokens still to generate */
    int last; /* the token generated last */
} slot_t;

static void new_companion(slot_t *s, drift_stream_t *st, const drift_batching_t *bt, int V, int cap)
{
    int maxp = bt->max_prompt > 0 ? bt->max_prompt : 32, maxg = bt->max_gen > 0 ? bt->max_gen : 64;
    if (maxp > cap / 2) maxp = cap / 2 > 0 ? cap / 2 : 1;
    s->pos = 0;
    s->nfeed = 1 + (int)drift_stream_below(st, (uint32_t)maxp);
    for (int i = 0; i < s->nfeed; i++) s->feed[i] = (int)drift_stream_below(st, (uint32_t)V);
    s->left = 1 + (int)drift_stream_below(st, (uint32_t)maxg);
}

int drift_batch_rows(int *rows, int nsteps, int nprompt, const drift_batching_t *bt, int vocab, int seq_len)
{
    int B = bt ? bt->batch : 1;
    if (!rows || nsteps < 0 || nprompt < 1 || B < 1 || vocab < 1 || seq_len < 2) return DRIFT_EINVAL;
    slot_t *sl = calloc((size_t)B, sizeof *sl);
    int *feedbuf = malloc((size_t)B * (size_t)seq_len * sizeof(int));
    if (!sl || !feedbuf) {
        free(sl), free(feedbuf);
        return DRIFT_ENOMEM;
    }
    drift_stream_t cst;
    drift_stream_init(&cst, bt ? bt->seed : 0, drift_fnv1a32("model.companions"), 0, 0);
    for (int b = 0; b < B; b++) sl[b].feed = feedbuf + (size_t)b * (size_t)seq_len;
    for (int b = 1; b < B; b++) new_companion(&sl[b], &cst, bt, vocab, seq_len);
    int n0 = nprompt;
    for (int step = 0; step < nsteps; step++) {
        int M = n0;
        for (int b = 1; b < B; b++) M += sl[b].nfeed;
        rows[step] = M;
        n0 = 1;
        for (int b = 1; b < B; b++) {
            sl[b].pos += sl[b].nfeed;
            sl[b].nfeed = 1;
            if (--sl[b].left <= 0 || sl[b].pos + 1 >= seq_len) new_companion(&sl[b], &cst, bt, vocab, seq_len);
        }
    }
    free(sl), free(feedbuf);
    return 0;
}

int drift_generate(drift_gen_t *out, drift_model_t *m, const int *prompt, int nprompt, int ntokens, int stop_at_bos,
    const drift_sampler_t *smp, const drift_batching_t *bt, int keep_logits)
{
    if (!out || !m || !prompt || nprompt < 1 || ntokens < 0) return DRIFT_EINVAL;
    memset(out, 0, sizeof *out);
    const drift_llm_config_t *c = drift_model_config(m);
    int V = c->vocab_size, cap = c->seq_len, B = bt ? bt->batch : 1;
    if (B < 1 || nprompt > cap) return DRIFT_EINVAL;
    const drift_sampler_t greedy = drift_sampler_default(DRIFT_SAMPLER_GREEDY);
    if (!smp) smp = &greedy;
    if (drift_sampler_validate(smp, NULL) || (smp->kind != DRIFT_SAMPLER_GREEDY && smp->kind != DRIFT_SAMPLER_SORTED))
        return DRIFT_EINVAL;
    /* positions used: nprompt + ntokens - 1 (the last token is not fed) */
    if (ntokens > cap - nprompt + 1) ntokens = cap - nprompt + 1;
    int rc = DRIFT_ENOMEM;
    size_t n1 = (size_t)ntokens + 1;
    out->token = malloc(n1 * sizeof(int));
    out->top2 = malloc(n1 * sizeof(int));
    out->top1_logit = malloc(n1 * sizeof(double));
    out->top2_logit = malloc(n1 * sizeof(double));
    out->rows = malloc(n1 * sizeof(int));
    out->logits = keep_logits ? malloc(n1 * (size_t)V * sizeof(double)) : NULL;
    slot_t *sl = calloc((size_t)B, sizeof *sl);
    drift_seq_step_t *seqs = malloc((size_t)B * sizeof *seqs);
    double *lg = malloc((size_t)B * (size_t)V * sizeof(double));
    int *feedbuf = malloc((size_t)B * (size_t)cap * sizeof(int));
    if (!out->token || !out->top2 || !out->top1_logit || !out->top2_logit || !out->rows ||
        (keep_logits && !out->logits) || !sl || !seqs || !lg || !feedbuf)
        goto done;
    drift_stream_t cst, sst;
    drift_stream_init(&cst, bt ? bt->seed : 0, drift_fnv1a32("model.companions"), 0, 0);
    drift_stream_init(&sst, smp->seed, drift_fnv1a32("model.sample"), 0, 0);
    for (int b = 0; b < B; b++) sl[b].feed = feedbuf + (size_t)b * (size_t)cap;
    memcpy(sl[0].feed, prompt, (size_t)nprompt * sizeof(int));
    sl[0].nfeed = nprompt;
    for (int b = 1; b < B; b++) new_companion(&sl[b], &cst, bt, V, cap);
    rc = 0;
    for (int step = 0; step < ntokens; step++) {
        int M = 0;
        for (int b = 0; b < B; b++) {
            seqs[b] = (drift_seq_step_t){b, sl[b].pos, sl[b].nfeed, sl[b].feed};
            M += sl[b].nfeed;
        }
        out->rows[step] = M;
        if ((rc = drift_model_step(m, lg, seqs, B))) break;
        for (int b = 0; b < B; b++) sl[b].pos += sl[b].nfeed;
        drift_top2_t tt;
        drift_top2(&tt, lg, (size_t)V);
        int t1 = (int)tt.top1, t2 = (int)tt.top2;
        double u = drift_stream_uniform(&sst);
        int tok = drift_sample(lg, V, smp, u);
        if (tok < 0) {
            rc = tok;
            break;
        }
        if (stop_at_bos && tok == 1) break;
        out->token[out->n] = tok, out->top2[out->n] = t2;
        out->top1_logit[out->n] = lg[t1], out->top2_logit[out->n] = lg[t2];
        if (keep_logits) memcpy(out->logits + (size_t)out->n * (size_t)V, lg, (size_t)V * sizeof(double));
        out->n++;
        sl[0].feed[0] = tok, sl[0].nfeed = 1;
        for (int b = 1; b < B; b++) {
            drift_top2(&tt, lg + (size_t)b * (size_t)V, (size_t)V);
            sl[b].feed[0] = (int)tt.top1, sl[b].nfeed = 1;
            if (--sl[b].left <= 0 || sl[b].pos + 1 >= cap) new_companion(&sl[b], &cst, bt, V, cap);
        }
    }
done:
    free(sl), free(seqs), free(lg), free(feedbuf);
    if (rc) drift_gen_free(out);
    return rc;
}
