// check_determinism.cu — run-to-run and batch-size determinism on the device.
//
// 1. Repeated runs: the same product 100 times on the same device buffers; the number of
//    distinct outputs (a hash of all of C). The twins (tiled/2, splitk:32) must give 1
//    (PASS/FAIL); atomic split-K (nondeterministic by design) and the vendor paths are
//    FINDINGs: distinct outputs, elements that ever changed, the largest spread in fp32 ulps.
// 2. Batch variance (row 0 of C = A B for M = 1 ... 2048, N = K = 4096): how many distinct
//    row-0 results, at which M they change, and for cuBLASLt which algorithm / split-K the
//    heuristic chose for which range of M. The batch-invariant twins (tiled/2, tc) must give
//    1 distinct row (PASS/FAIL); cuBLAS and cuBLASLt are FINDINGs; cublaslt:fixed reuses the
//    algorithm chosen at M = 2048 for every M.
// Inputs from Philox (seed 1). Without a device: "no CUDA device: skipped", exit 0.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "drift_cuda_gemm.h"

extern "C" {
#include "drift.h"
#include "format.h"
#include "philox.h"
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            printf("FAIL     %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t fnv64(const void *p, size_t n)
{
    const unsigned char *c = (const unsigned char *)p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

// Device buffers of random values: fp32 (floats) and bf16 (the same values rounded).
typedef struct {
    float *f32;
    __nv_bfloat16 *bf16;
} dbuf_t;

static dbuf_t upload(size_t n, uint32_t point)
{
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("check_determinism"), point, 0);
    float *h = (float *)malloc(n * sizeof(float));
    __nv_bfloat16 *hb = (__nv_bfloat16 *)malloc(n * sizeof(__nv_bfloat16));
    for (size_t i = 0; i < n; i++) {
        h[i] = (float)drift_rne(drift_stream_normal(&s), DRIFT_BF16); // bf16 values: both paths see the same numbers
        hb[i] = __float2bfloat16_rn(h[i]);
    }
    dbuf_t d;
    TRY(cudaMalloc(&d.f32, n * sizeof(float)));
    TRY(cudaMalloc(&d.bf16, n * sizeof(__nv_bfloat16)));
    TRY(cudaMemcpy(d.f32, h, n * sizeof(float), cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(d.bf16, hb, n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    free(h), free(hb);
    return d;
}

static int run(float *dC, dbuf_t A, dbuf_t B, int M, int N, int K, const char *spec, drift_format_t in,
    drift_cuda_gemm_info_t *info)
{
    drift_cuda_gemm_t g;
    if (drift_cuda_gemm_parse(&g, spec)) return DRIFT_EINVAL;
    drift_gemm_opts_t o = drift_gemm_opts(in, DRIFT_FP32);
    int two = drift_cuda_gemm_storage_bytes(&g, in) == 2;
    int rc = drift_cuda_gemm_device(
        dC, two ? (const void *)A.bf16 : A.f32, two ? (const void *)B.bf16 : B.f32, M, N, K, &g, &o, info);
    if (rc == 0 && cudaDeviceSynchronize() != cudaSuccess) rc = DRIFT_EIO;
    return rc;
}

static void repeated(dbuf_t A, dbuf_t B)
{
    const int M = 256, N = 4096, K = 4096, RUNS = 100;
    static const struct {
        const char *spec;
        drift_format_t in;
        int twin;
    } cases[] = {{"tiled:128,128,32", DRIFT_FP32, 1}, {"splitk:32", DRIFT_FP32, 1}, {"splitk:32:atomic", DRIFT_FP32, 0},
        {"splitk:4:atomic", DRIFT_FP32, 0}, {"cublas", DRIFT_FP32, 0}, {"cublas", DRIFT_BF16, 0},
        {"cublaslt", DRIFT_BF16, 0}, {"cublaslt:tf32", DRIFT_FP32, 0}};
    printf("\n-- repeated runs: %d x (%d x %d x %d), distinct outputs --\n", RUNS, M, N, K);
    float *dC, *first = (float *)malloc((size_t)M * N * sizeof(float)),
               *cur = (float *)malloc((size_t)M * N * sizeof(float));
    TRY(cudaMalloc(&dC, (size_t)M * N * sizeof(float)));
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        uint64_t hashes[100];
        int distinct = 0;
        size_t changed = 0;
        double spread = 0;
        unsigned char *ever = (unsigned char *)calloc((size_t)M * N, 1);
        drift_cuda_gemm_info_t info;
        memset(&info, 0, sizeof info);
        int rc = 0;
        for (int r = 0; r < RUNS && !rc; r++) {
            rc = run(dC, A, B, M, N, K, cases[c].spec, cases[c].in, &info);
            if (rc) break;
            TRY(cudaMemcpy(r ? cur : first, dC, (size_t)M * N * sizeof(float), cudaMemcpyDeviceToHost));
            uint64_t h = fnv64(r ? cur : first, (size_t)M * N * sizeof(float));
            int seen = 0;
            for (int i = 0; i < distinct; i++) seen |= hashes[i] == h;
            if (!seen) hashes[distinct++] = h;
            if (r)
                for (size_t i = 0; i < (size_t)M * N; i++)
                    if (cur[i] != first[i]) {
                        ever[i] = 1;
                        spread = fmax(spread, fabs((double)cur[i] - first[i]) / drift_ulp(first[i], DRIFT_FP32));
                    }
        }
        for (size_t i = 0; i < (size_t)M * N; i++) changed += ever[i];
        free(ever);
        char label[96];
        snprintf(label, sizeof label, "repeat %-18s %-5s", cases[c].spec, drift_format_name(cases[c].in));
        if (rc)
            row("FAIL", "%s error: %s", label, drift_cuda_message());
        else if (cases[c].twin)
            row(distinct == 1 ? "PASS" : "FAIL", "%s %d distinct outputs in %d runs [%s]", label, distinct, RUNS,
                info.kernel);
        else
            row("FINDING",
                "%s %d distinct outputs in %d runs; %zu of %d elements ever changed, max spread %.3g ulp [%s]", label,
                distinct, RUNS, changed, M * N, spread, info.kernel);
    }
    cudaFree(dC);
    free(first), free(cur);
}

static void batch_variance(dbuf_t A, dbuf_t B)
{
    const int MMAX = 2048, N = 4096, K = 4096;
    static const struct {
        const char *spec;
        drift_format_t in;
        int invariant; // 1: must be batch invariant by construction
    } cases[] = {{"tiled:128,128,32", DRIFT_FP32, 1}, {"tc:h100", DRIFT_BF16, 1}, {"cublas", DRIFT_FP32, 0},
        {"cublas", DRIFT_BF16, 0}, {"cublaslt", DRIFT_BF16, 0}, {"cublaslt:fixed", DRIFT_BF16, 0},
        {"cublaslt", DRIFT_FP32, 0}};
    printf("\n-- batch variance: row 0 of C = A B, M = 1 .. %d, N = K = %d --\n", MMAX, N);
    int cc = drift_cuda_current_cc();
    float *dC, *row0 = (float *)malloc(N * sizeof(float)), *ref = (float *)malloc(N * sizeof(float));
    TRY(cudaMalloc(&dC, (size_t)MMAX * N * sizeof(float)));
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char spec[32];
        snprintf(spec, sizeof spec, "%s", cases[c].spec);
        if (!strncmp(spec, "tc:", 3))
            snprintf(spec, sizeof spec, "tc:%s", cc >= 100 ? "b200" : cc >= 90 ? "h100" : "a100");
        int tc = !strncmp(spec, "tc:", 3);
        drift_cuda_gemm_info_t info, fixed;
        memset(&fixed, 0, sizeof fixed);
        if (!strcmp(spec, "cublaslt:fixed")) { // the algorithm the heuristic picks at M = MMAX
            if (run(dC, A, B, MMAX, N, K, "cublaslt", cases[c].in, &fixed)) {
                row("FAIL", "batch %s: could not pick the fixed algorithm: %s", spec, drift_cuda_message());
                continue;
            }
        }
        uint64_t hashes[64];
        int distinct = 0, rc = 0;
        char changes[400] = "", algos[1200] = "";
        int last_algo[3] = {-9, -9, -9}, run_start = 1;
        double spread = 0;
        for (int M = 1; M <= MMAX && !rc; M++) {
            info = fixed;
            int Mrun = tc ? (M + 31) / 32 * 32 : M; // the tc kernel wants M a multiple of 32: more rows, same row 0
            rc = run(dC, A, B, Mrun, N, K, spec, cases[c].in, &info);
            if (rc) break;
            TRY(cudaMemcpy(row0, dC, N * sizeof(float), cudaMemcpyDeviceToHost));
            if (M == 1) memcpy(ref, row0, N * sizeof(float));
            for (int j = 0; j < N; j++)
                if (row0[j] != ref[j])
                    spread = fmax(spread, fabs((double)row0[j] - ref[j]) / drift_ulp(ref[j], DRIFT_FP32));
            uint64_t h = fnv64(row0, N * sizeof(float));
            int seen = 0;
            for (int i = 0; i < distinct; i++) seen |= hashes[i] == h;
            if (!seen && distinct < 64) {
                hashes[distinct++] = h;
                if (M > 1 && strlen(changes) < sizeof changes - 16)
                    snprintf(changes + strlen(changes), sizeof changes - strlen(changes), " %d", M);
            }
            if (info.have_algo && !strcmp(spec, "cublaslt")) {
                int now[3] = {info.algo_id, info.tile_id, info.splitk};
                if (memcmp(now, last_algo, sizeof now)) {
                    if (M > 1 && strlen(algos) < sizeof algos - 64)
                        snprintf(algos + strlen(algos), sizeof algos - strlen(algos), " M%d-%d:algo%d/tile%d/splitk%d;",
                            run_start, M - 1, last_algo[0], last_algo[1], last_algo[2]);
                    memcpy(last_algo, now, sizeof now);
                    run_start = M;
                }
            }
        }
        if (last_algo[0] != -9 && strlen(algos) < sizeof algos - 64)
            snprintf(algos + strlen(algos), sizeof algos - strlen(algos), " M%d-%d:algo%d/tile%d/splitk%d", run_start,
                MMAX, last_algo[0], last_algo[1], last_algo[2]);
        char label[64];
        snprintf(label, sizeof label, "batch %-18s %-5s", spec, drift_format_name(cases[c].in));
        if (rc)
            row("FAIL", "%s error: %s", label, drift_cuda_message());
        else
            row(cases[c].invariant ? (distinct == 1 ? "PASS" : "FAIL") : "FINDING",
                "%s %d%s distinct row-0 results over M = 1..%d, max spread %.3g ulp; new results at M =%s", label,
                distinct, distinct == 64 ? "+" : "", MMAX, spread, distinct > 1 ? changes : " (none)");
        if (algos[0]) row("INFO", "%s cuBLASLt heuristic choice by M:%s", label, algos);
        if (fixed.have_algo) row("INFO", "%s fixed algorithm: %s", label, fixed.kernel);
    }
    cudaFree(dC);
    free(row0), free(ref);
}

int main(void)
{
    if (skip_without_device("check_determinism")) return 0;
    char desc[256];
    drift_cuda_describe(desc, sizeof desc);
    printf("check_determinism: %s\n", desc);
    dbuf_t A = upload((size_t)2048 * 4096, 1), B = upload((size_t)4096 * 4096, 2);
    repeated(A, B);
    batch_variance(A, B);
    return finish("check_determinism");
}
