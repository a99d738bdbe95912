/* mitigations_report.c — the declared output of the mitigations experiment
 * (argmax_mitigations.h): the CSV tables (mitigations_tables.c), the Markdown fragment and the
 * summary, written through the kit (output.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "argmax_mitigations.h"
#include "argmax_run.h"
#include "drift.h"
#include "output.h"
#include "stats.h"

/* The fragment's tables: Markdown only, after the CSV tables. */
enum { M_MIT = AFM_NCSV, NTABLES };

#define TXT DRIFT_C_TEXT
#define CELL DRIFT_C_CELL
static const drift_col_t C_MIT[] = {TXT("mitigation"), TXT("kernel"), CELL("realistic flip rate [95% CI]"),
    CELL("planted flip rate"), CELL("changed across batch sizes"), CELL("cost ratio")};
#undef TXT
#undef CELL

#define num drift_af_num
#define HEADLINE DRIFT_AF_HEADLINE

/* Question and how to reproduce. */
static void md_question(drift_out_t *o, const drift_aflab_t *L)
{
    char ks_list[128];
    drift_aflab_ks_list(ks_list, L);
    drift_md_question(o,
        "Each mitigation's argmax is held against the exact argmax of the same rounded inputs on argmax_flip's planted "
        "pairs and argmax_flip_realistic's heads, both rerun here.");
    drift_md_reproduce(o,
        "K = %s, V = %ld, %ld planted pairs per target gap, %ld realistic hidden states per K; "
        "data/argmax_flip_mitigations*.csv",
        ks_list, L->V, L->reps, L->rows);
}

/* The batch shape. */
static void md_batch(drift_out_t *o, const drift_aflab_t *L)
{
    const drift_kset_t *ks = L->headline.kernels;
    int narrow = ks->f == DRIFT_BF16 || ks->f == DRIFT_FP16;
    drift_md_text(o,
        "\n**Batch shape.** For the LM head as a GEMM (batch x V) on %s (%d SMs), the vendor-like policy picks",
        L->device.name, L->device.sms);
    for (int sh = 0; sh < 2; sh++) {
        drift_md_text(o, "%s for N = %zu:", sh ? "; and" : "", sh ? drift_afm_sharded_n(L) : (size_t)L->V);
        for (int b = 0; b < DRIFT_AF_NBATCH; b++) {
            const drift_polrow_t *r = &L->policy_pick[L->headline.k][DRIFT_POLICY_VENDOR_LIKE * 2 * DRIFT_AF_NBATCH +
                                                                     sh * DRIFT_AF_NBATCH + b];
            drift_md_text(o, "%s `%s` (batch %ld)", b ? "," : "", r->kernel, r->batch);
        }
    }
    long ch[2][2] = {{0, 0}, {0, 0}}, n = 0; /* [logits fp32 | in the format][planted | realistic] */
    for (int out = 0; out < 2; out++)
        for (int mode = 0; mode < 2; mode++) {
            if ((mode == 1 && L->rows == 0) || (out == 1 && !narrow)) continue;
            const drift_flipset_t *st = mode ? &HEADLINE(L)->realistic : &HEADLINE(L)->planted;
            int cb[DRIFT_AF_NBATCH], q0 = DRIFT_POLICY_VENDOR_LIKE * 2 * DRIFT_AF_NBATCH + DRIFT_AF_NBATCH;
            for (int b = 0; b < DRIFT_AF_NBATCH; b++) cb[b] = HEADLINE(L)->policy_kernel[q0 + b][out];
            for (size_t i = 0; i < st->n; i++) ch[out][mode] += drift_flipset_changed(st, i, cb, DRIFT_AF_NBATCH);
            if (mode == 0) n = (long)st->n;
        }
    drift_md_text(o,
        ". The batch-invariant policy always runs `tiled:128,128,32` (seq order). With the sharded shape the "
        "vendor-like argmax (%s inputs) changed with the batch size for %ld of %ld planted pairs and %ld of %ld "
        "realistic rows with fp32 logits",
        drift_format_name(ks->f), ch[0][0], n, ch[0][1], L->rows);
    if (narrow)
        drift_md_text(o, ", and for %ld and %ld with the logits stored in %s (the coarse logits hide the order change)",
            ch[1][0], ch[1][1], drift_format_name(ks->f));
    drift_md_text(o, "; batch-invariant: 0 by construction (one order for every batch). The planted pairs' gaps are "
                     "log-uniform from 1e-7 to 1 s, so they weight near-ties far more than real heads do.\n");
}

/* The mitigations. */
static void md_mitigations(drift_out_t *o, const drift_afm_t *M, const drift_aflab_t *L)
{
    drift_md_text(o,
        "\n**Mitigations, K = %zu, %s inputs** (flip rate against the exact argmax; for the tie-breaker against the "
        "exact argmax under the same rule; eps from the baseline's law (D_0.1%% = %.3g s) and its Phi fit (sigma / s = %.3g); cost ratio against the baseline: "
        "measured for CPU emulation in this run, or modelled by policy.h's roofline):\n\n",
        L->Ks[L->headline.k], drift_format_name(L->headline.kernels->f), M->eps_rel[0], M->base_sigma);
    for (int m = 0; m < M->n; m++) {
        const drift_mit_t *P = &M->rows[0][m], *R = &M->rows[1][m];
        char rr[96] = "-", ch[64] = "-", b1[64];
        if (L->rows > 0 && R->flips >= 0) {
            double lo, hi;
            if (drift_wilson(&lo, &hi, R->flips, R->n, DRIFT_Z95)) lo = hi = NAN;
            snprintf(rr, sizeof rr, "%.3g [%.3g, %.3g]", (double)R->flips / R->n, lo, hi);
        }
        if (P->changed >= 0) snprintf(ch, sizeof ch, "%ld / %ld planted", P->changed, P->n);
        if (P->changed >= 0 && L->rows > 0)
            snprintf(ch + strlen(ch), sizeof ch - strlen(ch), ", %ld / %ld realistic", R->changed, R->n);
        drift_row_fmt(o, M_MIT, "%s | %s | %s | %s | %s | %.3g (%s)", P->name, L->headline.kernels->k[P->cfg].name, rr,
            num(b1, P->flips >= 0 ? (double)P->flips / P->n : NAN, "%.3g"), ch, P->cost, P->cost_src);
    }
    drift_md_text(o,
        "\nCosts are wall-clock and not reproducible (data/argmax_flip_mitigations_timing.csv); on a GPU the ratios "
        "differ (tensor cores are an order of magnitude faster than fp32 FMA, and an exact dot product has "
        "no hardware).\n");
}

/* The summary for people ("What you just saw", drift_out_summary): the mitigations at the
 * largest K. */
static void summary(drift_out_t *o, const drift_afm_t *M, const drift_aflab_t *L)
{
    const size_t KM = L->Ks[L->headline.k];
    const drift_kset_t *hk = L->headline.kernels;
    drift_out_summary(o,
        "fp32 logits or an exact LM head remove almost all flips, a batch-invariant kernel makes the choice\n"
        "independent of the batch but not correct, and a gap threshold only moves the coin toss to the threshold.\n"
        "Files: data/argmax_flip_mitigations*.csv, argmax_flip_mitigations.md.\n");
    drift_out_summary(o, "\nmitigations (K = %zu, %s):", KM, drift_format_name(hk->f));
    for (int m = 0; m < M->n; m++) {
        const drift_mit_t *P = &M->rows[0][m], *R = &M->rows[1][m];
        drift_out_summary(o, "\n  %-62s planted %5.3f", P->name, P->flips >= 0 ? (double)P->flips / P->n : NAN);
        if (L->rows > 0) drift_out_summary(o, "  realistic %6.4f", R->flips >= 0 ? (double)R->flips / R->n : NAN);
        drift_out_summary(o, "  cost x%.3g", P->cost);
    }
}

/* Every output file, written only after everything is computed (temporary file + rename). */
void drift_afm_write(const drift_afm_t *M, const drift_aflab_t *L)
{
    drift_table_spec_t tables[NTABLES] = {[M_MIT] = {NULL, NULL, DRIFT_SHOW_MD, C_MIT, DRIFT_COUNTOF(C_MIT)}};
    drift_afm_declare_tables(tables);
    drift_out_t out;
    drift_out_open(&out, &L->cli, tables, NTABLES, 1);
    drift_afm_write_tables(&out, M, L);
    md_question(&out, L);
    md_batch(&out, L);
    md_mitigations(&out, M, L);
    summary(&out, M, L);
    drift_out_commit(&out);
}
