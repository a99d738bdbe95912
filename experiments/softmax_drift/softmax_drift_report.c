/* softmax_drift_report.c — the declared output of the softmax_drift experiment
 * (softmax_drift_lab.h): every number from the lab's aggregates and cliff measurements. */
#include "softmax_drift_lab.h"

#include <math.h>
#include <stdio.h>

#include "drift.h"
#include "format.h"
#include "output.h"

#define NVAR DRIFT_SMX_NVAR
#define CROSSCHECK_MAX_N DRIFT_SMX_CROSSCHECK_MAX_N

enum { T_MAIN, T_CLIFF, T_MD, T_MDCLIFF };
static const drift_col_t MAIN[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("variant"), DRIFT_C_INT("N"),
    DRIFT_C_INT("rows"), DRIFT_C_NUM("prob_l1_true_max", "%.6e"), DRIFT_C_NUM("prob_l1_round_max", "%.6e"),
    DRIFT_C_NUM("prob_relerr_true_max", "%.6e"), DRIFT_C_NUM("lse_relerr_true_max", "%.6e"),
    DRIFT_C_NUM("lse_relerr_round_max", "%.6e"), DRIFT_C_INT("top1_changed"), DRIFT_C_INT("top1_tied"),
    DRIFT_C_INT("nan_rows")};
static const drift_col_t CLIFF[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("variant"), DRIFT_C_NUM("peak", "%.6g"),
    DRIFT_C_NUM("peak_rounded", "%.9g"), DRIFT_C_INT("nan_probs"), DRIFT_C_NUM("prob_l1_round", "%.6e"),
    DRIFT_C_NUM("lse", NULL), DRIFT_C_NUM("lse_exact", NULL)};
static const drift_col_t MD[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("N"), DRIFT_C_NUM("naive", "%.2e"),
    DRIFT_C_NUM("safe", "%.2e"), DRIFT_C_NUM("online", "%.2e"), DRIFT_C_NUM("online:B", "%.2e"),
    DRIFT_C_NUM("arithmetic only (safe)", "%.2e"), DRIFT_C_NUM("lse rel. err (safe)", "%.2e"),
    DRIFT_C_TEXT("top-1 changed (safe)")};
static const drift_col_t MDCLIFF[] = {DRIFT_C_TEXT("format (arithmetic too)"), DRIFT_C_TEXT("variant"),
    DRIFT_C_NUM("largest peak without NaN", "%.6g"), DRIFT_C_NUM("first peak with NaN", "%.6g"),
    DRIFT_C_NUM("ln(max finite)", "%.4f")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, MAIN, 12}, {"_cliff.csv", NULL, 0, CLIFF, 8},
    {NULL,
        "Largest L1 error of the probabilities against the exact softmax of the unrounded logits (fp32 arithmetic), over the rows",
        DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 9},
    {NULL, "The overflow cliff (arithmetic in the format itself; N(0,1) logits plus one peak)",
        DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDCLIFF, 5}};

void drift_softmax_write(const drift_softmax_lab_t *L)
{
    const drift_cli_t *cli = L->cli;
    const size_t R = L->R, NC = L->NC;
    const double sigma = L->sigma, xdev_max = L->xdev_max, *peaks = L->peaks, *clse = L->clse, *clse_ref = L->clse_ref;
    const long block = L->block, xrows = L->xrows, *Ns = L->Ns, *cnan = L->cnan;
    const int nf = L->nf, nN = L->nN, np = L->np;
    const char(*vname)[DRIFT_SOFTMAX_SPEC_MAX] = L->vname;
    const drift_smx_agg_t *agg = L->agg;
    const drift_smx_meas_t *cm = L->cm;
#define AGG(ni, f, v) (&agg[((size_t)(ni) * (size_t)nf + (size_t)(f)) * NVAR + (size_t)(v)])
    drift_out_t out;
    drift_out_open(&out, cli, TABLES, 4, 1);
    drift_out_meta(
        &out, T_MAIN, "table", "per (format, variant, N), the largest error over the rows (the count columns: rows)");
    drift_out_meta(&out, T_MAIN, "inputs",
        "logits x_i = %g * N(0,1) (Philox, seed %llu), rounded RNE to the format; %zu rows per N", sigma,
        (unsigned long long)cli->seed, R);
    drift_out_meta(&out, T_MAIN, "arithmetic",
        "max exact; t = x - m, exponentials (correctly rounded expf), sums (seq) and quotients in fp32 RNE; "
        "probabilities and log-sum-exp kept in fp32; online:B with B = %ld",
        block);
    drift_out_meta(&out, T_MAIN, "reference",
        "p* = exp(x_i - max) / s with Neumaier's compensated sum s in fp64 (relative error below (|x_i - max| + 4) * 2^-53); "
        "held against MPFR's correctly rounded softmax and log-sum-exp on %ld rows with N <= %d: largest relative difference %.3g",
        xrows, CROSSCHECK_MAX_N, xdev_max);
    drift_out_meta(&out, T_MAIN, "columns",
        "prob_l1_* = sum_i |p_i - p*_i| against the exact softmax (see reference) of the unrounded logits (true) or of the "
        "logits rounded to the format (round: the arithmetic's own error); prob_relerr_true_max = max_i |p_i - p*_i| / p*_i over p*_i >= 2^-126; "
        "lse_relerr = |lse - lse*| / |lse*|; top1_changed = rows whose largest computed probability (lowest index among equals) is not the exact "
        "top-1 of the unrounded logits; top1_tied = rows whose largest computed probability is shared; nan_rows = rows with a NaN probability (their errors are nan)");
    drift_out_meta(&out, T_CLIFF, "table",
        "naive and safe with every step in the format itself (input, arithmetic and output), "
        "N = %zu logits N(0,1) rounded to the format with logit 0 replaced by the peak",
        NC);
    drift_out_meta(&out, T_CLIFF, "columns",
        "peak_rounded = the peak as the format holds it; nan_probs = NaN probabilities of 1024; "
        "prob_l1_round = sum |p - p*| against the exact softmax of the rounded logits (nan when any p is NaN); lse, lse_exact = computed and exact log-sum-exp");
    for (int f = 0; f < nf; f++) /* one series per (format, variant), contiguous for the plots */
        for (int v = 0; v < NVAR; v++)
            for (int ni = 0; ni < nN; ni++) {
                const drift_smx_agg_t *a = AGG(ni, f, v);
                drift_row(&out, T_MAIN, DRIFT_TXT(drift_format_name(cli->formats[f])), DRIFT_TXT(vname[v]),
                    DRIFT_INT(Ns[ni]), DRIFT_INT(R), DRIFT_NUM(a->l1_true_max), DRIFT_NUM(a->l1_round_max),
                    DRIFT_NUM(a->rel_true_max), DRIFT_NUM(a->lse_true_max), DRIFT_NUM(a->lse_round_max),
                    DRIFT_INT(a->top1_changed), DRIFT_INT(a->top1_tied), DRIFT_INT(a->nan_rows));
            }
    for (int f = 0; f < nf; f++)
        for (int v = 0; v < 2; v++)
            for (int k = 0; k < np; k++) {
                const drift_smx_meas_t *m = &cm[(f * 2 + v) * np + k];
                drift_row(&out, T_CLIFF, DRIFT_TXT(drift_format_name(cli->formats[f])), DRIFT_TXT(vname[v]),
                    DRIFT_NUM(peaks[k]), DRIFT_NUM(drift_rne(peaks[k], cli->formats[f])),
                    DRIFT_INT(cnan[(f * 2 + v) * np + k]), DRIFT_NUM(m->l1_true), DRIFT_NUM(clse[(f * 2 + v) * np + k]),
                    DRIFT_NUM(clse_ref[f * np + k]));
            }

    drift_md_intro(&out,
        "Rows of %zu Gaussian logits (sigma %g) per vocabulary size N, rounded to the input format; "
        "the four variants of lib/ops/softmax.h with fp32 arithmetic (correctly rounded expf, seq sums, online:B with B = %ld); "
        "errors against the exact softmax of the unrounded logits and of the rounded ones (fp64 with a compensated sum, relative error below 1e-14, "
        "held against MPFR on every row with N <= %d).",
        R, sigma, block, CROSSCHECK_MAX_N);
    for (int f = 0; f < nf; f++)
        for (int ni = 0; ni < nN; ni++) {
            char top[48];
            snprintf(top, sizeof top, "%ld of %zu", AGG(ni, f, 1)->top1_changed, R);
            drift_row(&out, T_MD, DRIFT_TXT(drift_format_name(cli->formats[f])), DRIFT_INT(Ns[ni]),
                DRIFT_NUM(AGG(ni, f, 0)->l1_true_max), DRIFT_NUM(AGG(ni, f, 1)->l1_true_max),
                DRIFT_NUM(AGG(ni, f, 2)->l1_true_max), DRIFT_NUM(AGG(ni, f, 3)->l1_true_max),
                DRIFT_NUM(AGG(ni, f, 1)->l1_round_max), DRIFT_NUM(AGG(ni, f, 1)->lse_true_max), DRIFT_TXT(top));
        }
    drift_md_end(&out, T_MD);
    /* the cliff per (format, variant): the largest peak without NaN below the first with NaN */
    double first_nan[DRIFT_NFORMATS][2], last_ok[DRIFT_NFORMATS][2];
    for (int f = 0; f < nf; f++)
        for (int v = 0; v < 2; v++) {
            first_nan[f][v] = NAN, last_ok[f][v] = NAN;
            for (int k = 0; k < np; k++) {
                int bad = cnan[(f * 2 + v) * np + k] > 0;
                if (bad && (isnan(first_nan[f][v]) || peaks[k] < first_nan[f][v])) first_nan[f][v] = peaks[k];
            }
            for (int k = 0; k < np; k++)
                if (!cnan[(f * 2 + v) * np + k] && (isnan(first_nan[f][v]) || peaks[k] < first_nan[f][v]) &&
                    (isnan(last_ok[f][v]) || peaks[k] > last_ok[f][v]))
                    last_ok[f][v] = peaks[k];
            char fa[64];
            snprintf(fa, sizeof fa, "%s", drift_format_name(cli->formats[f]));
            drift_row(&out, T_MDCLIFF, DRIFT_TXT(fa), DRIFT_TXT(vname[v]), DRIFT_NUM(last_ok[f][v]),
                DRIFT_NUM(first_nan[f][v]), DRIFT_NUM(log(drift_format_info(cli->formats[f])->max_finite)));
        }
    drift_md_end(&out, T_MDCLIFF);

    /* -- takeaway, from the data -- */
    drift_md_text(&out, "**Takeaway.**\n\n");
    const int nl = nN - 1;
    for (int f = 0; f < nf; f++) {
        double lo = INFINITY, hi = 0, ar = 0;
        long ch = 0, tie = 0, nanr = 0;
        for (int v = 1; v < NVAR; v++) {
            const drift_smx_agg_t *a = AGG(nl, f, v);
            lo = fmin(lo, a->l1_true_max), hi = fmax(hi, a->l1_true_max), ar = fmax(ar, a->l1_round_max);
        }
        for (int ni = 0; ni < nN; ni++)
            ch += AGG(ni, f, 1)->top1_changed, tie += AGG(ni, f, 1)->top1_tied, nanr += AGG(ni, f, 0)->nan_rows;
        drift_md_text(&out,
            "- %s inputs, N = %ld: safe, online and %s give L1 errors %.3g to %.3g against the exact softmax of the unrounded logits, "
            "of which the arithmetic (against the rounded logits) accounts for at most %.3g%s; "
            "the top-1 token changed in %ld of %zu rows over all N (the largest probability was shared in %ld).\n",
            drift_format_name(cli->formats[f]), Ns[nl], vname[3], lo, hi, ar,
            ar < 0.1 * lo ? ": the input rounding dominates" : "", ch, (size_t)nN * R, tie);
        (void)nanr;
    }
    for (int f = 0; f < nf; f++) {
        double grow = AGG(nl, f, 1)->l1_round_max / AGG(0, f, 1)->l1_round_max;
        if (f == 0)
            drift_md_text(&out,
                "- From N = %ld to N = %ld the arithmetic's own L1 error (safe, %s) grows %.3gx, far beyond the "
                "%.3gx (sqrt of the N ratio) of independent rounding errors: this is stagnation, the "
                "sequential sum of exponentials outgrowing its terms so that each new one loses more "
                "bits (the blocked online:64 variant, with short running sums, does not show it).\n",
                Ns[0], Ns[nl], drift_format_name(cli->formats[f]), grow, sqrt((double)Ns[nl] / (double)Ns[0]));
    }
    for (int f = 0; f < nf; f++) {
        const char *fn = drift_format_name(cli->formats[f]);
        if (!isnan(first_nan[f][0]))
            drift_md_text(&out,
                f ? "- Naive softmax in %s: NaN from a peak logit of %g on (finite at %g; ln of %s's largest value: %.4f)%s; safe softmax %s.\n"
                  : "- Naive softmax computed in %s returns NaN from a peak logit of %g on (the largest without NaN: %g; ln of %s's largest value is %.4f)%s; safe softmax %s.\n",
                fn, first_nan[f][0], last_ok[f][0], fn, log(drift_format_info(cli->formats[f])->max_finite),
                first_nan[f][0] < log(drift_format_info(cli->formats[f])->max_finite)
                    ? ", below ln(max) because the sum of the other 1023 exponentials overflows first"
                    : "",
                isnan(first_nan[f][1]) ? "never does" : "DOES TOO, which is a bug");
        else
            drift_md_text(&out,
                "- Naive softmax computed in %s stays finite for every peak up to %g (ln of its largest value is %.4f).\n",
                fn, last_ok[f][0], log(drift_format_info(cli->formats[f])->max_finite));
    }
    drift_out_commit(&out);
}
