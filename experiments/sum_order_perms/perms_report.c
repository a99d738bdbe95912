/* perms_report.c — the declared output of the sum_order_perms experiment (perms_lab.h): every
 * number from the lab's arrays. */
#include "perms_lab.h"
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

void drift_sum_perms_write(const drift_sum_perms_lab_t *L)
{
    const long perms = L->perms;
    const int no = L->no, ns = L->ns, nsa = L->nsa, nd = DRIFT_NDISTS, NCASES = L->ncases, PERM_N = L->perm_n;
    const char *const *ospec = L->ospec;
    const drift_sum_setting_t *S = L->S, *sa_ = L->SA;
    const drift_sum_perm_t *P = L->P;
    const char *sname[MAX_SETTINGS];
    for (int s = 0; s < ns; s++) sname[s] = S[s].name;
    /* ---- write ---- */
    enum { T_CLASS, T_PERMS, T_MD_A, T_MD_B };
    static const drift_col_t CLASS[] = {DRIFT_C_TEXT("case"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("acc"),
        DRIFT_C_TEXT("order"), DRIFT_C_INT("n"), DRIFT_C_HEX("result_hex"), DRIFT_C_NUM("result", NULL),
        DRIFT_C_HEX("exact_hex"), DRIFT_C_NUM("exact", NULL), DRIFT_C_HEX("cr_hex"), DRIFT_C_NUM("abs_err", "%.6e"),
        DRIFT_C_NUM("rel_err", "%.6e"), DRIFT_C_NUM("ulp_err", "%.6g")};
    static const drift_col_t PERMS[] = {DRIFT_C_TEXT("dist"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("acc"),
        DRIFT_C_TEXT("setting"), DRIFT_C_INT("n"), DRIFT_C_INT("perms"), DRIFT_C_INT("distinct"),
        DRIFT_C_HEX("result_hex"), DRIFT_C_NUM("result", NULL), DRIFT_C_NUM("ulps", "%.6f"), DRIFT_C_INT("count"),
        DRIFT_C_NUM("fraction", "%.6f"), DRIFT_C_INT("cr")};
    /* the fragment's tables: (a) the textbook case per order, (b) distinct results per distribution */
    drift_col_t colA[2 + DRIFT_MAX_ORDERS] = {DRIFT_C_TEXT("inputs/acc"), DRIFT_C_CELL("exact")};
    drift_col_t colB[1 + DRIFT_NDISTS] = {DRIFT_C_TEXT("inputs/acc")};
    for (int o = 0; o < no; o++) colA[2 + o] = (drift_col_t)DRIFT_C_CELL(ospec[o]);
    for (int d = 0; d < nd; d++) colB[1 + d] = (drift_col_t)DRIFT_C_CELL(drift_dist_name((drift_dist_t)d));
    char title[2][512];
    snprintf(title[0], sizeof title[0],
        "**(a) The textbook case** %s, in each order (result; exact sum of the rounded "
        "inputs in the first column; all cases in data/sum_order_perms_classroom.csv):",
        L->case_desc[0]);
    snprintf(title[1], sizeof title[1],
        "**(b) Random orders** of one vector (n = %d), %ld orders: distinct results / share equal "
        "to the correctly rounded sum",
        PERM_N, perms);
    const int SHOW = DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT;
    const drift_table_spec_t TABLES[] = {{"_classroom.csv", NULL, 0, CLASS, 13}, {".csv", NULL, 0, PERMS, 13},
        {NULL, title[0], SHOW, colA, 2 + no}, {NULL, title[1], SHOW, colB, 1 + nd}};
    drift_out_t out;
    drift_out_open(&out, L->cli, TABLES, 4, 1);
    drift_md_question(&out, "Every result is held against the exact sum of the same rounded inputs (superaccumulator, "
                            "cross-checked against MPFR in the tests).");
    drift_md_reproduce(&out, "data/sum_order_perms*.csv; %ld permutations", perms);
    char settings_list[MAX_SETTINGS * 25];
    join(settings_list, sizeof settings_list, sname, ns);

    drift_out_meta(&out, T_CLASS, "table", "(a) classroom cases: every order, every setting (inputs/accumulator)");
    drift_out_meta(&out, T_CLASS, "inputs",
        "the decimal values rounded to the input format (RNE); every step of the "
        "sum rounded to the accumulator (RNE)");
    drift_out_meta(&out, T_CLASS, "exact",
        "the exact sum of the rounded inputs rounded to double (RNE); cr = "
        "rounded to the accumulator format; errors against the exact sum, "
        "rounded up; ulp = accumulator spacing at exact");
    for (int c = 0; c < NCASES; c++)
        for (int s = 0; s < nsa; s++)
            for (int o = 0; o < no; o++) {
                const drift_sum_err_t *m = &L->cls[((size_t)c * nsa + s) * no + o];
                double ex = L->cls_exact[c * nsa + s];
                drift_row(&out, T_CLASS, DRIFT_TXT(L->case_name[c]), DRIFT_TXT(drift_format_name(sa_[s].in)),
                    DRIFT_TXT(drift_format_name(sa_[s].acc)), DRIFT_TXT(ospec[o]), DRIFT_INT(L->cls_n[c]),
                    DRIFT_NUM(m->result), DRIFT_NUM(m->result), DRIFT_NUM(ex), DRIFT_NUM(ex),
                    DRIFT_NUM(L->cls_cr[c * nsa + s]), DRIFT_NUM(m->abs_err), DRIFT_NUM(m->rel_err),
                    DRIFT_NUM(m->ulp_err));
            }

    drift_out_meta(&out, T_PERMS, "table",
        "(b) distinct results of one vector (n = %d) summed seq in %ld random "
        "orders; one row per distinct result",
        PERM_N, perms);
    drift_out_meta(&out, T_PERMS, "vectors",
        "drift_gen_fill(dist) from the Philox stream (seed, "
        "\"sum_order.perms\", point = dist, 0), rounded to the input format");
    drift_out_meta(&out, T_PERMS, "orders", "random:SEED with SEED = seed * 2^32 + r, r = 0 .. perms-1");
    drift_out_meta(&out, T_PERMS, "columns",
        "ulps = (result - exact) / spacing of the accumulator at exact "
        "(exact arithmetic, rounded to double); cr = 1 for the correctly "
        "rounded sum (exact rounded once to the accumulator, RNE)");
    drift_out_meta(&out, T_PERMS, "settings", "%s", settings_list);
    for (size_t t = 0; t < (size_t)nd * ns; t++) {
        int d = (int)(t / ns), s = (int)(t % ns);
        for (int k = 0; k < P[t].nbins; k++) {
            double v = P[t].bins[k].v;
            drift_xacc_t e = P[t].x;
            drift_xacc_add(&e, -v); /* exact - result, exactly */
            double ulps = -drift_xacc_round(&e, DRIFT_FP64, DRIFT_RNE) / P[t].ulp;
            drift_row(&out, T_PERMS, DRIFT_TXT(drift_dist_name((drift_dist_t)d)), DRIFT_TXT(drift_format_name(S[s].in)),
                DRIFT_TXT(drift_format_name(S[s].acc)), DRIFT_TXT(S[s].name), DRIFT_INT(PERM_N), DRIFT_INT(perms),
                DRIFT_INT(P[t].nbins), DRIFT_NUM(v), DRIFT_NUM(v), DRIFT_NUM(ulps), DRIFT_INT(P[t].bins[k].count),
                DRIFT_NUM((double)P[t].bins[k].count / perms), DRIFT_INT(v == P[t].cr));
        }
    }

    /* ---- the fragment's tables and takeaway: every number from the arrays above ---- */
    const int dn = DRIFT_DIST_NORMAL;
    char cell[DRIFT_MAX_ORDERS + MAX_SETTINGS + 2][160];
    drift_cell_t row[DRIFT_MAX_ORDERS + MAX_SETTINGS + 2];
    for (int s = 0; s < nsa; s++) {
        row[0] = DRIFT_TXT(sa_[s].name);
        drift_fmt_num(cell[1], sizeof cell[1], L->cls_exact[s], "%.9g");
        for (int o = 0; o < no; o++)
            drift_fmt_num(cell[2 + o], sizeof cell[2 + o], L->cls[(size_t)s * no + o].result, "%.9g");
        for (int k = 1; k < 2 + no; k++) row[k] = DRIFT_TXT(cell[k]);
        drift_row_cells(&out, T_MD_A, row, 2 + no);
    }
    drift_md_end(&out, T_MD_A);
    for (int s = 0; s < ns; s++) {
        row[0] = DRIFT_TXT(S[s].name);
        for (int d = 0; d < nd; d++) {
            const drift_sum_perm_t *p = &P[(size_t)d * ns + s];
            snprintf(cell[1 + d], sizeof cell[1 + d], "%d / %.1f%%", p->nbins, 100.0 * p->crcount / perms);
            row[1 + d] = DRIFT_TXT(cell[1 + d]);
        }
        drift_row_cells(&out, T_MD_B, row, 1 + nd);
    }
    drift_md_end(&out, T_MD_B);

    drift_md_text(&out, "**Takeaway.**\n\n");
    int worst = 0;
    for (int s = 1; s < ns; s++)
        if (P[(size_t)dn * ns + s].nbins > P[(size_t)dn * ns + worst].nbins) worst = s;
    const drift_sum_perm_t *pw = &P[(size_t)dn * ns + worst];
    drift_md_text(&out,
        "- One normal vector of %d values in %s gave %d distinct sums over %ld orders; only %.1f%% were "
        "correctly rounded.\n",
        PERM_N, S[worst].name, pw->nbins, perms, 100.0 * pw->crcount / perms);
    drift_out_commit(&out);
}
