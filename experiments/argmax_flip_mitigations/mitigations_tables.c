/* mitigations_tables.c — the CSV tables of the mitigations experiment (argmax_mitigations.h):
 * the mitigations, the argmax across batch sizes under the GEMM policies, and the wall-clock
 * costs; declared once (output.h) and written from a finished run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "argmax_mitigations.h"
#include "argmax_run.h"
#include "drift.h"
#include "output.h"
#include "stats.h"

static const drift_col_t C_BATCH[] = {DRIFT_C_TEXT("mode"), DRIFT_C_INT("K"), DRIFT_C_TEXT("format"),
    DRIFT_C_TEXT("logits"), DRIFT_C_TEXT("policy"), DRIFT_C_INT("n_policy"), DRIFT_C_INT("batch"),
    DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("order"), DRIFT_C_INT("trials"), DRIFT_C_INT("flips"),
    DRIFT_C_INT("changed_vs_batch1"), DRIFT_C_NUM("modelled_cost", "%.6g")};
static const drift_col_t C_MIT[] = {DRIFT_C_TEXT("mode"), DRIFT_C_INT("K"), DRIFT_C_TEXT("format"),
    DRIFT_C_QUOTED("mitigation"), DRIFT_C_TEXT("kernel"), DRIFT_C_INT("trials"), DRIFT_C_INT("flips"),
    DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo", "%.6g"), DRIFT_C_NUM("hi", "%.6g"),
    DRIFT_C_INT("changed_across_batches")};
static const drift_col_t C_TIMING[] = {DRIFT_C_QUOTED("what"), DRIFT_C_TEXT("value"), DRIFT_C_TEXT("unit")};

/* The argmax across batch sizes under the two GEMM policies. */
static void write_batch(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AFM_BATCH, "table",
        "the LM head as a GEMM of batch M x V: the kernel each policy picks (lib/ops/policy.h, device %s, %d SMs), "
        "and how often the argmax differs from the exact one and from the batch-1 result",
        L->device.name, L->device.sms);
    drift_out_meta(o, AFM_BATCH, "shape",
        "n_policy = N the policy sees: V, or V/%ld (a vocabulary-parallel head split over %ld devices)", L->shard,
        L->shard);
    for (int mode = 0; mode < 2; mode++)
        for (int ki = 0; ki < L->nKs; ki++)
            for (int fi = 0; fi < L->nformats; fi++) {
                const drift_kset_t *ks = &L->cell[ki][fi].kernels;
                const drift_flipset_t *st = mode ? &L->cell[ki][fi].realistic : &L->cell[ki][fi].planted;
                if (mode && L->rows == 0) continue;
                for (int out = 0; out < 2; out++) {
                    if (out && ks->f != DRIFT_BF16 && ks->f != DRIFT_FP16) continue;
                    for (int q = 0; q < L->npolicy_rows; q++) {
                        int c = L->cell[ki][fi].policy_kernel[q][out];
                        /* batch 1 of the same policy and shape */
                        int c1 = L->cell[ki][fi].policy_kernel[q - (int)(q % DRIFT_AF_NBATCH)][out];
                        long fl = 0, ch = 0;
                        for (size_t i = 0; i < st->n; i++) {
                            fl += st->flip[i * st->ncfg + c];
                            ch += st->pick[i * st->ncfg + c] != st->pick[i * st->ncfg + c1];
                        }
                        const drift_polrow_t *P = &L->policy_pick[ki][q];
                        char ord[DRIFT_ORDER_SPEC_MAX];
                        drift_order_print(ord, sizeof ord, &P->order);
                        size_t N = P->shard ? drift_afm_sharded_n(L) : (size_t)L->V;
                        drift_row(o, AFM_BATCH, DRIFT_TXT(mode ? "realistic" : "planted"), DRIFT_INT(L->Ks[ki]),
                            DRIFT_TXT(drift_format_name(ks->f)), DRIFT_TXT(out ? drift_format_name(ks->f) : "fp32"),
                            DRIFT_TXT(drift_policy_name(P->pol)), DRIFT_INT(N), DRIFT_INT(P->batch),
                            DRIFT_TXT(P->kernel), DRIFT_TXT(ord), DRIFT_INT(st->n), DRIFT_INT(fl), DRIFT_INT(ch),
                            DRIFT_NUM(P->cost));
                    }
                }
            }
}

/* The mitigations table. */
static void write_mitigations(drift_out_t *o, const drift_afm_t *M, const drift_aflab_t *L)
{
    drift_out_meta(o, AFM_MIT, "table",
        "mitigations at K = %zu, input format %s: flip rate against the exact argmax (for (d): "
        "against the exact argmax under the same tie rule)",
        L->Ks[L->headline.k], drift_format_name(L->headline.kernels->f));
    drift_out_meta(o, AFM_MIT, "baseline", "%s", L->headline.kernels->k[L->headline.kernels->engine].name);
    drift_out_meta(o, AFM_MIT, "eps",
        "(d) eps = %.6e times s (the baseline's D_0.1%% from the law of its mechanism, "
        "argmax_flip_laws.csv) and %.6e times s (10 sigma of its Phi fit, sigma_rel = %.6e)",
        M->eps_rel[0], M->eps_rel[1], M->base_sigma);
    drift_out_meta(o, AFM_MIT, "changed",
        "(c): trials whose argmax differs between batch sizes 1, 8, 64, 256, 1024 (N = V/%ld); -1: not applicable",
        L->shard);
    drift_out_meta(
        o, AFM_MIT, "cost", "cost ratios are wall-clock measurements and live in argmax_flip_mitigations_timing.csv");
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 1 && L->rows == 0) break;
        for (int m = 0; m < M->n; m++) {
            const drift_mit_t *x = &M->rows[mode][m];
            double lo = NAN, hi = NAN;
            if (x->flips >= 0 && drift_wilson(&lo, &hi, x->flips, x->n, DRIFT_Z95)) lo = hi = NAN;
            drift_row(o, AFM_MIT, DRIFT_TXT(mode ? "realistic" : "planted"), DRIFT_INT(L->Ks[L->headline.k]),
                DRIFT_TXT(drift_format_name(L->headline.kernels->f)), DRIFT_TXT(x->name),
                DRIFT_TXT(L->headline.kernels->k[x->cfg].name), DRIFT_INT(x->n), DRIFT_INT(x->flips),
                DRIFT_NUM(x->flips >= 0 ? (double)x->flips / x->n : NAN), DRIFT_NUM(lo), DRIFT_NUM(hi),
                DRIFT_INT(x->changed));
        }
    }
}

/* Timing: the one non-reproducible file. */
static void write_timing(drift_out_t *o, const drift_afm_t *M, const drift_aflab_t *L)
{
    char v[32], unit[64];
    drift_out_meta(o, AFM_TIMING, "table", "wall-clock costs of this run: NOT reproducible (machine, load, threads)");
    snprintf(unit, sizeof unit, "us per logit (K = %zu)", L->Ks[L->headline.k]);
    for (int m = 0; m < M->ncost; m++) {
        snprintf(v, sizeof v, "%.4g", M->cost[m].us);
        drift_row(o, AFM_TIMING, DRIFT_TXT(M->cost[m].what), DRIFT_TXT(v), DRIFT_TXT(unit));
    }
    const char *what[] = {"planted phase", "realistic phase", "total"};
    const double t[] = {L->seconds.planted, L->seconds.realistic, L->seconds.total};
    for (int m = 0; m < 3; m++) {
        snprintf(v, sizeof v, "%.3f", t[m]);
        drift_row(o, AFM_TIMING, DRIFT_TXT(what[m]), DRIFT_TXT(v), DRIFT_TXT("s"));
    }
}

void drift_afm_declare_tables(drift_table_spec_t *tables)
{
    const drift_table_spec_t t[AFM_NCSV] = {{".csv", NULL, 0, C_MIT, DRIFT_COUNTOF(C_MIT)},
        {"_batch.csv", NULL, 0, C_BATCH, DRIFT_COUNTOF(C_BATCH)},
        {"_timing.csv", NULL, 0, C_TIMING, DRIFT_COUNTOF(C_TIMING)}};
    memcpy(tables, t, sizeof t);
}

void drift_afm_write_tables(drift_out_t *o, const drift_afm_t *M, const drift_aflab_t *L)
{
    write_batch(o, L);
    write_mitigations(o, M, L);
    write_timing(o, M, L);
}
