/* pair_scores.c — one pair scored held out (forecast_lab.h): per seed, each sample held out
 * in turn, the law of delta and the baselines fitted on the seed's other samples, the held-out
 * prompts forecast from A's gaps alone; the scores per seed, pooled, and their reliability. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "deployment.h"
#include "forecast.h"
#include "forecast_lab.h"
#include "pair_stats.h"
#include "parting.h"
#include "stats.h"

/* the steps of one pair's two texts of a prompt: A's top-1 minus top-2 gaps, each step's class,
 * and delta while the texts agree */
typedef struct {
    int step;           /* parting step, -1 none */
    int n;              /* steps of A's text */
    double *gap;        /* A's gaps, n */
    unsigned char *cls; /* A's step classes, n */
    double *delta;      /* observed steps 0 .. nobs-1 (up to the parting, included) */
    unsigned char *dcls;
    int nobs;
    double min_gap;
} steps_t;

double drift_fc_step_delta(const drift_gen_t *a, const drift_gen_t *b, int t)
{
    double ga = a->top1_logit[t] - a->top2_logit[t], gb = b->top1_logit[t] - b->top2_logit[t];
    if (b->token[t] == a->token[t] && b->top2[t] == a->top2[t]) return gb - ga;
    if (b->token[t] == a->top2[t] && b->top2[t] == a->token[t]) return -gb - ga;
    return NAN;
}

/* per-step class: whether the vendor-like policy picks other kernels on the two cards at this
 * step's row count (0 when the cards have the same SM count) */
static unsigned char step_class(
    const drift_llm_config_t *c, const drift_deployment_t *a, const drift_deployment_t *b, int rows)
{
    if (a->nx.sms == b->nx.sms || rows < 1) return 0;
    int f, l;
    return drift_model_kernels_differ(c, a->nx.sms, b->nx.sms, a->nx.min_slice, rows, &f, &l) >
           drift_model_kernels_differ(c, a->nx.sms, b->nx.sms, a->nx.min_slice, rows - 1, &f, &l);
}

/* prompt i's steps under runs ra and rb of model c into s */
static void steps_fill(
    steps_t *s, const drift_llm_config_t *c, const drift_deploy_run_t *ra, const drift_deploy_run_t *rb, int i)
{
    const drift_gen_t *a = &ra->g[i], *b = &rb->g[i];
    int n = a->n < b->n ? a->n : b->n;
    s->step = drift_first_difference(a->token, b->token, n);
    s->n = a->n;
    s->gap = malloc((size_t)a->n * sizeof(double)), s->cls = malloc((size_t)a->n);
    s->delta = malloc((size_t)a->n * sizeof(double)), s->dcls = malloc((size_t)a->n);
    if (!s->gap || !s->cls || !s->delta || !s->dcls) drift_die("out of memory for the steps");
    s->min_gap = INFINITY;
    for (int t = 0; t < a->n; t++) {
        s->gap[t] = a->top1_logit[t] - a->top2_logit[t];
        s->cls[t] = step_class(c, &ra->dep, &rb->dep, a->rows[t]);
        if (s->gap[t] < s->min_gap) s->min_gap = s->gap[t];
    }
    s->nobs = s->step >= 0 ? s->step + 1 : n;
    for (int t = 0; t < s->nobs; t++) s->delta[t] = drift_fc_step_delta(a, b, t), s->dcls[t] = s->cls[t];
}

static void steps_free(steps_t *s) { free(s->gap), free(s->cls), free(s->delta), free(s->dcls); }

void drift_fc_score_pair(drift_fclab_t *L, drift_out_t *out, int q)
{
    const int N = L->N, S = L->S, Z = L->Z, P = L->P, PT = L->PT, T = L->T, npair = L->npair;
    const drift_chat_prompt_t *pr = L->pr;
    const drift_fc_pair_t *pp = L->pair[q];
    /* per prompt: the forecast, the constant rate, the threshold, the empirical law, whether B's
     * text parted, its steps; the deltas (and classes) of the steps a fit uses; the fit prompts'
     * outcomes and smallest gaps */
    double *pf = malloc((size_t)PT * sizeof(double)), *pc = malloc((size_t)PT * sizeof(double)),
           *pt = malloc((size_t)PT * sizeof(double)), *pe = malloc((size_t)PT * sizeof(double));
    unsigned char *y = malloc((size_t)PT), *dc = malloc((size_t)PT * (size_t)T), *fy = malloc((size_t)PT);
    steps_t *ps = calloc((size_t)PT, sizeof *ps);
    double *dl = malloc((size_t)PT * (size_t)T * sizeof(double)), *fmg = malloc((size_t)PT * sizeof(double));
    if (!L->allp)
        L->allp = malloc((size_t)npair * (size_t)PT * sizeof(double)), L->ally = malloc((size_t)npair * (size_t)PT);
    double *allp = L->allp;
    unsigned char *ally = L->ally;
    if (!pf || !pc || !pt || !pe || !y || !dc || !fy || !ps || !dl || !fmg || !allp || !ally)
        drift_die("out of memory for the forecasts");
    for (int i = 0; i < PT; i++) {
        steps_fill(&ps[i], &L->ck.cfg, &L->runs[L->ra[q]], &L->runs[L->rb[q]], i);
        y[i] = ps[i].step >= 0;
    }
    /* the law on every seed's steps: what the pairs table states, and what a user's own
     * dump is forecast with (./lab forecast --logits) */
    size_t nall = 0;
    for (int i = 0; i < PT; i++)
        for (int t = 0; t < ps[i].nobs; t++) dl[nall] = ps[i].delta[t], dc[nall] = ps[i].dcls[t], nall++;
    drift_delta_fit_t all;
    if (drift_delta_fit(&all, dl, dc, nall)) drift_die("the fit of the pair's law failed");
    /* folds: per seed, each sample held out, the law and the baselines fitted on the
     * seed's other samples */
    int gauss_wins = 0;
    double dll = 0;
    for (int z = 0; z < Z; z++)
        for (int h = 0; h < S; h++) {
            const int h0 = z * P + h * N, h1 = h0 + N;
            size_t nd = 0, nh = 0;
            int nf = 0;
            for (int i = z * P; i < (z + 1) * P; i++) {
                if (i >= h0 && i < h1) continue;
                for (int t = 0; t < ps[i].nobs; t++) dl[nd] = ps[i].delta[t], dc[nd] = ps[i].dcls[t], nd++;
                fmg[nf] = ps[i].min_gap, fy[nf] = y[i], nf++;
            }
            drift_delta_fit_t fit;
            drift_delta_ecdf_t ecdf;
            if (drift_delta_fit(&fit, dl, dc, nd)) drift_die("the fit of the pair's law failed");
            if (drift_delta_ecdf(&ecdf, dl, nd)) drift_die("out of memory for the empirical law (%zu steps)", nd);
            long kf = 0;
            for (int i = 0; i < nf; i++) kf += fy[i];
            drift_gap_threshold_t th = drift_gap_threshold_fit(fmg, fy, nf);
            /* held-out deltas: which law predicts them better */
            for (int i = h0; i < h1; i++)
                for (int t = 0; t < ps[i].nobs; t++) dl[nh++] = ps[i].delta[t];
            double lg = drift_delta_loglik(&fit, DRIFT_DELTA_GAUSS, dl, nh),
                   ll = drift_delta_loglik(&fit, DRIFT_DELTA_LAPLACE, dl, nh);
            if (isfinite(lg) && isfinite(ll)) gauss_wins += lg > ll, dll += lg - ll;
            for (int i = h0; i < h1; i++) {
                drift_forecast_t fc;
                if (drift_forecast_text(&fc, &fit, -1, ps[i].gap, ps[i].cls, ps[i].n))
                    drift_die("a forecast failed (a NaN gap)");
                pf[i] = fc.p, pc[i] = (double)kf / (double)nf, pt[i] = ps[i].min_gap < th.tau ? th.below : th.above;
                drift_forecast_t fa, fe;
                if (drift_forecast_text(&fa, &all, -1, ps[i].gap, NULL, ps[i].n) ||
                    drift_forecast_text_ecdf(&fe, &fit, &ecdf, ps[i].gap, ps[i].cls, ps[i].n))
                    drift_die("a forecast failed (a NaN gap)");
                pe[i] = fe.p;
                drift_row(out, T_PROMPTS, DRIFT_INT((long)(L->cli.seed + z)), DRIFT_INT(h), DRIFT_INT(pr[i].index),
                    DRIFT_TXT(pr[i].kind), DRIFT_TXT(pp->id), DRIFT_TXT(drift_delta_law_name(fit.law)),
                    DRIFT_NUM(pf[i]), DRIFT_NUM(pc[i]), DRIFT_NUM(pt[i]), DRIFT_INT(fc.step), DRIFT_NUM(fc.step_gap),
                    DRIFT_NUM(fc.step_p), DRIFT_NUM(ps[i].min_gap), DRIFT_INT(y[i]), DRIFT_INT(ps[i].step),
                    DRIFT_NUM(fa.p), DRIFT_NUM(fe.p));
                L->risk[L->nrisk++] = (drift_fc_risk_t){i, q, fc.step, pf[i], fc.step_gap};
                if (fc.step >= 0 && fc.step_gap == 0) L->tie_n++, L->tie_k += y[i], L->tie_p += pf[i];
            }
            drift_delta_ecdf_free(&ecdf);
        }
    /* each seed's scores alone: the replications */
    char per_seed[256] = "";
    int at_goal = 0;
    for (int z = 0; z < Z; z++) {
        const size_t o = (size_t)z * P;
        long kz = 0;
        double sz = 0, skz, loz, hiz;
        for (int i = 0; i < P; i++) kz += y[o + i], sz += pf[o + i];
        double bfz = drift_brier(pf + o, y + o, (size_t)P), bcz = drift_brier(pc + o, y + o, (size_t)P),
               btz = drift_brier(pt + o, y + o, (size_t)P);
        if (drift_brier_skill(&skz, &loz, &hiz, pf + o, pc + o, y + o, (size_t)P, L->cli.seed + z, 2000, 0.95))
            drift_die("out of memory for the bootstrap");
        drift_row(out, T_SEEDS, DRIFT_INT((long)(L->cli.seed + z)), DRIFT_TXT(pp->id), DRIFT_INT(P), DRIFT_INT(kz),
            DRIFT_NUM(sz), DRIFT_NUM(bfz), DRIFT_NUM(bcz), DRIFT_NUM(btz), DRIFT_NUM(skz), DRIFT_NUM(loz),
            DRIFT_NUM(hiz));
        at_goal += skz >= 0.3;
        size_t at = strlen(per_seed);
        if (isnan(skz))
            snprintf(per_seed + at, sizeof per_seed - at, "%s- (%ld)", z ? ", " : "", kz);
        else
            snprintf(per_seed + at, sizeof per_seed - at, "%s%.2f (%ld)", z ? ", " : "", skz, kz);
    }
    long k = 0;
    double sump = 0;
    for (int i = 0; i < PT; i++) k += y[i], sump += pf[i];
    double bf = drift_brier(pf, y, (size_t)PT), bc = drift_brier(pc, y, (size_t)PT),
           bt = drift_brier(pt, y, (size_t)PT);
    double sk, lo, hi, ske, loe, hie, be = drift_brier(pe, y, (size_t)PT), skt = bt > 0 ? 1 - bf / bt : NAN;
    if (drift_brier_skill(&sk, &lo, &hi, pf, pc, y, (size_t)PT, L->cli.seed, 2000, 0.95) ||
        drift_brier_skill(&ske, &loe, &hie, pe, pc, y, (size_t)PT, L->cli.seed, 2000, 0.95))
        drift_die("out of memory for the bootstrap");
    L->sums[q] = (drift_fc_pair_sum_t){k, sump, sk, lo, hi, at_goal};
    drift_row(out, T_PAIRS, DRIFT_TXT(pp->id), DRIFT_TXT(pp->change), DRIFT_INT(PT), DRIFT_INT(k), DRIFT_NUM(sump),
        DRIFT_TXT(drift_delta_law_name(all.law)), DRIFT_NUM(all.sigma), DRIFT_NUM(all.b), DRIFT_NUM(all.pi[0]),
        DRIFT_NUM(all.steps[1] ? all.pi[1] : NAN), DRIFT_INT(all.steps[0] + all.steps[1]),
        DRIFT_INT(all.nonzero[0] + all.nonzero[1]), DRIFT_INT(gauss_wins), DRIFT_NUM(dll), DRIFT_NUM(bf), DRIFT_NUM(bc),
        DRIFT_NUM(bt), DRIFT_NUM(drift_log_loss(pf, y, (size_t)PT)), DRIFT_NUM(drift_log_loss(pc, y, (size_t)PT)),
        DRIFT_NUM(drift_log_loss(pt, y, (size_t)PT)), DRIFT_NUM(sk), DRIFT_NUM(lo), DRIFT_NUM(hi), DRIFT_NUM(skt),
        DRIFT_NUM(be), DRIFT_NUM(ske), DRIFT_NUM(loe), DRIFT_NUM(hie));
    char parted[96], fsum[32], law[128], br[96], skill[96], emp[96];
    snprintf(emp, sizeof emp,
        isnan(ske)   ? "%.3f, -"
        : isnan(loe) ? "%.3f, %.2f"
                     : "%.3f, %.2f [%.2f, %.2f]",
        be, ske, loe, hie);
    drift_rate_text(parted, sizeof parted, k, PT);
    snprintf(fsum, sizeof fsum, "%.3g", sump);
    snprintf(law, sizeof law, "%s %.3g, %.3g", drift_delta_law_name(all.law),
        all.law == DRIFT_DELTA_GAUSS ? all.sigma : all.b, all.pi[0]);
    snprintf(br, sizeof br, "%.3f / %.3f / %.3f", bf, bc, bt);
    if (isnan(sk))
        snprintf(skill, sizeof skill, "- (the constant rate makes no error)");
    else if (k < DRIFT_FC_MIN_EVENTS || PT - k < DRIFT_FC_MIN_EVENTS)
        snprintf(skill, sizeof skill, "- (%.2f, resting on %ld)", sk, k < DRIFT_FC_MIN_EVENTS ? k : PT - k);
    else if (isnan(lo))
        snprintf(skill, sizeof skill, "%.2f", sk);
    else
        snprintf(skill, sizeof skill, "%.2f [%.2f, %.2f]", sk, lo, hi);
    drift_row(out, T_MD_PAIRS, DRIFT_TXT(pp->id), DRIFT_TXT(parted), DRIFT_TXT(fsum), DRIFT_TXT(law), DRIFT_TXT(br),
        DRIFT_TXT(skill), DRIFT_TXT(per_seed), DRIFT_TXT(emp));
    memcpy(allp + (size_t)q * PT, pf, (size_t)PT * sizeof(double));
    memcpy(ally + (size_t)q * PT, y, (size_t)PT);
    /* reliability, this pair, and after the last pair every pair's together */
    static const double edges[] = {0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0000001};
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && q != npair - 1) break;
        drift_rel_bin_t bins[6];
        int nb = drift_reliability(
            bins, edges, 7, pass ? allp : pf, pass ? ally : y, pass ? (size_t)npair * PT : (size_t)PT);
        for (int e = 0; e < nb; e++)
            drift_row(out, T_REL, DRIFT_TXT(pass ? "all" : pp->id), DRIFT_NUM(bins[e].lo),
                DRIFT_NUM(bins[e].hi > 1 ? 1 : bins[e].hi), DRIFT_INT(bins[e].n), DRIFT_NUM(bins[e].mean_p),
                DRIFT_INT(bins[e].k), DRIFT_NUM(bins[e].rate), DRIFT_NUM(bins[e].wilson_lo),
                DRIFT_NUM(bins[e].wilson_hi));
    }
    for (int i = 0; i < PT; i++) steps_free(&ps[i]);
    free(pf), free(pc), free(pt), free(pe), free(y), free(dc), free(fy), free(ps), free(dl), free(fmg);
}
