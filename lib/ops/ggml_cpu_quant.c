/* ggml_cpu_quant.c — fp16 conversions and the activation quantizers of ggml-cpu (AVX2 build).
 * See ggml_cpu.h for the contract. */
#include "ggml_cpu.h"

#include <math.h>
#include <string.h>

static uint32_t f2u(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* F16C vcvtps2ph, rounding imm 0 (nearest even), as GGML_CPU_FP32_TO_FP16 and
 * ggml_cpu_fp32_to_fp16 (ggml-cpu.c) use it on this build. Integer rounding of the
 * significand, so no double rounding. */
uint16_t drift_ggml_fp32_to_fp16(float x)
{
    const uint32_t u = f2u(x);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) { /* inf or NaN: NaN keeps its top payload bits and is made quiet */
        return a == 0x7f800000u ? (uint16_t)(sign | 0x7c00u) : (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    }
    const int e = (int)(a >> 23) - 127; /* unbiased exponent */
    if (e >= 16) {
        return (uint16_t)(sign | 0x7c00u);
    }
    if (e < -25 || e == -127) {
        return sign; /* below half the smallest fp16 subnormal (fp32 subnormals included) */
    }
    const uint32_t mant = (a & 0x7fffffu) | 0x800000u; /* 24-bit significand, value mant*2^(e-23) */
    /* bits dropped: 13 for a normal fp16; for a subnormal one (unit 2^-24), -(e+1) */
    const int shift = e >= -14 ? 13 : -e - 1;
    const uint32_t q = mant >> shift, r = mant & ((1u << shift) - 1), h = 1u << (shift - 1);
    /* normal: exponent field plus the 10 stored bits; a rounding carry into the exponent (or
     * from the largest subnormal into the smallest normal, or to inf) is the correct result */
    uint32_t v = e >= -14 ? ((uint32_t)(e + 15) << 10) + (q - 0x400u) : q;
    if (r > h || (r == h && (q & 1u))) {
        v += 1;
    }
    return (uint16_t)(sign | v);
}

float drift_ggml_fp16_to_fp32(uint16_t h) { return drift_ggml_h2f(h); }

void drift_ggml_fp32_to_fp16_row(uint16_t *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        y[i] = drift_ggml_fp32_to_fp16(x[i]);
    }
}

/* amax of a block as the AVX2 max tree finds it (max of absolute values is exact, so the
 * tree's order does not matter for finite inputs), then d = amax/127 and id = 127/amax. */
static void block_scale(const float *x, float *d, float *id)
{
    float amax = 0.0f;
    for (int j = 0; j < DRIFT_GGML_QK; j++) {
        const float a = fabsf(x[j]);
        amax = a > amax ? a : amax;
    }
    *d = amax / 127.f;
    *id = amax != 0.0f ? 127.f / amax : 0.0f;
}

/* _mm256_round_ps(v*id, _MM_ROUND_NEAREST) is round-half-to-even (not the scalar
 * reference's roundf, half away from zero); vcvtps2dq of an integral value is exact; the two
 * packs saturate to int8. */
static int8_t quant_one(float v, float id)
{
    const float r = nearbyintf(v * id); /* default rounding mode: nearest even */
    const float c = r > 127.f ? 127.f : (r < -128.f ? -128.f : r);
    return (int8_t)c;
}

/* ggml-cpu/arch/x86/quants.c: quantize_row_q8_0 (AVX2 branch). */
void drift_ggml_quantize_row_q8_0(drift_ggml_q8_0_t *y, const float *x, size_t k)
{
    for (size_t i = 0; i < k / DRIFT_GGML_QK; i++, x += DRIFT_GGML_QK) {
        float d, id;
        block_scale(x, &d, &id);
        y[i].d = drift_ggml_fp32_to_fp16(d);
        for (int j = 0; j < DRIFT_GGML_QK; j++) {
            y[i].qs[j] = quant_one(x[j], id);
        }
    }
}

/* ggml-cpu/arch/x86/quants.c: quantize_row_q8_1 (AVX2 branch): as q8_0, plus
 * s = fp16(d * (float)sum(q)) with the integer sum (hsum_i32_8) exact. */
void drift_ggml_quantize_row_q8_1(drift_ggml_q8_1_t *y, const float *x, size_t k)
{
    for (size_t i = 0; i < k / DRIFT_GGML_QK; i++, x += DRIFT_GGML_QK) {
        float d, id;
        block_scale(x, &d, &id);
        y[i].d = drift_ggml_fp32_to_fp16(d);
        int sum = 0;
        for (int j = 0; j < DRIFT_GGML_QK; j++) {
            /* the sum is taken over the int32 values before the packs saturate; they are in
             * [-128, 127] already for finite inputs (|x*id| <= 127 up to one rounding) */
            y[i].qs[j] = quant_one(x[j], id);
            sum += y[i].qs[j];
        }
        y[i].s = drift_ggml_fp32_to_fp16(d * (float)sum);
    }
}
