/* ggml_cpu_norm.c — the element-wise ops of a llama layer on ggml-cpu (AVX2 build): rms_norm
 * (+ mul), RoPE, SwiGLU. See ggml_cpu.h for the contract. */
#include "ggml_cpu.h"

#include <math.h>
#include <string.h>

/* ggml-cpu/ops.cpp: ggml_compute_forward_rms_norm_f32 (and its RMS_NORM + MUL fusion, which
 * computes x*scale*w left to right: the same bits as the unfused ggml_vec_scale_f32 followed
 * by the MUL op). The sum of squares is a double accumulated in order, each square rounded
 * to float first; mean = (float)(sum / n). */
void drift_ggml_rms_norm_mul(float *y, const float *x, const float *w, size_t n, float eps)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += (double)(x[i] * x[i]);
    }
    const float mean = (float)(sum / (double)n);
    const float scale = 1.0f / sqrtf(mean + eps);
    for (size_t i = 0; i < n; i++) {
        y[i] = (x[i] * scale) * w[i];
    }
}

/* ggml-cpu/ops.cpp: ggml_rope_cache_init + rope_yarn with ext_factor 0, freq_scale 1,
 * mscale (attn_factor) 1, no freq factors: theta starts at (float)pos and is multiplied by
 * theta_scale = powf(freq_base, -2.0f/n_dims) once per pair (the float rounding of that
 * repeated product is part of the result); cos and sin are libm's cosf and sinf. */
void drift_ggml_rope_cache(float *cache, int64_t pos, int n_dims, float freq_base)
{
    const float theta_scale = powf(freq_base, -2.0f / (float)n_dims);
    float theta = (float)pos;
    for (int i0 = 0; i0 < n_dims; i0 += 2) {
        cache[i0 + 0] = cosf(theta);
        cache[i0 + 1] = sinf(theta);
        theta *= theta_scale;
    }
}

/* ggml-cpu/ops.cpp: rotate_pairs<float> for GGML_ROPE_TYPE_NORMAL (pairs x[i0], x[i0+1]):
 * y0 = x0*cos - x1*sin, y1 = x0*sin + x1*cos. GCC (-O3 -mfma) contracts both: x1*sin and
 * x1*cos are rounded, the products with x0 are fused (vfmsub231ss / vfmadd132ss in
 * ggml_compute_forward_rope_flt<float>, ops.cpp.o; confirmed against the library on random
 * heads, where either other choice differs in about a third of the values). */
void drift_ggml_rope_norm(float *y, const float *x, const float *cache, int n_dims)
{
    for (int i0 = 0; i0 < n_dims; i0 += 2) {
        const float c = cache[i0], s = cache[i0 + 1];
        const float x0 = x[i0], x1 = x[i0 + 1];
        y[i0 + 0] = fmaf(x0, c, -(x1 * s));
        y[i0 + 1] = fmaf(x0, s, x1 * c);
    }
}

static uint32_t f2u(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float u2f(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* ggml-cpu/vec.h: ggml_v_expf, the __AVX2__ && __FMA__ variant, for one lane (every
 * _mm256_fmadd_ps is one fmaf, _mm256_fnmadd_ps(a, b, c) is fmaf(-a, b, c), integer lane
 * arithmetic wraps). The fast return fma(j, k, k) that ggml takes when no lane of the vector
 * is out of range gives the same bits as the per-lane selection below for in-range lanes. */
float drift_ggml_v_expf(float x)
{
    const float r = 0x1.8p23f;
    const float z = fmaf(x, 0x1.715476p+0f, r);
    const float n = z - r;
    const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
    const uint32_t e = f2u(z) << 23;
    const float k = u2f(e + f2u(1.0f));
    const int c = fabsf(n) > 126.0f;
    const float u = b * b;
    const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
        0x1.ffffecp-1f * b);
    if (!c) {
        return fmaf(j, k, k);
    }
    const uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
    const float s1 = u2f(g + 0x7f000000u);
    const float s2 = u2f(e - g);
    if (fabsf(n) > 192.0f) {
        return s1 * s1;
    }
    return fmaf(s2, j, s2) * s1;
}

/* ggml-cpu/vec.h: ggml_v_expf, the __AVX512F__ && __AVX512DQ__ variant, for one lane: the same
 * reduction n = round(x / ln 2) and b, a polynomial whose last term is fma(c1, b, 1), then
 * _mm512_scalef_ps(j, n) = j * 2^n, correctly rounded (ldexpf, n integral); |n| > 192 gives
 * 0 (n <= 0) or inf. */
float drift_ggml_v_expf512(float x)
{
    const float r = 0x1.8p23f;
    const float z = fmaf(x, 0x1.715476p+0f, r);
    const float n = z - r;
    const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
    const float u = b * b;
    const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
        fmaf(0x1.ffffecp-1f, b, 1.0f));
    if (fabsf(n) > 192.0f) {
        return n <= 0.0f ? 0.0f : INFINITY;
    }
    return ldexpf(j, (int)n);
}

/* ggml-cpu/vec.cpp: ggml_vec_swiglu_f32 as ggml_compute_forward_swiglu_f32 calls it, the gate
 * (ffn_gate output) as x and ffn_up as g: every full group of `width` lanes (8 on the AVX2 +
 * FMA branch, 16 on the AVX512F && AVX512DQ one) is silu(x) = x / (1 + v_expf(0 - x)) (ggml_v_silu)
 * times g, the tail the scalar x / (1 + expf(-x)) times g. */
static void swiglu_groups(float *y, const float *x, const float *g, size_t n, size_t width, float (*vexp)(float))
{
    size_t i = 0;
    for (; i + width <= n; i += width) {
        for (size_t l = 0; l < width; l++) {
            y[i + l] = (x[i + l] / (1.0f + vexp(0.0f - x[i + l]))) * g[i + l];
        }
    }
    for (; i < n; i++) {
        y[i] = (x[i] / (1.0f + expf(-x[i]))) * g[i];
    }
}

void drift_ggml_swiglu(float *y, const float *x, const float *g, size_t n)
{
    swiglu_groups(y, x, g, n, 8, drift_ggml_v_expf);
}

void drift_ggml_swiglu512(float *y, const float *x, const float *g, size_t n)
{
    swiglu_groups(y, x, g, n, 16, drift_ggml_v_expf512);
}
