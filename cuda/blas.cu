// blas.cu — the vendor GEMM paths: cublasGemmEx and cublasLtMatmul (see drift_cuda_gemm.h).
// No CPU twin: callers hold the results against the exact product. cuBLASLt's choice of
// algorithm (id, tile, split-K, reduction scheme, stages) is read back into the info so that
// every result says which kernel produced it; :fixed reuses a previous choice for every shape.
//
// Row-major C = A B is computed as column-major C^T = B^T A^T (no transposes, no copies).
// Handles and the 32 MiB workspaces are created on first use and kept (not thread-safe); one
// handle and workspace per stream slot (drift_cuda_gemm_streams).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdio.h>
#include <string.h>

#include "cuda_try.h"
#include "drift_cuda_gemm.h"

#define BLAS_TRY(call)                                                                                                 \
    do {                                                                                                               \
        cublasStatus_t st_ = (call);                                                                                   \
        if (st_ != CUBLAS_STATUS_SUCCESS) { /* a combination the library refuses is unsupported, */                    \
            rc = drift_cuda_fail(st_ == CUBLAS_STATUS_NOT_SUPPORTED ? DRIFT_EUNSUPPORTED : DRIFT_EIO, "%s:%d: %s: %s", \
                __FILE__, __LINE__, #call, cublasGetStatusString(st_)); /* not an I/O failure */                       \
            goto done;                                                                                                 \
        }                                                                                                              \
    } while (0)

// One cuBLAS handle and one cuBLASLt workspace per stream slot (slot 0: the default stream),
// so that GEMMs queued on concurrent streams never share a workspace (drift_cuda_gemm_streams).
static cublasHandle_t g_blas_slot[DRIFT_CUDA_MAX_STREAMS + 1];
static void *g_workspace_slot[DRIFT_CUDA_MAX_STREAMS + 1];
static cublasLtHandle_t g_lt = NULL;
static const size_t WORKSPACE = 32u << 20;
static int g_slot = 0;
static cudaStream_t g_blas_stream = 0;
#define g_blas g_blas_slot[g_slot]
#define g_workspace g_workspace_slot[g_slot]

// Later calls queue on `stream` with slot's handle and workspace (gemm.cu's use_stream).
void drift_cuda_blas_use_stream(cudaStream_t stream, int slot)
{
    g_slot = slot;
    g_blas_stream = stream;
}

static int ensure_handles(void)
{
    int rc = 0;
    if (!g_blas) BLAS_TRY(cublasCreate(&g_blas));
    if (!g_lt) BLAS_TRY(cublasLtCreate(&g_lt));
    if (!g_workspace) CUDA_TRY(cudaMalloc(&g_workspace, WORKSPACE));
    BLAS_TRY(cublasSetStream(g_blas, g_blas_stream));
done:
    return rc;
}

static cudaDataType_t data_type(drift_format_t in)
{
    return in == DRIFT_FP16 ? CUDA_R_16F : in == DRIFT_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

static cublasComputeType_t compute_type(drift_cuda_math_t m)
{
    return m == DRIFT_CUDA_MATH_PEDANTIC ? CUBLAS_COMPUTE_32F_PEDANTIC
           : m == DRIFT_CUDA_MATH_TF32   ? CUBLAS_COMPUTE_32F_FAST_TF32
                                         : CUBLAS_COMPUTE_32F;
}

static void read_algo(drift_cuda_gemm_info_t *info, const cublasLtMatmulAlgo_t *algo)
{
    size_t got = 0;
    memcpy(info->algo, algo, sizeof info->algo);
    info->have_algo = 1;
    info->algo_id = info->tile_id = info->splitk = info->reduction = info->stages = -1;
    cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_ID, &info->algo_id, sizeof info->algo_id, &got);
    uint32_t u = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &u, sizeof u, &got) ==
        CUBLAS_STATUS_SUCCESS)
        info->tile_id = (int)u;
    int32_t s = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &s, sizeof s, &got) ==
        CUBLAS_STATUS_SUCCESS)
        info->splitk = s;
    u = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &u, sizeof u, &got) ==
        CUBLAS_STATUS_SUCCESS)
        info->reduction = (int)u;
    u = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &u, sizeof u, &got) ==
        CUBLAS_STATUS_SUCCESS)
        info->stages = (int)u;
    snprintf(info->kernel, sizeof info->kernel, "cublasLt algo %d tile %d splitk %d red %d", info->algo_id,
        info->tile_id, info->splitk, info->reduction);
}

// Creates slot's handle and workspace now (cublasCreate and cudaMalloc synchronise the device:
// drift_cuda_gemm_streams calls this for every slot before it queues anything).
int drift_cuda_blas_ready(int slot)
{
    int saved = g_slot, rc;
    g_slot = slot;
    rc = ensure_handles();
    g_slot = saved;
    return rc;
}

int drift_cuda_blas_gemm(float *dC, const void *dA, const void *dB, int M, int N, int K, const drift_cuda_gemm_t *g,
    drift_format_t in, drift_cuda_gemm_info_t *info)
{
    int rc = ensure_handles();
    if (rc) return rc;
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t t = data_type(in);
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    if (g->path == DRIFT_CUDA_CUBLAS) {
        // default / pedantic / tf32 compute types; CUBLAS_GEMM_DEFAULT lets cuBLAS choose
        BLAS_TRY(cublasGemmEx(g_blas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, dB, t, N, dA, t, K, &zero, dC,
            CUDA_R_32F, N, compute_type(g->math), CUBLAS_GEMM_DEFAULT));
        if (info)
            snprintf(info->kernel, sizeof info->kernel, "cublasGemmEx %s",
                g->math == DRIFT_CUDA_MATH_PEDANTIC ? "32F_PEDANTIC"
                : g->math == DRIFT_CUDA_MATH_TF32   ? "32F_FAST_TF32"
                                                    : "32F");
        return 0;
    }
    {
        cublasLtMatmulAlgo_t algo;
        cublasComputeType_t ct = compute_type(g->math == DRIFT_CUDA_MATH_FIXED ? DRIFT_CUDA_MATH_DEFAULT : g->math);
        BLAS_TRY(cublasLtMatmulDescCreate(&op, ct, CUDA_R_32F));
        BLAS_TRY(cublasLtMatrixLayoutCreate(&la, t, N, K, N)); // Lt's A = B^T as stored: N x K, ld N
        BLAS_TRY(cublasLtMatrixLayoutCreate(&lb, t, K, M, K)); // Lt's B = A^T as stored: K x M, ld K
        BLAS_TRY(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, N, M, N));
        if (g->math == DRIFT_CUDA_MATH_FIXED) {
            if (!info || !info->have_algo)
                FAIL_TO_DONE(DRIFT_EINVAL, "gemm cublaslt:fixed: pass the algorithm of an earlier call in info->algo");
            memcpy(&algo, info->algo, sizeof algo);
            cublasLtMatmulHeuristicResult_t check;
            BLAS_TRY(cublasLtMatmulAlgoCheck(g_lt, op, la, lb, lc, lc, &algo, &check));
        } else {
            BLAS_TRY(cublasLtMatmulPreferenceCreate(&pref));
            size_t ws = WORKSPACE;
            BLAS_TRY(
                cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
            cublasLtMatmulHeuristicResult_t res;
            int found = 0;
            BLAS_TRY(cublasLtMatmulAlgoGetHeuristic(g_lt, op, la, lb, lc, lc, pref, 1, &res, &found));
            if (found < 1) FAIL_TO_DONE(DRIFT_EUNSUPPORTED, "gemm cublaslt: no algorithm for %d x %d x %d", M, N, K);
            algo = res.algo;
        }
        BLAS_TRY(cublasLtMatmul(
            g_lt, op, &one, dB, la, dA, lb, &zero, dC, lc, dC, lc, &algo, g_workspace, WORKSPACE, g_blas_stream));
        if (info) read_algo(info, &algo);
    }
done:
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (op) cublasLtMatmulDescDestroy(op);
    return rc;
}

extern "C" void drift_cuda_blas_versions(char *buf, size_t size)
{
    int v = 0;
    cublasGetProperty(MAJOR_VERSION, &v);
    int mi = 0, pa = 0;
    cublasGetProperty(MINOR_VERSION, &mi);
    cublasGetProperty(PATCH_LEVEL, &pa);
    snprintf(buf, size, "cuBLAS %d.%d.%d, cuBLASLt %zu", v, mi, pa, cublasLtGetVersion());
}
