// check_gemm.cu — the GPU GEMM kernels against their CPU twins (law 3), tensor cores against
// the tc model, and the vendor libraries against the exact product.
//
//   twins      naive, tiled (versions 1 and 2), splitk:S, splitk:S:tree, fma and nofma, inputs
//              fp32 tf32 bf16 fp16 fp8e4m3, odd and LLM-like shapes: every output must equal
//              drift_gemm's with the same kernel spec and options, bit for bit (FAIL + the
//              first mismatch otherwise)
//   tc         WMMA fp16 / bf16 / tf32 and mma.sync fp8 e4m3 / e5m2 against drift_gemm tc:ARCH (ARCH from the device: h100
//              on sm_90) on probe rows that exercise alignment, truncation, subnormal products,
//              unnormalised products and block boundaries, and on random inputs: the difference
//              is a FINDING (mismatch count, largest difference in fp32 ulps, first mismatch),
//              except a gross one (more than sum|ab|/8: a kernel or layout bug), which FAILs
//   vendor     cublas and cublaslt (default, pedantic, tf32) per input format: largest error
//              against the exact product rounded to fp32, in units of u * sum|a b| (FINDING),
//              whether it equals the seq twin, and the algorithm cuBLASLt chose (INFO)
// Inputs come from Philox (seed 1): the same numbers on every run. Without a device it prints
// "no CUDA device: skipped" and exits 0.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "drift_cuda_gemm.h"

#include "exact.h" // has its own extern "C" (and includes mpfr.h, which must not be wrapped)
extern "C" {
#include "drift.h"
#include "format.h"
#include "gemm.h"
#include "order.h"
#include "philox.h"
}

// Random values of `in` with exponents spread over [-6, 6] (so that alignment and rounding
// matter), a tenth of them exact zeros or negatives of their neighbours (cancellation).
static void fill(double *x, size_t n, drift_format_t in, uint32_t point)
{
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("check_gemm"), point, 0);
    for (size_t i = 0; i < n; i++) {
        double v = drift_stream_normal(&s) * ldexp(1.0, (int)drift_stream_below(&s, 13) - 6);
        if (in == DRIFT_FP8E4M3 && fabs(v) > 400) v = copysign(400, v); // keep finite
        x[i] = drift_rne(v, in);
        uint32_t k = drift_stream_below(&s, 20);
        if (k == 0) x[i] = 0;
        if (k == 1 && i) x[i] = -x[i - 1];
    }
}

static const char *fmt_ulps(double got, double want)
{
    static char buf[64];
    double u = drift_ulp(want, DRIFT_FP32);
    snprintf(buf, sizeof buf, "%.3g", fabs(got - want) / u);
    return buf;
}

// One twin or tc comparison on one shape. tc = 1: a finding, not a failure.
static void compare(const char *spec, int version, drift_format_t in, int fma, size_t M, size_t N, size_t K,
    const double *A, const double *B, int tc)
{
    drift_cuda_gemm_t g;
    if (drift_cuda_gemm_parse(&g, spec)) {
        row("FAIL", "%s: not a GEMM path", spec);
        return;
    }
    g.version = version;
    drift_gemm_opts_t o = drift_gemm_opts(in, DRIFT_FP32);
    o.acc.fma = fma;
    double *want = (double *)malloc(M * N * sizeof(double)), *got = (double *)malloc(M * N * sizeof(double));
    drift_cuda_gemm_info_t info;
    memset(&info, 0, sizeof info);
    char label[160];
    snprintf(label, sizeof label, "%-18s v%d %-7s %-5s %4zux%4zux%5zu", spec, version, drift_format_name(in),
        fma ? "fma" : "nofma", M, N, K);
    int rc_cpu = drift_gemm(want, A, B, M, N, K, &g.kern, &o);
    int rc = drift_cuda_gemm(got, A, B, M, N, K, &g, &o, &info);
    if (rc_cpu) {
        row("FAIL", "%s  CPU twin refused: %s", label, drift_strerror(rc_cpu));
    } else if (rc == DRIFT_EUNSUPPORTED) {
        row("SKIP", "%s  %s", label, drift_cuda_message());
    } else if (rc) {
        row("FAIL", "%s  CUDA error: %s", label, drift_cuda_message());
    } else {
        size_t first = 0, bad = mismatches(got, want, M * N, &first);
        // A tensor-core result that differs from the model by more than 1/8 of sum|a b| is not
        // a question about the model (whose accumulation error is below 2^-6 of it even with
        // H100 fp8's 14-bit accumulator over K = 4096): it is a kernel or fragment-layout bug.
        size_t gross = 0;
        if (tc && bad)
            for (size_t i = 0; i < M; i++)
                for (size_t j = 0; j < N; j++) {
                    double sa = 0;
                    for (size_t k = 0; k < K; k++) sa += fabs(A[i * K + k] * B[k * N + j]); // a scale, not a result
                    double d = fabs(got[i * N + j] - want[i * N + j]);
                    if (d > sa / 8 || (isnan(d) && !isnan(want[i * N + j]))) gross++;
                }
        double worst = 0;
        for (size_t i = 0; i < M * N; i++)
            if (!same_bits(got[i], want[i]))
                worst = fmax(worst, fabs(got[i] - want[i]) / drift_ulp(want[i], DRIFT_FP32));
        if (!bad)
            row("PASS", "%s  bit-identical (%zu outputs) [%s]", label, M * N, info.kernel);
        else if (gross)
            row("FAIL",
                "%s  %zu of %zu outputs differ from the model by more than sum|ab|/8: a kernel bug, not a model "
                "finding; first C[%zu][%zu]: gpu %a, model %a [%s]",
                label, gross, M * N, first / N, first % N, got[first], want[first], info.kernel);
        else
            row(tc ? "FINDING" : "FAIL",
                "%s  %zu of %zu differ, max %.3g ulp; first C[%zu][%zu]: gpu %a, cpu %a (%s ulp) [%s]", label, bad,
                M * N, worst, first / N, first % N, got[first], want[first], fmt_ulps(got[first], want[first]),
                info.kernel);
    }
    free(want), free(got);
}

static void twins(void)
{
    static const size_t shapes[][3] = {
        {1, 1, 1}, {7, 13, 129}, {64, 64, 64}, {130, 70, 300}, {33, 257, 1000}, {64, 48, 4096}};
    static const drift_format_t formats[] = {DRIFT_FP32, DRIFT_TF32, DRIFT_BF16, DRIFT_FP16, DRIFT_FP8E4M3};
    static const struct {
        const char *spec;
        int version, nofma_too;
    } kernels[] = {{"naive", 1, 1}, {"tiled:32,32,32", 1, 0}, {"tiled:128,128,32", 2, 1}, {"splitk:1", 0, 0},
        {"splitk:7", 0, 1}, {"splitk:16:tree", 0, 0}, {"splitk:5:tree", 0, 0}};
    printf("\n-- twins: every output bit-identical to drift_gemm with the same kernel spec --\n");
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
            size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            double *A = (double *)malloc(M * K * sizeof(double)), *B = (double *)malloc(K * N * sizeof(double));
            fill(A, M * K, formats[f], (uint32_t)(10 * s + f));
            fill(B, K * N, formats[f], (uint32_t)(1000 + 10 * s + f));
            for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
                compare(kernels[k].spec, kernels[k].version, formats[f], 1, M, N, K, A, B, 0);
                if (kernels[k].nofma_too) compare(kernels[k].spec, kernels[k].version, formats[f], 0, M, N, K, A, B, 0);
            }
            free(A), free(B);
        }
}

// Probe rows (Fasi, Higham, Mikaitis & Pranesh 2021, section 4, in spirit): each row of A is
// a pattern, B is all ones, so C[i][j] = the model's sum of row i.
static void probes(double *A, size_t K, drift_format_t in)
{
    memset(A, 0, 16 * K * sizeof(double));
    double t24 = ldexp(1, -24), t11 = ldexp(1, -11);
    A[0 * K + 0] = 1, A[0 * K + 1] = t24;                              // a term below the alignment: truncated
    A[1 * K + 0] = 1, A[1 * K + 1] = 3 * t24;                          // partly below
    for (size_t k = 0; k < 16; k++) A[2 * K + k] = t24;                // only tiny terms: no alignment loss
    A[3 * K + 0] = 1, A[3 * K + 1] = -1, A[3 * K + 2] = t24;           // cancellation, then the tiny term
    for (size_t k = 0; k < 16; k++) A[4 * K + k] = 1.5;                // products 2.25: unnormalised significands
    A[5 * K + 0] = 65504, A[5 * K + 1] = 65504, A[5 * K + 2] = -65504; // large, carry-out bits
    A[6 * K + 0] = 1;
    for (size_t k = 1; k < 17 && k < K; k++) A[6 * K + k] = t11; // a run of small terms across a block
    for (size_t k = 0; k < 16; k++) A[7 * K + k] = 1;
    if (K > 16) A[7 * K + 16] = ldexp(1, -20); // the second block adds to a carried c
    A[8 * K + 0] = -1, A[8 * K + 1] = t24;     // truncation of a negative sum: toward zero
    for (size_t k = 0; k < K; k++) A[9 * K + k] = (k % 2 ? -1 : 1) * (1 + ldexp(1, -10)); // alternating
    A[10 * K + 0] = ldexp(1, -14), A[10 * K + 1] = ldexp(1, -24);                         // subnormal fp16 inputs
    for (size_t k = 0; k < K; k++) A[11 * K + k] = ldexp(1, -(int)(k % 24));              // every exponent
    for (size_t i = 0; i < 16 * K; i++) A[i] = drift_rne(A[i], in);
}

static void tensor_cores(drift_tc_arch_t arch)
{
    static const drift_format_t formats[] = {DRIFT_FP16, DRIFT_BF16, DRIFT_TF32, DRIFT_FP8E4M3, DRIFT_FP8E5M2};
    static const size_t shapes[][3] = {{16, 16, 16}, {32, 32, 256}, {64, 96, 1000}, {128, 128, 4096}};
    char spec[32];
    snprintf(spec, sizeof spec, "tc:%s", drift_tc_arch_name(arch));
    printf("\n-- tensor cores (WMMA; mma.sync for fp8) against the %s model: a difference is a FINDING --\n", spec);
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        size_t K = 64, N = 16;
        int fp8 = formats[f] == DRIFT_FP8E4M3 || formats[f] == DRIFT_FP8E5M2;
        double *A = (double *)malloc(16 * K * sizeof(double)), *B = (double *)malloc(K * N * sizeof(double));
        if (!fp8) { // the probes are fp16-scale values; fp8 gets the random inputs only
            probes(A, K, formats[f]);
            for (size_t i = 0; i < K * N; i++) B[i] = 1;
            printf("probes (rows 0..11: alignment, truncation, tiny, cancellation, unnormalised, large, runs, blocks, "
                   "negative, alternating, subnormal, exponents)\n");
            compare(spec, 0, formats[f], 1, 16, N, K, A, B, 1);
        }
        free(A), free(B);
        for (size_t s = 0; s < 4; s++) {
            size_t M = shapes[s][0], Nn = shapes[s][1], Kk = shapes[s][2];
            double *A2 = (double *)malloc(M * Kk * sizeof(double)), *B2 = (double *)malloc(Kk * Nn * sizeof(double));
            fill(A2, M * Kk, formats[f], (uint32_t)(5000 + 10 * s + f));
            fill(B2, Kk * Nn, formats[f], (uint32_t)(6000 + 10 * s + f));
            compare(spec, 0, formats[f], 1, M, Nn, Kk, A2, B2, 1);
            free(A2), free(B2);
        }
    }
}

static void vendor(void)
{
    static const char *paths[] = {
        "cublas", "cublas:pedantic", "cublas:tf32", "cublaslt", "cublaslt:pedantic", "cublaslt:tf32"};
    static const drift_format_t formats[] = {DRIFT_FP32, DRIFT_BF16, DRIFT_FP16};
    static const size_t shapes[][3] = {{33, 257, 1000}, {128, 128, 4096}};
    printf("\n-- vendor: error against exact (units of u * sum|ab|, u = 2^-24), equality with the seq twin --\n");
    for (size_t s = 0; s < 2; s++)
        for (size_t f = 0; f < 3; f++) {
            size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            double *A = (double *)malloc(M * K * sizeof(double)), *B = (double *)malloc(K * N * sizeof(double));
            double *C = (double *)malloc(M * N * sizeof(double)), *seq = (double *)malloc(M * N * sizeof(double));
            double *ex = (double *)malloc(M * N * sizeof(double)), *scale = (double *)malloc(M * N * sizeof(double));
            double *col = (double *)malloc(K * sizeof(double)), *aabs = (double *)malloc(K * sizeof(double));
            fill(A, M * K, formats[f], (uint32_t)(7000 + 10 * s + f));
            fill(B, K * N, formats[f], (uint32_t)(8000 + 10 * s + f));
            drift_gemm_kernel_t naive = {DRIFT_GEMM_NAIVE, 0, 0, 0, 0, 0, DRIFT_TC_V100};
            drift_gemm_opts_t o = drift_gemm_opts(formats[f], DRIFT_FP32);
            if (drift_gemm(seq, A, B, M, N, K, &naive, &o))
                row("FAIL", "%zux%zux%zu: the CPU's naive GEMM refused", M, N, K);
            for (size_t j = 0; j < N; j++) {
                for (size_t k = 0; k < K; k++) col[k] = B[k * N + j];
                for (size_t i = 0; i < M; i++) {
                    if (drift_exact_dot(&ex[i * N + j], A + i * K, col, K, DRIFT_FP32, DRIFT_RNE))
                        row("FAIL", "%zux%zux%zu: the exact dot product of output (%zu, %zu) refused", M, N, K, i, j);
                    double sa = 0;
                    for (size_t k = 0; k < K; k++) sa += fabs(A[i * K + k] * col[k]); // a scale, not a result
                    scale[i * N + j] = sa;
                }
            }
            (void)aabs;
            for (size_t p = 0; p < sizeof paths / sizeof *paths; p++) {
                drift_cuda_gemm_t g;
                if (drift_cuda_gemm_parse(&g, paths[p])) {
                    row("FAIL", "%s: not a GEMM path", paths[p]);
                    continue;
                }
                drift_cuda_gemm_info_t info;
                memset(&info, 0, sizeof info);
                int rc = drift_cuda_gemm(C, A, B, M, N, K, &g, &o, &info);
                char label[128];
                snprintf(
                    label, sizeof label, "%-18s %-5s %4zux%4zux%5zu", paths[p], drift_format_name(formats[f]), M, N, K);
                if (rc == DRIFT_EUNSUPPORTED) {
                    row("SKIP", "%s  %s", label, drift_cuda_message());
                    continue;
                }
                if (rc) {
                    row("FAIL", "%s  error: %s", label, drift_cuda_message());
                    continue;
                }
                double worst = 0;
                for (size_t i = 0; i < M * N; i++)
                    if (scale[i] > 0) worst = fmax(worst, fabs(C[i] - ex[i]) / (scale[i] * ldexp(1, -24)));
                size_t first = 0, diff = mismatches(C, seq, M * N, &first);
                row("FINDING", "%s  max err %.3g u*sum|ab|; %s seq twin (%zu of %zu differ) [%s]", label, worst,
                    diff ? "differs from" : "EQUALS", diff, M * N, info.kernel);
            }
            free(A), free(B), free(C), free(seq), free(ex), free(scale), free(col), free(aabs);
        }
}

int main(void)
{
    if (skip_without_device("check_gemm")) return 0;
    char desc[256];
    drift_cuda_describe(desc, sizeof desc);
    int cc = drift_cuda_current_cc();
    drift_tc_arch_t arch = cc >= 100 ? DRIFT_TC_B200 : cc >= 90 ? DRIFT_TC_H100 : DRIFT_TC_A100;
    printf("check_gemm: %s; tensor-core model tc:%s\n", desc, drift_tc_arch_name(arch));
    twins();
    tensor_cores(arch);
    vendor();
    return finish("check_gemm");
}
