/* determinism.c — does the same product on the same GPU give the same bits every time?
 *
 * The question behind "temperature 0 but different output": a GPU kernel that adds its
 * partial sums with atomicAdd (split-K with atomic accumulation) sums them in whatever order
 * the thread blocks finish, so the bits of C = A B can change from one run to the next with
 * nothing else changed; a vendor library may or may not (cuBLAS documents run-to-run
 * reproducibility on one GPU and one stream except for some atomics-based algorithms).
 * This experiment measures it: the same A B (Philox normal inputs, M x K times K x N) computed
 * --runs times by each kernel, first back to back, then with the kernels interleaved (each run
 * preceded by the other kernels, so the GPU's scheduling state differs), then on --streams
 * concurrent CUDA streams at once (the same product queued on every stream, each with its own
 * output and cuBLAS handle: the runs share the GPU with each other), counting the distinct
 * results (bit patterns of the whole C), the elements that ever changed, the largest spread,
 * and row 0's error against the exact product (law 1: held against the exact reference like
 * any other kernel). The deterministic split-K twin (splitk:S) is the control: one distinct
 * result, and its first run is checked bit for bit against its CPU twin (twins have no streams
 * schedule: their order is fixed by construction).
 *
 * GPU only (registry column 3: gpu): on a CPU (or a build without CUDA) it says in one line
 * why it is skipped and exits 77, writing no file (./lab report says so and goes on).
 * --backend cuda without a device is an error (exit 2), as everywhere.
 *
 *   ./lab run determinism --profile quick
 *   ./lab run determinism --kernels splitk:32:atomic,cublaslt --runs 200 --streams 8 --formats fp32,bf16
 *
 * Look for: atomic split-K with more than one distinct result (nondeterministic by design),
 * cuBLAS with one (deterministic on one GPU and stream) and whether it keeps one when several
 * streams run it at once, and what ran (cuBLASLt's algorithm). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "dispatch.h"
#include "dispatch_streams.h"
#include "drift.h"
#include "drift_cuda_gemm.h"
#include "exact.h"
#include "gen.h"
#include "output.h"

#define MAX_KERNELS 8
#define NSCHED 3 /* back to back, interleaved, concurrent streams */

enum { T_MAIN, T_RUNS, T_MD };
static const drift_col_t MAIN[] = {DRIFT_C_TEXT("format"), DRIFT_C_KEY("kernel_key"), DRIFT_C_TEXT("schedule"),
    DRIFT_C_INT("M"), DRIFT_C_INT("N"), DRIFT_C_INT("K"), DRIFT_C_INT("runs"), DRIFT_C_INT("distinct"),
    DRIFT_C_INT("elems_changed"), DRIFT_C_NUM("max_spread", "%.9g"), DRIFT_C_NUM("row0_max_relerr_exact", "%.6e"),
    DRIFT_C_QUOTED("kernel"), DRIFT_C_QUOTED("ran"), DRIFT_C_INT("streams")};
static const drift_col_t RUNS[] = {DRIFT_C_TEXT("format"), DRIFT_C_KEY("kernel_key"), DRIFT_C_TEXT("schedule"),
    DRIFT_C_INT("run"), DRIFT_C_INT("result_id"), DRIFT_C_INT("n_diff_first"),
    DRIFT_C_NUM("max_abs_diff_first", "%.9g"), DRIFT_C_HEX("c00_hex")};
static const drift_col_t MD[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("schedule"),
    DRIFT_C_INT("runs"), DRIFT_C_INT("distinct"), DRIFT_C_INT("elements changed"), DRIFT_C_NUM("max spread", "%.3g"),
    DRIFT_C_NUM("row 0 rel. error", "%.3g")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, MAIN, 14}, {"_runs.csv", NULL, 0, RUNS, 8},
    {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 8}};

/* What one (format, kernel, schedule) saw over its runs. */
typedef struct {
    uint64_t hash[1024]; /* distinct results' bit hashes (runs <= 1000) */
    int ndistinct;
    double *first, *lo, *hi; /* run 0, and each element's range over the runs */
    double relerr;           /* row 0 against the exact product, worst run */
    char ran[64];
} seen_t;

static uint64_t hash_bits(const double *c, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 over the bytes */
    const unsigned char *p = (const unsigned char *)c;
    for (size_t i = 0; i < n * sizeof *c; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static int result_id(seen_t *s, uint64_t h)
{
    for (int i = 0; i < s->ndistinct; i++)
        if (s->hash[i] == h) return i;
    s->hash[s->ndistinct] = h;
    return s->ndistinct++;
}

/* Run `run` gave C (M x N): row 0's error against ex, its result id, and (after run 0) how
 * many elements differ from run 0 and by how much at most; each element's range grows. */
static int observe(seen_t *s, const double *C, size_t M, size_t N, const double *ex, int run, long *ndiff, double *dmax)
{
    for (size_t j = 0; j < N; j++) {
        double e = fabs(C[j] - ex[j]) / (ex[j] != 0 ? fabs(ex[j]) : 1);
        if (e > s->relerr || isnan(e)) s->relerr = e;
    }
    *ndiff = 0;
    *dmax = 0;
    if (run == 0) {
        memcpy(s->first, C, M * N * sizeof *C);
        memcpy(s->lo, C, M * N * sizeof *C);
        memcpy(s->hi, C, M * N * sizeof *C);
    } else {
        for (size_t i = 0; i < M * N; i++) {
            if (drift_backend_first_diff(&C[i], &s->first[i], 1) == 0) {
                ++*ndiff;
                *dmax = fmax(*dmax, fabs(C[i] - s->first[i]));
            }
            s->lo[i] = fmin(s->lo[i], C[i]);
            s->hi[i] = fmax(s->hi[i], C[i]);
        }
    }
    return result_id(s, hash_bits(C, M * N));
}

/* Splits --kernels into GPU kernel specs, each checked by the backend's grammar (no device
 * needed): one line and exit 2 on a bad one. */
static int parse_kernels(char names[][DRIFT_CUDA_GEMM_SPEC_MAX], const char *list)
{
    int n = 0;
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ',');
        /* tiled:BM,BN,BK holds commas: a piece that is only digits continues the previous spec */
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) drift_die("--kernels: empty item in '%s'", list);
        if (n > 0 && strspn(p, "0123456789") == len) {
            size_t l = strlen(names[n - 1]);
            if (l + 1 + len >= DRIFT_CUDA_GEMM_SPEC_MAX) drift_die("--kernels: item too long in '%s'", list);
            names[n - 1][l] = ',';
            memcpy(names[n - 1] + l + 1, p, len);
            names[n - 1][l + 1 + len] = 0;
        } else {
            if (n == MAX_KERNELS) drift_die("--kernels: more than %d kernels in '%s'", MAX_KERNELS, list);
            if (len >= DRIFT_CUDA_GEMM_SPEC_MAX) drift_die("--kernels: item too long in '%s'", list);
            memcpy(names[n], p, len);
            names[n][len] = 0;
            n++;
        }
        p = end ? end + 1 : p + len;
    }
    for (int i = 0; i < n; i++) {
        drift_cuda_gemm_t g;
        if (drift_cuda_gemm_parse(&g, names[i]))
            drift_die("--kernels: unknown GPU kernel '%s' (accepted: naive, tiled:BM,BN,BK, splitk:S[:tree], "
                      "splitk:S:atomic, cublas[:pedantic|:tf32], cublaslt[:pedantic|:tf32])",
                names[i]);
        if (g.path == DRIFT_CUDA_TWIN && g.kern.family == DRIFT_GEMM_TC)
            drift_die("--kernels: %s: tensor cores are deterministic by construction here (accepted: naive, "
                      "tiled:BM,BN,BK, splitk:S[:tree], splitk:S:atomic, cublas[...], cublaslt[...])",
                names[i]);
        if (g.path == DRIFT_CUDA_CUBLASLT && g.math == DRIFT_CUDA_MATH_FIXED)
            drift_die("--kernels: cublaslt:fixed needs an algorithm from a previous call (accepted: cublaslt, "
                      "cublaslt:pedantic, cublaslt:tf32)");
    }
    return n;
}

static const char QUESTION[] = "Does the same GPU product give the same bits run after run?";
static const char SUMMARY[] =
    "the same product computed many times on one GPU: split-K with atomicAdd sums its partial results in "
    "whatever order the blocks finish, so its bits change from run to run (more than one distinct result), while "
    "the deterministic split-K and cuBLAS give one result every time on one GPU and one stream, and the streams "
    "schedule shows whether they keep it when several streams run the same product at once. Each kernel's "
    "row 0 is held against the exact product: the nondeterministic one is not less accurate, only unrepeatable.";

int main(int argc, char **argv)
{
    long M_ = 0, N_ = 0, K_ = 0, runs_ = 0, streams_ = 0;
    const char *kernels = "splitk:16:atomic,cublas,cublaslt,splitk:16";
    const drift_cli_opt_t opts[] = {
        {"M", DRIFT_OPT_INT, &M_, "N", "rows of A", 1, 1 << 16, {"32", "256", "1024"}},
        {"N", DRIFT_OPT_INT, &N_, "N", "columns of B", 1, 1 << 16, {"256", "1024", "4096"}},
        {"K", DRIFT_OPT_INT, &K_, "N", "inner dimension", 1, 1 << 20, {"1024", "4096", "4096"}},
        {"runs", DRIFT_OPT_INT, &runs_, "N", "repetitions per kernel and schedule", 2, 1000, {"20", "100", "100"}},
        {"streams", DRIFT_OPT_INT, &streams_, "N", "concurrent CUDA streams of the streams schedule", 2,
            DRIFT_CUDA_MAX_STREAMS, {"2", "4", "8"}},
        {"kernels", DRIFT_OPT_STRING, &kernels, "LIST",
            "GPU GEMM kernels (default splitk:16:atomic,cublas,cublaslt,splitk:16)", 0, 0, {0}},
    };
    const drift_cli_spec_t spec = {.name = "determinism",
        .question = QUESTION,
        .default_formats = "fp32",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders = "sweeps GPU GEMM kernels, not reduction orders (use --kernels)",
        .cpu_only = NULL, /* GPU only, see below */
        .summary = SUMMARY};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    char names[MAX_KERNELS][DRIFT_CUDA_GEMM_SPEC_MAX];
    int nk = parse_kernels(names, kernels);
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] == DRIFT_FP64 || cli.formats[f] == DRIFT_FP8E4M3 || cli.formats[f] == DRIFT_FP8E5M2)
            drift_die("--formats: %s has no GPU GEMM path for every kernel (accepted: fp32, tf32, fp16, bf16)",
                drift_format_name(cli.formats[f]));
    size_t M = (size_t)M_, N = (size_t)N_, K = (size_t)K_;
    int runs = (int)runs_, nstreams = (int)streams_;
    int gpu = drift_backend_active();

    if (!gpu) drift_require_gpu(&cli); /* exit 77 with the reason: nothing to measure, no file written */
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 3, 1);

    drift_require_memory(
        &cli, 8.0 * (double)M * (double)N * (3.0 * cli.nformats * nk * NSCHED + nstreams), "--M, --N, --streams");
    double *A = malloc(M * K * sizeof *A), *B = malloc(K * N * sizeof *B),
           *C = malloc(M * N * (size_t)nstreams * sizeof *C);
    double *Ar = malloc(K * sizeof *Ar), *Bt = malloc(K * N * sizeof *Bt), *ex = malloc(N * sizeof *ex);
    int ns = cli.nformats * nk * NSCHED;
    seen_t *seen = calloc((size_t)ns, sizeof *seen);
    if (!A || !B || !C || !Ar || !Bt || !ex || !seen)
        drift_die_oom(8.0 * ((double)M * K + 2.0 * K * N + (double)M * N * nstreams),
            "the %zu x %zu x %zu operands and %d streams' results (--M, --N, --K, --streams: smaller)", (size_t)M,
            (size_t)N, (size_t)K, nstreams);
    for (int s = 0; s < ns; s++) {
        seen[s].first = malloc(M * N * sizeof(double));
        seen[s].lo = malloc(M * N * sizeof(double));
        seen[s].hi = malloc(M * N * sizeof(double));
        if (!seen[s].first || !seen[s].lo || !seen[s].hi)
            drift_die_oom(24.0 * (double)M * N * ns, "3 x %d copies of the %zu x %zu result (--M, --N: smaller)", ns,
                (size_t)M, (size_t)N);
    }
    drift_stream_t st;
    drift_stream_init(&st, cli.seed, drift_fnv1a32("determinism"), 0, 0);
    drift_gen_fill(A, M * K, DRIFT_DIST_NORMAL, &st);
    drift_stream_init(&st, cli.seed, drift_fnv1a32("determinism"), 0, 1);
    drift_gen_fill(B, K * N, DRIFT_DIST_NORMAL, &st);
    static const char *const SCHED[NSCHED] = {"back-to-back", "interleaved", "streams"};

    for (int f = 0; f < cli.nformats; f++) {
        drift_format_t in = cli.formats[f];
        drift_gemm_opts_t o = drift_gemm_opts(in, DRIFT_FP32);
        /* row 0's exact product of the inputs as the kernels see them, rounded once to fp32 */
        for (size_t k = 0; k < K; k++) Ar[k] = drift_rne(A[k], in);
        for (size_t j = 0; j < N; j++)
            for (size_t k = 0; k < K; k++) Bt[j * K + k] = drift_rne(B[k * N + j], in);
        for (size_t j = 0; j < N; j++)
            if (drift_exact_dot(&ex[j], Ar, Bt + j * K, K, DRIFT_FP32, DRIFT_RNE)) drift_die("exact reference failed");
        /* the deterministic twins' first run: checked bit for bit against the CPU (dispatcher) */
        for (int k = 0; k < nk; k++) {
            drift_cuda_gemm_t g;
            if (drift_cuda_gemm_parse(&g, names[k])) drift_die("--kernels: unknown kernel '%s'", names[k]);
            if (drift_cuda_gemm_is_twin(&g)) {
                int rc = drift_dispatch_gemm(C, A, B, M, N, K, &g.kern, &o);
                if (rc) drift_die("%s", *drift_backend_message() ? drift_backend_message() : drift_strerror(rc));
            }
        }
        for (int sc = 0; sc < 2; sc++) {
            int total = runs * nk;
            for (int t = 0; t < total; t++) {
                /* back to back: kernel k's runs in a row; interleaved: round robin */
                int k = sc == 0 ? t / runs : t % nk, run = sc == 0 ? t % runs : t / nk;
                seen_t *s = &seen[(f * nk + k) * NSCHED + sc];
                int rc = drift_dispatch_gemm_spec(C, A, B, M, N, K, names[k], &o, s->ran, sizeof s->ran);
                if (rc) drift_die("%s %s: %s", names[k], drift_format_name(in), drift_backend_message());
                long ndiff;
                double dmax;
                int id = observe(s, C, M, N, ex, run, &ndiff, &dmax);
                drift_row(&out, T_RUNS, DRIFT_TXT(drift_format_name(in)), DRIFT_TXT(names[k]), DRIFT_TXT(SCHED[sc]),
                    DRIFT_INT(run), DRIFT_INT(id), DRIFT_INT(ndiff), DRIFT_NUM(dmax), DRIFT_NUM(C[0]));
                drift_progress(&cli, (size_t)(f * NSCHED + sc) * (size_t)total + (size_t)t + 1,
                    (size_t)cli.nformats * NSCHED * (size_t)total);
            }
        }
        /* streams: the runs in groups of --streams, each group queued on that many streams at once */
        for (int k = 0; k < nk; k++) {
            drift_cuda_gemm_t g;
            if (drift_cuda_gemm_parse(&g, names[k])) drift_die("--kernels: unknown kernel '%s'", names[k]);
            if (drift_cuda_gemm_is_twin(&g)) continue;
            seen_t *s = &seen[(f * nk + k) * NSCHED + 2];
            for (int run = 0; run < runs; run += nstreams) {
                int group = runs - run < nstreams ? runs - run : nstreams;
                int rc = drift_dispatch_gemm_streams(C, A, B, M, N, K, names[k], &o, group, s->ran, sizeof s->ran);
                if (rc)
                    drift_die(
                        "%s %s on %d streams: %s", names[k], drift_format_name(in), group, drift_backend_message());
                for (int q = 0; q < group; q++) {
                    long ndiff;
                    double dmax;
                    const double *Cq = C + (size_t)q * M * N;
                    int id = observe(s, Cq, M, N, ex, run + q, &ndiff, &dmax);
                    drift_row(&out, T_RUNS, DRIFT_TXT(drift_format_name(in)), DRIFT_TXT(names[k]), DRIFT_TXT(SCHED[2]),
                        DRIFT_INT(run + q), DRIFT_INT(id), DRIFT_INT(ndiff), DRIFT_NUM(dmax), DRIFT_NUM(Cq[0]));
                }
                drift_progress(&cli, (size_t)(f * NSCHED + 2) * (size_t)(runs * nk) + (size_t)(k * runs + run + group),
                    (size_t)cli.nformats * NSCHED * (size_t)(runs * nk));
            }
        }
    }

    drift_md_intro(&out,
        "A and B standard normal (Philox, seed %llu), C = A B with M = %zu, N = %zu, K = %zu, "
        "computed %d times per kernel: back to back, then with the kernels interleaved, then in "
        "groups of %d on as many concurrent CUDA streams (not for twins). Distinct: "
        "different bit patterns of the whole C; spread: the largest max - min of one element over "
        "the runs; row 0 rel. error: the worst relative error of row 0 against its exact product "
        "(fp32, correctly rounded).",
        (unsigned long long)cli.seed, M, N, K, runs, nstreams);
    int atomic_var = 0, others_var = 0, natomic = 0;
    for (int k = 0; k < nk; k++) natomic += strstr(names[k], ":atomic") != NULL;
    for (int f = 0; f < cli.nformats; f++)
        for (int k = 0; k < nk; k++)
            for (int sc = 0; sc < NSCHED; sc++) {
                seen_t *s = &seen[(f * nk + k) * NSCHED + sc];
                if (s->ndistinct == 0) continue; /* a twin has no streams schedule */
                long changed = 0;
                double spread = 0;
                for (size_t i = 0; i < M * N; i++) {
                    double w = s->hi[i] - s->lo[i];
                    if (w != 0 || drift_backend_first_diff(&s->lo[i], &s->hi[i], 1) == 0) changed++;
                    spread = fmax(spread, w);
                }
                const char *fn = drift_format_name(cli.formats[f]);
                drift_row(&out, T_MAIN, DRIFT_TXT(fn), DRIFT_TXT(names[k]), DRIFT_TXT(SCHED[sc]), DRIFT_INT(M),
                    DRIFT_INT(N), DRIFT_INT(K), DRIFT_INT(runs), DRIFT_INT(s->ndistinct), DRIFT_INT(changed),
                    DRIFT_NUM(spread), DRIFT_NUM(s->relerr), DRIFT_TXT(names[k]), DRIFT_TXT(s->ran),
                    DRIFT_INT(sc == 2 ? nstreams : 1));
                drift_row(&out, T_MD, DRIFT_TXT(fn), DRIFT_TXT(names[k]), DRIFT_TXT(SCHED[sc]), DRIFT_INT(runs),
                    DRIFT_INT(s->ndistinct), DRIFT_INT(changed), DRIFT_NUM(spread), DRIFT_NUM(s->relerr));
                if (strstr(names[k], ":atomic"))
                    atomic_var += s->ndistinct > 1;
                else
                    others_var += s->ndistinct > 1;
            }
    drift_md_end(&out, T_MD);
    drift_md_text(&out,
        "**Takeaway.** Atomic split-K gave more than one result in %d of its %d (format, schedule) cases; the "
        "other kernels in %d cases%s (the device, driver, CUDA and cuBLAS versions are in the CSV metadata). "
        "Run-to-run variation is a property of the kernel's reduction, not of the "
        "GPU: the same hardware with a fixed order repeats itself bit for bit.\n",
        atomic_var, cli.nformats * NSCHED * natomic, others_var,
        others_var ? " (a deterministic kernel that varies is a finding to report)" : "");
    drift_out_commit(&out);
    for (int s = 0; s < ns; s++) free(seen[s].first), free(seen[s].lo), free(seen[s].hi);
    free(seen), free(A), free(B), free(C), free(Ar), free(Bt), free(ex);
    return 0;
}
