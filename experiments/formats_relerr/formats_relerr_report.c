/* formats_relerr_report.c — the declared output of formats_relerr (formats_relerr_lab.h): every
 * number from the lab's arrays. */
#include "formats_relerr_lab.h"
#include "drift.h"
#include "output.h"

#include <math.h>

void drift_formats_relerr_write(const drift_formats_relerr_lab_t *L)
{
    const int nf = L->nf;
    const long nrand = L->nrand;
    const drift_format_t *F = L->F;
    const drift_stored_t *rc = L->rc;
    const drift_stored_summary_t *rs = L->rs;
    /* ---- declared output: every file to a temporary name, all renamed when all are complete ---- */
    enum { T_RELERR, T_SUMMARY, T_SHOW_RANDOM };
    static const drift_col_t RELERR[] = {DRIFT_C_INT("point"), DRIFT_C_TEXT("format"), DRIFT_C_NUM("x", "%.9e"),
        DRIFT_C_HEX("x_hi_hex"), DRIFT_C_HEX("x_lo_hex"), DRIFT_C_HEX("result_hex"), DRIFT_C_TEXT("class"),
        DRIFT_C_NUM("rel_err", "%.6e")};
    static const drift_col_t SUMMARY[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("p"), DRIFT_C_NUM("unit_roundoff", NULL),
        DRIFT_C_INT("normal"), DRIFT_C_NUM("max_rel_normal", NULL), DRIFT_C_NUM("max_rel_normal_in_u", NULL),
        DRIFT_C_INT("below"), DRIFT_C_NUM("max_rel_below", NULL), DRIFT_C_INT("zero"), DRIFT_C_INT("overflow")};
    static const drift_col_t RANDOM[] = {DRIFT_C_TEXT("format"), DRIFT_C_NUM("max rel err (normal range)", "%.3g"),
        DRIFT_C_NUM("in u", "%.3f"), DRIFT_C_INT("below normal"), DRIFT_C_INT("zero"), DRIFT_C_INT("overflow")};
    const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, RELERR, 8}, {"_summary.csv", NULL, 0, SUMMARY, 10},
        {NULL, NULL, DRIFT_SHOW_STDOUT, RANDOM, 6}};
    drift_out_t out;
    drift_out_open(&out, L->cli, TABLES, 3, 1);
    drift_md_question(&out, "Each real is held exactly (MPFR) and counted by where it lies, not by what it became.");
    drift_md_reproduce(&out, "data/formats_relerr*.csv");

    drift_out_meta(&out, T_RELERR, "table",
        "relative error |round(x) - x| / x (rounded up) of random reals x = x_hi + x_lo (exact sum)");
    drift_out_meta(&out, T_RELERR, "sampling",
        "%ld points; exponent of x_hi uniform in [%d, %d), fraction uniform (52 bits); x_lo uniform in "
        "[-ulp/2, ulp/2) of x_hi; Philox stream (seed, \"formats\", point, 0)",
        nrand, L->rand_emin, L->rand_emax);
    for (long i = 0; i < nrand; i++)
        for (int j = 0; j < nf; j++) {
            double r = rc[i * nf + j].result;
            drift_row(&out, T_RELERR, DRIFT_INT(i), DRIFT_TXT(drift_format_name(F[j])), DRIFT_NUM(L->rhi[i]),
                DRIFT_NUM(L->rhi[i]), DRIFT_NUM(L->rlo[i]), DRIFT_NUM(r),
                DRIFT_TXT(drift_class_name(drift_classify(r, F[j]))), DRIFT_NUM(rc[i * nf + j].rel_err));
        }

    drift_out_meta(&out, T_SUMMARY, "table",
        "per format, the random reals of formats_relerr.csv by where the real x lies: normal (the normal range, "
        "finite when stored), below (below the smallest normal, not stored as zero), zero (below, stored as zero), "
        "overflow (stored as inf or NaN); max_rel_*: the largest relative error of each group, in u = 2^-p too");
    for (int j = 0; j < nf; j++) {
        const drift_format_info_t *fi = drift_format_info(F[j]);
        double in_u = rs[j].max_rel_normal / fi->unit_roundoff;
        drift_row(&out, T_SUMMARY, DRIFT_TXT(drift_format_name(F[j])), DRIFT_INT(fi->p), DRIFT_NUM(fi->unit_roundoff),
            DRIFT_INT(rs[j].n_normal), DRIFT_NUM(rs[j].max_rel_normal), DRIFT_NUM(in_u), DRIFT_INT(rs[j].n_below),
            DRIFT_NUM(rs[j].max_rel_below), DRIFT_INT(rs[j].n_zero), DRIFT_INT(rs[j].n_overflow));
        drift_row(&out, T_SHOW_RANDOM, DRIFT_TXT(drift_format_name(F[j])), DRIFT_NUM(rs[j].max_rel_normal),
            DRIFT_NUM(in_u), DRIFT_INT(rs[j].n_below), DRIFT_INT(rs[j].n_zero), DRIFT_INT(rs[j].n_overflow));
    }

    /* The takeaway: every number comes from the arrays written above. */
    drift_md_text(&out,
        "**Takeaway.**\n\n- Among %ld random reals (exponents 2^%d to 2^%d), the largest "
        "relative error of a real in the normal range was",
        nrand, L->rand_emin, L->rand_emax);
    double worst = 0; /* the largest max-relative-error / u over the formats */
    for (int j = 0; j < nf; j++) {
        double u = drift_format_info(F[j])->unit_roundoff;
        drift_md_text(&out, "%s %s %.3g (%.3f u)", j ? (j + 1 == nf ? " and" : ",") : "", drift_format_name(F[j]),
            rs[j].max_rel_normal, rs[j].max_rel_normal / u);
        worst = fmax(worst, rs[j].max_rel_normal / u);
    }
    drift_md_text(&out, worst <= 1 ? ": never above the unit roundoff u = 2^-p.\n"
                                   : ": ABOVE the unit roundoff u = 2^-p somewhere, which means a rounding bug.\n");
    drift_md_text(&out, "- Below the smallest normal the guarantee is gone:");
    int any = 0;
    for (int j = 0; j < nf; j++)
        if (rs[j].n_below || rs[j].n_zero)
            drift_md_text(&out,
                "%s %s: %ld below its smallest normal and not zero (relative error up to %.3g), %ld zero",
                any++ ? ";" : "", drift_format_name(F[j]), rs[j].n_below, rs[j].max_rel_below, rs[j].n_zero);
    drift_md_text(&out, "%s\n- Overflowed:", any ? "." : " none of the sampled values fell there in these formats.");
    for (int j = 0; j < nf; j++)
        drift_md_text(&out, "%s %s %ld", j ? "," : "", drift_format_name(F[j]), rs[j].n_overflow);
    drift_md_text(&out, " of %ld.\n", nrand);
    drift_out_commit(&out);
}
