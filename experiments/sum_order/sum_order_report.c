/* sum_order_report.c — the declared output of the sum_order experiment (sum_order_lab.h):
 * every number from the lab's arrays. */
#include "sum_order_lab.h"
#include "drift.h"
#include "gen.h"
#include "output.h"

#include <stdio.h>
#include <string.h>

#define MAX_SETTINGS (2 * DRIFT_NFORMATS)

/* "a b c": the names of a list, space-separated, for a metadata line. */
static void join(char *buf, size_t size, const char *const *names, int n)
{
    buf[0] = 0;
    for (int i = 0; i < n; i++) snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? " " : "", names[i]);
}

void drift_sum_order_write(const drift_sum_order_lab_t *L)
{
    const long trials = L->trials;
    const int log2_min = L->log2_min, log2_max = L->log2_max, nn = log2_max - log2_min + 1, no = L->no, ns = L->ns,
              nd = DRIFT_NDISTS, SLOPE_FROM_LOG2N = L->slope_from;
    const drift_order_t *O = L->O;
    const char *const *ospec = L->ospec;
    const drift_sum_setting_t *S = L->S;
    const double lambda = L->lambda, umax = L->umax;
    const size_t nmax = (size_t)1 << log2_max;
    const drift_sum_summary_t *sm = L->sm;
    const double *slope = L->slope;
    const drift_sum_tally_t tally = L->tally;
    const char *sname[MAX_SETTINGS];
    for (int s = 0; s < ns; s++) sname[s] = S[s].name;
#define SM(d, s, o, li) sm[(((size_t)(d)*ns + (s)) * no + (o)) * nn + (li)]
#define SLOPE(d, s, o) slope[((size_t)(d)*ns + (s)) * no + (o)]
    /* ---- write ---- */
    enum { T_ERROR, T_SUMMARY, T_MD };
    static const drift_col_t ERROR[] = {DRIFT_C_TEXT("dist"), DRIFT_C_INT("n"), DRIFT_C_INT("trial"),
        DRIFT_C_TEXT("format"), DRIFT_C_TEXT("acc"), DRIFT_C_TEXT("setting"), DRIFT_C_TEXT("order"),
        DRIFT_C_HEX("result_hex"), DRIFT_C_HEX("exact_hex"), DRIFT_C_NUM("sum_abs", "%.9e"),
        DRIFT_C_NUM("abs_err", "%.6e"), DRIFT_C_NUM("err_sumabs", "%.6e"), DRIFT_C_NUM("rel_err", "%.6e")};
    static const drift_col_t SUMMARY[] = {DRIFT_C_TEXT("dist"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("acc"),
        DRIFT_C_TEXT("setting"), DRIFT_C_TEXT("order"), DRIFT_C_INT("n"), DRIFT_C_INT("log2n"), DRIFT_C_INT("trials"),
        DRIFT_C_NUM("mean_err_sumabs", "%.6e"), DRIFT_C_NUM("max_err_sumabs", "%.6e"),
        DRIFT_C_NUM("mean_rel_err", "%.6e"), DRIFT_C_NUM("bound_det", "%.6e"), DRIFT_C_NUM("bound_prob", "%.6e"),
        DRIFT_C_NUM("prob", "%.6f"), DRIFT_C_INT("overflows"), DRIFT_C_NUM("slope", "%.4f")};
    /* the fragment's table: the error at the largest n per setting */
    drift_col_t colB[1 + MAX_SETTINGS] = {DRIFT_C_TEXT("order")};
    for (int s = 0; s < ns; s++) colB[1 + s] = (drift_col_t)DRIFT_C_CELL(S[s].name);
    char title[512];
    snprintf(title, sizeof title,
        "**Error at the largest n** (error / sum|x| at n = 2^%d, uniform [0,1) inputs; mean of %ld trials; "
        "in brackets the growth exponent: error ~ n^slope over n = 2^%d..2^%d; `inf` = the sum overflowed):",
        log2_max, trials, SLOPE_FROM_LOG2N, log2_max);
    const drift_table_spec_t TABLES[] = {{"_error.csv", NULL, 0, ERROR, 13}, {"_summary.csv", NULL, 0, SUMMARY, 16},
        {NULL, title, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, colB, 1 + ns}};
    drift_out_t out;
    drift_out_open(&out, L->cli, TABLES, 3, 1);
    drift_md_question(&out, "Every result is held against the exact sum of the same rounded inputs (superaccumulator, "
                            "cross-checked against MPFR in the tests).");
    drift_md_reproduce(&out,
        "data/sum_order_error.csv, data/sum_order_summary.csv; %ld trials per point, n = 2^%d..2^%d", trials, log2_min,
        log2_max);
    char b1[64], b2[64], orders_list[DRIFT_MAX_ORDERS * (DRIFT_ORDER_SPEC_MAX + 1)], settings_list[MAX_SETTINGS * 25];
    join(orders_list, sizeof orders_list, ospec, no);
    join(settings_list, sizeof settings_list, sname, ns);

    drift_out_meta(&out, T_ERROR, "table",
        "error of every order for every vector: one row per (dist, n, "
        "trial, setting, order)");
    drift_out_meta(&out, T_ERROR, "vectors",
        "drift_gen_fill(dist) from the Philox stream (seed, \"sum_order\", "
        "point = 64 * dist + log2 n, trial), rounded to the input format (RNE)");
    drift_out_meta(&out, T_ERROR, "errors",
        "abs_err = |result - exact sum| (exact, rounded up); err_sumabs = "
        "abs_err / sum|x|; rel_err = abs_err / |exact|");
    drift_out_meta(&out, T_ERROR, "orders", "%s", orders_list);
    drift_out_meta(&out, T_ERROR, "settings", "%s", settings_list);
    for (int d = 0; d < nd; d++)
        for (int li = 0; li < nn; li++)
            for (int tr = 0; tr < trials; tr++)
                for (int s = 0; s < ns; s++)
                    for (int o = 0; o < no; o++) {
                        const drift_sum_cell_t *c = &L->cells[drift_sum_sweep_at(L->W, d, li, tr, s, o)];
                        drift_row(&out, T_ERROR, DRIFT_TXT(drift_dist_name((drift_dist_t)d)),
                            DRIFT_INT((size_t)1 << (log2_min + li)), DRIFT_INT(tr),
                            DRIFT_TXT(drift_format_name(S[s].in)), DRIFT_TXT(drift_format_name(S[s].acc)),
                            DRIFT_TXT(S[s].name), DRIFT_TXT(ospec[o]), DRIFT_NUM(c->m.result), DRIFT_NUM(c->exact),
                            DRIFT_NUM(c->sum_abs), DRIFT_NUM(c->m.abs_err), DRIFT_NUM(c->m.abs_err / c->sum_abs),
                            DRIFT_NUM(c->m.rel_err));
                    }

    drift_out_meta(&out, T_SUMMARY, "table",
        "per (dist, setting, order, n): mean and max over %ld trials of "
        "error / sum|x|, mean relative error, and the bounds on error / sum|x|",
        trials);
    drift_out_meta(&out, T_SUMMARY, "bound_det",
        "gamma_k = k u / (1 - k u), k = drift_order_depth (order.h); "
        "kahan/neumaier 2u + (4n+4) u^2 (inf once n u > 1/8); inf when "
        "k u >= 1; u = unit roundoff of the accumulator");
    drift_out_meta(&out, T_SUMMARY, "bound_prob",
        "exp(lambda sqrt(k) u + k u^2/(1-u)) - 1 (Higham & Mary 2019), "
        "holding with probability >= prob = 1 - 2n exp(-lambda^2 "
        "(1-u)^2/2) under their independent-error model");
    drift_out_meta(&out, T_SUMMARY, "lambda", "%.2f", lambda);
    drift_out_meta(&out, T_SUMMARY, "probability", "%.6f at n = 2^%d for u = %g (and higher for smaller n or u)",
        drift_bound_prob(lambda, nmax, umax), log2_max, umax);
    drift_out_meta(&out, T_SUMMARY, "orders", "%s", orders_list);
    drift_out_meta(&out, T_SUMMARY, "settings", "%s", settings_list);
    drift_out_meta(&out, T_SUMMARY, "slope",
        "growth exponent of mean error / sum|x| in n, least squares over n >= "
        "2^%d (the same value on every row of a curve)",
        SLOPE_FROM_LOG2N);
    for (int d = 0; d < nd; d++)
        for (int s = 0; s < ns; s++)
            for (int o = 0; o < no; o++)
                for (int li = 0; li < nn; li++) {
                    const drift_sum_summary_t *q = &SM(d, s, o, li);
                    drift_row(&out, T_SUMMARY, DRIFT_TXT(drift_dist_name((drift_dist_t)d)),
                        DRIFT_TXT(drift_format_name(S[s].in)), DRIFT_TXT(drift_format_name(S[s].acc)),
                        DRIFT_TXT(S[s].name), DRIFT_TXT(ospec[o]), DRIFT_INT((size_t)1 << (log2_min + li)),
                        DRIFT_INT(log2_min + li), DRIFT_INT(trials), DRIFT_NUM(q->mean_e), DRIFT_NUM(q->max_e),
                        DRIFT_NUM(q->mean_rel), DRIFT_NUM(q->det), DRIFT_NUM(q->prob), DRIFT_NUM(q->p),
                        DRIFT_INT(q->overflow), DRIFT_NUM(SLOPE(d, s, o)));
                }

    /* ---- the fragment's tables and takeaway: every number from the arrays above ---- */
    const int du = DRIFT_DIST_UNIFORM;
    char cell[MAX_SETTINGS + 1][160];
    drift_cell_t row[MAX_SETTINGS + 1];
    for (int o = 0; o < no; o++) {
        row[0] = DRIFT_TXT(ospec[o]);
        for (int s = 0; s < ns; s++) {
            drift_fmt_num(b1, sizeof b1, SM(du, s, o, nn - 1).mean_e, "%.2e");
            drift_fmt_num(b2, sizeof b2, SLOPE(du, s, o), "%.2f");
            snprintf(cell[1 + s], sizeof cell[1 + s], "%s [%s]", b1, b2);
            row[1 + s] = DRIFT_TXT(cell[1 + s]);
        }
        drift_row_cells(&out, T_MD, row, 1 + ns);
    }
    drift_md_end(&out, T_MD);
    drift_md_text(&out, "**Takeaway.**\n\n");
    int iseq = -1, ipw = -1, ikahan = -1, s0 = 0; /* s0: the first setting with an fp32 accumulator */
    for (int o = no - 1; o >= 0; o--) {
        if (O[o].kind == DRIFT_ORDER_SEQ) iseq = o;
        if (O[o].kind == DRIFT_ORDER_PAIRWISE) ipw = o;
        if (O[o].kind == DRIFT_ORDER_KAHAN || O[o].kind == DRIFT_ORDER_NEUMAIER) ikahan = o;
    }
    for (int s = ns - 1; s >= 0; s--)
        if (S[s].acc == DRIFT_FP32) s0 = s;
    if (iseq >= 0) {
        drift_md_text(&out,
            "- On uniform inputs accumulated in %s, seq's error grows like n^%.2f (the worst-case bound like n^1)",
            S[s0].name, SLOPE(du, s0, iseq));
        if (ipw >= 0) drift_md_text(&out, ", pairwise's like n^%.2f", SLOPE(du, s0, ipw));
        drift_md_text(&out, "; at n = 2^%d seq errs by %.2e of sum|x|", log2_max, SM(du, s0, iseq, nn - 1).mean_e);
        if (ipw >= 0) drift_md_text(&out, ", pairwise by %.2e", SM(du, s0, ipw, nn - 1).mean_e);
        if (ikahan >= 0) drift_md_text(&out, ", %s by %.2e", ospec[ikahan], SM(du, s0, ikahan, nn - 1).mean_e);
        drift_md_text(&out, ".\n");
        for (int s = 0, said = 0; s < ns; s++) {
            if (S[s].acc == DRIFT_FP32 || S[s].acc == DRIFT_FP64) continue;
            int sw = -1; /* the same inputs in an fp32 accumulator */
            for (int s2 = 0; s2 < ns; s2++)
                if (S[s2].in == S[s].in && S[s2].acc == DRIFT_FP32) sw = s2;
            drift_fmt_num(b1, sizeof b1, SM(du, s, iseq, nn - 1).mean_rel, "%.3g");
            drift_md_text(&out, "- %s inputs accumulated in %s: seq's relative error at n = 2^%d is %s%s",
                drift_format_name(S[s].in), drift_format_name(S[s].acc), log2_max, b1,
                said++ ? "" : " (the running sum swallows terms smaller than half its spacing)"); /* said once */
            drift_fmt_num(b2, sizeof b2, sw >= 0 ? SM(du, sw, iseq, nn - 1).mean_rel : 0, "%.3g");
            drift_md_text(&out, "%s%s.\n", sw >= 0 ? "; the same inputs accumulated in fp32: " : "", sw >= 0 ? b2 : "");
        }
    }
    drift_md_text(&out,
        "- Bounds: the deterministic bound held for %ld of %ld finite results (%ld sums overflowed); the "
        "probabilistic bound with lambda = %.2f held for %ld of %ld",
        tally.det_ok, tally.det_total, tally.overflow, lambda, tally.prob_ok, tally.prob_total);
    if (tally.prob_ok < tally.prob_total)
        drift_md_text(&out,
            "; of its %ld failures, %ld have a bf16 or fp16 accumulator, %ld of them with a relative error "
            "of at least 1/4 (stagnation: the errors are neither independent nor of mean zero, as the bound "
            "assumes)",
            tally.prob_total - tally.prob_ok, tally.prob_fail_narrow, tally.prob_fail_stagnant);
    drift_md_text(&out, ".\n");
    drift_out_commit(&out);
}
