// gpu_gemm.cu — the cost of batch invariance on real hardware: the batch-invariant tiled
// GEMM (fixed 128x128 tile, never split K; fp32 SIMT) against cuBLAS SGEMM, and the tensor-core
// GEMM (WMMA bf16, the accumulator carried along K) against cuBLAS bf16, on LLM shapes
// M = 1 ... 4096, N = K = 4096. Prints side-by-side times and ratios measured in one run.
//
//   ./build/bin/bench_gpu_gemm [REPS]      REPS timed repetitions per point (default 10)
//
// Timing: CUDA events around each call (GPU time; host CPU time would only measure the
// launch), repetitions interleaved across the kernels of a point (ABAB..., so clock and
// thermal drift hit both alike), after 2 warm-up calls each; min and median reported, ratios
// of the mins. The tensor-core kernel needs M a multiple of 32: small M is padded and the
// padded work is counted (that is what an invariant kernel with this tile pays).
// Reference: the fixed-tile Triton kernel of Thinking Machines' batch_invariant_ops is about
// 20% slower than cuBLAS; the goal is at most 20% slower at M >= 256.
// Without a device: "skipped: no CUDA device", exit 0.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift_cuda.h"
#include "drift_cuda_gemm.h"

extern "C" {
#include "drift.h"
#include "philox.h"
}

#define TRY(call)                                                                                                  \
    do {                                                                                                           \
        cudaError_t e_ = (call);                                                                                   \
        if (e_ != cudaSuccess) {                                                                                   \
            fprintf(stderr, "bench_gpu_gemm: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                                               \
        }                                                                                                          \
    } while (0)

typedef struct {
    const char *spec;
    drift_format_t in;
    const char *label;
} path_t;

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

// One timed call in ms; exits on error (a benchmark has nothing sensible to do after one).
static float timed(
    const path_t *p, float *dC, const void *dA, const void *dB, int M, int N, int K, cudaEvent_t e0, cudaEvent_t e1)
{
    drift_cuda_gemm_t g;
    if (drift_cuda_gemm_parse(&g, p->spec)) {
        fprintf(stderr, "bench_gpu_gemm: %s: not a GEMM path\n", p->spec);
        exit(1);
    }
    drift_gemm_opts_t o = drift_gemm_opts(p->in, DRIFT_FP32);
    TRY(cudaEventRecord(e0));
    int rc = drift_cuda_gemm_device(dC, dA, dB, M, N, K, &g, &o, NULL);
    TRY(cudaEventRecord(e1));
    TRY(cudaEventSynchronize(e1));
    if (rc) {
        fprintf(stderr, "bench_gpu_gemm: %s at M = %d: %s\n", p->spec, M, drift_cuda_message());
        exit(1);
    }
    float ms = 0;
    TRY(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}

int main(int argc, char **argv)
{
    if (drift_cuda_device_count() == 0) {
        printf("bench_gpu_gemm: skipped: no CUDA device (%s)\n", drift_cuda_message());
        return 0;
    }
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    if (reps < 1 || reps > 1000) {
        fprintf(stderr, "bench_gpu_gemm: REPS must be 1..1000\n");
        return 2;
    }
    const int N = 4096, K = 4096, MMAX = 4096;
    int cc = drift_cuda_current_cc();
    char tc[16];
    snprintf(tc, sizeof tc, "tc:%s", cc >= 100 ? "b200" : cc >= 90 ? "h100" : "a100");
    char desc[256];
    drift_cuda_describe(desc, sizeof desc);
    printf("bench_gpu_gemm: %s; N = K = %d, %d interleaved repetitions, GPU time by CUDA events\n\n", desc, N, reps);

    // Inputs: bf16 values (so the fp32 and bf16 paths multiply the same numbers)
    size_t na = (size_t)MMAX * K, nb = (size_t)K * N;
    float *hA = (float *)malloc(na * sizeof(float)), *hB = (float *)malloc(nb * sizeof(float));
    __nv_bfloat16 *hA16 = (__nv_bfloat16 *)malloc(na * 2), *hB16 = (__nv_bfloat16 *)malloc(nb * 2);
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("bench_gpu_gemm"), 0, 0);
    for (size_t i = 0; i < na + nb; i++) {
        float v = __bfloat162float(__float2bfloat16_rn((float)drift_stream_normal(&s)));
        if (i < na)
            hA[i] = v, hA16[i] = __float2bfloat16_rn(v);
        else
            hB[i - na] = v, hB16[i - na] = __float2bfloat16_rn(v);
    }
    float *dA, *dB, *dC;
    __nv_bfloat16 *dA16, *dB16;
    TRY(cudaMalloc(&dA, na * 4));
    TRY(cudaMalloc(&dB, nb * 4));
    TRY(cudaMalloc(&dA16, na * 2));
    TRY(cudaMalloc(&dB16, nb * 2));
    TRY(cudaMalloc(&dC, (size_t)MMAX * N * 4));
    TRY(cudaMemcpy(dA, hA, na * 4, cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(dB, hB, nb * 4, cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(dA16, hA16, na * 2, cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(dB16, hB16, nb * 2, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    TRY(cudaEventCreate(&e0));
    TRY(cudaEventCreate(&e1));

    const path_t paths[4] = {{"tiled:128,128,32", DRIFT_FP32, "invariant fp32"}, {"cublas", DRIFT_FP32, "cuBLAS fp32"},
        {tc, DRIFT_BF16, "tensor-core bf16"}, {"cublas", DRIFT_BF16, "cuBLAS bf16"}};
    static const int Ms[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
    printf("%5s | %-28s %-28s %7s | %-28s %-28s %7s\n", "M", "invariant fp32 ms min/med", "cuBLAS fp32 ms min/med",
        "ratio", "tensor-core bf16 ms min/med", "cuBLAS bf16 ms min/med", "ratio");
    float *t = (float *)malloc(4 * (size_t)reps * sizeof(float));
    for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++) {
        int M = Ms[mi];
        for (int w = 0; w < 2; w++)
            for (int p = 0; p < 4; p++) {
                int Mp = p == 2 ? (M + 31) / 32 * 32 : M;
                int two = paths[p].in == DRIFT_BF16;
                timed(&paths[p], dC, two ? (void *)dA16 : dA, two ? (void *)dB16 : dB, Mp, N, K, e0, e1);
            }
        for (int r = 0; r < reps; r++)
            for (int p = 0; p < 4; p++) {
                int Mp = p == 2 ? (M + 31) / 32 * 32 : M;
                int two = paths[p].in == DRIFT_BF16;
                t[p * reps + r] =
                    timed(&paths[p], dC, two ? (void *)dA16 : dA, two ? (void *)dB16 : dB, Mp, N, K, e0, e1);
            }
        float mn[4], md[4];
        for (int p = 0; p < 4; p++) {
            qsort(t + p * reps, reps, sizeof(float), cmp_float);
            mn[p] = t[p * reps];
            md[p] = t[p * reps + reps / 2];
        }
        char c[4][32];
        for (int p = 0; p < 4; p++) {
            double tflops = 2.0 * M * N * K / (mn[p] * 1e-3) / 1e12;
            snprintf(c[p], sizeof c[p], "%.3f/%.3f (%.1f TF)", mn[p], md[p], tflops);
        }
        printf(
            "%5d | %-28s %-28s %6.2fx | %-28s %-28s %6.2fx\n", M, c[0], c[1], mn[0] / mn[1], c[2], c[3], mn[2] / mn[3]);
        fflush(stdout);
    }
    printf("\nratio = our kernel's min time / cuBLAS's min time (1.20 = 20%% slower). TF = useful TFLOP/s at the min\n"
           "(2 M N K; the tensor-core kernel's padding rows are not counted as useful).\n");
    free(t), free(hA), free(hB), free(hA16), free(hB16);
    cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dA16), cudaFree(dB16);
    return 0;
}
