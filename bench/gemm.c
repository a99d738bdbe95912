/* bench/gemm.c — what bit-exact GEMM emulation costs.
 *
 * On the same bf16-valued data, in one run, it times:
 *   - the emulated fp32-accumulate GEMM (drift_gemm, bf16 inputs, fp32 RNE fma, seq order
 *     per output) with the tiled kernel and with the naive one;
 *   - OpenBLAS cblas_sgemm on the same values as floats (a plain optimised fp32 GEMM; its
 *     order is its own, so its bits differ: the max relative difference is printed);
 *   - the tensor-core model tc:h100 (drift_gemm) against the seq emulation (the "seq" of
 *     the tc lines is the tiled kernel, tiled:128,128,32, so tc_ARCH/seq is tc/tiled).
 * for 512^3 and 1024^3, and prints
 *     emulated/openblas = X.Xx      tc_h100/seq = X.Xx
 * then, at --tc-size (default 256), every tensor-core architecture against the seq
 * emulation of the same inputs (bf16, fp16 where the architecture has no bf16), one line
 * per architecture, and B200 with fp8e4m3 and fp8e5m2 inputs (its fp8 block is a model of
 * its own): tc_ARCH/seq = X.Xx (median Y.Yx), in thread CPU time.
 * Goals: emulation within 1.25x of OpenBLAS at 1024^3 on one thread, the tc
 * model within 10x of the emulation. For the sizes, every run is timed in the
 * calling thread's CPU time (bench_util.h; with one thread that is all the work, and a
 * neighbour's load does not count), --reps runs interleaved so that a noisy neighbour
 * slows both sides alike, and the ratios are printed min/min and as the median of the
 * per-round ratios. Both libraries use --threads threads (default 1: on a shared 2-core
 * machine a single thread gives the most stable ratio; with more, CPU time of the calling
 * thread undercounts and the ratios are wall-clock ones).
 *
 * usage: bench_gemm [--threads N] [--reps N] [--sizes N,N,...] [--tc-size N] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef DRIFT_HAVE_CBLAS
#include <cblas.h>
#endif

#include "bench_util.h"
#include "drift.h"
#include "format.h"
#include "gemm.h"
#include "philox.h"
#include "tc_model.h"
#include "cli.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *msg)
{
    fprintf(stderr, "bench_gemm: %s\n", msg);
    exit(2);
}

static long parse_pos(const char *s, const char *opt)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1 || v > 100000) {
        fprintf(stderr, "bench_gemm: %s: '%s' is not a positive integer\n", opt, s);
        exit(2);
    }
    return v;
}

/* Every architecture's model against the seq emulation on the same n^3 inputs (bf16 values
 * of N(0,1), which are fp16 values too): reps interleaved pairs (seq, tc), each timed in the
 * thread's CPU time (bench_util.h: a neighbour's load does not count), and the ratio of each
 * pair reduced to min and median. With --threads above 1 the worker threads' time is not
 * counted: keep the default single thread for these ratios. */
static double cpu_gemm(
    double *C, const double *A, const double *B, size_t n, drift_format_t in, const drift_gemm_kernel_t *k)
{
    drift_gemm_opts_t o = drift_gemm_opts(in, DRIFT_FP32);
    double t0 = bench_cpu_now();
    if (drift_gemm(C, A, B, n, n, n, k, &o) != 0) die("drift_gemm failed");
    return bench_cpu_now() - t0;
}

/* One line: tc:ARCH against the seq emulation on A, B (n x n values of in). */
static void arch_line(drift_tc_arch_t a, drift_format_t in, const double *A, const double *B, double *C, size_t n,
    int reps, double *ts, double *tt)
{
    char spec[32];
    snprintf(spec, sizeof spec, "tc:%s", drift_tc_arch_name(a));
    drift_gemm_kernel_t ks, kt;
    if (drift_gemm_kernel_parse(&ks, "tiled:128,128,32") != 0 || drift_gemm_kernel_parse(&kt, spec) != 0)
        die("bad kernel spec");
    for (int r = 0; r < reps; r++) {
        ts[r] = cpu_gemm(C, A, B, n, in, &ks);
        tt[r] = cpu_gemm(C, A, B, n, in, &kt);
    }
    bench_stat_t q = bench_ratio(tt, ts, reps), s = bench_stat(ts, reps), t = bench_stat(tt, reps);
    printf("  %-14s %-7s seq %8.4f s  tc %8.4f s  tc_%s/seq = %.1fx (median %.1fx)\n", spec, drift_format_name(in),
        s.min, t.min, drift_tc_arch_name(a), q.min, q.med);
}

static void per_architecture(size_t n, int reps)
{
    double *A = malloc(n * n * sizeof *A), *B = malloc(n * n * sizeof *B), *C = malloc(n * n * sizeof *C);
    double *A8 = malloc(n * n * sizeof *A8), *B8 = malloc(n * n * sizeof *B8);
    double *ts = malloc((size_t)reps * sizeof *ts), *tt = malloc((size_t)reps * sizeof *tt);
    if (!A || !B || !C || !A8 || !B8 || !ts || !tt)
        drift_die_oom(40.0 * n * n, "five %zu x %zu matrices (--sizes: smaller)", n, n);
    drift_stream_t st;
    drift_stream_init(&st, 1, drift_fnv1a32("bench_gemm/arch"), (uint32_t)n, 0);
    for (size_t t = 0; t < n * n; t++) {
        A[t] = drift_rne(drift_stream_normal(&st), DRIFT_BF16);
        B[t] = drift_rne(drift_stream_normal(&st), DRIFT_BF16);
    }
    printf("\n%zu^3, every tensor-core architecture against the seq emulation (same input format; thread CPU time,\n"
           "%d interleaved pairs; ratio min / median):\n",
        n, reps);
    for (int a = 0; a < DRIFT_TC_NARCH; a++) {
        drift_tc_params_t p;
        drift_format_t in = drift_tc_params(&p, (drift_tc_arch_t)a, DRIFT_BF16) == 0 ? DRIFT_BF16 : DRIFT_FP16;
        arch_line((drift_tc_arch_t)a, in, A, B, C, n, reps, ts, tt);
    }
    /* Blackwell's fp8 block (products aligned apart from c, then one RNE addition) is a model
     * of its own: the same N(0,1) values rounded to each fp8 format. */
    drift_format_t f8[2] = {DRIFT_FP8E4M3, DRIFT_FP8E5M2};
    for (int f = 0; f < 2; f++) {
        for (size_t t = 0; t < n * n; t++) A8[t] = drift_rne(A[t], f8[f]), B8[t] = drift_rne(B[t], f8[f]);
        arch_line(DRIFT_TC_B200, f8[f], A8, B8, C, n, reps, ts, tt);
    }
    free(A), free(B), free(C), free(A8), free(B8), free(ts), free(tt);
}

/* ---- the emulation against OpenBLAS, per size ------------------------------------------ */

/* Seconds of one call: the calling thread's CPU time with one thread, wall time otherwise
 * (other threads' work would not be counted). */
static double clock_now(int threads) { return threads == 1 ? bench_cpu_now() : now(); }

typedef struct {
    const char *spec;
    drift_gemm_kernel_t k;
    double t[1001]; /* one sample per round, and the extra run */
} emu_samples_t;

static double run_emu(emu_samples_t *e, int r, double *C, const double *A, const double *B, size_t n, int threads)
{
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_BF16, DRIFT_FP32);
    double t0 = clock_now(threads);
    if (drift_gemm(C, A, B, n, n, n, &e->k, &o) != 0) die("drift_gemm failed");
    return e->t[r] = clock_now(threads) - t0;
}

/* tiled, naive, tc:h100 and OpenBLAS sgemm on the same bf16-valued n^3 inputs, interleaved
 * rounds; prints each one's min and median, emulated/openblas and tc_h100/seq. */
static void emulated_vs_openblas(size_t n, int reps, int threads)
{
    double *A = malloc(n * n * sizeof *A), *B = malloc(n * n * sizeof *B), *C = malloc(n * n * sizeof *C);
    float *Af = malloc(n * n * sizeof *Af), *Bf = malloc(n * n * sizeof *Bf), *Cf = malloc(n * n * sizeof *Cf);
    emu_samples_t *emu = calloc(3, sizeof *emu);
    double *blas = calloc((size_t)reps, sizeof *blas);
    if (!A || !B || !C || !Af || !Bf || !Cf || !emu || !blas)
        drift_die_oom(36.0 * n * n, "six %zu x %zu matrices (--sizes: smaller)", n, n);
    drift_stream_t st;
    drift_stream_init(&st, 1, drift_fnv1a32("bench_gemm"), (uint32_t)n, 0);
    for (size_t t = 0; t < n * n; t++) {
        A[t] = drift_rne(drift_stream_normal(&st), DRIFT_BF16);
        B[t] = drift_rne(drift_stream_normal(&st), DRIFT_BF16);
        Af[t] = (float)A[t], Bf[t] = (float)B[t]; /* exact: bf16 values are floats */
    }
    const char *specs[3] = {"tiled:128,128,32", "naive", "tc:h100"};
    for (int e = 0; e < 3; e++) {
        emu[e].spec = specs[e];
        if (drift_gemm_kernel_parse(&emu[e].k, specs[e]) != 0) die("bad kernel spec");
    }
    int tc_reps = n >= 1024 ? (reps + 1) / 2 : reps; /* the model is the slow one */
    for (int r = 0; r < reps; r++) {
        run_emu(&emu[0], r, C, A, B, n, threads);
#ifdef DRIFT_HAVE_CBLAS
        double t0 = clock_now(threads);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, Af, (int)n, Bf, (int)n,
            0.0f, Cf, (int)n);
        blas[r] = clock_now(threads) - t0;
#endif
        run_emu(&emu[1], r, C, A, B, n, threads);
        if (r < tc_reps) run_emu(&emu[2], r, C, A, B, n, threads);
    }
    /* One more seq run for the comparison with OpenBLAS's bits. */
    run_emu(&emu[0], reps, C, A, B, n, threads);
    bench_stat_t rt = bench_ratio(emu[0].t, blas, reps), rn = bench_ratio(emu[1].t, blas, reps);
    bench_stat_t rtc = bench_ratio(emu[2].t, emu[0].t, tc_reps);
    double gf = 2.0 * (double)n * (double)n * (double)n * 1e-9;
    printf("\n%zu^3 (seconds: min, median):\n", n);
    bench_stat_t se[3];
    for (int e = 0; e < 3; e++) {
        se[e] = bench_stat(emu[e].t, e == 2 ? tc_reps : reps);
        printf("  %-18s %9.4f %9.4f s  %7.1f GFLOP/s\n", emu[e].spec, se[e].min, se[e].med, gf / se[e].min);
    }
#ifdef DRIFT_HAVE_CBLAS
    double maxrel = 0;
    for (size_t t = 0; t < n * n; t++) {
        double d = fabs((double)Cf[t] - C[t]) / (fabs(C[t]) > 0 ? fabs(C[t]) : 1.0);
        if (d > maxrel) maxrel = d;
    }
    bench_stat_t sb = bench_stat(blas, reps);
    printf("  %-18s %9.4f %9.4f s  %7.1f GFLOP/s  (max rel. difference from seq: %.2g)\n", "openblas sgemm", sb.min,
        sb.med, gf / sb.min, maxrel);
    printf("  emulated/openblas = %.2fx min/min, %.2fx median of rounds   (naive: %.1fx, %.1fx)\n", se[0].min / sb.min,
        rt.med, se[1].min / sb.min, rn.med);
#else
    (void)rt, (void)rn;
    printf("  OpenBLAS cblas not found at build time: emulated/openblas skipped\n");
#endif
    printf("  tc_h100/seq = %.1fx min/min, %.1fx median of rounds\n", se[2].min / se[0].min, rtc.med);
    free(A), free(B), free(C), free(Af), free(Bf), free(Cf), free(emu), free(blas);
}

/* OpenBLAS picks its kernels from the CPU model, and on a virtual CPU it does not know
 * (this lab's "Intel Xeon Processor") it falls back to Prescott's SSE3 kernels: 4x slower
 * than its AVX-512 ones, which would flatter the emulation. Unless the user chose with
 * OPENBLAS_CORETYPE, run again with the best kernels the CPU has (OpenBLAS reads the
 * variable when it loads, hence the exec). */
static void openblas_best_kernels(char **argv)
{
#if defined(DRIFT_HAVE_CBLAS) && defined(__GNUC__) && defined(__x86_64__)
    if (getenv("OPENBLAS_CORETYPE")) return;
    const char *core = openblas_get_corename();
    if (!core || strcasecmp(core, "prescott") != 0) return;
    __builtin_cpu_init();
    const char *best = __builtin_cpu_supports("avx512f") ? "SkylakeX"
                       : __builtin_cpu_supports("avx2")  ? "Haswell"
                                                         : NULL;
    if (!best) return;
    setenv("OPENBLAS_CORETYPE", best, 1);
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE"); /* exec failed: go on with what we have */
#else
    (void)argv;
#endif
}

int main(int argc, char **argv)
{
    const char *threads_s = NULL, *reps_s = NULL, *tc_s = NULL, *sizes_s = NULL;
    const drift_arg_opt_t opts[] = {{"threads", &threads_s, NULL, 0, "N"}, {"reps", &reps_s, NULL, 0, "N"},
        {"sizes", &sizes_s, NULL, 0, "N,N,..."}, {"tc-size", &tc_s, NULL, 0, "N"}};
    bench_args(opts, 4, NULL, 0, argc, argv,
        "usage: bench_gemm [--threads N] [--reps N] [--sizes N,N,...] [--tc-size N]   (each 1..100000, at most 8 sizes; 1, 5, 512,1024, 256)");
    openblas_best_kernels(argv); /* after the check: a refused command line is not run twice */
    int threads = threads_s ? (int)parse_pos(threads_s, "--threads") : 1,
        reps = reps_s ? (int)parse_pos(reps_s, "--reps") : 5;
    size_t tc_size = tc_s ? (size_t)parse_pos(tc_s, "--tc-size") : 256;
    size_t sizes[8] = {512, 1024};
    int nsizes = 2;
    if (sizes_s) {
        long v[8];
        nsizes = bench_long_list("--sizes", sizes_s, v, 8, 1, 100000);
        for (int k = 0; k < nsizes; k++) sizes[k] = (size_t)v[k];
    }
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
#ifdef DRIFT_HAVE_CBLAS
    openblas_set_num_threads(threads);
#endif
    if (reps > 1000) die("--reps: at most 1000");
#ifdef DRIFT_HAVE_CBLAS
    printf(
        "OpenBLAS kernels: %s%s\n", openblas_get_corename(), getenv("OPENBLAS_CORETYPE") ? " (OPENBLAS_CORETYPE)" : "");
#endif
    printf("bench_gemm: C = A B, bf16 inputs, fp32 accumulation; %d thread(s), %d interleaved rounds, %s time\n",
        threads, reps, threads == 1 ? "thread CPU" : "wall");
    for (int s = 0; s < nsizes; s++) emulated_vs_openblas(sizes[s], reps, threads);
    per_architecture(tc_size, reps);
    return 0;
}
