/* splitk_report.c — the declared output of the matmul_drift_splitk experiment (splitk_lab.h):
 * every number from the lab's rows. */
#include "splitk_lab.h"
#include "drift.h"
#include "output.h"

#include <stdio.h>

#define SPLIT_MAX DRIFT_MM_SPLIT_MAX

void drift_splitk_write(const drift_splitk_lab_t *L)
{
    const drift_mm_split_sweep_t *W = L->W;
    const size_t M = W->M, N = W->N, MN = M * N, KS = W->K, nsr = (size_t)W->nd * W->nf * SPLIT_MAX,
                 ndr = (size_t)W->nd * W->nf;
    const drift_dist_t *dists = W->dists;
    const drift_format_t *in = W->in;
    const drift_mm_split_t *srows = L->srows;
    const drift_mm_distinct_t *drows = L->drows;
    enum { T_SPLIT, T_DIST, T_SHOW_DIST };
    static const drift_col_t SPLIT[] = {DRIFT_C_TEXT("dist"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("acc"),
        DRIFT_C_INT("K"), DRIFT_C_INT("S"), DRIFT_C_TEXT("kernel"), DRIFT_C_NUM("nmse", "%.6e"),
        DRIFT_C_NUM("err_norm_mean", "%.6e"), DRIFT_C_INT("changed"), DRIFT_C_HEX("c00_hex")};
    static const drift_col_t DIST[] = {DRIFT_C_TEXT("dist"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("acc"),
        DRIFT_C_INT("K"), DRIFT_C_INT("outputs"), DRIFT_C_NUM("mean_distinct", "%.4f"), DRIFT_C_INT("max_distinct"),
        DRIFT_C_INT("changed_any")};
    static const drift_col_t SHOW_DIST[] = {DRIFT_C_TEXT("dist"), DRIFT_C_TEXT("format"),
        DRIFT_C_NUM("distinct results per output (mean)", "%.1f"), DRIFT_C_INT("max")};
    char title[256];
    snprintf(title, sizeof title, "distinct results per output over splitk:1..%d (K = %zu)", SPLIT_MAX, KS);
    const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, SPLIT, 10}, {"_distinct.csv", NULL, 0, DIST, 8},
        {NULL, title, DRIFT_SHOW_STDOUT, SHOW_DIST, 4}};
    drift_out_t out;
    drift_out_open(&out, L->cli, TABLES, 3, 1);
    drift_md_question(&out, "Every result is held against the exact product of the same rounded inputs (a "
                            "superaccumulator, correctly rounded), so only the arithmetic of the product is measured.");
    drift_md_reproduce(&out, "data/matmul_drift_splitk*.csv; %zu x %zu outputs, K = %zu", M, N, KS);
    drift_out_meta(&out, T_SPLIT, "table",
        "split-K factors S = 1..%d (splitk:S, seq combination), K = %zu, fp32 accumulation", SPLIT_MAX, KS);
    drift_out_meta(&out, T_SPLIT, "changed", "outputs (of %zu) whose value differs from S = 1, which is seq", MN);
    for (size_t t = 0; t < nsr; t++) {
        const drift_mm_split_t *r = &srows[t];
        char kspec[32];
        snprintf(kspec, sizeof kspec, "splitk:%d", r->S);
        drift_row(&out, T_SPLIT, DRIFT_TXT(drift_dist_name(dists[r->dist])),
            DRIFT_TXT(drift_format_name(in[r->format])), DRIFT_TXT("fp32"), DRIFT_INT(KS), DRIFT_INT(r->S),
            DRIFT_TXT(kspec), DRIFT_NUM(r->nmse), DRIFT_NUM(r->err_mean), DRIFT_INT(r->changed), DRIFT_NUM(r->c00));
    }
    drift_out_meta(&out, T_DIST, "table",
        "distinct values each output takes over S = 1..%d (K = %zu, fp32 accumulation)", SPLIT_MAX, KS);
    for (size_t t = 0; t < ndr; t++) {
        const drift_mm_distinct_t *q = &drows[t];
        const char *dn = drift_dist_name(dists[q->dist]), *fn = drift_format_name(in[q->format]);
        drift_row(&out, T_DIST, DRIFT_TXT(dn), DRIFT_TXT(fn), DRIFT_TXT("fp32"), DRIFT_INT(KS), DRIFT_INT(MN),
            DRIFT_NUM(q->mean_distinct), DRIFT_INT(q->max_distinct), DRIFT_INT(q->changed_any));
        drift_row(
            &out, T_SHOW_DIST, DRIFT_TXT(dn), DRIFT_TXT(fn), DRIFT_NUM(q->mean_distinct), DRIFT_INT(q->max_distinct));
    }

    drift_md_text(&out, "**Takeaway.**\n\n");
    for (size_t t = 0, said = 0; t < ndr; t++) {
        const drift_mm_distinct_t *q = &drows[t];
        if (in[q->format] != DRIFT_BF16 && !(ndr == 1)) continue;
        if (said++) { /* the sentence once; the next distribution in its numbers */
            drift_md_text(&out, "- %s %s inputs: %.1f on average (at most %d); %ld of %zu change.\n",
                drift_dist_name(dists[q->dist]), drift_format_name(in[q->format]), q->mean_distinct, q->max_distinct,
                q->changed_any, MN);
            continue;
        }
        drift_md_text(&out,
            "- %s inputs, %s, K = %zu: over S = 1..%d each output takes %.1f distinct values on average "
            "(at most %d); %ld of %zu outputs change.\n",
            drift_format_name(in[q->format]), drift_dist_name(dists[q->dist]), KS, SPLIT_MAX, q->mean_distinct,
            q->max_distinct, q->changed_any, MN);
    }
    drift_out_commit(&out);
}
