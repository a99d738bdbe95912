/* attention_drift_report.c — the declared output of the attention_drift experiment
 * (attention_drift_lab.h): every number from the lab's errors and differences. */
#include "attention_drift_lab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "drift.h"
#include "format.h"
#include "output.h"

enum { T_ERR, T_PAD, T_DEC, T_MDRATIO, T_MDPAD, T_CTL, T_MDCTL };
static const drift_col_t ERR[] = {DRIFT_C_TEXT("format"), DRIFT_C_KEY("kernel_key"), DRIFT_C_TEXT("family"),
    DRIFT_C_INT("Bc"), DRIFT_C_INT("L"), DRIFT_C_INT("rows_checked"), DRIFT_C_NUM("relerr_round", "%.6e"),
    DRIFT_C_NUM("relerr_true", "%.6e"), DRIFT_C_NUM("max_abs_err_round", "%.6e"),
    DRIFT_C_NUM("ratio_to_standard", "%.6g"), DRIFT_C_QUOTED("kernel")};
static const drift_col_t PAD[] = {DRIFT_C_TEXT("format"), DRIFT_C_KEY("kernel_key"), DRIFT_C_TEXT("padding"),
    DRIFT_C_INT("L"), DRIFT_C_INT("pad"), DRIFT_C_INT("identical"), DRIFT_C_INT("outputs_differing"),
    DRIFT_C_NUM("max_abs_diff", "%.6e"), DRIFT_C_QUOTED("kernel")};
static const drift_col_t DEC[] = {DRIFT_C_TEXT("format"), DRIFT_C_KEY("kernel_key"), DRIFT_C_INT("L"),
    DRIFT_C_INT("identical"), DRIFT_C_INT("rows_differing"), DRIFT_C_NUM("max_abs_diff", "%.6e"),
    DRIFT_C_QUOTED("kernel")};
static const drift_col_t MDRATIO[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("L"), DRIFT_C_NUM("standard", "%.3e"),
    DRIFT_C_NUM("flash (Bc = 64)", "%.3e"), DRIFT_C_NUM("flash / standard", "%.3g"),
    DRIFT_C_NUM("flash/standard, every Bc: min", "%.3g"), DRIFT_C_NUM("max", "%.3g"),
    DRIFT_C_NUM("vs unrounded inputs: flash / standard", "%.3g")};
static const drift_col_t MDPAD[] = {DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("left padding"), DRIFT_C_TEXT("right padding"),
    DRIFT_C_TEXT("prefill = decode")};
static const drift_col_t CTL[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("L"), DRIFT_C_INT("rows_checked"),
    DRIFT_C_NUM("relerr_round", "%.6e"), DRIFT_C_NUM("relerr_true", "%.6e"), DRIFT_C_NUM("max_abs_err_round", "%.6e"),
    DRIFT_C_NUM("ratio_to_standard", "%.6g"), DRIFT_C_NUM("flash_to_control_min", "%.6g"),
    DRIFT_C_NUM("flash_to_control_max", "%.6g")};
static const drift_col_t MDCTL[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("L"), DRIFT_C_NUM("control", "%.3e"),
    DRIFT_C_NUM("control / standard", "%.3g"), DRIFT_C_NUM("flash / control, every Bc: min", "%.3g"),
    DRIFT_C_NUM("max", "%.3g")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, ERR, 11}, {"_padding.csv", NULL, 0, PAD, 9},
    {"_decode.csv", NULL, 0, DEC, 7},
    {NULL,
        "Relative error of the output against the exact attention of the rounded inputs (norm over the checked rows), flash / standard",
        DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDRATIO, 8},
    {NULL, "Bitwise invariance (first format; outputs that differ, of all)", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDPAD,
        4},
    {"_control.csv", NULL, 0, CTL, 9},
    {NULL, "The control: standard with its scores stored in fp32 (all else as standard), relative error as above",
        DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDCTL, 6}};

/* What the control says of standard's score rounding as the cause of the gap between flash and
 * standard, from the ranges over every Bc and L of flash / standard (fs), flash / control (cf)
 * and control / standard (cs). Equal within 10%: flash / standard moves by up to about that
 * from one Bc to the next at one L, so one run does not tell a smaller difference apart. */
static const char *verdict(const double fs[2], const double cf[2], const double cs[2])
{
    const double tol = 1.1;
    if (isnan(fs[0]) || isnan(cf[0]) || isnan(cs[0])) return "not measured: an error is not finite";
    if (fs[0] >= 1 / tol && fs[1] <= tol) return "moot: flash is within 10% of standard";
    if (cf[0] >= 1 / tol && cf[1] <= tol) return "the cause";     /* the control at flash's error */
    if (cs[0] >= 1 / tol && cs[1] <= tol) return "not the cause"; /* the control at standard's */
    if (cf[0] > tol && cs[1] < 1 / tol) return "more than the cause: the control beats flash";
    return "part of the cause";
}

/* r = [min, max] of the values seen; NaN once one of them is not finite (fmin would drop a NaN) */
static void widen(double r[2], double x)
{
    if (isnan(r[0])) return;
    if (!isfinite(x))
        r[0] = r[1] = NAN;
    else
        r[0] = fmin(r[0], x), r[1] = fmax(r[1], x);
}

void drift_attention_write(const drift_attention_lab_t *L)
{
    const drift_cli_t *cli = L->cli;
    const size_t H = L->H, G = L->G, D = L->D, R = L->R, n = L->n, P = L->P;
    const long splits = L->splits, ssize = L->ssize, *kbc = L->kbc, *pad_diff = L->pad_diff, *dec_diff = L->dec_diff;
    const int nf = L->nf, nL = L->nL, nk = L->nk, k_std = L->k_std, k_f64 = L->k_f64;
    const long *Ls = L->Ls;
    const drift_attn_kernel_t *kern = L->kern;
    const char(*kname)[DRIFT_ATTN_SPEC_MAX] = L->kname;
    const char(*kfam)[16] = L->kfam;
    const drift_attn_err_t *E = L->E;
    const double *pad_max = L->pad_max, *dec_max = L->dec_max;
    drift_out_t out;
    drift_out_open(&out, cli, TABLES, 7, 1);
    drift_out_meta(&out, T_ERR, "table",
        "per (format, kernel, L): output error over %zu checked query rows x %zu heads x %zu dims", R, H, D);
    drift_out_meta(&out, T_ERR, "shape",
        "heads %zu, kv_heads %zu (grouped), head_dim %zu, causal, scale 1/sqrt(dim); q, k, v ~ N(0,1) (Philox, seed %llu)",
        H, G, D, (unsigned long long)cli->seed);
    drift_out_meta(&out, T_ERR, "recipe",
        "q, K, V and P rounded RNE to the format; QK^T and P.V dot products seq, fp32 RNE fma; "
        "standard materialises the scores in the format; softmax safe in fp32 (correctly rounded expf); output kept in fp32");
    drift_out_meta(&out, T_ERR, "rows",
        "the checked query rows i = (r + 1) * L / rows - 1, r = 0..rows-1 (every head), each against all keys j <= i");
    drift_out_meta(&out, T_ERR, "columns",
        "relerr_* = ||o - o*||_2 / ||o*||_2 over the checked outputs, o* = drift_attention_reference (MPFR, "
        "rounded to fp64) of the rounded inputs (round: the arithmetic's error) or of the unrounded inputs (true); Bc = the key tile (0: standard); "
        "ratio_to_standard = relerr_round / standard's relerr_round at the same (format, L)");
    drift_out_meta(&out, T_PAD, "table",
        "the n = %zu-token sequence alone (prefill) vs the same queries with %zu masked keys of other values before (left) or after (right) it; bitwise",
        n, P);
    drift_out_meta(&out, T_CTL, "table",
        "per (format, L): the control, standard attention with its scores stored in fp32 (qk.out = fp32; "
        "everything else as standard at that format), on the rows attention_drift.csv checks");
    drift_out_meta(&out, T_CTL, "columns",
        "relerr_*, max_abs_err_round as in attention_drift.csv; ratio_to_standard = relerr_round / standard's; "
        "flash_to_control_min/max = flash:64,Bc's relerr_round / the control's, over every Bc");
    drift_out_meta(&out, T_DEC, "table",
        "prefill (all %zu queries in one call) vs decode (query i against the cache of i + 1 tokens); bitwise, per query row",
        n);
    for (int f = 0; f < nf; f++) /* one series per (format, kernel), contiguous for the plots */
        for (int kk = 0; kk < nk; kk++)
            for (int li = 0; li < nL; li++) {
                const drift_attn_err_t *e = &E[((size_t)li * (size_t)nf + (size_t)f) * (size_t)nk + (size_t)kk];
                drift_row(&out, T_ERR, DRIFT_TXT(drift_format_name(cli->formats[f])), DRIFT_TXT(kname[kk]),
                    DRIFT_TXT(kfam[kk]), DRIFT_INT(kbc[kk]), DRIFT_INT(Ls[li]),
                    DRIFT_INT(R < (size_t)Ls[li] ? R : (size_t)Ls[li]), DRIFT_NUM(e->rel_round), DRIFT_NUM(e->rel_true),
                    DRIFT_NUM(e->max_abs_round),
                    DRIFT_NUM(
                        e->rel_round / E[((size_t)li * (size_t)nf + (size_t)f) * (size_t)nk + (size_t)k_std].rel_round),
                    DRIFT_TXT(kname[kk]));
            }
    for (int f = 0; f < nf; f++)
        for (int kk = 0; kk < nk; kk++) {
            size_t t = (size_t)f * (size_t)nk + (size_t)kk;
            for (int s = 0; s < 2; s++)
                drift_row(&out, T_PAD, DRIFT_TXT(drift_format_name(cli->formats[f])), DRIFT_TXT(kname[kk]),
                    DRIFT_TXT(s ? "right" : "left"), DRIFT_INT(n), DRIFT_INT(P), DRIFT_INT(pad_diff[t * 2 + s] == 0),
                    DRIFT_INT(pad_diff[t * 2 + s]), DRIFT_NUM(pad_max[t * 2 + s]), DRIFT_TXT(kname[kk]));
            drift_row(&out, T_DEC, DRIFT_TXT(drift_format_name(cli->formats[f])), DRIFT_TXT(kname[kk]), DRIFT_INT(n),
                DRIFT_INT(dec_diff[t] == 0), DRIFT_INT(dec_diff[t]), DRIFT_NUM(dec_max[t]), DRIFT_TXT(kname[kk]));
        }

    drift_md_intro(&out,
        "Causal attention, %zu query heads over %zu KV heads, head dim %zu, q, k, v ~ N(0,1); "
        "every kernel with the same recipe (operands and P rounded to the format, fp32 accumulation and softmax, output kept in fp32); "
        "errors on %zu query rows per length (every head) against the MPFR attention of the same rounded inputs.",
        H, G, D, R);
    double rat_lo = INFINITY, rat_hi = 0; /* flash:64,64 / standard over formats and L */
    int bf = -1;
    for (int f = 0; f < nf; f++) bf = cli->formats[f] == DRIFT_BF16 ? f : bf;
    double bf_lo = INFINITY, bf_hi = 0;
    for (int f = 0; f < nf; f++)
        for (int li = 0; li < nL; li++) {
            const drift_attn_err_t *e = &E[((size_t)li * (size_t)nf + (size_t)f) * (size_t)nk];
            double lo = INFINITY, hi = 0;
            for (int kk = 0; kk < nk; kk++)
                if (kern[kk].kind == DRIFT_ATTN_FLASH)
                    lo = fmin(lo, e[kk].rel_round / e[k_std].rel_round),
                    hi = fmax(hi, e[kk].rel_round / e[k_std].rel_round);
            int kf = k_f64 >= 0 ? k_f64 : 1;
            double r = e[kf].rel_round / e[k_std].rel_round;
            rat_lo = fmin(rat_lo, r), rat_hi = fmax(rat_hi, r);
            if (f == bf) bf_lo = fmin(bf_lo, lo), bf_hi = fmax(bf_hi, hi);
            drift_row(&out, T_MDRATIO, DRIFT_TXT(drift_format_name(cli->formats[f])), DRIFT_INT(Ls[li]),
                DRIFT_NUM(e[k_std].rel_round), DRIFT_NUM(e[kf].rel_round), DRIFT_NUM(r), DRIFT_NUM(lo), DRIFT_NUM(hi),
                DRIFT_NUM(e[kf].rel_true / e[k_std].rel_true));
        }
    drift_md_end(&out, T_MDRATIO);
    /* the control, per format, [min, max] over every Bc and L of flash / standard (fs), flash /
     * control (cf) and control / standard (cs) */
    double(*fs)[2] = malloc((size_t)nf * 3 * sizeof *fs), (*cf)[2] = fs + nf, (*cs)[2] = fs + 2 * nf;
    if (!fs) drift_die("out of memory");
    for (int f = 0; f < nf; f++) {
        fs[f][0] = cf[f][0] = cs[f][0] = INFINITY, fs[f][1] = cf[f][1] = cs[f][1] = 0;
        for (int li = 0; li < nL; li++) {
            const drift_attn_err_t *e = &E[((size_t)li * (size_t)nf + (size_t)f) * (size_t)nk],
                                   *c = &L->Ec[(size_t)li * (size_t)nf + (size_t)f];
            double r[2] = {INFINITY, 0}, cr = c->rel_round / e[k_std].rel_round; /* r: flash / control at this L */
            for (int kk = 0; kk < nk; kk++)
                if (kern[kk].kind == DRIFT_ATTN_FLASH)
                    widen(r, e[kk].rel_round / c->rel_round), widen(fs[f], e[kk].rel_round / e[k_std].rel_round);
            widen(cf[f], r[0]), widen(cf[f], r[1]), widen(cs[f], cr);
            drift_row(&out, T_CTL, DRIFT_TXT(drift_format_name(cli->formats[f])), DRIFT_INT(Ls[li]),
                DRIFT_INT(R < (size_t)Ls[li] ? R : (size_t)Ls[li]), DRIFT_NUM(c->rel_round), DRIFT_NUM(c->rel_true),
                DRIFT_NUM(c->max_abs_round), DRIFT_NUM(cr), DRIFT_NUM(r[0]), DRIFT_NUM(r[1]));
            drift_row(&out, T_MDCTL, DRIFT_TXT(drift_format_name(cli->formats[f])), DRIFT_INT(Ls[li]),
                DRIFT_NUM(c->rel_round), DRIFT_NUM(cr), DRIFT_NUM(r[0]), DRIFT_NUM(r[1]));
        }
    }
    drift_md_end(&out, T_MDCTL);
    const size_t tot = n * H * D;
    for (int kk = 0; kk < nk; kk++) {
        char l[48], r[48], d[48];
        snprintf(l, sizeof l, pad_diff[kk * 2] ? "%ld of %zu differ" : "identical", pad_diff[kk * 2], tot);
        snprintf(r, sizeof r, pad_diff[kk * 2 + 1] ? "%ld of %zu differ" : "identical", pad_diff[kk * 2 + 1], tot);
        snprintf(d, sizeof d, dec_diff[kk] ? "%ld of %zu rows differ" : "identical", dec_diff[kk], n);
        drift_row(&out, T_MDPAD, DRIFT_TXT(kname[kk]), DRIFT_TXT(l), DRIFT_TXT(r), DRIFT_TXT(d));
    }
    drift_md_end(&out, T_MDPAD);

    drift_md_text(&out, "**Takeaway.**\n\n");
    if (bf >= 0)
        drift_md_text(&out,
            "- In bf16, flash's error against the exact attention of the same inputs is %.3gx to %.3gx standard's (every Bc and L here). "
            "Golden et al. (2024) measured about 10x more deviation for flash than for the baseline in a bf16 training forward pass; %s Golden et al. "
            "measured real training kernels, inputs and metric; this emulation (each operation rounded once, in one order, on N(0,1) inputs) copies none of them.\n",
            bf_lo, bf_hi,
            bf_hi < 1    ? "the lab does not reproduce it: here flash is the more accurate kernel."
            : bf_hi < 3  ? "the lab does not reproduce that order of magnitude."
            : bf_lo >= 3 ? "the lab finds the same direction."
                         : "the lab finds a mixed picture.");
    { /* the control, in the formats where it differs from standard (fp32 inputs' scores are fp32) */
        const char *w0 = NULL;
        int same = 1;
        for (int f = 0; f < nf; f++)
            if (cli->formats[f] != DRIFT_FP32) {
                const char *w = verdict(fs[f], cf[f], cs[f]);
                same &= !w0 || w == w0;
                w0 = w0 ? w0 : w;
            }
        for (int f = 0, i = 0; f < nf; f++) {
            if (cli->formats[f] == DRIFT_FP32) continue;
            if (i++ == 0)
                drift_md_text(&out,
                    "- Control, standard with fp32 scores: in %s %.3gx to %.3gx standard's error, flash %.3gx to %.3gx the control's",
                    drift_format_name(cli->formats[f]), cs[f][0], cs[f][1], cf[f][0], cf[f][1]);
            else
                drift_md_text(&out, "; in %s %.3gx to %.3gx and %.3gx to %.3gx", drift_format_name(cli->formats[f]),
                    cs[f][0], cs[f][1], cf[f][0], cf[f][1]);
            if (!same) drift_md_text(&out, " (%s)", verdict(fs[f], cf[f], cs[f]));
        }
        if (w0 && same)
            drift_md_text(&out, ". The score rounding is %s.\n", w0);
        else if (w0)
            drift_md_text(&out, ".\n");
    }
    drift_md_text(&out, "- flash:64,64 / standard over every format and length: %.3g to %.3g.\n", rat_lo, rat_hi);
    int all_ok[4] = {1, 1, 1, 1};
    for (int f = 0; f < nf; f++)
        for (int kk = 0; kk < nk; kk++) {
            size_t t = (size_t)f * (size_t)nk + (size_t)kk;
            int fam = kern[kk].kind;
            if (dec_diff[t]) all_ok[fam] = 0;
        }
    long cnt_n = 0;
    for (int f = 0; f < nf; f++)
        for (int kk = 0; kk < nk; kk++)
            if (kern[kk].kind == DRIFT_ATTN_SPLITKV_N) cnt_n += dec_diff[(size_t)f * (size_t)nk + (size_t)kk];
    drift_md_text(&out,
        "- Prefill vs decode over %zu tokens, every format: standard %s, flash %s, splitkv:size=%ld %s; "
        "splitkv:%ld %s (%ld rows differ over the formats): a fixed number of splits cuts the keys by the length, "
        "so decode (length i + 1) and prefill (length %zu) sum in other orders.\n",
        n, all_ok[0] ? "identical" : "DIFFERS", all_ok[1] ? "identical" : "DIFFERS", ssize,
        all_ok[3] ? "identical" : "DIFFERS", splits, all_ok[2] ? "is identical at this length" : "differs", cnt_n, n);
    { /* padding, first format: which kernels change under left and right padding */
        char l[512] = "", r[512] = "";
        size_t ol = 0, orr = 0;
        for (int kk = 0; kk < nk; kk++) {
            if (pad_diff[kk * 2] && ol < sizeof l)
                ol += (size_t)snprintf(l + ol, sizeof l - ol, "%s%s", ol ? ", " : "", kname[kk]);
            if (pad_diff[kk * 2 + 1] && orr < sizeof r)
                orr += (size_t)snprintf(r + orr, sizeof r - orr, "%s%s", orr ? ", " : "", kname[kk]);
        }
        drift_md_text(&out,
            "- Padding (%s, %zu masked keys of other values): left padding changes the bits of %s (it moves every tile and split boundary "
            "relative to the sequence); right padding changes %s. Standard, whose masked keys add exact zeros, is %s under both.\n",
            drift_format_name(cli->formats[0]), P, ol ? l : "no kernel", orr ? r : "no kernel",
            (!pad_diff[0] && !pad_diff[1]) ? "bit-identical" : "NOT identical");
    }
    free(fs);
    drift_out_commit(&out);
}
