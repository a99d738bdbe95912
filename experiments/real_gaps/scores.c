/* scores.c — the texts scored teacher-forced by the exact model and by each configuration
 * (real_gaps_lab.h). */
#include <omp.h>
#include <stdlib.h>

#include "metrics.h"
#include "real_gaps_lab.h"

static drift_model_t *model(const drift_checkpoint_t *ck, const drift_numerics_t *nx)
{
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    if (drift_model_create(&m, ck, nx, 1, err, sizeof err)) drift_die("model: %s", err);
    return m;
}

/* ids of position's KS logits into idx: the exact top DRIFT_RG_ES (the top one first), then the
 * DRIFT_RG_STRIDE-th ids not among them; returns their count */
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
    const int KSMAX = DRIFT_RG_ES + (int)(V / DRIFT_RG_STRIDE) + 1;
    S->NP = NP, S->KSMAX = KSMAX;
    double *ex = malloc((size_t)nmax * V * sizeof(double));
    double *gap = S->gap = malloc(NP * sizeof(double)), *top = S->top = malloc(NP * sizeof(double));
    int *t1 = S->t1 = malloc(NP * sizeof(int)), *t2 = S->t2 = malloc(NP * sizeof(int));
    double *egap = S->egap = malloc((size_t)nconf * NP * sizeof(double));
    unsigned char *flip = S->flip = malloc((size_t)nconf * NP);
    int *sidx = S->sidx = malloc(NP * (size_t)KSMAX * sizeof(int)), *ks = S->ks = malloc(NP * sizeof(int)),
        *stext = S->stext = malloc(NP * sizeof(int));
    double *sval = S->sval = malloc(NP * (size_t)KSMAX * sizeof(double)),
           *serr = S->serr = malloc((size_t)nconf * NP * (size_t)KSMAX * sizeof(double));
    if (!ex || !gap || !top || !t1 || !t2 || !egap || !flip || !sidx || !ks || !stext || !sval || !serr)
        drift_die_oom(8.0 * (double)nmax * V +
                          (double)NP * (2 * sizeof(double) + 2 * sizeof(int) + nconf * (sizeof(double) + 1)) +
                          (double)NP * KSMAX * (sizeof(int) + (1.0 + nconf) * sizeof(double)),
            "a %zu x %zu logit table, the %zu positions' gaps and their %d sampled logits (--tokens, --sequences: fewer)",
            (size_t)nmax, V, (size_t)NP, KSMAX);
    /* exact scores, then each configuration's, text by text (one model each) */
    drift_numerics_t nxe = drift_numerics_exact();
    drift_model_t *m = model(ck, &nxe);
    for (int s = 0, i = 0; s < R; s++) {
        drift_progress(cli, (size_t)s, (size_t)R * (nconf + 1));
        const int *tk = tx[s].tok;
        if (drift_model_score(m, ex, tk, tx[s].n)) drift_die("forward pass failed");
        for (int p = tx[s].from; p < tx[s].n; p++, i++) {
            drift_top2_t tt;
            drift_top2(&tt, ex + (size_t)p * V, V);
            t1[i] = (int)tt.top1, t2[i] = (int)tt.top2;
            top[i] = ex[(size_t)p * V + tt.top1];
            gap[i] = top[i] - ex[(size_t)p * V + tt.top2];
            ks[i] = errlaw_ids(sidx + i * (size_t)KSMAX, ex + (size_t)p * V, (int)V), stext[i] = s;
            for (int k = 0; k < ks[i]; k++)
                sval[i * (size_t)KSMAX + k] = ex[(size_t)p * V + sidx[i * (size_t)KSMAX + k]];
            drift_row(out, T_GAPS, DRIFT_INT(s), DRIFT_INT(p), DRIFT_INT(p + 1 < tx[s].n ? tk[p + 1] : -1),
                DRIFT_INT(t1[i]), DRIFT_INT(t2[i]), DRIFT_NUM(gap[i]));
        }
    }
    drift_model_free(m);
    free(ex);
    /* The configurations are independent: side by side on the cores (--threads), each with its
     * own model and one thread inside (the data do not depend on the thread count). */
    int workers = cli->threads > 0 ? cli->threads : omp_get_num_procs();
    if (workers > nconf) workers = nconf;
    int failed = 0;
#pragma omp parallel for num_threads(workers) schedule(dynamic, 1) reduction(| : failed)
    for (int c = 0; c < nconf; c++) {
        double *lc = malloc((size_t)nmax * V * sizeof(double));
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
                double *e = serr + ((size_t)c * NP + (size_t)i) * (size_t)KSMAX;
                for (int k = 0; k < ks[i]; k++) e[k] = l[sidx[i * (size_t)KSMAX + k]] - sval[i * (size_t)KSMAX + k];
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
    free(S->gap), free(S->top), free(S->t1), free(S->t2), free(S->egap), free(S->flip), free(S->sidx), free(S->ks),
        free(S->stext), free(S->sval), free(S->serr);
}
