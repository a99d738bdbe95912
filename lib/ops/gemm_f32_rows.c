/* gemm_f32_rows.c — the naive kernel on the F32 path (gemm_internal.h): every output row
 * computed in the textbook order, one k at a time across the whole row, so each output's
 * chain is the seq order of gemm.h.
 *
 * Row-major, no packing: this is the kernel whose memory access is the plain loop nest a
 * user would write, the baseline the tiled kernel is measured against (bench/gemm.c). */
#include <math.h>

#include "gemm_internal.h"

static void row_f32_generic(
    float *restrict s, const float *restrict Ai, const float *restrict Bf, size_t N, size_t k0, size_t k1, int fma_on)
{
    if (k0 == k1) {
        for (size_t j = 0; j < N; j++) s[j] = 0.0f;
        return;
    }
    float a = Ai[k0];
    const float *b = Bf + k0 * N;
    for (size_t j = 0; j < N; j++) s[j] = a * b[j];
    for (size_t k = k0 + 1; k < k1; k++) {
        a = Ai[k];
        b = Bf + k * N;
        if (fma_on)
            for (size_t j = 0; j < N; j++) s[j] = fmaf(a, b[j], s[j]);
        else
            for (size_t j = 0; j < N; j++) s[j] = s[j] + a * b[j];
    }
}

#ifdef DRIFT_X86_DISPATCH
__attribute__((target("avx2,fma"))) static void row_f32_avx2(
    float *restrict s, const float *restrict Ai, const float *restrict Bf, size_t N, size_t k0, size_t k1, int fma_on)
{
    if (k0 == k1) {
        for (size_t j = 0; j < N; j++) s[j] = 0.0f;
        return;
    }
    /* Strips of 64 outputs stay in registers over the whole k range. */
    size_t j0 = 0;
    for (; j0 + 64 <= N; j0 += 64) {
        __m256 acc[8];
        __m256 a = _mm256_set1_ps(Ai[k0]);
        const float *b = Bf + k0 * N + j0;
        for (int v = 0; v < 8; v++) acc[v] = _mm256_mul_ps(a, _mm256_loadu_ps(b + 8 * v));
        for (size_t k = k0 + 1; k < k1; k++) {
            a = _mm256_set1_ps(Ai[k]);
            b = Bf + k * N + j0;
            if (fma_on)
                for (int v = 0; v < 8; v++) acc[v] = _mm256_fmadd_ps(a, _mm256_loadu_ps(b + 8 * v), acc[v]);
            else
                for (int v = 0; v < 8; v++)
                    acc[v] = _mm256_add_ps(acc[v], _mm256_mul_ps(a, _mm256_loadu_ps(b + 8 * v)));
        }
        for (int v = 0; v < 8; v++) _mm256_storeu_ps(s + j0 + 8 * v, acc[v]);
    }
    if (j0 < N) {
        float a = Ai[k0];
        const float *b = Bf + k0 * N;
        for (size_t j = j0; j < N; j++) s[j] = a * b[j];
        for (size_t k = k0 + 1; k < k1; k++) {
            a = Ai[k];
            b = Bf + k * N;
            if (fma_on)
                for (size_t j = j0; j < N; j++) s[j] = fmaf(a, b[j], s[j]);
            else
                for (size_t j = j0; j < N; j++) s[j] = s[j] + a * b[j];
        }
    }
}
#endif

void drift_gemm_rows_f32(const drift_gemm_ctx_t *g, float *out, size_t k0, size_t k1)
{
    int simd = drift_gemm_simd() != DRIFT_GEMM_SIMD_NONE;
#pragma omp parallel for schedule(dynamic, 1) if (g->M * g->N * (k1 - k0) >= DRIFT_PAR_MIN_FMAS_FAST)
    for (size_t i = 0; i < g->M; i++) {
#ifdef DRIFT_X86_DISPATCH
        if (simd) {
            row_f32_avx2(out + i * g->N, g->Af + i * g->K, g->Bf, g->N, k0, k1, g->fma);
            continue;
        }
#endif
        (void)simd;
        row_f32_generic(out + i * g->N, g->Af + i * g->K, g->Bf, g->N, k0, k1, g->fma);
    }
}
