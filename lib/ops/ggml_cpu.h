/* ggml_cpu.h — bit-exact twins of the kernels llama.cpp's CPU backend (ggml-cpu) runs for a
 * llama-architecture model, in the variant built for AVX2 + FMA + F16C (no AVX-512, no VNNI).
 *
 * Each function gives, bit for bit, what the ggml kernel named in its comment (in ggml_cpu_*.c)
 * gives on that build: the integer dot products are exact, and the float operations are done
 * in ggml's order — the 8-lane accumulators, the horizontal-sum tree, an explicit fmaf wherever
 * the intrinsic is a fused multiply-add or where GCC (-O3 -mfma, default -ffp-contract=fast for
 * -std=gnu11 / gnu++17) contracts ggml's scalar a*b + c into one (checked in the disassembly of
 * the library and by comparing with it on random inputs), plain float operations otherwise.
 * Transcendentals that ggml takes from libm (expf, cosf, sinf, powf) are taken from the same
 * libm; ggml's own vector approximation of exp (ggml_v_expf) is emulated lane by lane.
 *
 * Blocks are ggml's: block_q8_0 {fp16 d; int8 qs[32]} (34 bytes), block_q8_1 {fp16 d, s;
 * int8 qs[32]} (36 bytes), block_q4_1 {fp16 d, m; uint8 qs[16]} (20 bytes; element j < 16 is
 * the low nibble of qs[j], element 16 + j the high nibble). */
#ifndef DRIFT_GGML_CPU_H
#define DRIFT_GGML_CPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DRIFT_GGML_QK 32 /* elements per q4_1 / q8_0 / q8_1 block */

typedef struct {
    uint16_t d;
    int8_t qs[DRIFT_GGML_QK];
} drift_ggml_q8_0_t;

typedef struct {
    uint16_t d, s; /* s = fp16(d * sum(qs)) */
    int8_t qs[DRIFT_GGML_QK];
} drift_ggml_q8_1_t;

typedef struct {
    uint16_t d, m;
    uint8_t qs[DRIFT_GGML_QK / 2];
} drift_ggml_q4_1_t;

/* IEEE binary16 <-> binary32: to fp16 rounds to nearest even (F16C vcvtps2ph with imm 0;
 * subnormals kept, overflow to inf, NaN stays NaN); to fp32 is exact. */
uint16_t drift_ggml_fp32_to_fp16(float x);
float drift_ggml_fp16_to_fp32(uint16_t h);
/* The same conversion inline, for the kernels' inner loops (a subnormal is m * 2^-24, one
 * exact product; everything else is a bit shuffle). */
static inline float drift_ggml_h2f(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    union {
        uint32_t u;
        float f;
    } r;
    if (e == 0) {
        r.f = (float)m * 0x1p-24f;
        r.u |= sign;
    } else {
        r.u = sign | (e == 0x1fu ? 0x7f800000u | (m << 13) : ((e + 112u) << 23) | (m << 13));
    }
    return r.f;
}
void drift_ggml_fp32_to_fp16_row(uint16_t *y, const float *x, size_t n);

/* quantize_row_q8_0 / quantize_row_q8_1, AVX2 path (k a multiple of 32). */
void drift_ggml_quantize_row_q8_0(drift_ggml_q8_0_t *y, const float *x, size_t k);
void drift_ggml_quantize_row_q8_1(drift_ggml_q8_1_t *y, const float *x, size_t k);

/* The 8-lane horizontal sum hsum_float_8: ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)). */
float drift_ggml_hsum8(const float a[8]);

/* Dot products of one row (n a multiple of 32; blocks as above). The _ref functions are the
 * portable definitions; the others give the same bits, with AVX2 intrinsics when the CPU has
 * AVX2 and FMA (chosen at run time), else by calling _ref. */
float drift_ggml_vec_dot_q4_1_q8_1(size_t n, const drift_ggml_q4_1_t *x, const drift_ggml_q8_1_t *y);
float drift_ggml_vec_dot_q8_0_q8_0(size_t n, const drift_ggml_q8_0_t *x, const drift_ggml_q8_0_t *y);
float drift_ggml_vec_dot_q4_1_q8_1_ref(size_t n, const drift_ggml_q4_1_t *x, const drift_ggml_q8_1_t *y);
float drift_ggml_vec_dot_q8_0_q8_0_ref(size_t n, const drift_ggml_q8_0_t *x, const drift_ggml_q8_0_t *y);
/* ggml_vec_dot_f16 (fp16 x fp16, four 8-lane fp32 accumulators, then one double). */
float drift_ggml_vec_dot_f16(size_t n, const uint16_t *x, const uint16_t *y);

/* rms_norm followed by mul with the weight (fused or not, the same bits):
 * y[i] = (x[i] * scale) * w[i], scale = 1/sqrtf((float)(sum_double(x*x) / n) + eps). */
void drift_ggml_rms_norm_mul(float *y, const float *x, const float *w, size_t n, float eps);

/* RoPE, GGML_ROPE_TYPE_NORMAL (adjacent pairs), no YaRN (ext_factor 0), freq_scale 1,
 * attn_factor 1, no freq factors: the cos/sin cache for position pos over n_dims (even)
 * dimensions, cache[2i] = cos(theta_i), cache[2i+1] = sin(theta_i), theta_0 = pos,
 * theta_{i+1} = theta_i * powf(freq_base, -2/n_dims); then the rotation of one head. */
void drift_ggml_rope_cache(float *cache, int64_t pos, int n_dims, float freq_base);
void drift_ggml_rope_norm(float *y, const float *x, const float *cache, int n_dims);

/* ggml_v_expf (the AVX2 + FMA polynomial), one lane. */
float drift_ggml_v_expf(float x);
/* ggml_vec_swiglu_f32: y[i] = silu(x[i]) * g[i] with ggml_v_silu for every full group of 8
 * and the scalar x/(1+expf(-x)) for the tail. */
void drift_ggml_swiglu(float *y, const float *x, const float *g, size_t n);

/* 1 when the CPU has AVX2, FMA and F16C (the SIMD paths above and below are used then). */
int drift_ggml_cpu_has_avx2(void);

/* Flash attention (ggml_compute_forward_flash_attn_ext_f16_one_chunk) for one query row of
 * one head, K and V fp16 rows of length d (d a multiple of 32) at stride ld elements, the
 * keys that the mask lets through listed in kv_idx[0..nkv) in ascending order (mask 0 there,
 * -inf elsewhere), scale applied to each KQ value: out[0..d) fp32. */
void drift_ggml_flash_attn_row(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d,
    const int *kv_idx, size_t nkv, float scale);
/* Its portable definition (the function above takes AVX2 + FMA + F16C when present; same bits). */
void drift_ggml_flash_attn_row_ref(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld,
    size_t d, const int *kv_idx, size_t nkv, float scale);

/* Flash attention, the tiled path (ggml_compute_forward_flash_attn_ext_tiled, taken when a
 * call has 64 or more queries), one query row of one head: the keys admitted are cells
 * 0 .. n_keys-1 (a causal mask), K and V as above. */
void drift_ggml_flash_attn_tiled_row(
    float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d, size_t n_keys, float scale);

/* Flash attention, the split-KV path (one query over a KV view of nek1 >= 512 cells) as llama.cpp
 * computes it with n_threads threads: chunks of ceil(nek1 / n_threads) cells, one_chunk each,
 * then ggml_flash_attn_ext_reduce_partials. With one thread it equals drift_ggml_flash_attn_row
 * over cells 0 .. n_keys-1. */
void drift_ggml_flash_attn_split_row(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld,
    size_t d, size_t n_keys, size_t nek1, int n_threads, float scale);

/* The AVX-512 variant (GGML_AVX512 + VBMI + VNNI + BF16, no AVX512-FP16). What differs from the
 * AVX2 build in the kernels above: ggml_v_expf (another polynomial tail and _mm512_scalef_ps),
 * hence silu/swiglu (groups of 16) and the tiled softmax (groups of 16 summed by
 * _mm512_reduce_add_ps); ggml_vec_dot_f16 (16-lane accumulators); the rest (quantizers, the
 * q4_1/q8_0 dots, whose VNNI vpdpbusd sums the same integers exactly, rms_norm, rope, the
 * element-wise fp16 accumulator updates) gives the same bits as the AVX2 functions. */
float drift_ggml_hsum16(const float a[16]);
float drift_ggml_v_expf512(float x);
void drift_ggml_swiglu512(float *y, const float *x, const float *g, size_t n);
float drift_ggml_vec_dot_f16_512(size_t n, const uint16_t *x, const uint16_t *y);
void drift_ggml_flash_attn_row512(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d,
    const int *kv_idx, size_t nkv, float scale);
void drift_ggml_flash_attn_split_row512(float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld,
    size_t d, size_t n_keys, size_t nek1, int n_threads, float scale);
void drift_ggml_flash_attn_tiled_row512(
    float *out, const float *q, const uint16_t *k, const uint16_t *v, size_t ld, size_t d, size_t n_keys, float scale);

#ifdef __cplusplus
}
#endif

#endif
