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
#include <sys/stat.h>

#include "cli.h"
#include "drift.h"
#include "exact.h"
#include "format.h"
#include "gen.h"
#include "metrics.h"
#include "gemm.h"
#include "dispatch.h"
#include "philox.h"
#include "stats.h"
#include "output.h"

#ifdef _OPENMP
#define DRIFT_OMP(x) _Pragma(x)
#else
#define DRIFT_OMP(x)
#endif

#define LLAMA_NMSE_MATMUL 5e-4 /* llama.cpp tests/test-backend-ops.cpp: test_mul_mat max_nmse_err */
#define MAX_KERNELS 16
#define MAX_K 24
#define SPLIT_MAX 64

/* ---- configuration ---------------------------------------------------------------------- */

typedef struct {
    drift_format_t in, acc;
} setting_t;

typedef struct {
    int dist, setting, kernel, kidx; /* indices */
    double nmse, err_mean, err_max, rel_med;
    double c00, e00; /* output (0, 0) and its exact value: bits matter */
} row_t;

/* Splits a kernel list on commas, keeping tiled:BM,BN,BK whole. */
static int parse_kernels(drift_gemm_kernel_t *k, char names[][DRIFT_GEMM_KERNEL_SPEC_MAX], const char *list)
{
    int n = 0;
    const char *p = list;
    if (!*p) drift_die("--kernels: empty list (accepted: naive, tiled:BM,BN,BK, splitk:S[:tree], tc:ARCH)");
    while (*p) {
        const char *end = p;
        int commas = strncmp(p, "tiled:", 6) == 0 ? 3 : 1; /* tiled specs hold two commas */
        for (int c = 0; c < commas; c++) {
            end = strchr(end, ',');
            if (!end) break;
            if (c + 1 < commas) end++;
        }
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[DRIFT_GEMM_KERNEL_SPEC_MAX];
        if (len == 0 || len >= sizeof item) drift_die("--kernels: malformed list '%s'", list);
        memcpy(item, p, len);
        item[len] = 0;
        if (n == MAX_KERNELS) drift_die("--kernels: more than %d kernels", MAX_KERNELS);
        if (drift_gemm_kernel_parse(&k[n], item) != DRIFT_OK)
            drift_die("--kernels: malformed kernel spec '%s' (accepted: naive, tiled:BM,BN,BK, splitk:S, "
                      "splitk:S:tree, tc:v100|a100|h100|b200)",
                      item);
        drift_gemm_kernel_print(names[n], DRIFT_GEMM_KERNEL_SPEC_MAX, &k[n]);
        for (int m = 0; m < n; m++)
            if (drift_gemm_kernel_equal(&k[m], &k[n])) drift_die("--kernels: '%s' given twice", item);
        n++;
        if (!end) break;
        p = end + 1;
        if (!*p) drift_die("--kernels: empty item in list '%s'", list);
    }
    return n;
}

/* Does the kernel run this setting? Tensor-core models: only the inputs their architecture
 * takes, and only into fp32 or fp16 (the model's output format). */
static int kernel_runs(const drift_gemm_kernel_t *k, setting_t s)
{
    drift_order_t o;
    drift_gemm_kernel_order(&o, k);
    drift_recipe_t r = drift_recipe(s.in, &o, s.acc, s.acc);
    return drift_recipe_check(&r, NULL, 0) == DRIFT_OK;
}

/* Inputs: A (M x K) from the distribution, B (K x N) standard normal. One Philox stream per
 * (dist, K, matrix): independent of formats, kernels and threads. */
static void make_inputs(double *A, double *B, size_t M, size_t N, size_t K, drift_dist_t d, uint64_t seed)
{
    drift_stream_t s;
    drift_stream_init(&s, seed, drift_fnv1a32("matmul_drift"), (uint32_t)K, (uint32_t)(2 * d));
    for (size_t i = 0; i < M; i++) drift_gen_fill(A + i * K, K, d, &s); /* outliers per row */
    drift_stream_init(&s, seed, drift_fnv1a32("matmul_drift"), (uint32_t)K, (uint32_t)(2 * d + 1));
    drift_gen_fill(B, K * N, DRIFT_DIST_NORMAL, &s);
}

/* Exact witnesses of the rounded inputs: E[i][j] = the dot correctly rounded to double,
 * W[i][j] = sum_k |a_k b_k| correctly rounded (the normaliser). */
static void exact_product(double *E, double *W, const double *Ar, const double *Br, size_t M, size_t N, size_t K)
{
    int fail = 0;
    DRIFT_OMP("omp parallel reduction(| : fail)")
    {
        double *col = malloc(K * sizeof *col), *acol = malloc(K * sizeof *acol), *arow = malloc(K * sizeof *arow);
        if (!col || !acol || !arow) fail = 1;
        DRIFT_OMP("omp for schedule(static)")
        for (size_t j = 0; j < N; j++) {
            if (fail) continue;
            for (size_t k = 0; k < K; k++) col[k] = Br[k * N + j], acol[k] = fabs(col[k]);
            for (size_t i = 0; i < M; i++) {
                for (size_t k = 0; k < K; k++) arow[k] = fabs(Ar[i * K + k]);
                if (drift_exact_dot(&E[i * N + j], Ar + i * K, col, K, DRIFT_FP64, DRIFT_RNE) ||
                    drift_exact_dot(&W[i * N + j], arow, acol, K, DRIFT_FP64, DRIFT_RNE))
                    fail = 1;
            }
        }
        free(col), free(acol), free(arow);
    }
    if (fail) drift_die("exact reference failed (out of memory?)");
}

static void metrics(row_t *r, const double *C, const double *E, const double *W, size_t n, double *scratch)
{
    r->nmse = drift_nmse(C, E, n);
    double sum = 0, mx = 0;
    for (size_t t = 0; t < n; t++) {
        double e = W[t] > 0 ? drift_abs_err(C[t], E[t]) / W[t] : 0;
        sum += e;
        if (e > mx) mx = e;
        scratch[t] = drift_rel_err(C[t], E[t]);
    }
    r->err_mean = sum / (double)n;
    r->err_max = mx;
    qsort(scratch, n, sizeof *scratch, drift_cmp_double);
    r->rel_med = n % 2 ? scratch[n / 2] : 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
    r->c00 = C[0];
    r->e00 = E[0];
}

/* Least-squares slope of log(y) against log(x) over the points with y > 0. */
static double loglog_slope(const double *x, const double *y, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0) || !isfinite(y[i])) continue;
        double lx = log(x[i]), ly = log(y[i]);
        sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, m++;
    }
    if (m < 2) return NAN;
    return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

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
        {"accs", DRIFT_OPT_STRING, &accs_opt, "LIST",
         "accumulators: fp32 and/or own (the input format itself, for fp16/bf16/tf32) (default fp32,own)", 0, 0, {0}},
        {"dists", DRIFT_OPT_STRING, &dists_opt, "LIST", "input distributions: normal, llm (default normal,llm)", 0, 0, {0}},
        {"K", DRIFT_OPT_INTLIST, &Ks, "N,N,...", "inner dimensions (default by profile: 2^6..2^10 / 2^14 / 2^16)", 1,
         1 << 20, {0}},
        {"M", DRIFT_OPT_INT, &Mopt, "N", "rows of C", 1, 4096, {"16", "32", "64"}},
        {"N", DRIFT_OPT_INT, &Nopt, "N", "columns of C", 1, 4096, {"16", "32", "64"}},
        {"splitk-K", DRIFT_OPT_INT, &splitK, "N", "K of the split-factor sweep S = 1..64",
         64, 1 << 20, {"1024", "4096", "4096"}},
    };
    const drift_cli_spec_t spec = {
        "matmul_drift",
        "How far is C = A B from the exact product, per format and kernel, as K grows?",
        "fp32,tf32,bf16,fp16,fp8e4m3",
        "seq",
        opts,
        (int)(sizeof opts / sizeof opts[0]),
        "sweeps GEMM kernels, not reduction orders (use --kernels; each kernel's order is in the CSV)", /* no_orders */
        "CPU emulation only for now", /* cpu_only */
        NULL, /* summary: printed by the program itself */
    };
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);

    drift_gemm_kernel_t kern[MAX_KERNELS];
    char kname[MAX_KERNELS][DRIFT_GEMM_KERNEL_SPEC_MAX];
    int nk = parse_kernels(kern, kname, kernels_opt);

    int acc_fp32 = 0, acc_own = 0;
    {
        char buf[64];
        if (strlen(accs_opt) >= sizeof buf || !*accs_opt) drift_die("--accs: '%s' (accepted: fp32, own)", accs_opt);
        strcpy(buf, accs_opt);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (!strcmp(t, "fp32")) acc_fp32 = 1;
            else if (!strcmp(t, "own")) acc_own = 1;
            else drift_die("--accs: unknown accumulator '%s' (accepted: fp32, own)", t);
        }
    }
    drift_dist_t dists[2];
    int nd = 0;
    {
        char buf[64];
        if (strlen(dists_opt) >= sizeof buf || !*dists_opt) drift_die("--dists: '%s' (accepted: normal, llm)", dists_opt);
        strcpy(buf, dists_opt);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            drift_dist_t d;
            if (drift_dist_parse(&d, t) || (d != DRIFT_DIST_NORMAL && d != DRIFT_DIST_LLM))
                drift_die("--dists: unknown distribution '%s' (accepted: normal, llm)", t);
            for (int m = 0; m < nd; m++)
                if (dists[m] == d) drift_die("--dists: '%s' given twice", t);
            if (nd == 2) drift_die("--dists: too many (accepted: normal, llm)");
            dists[nd++] = d;
        }
    }

    setting_t set[2 * DRIFT_NFORMATS];
    int ns = 0;
    for (int f = 0; f < cli.nformats; f++) {
        drift_format_t in = cli.formats[f];
        if (in == DRIFT_FP64) drift_die("--formats: fp64 inputs are not swept here (accepted: fp32, tf32, bf16, fp16, fp8e4m3, fp8e5m2)");
        if (acc_fp32) set[ns++] = (setting_t){in, DRIFT_FP32};
        if (acc_own && (in == DRIFT_FP16 || in == DRIFT_BF16 || in == DRIFT_TF32)) set[ns++] = (setting_t){in, in};
    }
    if (ns == 0) drift_die("--accs: no setting left (own applies to fp16, bf16, tf32 only)");

    size_t M = (size_t)Mopt;
    size_t N = (size_t)Nopt;
    size_t Kv[MAX_K];
    int nK = 0;
    if (Ks.n) {
        for (int t = 0; t < Ks.n && nK < MAX_K; t++) Kv[nK++] = (size_t)Ks.v[t];
    } else {
        int kmax = (int)drift_by_profile(&cli, 10, 14, 16);
        for (int e = 6; e <= kmax; e++) Kv[nK++] = (size_t)1 << e;
    }
    size_t KS = (size_t)splitK;
    size_t Kmax = KS;
    for (int t = 0; t < nK; t++)
        if (Kv[t] > Kmax) Kmax = Kv[t];

    /* -- sweep (a) -- */
    size_t MN = M * N;
    double *A = malloc(M * Kmax * sizeof *A), *B = malloc(Kmax * N * sizeof *B);
    double *Ar = malloc(M * Kmax * sizeof *Ar), *Br = malloc(Kmax * N * sizeof *Br);
    double *E = malloc(MN * sizeof *E), *W = malloc(MN * sizeof *W), *C = malloc(MN * sizeof *C);
    double *scratch = malloc(MN * SPLIT_MAX * sizeof *scratch);
    size_t maxrows = (size_t)nd * ns * nk * nK;
    row_t *rows = calloc(maxrows, sizeof *rows);
    if (!A || !B || !Ar || !Br || !E || !W || !C || !scratch || !rows) drift_die("out of memory");
    size_t nrows = 0, done = 0, total = (size_t)nd * nK;
    for (int d = 0; d < nd; d++)
        for (int ki = 0; ki < nK; ki++, done++) {
            size_t K = Kv[ki];
            drift_progress(&cli, done, total);
            make_inputs(A, B, M, N, K, dists[d], cli.seed);
            drift_format_t last_in = DRIFT_NFORMATS;
            for (int si = 0; si < ns; si++) {
                setting_t s = set[si];
                if (s.in != last_in) { /* the exact witness depends on the rounded inputs only */
                    for (size_t t = 0; t < M * K; t++) Ar[t] = drift_rne(A[t], s.in);
                    for (size_t t = 0; t < K * N; t++) Br[t] = drift_rne(B[t], s.in);
                    exact_product(E, W, Ar, Br, M, N, K);
                    last_in = s.in;
                }
                for (int kk = 0; kk < nk; kk++) {
                    if (!kernel_runs(&kern[kk], s)) continue;
                    drift_gemm_opts_t o = drift_gemm_opts(s.in, s.acc);
                    int rc = drift_gemm(C, A, B, M, N, K, &kern[kk], &o);
                    if (rc) drift_die("drift_gemm %s failed: %s", kname[kk], drift_strerror(rc));
                    row_t *r = &rows[nrows++];
                    r->dist = d, r->setting = si, r->kernel = kk, r->kidx = ki;
                    metrics(r, C, E, W, MN, scratch);
                }
            }
        }

    /* -- sweep (b): split factors 1..64 at K = KS, fp32 accumulation -- */
    typedef struct {
        int dist, setting, S;
        double nmse, err_mean, c00;
        long changed; /* outputs whose value differs from S = 1 (seq) */
    } srow_t;
    typedef struct {
        int dist, setting;
        double mean_distinct;
        int max_distinct;
        long changed_any; /* outputs that take more than one value over S */
    } drow_t;
    srow_t *srows = calloc((size_t)nd * ns * SPLIT_MAX, sizeof *srows);
    drow_t *drows = calloc((size_t)nd * ns, sizeof *drows);
    double *CS = malloc(MN * SPLIT_MAX * sizeof *CS);
    if (!srows || !drows || !CS) drift_die("out of memory");
    size_t nsr = 0, ndr = 0;
    for (int d = 0; d < nd; d++) {
        make_inputs(A, B, M, N, KS, dists[d], cli.seed);
        for (int si = 0; si < ns; si++) {
            setting_t s = set[si];
            if (s.acc != DRIFT_FP32) continue;
            for (size_t t = 0; t < M * KS; t++) Ar[t] = drift_rne(A[t], s.in);
            for (size_t t = 0; t < KS * N; t++) Br[t] = drift_rne(B[t], s.in);
            exact_product(E, W, Ar, Br, M, N, KS);
            for (int S = 1; S <= SPLIT_MAX; S++) {
                drift_gemm_kernel_t k = {DRIFT_GEMM_SPLITK, 0, 0, 0, S, 0, DRIFT_TC_V100};
                drift_gemm_opts_t o = drift_gemm_opts(s.in, DRIFT_FP32);
                double *Cs = CS + (size_t)(S - 1) * MN;
                int rc = drift_gemm(Cs, A, B, M, N, KS, &k, &o);
                if (rc) drift_die("drift_gemm splitk:%d failed: %s", S, drift_strerror(rc));
                row_t tmp;
                metrics(&tmp, Cs, E, W, MN, scratch);
                srow_t *r = &srows[nsr++];
                r->dist = d, r->setting = si, r->S = S, r->nmse = tmp.nmse, r->err_mean = tmp.err_mean, r->c00 = Cs[0];
                r->changed = 0;
                for (size_t t = 0; t < MN; t++) r->changed += memcmp(&Cs[t], &CS[t], sizeof(double)) != 0;
            }
            drow_t *q = &drows[ndr++];
            q->dist = d, q->setting = si, q->max_distinct = 0, q->changed_any = 0;
            double sum = 0;
            for (size_t t = 0; t < MN; t++) {
                for (int S = 0; S < SPLIT_MAX; S++) scratch[S] = CS[(size_t)S * MN + t];
                qsort(scratch, SPLIT_MAX, sizeof *scratch, drift_cmp_double);
                int distinct = 1;
                for (int S = 1; S < SPLIT_MAX; S++) distinct += scratch[S] != scratch[S - 1];
                sum += distinct;
                if (distinct > q->max_distinct) q->max_distinct = distinct;
                q->changed_any += distinct > 1;
            }
            q->mean_distinct = sum / (double)MN;
        }
    }
    drift_progress(&cli, total, total);

    /* -- derived numbers for the takeaway (all from the rows above) -- */
    /* slope of the median relative error vs K per (dist, setting, kernel) */
    double *slope = malloc((size_t)nd * ns * nk * sizeof *slope);
    if (!slope) drift_die("out of memory");
    for (int d = 0; d < nd; d++)
        for (int si = 0; si < ns; si++)
            for (int kk = 0; kk < nk; kk++) {
                double xs[MAX_K], ys[MAX_K];
                int m = 0;
                for (size_t t = 0; t < nrows; t++)
                    if (rows[t].dist == d && rows[t].setting == si && rows[t].kernel == kk)
                        xs[m] = (double)Kv[rows[t].kidx], ys[m++] = rows[t].rel_med;
                slope[(d * ns + si) * nk + kk] = loglog_slope(xs, ys, m);
            }
    /* the key K of the table: the largest swept K not above 4096 (else the smallest) */
    int key = 0;
    for (int t = 0; t < nK; t++)
        if (Kv[t] <= 4096 && Kv[t] >= Kv[key]) key = t;

    /* -- write -- */
    enum { T_MAIN, T_SPLIT, T_DIST };
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
    static const drift_table_spec_t TABLES[] = {
        {".csv", NULL, 0, MAIN, 18}, {"_splitk.csv", NULL, 0, SPLIT, 10}, {"_distinct.csv", NULL, 0, DIST, 8}};
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 3, 1);
    char b1[80], b2[32], b3[32], b4[32];
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
    size_t *order = malloc(nrows * sizeof *order), no = 0;
    if (!order) drift_die("out of memory");
    for (int d = 0; d < nd; d++)
        for (int si = 0; si < ns; si++)
            for (int kk = 0; kk < nk; kk++)
                for (int ki = 0; ki < nK; ki++)
                    for (size_t t = 0; t < nrows; t++)
                        if (rows[t].dist == d && rows[t].setting == si && rows[t].kernel == kk && rows[t].kidx == ki)
                            order[no++] = t;
    for (size_t t1 = 0; t1 < no; t1++) {
        const row_t *r = &rows[order[t1]];
        setting_t s = set[r->setting];
        size_t K = Kv[r->kidx];
        double u = drift_format_info(s.acc)->unit_roundoff;
        drift_order_t o;
        char ospec[DRIFT_ORDER_SPEC_MAX];
        drift_gemm_kernel_order(&o, &kern[r->kernel]);
        if (drift_order_print(ospec, sizeof ospec, &o) < 0) snprintf(ospec, sizeof ospec, "?");
        drift_row(&out, T_MAIN, DRIFT_TXT(drift_dist_name(dists[r->dist])), DRIFT_TXT(drift_format_name(s.in)),
                  DRIFT_TXT(drift_format_name(s.acc)), DRIFT_TXT(kname[r->kernel]), DRIFT_TXT(ospec), DRIFT_INT(K),
                  DRIFT_NUM(r->nmse), DRIFT_NUM(r->err_mean), DRIFT_NUM(r->err_max), DRIFT_NUM(r->rel_med), DRIFT_NUM(u),
                  DRIFT_NUM(sqrt((double)K) * u), DRIFT_NUM((double)K * u), DRIFT_INT(r->nmse <= LLAMA_NMSE_MATMUL),
                  DRIFT_NUM(r->c00), DRIFT_NUM(r->c00), DRIFT_NUM(r->e00), DRIFT_TXT(kname[r->kernel]));
    }

    drift_out_meta(&out, T_SPLIT, "table", "split-K factors S = 1..%d (splitk:S, seq combination), K = %zu, fp32 accumulation",
                     SPLIT_MAX, KS);
    drift_out_meta(&out, T_SPLIT, "changed", "outputs (of %zu) whose value differs from S = 1, which is seq", MN);
    for (size_t t = 0; t < nsr; t++) {
        const srow_t *r = &srows[t];
        char kspec[32];
        snprintf(kspec, sizeof kspec, "splitk:%d", r->S);
        drift_row(&out, T_SPLIT, DRIFT_TXT(drift_dist_name(dists[r->dist])), DRIFT_TXT(drift_format_name(set[r->setting].in)),
                  DRIFT_TXT("fp32"), DRIFT_INT(KS), DRIFT_INT(r->S), DRIFT_TXT(kspec), DRIFT_NUM(r->nmse),
                  DRIFT_NUM(r->err_mean), DRIFT_INT(r->changed), DRIFT_NUM(r->c00));
    }

    drift_out_meta(&out, T_DIST, "table", "distinct values each output takes over S = 1..%d (K = %zu, fp32 accumulation)",
                     SPLIT_MAX, KS);
    for (size_t t = 0; t < ndr; t++) {
        const drow_t *q = &drows[t];
        drift_row(&out, T_DIST, DRIFT_TXT(drift_dist_name(dists[q->dist])), DRIFT_TXT(drift_format_name(set[q->setting].in)),
                  DRIFT_TXT("fp32"), DRIFT_INT(KS), DRIFT_INT(MN), DRIFT_NUM(q->mean_distinct), DRIFT_INT(q->max_distinct),
                  DRIFT_INT(q->changed_any));
    }

    /* The report fragment: every number below is read from the rows written above. */
    FILE *fp = out.md;
    fprintf(fp, "**Question.** %s Every result is held against the exact product of the same rounded inputs "
                "(a superaccumulator, correctly rounded), so only the arithmetic of the product is measured.\n\n",
            spec.question);
    fprintf(fp, "Reproduce: `./lab run matmul_drift --seed %llu --profile %s` (data/matmul_drift*.csv; %zu x %zu "
                "outputs, K = %zu .. %zu).\n\n",
            (unsigned long long)cli.seed, drift_profile_name(cli.profile), M, N, Kv[0], Kv[nK - 1]);
    fprintf(fp, "**NMSE at K = %zu, %s inputs** (llama.cpp's matmul threshold is %g; values above it are in bold):\n\n",
            Kv[key], drift_dist_name(dists[0]), LLAMA_NMSE_MATMUL);
    fprintf(fp, "| inputs | accumulator |");
    for (int kk = 0; kk < nk; kk++) fprintf(fp, " %s |", kname[kk]);
    fprintf(fp, "\n|---|---|");
    for (int kk = 0; kk < nk; kk++) fprintf(fp, "---:|");
    fprintf(fp, "\n");
    for (int si = 0; si < ns; si++) {
        fprintf(fp, "| %s | %s |", drift_format_name(set[si].in), drift_format_name(set[si].acc));
        for (int kk = 0; kk < nk; kk++) {
            const row_t *hit = NULL;
            for (size_t t = 0; t < nrows; t++)
                if (rows[t].dist == 0 && rows[t].setting == si && rows[t].kernel == kk && rows[t].kidx == key) hit = &rows[t];
            if (!hit) {
                fprintf(fp, " — |");
                continue;
            }
            drift_fmt_num(b1, sizeof b1, hit->nmse, "%.3g");
            fprintf(fp, hit->nmse > LLAMA_NMSE_MATMUL ? " **%s** |" : " %s |", b1);
        }
        fprintf(fp, "\n");
    }
    fprintf(fp, "\n(— : the kernel does not take that setting; tensor-core models run only the formats their "
                "architecture accepts, into fp32 or fp16.)\n\n**Takeaway.**\n\n");
    /* growth exponents */
    int naive = -1, split = -1, tch = -1;
    for (int kk = 0; kk < nk; kk++) {
        if (kern[kk].family == DRIFT_GEMM_NAIVE && naive < 0) naive = kk;
        if (kern[kk].family == DRIFT_GEMM_SPLITK && split < 0) split = kk;
        if (kern[kk].family == DRIFT_GEMM_TC && kern[kk].arch == DRIFT_TC_H100 && tch < 0) tch = kk;
    }
    if (naive >= 0) {
        fprintf(fp, "- Growth with K (slope of the median relative error |c-e|/|e| on log-log axes, %s inputs, %s): ",
                drift_dist_name(dists[0]), kname[naive]);
        for (int si = 0; si < ns; si++)
            fprintf(fp, "%s%s into %s %.2f", si ? ", " : "", drift_format_name(set[si].in), drift_format_name(set[si].acc),
                    slope[(0 * ns + si) * nk + naive]);
        fprintf(fp, ". A slope of 0.5 is the sqrt(K) growth of independent rounding errors; 1 is the K u worst case, "
                    "the growth of errors that all have the same sign (truncation).\n");
    }
    const size_t Klast = Kv[nK - 1];
    for (int si = 0; si < ns && naive >= 0; si++) {
        if (set[si].acc != DRIFT_FP32 || set[si].in != DRIFT_BF16) continue;
        const row_t *rn = NULL, *rsp = NULL, *rtc = NULL;
        for (size_t t = 0; t < nrows; t++) {
            if (rows[t].dist != 0 || rows[t].setting != si || rows[t].kidx != nK - 1) continue;
            if (rows[t].kernel == naive) rn = &rows[t];
            if (rows[t].kernel == split) rsp = &rows[t];
            if (rows[t].kernel == tch) rtc = &rows[t];
        }
        if (rn) {
            double u = drift_format_info(DRIFT_FP32)->unit_roundoff;
            fprintf(fp, "- bf16 inputs, fp32 accumulation, K = %zu: the seq kernel's median relative error is %.3g, "
                        "that is %.2f sqrt(K) u (u = 2^-24) and %.4f K u",
                    Klast, rn->rel_med, rn->rel_med / (sqrt((double)Klast) * u), rn->rel_med / ((double)Klast * u));
            if (rsp) fprintf(fp, "; %s brings it to %.3g (%.1fx smaller)", kname[split], rsp->rel_med, rn->rel_med / rsp->rel_med);
            if (rtc) fprintf(fp, "; the H100 tensor-core model, which truncates, gives %.3g (%.1fx the seq error)", rtc->rel_med,
                             rtc->rel_med / rn->rel_med);
            fprintf(fp, ".\n");
        }
    }
    for (int si = 0; si < ns && naive >= 0; si++) {
        if (set[si].acc == DRIFT_FP32) continue;
        const row_t *rn = NULL;
        for (size_t t = 0; t < nrows; t++)
            if (rows[t].dist == 0 && rows[t].setting == si && rows[t].kidx == nK - 1 && rows[t].kernel == naive) rn = &rows[t];
        if (!rn) continue;
        drift_fmt_num(b1, sizeof b1, rn->nmse, "%.3g");
        drift_fmt_num(b2, sizeof b2, rn->rel_med, "%.3g");
        fprintf(fp, "- %s accumulated in %s, K = %zu, seq: NMSE %s, median relative error %s%s.\n", drift_format_name(set[si].in),
                drift_format_name(set[si].acc), Klast, b1, b2,
                rn->nmse > LLAMA_NMSE_MATMUL ? " — far above llama.cpp's threshold: the fp32 accumulator is not optional" : "");
    }
    {
        long fails = 0, total_rows = 0;
        for (size_t t = 0; t < nrows; t++)
            if (rows[t].kidx == key) total_rows++, fails += rows[t].nmse > LLAMA_NMSE_MATMUL;
        fprintf(fp, "- At K = %zu, %ld of %ld (distribution, setting, kernel) configurations exceed the %g NMSE "
                    "threshold.\n",
                Kv[key], fails, total_rows, LLAMA_NMSE_MATMUL);
    }
    for (size_t t = 0; t < ndr; t++) {
        const drow_t *q = &drows[t];
        if (set[q->setting].in != DRIFT_BF16 && !(ndr == 1)) continue;
        fprintf(fp, "- One product, many answers (%s inputs, %s, K = %zu): over split factors S = 1..%d each output "
                    "takes %.1f distinct values on average (at most %d), and %ld of %zu outputs change with S.\n",
                drift_format_name(set[q->setting].in), drift_dist_name(dists[q->dist]), KS, SPLIT_MAX, q->mean_distinct,
                q->max_distinct, q->changed_any, MN);
    }

    drift_out_commit(&out);

    /* -- summary for people -- */
    if (!cli.quiet) {
        printf("\nmedian relative error |c-e|/|e| at K = %zu (%s inputs); (slope over K = %zu..%zu)\n\n",
               Kv[key], drift_dist_name(dists[0]), Kv[0], Kv[nK - 1]);
        printf("%-8s %-6s", "inputs", "acc");
        for (int kk = 0; kk < nk; kk++) printf(" %16.16s", kname[kk]);
        printf("\n");
        for (int si = 0; si < ns; si++) {
            printf("%-8s %-6s", drift_format_name(set[si].in), drift_format_name(set[si].acc));
            for (int kk = 0; kk < nk; kk++) {
                const row_t *hit = NULL;
                for (size_t t = 0; t < nrows; t++)
                    if (rows[t].dist == 0 && rows[t].setting == si && rows[t].kernel == kk && rows[t].kidx == key) hit = &rows[t];
                if (!hit) {
                    printf(" %16s", "-");
                    continue;
                }
                drift_fmt_num(b3, sizeof b3, hit->rel_med, "%.3g");
                drift_fmt_num(b4, sizeof b4, slope[(0 * ns + si) * nk + kk], "%.3g");
                snprintf(b1, sizeof b1, "%s (%s)", b3, b4);
                printf(" %16s", b1);
            }
            printf("\n");
        }
        for (size_t t = 0; t < ndr; t++)
            printf("%s %s: %.1f distinct results per output over splitk:1..%d (max %d)\n", drift_dist_name(dists[drows[t].dist]),
                   drift_format_name(set[drows[t].setting].in), drows[t].mean_distinct, SPLIT_MAX, drows[t].max_distinct);
        (void)b2;
        printf("\nWhat you just saw: each cell is how far the product is from the exact one (median over outputs\n"
               "of the relative error), with the slope of its growth over K in parentheses. With an fp32\n"
               "accumulator the error grows like sqrt(K) (slope ~0.5): rounding errors mostly cancel. Split-K\n"
               "shortens every chain and lowers it. The tensor-core models truncate instead of rounding, so their\n"
               "errors share one sign and grow like K (slope ~1). A 16-bit accumulator grows like sqrt(K) as well,\n"
               "but thousands of times higher. Files: %s/matmul_drift*.csv, matmul_drift.md;\n"
               "plots: ./lab plot matmul_drift.\n",
               cli.out_dir);
    }
    free(A), free(B), free(Ar), free(Br), free(E), free(W), free(C), free(scratch), free(rows), free(srows), free(drows),
        free(CS), free(slope), free(order);
    return 0;
}
