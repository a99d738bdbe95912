/* ggml_cpu_vecdot.c — the row dot products ggml-cpu's mul_mat and flash attention call on the
 * AVX2 build. See ggml_cpu.h for the contract. */
#include "ggml_cpu.h"

#include <math.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif
#include <stdatomic.h>

/* ggml-cpu/arch/x86/quants.c: hsum_float_8. extract the high 128 bits and add the low ones
 * (lanes i and i+4), movehl + add (lanes 0+2, 1+3), movehdup + add_ss (0+1). */
float drift_ggml_hsum8(const float a[8])
{
    const float r0 = a[4] + a[0], r1 = a[5] + a[1], r2 = a[6] + a[2], r3 = a[7] + a[3];
    const float s0 = r0 + r2, s1 = r1 + r3;
    return s0 + s1;
}

/* ggml-cpu/arch/x86/quants.c: ggml_vec_dot_q4_1_q8_1 (AVX2 branch). Per block:
 * bytes_from_nibbles_32 puts the low nibbles (elements 0..15) in bytes 0..15 and the high
 * ones (16..31) in bytes 16..31; maddubs + madd(ones) sum four neighbouring byte products
 * into int32 lane k (elements 4k..4k+3; no 16-bit saturation: 2*15*128 < 2^15); the lane is
 * converted to float (exact) and acc[k] = fma(d_x*d_y, lane, acc[k]). The min term
 * summs += m * s is contracted by GCC into a scalar vfmadd231ss (seen in the disassembly).
 * Result: hsum8(acc) + summs. */
float drift_ggml_vec_dot_q4_1_q8_1_ref(size_t n, const drift_ggml_q4_1_t *x, const drift_ggml_q8_1_t *y)
{
    float acc[8] = {0};
    float summs = 0.0f;
    for (size_t ib = 0; ib < n / DRIFT_GGML_QK; ib++) {
        const float d0 = drift_ggml_h2f(x[ib].d);
        const float d1 = drift_ggml_h2f(y[ib].d);
        summs = fmaf(drift_ggml_h2f(x[ib].m), drift_ggml_h2f(y[ib].s), summs);
        const float d0d1 = d0 * d1;
        for (int k = 0; k < 8; k++) {
            int32_t lane = 0;
            for (int e = 4 * k; e < 4 * k + 4; e++) {
                const int qx = e < 16 ? (x[ib].qs[e] & 0x0f) : (x[ib].qs[e - 16] >> 4);
                lane += qx * y[ib].qs[e];
            }
            acc[k] = fmaf(d0d1, (float)lane, acc[k]);
        }
    }
    return drift_ggml_hsum8(acc) + summs;
}

/* ggml-cpu/arch/x86/quants.c: ggml_vec_dot_q8_0_q8_0 (AVX2 branch): mul_sum_i8_pairs_float
 * (sign trick, maddubs, madd) gives the int32 lane k = sum of elements 4k..4k+3 (exact: a
 * pair is at most 2*128*127 < 2^15), acc[k] = fma(d_x*d_y, lane, acc[k]); result hsum8. */
float drift_ggml_vec_dot_q8_0_q8_0_ref(size_t n, const drift_ggml_q8_0_t *x, const drift_ggml_q8_0_t *y)
{
    float acc[8] = {0};
    for (size_t ib = 0; ib < n / DRIFT_GGML_QK; ib++) {
        const float d = drift_ggml_h2f(x[ib].d) * drift_ggml_h2f(y[ib].d);
        for (int k = 0; k < 8; k++) {
            int32_t lane = 0;
            for (int e = 4 * k; e < 4 * k + 4; e++) {
                lane += (int32_t)x[ib].qs[e] * y[ib].qs[e];
            }
            acc[k] = fmaf(d, (float)lane, acc[k]);
        }
    }
    return drift_ggml_hsum8(acc);
}

/* The same two dots with AVX2 + FMA intrinsics, for speed where the CPU has them: the very
 * instructions of the ggml kernels above (vpmaddubsw, vpmaddwd, vcvtdq2ps, vfmadd231ps, the
 * hsum), so the bits are those of the portable definitions (test_ggml_cpu checks that they
 * agree). Chosen once, at the first call, from __builtin_cpu_supports. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define DRIFT_AVX2 __attribute__((target("avx2,fma,f16c")))

DRIFT_AVX2 static float hsum8_avx(__m256 v)
{
    __m128 r = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
    r = _mm_add_ps(r, _mm_movehl_ps(r, r));
    r = _mm_add_ss(r, _mm_movehdup_ps(r));
    return _mm_cvtss_f32(r);
}

DRIFT_AVX2 static float dot_q4_1_avx2(size_t n, const drift_ggml_q4_1_t *x, const drift_ggml_q8_1_t *y)
{
    __m256 acc = _mm256_setzero_ps();
    float summs = 0.0f;
    const __m256i low = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
    for (size_t ib = 0; ib < n / DRIFT_GGML_QK; ib++) {
        summs = fmaf(_cvtsh_ss(x[ib].m), _cvtsh_ss(y[ib].s), summs);
        const __m256 dd = _mm256_set1_ps(_cvtsh_ss(x[ib].d) * _cvtsh_ss(y[ib].d));
        const __m128i raw = _mm_loadu_si128((const __m128i *)x[ib].qs);
        const __m256i qx =
            _mm256_and_si256(low, _mm256_insertf128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1));
        const __m256i qy = _mm256_loadu_si256((const __m256i *)y[ib].qs);
        const __m256 xy = _mm256_cvtepi32_ps(_mm256_madd_epi16(ones, _mm256_maddubs_epi16(qx, qy)));
        acc = _mm256_fmadd_ps(dd, xy, acc);
    }
    return hsum8_avx(acc) + summs;
}

DRIFT_AVX2 static float dot_q8_0_avx2(size_t n, const drift_ggml_q8_0_t *x, const drift_ggml_q8_0_t *y)
{
    __m256 acc = _mm256_setzero_ps();
    const __m256i ones = _mm256_set1_epi16(1);
    for (size_t ib = 0; ib < n / DRIFT_GGML_QK; ib++) {
        const __m256 dd = _mm256_set1_ps(_cvtsh_ss(x[ib].d) * _cvtsh_ss(y[ib].d));
        const __m256i qx = _mm256_loadu_si256((const __m256i *)x[ib].qs);
        const __m256i qy = _mm256_loadu_si256((const __m256i *)y[ib].qs);
        const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(qx, qx), _mm256_sign_epi8(qy, qx));
        acc = _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(_mm256_madd_epi16(ones, p)), acc);
    }
    return hsum8_avx(acc);
}

#endif

int drift_ggml_cpu_has_avx2(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static _Atomic int cached = -1; /* threads may race to fill it: they all store the same value */
    int c = atomic_load_explicit(&cached, memory_order_relaxed);
    if (c < 0) {
        __builtin_cpu_init();
        /* F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does not know "f16c" */
        unsigned a, b, cx, d;
        int f16c = __get_cpuid(1, &a, &b, &cx, &d) && (cx & bit_F16C);
        c = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
        atomic_store_explicit(&cached, c, memory_order_relaxed);
    }
    return c;
#else
    return 0;
#endif
}

float drift_ggml_vec_dot_q4_1_q8_1(size_t n, const drift_ggml_q4_1_t *x, const drift_ggml_q8_1_t *y)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (drift_ggml_cpu_has_avx2()) {
        return dot_q4_1_avx2(n, x, y);
    }
#endif
    return drift_ggml_vec_dot_q4_1_q8_1_ref(n, x, y);
}

float drift_ggml_vec_dot_q8_0_q8_0(size_t n, const drift_ggml_q8_0_t *x, const drift_ggml_q8_0_t *y)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (drift_ggml_cpu_has_avx2()) {
        return dot_q8_0_avx2(n, x, y);
    }
#endif
    return drift_ggml_vec_dot_q8_0_q8_0_ref(n, x, y);
}


/* _mm512_reduce_add_ps as GCC's avx512fintrin.h writes it: lanes i + i+8, then i + i+4, then
 * (0+2, 1+3), then 0 + 1. */
float drift_ggml_hsum16(const float a[16])
{
    float t3[8], t6[4];
    for (int i = 0; i < 8; i++) {
        t3[i] = a[i + 8] + a[i];
    }
    for (int i = 0; i < 4; i++) {
        t6[i] = t3[i + 4] + t3[i];
    }
    const float t80 = t6[0] + t6[2], t81 = t6[1] + t6[3];
    return t80 + t81;
}

/* ggml-cpu/vec.cpp: ggml_vec_dot_f16, the generic GGML_SIMD branch, with W-lane fp32 vectors
 * (simd-mappings.h: AVX W = 8, GGML_F16_STEP 32; AVX-512 without FP16 W = 16, STEP 64): four
 * accumulators sum[j] fed by elements i + W*j + lane, sum[j] = fma(x, y, sum[j]); the REDUCE
 * macro: sum0 += sum2, sum1 += sum3, sum0 += sum1, then the vector's horizontal sum (AVX:
 * low128 + high128, hadd twice = (t0+t1) + (t2+t3); AVX-512: _mm512_reduce_add_ps); the
 * result goes to a double, the leftovers (n % 4W) are added there as double(x*y) products,
 * and the double is rounded to float. */
static float dot_f16_lanes(size_t n, const uint16_t *x, const uint16_t *y, int w)
{
    const size_t step = 4 * (size_t)w, np = n - n % step;
    float sum[4][16] = {{0}};
    for (size_t i = 0; i < np; i += step) {
        for (int j = 0; j < 4; j++) {
            for (int l = 0; l < w; l++) {
                const size_t e = i + (size_t)(w * j + l);
                sum[j][l] = fmaf(drift_ggml_h2f(x[e]), drift_ggml_h2f(y[e]), sum[j][l]);
            }
        }
    }
    for (int l = 0; l < w; l++) {
        sum[0][l] = sum[0][l] + sum[2][l];
        sum[1][l] = sum[1][l] + sum[3][l];
        sum[0][l] = sum[0][l] + sum[1][l];
    }
    float h;
    if (w == 16) {
        h = drift_ggml_hsum16(sum[0]);
    } else {
        float t[4];
        for (int l = 0; l < 4; l++) {
            t[l] = sum[0][l] + sum[0][l + 4];
        }
        h = (t[0] + t[1]) + (t[2] + t[3]);
    }
    double sumf = (double)h;
    for (size_t i = np; i < n; i++) {
        sumf += (double)(drift_ggml_h2f(x[i]) * drift_ggml_h2f(y[i]));
    }
    return (float)sumf;
}

float drift_ggml_vec_dot_f16(size_t n, const uint16_t *x, const uint16_t *y) { return dot_f16_lanes(n, x, y, 8); }
float drift_ggml_vec_dot_f16_512(size_t n, const uint16_t *x, const uint16_t *y) { return dot_f16_lanes(n, x, y, 16); }
