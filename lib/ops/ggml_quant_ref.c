/* ggml_quant_ref.c — ggml's reference (scalar) quantizers of activations: what llama.cpp's
 * CPU backend defines for the other operand of a quantized matmul (quantize_row_q8_0_ref,
 * quantize_row_q8_1_ref, quantize_row_q8_K_ref in ggml-quants.c), operation for operation
 * in fp32, with no contraction (the build has -ffp-contract=off).
 *
 * fp32 -> fp16: the _ref functions use GGML_FP32_TO_FP16 of ggml-impl.h, the bit-twiddling
 * conversion of Maratyszcza's FP16 library (no F16C there), which rounds to nearest even with
 * subnormals and overflow to infinity; the CPU backend's own quantizers use
 * GGML_CPU_FP32_TO_FP16 (ggml-cpu/simd-mappings.h), on x86 _mm_cvtps_ph(x, 0) or
 * _cvtss_sh(x, 0): rounding control 0 is also nearest even. Here it is drift_encode(x,
 * DRIFT_FP16), the lab's correctly rounded RNE encoding.
 *
 * Where ggml's reference is not defined C, drift_ggml_quantize refuses the input instead of
 * guessing what one compiler makes of it:
 *   - a non-finite x (a NaN or an infinity reaches the int8 conversion of roundf(NaN) or
 *     inf * 0): DRIFT_EINVAL;
 *   - a block whose largest |x| is so small (below about 127 * 2^-128) that the reciprocal
 *     scale 1/d (q8_0, q8_1) or -127/max (q8_K) overflows to infinity: every x * id is then
 *     an infinity or a NaN, converted to int8 (undefined) or fed to nearest_int (its assert
 *     fails): DRIFT_ERANGE.
 * The input is checked whole before anything is written. */
#include <math.h>
#include <string.h>

#include "drift.h"
#include "format.h"
#include "ggml_quant.h"

static inline void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void put32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> (8 * k));
}

static inline uint16_t fp16_bits(float x) { return (uint16_t)drift_encode((double)x, DRIFT_FP16); }

/* max |x| over a block, as ggml's amax = MAX(amax, fabsf(v)) (equal to fmaxf for finite x). */
static float block_amax(const float *x, size_t n)
{
    float amax = 0.0f;
    for (size_t j = 0; j < n; j++) {
        float a = fabsf(x[j]);
        if (a > amax) amax = a;
    }
    return amax;
}

/* q8_K's max: the first x of largest |x| (ggml's strict ax > amax keeps the first), with
 * its sign; 0 for an all-zero block. */
static float block_signed_max(const float *x, size_t n)
{
    float amax = 0.0f, max = 0.0f;
    for (size_t j = 0; j < n; j++) {
        float a = fabsf(x[j]);
        if (a > amax) {
            amax = a;
            max = x[j];
        }
    }
    return max;
}

/* q8_0 and q8_1 share d = amax / 127 (a float division, rounded) and id = 1/d (rounded),
 * 0 for a zero block. */
static float q8_scale(float amax, float *id)
{
    float d = amax / 127.0f;
    *id = d != 0.0f ? 1.0f / d : 0.0f;
    return d;
}

/* q8_0 block {fp16 d; i8 qs[32]}: d = amax/127, stored RNE in fp16; q = roundf(x * id)
 * (ties away from zero), with id = 1/d of the fp32 d, not of the stored fp16 one. |x * id|
 * stays below 127.5: d and id are rounded (relative error 2^-24, or at most 2^-22 for the
 * subnormal d >= 2^-128 that still has a finite 1/d), so |x| * id <= 127 (1 + 2^-21). */
static void quant_q8_0(uint8_t *y, const float *x, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 32, y += 34) {
        float id, d = q8_scale(block_amax(x, 32), &id);
        put16(y, fp16_bits(d));
        for (int j = 0; j < 32; j++) y[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
    }
}

/* q8_1 block {fp16 d; fp16 s; i8 qs[32]}: d and q as q8_0; s = fp16(fp32(sum(q) * d)) with
 * the fp32 d (ggml: GGML_FP32_TO_FP16(sum*d), an int times a float): rounded twice, once to
 * fp32 by the multiply (sum has up to 12 bits, d 24), then to fp16. */
static void quant_q8_1(uint8_t *y, const float *x, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 32, y += 36) {
        float id, d = q8_scale(block_amax(x, 32), &id);
        int sum = 0;
        for (int j = 0; j < 32; j++) {
            int8_t q = (int8_t)roundf(x[j] * id);
            y[4 + j] = (uint8_t)q;
            sum += q;
        }
        float s = (float)sum * d;
        put16(y, fp16_bits(d));
        put16(y + 2, fp16_bits(s));
    }
}

/* ggml's nearest_int: round to nearest even by adding 1.5 * 2^23 (|v| < 2^22, so the sum
 * lies in (2^23, 2^24) where the fp32 spacing is 1, and the subtraction is exact). */
static inline int nearest_even(float v)
{
    float t = v + 12582912.0f;
    return (int)(t - 12582912.0f);
}

/* q8_K block {f32 d; i8 qs[256]; i16 bsums[16]}: max = the first x of largest |x|,
 * iscale = -127/max (rounded), q = min(127, nearest_even(iscale * x)) (so the max itself
 * maps to -127), bsums[k] = sum of q[16k .. 16k+16), d = 1/iscale (rounded, a float: not
 * -max/127 exactly). A zero block has d = 0 and q = 0; ggml leaves its bsums unwritten,
 * here they are 0 (the sums of its zero quants). */
static void quant_q8_K(uint8_t *y, const float *x, size_t nb)
{
    for (size_t i = 0; i < nb; i++, x += 256, y += 292) {
        float max = block_signed_max(x, 256);
        memset(y, 0, 292);
        if (max == 0.0f) continue;
        float iscale = -127.0f / max;
        int8_t *qs = (int8_t *)(y + 4);
        for (int j = 0; j < 256; j++) {
            int v = nearest_even(iscale * x[j]);
            qs[j] = (int8_t)(v < 127 ? v : 127);
        }
        for (int k = 0; k < 16; k++) {
            int sum = 0;
            for (int l = 0; l < 16; l++) sum += qs[16 * k + l];
            put16(y + 260 + 2 * k, (uint16_t)(int16_t)sum);
        }
        float d = 1.0f / iscale;
        uint32_t u;
        memcpy(&u, &d, sizeof u);
        put32(y, u);
    }
}

/* The checks of the file comment, on the whole input. */
static int check_input(const float *x, size_t n, size_t be, uint32_t t)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return DRIFT_EINVAL;
    for (size_t b = 0; b < n; b += be) {
        if (t == DRIFT_GGML_Q8_K) {
            float max = block_signed_max(x + b, be);
            if (max != 0.0f && isinf(-127.0f / max)) return DRIFT_ERANGE;
        } else {
            float id, d = q8_scale(block_amax(x + b, be), &id);
            if (d != 0.0f && isinf(id)) return DRIFT_ERANGE;
        }
    }
    return DRIFT_OK;
}

int drift_ggml_quantize(void *y, const float *x, uint32_t t, size_t n)
{
    if (t != DRIFT_GGML_Q8_0 && t != DRIFT_GGML_Q8_1 && t != DRIFT_GGML_Q8_K) return DRIFT_EINVAL;
    size_t be = drift_ggml_block_elems(t);
    if (n % be) return DRIFT_EINVAL;
    if (n == 0) return DRIFT_OK;
    if (!y || !x) return DRIFT_EINVAL;
    int rc = check_input(x, n, be, t);
    if (rc) return rc;
    if (t == DRIFT_GGML_Q8_0)
        quant_q8_0(y, x, n / be);
    else if (t == DRIFT_GGML_Q8_1)
        quant_q8_1(y, x, n / be);
    else
        quant_q8_K(y, x, n / be);
    return DRIFT_OK;
}
