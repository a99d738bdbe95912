/* ggml_cpu_fattn.c — flash attention as ggml-cpu computes it for fp16 K and V (AVX2 build).
 * See ggml_cpu.h for the contract. */
#include "ggml_cpu.h"

#include <math.h>
#include <stdlib.h>

#define FA_MAX_D 256
/* reduce_partials' x*so + y*sn as GCC contracts it: y*sn rounded, x*so fused (the two other
 * readings differ from ggml in a few percent of the values at 2..8 threads). */
#ifndef FA_SPLIT_COMBINE
#define FA_SPLIT_COMBINE(a, so, b, sn) fmaf((a), (so), (b) * (sn))
#endif

/* ggml-cpu/ops.cpp: ggml_compute_forward_flash_attn_ext_f16_one_chunk, V of type F16, no
 * softcap, no ALiBi (slope 1), no sinks, the whole KV range in one chunk:
 * Q is converted to fp16 (K's vec_dot_type, ggml_cpu_fp32_to_fp16: nearest even); for each
 * key in order, s = ggml_vec_dot_f16(k, q) * scale (+ mask 0); online softmax with the fp16
 * accumulator VKQ16: on a new maximum M, ms = expf(Mold - M) and VKQ16 = fp16(VKQ16 * ms)
 * (ggml_vec_scale_f16), vs = 1; otherwise vs = expf(s - M); then
 * VKQ16 = fp16(fma(v, vs, VKQ16)) (ggml_vec_mad_f16) and S = S*ms + vs (which GCC contracts
 * into fma(S, ms, vs)); finally out = float(VKQ16) * (1/S) (ggml_vec_scale_f32). */
/* kv_idx NULL: the keys are cells first .. first+nkv-1 */
static void fa_partial(float *vkq, float *Mout, float *Sout, const float *q, const uint16_t *k, const uint16_t *v,
    size_t ld, size_t d, const int *kv_idx, size_t first, size_t nkv, float scale, int avx512)
{
    uint16_t qh[FA_MAX_D];
    uint16_t acc[FA_MAX_D];
    if (d > FA_MAX_D) {
        abort(); /* the contract caps the head size; a llama head is 64 or 128 */
    }
    drift_ggml_fp32_to_fp16_row(qh, q, d);
    for (size_t i = 0; i < d; i++) {
        acc[i] = 0;
    }
    float S = 0.0f, M = -INFINITY;
    for (size_t t = 0; t < nkv; t++) {
        const size_t ic = kv_idx ? (size_t)kv_idx[t] : first + t;
        float s = avx512 ? drift_ggml_vec_dot_f16_512(d, k + ic * ld, qh) : drift_ggml_vec_dot_f16(d, k + ic * ld, qh);
        s = s * scale;
        s += 0.0f; /* the mask value of an admitted key */
        const float Mold = M;
        float ms = 1.0f, vs = 1.0f;
        if (s > M) {
            M = s;
            ms = expf(Mold - M);
            for (size_t i = 0; i < d; i++) {
                acc[i] = drift_ggml_fp32_to_fp16(drift_ggml_h2f(acc[i]) * ms);
            }
        } else {
            vs = expf(s - M);
        }
        const uint16_t *vr = v + ic * ld;
        for (size_t i = 0; i < d; i++) {
            acc[i] = drift_ggml_fp32_to_fp16(fmaf(drift_ggml_h2f(vr[i]), vs, drift_ggml_h2f(acc[i])));
        }
        S = fmaf(S, ms, vs);
    }
    for (size_t i = 0; i < d; i++) {
        vkq[i] = drift_ggml_h2f(acc[i]);
    }
    *Mout = M;
    *Sout = S;
}

static void fa_row(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d,
    const int *kv_idx, size_t nkv, float scale, int avx512)
{
    float M, S;
    fa_partial(out, &M, &S, q, k, v, ld, d, kv_idx, 0, nkv, scale, avx512);
    const float S_inv = S == 0.0f ? 0.0f : 1.0f / S;
    for (size_t i = 0; i < d; i++) {
        out[i] = out[i] * S_inv;
    }
}

/* ggml-cpu/ops.cpp: the split-KV path of ggml_compute_forward_flash_attn_ext_f16 (one query,
 * K/V f16 or f32, a KV view of nek1 >= 512 cells) as n_threads threads run it: the view is cut
 * into chunks of ceil(nek1 / n_threads) cells, each chunk's admitted keys (cells 0 .. n_keys-1)
 * go through one_chunk into a partial (M, S, float(VKQ16)), and
 * ggml_flash_attn_ext_reduce_partials folds the partials in chunk order: a chunk with S = 0 is
 * skipped; M' = fmaxf(M, Mc), so = expf(M - M'), sn = expf(Mc - M'), VKQ = VKQ*so + VKQc*sn
 * and S = S*so + Sc*sn (both contracted by GCC: FA_SPLIT_COMBINE), then VKQ * (1/S). */
static void fa_row_split(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d,
    size_t n_keys, size_t nek1, int n_threads, float scale, int avx512)
{
    float vkq[FA_MAX_D], part[FA_MAX_D];
    const size_t chunk = (nek1 + (size_t)n_threads - 1) / (size_t)n_threads;
    float M = -INFINITY, S = 0.0f;
    for (size_t i = 0; i < d; i++) {
        vkq[i] = 0.0f;
    }
    for (size_t c0 = 0; c0 < nek1; c0 += chunk) {
        const size_t c1 = c0 + chunk < nek1 ? c0 + chunk : nek1;
        const size_t n = n_keys <= c0 ? 0 : (n_keys < c1 ? n_keys : c1) - c0; /* admitted cells of the chunk */
        float Mc, Sc;
        fa_partial(part, &Mc, &Sc, q, k, v, ld, d, NULL, c0, n, scale, avx512);
        if (Sc == 0.0f) {
            continue;
        }
        const float Mn = fmaxf(M, Mc), so = expf(M - Mn), sn = expf(Mc - Mn);
        for (size_t i = 0; i < d; i++) {
            vkq[i] = FA_SPLIT_COMBINE(vkq[i], so, part[i], sn);
        }
        S = FA_SPLIT_COMBINE(S, so, Sc, sn);
        M = Mn;
    }
    const float S_inv = S != 0.0f ? 1.0f / S : 1.0f; /* S = 0: ggml leaves VKQ (all 0) unscaled */
    for (size_t i = 0; i < d; i++) {
        out[i] = S != 0.0f ? vkq[i] * S_inv : vkq[i];
    }
}

void drift_ggml_flash_attn_split_row(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld,
    size_t d, size_t n_keys, size_t nek1, int n_threads, float scale)
{
    fa_row_split(out, q, k, v, ld, d, n_keys, nek1, n_threads, scale, 0);
}

void drift_ggml_flash_attn_split_row512(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld,
    size_t d, size_t n_keys, size_t nek1, int n_threads, float scale)
{
    fa_row_split(out, q, k, v, ld, d, n_keys, nek1, n_threads, scale, 1);
}

void drift_ggml_flash_attn_row_ref(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld,
    size_t d, const int *kv_idx, size_t nkv, float scale)
{
    fa_row(out, q, k, v, ld, d, kv_idx, nkv, scale, 0);
}

/* The AVX-512 build's one_chunk row: only ggml_vec_dot_f16 changes (its 16-lane reduction);
 * the fp16 accumulator updates are element-wise, the same on both builds. */
void drift_ggml_flash_attn_row512(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d,
    const int *kv_idx, size_t nkv, float scale)
{
    fa_row(out, q, k, v, ld, d, kv_idx, nkv, scale, 1);
}

/* The same one_chunk row with the instructions of ggml's AVX2 build (vcvtps2ph / vcvtph2ps,
 * vfmadd231ps, the GGML_F32x8_REDUCE of ggml_vec_dot_f16, scalar vfmadd for S): the bits of
 * drift_ggml_flash_attn_row_ref, faster. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("avx2,fma,f16c"))) static void fa_row_avx2(float *out, const float *q, const uint16_t *k,
    const uint16_t *v, size_t ld, size_t d, const int *kv_idx, size_t nkv, float scale)
{
    uint16_t qh[FA_MAX_D], acc[FA_MAX_D];
    for (size_t i = 0; i < d; i += 8) {
        _mm_storeu_si128((__m128i *)(qh + i), _mm256_cvtps_ph(_mm256_loadu_ps(q + i), 0));
        _mm_storeu_si128((__m128i *)(acc + i), _mm_setzero_si128());
    }
    float S = 0.0f, M = -INFINITY;
    for (size_t t = 0; t < nkv; t++) {
        const size_t ic = (size_t)kv_idx[t];
        const uint16_t *kr = k + ic * ld, *vr = v + ic * ld;
        __m256 sum[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (size_t i = 0; i < d; i += 32) {
            for (int j = 0; j < 4; j++) {
                const __m256 ax = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(kr + i + 8 * j)));
                const __m256 ay = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(qh + i + 8 * j)));
                sum[j] = _mm256_fmadd_ps(ax, ay, sum[j]);
            }
        }
        sum[0] = _mm256_add_ps(sum[0], sum[2]);
        sum[1] = _mm256_add_ps(sum[1], sum[3]);
        sum[0] = _mm256_add_ps(sum[0], sum[1]);
        const __m128 t0 = _mm_add_ps(_mm256_castps256_ps128(sum[0]), _mm256_extractf128_ps(sum[0], 1));
        const __m128 t1 = _mm_hadd_ps(t0, t0);
        float s = _mm_cvtss_f32(_mm_hadd_ps(t1, t1));
        s = s * scale;
        s += 0.0f;
        const float Mold = M;
        float ms = 1.0f, vs = 1.0f;
        if (s > M) {
            M = s;
            ms = expf(Mold - M);
            const __m256 vms = _mm256_set1_ps(ms);
            for (size_t i = 0; i < d; i += 8) {
                const __m256 a = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(acc + i)));
                _mm_storeu_si128((__m128i *)(acc + i), _mm256_cvtps_ph(_mm256_mul_ps(a, vms), 0));
            }
        } else {
            vs = expf(s - M);
        }
        const __m256 vvs = _mm256_set1_ps(vs);
        for (size_t i = 0; i < d; i += 8) {
            const __m256 a = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(acc + i)));
            const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(vr + i)));
            _mm_storeu_si128((__m128i *)(acc + i), _mm256_cvtps_ph(_mm256_fmadd_ps(x, vvs, a), 0));
        }
        S = fmaf(S, ms, vs);
    }
    const float S_inv = S == 0.0f ? 0.0f : 1.0f / S;
    const __m256 vinv = _mm256_set1_ps(S_inv);
    for (size_t i = 0; i < d; i += 8) {
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(acc + i))), vinv));
    }
}
#endif

void drift_ggml_flash_attn_row(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d,
    const int *kv_idx, size_t nkv, float scale)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (d % 32 == 0 && d <= FA_MAX_D && drift_ggml_cpu_has_avx2()) {
        fa_row_avx2(out, q, k, v, ld, d, kv_idx, nkv, scale);
        return;
    }
#endif
    drift_ggml_flash_attn_row_ref(out, q, k, v, ld, d, kv_idx, nkv, scale);
}

#define FA_TILE 64 /* GGML_FA_TILE_Q = GGML_FA_TILE_KV (ggml-cpu/common.h) */

/* ggml-cpu/vec.cpp: ggml_vec_soft_max_f32, AVX2 + FMA branch, over n (a multiple of 8) values:
 * y = v_expf(x - max) per lane, and the double sum of each 8-lane group's hsum_float_8. */
static double soft_max_row(float *y, const float *x, size_t n, float max, int avx512)
{
    double sum = 0.0;
    if (avx512) { /* the __AVX512F__ && __AVX512DQ__ branch: groups of 16, _mm512_reduce_add_ps */
        for (size_t i = 0; i < n; i += 16) {
            for (size_t l = 0; l < 16; l++) {
                y[i + l] = drift_ggml_v_expf512(x[i + l] - max);
            }
            sum += (double)drift_ggml_hsum16(y + i);
        }
        return sum;
    }
    for (size_t i = 0; i < n; i += 8) {
        for (size_t l = 0; l < 8; l++) {
            y[i + l] = drift_ggml_v_expf(x[i + l] - max);
        }
        sum += (double)drift_ggml_hsum8(y + i);
    }
    return sum;
}

/* ggml-cpu/ops.cpp: ggml_compute_forward_flash_attn_ext_tiled (the path of a chunk of 64 or more
 * queries), one query row; every op of that function is row-wise, so the row does not depend
 * on the other rows of its Q tile, and a KV tile in which the mask admits none of this row's
 * keys changes nothing for it (skipped, or tile_max = -inf). Per KV tile of 64 cells:
 *   KQ[j] = simd_gemm: fma chain over the head dimension, acc = fma(k[dk], q[dk], acc) from 0,
 *           with Q kept in fp32 (not converted to fp16 here) and K widened from fp16;
 *   KQ *= scale (ggml_vec_scale_f32), KQ += mask (0, or -inf for a cell not admitted);
 *   tile_max = max(KQ); Mnew = fmaxf(M, tile_max); on Mnew > M: ms = expf(M - Mnew),
 *   VKQ *= ms, S *= ms; M = Mnew;
 *   S += soft_max_row(KQ, Mnew) (a float += double: the sum is rounded once, to float);
 *   VKQ[c] = simd_gemm: fma chain over the 64 cells, acc = fma(v[j][c], KQ[j], acc).
 * Finally out = VKQ * (1/S). The keys admitted are cells 0 .. n_keys-1 (a causal mask). */
static void fa_tiled_row(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d,
    size_t n_keys, float scale, int avx512)
{
    float acc[FA_MAX_D];
    float kq[FA_TILE];
    if (d > FA_MAX_D) {
        abort();
    }
    for (size_t i = 0; i < d; i++) {
        acc[i] = 0.0f;
    }
    float S = 0.0f, M = -INFINITY;
    for (size_t ic = 0; ic < n_keys; ic += FA_TILE) {
        for (size_t j = 0; j < FA_TILE; j++) {
            const size_t c = ic + j;
            if (c >= n_keys) {
                kq[j] = -INFINITY;
                continue;
            }
            const uint16_t *kr = k + c * ld;
            float s = 0.0f;
            for (size_t e = 0; e < d; e++) {
                s = fmaf(drift_ggml_h2f(kr[e]), q[e], s);
            }
            kq[j] = (s * scale) + 0.0f;
        }
        float tile_max = -INFINITY;
        for (size_t j = 0; j < FA_TILE; j++) {
            tile_max = tile_max > kq[j] ? tile_max : kq[j];
        }
        const float Mnew = fmaxf(M, tile_max);
        if (Mnew > M) {
            const float ms = expf(M - Mnew);
            for (size_t i = 0; i < d; i++) {
                acc[i] *= ms;
            }
            S *= ms;
        }
        M = Mnew;
        S = (float)((double)S + soft_max_row(kq, kq, FA_TILE, Mnew, avx512));
        for (size_t j = 0; j < FA_TILE; j++) {
            const size_t c = ic + j;
            const uint16_t *vr = v + c * ld;
            for (size_t i = 0; i < d; i++) {
                /* a cell not admitted has weight exactly 0 (v_expf(-inf) = 0): fma(v, 0, acc) = acc */
                const float vv = c < n_keys ? drift_ggml_h2f(vr[i]) : 0.0f;
                acc[i] = fmaf(vv, kq[j], acc[i]);
            }
        }
    }
    const float S_inv = S == 0.0f ? 0.0f : 1.0f / S;
    for (size_t i = 0; i < d; i++) {
        out[i] = acc[i] * S_inv;
    }
}

void drift_ggml_flash_attn_tiled_row(
    float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d, size_t n_keys, float scale)
{
    fa_tiled_row(out, q, k, v, ld, d, n_keys, scale, 0);
}

/* The AVX-512 build's tiled row: simd_gemm's 4x4 register tile of 16-lane vectors keeps every
 * element's fma chain in the same order, so only the softmax (16-lane v_expf, reduce_add)
 * changes. */
void drift_ggml_flash_attn_tiled_row512(
    float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d, size_t n_keys, float scale)
{
    fa_tiled_row(out, q, k, v, ld, d, n_keys, scale, 1);
}
