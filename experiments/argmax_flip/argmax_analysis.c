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
    L->fp32_index = -1;
    for (int fi = 0; fi < L->nformats; fi++)
        if (L->cell[0][fi].kernels.f == DRIFT_FP32) L->fp32_index = fi;
    for (int ki = 0; ki < L->nKs; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            const drift_kset_t *ks = &L->cell[ki][fi].kernels;
            for (int c = 0; c < ks->n; c++) {
                const drift_recipe_t *r = &ks->k[c].c;
                L->cell[ki][fi].partner[c] = -1;
                if (r->exact) continue;
                for (int p = 0; p < ks->n; p++)
                    if (!ks->k[p].c.exact && drift_recipe_same_acc(&ks->k[p].c, r) &&
                        ks->k[p].c.out == ks->k[p].c.acc.acc)
                        L->cell[ki][fi].partner[c] = p;
            }
            L->cell[ki][fi].input_rounding_flips = -1;
            for (int c = 0; c < ks->n; c++)
                L->cell[ki][fi].flips_vs_unrounded[c] = L->cell[ki][fi].accumulation_flips[c] =
                    L->cell[ki][fi].output_rounding_changes[c] = -1;
            if (L->rows <= 0 || L->fp32_index < 0) continue;
            const drift_flipset_t *st = &L->cell[ki][fi].realistic, *su = &L->cell[ki][L->fp32_index].realistic;
            long nin = 0;
            for (long r = 0; r < L->rows; r++) nin += st->t[r].top1 != su->t[r].top1 && !su->t[r].tie;
            L->cell[ki][fi].input_rounding_flips = nin;
            for (int c = 0; c < ks->n; c++) {
                if (!L->cell[ki][fi].realistic_ok[c]) continue;
                int p = ks->k[c].c.exact ? -2 : L->cell[ki][fi].partner[c];
                if (p == -1 || (p >= 0 && !L->cell[ki][fi].realistic_ok[p])) continue;
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
                L->cell[ki][fi].flips_vs_unrounded[c] = tot, L->cell[ki][fi].accumulation_flips[c] = acc,
                L->cell[ki][fi].output_rounding_changes[c] = out;
            }
        }
}

/* The sigma fits per (K, format, kernel) on the planted pairs, and the baseline sigma of the mitigations. */
int drift_aflab_fit(drift_aflab_t *L)
{
    int rc = drift_logbins_init(
        &L->gap_bins, pow(10.0, -7 - 0.5 / DRIFT_AF_PER_DECADE), pow(10.0, 0.5 / DRIFT_AF_PER_DECADE), L->ntargets);
    if (rc) return rc;
    for (int ki = 0; ki < L->nKs; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            const drift_kset_t *ks = &L->cell[ki][fi].kernels;
            for (int c = 0; c < ks->n; c++) {
                if (drift_flipset_fit(&L->cell[ki][fi].fits[c], &L->cell[ki][fi].planted, c, &ks->k[c].c, ks->k[c].nu,
                        L->Ks[ki], &L->gap_bins))
                    return DRIFT_ENOMEM;
                const drift_recipe_t *r = &ks->k[c].c;
                drift_fliplaw_t law = drift_flip_implied_law(r->exact, r->acc.acc, r->out);
                if (drift_flipset_laws(
                        &L->cell[ki][fi].laws[c], &L->cell[ki][fi].planted, c, law, r->out, &L->gap_bins))
                    return DRIFT_ENOMEM;
            }
        }

    /* -- the mitigations, at the largest K, on the first narrow format (bf16 if present) -- */
    L->headline.k = L->nKs - 1, L->headline.f = 0;
    for (int fi = 0; fi < L->nformats; fi++)
        if (L->cli.formats[fi] == DRIFT_BF16) L->headline.f = fi;
    L->headline.kernels = &L->cell[L->headline.k][L->headline.f].kernels;
    const drift_flip_fit_t *base_fit = &L->cell[L->headline.k][L->headline.f].fits[L->headline.kernels->engine];
    L->mit.base_sigma = base_fit->fit.status == DRIFT_FIT_OK ? base_fit->fit.sigma : NAN;
    /* eps = the baseline's D_0.1% from the law of its mechanism (a gap where flips still occur);
     * the Phi fit's 3.09 sigma only when that law has no fit */
    const drift_flip_laws_t *base_law = &L->cell[L->headline.k][L->headline.f].laws[L->headline.kernels->engine];
    L->mit.eps_rel[0] = isfinite(base_law->d001) ? base_law->d001 : drift_phi_gap_at(L->mit.base_sigma, 0.001);
    L->mit.eps_rel[1] = 10 * L->mit.base_sigma;
    return 0;
}

/* The mitigations at the headline point: flip rates, batch changes and cost ratios. */
void drift_aflab_mitigations(drift_aflab_t *L)
{
    for (int mode = 0; mode < 2; mode++) {
        const drift_flipset_t *st =
            mode ? &L->cell[L->headline.k][L->headline.f].realistic : &L->cell[L->headline.k][L->headline.f].planted;
        int n = 0;
        const double cbase = L->mit.cost[0].us;
        struct {
            const char *name;
            int cfg;
            double cost;
        } simple[4] = {
            {"baseline: tensor cores (tc:h100), logits stored in the format", L->headline.kernels->engine, 1.0},
            {"(a) upcast: fp32 logits from the format's values (seq, fp32 FMA)", L->headline.kernels->seq32,
                L->mit.cost[1].us / cbase},
            {"(a') same tensor cores, logits kept in fp32", L->headline.kernels->tc32, L->mit.cost[2].us / cbase},
            {"(b) exact dot product, rounded once to fp32", L->headline.kernels->exact, L->mit.cost[3].us / cbase},
        };
        for (int m = 0; m < 4; m++) {
            if (simple[m].cfg < 0) continue;
            drift_mit_t *x = &L->mit.rows[mode][n++];
            *x = (drift_mit_t){
                simple[m].name, simple[m].cfg, (long)st->n, 0, -1, simple[m].cost, "measured (CPU emulation)"};
            x->flips = drift_flipset_flips(st, x->cfg);
        }
        int narrow = L->headline.kernels->f == DRIFT_BF16 || L->headline.kernels->f == DRIFT_FP16;
        for (int p = 0; p < DRIFT_NPOLICIES; p++) {
            int q0 = p * 2 * DRIFT_AF_NBATCH + DRIFT_AF_NBATCH; /* the sharded shape, batch 1 */
            drift_mit_t *x = &L->mit.rows[mode][n++];
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
            drift_mit_t *x = &L->mit.rows[mode][n++];
            *x = (drift_mit_t){e ? "(d) gap-threshold tie-breaker, eps = 10 sigma (Phi fit)"
                                 : "(d) gap-threshold tie-breaker, eps = D_0.1% of the mechanism's law",
                L->headline.kernels->engine, (long)st->n, 0, -1,
                (L->mit.cost[4].us * (double)L->V + cbase * (double)L->V) / (cbase * (double)L->V), "measured (CPU)"};
            for (size_t i = 0; i < st->n && isfinite(L->mit.eps_rel[e]); i++) {
                const drift_flip_trial_t *t = &st->t[i];
                size_t j = i * st->ncfg + L->headline.kernels->engine;
                double eps = L->mit.eps_rel[e] * t->s;
                size_t rc = drift_flip_tiebreak(st->pick[j], st->pick2[j], st->cgap[j], eps);
                size_t rx = drift_flip_tiebreak(t->top1, t->top2, t->gap, eps);
                x->flips += rc != rx;
            }
            if (!isfinite(L->mit.eps_rel[e])) x->flips = -1;
        }
        L->mit.n = n;
        if (mode == 1 && L->rows == 0) break;
    }
}

void drift_aflab_free(drift_aflab_t *L)
{
    for (int ki = 0; ki < L->nKs; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            drift_flipset_free(&L->cell[ki][fi].planted);
            drift_flipset_free(&L->cell[ki][fi].ties);
            if (L->rows > 0) drift_flipset_free(&L->cell[ki][fi].realistic);
        }
}
