/* matmul_drift.c — how the error of a matrix product grows with K, per format and kernel.
 *
 * Question: C = A B is computed with many different numerics (input format, accumulator,
 * tile, split-K, tensor-core arithmetic). How far is each from the exact product, and how does
 * that distance grow with the inner dimension K? (matmul_drift_splitk asks how many different
 * answers one product has when only the split-K factor changes.)
 *
 * What it sweeps (every result against the exact product of the SAME rounded inputs, so
 * only the arithmetic of the product is measured, law 1):
 *   K = 2^6 .. 2^14 (quick 2^6 .. 2^10 with 16 x 16 outputs; default 32 x 32 outputs;
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
 *
 * How to run:
 *   ./lab run matmul_drift                      default profile (~10-30 s on 2 cores)
 *   ./lab run matmul_drift --profile quick      a few seconds
 *   ./lab run matmul_drift --formats bf16 --kernels naive,splitk:4,tc:h100 --dists normal
 *   ./lab plot matmul_drift                     plots/matmul_drift_{error,llm}.png
 *
 * What to look for: with an fp32 accumulator the seq error grows like sqrt(K) u (slope
 * ~0.5 on the log-log plot of the relative error), far below the worst-case K u; split-K
 * and its tree shorten every chain and sit lower still. The tensor-core models truncate
 * instead of rounding, so their errors share one sign, add up, and grow like K (slope ~1):
 * at large K they are an order of magnitude above the seq emulation. A 16-bit accumulator
 * grows like sqrt(K) too but starts 2^13 (fp16) to 2^16 (bf16) times higher, and its NMSE
 * crosses llama.cpp's 5e-4 threshold within a few thousand terms. fp8 products are so short
 * that fp32 sums them exactly until the partial sums outgrow 24 bits.
 *
 * Outputs (temporary files renamed when complete):
 *   data/matmul_drift.csv           one row per (dist, format, acc, kernel, K)
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
#include "matmul_lab.h"
#include "matmul_sweep.h"

#define MAX_KERNELS 16
#define MAX_K DRIFT_LIST_MAX /* the option's own limit: a longer list is refused by the parser, never cut */

static void progress(void *cli, size_t done, size_t total) { drift_progress(cli, done, total); }

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *kernels_opt = "naive,tiled:128,128,32,splitk:16,splitk:16:tree,tc:h100,tc:a100,tc:v100";
    const char *accs_opt = "fp32,own";
    const char *dists_opt = "normal,llm";
    long Mopt = 0, Nopt = 0;
    drift_intlist_t Ks = {{0}, 0};
    const drift_cli_opt_t opts[] = {
        {"kernels", DRIFT_OPT_STRING, &kernels_opt, "LIST",
            "GEMM kernels (default naive,tiled:128,128,32,splitk:16,splitk:16:tree,tc:h100,tc:a100,tc:v100)", 0, 0,
            {0}},
        {"accs", DRIFT_OPT_LIST, &accs_opt, "LIST",
            "accumulators: fp32 and/or own (the input format itself, for fp16/bf16/tf32) (default fp32,own)", 0, 0,
            {0}},
        {"dists", DRIFT_OPT_LIST, &dists_opt, "LIST", "input distributions: normal, llm (default normal,llm)", 0, 0,
            {0}},
        {"K", DRIFT_OPT_INTLIST, &Ks, "N,N,...", "inner dimensions", 1, 1 << 20,
            {"64,128,256,512,1024", "64,128,256,512,1024,2048,4096,8192,16384",
                "64,128,256,512,1024,2048,4096,8192,16384,32768,65536"}},
        {"M", DRIFT_OPT_INT, &Mopt, "N", "rows of C", 1, 4096, {"16", "32", "64"}},
        {"N", DRIFT_OPT_INT, &Nopt, "N", "columns of C", 1, 4096, {"16", "32", "64"}},
    };
    const drift_cli_spec_t spec = {.name = "matmul_drift",
        .question = "How far is C = A B from the exact product, per format and kernel, as K grows?",
        .default_formats = "fp32,tf32,bf16,fp16,fp8e4m3",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders = "sweeps GEMM kernels, not reduction orders (use --kernels; each kernel's order is in the CSV)",
        .cpu_only = NULL, /* GEMMs go through the dispatcher (--backend cuda) */
        .summary =
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
        if (!strcmp(t, "fp32"))
            acc_fp32 = 1;
        else if (!strcmp(t, "own"))
            acc_own = 1;
        else
            drift_die("--accs: unknown accumulator '%s' (accepted: fp32, own)", t);
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
        if (in == DRIFT_FP64)
            drift_die("--formats: fp64 inputs are not swept here (accepted: fp32, tf32, bf16, fp16, fp8e4m3, fp8e5m2)");
        if (acc_fp32) set[ns++] = (drift_mm_setting_t){in, DRIFT_FP32};
        if (acc_own && (in == DRIFT_FP16 || in == DRIFT_BF16 || in == DRIFT_TF32))
            set[ns++] = (drift_mm_setting_t){in, in};
    }
    if (ns == 0) drift_die("--accs: no setting left (own applies to fp16, bf16, tf32 only)");

    const size_t M = (size_t)Mopt, N = (size_t)Nopt;
    size_t Kv[MAX_K], Kmax = 0;
    int nK = 0;
    for (int t = 0; t < Ks.n && nK < MAX_K; t++) Kv[nK++] = (size_t)Ks.v[t];
    for (int t = 0; t < nK; t++) Kmax = Kv[t] > Kmax ? Kv[t] : Kmax;
    drift_require_memory(&cli, 16.0 * (double)Kmax * (double)(M + N), "--K, --M, --N");

    /* ---- every kernel and setting over K ---- */
    const drift_mm_sweep_t W = {M, N, Kv, nK, dists, nd, set, ns, kern, nk, cli.seed, progress, &cli};
    drift_mm_cell_t *cells = calloc((size_t)nd * ns * nk * nK, sizeof *cells);
    double *slope = malloc((size_t)nd * ns * nk * sizeof *slope);
    if (!cells || !slope)
        drift_die_oom((double)nd * ns * nk * nK * sizeof *cells,
            "the result cells of %d distributions x %d settings x %d kernels x %d K (--K, --kernels: fewer)", nd, ns,
            nk, nK);
    int rc = drift_mm_sweep_run(cells, &W);
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
    const drift_matmul_lab_t lab = {
        &cli, &W, (const char(*)[DRIFT_GEMM_KERNEL_SPEC_MAX])kname, kernels_opt, cells, slope, key};
    drift_matmul_write(&lab); /* matmul_report.c */
    free(cells), free(slope);
    return 0;
}
