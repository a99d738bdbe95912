/* gemm_seq_f32.c — drift_seq_gemm_f32 (gemm.h): the seq chain of the naive and tiled kernels
 * with an fp32 accumulator, in fp32 registers. */
#include "gemm.h"

#include <math.h>

#include "drift.h"

/* C[i][j] = round(A[i][0] B[0][j]), then fmaf(A[i][k], B[k][j], C[i][j]) for k = 1 .. K-1:
 * drift_gemm's seq chain with an fp32 accumulator (each step one correctly rounded fp32
 * operation, so bit-identical; tests/test_model.c checks it against drift_gemm). */
static void seq_rows_generic(float *C, const float *A, const float *B, size_t M, size_t N, size_t K)
{
    for (size_t i = 0; i < M; i++) {
        float *c = C + i * N;
        const float *a = A + i * K;
        for (size_t j = 0; j < N; j++) c[j] = a[0] * B[j];
        for (size_t k = 1; k < K; k++)
            for (size_t j = 0; j < N; j++) c[j] = fmaf(a[k], B[k * N + j], c[j]);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) static void seq_rows_fma(
    float *C, const float *A, const float *B, size_t M, size_t N, size_t K)
{
    for (size_t i = 0; i < M; i++) {
        float *c = C + i * N;
        const float *a = A + i * K;
        for (size_t j = 0; j < N; j++) c[j] = a[0] * B[j];
        for (size_t k = 1; k < K; k++) {
            const float ak = a[k], *b = B + k * N;
            for (size_t j = 0; j < N; j++) c[j] = fmaf(ak, b[j], c[j]);
        }
    }
}
#endif

int drift_seq_gemm_f32(float *C, const float *A, const float *B, size_t M, size_t N, size_t K)
{
    if (!C || (M > 0 && K > 0 && !A) || (K > 0 && N > 0 && !B)) return DRIFT_EINVAL;
    if (K == 0) {
        for (size_t i = 0; i < M * N; i++) C[i] = 0.0f;
        return 0;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        seq_rows_fma(C, A, B, M, N, K);
        return 0;
    }
#endif
    seq_rows_generic(C, A, B, M, N, K);
    return 0;
}
