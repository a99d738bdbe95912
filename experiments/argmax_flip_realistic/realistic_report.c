/* realistic_report.c — the declared output of the realistic-head experiment (argmax_realistic.h):
 * the CSV tables (realistic_tables.c), the Markdown fragment and the summary, written through the
 * kit (output.h). Every number of the fragment comes from the arrays the CSV tables are written from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argmax_realistic.h"
#include "argmax_run.h"
#include "drift.h"
#include "output.h"
#include "stats.h"

/* The fragment's tables: Markdown only, after the CSV tables. */
enum { M_REAL = AFR_NCSV, M_REFS, M_SEEDS, NTABLES };

#define TXT DRIFT_C_TEXT
#define CELL DRIFT_C_CELL
static const drift_col_t C_REAL[] = {
    TXT("format"), TXT("kernel"), CELL("flips"), CELL("rate [95% CI]"), CELL("predicted"), CELL("rows below D_0.1%")};
static const drift_col_t C_REFS[] = {TXT("format"), TXT("kernel"), CELL("input rounding"), CELL("accumulation"),
    CELL("output rounding"), CELL("total vs exact(unrounded)")};
#undef TXT
#undef CELL

#define num drift_af_num
#define AT_KMAX DRIFT_AF_AT_KMAX
#define HEADLINE DRIFT_AF_HEADLINE

/* Question, how to reproduce, the realistic heads. 0 or DRIFT_ENOMEM. */
static int md_realistic(drift_out_t *o, const drift_aflab_t *L)
{
    const size_t KM = L->Ks[L->headline.k];
    char ks_list[128];
    drift_aflab_ks_list(ks_list, L);
    drift_md_question(o,
        "Each configuration's argmax is held against the exact argmax of the same rounded inputs "
        "(superaccumulator, MPFR-checked), and against that of the unrounded inputs; the predictions read the "
        "planted pairs' fits (argmax_flip), rerun here.");
    drift_md_reproduce(o,
        "K = %s, V = %ld, %ld realistic hidden states per K, %ld planted pairs per target gap for the fits; "
        "data/argmax_flip_realistic*.csv",
        ks_list, L->V, L->rows, L->reps);
    if (L->rows <= 0) return 0;
    drift_md_text(o,
        "\n**Realistic heads, K = %zu, V = %ld, %ld hidden states** (rows whose computed argmax differs from the "
        "exact one; predicted = the expected number of flips, sum of Phi(-gap/sigma) with the planted sigma; last column: rows whose exact gap "
        "lies below the kernel's D_0.1%%):\n\n",
        KM, L->V, L->rows);
    for (int fi = 0; fi < L->nformats; fi++) {
        const drift_kset_t *ks = &AT_KMAX(L, fi)->kernels;
        const drift_flipset_t *st = &AT_KMAX(L, fi)->realistic;
        int cs[3] = {ks->def, ks->engine, ks->exact};
        for (int q = 0; q < 3; q++) {
            int c = cs[q];
            if (q == 1 && c == ks->def) continue;
            drift_flip_real_t R;
            drift_flipset_realistic(&R, st, c, &AT_KMAX(L, fi)->fits[c]);
            /* an expected count of flips far below one is "below 0.001 flips", not 1.88e-166 of them */
            char b1[64];
            const char *pred = R.predicted == 0 ? "0" : R.predicted < 1e-3 ? "< 0.001" : num(b1, R.predicted, "%.3g");
            drift_row_fmt(o, M_REAL, "%s | %s | %ld / %zu | %.3g [%.3g, %.3g] | %s | %ld (%.3g%%)",
                drift_format_name(ks->f), ks->k[c].name, R.flips, st->n, R.rate, R.lo, R.hi, pred, R.below_p001,
                100.0 * R.below_p001 / st->n);
        }
    }
    /* the gap distribution in one line */
    const drift_flipset_t *st = &HEADLINE(L)->realistic;
    double *g = malloc((st->n + 1) * sizeof *g);
    if (!g) return DRIFT_ENOMEM;
    for (size_t i = 0; i < st->n; i++) g[i] = st->t[i].rel;
    qsort(g, st->n, sizeof *g, drift_cmp_double);
    drift_md_text(o,
        "\nExact top-2 gaps of the realistic rows (%s, K = %zu), relative to s: median %.3g, 10%% below %.3g, "
        "1%% below %.3g, smallest %.3g.\n",
        drift_format_name(L->headline.kernels->f), KM, g[st->n / 2], g[st->n / 10], g[st->n / 100], g[0]);
    free(g);
    return 0;
}

/* Realistic rows against the two references. */
static void md_refs(drift_out_t *o, const drift_aflab_t *L)
{
    if (L->rows <= 0 || L->fp32_index < 0) return;
    drift_md_text(o,
        "\n**Two references, realistic heads, K = %zu** (%ld hidden states; exact(unrounded) = the exact argmax of the "
        "fp32 master h and W, exact(rounded) = that of the inputs rounded to the format; a kernel's accumulation "
        "flips are those of the same kernel with its logits kept in the accumulator, its output-rounding changes "
        "are where storing the logits changed its argmax):\n\n",
        L->Ks[L->headline.k], L->rows);
    for (int fi = 0; fi < L->nformats; fi++) {
        const drift_af_cell_t *cl = AT_KMAX(L, fi);
        int named[4], nn = drift_kset_named(named, &cl->kernels);
        for (int j = 0; j < nn; j++) {
            int c = named[j];
            if (cl->flips_vs_unrounded[c] < 0) continue;
            drift_row_fmt(o, M_REFS, "%s | %s | %ld | %ld | %ld | %ld", drift_format_name(cl->kernels.f),
                cl->kernels.k[c].name, cl->input_rounding_flips, cl->accumulation_flips[c],
                cl->output_rounding_changes[c], cl->flips_vs_unrounded[c]);
        }
    }
    drift_md_text(o, "\nThe columns count rows, not an additive budget: a row can flip under two mechanisms, and one "
                     "can undo another.\n");
}

/* The takeaway. */
static void md_takeaway(drift_out_t *o, const drift_aflab_t *L)
{
    if (L->rows <= 0) return;
    const size_t KM = L->Ks[L->headline.k];
    const drift_kset_t *hk = L->headline.kernels;
    drift_md_text(o, "\n**Takeaway.**\n\n");
    if (L->fp32_index >= 0 && HEADLINE(L)->input_rounding_flips >= 0)
        drift_md_text(o,
            "- Against the unrounded fp32 inputs, rounding h and W to %s alone changes the exact argmax of %ld of "
            "%ld realistic rows; the default kernel adds %ld flips against exact(rounded).\n",
            drift_format_name(hk->f), HEADLINE(L)->input_rounding_flips, L->rows,
            drift_flipset_flips(&HEADLINE(L)->realistic, hk->def));
    drift_md_text(o,
        "- On realistic heads (V = %ld, K = %zu, %s) %ld of %ld rows flipped with the default kernel and %ld "
        "with `%s`: in an isolated LM head, rounding the logits matters far more than the summation order (which "
        "in a whole model also moves hidden states: greedy_divergence, real_gaps).\n",
        L->V, KM, drift_format_name(hk->f), drift_flipset_flips(&HEADLINE(L)->realistic, hk->def), L->rows,
        drift_flipset_flips(&HEADLINE(L)->realistic, hk->engine), hk->k[hk->engine].name);
}

/* The realistic headline at every seed, and only what holds at all of them. */
static void md_robust(drift_out_t *o, const drift_aflab_t *L)
{
    if (L->nseeds < 2 || L->rows <= 0) return;
    const drift_kset_t *ks = L->headline.kernels;
    drift_md_text(o,
        "\n**The realistic headline at %d seeds** (K = %zu, %s inputs; seeds other than %llu rerun the realistic rows "
        "at this K only, without the GEMM policies):\n\n",
        L->nseeds, L->Ks[L->headline.k], drift_format_name(ks->f), (unsigned long long)L->seeds[0].seed);
    int all_in = 1, all_eng_gt = 1;
    long inmin = 1L << 60, inmax = -1;
    for (int i = 0; i < L->nseeds; i++) {
        const drift_af_headline_t *r = &L->seeds[i];
        drift_row_fmt(
            o, M_SEEDS, "%llu | %ld / %ld | %ld", (unsigned long long)r->seed, r->real_def, r->real_eng, r->in_flips);
        all_in &= r->in_flips > r->real_def;
        all_eng_gt &= r->real_eng > r->real_def;
        inmin = r->in_flips < inmin ? r->in_flips : inmin, inmax = r->in_flips > inmax ? r->in_flips : inmax;
    }
    char rows[64];
    if (inmin < inmax)
        snprintf(rows, sizeof rows, "%ld to %ld", inmin, inmax);
    else
        snprintf(rows, sizeof rows, "%ld", inmin);
    if (all_in)
        drift_md_text(o,
            "\nAt every seed: rounding the inputs alone changes the exact argmax of %s of %ld realistic rows, "
            "more than the default kernel's accumulation flips at every seed; ",
            rows, L->rows);
    else
        drift_md_text(o,
            "\nAt every seed: input rounding alone changes the exact argmax of %s of %ld realistic rows (not more than "
            "the default kernel's flips at every seed); ",
            rows, L->rows);
    drift_md_text(o, "%s.\n",
        all_eng_gt ? "stored logits flip more realistic rows than fp32 logits at every seed"
                   : "stored logits do not flip more realistic rows than fp32 logits at every seed");
}

/* The summary for people ("What you just saw", drift_out_summary): the realistic flips at the
 * largest K. */
static void summary(drift_out_t *o, const drift_aflab_t *L)
{
    const size_t KM = L->Ks[L->headline.k];
    drift_out_summary(o,
        "on realistic heads (weights N(0, 1/K), hidden states with outlier channels) the exact top-2 gap is rarely\n"
        "below the fp32-logit kernels' critical gaps, so they seldom flip; stored bf16 or fp16 logits flip the rows\n"
        "within about one output ulp. Planted %.1f s (the fits), realistic %.1f s. Files:\n"
        "data/argmax_flip_realistic*.csv, argmax_flip_realistic.md; plots: ./lab plot argmax_flip_realistic.\n",
        L->seconds.planted, L->seconds.realistic);
    if (L->rows <= 0) return;
    drift_out_summary(o, "\nrealistic heads (K = %zu, V = %ld, %ld rows): flips", KM, L->V, L->rows);
    for (int fi = 0; fi < L->nformats; fi++) {
        const drift_kset_t *ks = &AT_KMAX(L, fi)->kernels;
        const drift_flipset_t *st = &AT_KMAX(L, fi)->realistic;
        drift_out_summary(o, "%s %s %ld", fi ? ";" : "", drift_format_name(ks->f), drift_flipset_flips(st, ks->def));
        if (ks->engine != ks->def)
            drift_out_summary(o, " (%ld with %s)", drift_flipset_flips(st, ks->engine), ks->k[ks->engine].name);
    }
    drift_out_summary(o, "\n");
}

/* Every output file, written only after everything is computed (temporary file + rename). */
int drift_afr_write(const drift_aflab_t *L)
{
    const drift_col_t seeds[] = {DRIFT_C_CELL("seed"), DRIFT_C_CELL("realistic flips: default / stored logits"),
        DRIFT_C_CELL("input rounding alone")};
    drift_table_spec_t tables[NTABLES] = {[M_REAL] = {NULL, NULL, DRIFT_SHOW_MD, C_REAL, DRIFT_COUNTOF(C_REAL)},
        [M_REFS] = {NULL, NULL, DRIFT_SHOW_MD, C_REFS, DRIFT_COUNTOF(C_REFS)},
        [M_SEEDS] = {NULL, NULL, DRIFT_SHOW_MD, seeds, DRIFT_COUNTOF(seeds)}};
    drift_afr_declare_tables(tables);
    drift_out_t out;
    drift_out_open(&out, &L->cli, tables, NTABLES, 1);
    drift_afr_write_tables(&out, L);
    if (md_realistic(&out, L)) return DRIFT_ENOMEM;
    md_refs(&out, L);
    md_takeaway(&out, L);
    md_robust(&out, L);
    summary(&out, L);
    drift_out_commit(&out);
    return 0;
}
