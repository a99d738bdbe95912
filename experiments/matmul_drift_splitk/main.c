/* matmul_drift_splitk.c — one matrix product, every split-K factor.
 *
 * Question: a GPU library picks the split-K factor of a product from its shape and the
 * hardware, so the same C = A B is summed in different orders from one deployment to the
 * next. How many different answers does one product have when only the split factor changes,
 * and how far is each from the exact product? (matmul_drift sweeps K, formats and kernels.)
 *
 * What it computes (every result against the exact product of the SAME rounded inputs, so
 * only the arithmetic of the product is measured, law 1): at K = --splitk-K (default 4096,
 * quick 1024), M x N outputs (--M, --N: quick 16 x 16, default 32 x 32, full 64 x 64), the
 * inputs matmul_drift draws at that K (--dists: normal, llm), every split-K factor
 * S = 1 .. 64 (splitk:S, seq combination) for each input format of --formats (fp32, tf32,
 * bf16, fp16, fp8e4m3) accumulated in fp32: the NMSE and the normalised error of each S, how
 * many outputs differ from S = 1 (seq), and how many distinct values each output takes.
 *
 * How to run:
 *   ./lab run matmul_drift_splitk                 default profile (a few seconds on 2 cores)
 *   ./lab run matmul_drift_splitk --formats bf16 --splitk-K 8192 --dists normal
 *   ./lab plot matmul_drift_splitk                plots/matmul_drift_splitk.png
 *
 * What to look for: every split factor gives a different answer: one product has dozens of
 * "correct" results; for fp32, tf32, fp16 and bf16 inputs the shorter chains of a larger S are more
 * accurate (fp8e4m3's error does not fall with S).
 *
 * Outputs (temporary files renamed when complete):
 *   data/matmul_drift_splitk.csv           one row per (dist, format, S)
 *   data/matmul_drift_splitk_distinct.csv  one row per (dist, format): distinct values per output
 *   data/matmul_drift_splitk.md            report fragment: question, takeaway */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "drift.h"
#include "format.h"
#include "split_sweep.h"
#include "splitk_lab.h"

int main(int argc, char **argv)
{
    const char *dists_opt = "normal,llm";
    long Mopt = 0, Nopt = 0, splitK = 0;
    const drift_cli_opt_t opts[] = {
        {"dists", DRIFT_OPT_LIST, &dists_opt, "LIST", "input distributions: normal, llm (default normal,llm)", 0, 0,
            {0}},
        {"M", DRIFT_OPT_INT, &Mopt, "N", "rows of C", 1, 4096, {"16", "32", "64"}},
        {"N", DRIFT_OPT_INT, &Nopt, "N", "columns of C", 1, 4096, {"16", "32", "64"}},
        {"splitk-K", DRIFT_OPT_INT, &splitK, "N", "K of the split-factor sweep S = 1..64", 64, 1 << 20,
            {"1024", "4096", "4096"}},
    };
    const drift_cli_spec_t spec = {.name = "matmul_drift_splitk",
        .question = "How many answers does one matrix product have over its split-K factors?",
        .default_formats = "fp32,tf32,bf16,fp16,fp8e4m3",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders = "sweeps split-K factors, not reduction orders (each factor's kernel is in the CSV)",
        .cpu_only = NULL, /* GEMMs go through the dispatcher (--backend cuda) */
        .summary =
            "each split factor S cuts the inner dimension into S chunks summed apart and then combined, so every S "
            "adds the same products in another order and rounds other partial sums: one output takes many values over S, "
            "and for fp32, tf32, fp16 and bf16 inputs the shorter chains of a larger S are more accurate. A library that picks S from the shape or "
            "the GPU gives another answer, none of them wrong. Plots: ./lab plot matmul_drift_splitk."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);

    /* the distributions in the order given (the first is the takeaway's) */
    static const char *const DIST_NAMES[] = {"normal", "llm"};
    static const drift_dist_t DIST_OF[] = {DRIFT_DIST_NORMAL, DRIFT_DIST_LLM};
    drift_dist_t dists[2];
    int nd = 0;
    char buf[64], *save = NULL;
    if (strlen(dists_opt) >= sizeof buf || !*dists_opt) drift_die("--dists: '%s' (accepted: normal, llm)", dists_opt);
    strcpy(buf, dists_opt);
    for (char *t = strtok_r(buf, ",", &save); t && nd < 2; t = strtok_r(NULL, ",", &save))
        dists[nd++] = DIST_OF[drift_name_pick("--dists", t, DIST_NAMES, 2)]; /* repeats: refused by the parser */
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] == DRIFT_FP64)
            drift_die("--formats: fp64 inputs are not swept here (accepted: fp32, tf32, bf16, fp16, fp8e4m3, fp8e5m2)");

    const size_t M = (size_t)Mopt, N = (size_t)Nopt, KS = (size_t)splitK;
    drift_require_memory(&cli, 16.0 * (double)KS * (double)(M + N), "--M, --N, --splitk-K");
    const drift_mm_split_sweep_t W = {M, N, KS, dists, nd, cli.formats, cli.nformats, cli.seed};
    drift_mm_split_t *srows = calloc((size_t)nd * cli.nformats * DRIFT_MM_SPLIT_MAX, sizeof *srows);
    drift_mm_distinct_t *drows = calloc((size_t)nd * cli.nformats, sizeof *drows);
    if (!srows || !drows)
        drift_die_oom((double)nd * cli.nformats * DRIFT_MM_SPLIT_MAX * sizeof *srows,
            "the rows of %d distributions x %d formats (--formats: fewer)", nd, cli.nformats);
    int rc = drift_mm_split_run(srows, drows, &W);
    if (rc) drift_die("drift_gemm failed: %s", drift_strerror(rc));
    drift_progress(&cli, 1, 1);
    const drift_splitk_lab_t lab = {&cli, &W, srows, drows};
    drift_splitk_write(&lab); /* splitk_report.c */
    free(srows), free(drows);
    return 0;
}
