/* tie_breaker.c — llama.cpp's AVX2 and AVX-512 builds with the tie-breaker
 * sampler=greedy-ties:EPS (forecast_lab.h): the prompts each decodes again, and the partings
 * measured against those forecast. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "forecast.h"
#include "forecast_lab.h"
#include "pair_stats.h"
#include "parting.h"
#include "stats.h"

/* whether the llama.cpp pair is among the pairs chosen (its builds then decode every prompt) */
static int chosen_llama(const drift_fclab_t *L)
{
    for (int q = 0; q < L->npair; q++)
        if (!strcmp(L->pair[q]->id, "llamacpp-avx512")) return 1;
    return 0;
}

void drift_fc_tie_plain_prompts(drift_fclab_t *L)
{
    const int PT = L->PT, P = L->P, N = L->N, K = L->K;
    if (!L->ties.n || K >= L->S || chosen_llama(L)) return;
    if (!(L->tie_plain = malloc((size_t)PT))) drift_die("out of memory for the tie runs' prompts (%d)", PT);
    for (int i = 0; i < PT; i++) L->tie_plain[i] = (i % P) / N < K;
    L->runs[L->tie_a0].only = L->runs[L->tie_b0].only = L->tie_plain;
}

void drift_fc_tie_again(drift_fclab_t *L, int nplain)
{
    const int PT = L->PT, P = L->P, N = L->N, K = L->K;
    const drift_dbllist_t *ties = &L->ties;
    if (!(L->again = malloc((size_t)ties->n * 2 * (size_t)PT)) || !(L->tie_in = malloc((size_t)PT)))
        drift_die("out of memory for the tie runs' prompts (%d)", PT);
    for (int i = 0; i < PT; i++) L->tie_in[i] = (i % P) / N < K;
    for (int e = 0; e < ties->n; e++)
        for (int side = 0; side < 2; side++) {
            unsigned char *m = L->again + (size_t)(2 * e + side) * PT;
            for (int i = 0; i < PT; i++) {
                const drift_gen_t *g = &L->runs[side ? L->tie_b0 : L->tie_a0].g[i];
                L->again_n[e] += m[i] = L->tie_in[i] && drift_tie_rule_acts(g->top1_logit, g->top2_logit, g->token,
                                                            g->top2, g->n, ties->v[e]);
            }
            if ((side ? L->tie_b[e] : L->tie_a[e]) != nplain + 2 * e + side)
                drift_die("the tie runs are not the last runs");
            L->runs[nplain + 2 * e + side].only = m;
        }
}

/* prompt i's text under the tie rule: its own run where it decoded again, else the plain one */
static const drift_gen_t *tie_gen(const drift_deploy_run_t *runs, int plain, int tie, int i)
{
    return tie >= 0 && runs[tie].only[i] ? &runs[tie].g[i] : &runs[plain].g[i];
}

/* Measured with each EPS, forecast from the plain run of A (its gaps along its plain text) and
 * the plain pair's law (drift_tie_step_risk); the partings counted by cause
 * (drift_tie_parting_cause), a third token inside EPS being the one not forecast. */
void drift_fc_tie_measure(drift_fclab_t *L, drift_out_t *out)
{
    const int PT = L->PT, NT = L->NT;
    const drift_dbllist_t *ties = &L->ties;
    const drift_deploy_run_t *runs = L->runs;
    const unsigned char *tie_in = L->tie_in;
    const drift_gen_t *ga = runs[L->tie_a0].g, *gb = runs[L->tie_b0].g;
    double *dl = malloc(((size_t)PT * (size_t)L->T + 1) * sizeof(double));
    if (!dl) drift_die("out of memory for the tie pair's steps");
    size_t nd = 0;
    for (int i = 0; i < PT; i++) {
        if (!tie_in[i]) continue;
        int n = ga[i].n < gb[i].n ? ga[i].n : gb[i].n, st = drift_first_difference(ga[i].token, gb[i].token, n);
        for (int t = 0; t < (st >= 0 ? st + 1 : n); t++) dl[nd++] = drift_fc_step_delta(&ga[i], &gb[i], t);
    }
    drift_delta_fit_t lf;
    if (drift_delta_fit(&lf, dl, NULL, nd)) drift_die("the fit of the tie pair's law failed");
    free(dl);
    for (int e = -1; e < ties->n; e++) {
        double eps = e < 0 ? 0 : ties->v[e], pred = 0;
        long k = 0, why[DRIFT_TIE_NCAUSE] = {0}; /* partings by cause (forecast.h) */
        for (int i = 0; i < PT; i++) {
            if (!tie_in[i]) continue;
            const drift_gen_t *ta = tie_gen(runs, L->tie_a0, e < 0 ? -1 : L->tie_a[e], i),
                              *tb = tie_gen(runs, L->tie_b0, e < 0 ? -1 : L->tie_b[e], i);
            int n = ta->n < tb->n ? ta->n : tb->n, st = drift_first_difference(ta->token, tb->token, n);
            if (st >= 0)
                k++, why[drift_tie_parting_cause(ta->top1_logit[st] - ta->top2_logit[st], ta->token[st], ta->top2[st],
                         tb->top1_logit[st] - tb->top2_logit[st], tb->token[st], tb->top2[st], eps)]++;
            double logq = 0;
            for (int t = 0; t < ga[i].n; t++) {
                double r = drift_tie_step_risk(
                    &lf, ga[i].top1_logit[t] - ga[i].top2_logit[t], ga[i].top2[t] < ga[i].token[t], eps);
                logq += r < 1 ? log1p(-r) : -INFINITY;
            }
            pred += logq < 0 ? -expm1(logq) : 0;
        }
        double lo, hi;
        if (drift_wilson(&lo, &hi, k, NT, 1.959963984540054))
            drift_die("no Wilson interval for %ld of %ld", (long)k, (long)NT);
        drift_row(out, T_TIES, DRIFT_NUM(eps), DRIFT_INT(NT), DRIFT_INT(k), DRIFT_NUM((double)k / NT), DRIFT_NUM(lo),
            DRIFT_NUM(hi), DRIFT_NUM(pred), DRIFT_INT(why[0]), DRIFT_INT(why[1]), DRIFT_INT(why[2]),
            DRIFT_INT(e < 0 ? 2L * NT : L->again_n[e]));
        char ep[32], rate[96], pr_s[32], ws[64];
        snprintf(ep, sizeof ep, e < 0 ? "0 (plain greedy)" : "%g", eps);
        drift_rate_text(rate, sizeof rate, k, NT);
        snprintf(pr_s, sizeof pr_s, "%.3g", pred);
        snprintf(ws, sizeof ws, e < 0 ? "-" : "%ld / %ld / %ld", why[0], why[1], why[2]);
        drift_row(out, T_MD_TIES, DRIFT_TXT(ep), DRIFT_TXT(rate), DRIFT_TXT(pr_s), DRIFT_TXT(ws));
        if (e >= 0)
            for (int c = 0; c < DRIFT_TIE_NCAUSE; c++) L->why_all[c] += why[c];
        size_t at = strlen(L->tie_text);
        snprintf(L->tie_text + at, sizeof L->tie_text - at, "%s%g: %ld (%.2g)", e < 0 ? "" : ", ", eps, k, pred);
    }
    drift_md_end(out, T_MD_TIES);
}
