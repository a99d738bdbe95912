/* argmax_analysis.c — the analyses of an argmax-flip run once its trials are in (argmax_lab.h). */
#include <math.h>

#include "argmax_lab.h"
#include "drift.h"
#include "stats.h"

/* Realistic rows against both references (drift_aflab_t). A kernel's partner is the kernel with the
 * same accumulation and logits kept in the accumulator; the exact head's "accumulation" is
 * exact, so all its flips are output rounding. */
void drift_aflab_two_references(drift_aflab_t *L)
{
    L->fu = -1;
    for (int fi = 0; fi < L->nF; fi++)
        if (L->KS[0][fi].f == DRIFT_FP32) L->fu = fi;
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                const drift_recipe_t *r = &ks->k[c].c;
                L->partner[ki][fi][c] = -1;
                if (r->exact) continue;
                for (int p = 0; p < ks->n; p++)
                    if (!ks->k[p].c.exact && drift_recipe_same_acc(&ks->k[p].c, r) &&
                        ks->k[p].c.out == ks->k[p].c.acc.acc)
                        L->partner[ki][fi][c] = p;
            }
            L->ref_in[ki][fi] = -1;
            for (int c = 0; c < ks->n; c++) L->ref_tot[ki][fi][c] = L->ref_acc[ki][fi][c] = L->ref_out[ki][fi][c] = -1;
            if (L->rows <= 0 || L->fu < 0) continue;
            const drift_flipset_t *st = &L->RE[ki][fi], *su = &L->RE[ki][L->fu];
            long nin = 0;
            for (long r = 0; r < L->rows; r++) nin += st->t[r].top1 != su->t[r].top1 && !su->t[r].tie;
            L->ref_in[ki][fi] = nin;
            for (int c = 0; c < ks->n; c++) {
                if (!L->real_ok[ki][fi][c]) continue;
                int p = ks->k[c].c.exact ? -2 : L->partner[ki][fi][c];
                if (p == -1 || (p >= 0 && !L->real_ok[ki][fi][p])) continue;
                long tot = 0, acc = 0, out = 0;
                for (long r = 0; r < L->rows; r++) {
                    size_t pc = st->pick[(size_t)r * st->ncfg + c];
                    tot += pc != su->t[r].top1 && !su->t[r].tie;
                    if (p >= 0) {
                        acc += st->flip[(size_t)r * st->ncfg + p];
                        out += pc != st->pick[(size_t)r * st->ncfg + p];
                    } else {
                        out += st->flip[(size_t)r * st->ncfg + c];
                    }
                }
                L->ref_tot[ki][fi][c] = tot, L->ref_acc[ki][fi][c] = acc, L->ref_out[ki][fi][c] = out;
            }
        }
}

/* The sigma fits per (K, format, kernel) on the planted pairs, and the baseline sigma of the mitigations. */
int drift_aflab_fit(drift_aflab_t *L)
{
    int rc = drift_logbins_init(
        &L->bins, pow(10.0, -7 - 0.5 / DRIFT_AF_PER_DECADE), pow(10.0, 0.5 / DRIFT_AF_PER_DECADE), L->nT);
    if (rc) return rc;
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                if (drift_flipset_fit(
                        &L->FIT[ki][fi][c], &L->PL[ki][fi], c, &ks->k[c].c, ks->k[c].nu, L->Ks[ki], &L->bins))
                    return DRIFT_ENOMEM;
                const drift_recipe_t *r = &ks->k[c].c;
                drift_fliplaw_t law = drift_flip_implied_law(r->exact, r->acc.acc, r->out);
                if (drift_flipset_laws(&L->LAW[ki][fi][c], &L->PL[ki][fi], c, law, r->out, &L->bins))
                    return DRIFT_ENOMEM;
            }
        }

    /* -- the mitigations, at the largest K, on the first narrow format (bf16 if present) -- */
    L->mk = L->nK - 1, L->mf = 0;
    for (int fi = 0; fi < L->nF; fi++)
        if (L->cli.formats[fi] == DRIFT_BF16) L->mf = fi;
    L->MKS = &L->KS[L->mk][L->mf];
    const drift_flip_fit_t *base_fit = &L->FIT[L->mk][L->mf][L->MKS->engine];
    L->base_sigma = base_fit->fit.status == DRIFT_FIT_OK ? base_fit->fit.sigma : NAN;
    /* eps = the baseline's D_0.1% from the law of its mechanism (a gap where flips still occur);
     * the Phi fit's 3.09 sigma only when that law has no fit */
    const drift_flip_laws_t *base_law = &L->LAW[L->mk][L->mf][L->MKS->engine];
    L->eps_rel[0] = isfinite(base_law->d001) ? base_law->d001 : drift_phi_gap_at(L->base_sigma, 0.001);
    L->eps_rel[1] = 10 * L->base_sigma;
    return 0;
}

/* The mitigations at (mk, mf): flip rates, batch changes and cost ratios. */
void drift_aflab_mitigations(drift_aflab_t *L)
{
    for (int mode = 0; mode < 2; mode++) {
        const drift_flipset_t *st = mode ? &L->RE[L->mk][L->mf] : &L->PL[L->mk][L->mf];
        int n = 0;
        const double cbase = L->cost[0].us;
        struct {
            const char *name;
            int cfg;
            double cost;
        } simple[4] = {
            {"baseline: tensor cores (tc:h100), logits stored in the format", L->MKS->engine, 1.0},
            {"(a) upcast: fp32 logits from the format's values (seq, fp32 FMA)", L->MKS->seq32, L->cost[1].us / cbase},
            {"(a') same tensor cores, logits kept in fp32", L->MKS->tc32, L->cost[2].us / cbase},
            {"(b) exact dot product, rounded once to fp32", L->MKS->exact, L->cost[3].us / cbase},
        };
        for (int m = 0; m < 4; m++) {
            if (simple[m].cfg < 0) continue;
            drift_mit_t *x = &L->MIT[mode][n++];
            *x = (drift_mit_t){
                simple[m].name, simple[m].cfg, (long)st->n, 0, -1, simple[m].cost, "measured (CPU emulation)"};
            x->flips = drift_flipset_flips(st, x->cfg);
        }
        int narrow = L->MKS->f == DRIFT_BF16 || L->MKS->f == DRIFT_FP16;
        for (int p = 0; p < DRIFT_NPOLICIES; p++) {
            int q0 = p * 2 * DRIFT_AF_NBATCH + DRIFT_AF_NBATCH; /* the sharded shape, batch 1 */
            drift_mit_t *x = &L->MIT[mode][n++];
            int c0 = L->polcfg[L->mk][L->mf][q0][narrow];
            double vend = L->polk[L->mk][DRIFT_POLICY_VENDOR_LIKE * 2 * DRIFT_AF_NBATCH + DRIFT_AF_NBATCH].cost;
            *x = (drift_mit_t){p == DRIFT_POLICY_BATCH_INVARIANT
                                   ? "(c) batch-invariant GEMM policy (argmax at batch 1)"
                                   : "(c) reference: vendor-like GEMM policy (argmax at batch 1)",
                c0, (long)st->n, 0, 0, L->polk[L->mk][q0].cost / vend, "modelled (policy.h roofline)"};
            int cb[DRIFT_AF_NBATCH];
            for (int b = 0; b < DRIFT_AF_NBATCH; b++) cb[b] = L->polcfg[L->mk][L->mf][q0 + b][narrow];
            x->flips = drift_flipset_flips(st, c0);
            for (size_t i = 0; i < st->n; i++) x->changed += drift_flipset_changed(st, i, cb, DRIFT_AF_NBATCH);
        }
        for (int e = 0; e < 2; e++) {
            drift_mit_t *x = &L->MIT[mode][n++];
            *x = (drift_mit_t){e ? "(d) gap-threshold tie-breaker, eps = 10 sigma (Phi fit)"
                                 : "(d) gap-threshold tie-breaker, eps = D_0.1% of the mechanism's law",
                L->MKS->engine, (long)st->n, 0, -1,
                (L->cost[4].us * (double)L->V + cbase * (double)L->V) / (cbase * (double)L->V), "measured (CPU)"};
            for (size_t i = 0; i < st->n && isfinite(L->eps_rel[e]); i++) {
                const drift_flip_trial_t *t = &st->t[i];
                size_t j = i * st->ncfg + L->MKS->engine;
                double eps = L->eps_rel[e] * t->s;
                size_t rc = drift_flip_tiebreak(st->pick[j], st->pick2[j], st->cgap[j], eps);
                size_t rx = drift_flip_tiebreak(t->top1, t->top2, t->gap, eps);
                x->flips += rc != rx;
            }
            if (!isfinite(L->eps_rel[e])) x->flips = -1;
        }
        L->nmit = n;
        if (mode == 1 && L->rows == 0) break;
    }
}

void drift_aflab_free(drift_aflab_t *L)
{
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            drift_flipset_free(&L->PL[ki][fi]);
            drift_flipset_free(&L->TI[ki][fi]);
            if (L->rows > 0) drift_flipset_free(&L->RE[ki][fi]);
        }
}
