/* texts.c — the texts real_gaps scores, and their scores by the exact model and by each
 * configuration (real_gaps_lab.h). */
#include <omp.h>
#include <stdlib.h>

#include "chat_prompts.h"
#include "metrics.h"
#include "parting.h"
#include "philox.h"
#include "real_gaps_lab.h"

static drift_model_t *model(const drift_checkpoint_t *ck, const drift_numerics_t *nx)
{
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    if (drift_model_create(&m, ck, nx, 1, err, sizeof err)) drift_die("model: %s", err);
    return m;
}

/* A GGUF model's prompts: R of the prompt set, drawn without replacement by the seed, as written
 * (no chat template). */
static void gguf_prompts(
    drift_rg_text_t *tx, int R, int T, const drift_checkpoint_t *ck, const char *path, uint64_t seed)
{
    char err[DRIFT_LLM_ERR_MAX];
    drift_chat_prompt_t *pr;
    if (T >= ck->cfg.seq_len) drift_die("--tokens: at most %d on this checkpoint", ck->cfg.seq_len - 1);
    if (drift_prompts_load(&pr, ck, path, R, seed, "real_gaps.prompts", ck->cfg.seq_len - T, 0, err, sizeof err))
        drift_die("--prompts: %s", err);
    for (int s = 0; s < R; s++) {
        if (!(tx[s].tok = realloc(pr[s].tok, (size_t)(pr[s].n + T) * sizeof(int))))
            drift_die_oom((double)(pr[s].n + T) * sizeof(int), "a text of %d tokens", pr[s].n + T);
        pr[s].tok = NULL, tx[s].from = pr[s].n - 1, tx[s].n = pr[s].n + T;
    }
    drift_chat_prompts_free(pr, R);
}

void drift_rg_texts(drift_rg_text_t *tx, int R, int T, const drift_checkpoint_t *ck, const char *path, uint64_t seed)
{
    if (ck->gguf) {
        gguf_prompts(tx, R, T, ck, path, seed);
        return;
    }
    const size_t V = (size_t)ck->cfg.vocab_size;
    if (T + 2 > ck->cfg.seq_len) drift_die("--tokens: at most %d on this checkpoint", ck->cfg.seq_len - 2);
    for (int s = 0; s < R; s++) { /* BOS, the first token, T generated: every position scored */
        if (!(tx[s].tok = malloc((size_t)(T + 2) * sizeof(int))))
            drift_die_oom((double)(T + 2) * sizeof(int), "a text of %d tokens (--tokens: fewer)", T + 2);
        drift_stream_t st;
        drift_stream_init(&st, seed, drift_fnv1a32("real_gaps.first"), (uint32_t)s, 0);
        tx[s].tok[0] = 1, tx[s].tok[1] = 3 + (int)drift_stream_below(&st, (uint32_t)V - 3); /* not <unk>, BOS or EOS */
        tx[s].from = 0, tx[s].n = T + 2;
    }
}

void drift_rg_greedy(drift_rg_text_t *tx, int R, const drift_checkpoint_t *ck)
{
    drift_numerics_t nx = drift_numerics_fp32();
    drift_model_t *m = model(ck, &nx);
    drift_prefix_logits_t pl; /* one token per step, alone in slot 0 */
    if (drift_prefix_logits_init(&pl, m))
        drift_die_oom((double)ck->cfg.seq_len * ck->cfg.vocab_size * sizeof(double), "a context of logits");
    for (int s = 0; s < R; s++) /* each step whose choice is kept: after the prompt (or the first token) */
        for (int p = ck->gguf ? tx[s].from : 1; p < tx[s].n - 1; p++) {
            const double *lg;
            drift_top2_t tt;
            if (drift_prefix_logits(&lg, &pl, tx[s].tok, p + 1)) drift_die("forward step failed");
            drift_top2(&tt, lg, (size_t)ck->cfg.vocab_size);
            tx[s].tok[p + 1] = (int)tt.top1;
        }
    drift_prefix_logits_free(&pl);
    drift_model_free(m);
}

/* ids of position's sampled logits into idx: the exact top DRIFT_RG_ES (the top one first),
 * then the DRIFT_RG_STRIDE-th ids not among them; returns their count */
static int errlaw_ids(int *idx, const double *ex, int V)
{
    int n = 0;
    for (int v = 0; v < V; v++) { /* the top ES in order, kept sorted; the first id wins ties */
        if (n == DRIFT_RG_ES && !(ex[v] > ex[idx[n - 1]])) continue;
        int j = n < DRIFT_RG_ES ? n++ : n - 1;
        while (j > 0 && ex[v] > ex[idx[j - 1]]) idx[j] = idx[j - 1], j--;
        idx[j] = v;
    }
    const int top = n;
    for (int v = 0; v < V; v += DRIFT_RG_STRIDE) {
        int taken = 0;
        for (int j = 0; j < top && !taken; j++) taken = idx[j] == v;
        if (!taken) idx[n++] = v;
    }
    return n;
}

void drift_rg_score(drift_rg_scores_t *S, drift_out_t *out, drift_cli_t *cli, const drift_checkpoint_t *ck,
    const drift_rg_text_t *tx, int R, const drift_numerics_t *nxc, int nconf)
{
    const size_t V = (size_t)ck->cfg.vocab_size;
    size_t NP = 0;
    int nmax = 0;
    for (int s = 0; s < R; s++) NP += (size_t)(tx[s].n - tx[s].from), nmax = tx[s].n > nmax ? tx[s].n : nmax;
    const size_t KSMAX = DRIFT_RG_ES + V / DRIFT_RG_STRIDE + 1; /* sampled logits per position, at most */
    S->NP = NP;
    double *ex = malloc((size_t)nmax * V * sizeof(double));
    double *gap = S->gap = malloc(NP * sizeof(double)), *top = S->top = malloc(NP * sizeof(double));
    int *t1 = S->t1 = malloc(NP * sizeof(int)), *t2 = S->t2 = malloc(NP * sizeof(int));
    double *egap = S->egap = malloc((size_t)nconf * NP * sizeof(double));
    unsigned char *flip = S->flip = malloc((size_t)nconf * NP);
    size_t *off = S->off = malloc((NP + 1) * sizeof(size_t));
    int *sidx = S->sidx = malloc(NP * KSMAX * sizeof(int)), *stext = S->stext = malloc(NP * KSMAX * sizeof(int));
    double *sval = S->sval = malloc(NP * KSMAX * sizeof(double)),
           *serr = S->serr = malloc((size_t)nconf * NP * KSMAX * sizeof(double));
    if (!ex || !gap || !top || !t1 || !t2 || !egap || !flip || !off || !sidx || !stext || !sval || !serr)
        drift_die_oom(8.0 * (double)nmax * V + (double)NP * (4 * sizeof(double) + nconf * (sizeof(double) + 1)) +
                          (double)NP * (double)KSMAX * (2 * sizeof(int) + (1.0 + nconf) * sizeof(double)),
            "a %zu x %zu logit table, the %zu positions' gaps and their %zu sampled logits (--tokens, --sequences: fewer)",
            (size_t)nmax, V, NP, KSMAX);
    /* exact scores, then each configuration's, text by text (one model each) */
    drift_numerics_t nxe = drift_numerics_exact();
    drift_model_t *m = model(ck, &nxe);
    off[0] = 0;
    for (int s = 0, i = 0; s < R; s++) {
        drift_progress(cli, (size_t)s, (size_t)R * (nconf + 1));
        const int *tk = tx[s].tok;
        if (drift_model_score(m, ex, tk, tx[s].n)) drift_die("forward pass failed");
        for (int p = tx[s].from; p < tx[s].n; p++, i++) {
            const double *l = ex + (size_t)p * V;
            drift_top2_t tt;
            drift_top2(&tt, l, V);
            t1[i] = (int)tt.top1, t2[i] = (int)tt.top2;
            top[i] = l[tt.top1];
            gap[i] = top[i] - l[tt.top2];
            off[i + 1] = off[i] + (size_t)errlaw_ids(sidx + off[i], l, (int)V);
            for (size_t k = off[i]; k < off[i + 1]; k++) sval[k] = l[sidx[k]], stext[k] = s;
            drift_row(out, T_GAPS, DRIFT_INT(s), DRIFT_INT(p), DRIFT_INT(p + 1 < tx[s].n ? tk[p + 1] : -1),
                DRIFT_INT(t1[i]), DRIFT_INT(t2[i]), DRIFT_NUM(gap[i]));
        }
    }
    drift_model_free(m);
    free(ex);
    const size_t NE = S->NE = off[NP];
    /* The configurations are independent: side by side on the cores (--threads), each with its
     * own model and one thread inside (the data do not depend on the thread count). */
    int workers = cli->threads > 0 ? cli->threads : omp_get_num_procs();
    if (workers > nconf) workers = nconf;
    int failed = 0;
#pragma omp parallel for num_threads(workers) schedule(dynamic, 1) reduction(| : failed)
    for (int c = 0; c < nconf; c++) {
        double *lc = malloc((size_t)nmax * V * sizeof(double)), *e = serr + (size_t)c * NE;
        drift_model_t *mc = lc ? model(ck, &nxc[c]) : NULL;
        for (int s = 0, i = 0; mc && s < R && !failed; s++) {
            if (omp_get_thread_num() == 0)
                drift_progress(cli, (size_t)R * (size_t)(c + 1) + (size_t)s, (size_t)R * (nconf + 1));
            if (drift_model_score(mc, lc, tx[s].tok, tx[s].n)) failed = 1;
            for (int p = tx[s].from; p < tx[s].n && !failed; p++, i++) {
                const double *l = lc + (size_t)p * V;
                drift_top2_t tt;
                drift_top2(&tt, l, V);
                egap[(size_t)c * NP + (size_t)i] = (l[t1[i]] - l[t2[i]]) - gap[i];
                for (size_t k = off[i]; k < off[i + 1]; k++) e[k] = l[sidx[k]] - sval[k];
                flip[(size_t)c * NP + (size_t)i] = (int)tt.top1 != t1[i];
            }
        }
        failed |= !mc;
        drift_model_free(mc);
        free(lc);
    }
    if (failed) drift_die("forward pass failed (or out of memory for a configuration's model)");
}

void drift_rg_scores_free(drift_rg_scores_t *S)
{
    free(S->gap), free(S->top), free(S->t1), free(S->t2), free(S->egap), free(S->flip), free(S->off), free(S->sidx),
        free(S->stext), free(S->sval), free(S->serr);
}
