// check_gemm.cu — proves on real hardware that each deterministic GPU GEMM kernel is the
// bit-exact twin of its CPU emulation (law 3), and measures what cuBLAS does.
//
// For each shape and input format: the CPU reference for every output is drift_dot with the
// kernel's documented order (seq or splitk:S, fp32 accumulation, fma) or drift_tc_dot for
// the device's architecture (WMMA); a kernel passes when every output is bit-identical.
// cuBLAS has no twin: its error against the correctly rounded exact product is reported.
// Without a device it prints why and exits 0, so CI can run it anywhere.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "drift_cuda_gemm.h"
#include "exact.h"
#include "format.h"
#include "tc_model.h"
#include "order.h"
#include "philox.h"

static int device_arch(drift_tc_arch_t *arch, char *name, size_t size)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        return 0;
    }
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return 0;
    snprintf(name, size, "%s (sm_%d%d)", p.name, p.major, p.minor);
    *arch = p.major >= 10 ? DRIFT_TC_B200 : p.major == 9 ? DRIFT_TC_H100 : p.major == 8 ? DRIFT_TC_A100 : DRIFT_TC_V100;
    return 1;
}

static void fill(float *x, double *xd, size_t n, drift_format_t f, uint32_t point)
{
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("check_gemm"), point, 0);
    for (size_t i = 0; i < n; i++) {
        xd[i] = drift_rne(drift_stream_normal(&s), f);
        x[i] = (float)xd[i]; // exact: a value of an fp32-or-narrower format
    }
}

// One kernel on one shape: 1 when every output equals its CPU twin bit for bit.
static int check_one(drift_cuda_gemm_version_t v, int splits, drift_format_t in, int M, int N, int K, drift_tc_arch_t arch)
{
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    float *A = (float *)malloc(na * sizeof(float)), *B = (float *)malloc(nb * sizeof(float));
    float *C = (float *)malloc(nc * sizeof(float));
    double *Ad = (double *)malloc(na * sizeof(double)), *Bd = (double *)malloc(nb * sizeof(double));
    double *col = (double *)malloc((size_t)K * sizeof(double));
    fill(A, Ad, na, in, 1);
    fill(B, Bd, nb, in, 2);
    int rc = drift_cuda_gemm(C, A, B, M, N, K, v, splits, in);
    long mismatches = 0;
    double worst_rel = 0;
    if (rc == 0) {
        drift_order_t order;
        char spec[32];
        snprintf(spec, sizeof spec, v == DRIFT_CUDA_GEMM_SPLITK ? "splitk:%d" : "seq", splits);
        drift_order_parse(&order, spec);
        drift_acc_t acc = {DRIFT_FP32, DRIFT_RNE, 1};
        for (int j = 0; j < N; j++) {
            for (int k = 0; k < K; k++) col[k] = Bd[(size_t)k * N + j];
            for (int i = 0; i < M; i++) {
                double want, exact;
                const double *row = Ad + (size_t)i * K;
                if (v == DRIFT_CUDA_GEMM_WMMA)
                    drift_tc_dot(&want, row, col, (size_t)K, NULL, arch, in, DRIFT_FP32);
                else
                    drift_dot(&want, row, col, (size_t)K, NULL, &order, &acc);
                double got = C[(size_t)i * N + j];
                if (v == DRIFT_CUDA_GEMM_CUBLAS) {
                    drift_exact_dot(&exact, row, col, (size_t)K, DRIFT_FP64, DRIFT_RNE);
                    double rel = exact != 0 ? fabs(got - exact) / fabs(exact) : fabs(got);
                    if (rel > worst_rel) worst_rel = rel;
                } else if (memcmp(&want, &got, sizeof got) != 0) {
                    mismatches++;
                }
            }
        }
    }
    char label[32];
    snprintf(label, sizeof label, v == DRIFT_CUDA_GEMM_SPLITK ? "%s:%d" : "%s", drift_cuda_gemm_name(v), splits);
    int ok;
    if (rc != 0) {
        printf("%-10s %-5s %5dx%5dx%5d  %s\n", label, drift_format_name(in), M, N, K,
               rc == DRIFT_EUNSUPPORTED ? "unsupported shape/format" : "CUDA ERROR");
        ok = rc == DRIFT_EUNSUPPORTED;
    } else if (v == DRIFT_CUDA_GEMM_CUBLAS) {
        printf("%-10s %-5s %5dx%5dx%5d  max rel err vs exact %.3e (no twin)\n", label, drift_format_name(in), M, N, K,
               worst_rel);
        ok = 1;
    } else {
        printf("%-10s %-5s %5dx%5dx%5d  %s (%ld of %zu outputs differ)\n", label, drift_format_name(in), M, N, K,
               mismatches ? "FAIL" : "bit-identical", mismatches, nc);
        ok = mismatches == 0;
    }
    free(A), free(B), free(C), free(Ad), free(Bd), free(col);
    return ok;
}

int main(void)
{
    drift_tc_arch_t arch;
    char name[160];
    if (!device_arch(&arch, name, sizeof name)) {
        printf("check_gemm: no CUDA device: skipped\n");
        return 0;
    }
    printf("check_gemm: %s, tensor-core model tc:%s\n", name, drift_tc_arch_name(arch));
    static const int shapes[][3] = {{64, 64, 64}, {128, 96, 1000}, {32, 48, 4096}};
    static const drift_format_t formats[] = {DRIFT_FP32, DRIFT_BF16, DRIFT_FP16};
    int failures = 0, checks = 0;
    for (int s = 0; s < 3; s++)
        for (int f = 0; f < 3; f++) {
            int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            drift_format_t in = formats[f];
            failures += !check_one(DRIFT_CUDA_GEMM_NAIVE, 1, in, M, N, K, arch);
            failures += !check_one(DRIFT_CUDA_GEMM_TILED, 1, in, M, N, K, arch);
            failures += !check_one(DRIFT_CUDA_GEMM_SPLITK, 7, in, M, N, K, arch);
            if (in != DRIFT_FP32) failures += !check_one(DRIFT_CUDA_GEMM_WMMA, 1, in, M, N, K, arch);
            failures += !check_one(DRIFT_CUDA_GEMM_CUBLAS, 1, in, M, N, K, arch);
            checks += in != DRIFT_FP32 ? 5 : 4;
        }
    printf("check_gemm: %d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
