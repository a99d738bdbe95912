/* formats_report.c — the declared output of the formats experiment (formats_lab.h): every
 * number from the lab's arrays. */
#include "formats_lab.h"
#include "drift.h"
#include "output.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int find_label(const drift_formats_value_t *v, int nv, const char *label)
{
    for (int i = 0; i < nv; i++)
        if (!strcmp(v[i].label, label)) return i;
    return -1;
}

void drift_formats_write(const drift_formats_lab_t *L)
{
    const int nf = L->nf, nv = L->nv;
    const drift_format_t *F = L->F;
    const drift_formats_value_t *vals = L->vals;
    const drift_stored_t *cells = L->cells;
    const drift_format_consts_t *consts = L->consts;
    /* ---- declared output: every file to a temporary name, all renamed when all are complete ---- */
    enum { T_VALUES, T_CONST, T_SPACING, T_MD_VALUES, T_SHOW_VALUES, T_MD_CONST };
    static const drift_col_t VALUES[] = {DRIFT_C_TEXT("value"), DRIFT_C_TEXT("kind"), DRIFT_C_TEXT("format"),
        DRIFT_C_NUM("exact", NULL), DRIFT_C_HEX("exact_hex"), DRIFT_C_NUM("result", NULL), DRIFT_C_HEX("result_hex"),
        DRIFT_C_TEXT("bits"), DRIFT_C_TEXT("class"), DRIFT_C_TEXT("direction"), DRIFT_C_NUM("abs_err", "%.6e"),
        DRIFT_C_NUM("rel_err", "%.6e"), DRIFT_C_NUM("ulp_err", "%.6g")};
    static const drift_col_t CONST[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("bits"), DRIFT_C_INT("p"),
        DRIFT_C_INT("emin"), DRIFT_C_INT("emax"), DRIFT_C_INT("has_inf"), DRIFT_C_NUM("unit_roundoff", NULL),
        DRIFT_C_HEX("unit_roundoff_hex"), DRIFT_C_NUM("epsilon", NULL), DRIFT_C_HEX("epsilon_hex"),
        DRIFT_C_NUM("min_subnormal", NULL), DRIFT_C_HEX("min_subnormal_hex"), DRIFT_C_NUM("min_normal", NULL),
        DRIFT_C_HEX("min_normal_hex"), DRIFT_C_NUM("max_finite", NULL), DRIFT_C_HEX("max_finite_hex"),
        DRIFT_C_NUM("decimal_digits", "%.2f")};
    static const drift_col_t SPACING[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("binade"), DRIFT_C_NUM("x", NULL),
        DRIFT_C_HEX("x_hex"), DRIFT_C_NUM("x_end", NULL), DRIFT_C_NUM("spacing", NULL), DRIFT_C_HEX("spacing_hex"),
        DRIFT_C_NUM("rel_spacing", NULL), DRIFT_C_TEXT("region")};
    static const drift_col_t MD_CONST[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("p"),
        DRIFT_C_NUM("unit roundoff u", "%.3g"), DRIFT_C_NUM("epsilon", "%.3g"), DRIFT_C_NUM("min subnormal", "%.3g"),
        DRIFT_C_NUM("min normal", "%.3g"), DRIFT_C_NUM("max finite", "%.5g"), DRIFT_C_NUM("decimal digits", "%.2f")};
    drift_col_t by_format[DRIFT_NFORMATS + 2] = {DRIFT_C_TEXT("value")}; /* value, one column per format, lesson */
    for (int j = 0; j < nf; j++) by_format[1 + j] = (drift_col_t)DRIFT_C_CELL(drift_format_name(F[j]));
    by_format[1 + nf] = (drift_col_t)DRIFT_C_TEXT("");
    const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, VALUES, 13}, {"_constants.csv", NULL, 0, CONST, 17},
        {"_spacing.csv", NULL, 0, SPACING, 9},
        {NULL,
            "**Teaching values as stored** (round to nearest even; `inf`/`NaN` = overflow; the hex values and "
            "errors are in data/formats.csv):",
            DRIFT_SHOW_MD, by_format, 1 + nf},
        {NULL, NULL, DRIFT_SHOW_STDOUT, by_format, 2 + nf},
        {NULL, "**Constants** (measured through the rounder; data/formats_constants.csv):",
            DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD_CONST, 8}};
    drift_out_t out;
    drift_out_open(&out, L->cli, TABLES, 6, 1);
    char b1[64], b2[64];
    drift_md_question(
        &out, "Each value is held against its exact witness (MPFR), so even fp64 shows its own rounding.");
    drift_md_reproduce(&out, "data/formats.csv, data/formats_constants.csv, data/formats_spacing.csv");

    drift_out_meta(&out, T_VALUES, "table", "teaching values stored in each format (round to nearest even)");
    drift_out_meta(&out, T_VALUES, "witness",
        "the real number the label names (MPFR, %d bits); exact/exact_hex show it rounded to the "
        "nearest double; kind=sum: a+b computed in the format from the rounded a and b",
        DRIFT_WITNESS_PREC);
    drift_out_meta(&out, T_VALUES, "errors",
        "abs, rel, ulp errors against the witness, rounded up; ulp = spacing of the format at the witness");
    char shown[DRIFT_NFORMATS][32];
    drift_cell_t row[DRIFT_NFORMATS + 2];
    for (int i = 0; i < nv; i++) {
        row[0] = DRIFT_TXT(vals[i].label);
        for (int j = 0; j < nf; j++) {
            const drift_stored_t *c = &cells[i * nf + j];
            double ex = mpfr_get_d(vals[i].exact, MPFR_RNDN);
            int hexdigits = (F[j] == DRIFT_TF32 ? 32 : drift_format_info(F[j])->bits) / 4;
            snprintf(b1, sizeof b1, "0x%0*llx", hexdigits, (unsigned long long)drift_encode(c->result, F[j]));
            drift_row(&out, T_VALUES, DRIFT_TXT(vals[i].label), DRIFT_TXT(vals[i].sum ? "sum" : "stored"),
                DRIFT_TXT(drift_format_name(F[j])), DRIFT_NUM(ex), DRIFT_NUM(ex), DRIFT_NUM(c->result),
                DRIFT_NUM(c->result), DRIFT_TXT(b1), DRIFT_TXT(drift_class_name(c->cls)), DRIFT_TXT(c->dir),
                DRIFT_NUM(c->abs_err), DRIFT_NUM(c->rel_err), DRIFT_NUM(c->ulp_err));
            drift_fmt_num(shown[j], sizeof shown[j], c->result, "%.8g");
            row[1 + j] = DRIFT_TXT(isnan(c->result) ? "NaN" : shown[j]);
        }
        row[1 + nf] = DRIFT_TXT(vals[i].lesson);
        drift_row_cells(&out, T_MD_VALUES, row, 1 + nf);
        drift_row_cells(&out, T_SHOW_VALUES, row, 2 + nf);
    }
    drift_md_end(&out, T_MD_VALUES);

    drift_out_meta(
        &out, T_CONST, "table", "constants of each format, measured through the rounder and checked against format.h");
    for (int j = 0; j < nf; j++) {
        const drift_format_consts_t *k = &consts[j];
        drift_row(&out, T_CONST, DRIFT_TXT(drift_format_name(F[j])), DRIFT_INT(k->bits), DRIFT_INT(k->p),
            DRIFT_INT(k->emin), DRIFT_INT(k->emax), DRIFT_INT(k->has_inf), DRIFT_NUM(k->u), DRIFT_NUM(k->u),
            DRIFT_NUM(k->eps), DRIFT_NUM(k->eps), DRIFT_NUM(k->min_sub), DRIFT_NUM(k->min_sub), DRIFT_NUM(k->min_norm),
            DRIFT_NUM(k->min_norm), DRIFT_NUM(k->max_fin), DRIFT_NUM(k->max_fin), DRIFT_NUM(k->digits));
        drift_row(&out, T_MD_CONST, DRIFT_TXT(drift_format_name(F[j])), DRIFT_INT(k->p), DRIFT_NUM(k->u),
            DRIFT_NUM(k->eps), DRIFT_NUM(k->min_sub), DRIFT_NUM(k->min_norm), DRIFT_NUM(k->max_fin),
            DRIFT_NUM(k->digits));
    }
    drift_md_end(&out, T_MD_CONST);

    drift_out_meta(&out, T_SPACING, "table",
        "spacing of representable numbers in each binade [x, x_end): (next member above x) - x");
    for (int j = 0; j < nf; j++)
        for (int n = 0; n < L->nsteps[j]; n++) {
            const drift_binade_t *s = &L->steps[j][n];
            drift_row(&out, T_SPACING, DRIFT_TXT(drift_format_name(F[j])), DRIFT_INT(s->e), DRIFT_NUM(s->x),
                DRIFT_NUM(s->x), DRIFT_NUM(s->x_end), DRIFT_NUM(s->spacing), DRIFT_NUM(s->spacing),
                DRIFT_NUM(s->spacing / s->x), DRIFT_TXT(s->subnormal ? "subnormal" : "normal"));
        }

    /* The takeaway: every number comes from the arrays written above. */
    drift_md_text(&out, "**Takeaway.**\n\n- Overflowed (inf, or NaN in fp8e4m3):");
    int any = 0;
    for (int j = 0; j < nf; j++)
        for (int i = 0, first = 1; i < nv; i++)
            if (cells[i * nf + j].cls == DRIFT_CLASS_INF || cells[i * nf + j].cls == DRIFT_CLASS_NAN) {
                if (first)
                    drift_md_text(&out, "%s %s: %s", any ? ";" : "", drift_format_name(F[j]), vals[i].label);
                else
                    drift_md_text(&out, ", %s", vals[i].label);
                first = 0, any = 1;
            }
    drift_md_text(&out, "%s\n", any ? "." : " none.");
    int i01 = find_label(vals, nv, "0.1"), isum = find_label(vals, nv, "0.1+0.2");
    if (i01 >= 0) {
        drift_md_text(&out, "- 0.1 is stored as (format, relative error)");
        double w = 0;
        for (int j = 0; j < nf; j++) {
            const drift_stored_t *c = &cells[i01 * nf + j];
            drift_fmt_num(b1, sizeof b1, c->result, "%.17g");
            drift_md_text(&out, "%s %s (%s, %.2e)", j ? (j + 1 == nf ? " and" : ",") : ":", b1, drift_format_name(F[j]),
                c->rel_err);
            w = fmax(w, c->rel_err / consts[j].u);
        }
        drift_md_text(&out, ": the fewer the bits, the larger the error; the largest is %.2f u.\n", w);
    }
    if (isum >= 0) {
        drift_md_text(&out, "- 0.1 + 0.2 computed in the format:");
        int far = 0;
        for (int j = 0; j < nf; j++) {
            const drift_stored_t *c = &cells[isum * nf + j];
            drift_fmt_num(b1, sizeof b1, c->result, "%.17g");
            drift_fmt_num(b2, sizeof b2, c->ulp_err, "%.3g");
            drift_md_text(&out, "%s %s %s (%s ulp from 0.3)", j ? "," : "", drift_format_name(F[j]), b1, b2);
            far += c->ulp_err > 0.5;
        }
        drift_md_text(&out,
            ". In %d of %d formats the sum is more than half an ulp from 0.3, so not the stored 0.3: the input and "
            "sum roundings add up.\n",
            far, nf);
    }
    drift_out_commit(&out);
}
