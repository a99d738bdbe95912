// gemm.cu — GEMM kernels on the GPU (see drift_cuda_gemm.h): the twins of lib/ops/gemm.c's
// naive / tiled / splitk, the nondeterministic atomic split-K, and the tensor-core path; the
// vendor paths live in blas.cu. Layout after llm.c dev/cuda: numbered kernel versions,
// launchers, one dispatcher (drift_cuda_gemm_device), and the host entry point. The CPU
// reference is drift_gemm with the same kernel spec and options (cuda/check_gemm.cu).
// Built with --fmad=false: every fused multiply-add is an explicit fmaf (chain_step).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith.cuh"
#include "cuda_try.h"
#include "drift_cuda_gemm.h"

using F32 = arith<float, DRIFT_RNE>;

// ---- naive, version 1: one thread per output, order seq -----------------------------------
template <bool FMA> __global__ void gemm_naive1(float *C, const float *A, const float *B, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        float a = A[(size_t)row * K + k], b = B[(size_t)k * N + col];
        acc = k == 0 ? F32::mul(a, b) : chain_step<float, DRIFT_RNE>(acc, a, b, FMA); // chain starts as round(a b)
    }
    C[(size_t)row * N + col] = acc;
}

// ---- tiled, version 1: 32x32 shared tiles, one output per thread; the chain continues
// across K blocks, so the order is seq --------------------------------------------------------
#define T1 32
template <bool FMA> __global__ void gemm_tiled1(float *C, const float *A, const float *B, int M, int N, int K)
{
    __shared__ float As[T1][T1];
    __shared__ float Bs[T1][T1];
    int row = blockIdx.y * T1 + threadIdx.y;
    int col = blockIdx.x * T1 + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T1) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[(size_t)row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[(size_t)kb * N + col] : 0.0f;
        __syncthreads();
        int kmax = min(T1, K - k0); // never add the zero padding: it could turn -0 into +0
        for (int k = 0; k < kmax; k++) {
            float a = As[threadIdx.y][k], b = Bs[k][threadIdx.x];
            acc = (k0 + k == 0) ? F32::mul(a, b) : chain_step<float, DRIFT_RNE>(acc, a, b, FMA);
        }
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

// ---- tiled, version 2: the batch-invariant fixed tile (policy.h: 128x128), BK = 8, 256
// threads with 8x8 outputs each in registers. Each output still has one accumulator that
// walks k = 0 .. K-1 in order: seq, bit-identical to naive, whatever M ----------------------
#define BM2 128
#define BN2 128
#define BK2 8
template <bool FMA>
__global__ void __launch_bounds__(256) gemm_tiled2(float *C, const float *A, const float *B, int M, int N, int K)
{
    __shared__ float As[BK2][BM2]; // transposed: As[k][m]
    __shared__ float Bs[BK2][BN2];
    int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    int m0 = blockIdx.y * BM2, n0 = blockIdx.x * BN2;
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BK2) {
        // 1024 elements of A (128 x 8) and of B (8 x 128): 4 per thread each
#pragma unroll
        for (int r = 0; r < 4; r++) {
            int e = tid + r * 256;
            int am = e / BK2, ak = e % BK2;
            int gm = m0 + am, gk = k0 + ak;
            As[ak][am] = (gm < M && gk < K) ? A[(size_t)gm * K + gk] : 0.0f;
            int bk = e / BN2, bn = e % BN2;
            int hk = k0 + bk, hn = n0 + bn;
            Bs[bk][bn] = (hk < K && hn < N) ? B[(size_t)hk * N + hn] : 0.0f;
        }
        __syncthreads();
        int kmax = min(BK2, K - k0);
        for (int k = 0; k < kmax; k++) {
            float a[8], b[8];
#pragma unroll
            for (int i = 0; i < 8; i++) a[i] = As[k][ty + 16 * i]; // rows ty, ty+16, ...: no bank conflicts
#pragma unroll
            for (int j = 0; j < 8; j++) b[j] = Bs[k][tx + 16 * j];
            if (k0 + k == 0) {
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++) acc[i][j] = F32::mul(a[i], b[j]);
            } else {
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++) acc[i][j] = chain_step<float, DRIFT_RNE>(acc[i][j], a[i], b[j], FMA);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) {
            int gm = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;
            if (gm < M && gn < N) C[(size_t)gm * N + gn] = acc[i][j];
        }
}

// ---- split-K, version 1: slice s covers [s*chunk, min(K, (s+1)*chunk)), each a seq chain;
// then one thread per output combines the partials seq or pairwise (:tree) -----------------
// Slice blockIdx.z of output (row, col): the seq chain over [k0, k1) that both split-K
// kernels compute (the deterministic one stores it, the atomic one adds it into C).
template <bool FMA>
static __device__ __forceinline__ float splitk_slice(
    const float *A, const float *B, int row, int col, int N, int K, int chunk)
{
    int k0 = blockIdx.z * chunk, k1 = min(K, k0 + chunk);
    float acc = 0.0f;
    for (int k = k0; k < k1; k++) {
        float a = A[(size_t)row * K + k], b = B[(size_t)k * N + col];
        acc = k == k0 ? F32::mul(a, b) : chain_step<float, DRIFT_RNE>(acc, a, b, FMA);
    }
    return acc;
}

template <bool FMA>
__global__ void gemm_splitk_partial1(float *P, const float *A, const float *B, int M, int N, int K, int chunk)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    P[((size_t)blockIdx.z * M + row) * N + col] = splitk_slice<FMA>(A, B, row, col, N, K, chunk);
}

__global__ void gemm_splitk_combine1(float *C, const float *P, int M, int N, int nparts, int tree)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t mn = (size_t)M * N;
    if (i >= mn) return;
    if (tree) {
        C[i] = pairwise<float, DRIFT_RNE>([&](long s) { return P[(size_t)s * mn + i]; }, 0, nparts);
        return;
    }
    float acc = P[i];
    for (int s = 1; s < nparts; s++) acc = F32::add(acc, P[(size_t)s * mn + i]);
    C[i] = acc;
}

// ---- split-K atomic: the slices are added into C (zeroed first) with atomicAdd in whatever
// order the slices finish: nondeterministic by design, the cuBLAS-style "atomics" reduction --
template <bool FMA>
__global__ void gemm_splitk_atomic1(float *C, const float *A, const float *B, int M, int N, int K, int chunk)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    atomicAdd(&C[(size_t)row * N + col], splitk_slice<FMA>(A, B, row, col, N, K, chunk));
}

// ---- tensor cores, version 1: WMMA, 4 warps per block, each warp a 32x32 output block of
// 2x2 fragments; each fragment's accumulator is carried along K one mma at a time (k = 16
// for fp16/bf16, 8 for tf32): the block-FMA chain that tc_model.h models. M, N multiples of
// 32 and K a multiple of 16 (the host entry point pads with zeros, which the model drops) --
template <typename T> struct wmma_shape {
    static const int K = 16;
};
template <> struct wmma_shape<nvcuda::wmma::precision::tf32> {
    static const int K = 8;
};
template <typename T> struct wmma_storage {
    using type = T;
};
template <> struct wmma_storage<nvcuda::wmma::precision::tf32> {
    using type = float;
};

template <typename T>
__global__ void gemm_wmma1(
    float *C, const typename wmma_storage<T>::type *A, const typename wmma_storage<T>::type *B, int M, int N, int K)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    using namespace nvcuda;
    const int KK = wmma_shape<T>::K;
    int warp = threadIdx.x / 32;
    int m0 = blockIdx.y * 64 + (warp / 2) * 32, n0 = blockIdx.x * 64 + (warp % 2) * 32;
    if (m0 >= M || n0 >= N) return;
    wmma::fragment<wmma::matrix_a, 16, 16, KK, T, wmma::row_major> a[2];
    wmma::fragment<wmma::matrix_b, 16, 16, KK, T, wmma::row_major> b[2];
    wmma::fragment<wmma::accumulator, 16, 16, KK, float> acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    for (int k = 0; k < K; k += KK) {
        for (int i = 0; i < 2; i++) wmma::load_matrix_sync(a[i], A + (size_t)(m0 + 16 * i) * K + k, K);
        for (int j = 0; j < 2; j++) wmma::load_matrix_sync(b[j], B + (size_t)k * N + n0 + 16 * j, N);
        if constexpr (KK == 8) { // tf32: the data are tf32 values already; __float_to_tf32 is exact
            for (int i = 0; i < 2; i++)
                for (int t = 0; t < a[i].num_elements; t++) a[i].x[t] = wmma::__float_to_tf32(a[i].x[t]);
            for (int j = 0; j < 2; j++)
                for (int t = 0; t < b[j].num_elements; t++) b[j].x[t] = wmma::__float_to_tf32(b[j].x[t]);
        }
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(C + (size_t)(m0 + 16 * i) * N + n0 + 16 * j, acc[i][j], N, wmma::mem_row_major);
#else
    (void)C, (void)A, (void)B, (void)M, (void)N, (void)K;
#endif
}

// ---- tensor cores, fp8: mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2} (sm_89+), one warp
// per 16x8 output tile, the accumulator carried along K one mma (32 products) at a time.
// Fragment layout from the PTX ISA (warp-level matrix fragment for mma.m16n8k32, 8-bit
// types): g = lane / 4, t = lane % 4; A register r holds 4 bytes of row g (+8 when r is odd) at
// columns 4t .. 4t+3 (+16 when r >= 2); B register r holds column g at rows 4t .. 4t+3 (+16 for
// r = 1); C holds rows g (c0, c1) and g + 8 (c2, c3) at columns 2t, 2t + 1. A is row-major
// M x K bytes, B row-major K x N bytes; M, N multiples of 32, K of 32 ---------------------------
template <int E5M2>
__global__ void gemm_mma_fp8_1(float *C, const unsigned char *A, const unsigned char *B, int M, int N, int K)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    int lane = threadIdx.x % 32;
    long warp = ((long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int tiles_n = N / 8;
    long tm = warp / tiles_n, tn = warp % tiles_n;
    if (tm * 16 >= M) return;
    int g = lane >> 2, t = lane & 3;
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < K; k0 += 32) {
        unsigned a[4], b[2];
        for (int r = 0; r < 4; r++) {
            size_t row = (size_t)tm * 16 + g + ((r & 1) ? 8 : 0);
            int col = k0 + t * 4 + (r >= 2 ? 16 : 0);
            a[r] = *(const unsigned *)(A + row * K + col); // 4-byte aligned: K and col are multiples of 4
        }
        for (int r = 0; r < 2; r++) {
            unsigned v = 0;
            for (int j = 0; j < 4; j++) {
                int k = k0 + t * 4 + j + (r ? 16 : 0);
                v |= (unsigned)B[(size_t)k * N + tn * 8 + g] << (8 * j);
            }
            b[r] = v;
        }
        if (E5M2)
            asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                         "{%0,%1,%2,%3};"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        else
            asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                         "{%0,%1,%2,%3};"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    size_t row = (size_t)tm * 16 + g, col = (size_t)tn * 8 + t * 2;
    C[row * N + col] = c[0];
    C[row * N + col + 1] = c[1];
    C[(row + 8) * N + col] = c[2];
    C[(row + 8) * N + col + 1] = c[3];
#else
    (void)C, (void)A, (void)B, (void)M, (void)N, (void)K;
#endif
}

// ---- the dispatcher (device memory) ---------------------------------------------------------

// The stream every launch and library call of this file queues on (0: the default stream);
// drift_cuda_gemm_streams switches it per stream slot.
static cudaStream_t g_stream = 0;
void drift_cuda_blas_use_stream(cudaStream_t stream, int slot);
int drift_cuda_blas_ready(int slot);
static void use_stream(cudaStream_t stream, int slot)
{
    g_stream = stream;
    drift_cuda_blas_use_stream(stream, slot);
}

// Vendor paths (blas.cu).
int drift_cuda_blas_gemm(float *dC, const void *dA, const void *dB, int M, int N, int K, const drift_cuda_gemm_t *g,
    drift_format_t in, drift_cuda_gemm_info_t *info);

static drift_tc_arch_t arch_of_cc(int cc)
{
    return cc >= 100 ? DRIFT_TC_B200 : cc >= 90 ? DRIFT_TC_H100 : DRIFT_TC_A100;
}

static void set_kernel(drift_cuda_gemm_info_t *info, const char *fmt, const char *a, int b)
{
    if (info) snprintf(info->kernel, sizeof info->kernel, fmt, a, b);
}

template <bool FMA>
static void launch_simt(float *dC, const float *A, const float *B, int M, int N, int K, const drift_cuda_gemm_t *g,
    float *P, drift_cuda_gemm_info_t *info)
{
    const drift_gemm_kernel_t *k = &g->kern;
    dim3 b16(16, 16), g16((N + 15) / 16, (M + 15) / 16);
    if (g->path == DRIFT_CUDA_ATOMIC) {
        int chunk = (K + k->splits - 1) / k->splits, nparts = (K + chunk - 1) / chunk;
        gemm_splitk_atomic1<FMA><<<dim3(g16.x, g16.y, nparts), b16, 0, g_stream>>>(dC, A, B, M, N, K, chunk);
        set_kernel(info, "%s%d", "splitk_atomic/1 S=", k->splits);
    } else if (k->family == DRIFT_GEMM_NAIVE) {
        gemm_naive1<FMA><<<g16, b16, 0, g_stream>>>(dC, A, B, M, N, K);
        set_kernel(info, "%s%d", "naive/", 1);
    } else if (k->family == DRIFT_GEMM_TILED && g->version == 1) {
        gemm_tiled1<FMA><<<dim3((N + T1 - 1) / T1, (M + T1 - 1) / T1), dim3(T1, T1), 0, g_stream>>>(dC, A, B, M, N, K);
        set_kernel(info, "%s%d", "tiled/", 1);
    } else if (k->family == DRIFT_GEMM_TILED) {
        gemm_tiled2<FMA><<<dim3((N + BN2 - 1) / BN2, (M + BM2 - 1) / BM2), 256, 0, g_stream>>>(dC, A, B, M, N, K);
        set_kernel(info, "%s%d", "tiled/", 2);
    } else { // splitk
        int chunk = (K + k->splits - 1) / k->splits, nparts = (K + chunk - 1) / chunk;
        gemm_splitk_partial1<FMA><<<dim3(g16.x, g16.y, nparts), b16, 0, g_stream>>>(P, A, B, M, N, K, chunk);
        size_t mn = (size_t)M * N;
        gemm_splitk_combine1<<<(unsigned)((mn + 255) / 256), 256, 0, g_stream>>>(dC, P, M, N, nparts, k->tree);
        set_kernel(info, "%s%d", k->tree ? "splitk_tree/1 S=" : "splitk/1 S=", k->splits);
    }
}

// Scratch for split-K partials, grown on demand and kept (not thread-safe, like the message).
static float *g_partials = NULL;
static size_t g_partials_n = 0;

extern "C" int drift_cuda_gemm_device(float *dC, const void *dA, const void *dB, int M, int N, int K,
    const drift_cuda_gemm_t *g, const drift_gemm_opts_t *opts, drift_cuda_gemm_info_t *info)
{
    int rc = 0;
    if (!g || !opts) return drift_cuda_fail(DRIFT_EINVAL, "gemm: NULL kernel or options");
    if (M <= 0 || N <= 0) return 0;
    if (g->path == DRIFT_CUDA_CUBLAS || g->path == DRIFT_CUDA_CUBLASLT)
        return drift_cuda_blas_gemm(dC, dA, dB, M, N, K, g, opts->in, info);
    if (K == 0) {
        CUDA_TRY(cudaMemsetAsync(dC, 0, (size_t)M * N * sizeof(float), g_stream));
        return 0;
    }
    if (g->path == DRIFT_CUDA_TWIN && g->kern.family == DRIFT_GEMM_TC) {
        int cc = drift_cuda_current_cc();
        if (cc < 0) return cc;
        if (arch_of_cc(cc) != g->kern.arch)
            return drift_cuda_fail(DRIFT_EUNSUPPORTED, "gemm tc:%s: the device is sm_%d (tc:%s)",
                drift_tc_arch_name(g->kern.arch), cc, drift_tc_arch_name(arch_of_cc(cc)));
        if (M % 32 || N % 32 || K % 16)
            return drift_cuda_fail(DRIFT_EUNSUPPORTED, "gemm tc on device memory: M, N multiples of 32, K of 16 (pad)");
        dim3 grid((N + 63) / 64, (M + 63) / 64);
        switch (opts->in) {
        case DRIFT_FP16:
            LAUNCH_TRY(
                gemm_wmma1<__half><<<grid, 128, 0, g_stream>>>(dC, (const __half *)dA, (const __half *)dB, M, N, K));
            set_kernel(info, "%s%d", "wmma fp16 16x16x16/", 1);
            break;
        case DRIFT_BF16:
            LAUNCH_TRY(gemm_wmma1<__nv_bfloat16>
                <<<grid, 128, 0, g_stream>>>(dC, (const __nv_bfloat16 *)dA, (const __nv_bfloat16 *)dB, M, N, K));
            set_kernel(info, "%s%d", "wmma bf16 16x16x16/", 1);
            break;
        case DRIFT_TF32:
            LAUNCH_TRY(gemm_wmma1<nvcuda::wmma::precision::tf32>
                <<<grid, 128, 0, g_stream>>>(dC, (const float *)dA, (const float *)dB, M, N, K));
            set_kernel(info, "%s%d", "wmma tf32 16x16x8/", 1);
            break;
        case DRIFT_FP8E4M3:
        case DRIFT_FP8E5M2: {
            if (cc < 89)
                return drift_cuda_fail(
                    DRIFT_EUNSUPPORTED, "gemm tc fp8: mma.sync e4m3/e5m2 needs sm_89+, device is sm_%d", cc);
            if (K % 32)
                return drift_cuda_fail(DRIFT_EUNSUPPORTED, "gemm tc fp8 on device memory: K a multiple of 32 (pad)");
            long warps = (long)(M / 16) * (N / 8);
            unsigned blocks = (unsigned)((warps + 3) / 4);
            if (opts->in == DRIFT_FP8E4M3)
                LAUNCH_TRY(gemm_mma_fp8_1<0>
                    <<<blocks, 128, 0, g_stream>>>(dC, (const unsigned char *)dA, (const unsigned char *)dB, M, N, K));
            else
                LAUNCH_TRY(gemm_mma_fp8_1<1>
                    <<<blocks, 128, 0, g_stream>>>(dC, (const unsigned char *)dA, (const unsigned char *)dB, M, N, K));
            set_kernel(
                info, "%s%d", opts->in == DRIFT_FP8E4M3 ? "mma.sync e4m3 m16n8k32/" : "mma.sync e5m2 m16n8k32/", 1);
            break;
        }
        default:
            return drift_cuda_fail(DRIFT_EUNSUPPORTED, "gemm tc: no mma path for %s in this build (fp16 bf16 tf32 fp8)",
                drift_format_name(opts->in));
        }
        return 0;
    }
    {
        const float *A = (const float *)dA, *B = (const float *)dB;
        if (g->path == DRIFT_CUDA_ATOMIC) CUDA_TRY(cudaMemsetAsync(dC, 0, (size_t)M * N * sizeof(float), g_stream));
        if (g->path == DRIFT_CUDA_TWIN && g->kern.family == DRIFT_GEMM_SPLITK) {
            int chunk = (K + g->kern.splits - 1) / g->kern.splits, nparts = (K + chunk - 1) / chunk;
            size_t need = (size_t)nparts * M * N;
            if (need > g_partials_n) {
                if (g_partials) CUDA_TRY(cudaFree(g_partials));
                g_partials = NULL, g_partials_n = 0;
                CUDA_TRY(cudaMalloc(&g_partials, need * sizeof(float)));
                g_partials_n = need;
            }
        }
        if (opts->acc.fma)
            launch_simt<true>(dC, A, B, M, N, K, g, g_partials, info);
        else
            launch_simt<false>(dC, A, B, M, N, K, g, g_partials, info);
        CUDA_TRY(cudaGetLastError());
    }
done:
    return rc;
}

// ---- the host entry point -------------------------------------------------------------------

// A (M x K) and B (K x N) rounded to the input format exactly as drift_gemm does, stored in
// the device format (bytes per element) with leading dimensions Kp and Np (zero padding).
static int stage_operands(unsigned char *hA, unsigned char *hB, const double *A, const double *B, size_t M, size_t N,
    size_t K, size_t Kp, size_t Np, int bytes, drift_format_t in)
{
    for (int which = 0; which < 2; which++) {
        const double *src = which ? B : A;
        unsigned char *dst = which ? hB : hA;
        size_t rows = which ? K : M, cols = which ? N : K, ld = which ? Np : Kp;
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) {
                float v = (float)drift_rne(src[r * cols + c], in); // exact: a value of a format <= fp32
                size_t at = r * ld + c;
                if (bytes == 4)
                    memcpy(dst + 4 * at, &v, 4);
                else if (bytes == 1)
                    dst[at] = (unsigned char)drift_encode(v, in); // the fp8 encoding
                else if (in == DRIFT_FP16) {
                    __half h = __float2half_rn(v);
                    memcpy(dst + 2 * at, &h, 2);
                } else {
                    __nv_bfloat16 h = __float2bfloat16_rn(v);
                    memcpy(dst + 2 * at, &h, 2);
                }
            }
    }
    return 0;
}

extern "C" int drift_cuda_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_cuda_gemm_t *g, const drift_gemm_opts_t *opts, drift_cuda_gemm_info_t *info)
{
    int rc = drift_cuda_check_gemm(C, A, B, M, N, K, g, opts);
    if (rc) return rc;
    if (drift_cuda_device_count() == 0) return DRIFT_EUNSUPPORTED; // the message says why
    if (M == 0 || N == 0) return 0;
    int tc = g->path == DRIFT_CUDA_TWIN && g->kern.family == DRIFT_GEMM_TC;
    int fp8 = opts->in == DRIFT_FP8E4M3 || opts->in == DRIFT_FP8E5M2;
    size_t kq = fp8 ? 32 : 16; // the mma's K step
    size_t Mp = tc ? (M + 31) / 32 * 32 : M, Np = tc ? (N + 31) / 32 * 32 : N, Kp = tc ? (K + kq - 1) / kq * kq : K;
    int bytes = drift_cuda_gemm_storage_bytes(g, opts->in);
    size_t na = Mp * Kp, nb = Kp * Np, nc = Mp * Np;
    unsigned char *hA = (unsigned char *)calloc(na ? na : 1, bytes), *hB = (unsigned char *)calloc(nb ? nb : 1, bytes);
    float *hC = (float *)malloc(nc * sizeof(float));
    void *dA = NULL, *dB = NULL;
    float *dC = NULL;
    if (!hA || !hB || !hC) FAIL_TO_DONE(DRIFT_ENOMEM, "gemm: out of host memory");
    stage_operands(hA, hB, A, B, M, N, K, Kp, Np, bytes, opts->in);
    CUDA_TRY(cudaMalloc(&dA, (na ? na : 1) * bytes));
    CUDA_TRY(cudaMalloc(&dB, (nb ? nb : 1) * bytes));
    CUDA_TRY(cudaMalloc(&dC, nc * sizeof(float)));
    CUDA_TRY(cudaMemcpy(dA, hA, na * bytes, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(dB, hB, nb * bytes, cudaMemcpyHostToDevice));
    rc = drift_cuda_gemm_device(dC, dA, dB, (int)Mp, (int)Np, (int)Kp, g, opts, info);
    if (rc) goto done;
    CUDA_TRY(cudaDeviceSynchronize());
    CUDA_TRY(cudaMemcpy(hC, dC, nc * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) C[i * N + j] = hC[i * Np + j];
done:
    free(hA), free(hB), free(hC);
    if (dA) cudaFree(dA);
    if (dB) cudaFree(dB);
    if (dC) cudaFree(dC);
    return rc;
}

// ---- the same GEMM on concurrent streams -------------------------------------------------------

extern "C" int drift_cuda_gemm_streams(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_cuda_gemm_t *g, const drift_gemm_opts_t *opts, int nstreams, drift_cuda_gemm_info_t *info)
{
    int rc = drift_cuda_check_gemm_streams(C, A, B, M, N, K, g, opts, nstreams);
    if (rc) return rc;
    if (drift_cuda_device_count() == 0) return DRIFT_EUNSUPPORTED;
    if (M == 0 || N == 0) return 0;
    int bytes = drift_cuda_gemm_storage_bytes(g, opts->in);
    size_t na = M * K, nb = K * N, nc = M * N;
    unsigned char *hA = (unsigned char *)calloc(na ? na : 1, bytes), *hB = (unsigned char *)calloc(nb ? nb : 1, bytes);
    float *hC = (float *)malloc(nc * sizeof(float));
    void *dA = NULL, *dB = NULL;
    float *dC[DRIFT_CUDA_MAX_STREAMS] = {NULL};
    cudaStream_t st[DRIFT_CUDA_MAX_STREAMS] = {0};
    if (!hA || !hB || !hC) FAIL_TO_DONE(DRIFT_ENOMEM, "gemm streams: out of host memory");
    stage_operands(hA, hB, A, B, M, N, K, K, N, bytes, opts->in);
    CUDA_TRY(cudaMalloc(&dA, (na ? na : 1) * bytes));
    CUDA_TRY(cudaMalloc(&dB, (nb ? nb : 1) * bytes));
    CUDA_TRY(cudaMemcpy(dA, hA, na * bytes, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(dB, hB, nb * bytes, cudaMemcpyHostToDevice));
    for (int s = 0; s < nstreams; s++) {
        CUDA_TRY(cudaMalloc(&dC[s], nc * sizeof(float)));
        CUDA_TRY(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
        if (g->path != DRIFT_CUDA_ATOMIC && (rc = drift_cuda_blas_ready(s + 1))) goto done;
    }
    CUDA_TRY(cudaDeviceSynchronize()); // the operands are in place before any stream starts
    // queue the same GEMM on every stream, back to back: they run concurrently
    for (int s = 0; s < nstreams && !rc; s++) {
        use_stream(st[s], s + 1);
        rc = drift_cuda_gemm_device(dC[s], dA, dB, (int)M, (int)N, (int)K, g, opts, info);
    }
    use_stream(0, 0);
    if (rc) goto done;
    CUDA_TRY(cudaDeviceSynchronize());
    for (int s = 0; s < nstreams; s++) {
        CUDA_TRY(cudaMemcpy(hC, dC[s], nc * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < nc; i++) C[(size_t)s * nc + i] = hC[i];
    }
done:
    use_stream(0, 0);
    free(hA), free(hB), free(hC);
    if (dA) cudaFree(dA);
    if (dB) cudaFree(dB);
    for (int s = 0; s < nstreams; s++) {
        if (dC[s]) cudaFree(dC[s]);
        if (st[s]) cudaStreamDestroy(st[s]);
    }
    return rc;
}
