/* mitigations.c — the mitigations at the headline's point of a finished sweep, and the
 * wall-clock cost of each (argmax_mitigations.h). */
#include <math.h>
#include <stdlib.h>

#include "argmax_mitigations.h"
#include "argmax_run.h"
#include "dispatch.h"
#include "drift.h"
#include "format.h"
#include "gen_logits.h"
#include "metrics.h"
#include "philox.h"
#include "stats.h"

static volatile double keep_observable;

size_t drift_afm_sharded_n(const drift_aflab_t *L) { return (size_t)(L->V / L->shard + (L->V % L->shard != 0)); }

/* The mitigations at the headline point: flip rates, batch changes and cost ratios. */
void drift_afm_mitigations(drift_afm_t *M, const drift_aflab_t *L)
{
    /* -- the baseline, at the largest K, on the first narrow format (bf16 if present) -- */
    const drift_flip_fit_t *base_fit = &L->cell[L->headline.k][L->headline.f].fits[L->headline.kernels->engine];
    M->base_sigma = base_fit->fit.status == DRIFT_FIT_OK ? base_fit->fit.sigma : NAN;
    /* eps = the baseline's D_0.1% from the law of its mechanism (a gap where flips still occur);
     * the Phi fit's 3.09 sigma only when that law has no fit */
    const drift_flip_laws_t *base_law = &L->cell[L->headline.k][L->headline.f].laws[L->headline.kernels->engine];
    M->eps_rel[0] = isfinite(base_law->d001) ? base_law->d001 : drift_phi_gap_at(M->base_sigma, 0.001);
    M->eps_rel[1] = 10 * M->base_sigma;
    for (int mode = 0; mode < 2; mode++) {
        const drift_flipset_t *st =
            mode ? &L->cell[L->headline.k][L->headline.f].realistic : &L->cell[L->headline.k][L->headline.f].planted;
        int n = 0;
        const double cbase = M->cost[0].us;
        struct {
            const char *name;
            int cfg;
            double cost;
        } simple[4] = {
            {"baseline: tensor cores (tc:h100), logits stored in the format", L->headline.kernels->engine, 1.0},
            {"(a) upcast: fp32 logits from the format's values (seq, fp32 FMA)", L->headline.kernels->seq32,
                M->cost[1].us / cbase},
            {"(a') same tensor cores, logits kept in fp32", L->headline.kernels->tc32, M->cost[2].us / cbase},
            {"(b) exact dot product, rounded once to fp32", L->headline.kernels->exact, M->cost[3].us / cbase},
        };
        for (int m = 0; m < 4; m++) {
            if (simple[m].cfg < 0) continue;
            drift_mit_t *x = &M->rows[mode][n++];
            *x = (drift_mit_t){
                simple[m].name, simple[m].cfg, (long)st->n, 0, -1, simple[m].cost, "measured (CPU emulation)"};
            x->flips = drift_flipset_flips(st, x->cfg);
        }
        int narrow = L->headline.kernels->f == DRIFT_BF16 || L->headline.kernels->f == DRIFT_FP16;
        for (int p = 0; p < DRIFT_NPOLICIES; p++) {
            int q0 = p * 2 * DRIFT_AF_NBATCH + DRIFT_AF_NBATCH; /* the sharded shape, batch 1 */
            drift_mit_t *x = &M->rows[mode][n++];
            int c0 = L->cell[L->headline.k][L->headline.f].policy_kernel[q0][narrow];
            double vend =
                L->policy_pick[L->headline.k][DRIFT_POLICY_VENDOR_LIKE * 2 * DRIFT_AF_NBATCH + DRIFT_AF_NBATCH].cost;
            *x = (drift_mit_t){p == DRIFT_POLICY_BATCH_INVARIANT
                                   ? "(c) batch-invariant GEMM policy (argmax at batch 1)"
                                   : "(c) reference: vendor-like GEMM policy (argmax at batch 1)",
                c0, (long)st->n, 0, 0, L->policy_pick[L->headline.k][q0].cost / vend, "modelled (policy.h roofline)"};
            int cb[DRIFT_AF_NBATCH];
            for (int b = 0; b < DRIFT_AF_NBATCH; b++)
                cb[b] = L->cell[L->headline.k][L->headline.f].policy_kernel[q0 + b][narrow];
            x->flips = drift_flipset_flips(st, c0);
            for (size_t i = 0; i < st->n; i++) x->changed += drift_flipset_changed(st, i, cb, DRIFT_AF_NBATCH);
        }
        for (int e = 0; e < 2; e++) {
            drift_mit_t *x = &M->rows[mode][n++];
            *x = (drift_mit_t){e ? "(d) gap-threshold tie-breaker, eps = 10 sigma (Phi fit)"
                                 : "(d) gap-threshold tie-breaker, eps = D_0.1% of the mechanism's law",
                L->headline.kernels->engine, (long)st->n, 0, -1,
                (M->cost[4].us * (double)L->V + cbase * (double)L->V) / (cbase * (double)L->V), "measured (CPU)"};
            for (size_t i = 0; i < st->n && isfinite(M->eps_rel[e]); i++) {
                const drift_flip_trial_t *t = &st->t[i];
                size_t j = i * st->ncfg + L->headline.kernels->engine;
                double eps = M->eps_rel[e] * t->s;
                size_t rc = drift_flip_tiebreak(st->pick[j], st->pick2[j], st->cgap[j], eps);
                size_t rx = drift_flip_tiebreak(t->top1, t->top2, t->gap, eps);
                x->flips += rc != rx;
            }
            if (!isfinite(M->eps_rel[e])) x->flips = -1;
        }
        M->n = n;
        if (mode == 1 && L->rows == 0) break;
    }
}

/* Measured costs (wall clock: not reproducible, kept out of every other file). */
int drift_afm_measure_costs(drift_afm_t *M, const drift_aflab_t *L)
{
    {
        size_t K = L->Ks[L->headline.k];
        const int NR = 8, REP = 8;
        drift_stream_t s;
        drift_stream_init(&s, L->cli.seed, drift_fnv1a32("argmax_flip.timing"), 0, 0);
        double *h = malloc(K * sizeof *h), *W = malloc((size_t)NR * K * sizeof *W), y = 0, sink = 0;
        if (!h || !W) {
            free(h), free(W);
            return DRIFT_ENOMEM;
        }
        drift_gen_hidden(h, &L->hidden_model[L->headline.k], &s);
        for (size_t i = 0; i < K; i++) h[i] = drift_rne(h[i], L->headline.kernels->f);
        for (int r = 0; r < NR; r++) {
            drift_gen_weight_row(W + (size_t)r * K, K, &s);
            for (size_t i = 0; i < K; i++)
                W[(size_t)r * K + i] = drift_rne(W[(size_t)r * K + i], L->headline.kernels->f);
        }
        const int which[4] = {L->headline.kernels->engine, L->headline.kernels->seq32, L->headline.kernels->tc32,
            L->headline.kernels->exact};
        const char *label[4] = {"baseline: tc:h100, logits in the format", "(a) upcast: seq fp32, fp32 logits",
            "(a') tc:h100, fp32 logits", "(b) exact dot, rounded once to fp32"};
        for (int m = 0; m < 4; m++) {
            if (which[m] < 0) continue;
            double t0 = drift_af_now();
            for (int rep = 0; rep < REP; rep++)
                for (int r = 0; r < NR; r++) {
                    if (drift_recipe_dot(&y, h, W + (size_t)r * K, K, NULL, &L->headline.kernels->k[which[m]].c)) {
                        free(h), free(W);
                        return DRIFT_EINVAL;
                    }
                    sink += y;
                }
            M->cost[M->ncost++] = (drift_afcost_t){label[m], (drift_af_now() - t0) / (REP * NR) * 1e6};
        }
        /* the tie-breaker: one more comparison after the argmax of V logits */
        double *lg = malloc((size_t)L->V * sizeof *lg);
        if (!lg) {
            free(h), free(W);
            return DRIFT_ENOMEM;
        }
        for (long v = 0; v < L->V; v++) lg[v] = drift_stream_normal(&s);
        double t0 = drift_af_now();
        size_t pick = 0;
        for (int rep = 0; rep < 200; rep++) {
            drift_top2_t t2;
            drift_top2(&t2, lg, (size_t)L->V);
            pick += drift_flip_tiebreak(t2.top1, t2.top2, t2.gap, 0.1);
            lg[rep % L->V] += 1e-9;
        }
        M->cost[M->ncost++] = (drift_afcost_t){
            "(d) tie-breaker: top-2 of V logits + one comparison", (drift_af_now() - t0) / 200 / (double)L->V * 1e6};
        keep_observable = sink + (double)pick; /* the timed work must not be optimised away */
        free(lg);
        free(h);
        free(W);
    }
    return 0;
}
