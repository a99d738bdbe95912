/* matmul_drift.c — how the error of a matrix product grows with K, per format and kernel.
 *
 * Question: C = A B is computed with many different numerics (input format, accumulator,
 * tile, split-K, tensor-core arithmetic). How far is each from the exact product, how does
 * that distance grow with the inner dimension K, and how many different answers does one
 * product have when only the split-K factor changes?
 *
 * What it sweeps (every result against the exact product of the SAME rounded inputs, so
 * only the arithmetic of the product is measured, law 1):
 *   (a) K = 2^6 .. 2^14 (quick 2^6 .. 2^10 with 16 x 16 outputs; default 32 x 32 outputs;
 *       full 2^6 .. 2^16 with 64 x 64), input formats --formats (fp32, tf32, bf16, fp16,
 *       fp8e4m3) accumulated in fp32, and fp16 / bf16 also in their own format (--accs);
 *       kernels --kernels (naive, tiled:128,128,32, splitk:16, splitk:16:tree, tc:h100,
 *       tc:a100, tc:v100; a tensor-core model runs only on the formats its architecture
 *       takes, and only into fp32 or fp16); inputs --dists: normal (A and B standard
 *       normal) and llm (A LLM-like activations with 0.5% outliers of 20..100, lib/core/gen.c;
 *       B normal). Metrics per configuration: NMSE = sum (c - e)^2 / sum e^2 (the metric
 *       of llama.cpp's test-backend-ops, whose matmul threshold is 5e-4), the normalised
 *       error |c - e| / sum_k |a_k b_k| (mean and max over outputs: the quantity the
 *       sqrt(K) u and K u bounds speak about), and the median relative error |c - e| / |e|.
 *   (b) at K = --splitk-K (default 4096, quick 1024), every split-K factor S = 1 .. 64
 *       (splitk:S, seq combination): how many distinct values each output takes.
 *
 * How to run:
 *   ./lab run matmul_drift                      default profile (~10-30 s on 2 cores)
 *   ./lab run matmul_drift --profile quick      a few seconds
 *   ./lab run matmul_drift --formats bf16 --kernels naive,splitk:4,tc:h100 --dists normal
 *   ./lab plot matmul_drift                     plots/matmul_drift_{error,llm,splitk}.png
 *
 * What to look for: with an fp32 accumulator the seq error grows like sqrt(K) u (slope
 * ~0.5 on the log-log plot of the relative error), far below the worst-case K u; split-K
 * and its tree shorten every chain and sit lower still. The tensor-core models truncate
 * instead of rounding, so their errors share one sign, add up, and grow like K (slope ~1):
 * at large K they are an order of magnitude above the seq emulation. A 16-bit accumulator
 * grows like sqrt(K) too but starts 2^13 (fp16) to 2^16 (bf16) times higher, and its NMSE
 * crosses llama.cpp's 5e-4 threshold within a few thousand terms. fp8 products are so short
 * that fp32 sums them exactly until the partial sums outgrow 24 bits. Every split factor
 * gives a different answer: one product has dozens of "correct" results.
 *
 * Outputs (temporary files renamed when complete):
 *   data/matmul_drift.csv           (a) one row per (dist, format, acc, kernel, K)
 *   data/matmul_drift_splitk.csv    (b) one row per (dist, format, S)
 *   data/matmul_drift_distinct.csv  (b) one row per (dist, format): distinct values per output
 *   data/matmul_drift.md            report fragment: question, key table, takeaway */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "drift.h"
#include "format.h"
#include "kernel_list.h"
#include "loglog.h"
#include "matmul_sweep.h"
#include "output.h"

#define LLAMA_NMSE_MATMUL 5e-4 /* llama.cpp tests/test-backend-ops.cpp: test_mul_mat max_nmse_err */
#define MAX_KERNELS 16
#define MAX_K DRIFT_LIST_MAX /* the option's own limit: a longer list is refused by the parser, never cut */
#define SPLIT_MAX DRIFT_MM_SPLIT_MAX

static void progress(void *cli, size_t done, size_t total) { drift_progress(cli, done, total); }

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *kernels_opt = "naive,tiled:128,128,32,splitk:16,splitk:16:tree,tc:h100,tc:a100,tc:v100";
    const char *accs_opt = "fp32,own";
    const char *dists_opt = "normal,llm";
    long Mopt = 0, Nopt = 0, splitK = 0;
    drift_intlist_t Ks = {{0}, 0};
    const drift_cli_opt_t opts[] = {
        {"kernels", DRIFT_OPT_STRING, &kernels_opt, "LIST",
         "GEMM kernels (default naive,tiled:128,128,32,splitk:16,splitk:16:tree,tc:h100,tc:a100,tc:v100)", 0, 0, {0}},
        {"accs", DRIFT_OPT_LIST, &accs_opt, "LIST",
         "accumulators: fp32 and/or own (the input format itself, for fp16/bf16/tf32) (default fp32,own)", 0, 0, {0}},
        {"dists", DRIFT_OPT_LIST, &dists_opt, "LIST", "input distributions: normal, llm (default normal,llm)", 0, 0, {0}},
        {"K", DRIFT_OPT_INTLIST, &Ks, "N,N,...", "inner dimensions (default by profile: 2^6..2^10 / 2^14 / 2^16)", 1,
         1 << 20, {0}},
        {"M", DRIFT_OPT_INT, &Mopt, "N", "rows of C", 1, 4096, {"16", "32", "64"}},
        {"N", DRIFT_OPT_INT, &Nopt, "N", "columns of C", 1, 4096, {"16", "32", "64"}},
        {"splitk-K", DRIFT_OPT_INT, &splitK, "N", "K of the split-factor sweep S = 1..64", 64, 1 << 20, {"1024", "4096", "4096"}},
    };
    const drift_cli_spec_t spec = {
        "matmul_drift", "How far is C = A B from the exact product, per format and kernel, as K grows?",
        "fp32,tf32,bf16,fp16,fp8e4m3", "seq", opts, (int)(sizeof opts / sizeof opts[0]),
        "sweeps GEMM kernels, not reduction orders (use --kernels; each kernel's order is in the CSV)", /* no_orders */
        NULL, /* cpu_only: GEMMs go through the dispatcher (--backend cuda) */
        "each cell is how far the product is from the exact one (median over outputs of the relative error), with the "
        "slope of its growth over K in parentheses. With an fp32 accumulator the error grows like sqrt(K) (slope ~0.5): "
        "rounding errors mostly cancel. Split-K shortens every chain and lowers it. The tensor-core models truncate "
        "instead of rounding, so their errors share one sign and grow like K (slope ~1). A 16-bit accumulator grows "
        "like sqrt(K) as well, but thousands of times higher. Plots: ./lab plot matmul_drift."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);

    drift_gemm_kernel_t kern[MAX_KERNELS];
    char kname[MAX_KERNELS][DRIFT_GEMM_KERNEL_SPEC_MAX], err[256];
    int nk = drift_kernel_list_parse(kern, kname, MAX_KERNELS, kernels_opt, err, sizeof err);
    if (nk < 0) drift_die("--kernels: %s", err);

    int acc_fp32 = 0, acc_own = 0, nd = 0;
    char buf[64], *save = NULL;
    if (strlen(accs_opt) >= sizeof buf || !*accs_opt) drift_die("--accs: '%s' (accepted: fp32, own)", accs_opt);
    strcpy(buf, accs_opt);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "fp32")) acc_fp32 = 1;
        else if (!strcmp(t, "own")) acc_own = 1;
        else drift_die("--accs: unknown accumulator '%s' (accepted: fp32, own)", t);
    }
    drift_dist_t dists[2];
    if (strlen(dists_opt) >= sizeof buf || !*dists_opt) drift_die("--dists: '%s' (accepted: normal, llm)", dists_opt);
    strcpy(buf, dists_opt);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        drift_dist_t d;
        if (drift_dist_parse(&d, t) || (d != DRIFT_DIST_NORMAL && d != DRIFT_DIST_LLM))
            drift_die("--dists: unknown distribution '%s' (accepted: normal, llm)", t);
        for (int m = 0; m < nd; m++)
            if (dists[m] == d) drift_die("--dists: '%s' given twice", t);
        if (nd == 2) drift_die("--dists: too many (accepted: normal, llm)");
        dists[nd++] = d;
    }

    drift_mm_setting_t set[2 * DRIFT_NFORMATS];
    int ns = 0;
    for (int f = 0; f < cli.nformats; f++) {
        drift_format_t in = cli.formats[f];
        if (in == DRIFT_FP64) drift_die("--formats: fp64 inputs are not swept here (accepted: fp32, tf32, bf16, fp16, fp8e4m3, fp8e5m2)");
        if (acc_fp32) set[ns++] = (drift_mm_setting_t){in, DRIFT_FP32};
        if (acc_own && (in == DRIFT_FP16 || in == DRIFT_BF16 || in == DRIFT_TF32)) set[ns++] = (drift_mm_setting_t){in, in};
    }
    if (ns == 0) drift_die("--accs: no setting left (own applies to fp16, bf16, tf32 only)");

    const size_t M = (size_t)Mopt, N = (size_t)Nopt, MN = M * N, KS = (size_t)splitK;
    size_t Kv[MAX_K], Kmax = KS;
    int nK = 0;
    if (Ks.n) {
        for (int t = 0; t < Ks.n && nK < MAX_K; t++) Kv[nK++] = (size_t)Ks.v[t];
    } else {
        for (int e = 6; e <= (int)drift_by_profile(&cli, 10, 14, 16); e++) Kv[nK++] = (size_t)1 << e;
    }
    for (int t = 0; t < nK; t++) Kmax = Kv[t] > Kmax ? Kv[t] : Kmax;
    drift_require_memory(&cli, 16.0 * (double)Kmax * (double)(M + N), "--K, --M, --N, --splitk-K");

    /* ---- (a) every kernel and setting over K; (b) split factors 1..64 at K = KS, fp32 accumulation ---- */
    const drift_mm_sweep_t W = {M, N, Kv, nK, dists, nd, set, ns, kern, nk, cli.seed, progress, &cli};
    drift_mm_cell_t *cells = calloc((size_t)nd * ns * nk * nK, sizeof *cells);
    drift_mm_split_t *srows = calloc((size_t)nd * ns * SPLIT_MAX, sizeof *srows);
    drift_mm_distinct_t *drows = calloc((size_t)nd * ns, sizeof *drows);
    double *slope = malloc((size_t)nd * ns * nk * sizeof *slope);
    if (!cells || !srows || !drows || !slope) drift_die("out of memory");
    int rc = drift_mm_sweep_run(cells, &W);
    size_t nsr, ndr;
    if (!rc) rc = drift_mm_split_run(srows, &nsr, drows, &ndr, &W, KS);
    if (rc) drift_die("drift_gemm failed: %s", drift_strerror(rc));
    drift_progress(&cli, (size_t)nd * nK, (size_t)nd * nK);
#define CELL(d, si, kk, ki) (&cells[drift_mm_at(&W, d, si, kk, ki)])

    /* the growth exponent of the median relative error in K per (dist, setting, kernel), and
     * the key K of the tables: the largest swept K not above 4096 (else the smallest) */
    for (int d = 0; d < nd; d++)
        for (int si = 0; si < ns; si++)
            for (int kk = 0; kk < nk; kk++) {
                double xs[MAX_K], ys[MAX_K];
                int m = 0;
                for (int ki = 0; ki < nK; ki++)
                    if (CELL(d, si, kk, ki)->ran) xs[m] = (double)Kv[ki], ys[m++] = CELL(d, si, kk, ki)->err.rel_med;
                slope[(d * ns + si) * nk + kk] = drift_loglog_slope(xs, ys, m);
            }
    int key = 0;
    for (int t = 0; t < nK; t++)
        if (Kv[t] <= 4096 && Kv[t] >= Kv[key]) key = t;

    /* ---- declared output ---- */
    enum { T_MAIN, T_SPLIT, T_DIST, T_MD_NMSE, T_SHOW_REL, T_SHOW_DIST };
    static const drift_col_t MAIN[] = {
        DRIFT_C_TEXT("dist"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("acc"), DRIFT_C_KEY("kernel_key"), DRIFT_C_TEXT("order"),
        DRIFT_C_INT("K"), DRIFT_C_NUM("nmse", "%.6e"), DRIFT_C_NUM("err_norm_mean", "%.6e"),
        DRIFT_C_NUM("err_norm_max", "%.6e"), DRIFT_C_NUM("rel_err_median", "%.6e"), DRIFT_C_NUM("u_acc", "%.6e"),
        DRIFT_C_NUM("sqrtK_u", "%.6e"), DRIFT_C_NUM("K_u", "%.6e"), DRIFT_C_INT("llama_pass"), DRIFT_C_NUM("c00", "%.9g"),
        DRIFT_C_HEX("c00_hex"), DRIFT_C_HEX("exact00_hex"), DRIFT_C_QUOTED("kernel")};
    static const drift_col_t SPLIT[] = {
        DRIFT_C_TEXT("dist"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("acc"), DRIFT_C_INT("K"), DRIFT_C_INT("S"),
        DRIFT_C_TEXT("kernel"), DRIFT_C_NUM("nmse", "%.6e"), DRIFT_C_NUM("err_norm_mean", "%.6e"), DRIFT_C_INT("changed"),
        DRIFT_C_HEX("c00_hex")};
    static const drift_col_t DIST[] = {DRIFT_C_TEXT("dist"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("acc"),
                                       DRIFT_C_INT("K"), DRIFT_C_INT("outputs"), DRIFT_C_NUM("mean_distinct", "%.4f"),
                                       DRIFT_C_INT("max_distinct"), DRIFT_C_INT("changed_any")};
    static const drift_col_t SHOW_DIST[] = {DRIFT_C_TEXT("dist"), DRIFT_C_TEXT("format"),
                                            DRIFT_C_NUM("distinct results per output (mean)", "%.1f"), DRIFT_C_INT("max")};
    drift_col_t by_kernel[2 + MAX_KERNELS] = {DRIFT_C_TEXT("inputs"), DRIFT_C_TEXT("accumulator")};
    for (int kk = 0; kk < nk; kk++) by_kernel[2 + kk] = (drift_col_t)DRIFT_C_CELL(kname[kk]);
    char title[3][256];
    snprintf(title[0], sizeof title[0], "**NMSE at K = %zu, %s inputs** (llama.cpp's matmul threshold is %g; values "
             "above it are in bold):", Kv[key], drift_dist_name(dists[0]), LLAMA_NMSE_MATMUL);
    snprintf(title[1], sizeof title[1], "median relative error |c-e|/|e| at K = %zu (%s inputs); (slope over K = "
             "%zu..%zu)", Kv[key], drift_dist_name(dists[0]), Kv[0], Kv[nK - 1]);
    snprintf(title[2], sizeof title[2], "distinct results per output over splitk:1..%d (K = %zu)", SPLIT_MAX, KS);
    const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, MAIN, 18},
                                         {"_splitk.csv", NULL, 0, SPLIT, 10},
                                         {"_distinct.csv", NULL, 0, DIST, 8},
                                         {NULL, title[0], DRIFT_SHOW_MD, by_kernel, 2 + nk},
                                         {NULL, title[1], DRIFT_SHOW_STDOUT, by_kernel, 2 + nk},
                                         {NULL, title[2], DRIFT_SHOW_STDOUT, SHOW_DIST, 4}};
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 6, 1);
    drift_md_question(&out, "Every result is held against the exact product of the same rounded inputs (a "
                            "superaccumulator, correctly rounded), so only the arithmetic of the product is measured.");
    drift_md_reproduce(&out, "data/matmul_drift*.csv; %zu x %zu outputs, K = %zu .. %zu", M, N, Kv[0], Kv[nK - 1]);
    char b1[80], b2[32];
    drift_out_meta(&out, T_MAIN, "quoting", "kernel = the canonical spec, double-quoted and last (tiled:BM,BN,BK holds commas); kernel_key = the same with commas as x, for tools that split on every comma");
    drift_out_meta(&out, T_MAIN, "table", "error of C = A B (M x N outputs) against the exact product of the rounded inputs");
    drift_out_meta(&out, T_MAIN, "shape", "M = %zu, N = %zu", M, N);
    drift_out_meta(&out, T_MAIN, "kernels", "%s", kernels_opt);
    drift_out_meta(&out, T_MAIN, "inputs",
                   "normal: A, B standard normal; llm: A LLM-like activations (lib/core/gen.c, outliers per row), B "
                   "standard normal; Philox stream (seed, \"matmul_drift\", K, 2*dist + matrix); A and B rounded "
                   "to the input format (RNE)");
    drift_out_meta(&out, T_MAIN, "exact", "drift_exact_dot of the rounded inputs, correctly rounded to double");
    drift_out_meta(&out, T_MAIN, "metrics",
                   "nmse = sum (c-e)^2 / sum e^2; err_norm = |c-e| / sum_k |a_k b_k| (mean, max over outputs); "
                   "rel_err_median = median |c-e|/|e|; u_acc = unit roundoff of the accumulator; guides sqrtK_u "
                   "= sqrt(K) u_acc, K_u = K u_acc");
    drift_out_meta(&out, T_MAIN, "threshold", "llama.cpp test-backend-ops mul_mat max NMSE %g", LLAMA_NMSE_MATMUL);
    /* Rows ordered by (dist, setting, kernel, K): each curve of the plot is contiguous. */
    for (int d = 0; d < nd; d++)
        for (int si = 0; si < ns; si++)
            for (int kk = 0; kk < nk; kk++)
                for (int ki = 0; ki < nK; ki++) {
                    const drift_mm_cell_t *r = CELL(d, si, kk, ki);
                    if (!r->ran) continue;
                    size_t K = Kv[ki];
                    double u = drift_format_info(set[si].acc)->unit_roundoff;
                    drift_order_t o;
                    char ospec[DRIFT_ORDER_SPEC_MAX];
                    drift_gemm_kernel_order(&o, &kern[kk]);
                    if (drift_order_print(ospec, sizeof ospec, &o) < 0) snprintf(ospec, sizeof ospec, "?");
                    drift_row(&out, T_MAIN, DRIFT_TXT(drift_dist_name(dists[d])), DRIFT_TXT(drift_format_name(set[si].in)),
                              DRIFT_TXT(drift_format_name(set[si].acc)), DRIFT_TXT(kname[kk]), DRIFT_TXT(ospec), DRIFT_INT(K),
                              DRIFT_NUM(r->err.nmse), DRIFT_NUM(r->err.err_mean), DRIFT_NUM(r->err.err_max),
                              DRIFT_NUM(r->err.rel_med), DRIFT_NUM(u), DRIFT_NUM(sqrt((double)K) * u), DRIFT_NUM((double)K * u),
                              DRIFT_INT(r->err.nmse <= LLAMA_NMSE_MATMUL), DRIFT_NUM(r->c00), DRIFT_NUM(r->c00),
                              DRIFT_NUM(r->e00), DRIFT_TXT(kname[kk]));
                }

    drift_out_meta(&out, T_SPLIT, "table", "split-K factors S = 1..%d (splitk:S, seq combination), K = %zu, fp32 accumulation",
                   SPLIT_MAX, KS);
    drift_out_meta(&out, T_SPLIT, "changed", "outputs (of %zu) whose value differs from S = 1, which is seq", MN);
    for (size_t t = 0; t < nsr; t++) {
        const drift_mm_split_t *r = &srows[t];
        char kspec[32];
        snprintf(kspec, sizeof kspec, "splitk:%d", r->S);
        drift_row(&out, T_SPLIT, DRIFT_TXT(drift_dist_name(dists[r->dist])), DRIFT_TXT(drift_format_name(set[r->setting].in)),
                  DRIFT_TXT("fp32"), DRIFT_INT(KS), DRIFT_INT(r->S), DRIFT_TXT(kspec), DRIFT_NUM(r->nmse),
                  DRIFT_NUM(r->err_mean), DRIFT_INT(r->changed), DRIFT_NUM(r->c00));
    }
    drift_out_meta(&out, T_DIST, "table", "distinct values each output takes over S = 1..%d (K = %zu, fp32 accumulation)",
                   SPLIT_MAX, KS);
    for (size_t t = 0; t < ndr; t++) {
        const drift_mm_distinct_t *q = &drows[t];
        const char *dn = drift_dist_name(dists[q->dist]), *fn = drift_format_name(set[q->setting].in);
        drift_row(&out, T_DIST, DRIFT_TXT(dn), DRIFT_TXT(fn), DRIFT_TXT("fp32"), DRIFT_INT(KS), DRIFT_INT(MN),
                  DRIFT_NUM(q->mean_distinct), DRIFT_INT(q->max_distinct), DRIFT_INT(q->changed_any));
        drift_row(&out, T_SHOW_DIST, DRIFT_TXT(dn), DRIFT_TXT(fn), DRIFT_NUM(q->mean_distinct), DRIFT_INT(q->max_distinct));
    }

    /* the key-K tables: NMSE (bold above the threshold) in the fragment, median relative error
     * (slope) on stdout; "—": the kernel does not take the setting */
    char cell[2][MAX_KERNELS][160];
    drift_cell_t row[2][2 + MAX_KERNELS];
    for (int si = 0; si < ns; si++) {
        for (int t = 0; t < 2; t++)
            row[t][0] = DRIFT_TXT(drift_format_name(set[si].in)), row[t][1] = DRIFT_TXT(drift_format_name(set[si].acc));
        for (int kk = 0; kk < nk; kk++) {
            const drift_mm_cell_t *hit = CELL(0, si, kk, key);
            drift_fmt_num(b1, sizeof b1, hit->err.nmse, "%.3g");
            snprintf(cell[0][kk], sizeof cell[0][kk], hit->err.nmse > LLAMA_NMSE_MATMUL ? "**%s**" : "%s", b1);
            drift_fmt_num(b1, sizeof b1, hit->err.rel_med, "%.3g");
            drift_fmt_num(b2, sizeof b2, slope[(0 * ns + si) * nk + kk], "%.3g");
            snprintf(cell[1][kk], sizeof cell[1][kk], "%s (%s)", b1, b2);
            if (!hit->ran) snprintf(cell[0][kk], sizeof cell[0][kk], "—"), snprintf(cell[1][kk], sizeof cell[1][kk], "-");
            row[0][2 + kk] = DRIFT_TXT(cell[0][kk]), row[1][2 + kk] = DRIFT_TXT(cell[1][kk]);
        }
        drift_row_cells(&out, T_MD_NMSE, row[0], 2 + nk);
        drift_row_cells(&out, T_SHOW_REL, row[1], 2 + nk);
    }
    drift_md_end(&out, T_MD_NMSE);
    drift_md_text(&out, "(— : the kernel does not take that setting; tensor-core models run only the formats their "
                        "architecture accepts, into fp32 or fp16.)\n\n**Takeaway.**\n\n");
    int naive = -1, split = -1, tch = -1; /* the first of each: growth exponents and ratios below */
    for (int kk = nk - 1; kk >= 0; kk--) {
        if (kern[kk].family == DRIFT_GEMM_NAIVE) naive = kk;
        if (kern[kk].family == DRIFT_GEMM_SPLITK) split = kk;
        if (kern[kk].family == DRIFT_GEMM_TC && kern[kk].arch == DRIFT_TC_H100) tch = kk;
    }
    const int kl = nK - 1;
    const size_t Klast = Kv[kl];
    if (naive >= 0) {
        drift_md_text(&out, "- Growth with K (slope of the median relative error |c-e|/|e| on log-log axes, %s inputs, %s): ",
                      drift_dist_name(dists[0]), kname[naive]);
        for (int si = 0; si < ns; si++)
            drift_md_text(&out, "%s%s into %s %.2f", si ? ", " : "", drift_format_name(set[si].in),
                          drift_format_name(set[si].acc), slope[(0 * ns + si) * nk + naive]);
        drift_md_text(&out, ". A slope of 0.5 is the sqrt(K) growth of independent rounding errors; 1 is the K u worst "
                            "case, the growth of errors that all have the same sign (truncation).\n");
        for (int si = 0; si < ns; si++) {
            const drift_mm_cell_t *rn = CELL(0, si, naive, kl), *rsp = split >= 0 ? CELL(0, si, split, kl) : NULL,
                                  *rtc = tch >= 0 ? CELL(0, si, tch, kl) : NULL;
            if (set[si].acc != DRIFT_FP32 || set[si].in != DRIFT_BF16 || !rn->ran) continue;
            double u = drift_format_info(DRIFT_FP32)->unit_roundoff, e = rn->err.rel_med;
            drift_md_text(&out, "- bf16 inputs, fp32 accumulation, K = %zu: the seq kernel's median relative error is "
                                "%.3g, that is %.2f sqrt(K) u (u = 2^-24) and %.4f K u",
                          Klast, e, e / (sqrt((double)Klast) * u), e / ((double)Klast * u));
            if (rsp && rsp->ran) drift_md_text(&out, "; %s brings it to %.3g (%.1fx smaller)", kname[split], rsp->err.rel_med, e / rsp->err.rel_med);
            if (rtc && rtc->ran)
                drift_md_text(&out, "; the H100 tensor-core model, which truncates, gives %.3g (%.1fx the seq error)",
                              rtc->err.rel_med, rtc->err.rel_med / e);
            drift_md_text(&out, ".\n");
        }
        for (int si = 0; si < ns; si++) {
            const drift_mm_cell_t *rn = CELL(0, si, naive, kl);
            if (set[si].acc == DRIFT_FP32 || !rn->ran) continue;
            drift_fmt_num(b1, sizeof b1, rn->err.nmse, "%.3g");
            drift_fmt_num(b2, sizeof b2, rn->err.rel_med, "%.3g");
            drift_md_text(&out, "- %s accumulated in %s, K = %zu, seq: NMSE %s, median relative error %s%s.\n",
                          drift_format_name(set[si].in), drift_format_name(set[si].acc), Klast, b1, b2,
                          rn->err.nmse > LLAMA_NMSE_MATMUL
                              ? " — far above llama.cpp's threshold: the fp32 accumulator is not optional" : "");
        }
    }
    long fails = 0, total_rows = 0;
    for (int d = 0; d < nd; d++)
        for (int si = 0; si < ns; si++)
            for (int kk = 0; kk < nk; kk++)
                if (CELL(d, si, kk, key)->ran) total_rows++, fails += CELL(d, si, kk, key)->err.nmse > LLAMA_NMSE_MATMUL;
    drift_md_text(&out, "- At K = %zu, %ld of %ld (distribution, setting, kernel) configurations exceed the %g NMSE "
                        "threshold.\n", Kv[key], fails, total_rows, LLAMA_NMSE_MATMUL);
    for (size_t t = 0; t < ndr; t++) {
        const drift_mm_distinct_t *q = &drows[t];
        if (set[q->setting].in != DRIFT_BF16 && !(ndr == 1)) continue;
        drift_md_text(&out, "- One product, many answers (%s inputs, %s, K = %zu): over split factors S = 1..%d each "
                            "output takes %.1f distinct values on average (at most %d), and %ld of %zu outputs change "
                            "with S.\n", drift_format_name(set[q->setting].in), drift_dist_name(dists[q->dist]), KS,
                      SPLIT_MAX, q->mean_distinct, q->max_distinct, q->changed_any, MN);
    }
    drift_out_commit(&out);
    free(cells), free(srows), free(drows), free(slope);
    return 0;
}
