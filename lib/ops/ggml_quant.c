/* ggml_quant.c — dequantization of ggml's tensor types, value for value what ggml's scalar
 * dequantize_row_* (ggml-quants.c) computes, with the block layouts of ggml-common.h.
 *
 * Fields are read byte by byte, little-endian (GGUF's order; ggml's memcpy of a uint32 or a
 * ggml_half reads the same bytes on the little-endian hosts it runs on), so no block needs
 * alignment.
 *
 * Why fp32 is enough, and where a rounding happens. A finite fp16 scale (d, m, dmin) is an
 * integer multiple of 2^-24 below 2^16 with at most 11 significant bits. A product of such
 * a scale and integers of b1, b2, ... significant bits has at most 11 + b1 + b2 + ... bits;
 * while that is <= 24 the fp32 product is exact (no underflow either: a nonzero product is
 * at least 2^-24, and none comes near 2^128). Counting bits of the largest magnitudes:
 * 16 = 1 bit, 15 = 4 bits, 32 = 1 bit, 31 = 5 bits, 127 = 7 bits, 128 = 1 bit.
 *   - the types without a min (q4_0, q5_0, q8_0, q8_1, q3_K, q6_K) are products only, and
 *     every product fits: each value is exact;
 *   - the types with a min (q4_1, q5_1, q2_K, q4_K, q5_K) add d*q (exact) to an fp16 m (or
 *     subtract dmin*m, exact). The exact sum is a multiple of 2^-24 below 2^28 (q5_K:
 *     65504 * 63 * 31 + 65504 * 63), which can need ~50 bits (q4_1 with d = 1024, q = 15,
 *     m = 2^-24: 15360 + 2^-24 already needs 38), so the one add
 *     rounds. ggml's scalar code is a float multiply, then a float add: the add rounds the
 *     exact d*q + m once, so the result is the correctly rounded value of the formula. We do
 *     the same two operations (the build has -ffp-contract=off). A build of ggml that
 *     contracts x*d + m into fmaf(x, d, m) rounds the same exact sum once, so it gives the
 *     same bits whenever the product is exact, which is always here;
 *   - q8_K's d is an fp32 (24 bits): d*q can need 31 bits and is rounded once, with fp32's
 *     subnormals and overflow, as ggml's float multiply does.
 * So every type's value is its formula rounded once to fp32 (exactly, for most). A
 * non-finite scale gives what IEEE arithmetic gives in ggml's order of operations
 * (inf * 0 = NaN, ...), since the operations are the same. */
#include <string.h>

#include "drift.h"
#include "ggml_quant.h"

/* ---- fields -------------------------------------------------------------------------- */

static inline uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | (uint16_t)p[1] << 8); }

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline float float_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* binary16 s.eeeee.mmmmmmmmmm: e = 0 is m * 2^-24 (subnormal or zero: the int-to-float
 * conversion of m < 2^10 and the scaling by a power of two are exact); e = 31 is inf/NaN,
 * kept with its payload in fp32's top fraction bits (a NaN stays a NaN: m != 0); otherwise
 * the exponent is rebiased (15 -> 127) and the fraction moved up 13 places. */
static inline float fp16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) {
        float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    if (e == 31) return float_of_bits(sign | 0x7f800000u | m << 13);
    return float_of_bits(sign | (e + 112) << 23 | m << 13);
}

float drift_fp16_bits_to_float(uint16_t h) { return fp16_to_float(h); }

/* bfloat16 is the top half of a binary32. */
float drift_bf16_bits_to_float(uint16_t b) { return float_of_bits((uint32_t)b << 16); }

/* ---- the 32-element types ---------------------------------------------------------- */

/* q4_0, 18 bytes {fp16 d; u8 qs[16]}: element j (j < 16) is the low nibble of qs[j],
 * element j + 16 its high nibble; y = d * (q - 8), q - 8 in [-8, 7]: exact. */
static void deq_q4_0(float *y, const uint8_t *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++, b += 18, y += 32) {
        float d = fp16_to_float(le16(b));
        const uint8_t *qs = b + 2;
        for (int j = 0; j < 16; j++) {
            y[j] = (float)((qs[j] & 0xf) - 8) * d;
            y[j + 16] = (float)((qs[j] >> 4) - 8) * d;
        }
    }
}

/* q4_1, 20 bytes {fp16 d; fp16 m; u8 qs[16]}: nibbles as q4_0; y = d * q + m, q in
 * [0, 15]: d*q exact, the add rounded once (float multiply, then float add). */
static void deq_q4_1(float *y, const uint8_t *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++, b += 20, y += 32) {
        float d = fp16_to_float(le16(b)), m = fp16_to_float(le16(b + 2));
        const uint8_t *qs = b + 4;
        for (int j = 0; j < 16; j++) {
            float p0 = (float)(qs[j] & 0xf) * d, p1 = (float)(qs[j] >> 4) * d;
            y[j] = p0 + m;
            y[j + 16] = p1 + m;
        }
    }
}

/* The fifth bit of element j of a q5 block: bit j of the little-endian u32 qh. */
static inline int q5_high(uint32_t qh, int j) { return (int)((qh >> j) & 1u) << 4; }

/* q5_0, 22 bytes {fp16 d; u8 qh[4]; u8 qs[16]}: q = nibble (as q4_0) | bit j of qh << 4,
 * element j in [0, 32); y = d * (q - 16), q - 16 in [-16, 15]: exact. */
static void deq_q5_0(float *y, const uint8_t *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++, b += 22, y += 32) {
        float d = fp16_to_float(le16(b));
        uint32_t qh = le32(b + 2);
        const uint8_t *qs = b + 6;
        for (int j = 0; j < 16; j++) {
            y[j] = (float)(((qs[j] & 0xf) | q5_high(qh, j)) - 16) * d;
            y[j + 16] = (float)(((qs[j] >> 4) | q5_high(qh, j + 16)) - 16) * d;
        }
    }
}

/* q5_1, 24 bytes {fp16 d; fp16 m; u8 qh[4]; u8 qs[16]}: q as q5_0 (no offset), y = d*q + m,
 * q in [0, 31]: d*q exact, the add rounded once. */
static void deq_q5_1(float *y, const uint8_t *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++, b += 24, y += 32) {
        float d = fp16_to_float(le16(b)), m = fp16_to_float(le16(b + 2));
        uint32_t qh = le32(b + 4);
        const uint8_t *qs = b + 8;
        for (int j = 0; j < 16; j++) {
            float p0 = (float)((qs[j] & 0xf) | q5_high(qh, j)) * d;
            float p1 = (float)((qs[j] >> 4) | q5_high(qh, j + 16)) * d;
            y[j] = p0 + m;
            y[j + 16] = p1 + m;
        }
    }
}

/* q8_0, 34 bytes {fp16 d; i8 qs[32]}, and q8_1, 36 bytes {fp16 d; fp16 s; i8 qs[32]}:
 * y = d * q, q in [-128, 127]: exact. ggml has no dequantize_row_q8_1 (q8_1 only ever holds
 * quantized activations, its s = d * sum(q) serves the dot products); its values are the
 * same d * q, and s is not one of them. */
static void deq_q8(float *y, const uint8_t *b, size_t nb, size_t bytes, size_t qoff)
{
    for (size_t i = 0; i < nb; i++, b += bytes, y += 32) {
        float d = fp16_to_float(le16(b));
        const int8_t *qs = (const int8_t *)(b + qoff);
        for (int j = 0; j < 32; j++) y[j] = (float)qs[j] * d;
    }
}

/* ---- the k-quants (256-element super-blocks) --------------------------------------- */

/* q2_K, 84 bytes {u8 scales[16]; u8 qs[64]; fp16 d; fp16 dmin}: 16 sub-blocks of 16;
 * sub-block s has scale sc = scales[s] & 15 and min mn = scales[s] >> 4. Element
 * e = 128h + 32j + l (h < 2, j < 4, l < 32) is the 2-bit q = (qs[32h + l] >> 2j) & 3 of
 * sub-block s = 8h + 2j + (l >= 16). y = (d*sc)*q - dmin*mn: d*sc, dmin*mn (15 bits) and
 * (d*sc)*q (17 bits) exact, the subtraction rounded once. */
static void deq_q2_K(float *y, const uint8_t *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++, b += 84) {
        const uint8_t *sc = b, *q = b + 16;
        float d = fp16_to_float(le16(b + 80)), dmin = fp16_to_float(le16(b + 82));
        int s = 0;
        for (int h = 0; h < 2; h++, q += 32)
            for (int j = 0; j < 4; j++)
                for (int half = 0; half < 2; half++, s++) {
                    float dl = d * (float)(sc[s] & 0xf), ml = dmin * (float)(sc[s] >> 4);
                    const uint8_t *qq = q + 16 * half;
                    for (int l = 0; l < 16; l++) {
                        float p = dl * (float)((qq[l] >> (2 * j)) & 3);
                        *y++ = p - ml;
                    }
                }
    }
}

/* q3_K's 16 scales, 6 bits each, packed in 12 bytes: scale k has low four bits
 * scales[k] & 15 (k < 8) or scales[k - 8] >> 4 (k >= 8), and high two bits
 * (scales[8 + k % 4] >> 2*(k / 4)) & 3; its value is that 6-bit number minus 32. */
static void q3_K_scales(int out[16], const uint8_t *s)
{
    for (int k = 0; k < 16; k++) {
        int lo = k < 8 ? s[k] & 0xf : s[k - 8] >> 4;
        int hi = (s[8 + k % 4] >> (2 * (k / 4))) & 3;
        out[k] = (lo | hi << 4) - 32;
    }
}

/* q3_K, 110 bytes {u8 hmask[32]; u8 qs[64]; u8 scales[12]; fp16 d}: element
 * e = 128h + 32j + l has the low two bits (qs[32h + l] >> 2j) & 3 and the high bit
 * hmask[l] bit (4h + j); q = low - (high bit set ? 0 : 4), in [-4, 3]; sub-block
 * s = 8h + 2j + (l >= 16). y = (d * scale_s) * q: 5 + 2 bits on d, exact. */
static void deq_q3_K(float *y, const uint8_t *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++, b += 110) {
        const uint8_t *hm = b, *q = b + 32;
        int sc[16];
        q3_K_scales(sc, b + 96);
        float d = fp16_to_float(le16(b + 108));
        int s = 0;
        for (int h = 0; h < 2; h++, q += 32)
            for (int j = 0; j < 4; j++) {
                uint8_t bit = (uint8_t)(1u << (4 * h + j));
                for (int half = 0; half < 2; half++, s++) {
                    float dl = d * (float)sc[s];
                    for (int l = 16 * half; l < 16 * half + 16; l++) {
                        int v = ((q[l] >> (2 * j)) & 3) - ((hm[l] & bit) ? 0 : 4);
                        *y++ = dl * (float)v;
                    }
                }
            }
    }
}

/* The scale and min of sub-block j of q4_K/q5_K, 6 bits each in 12 bytes (ggml's
 * get_scale_min_k4): j < 4: scale = s[j] & 63, min = s[j + 4] & 63; j >= 4: the low four
 * bits come from s[j + 4] (scale: low nibble, min: high nibble) and the high two from the
 * top bits of s[j - 4] (scale) and s[j] (min). */
static void k4_scale_min(int *sc, int *mn, int j, const uint8_t *s)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *mn = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xf) | (s[j - 4] >> 6) << 4;
        *mn = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
    }
}

/* q4_K, 144 bytes {fp16 d; fp16 dmin; u8 scales[12]; u8 qs[128]}: 8 sub-blocks of 32;
 * element e = 64g + 32t + l (g < 4, t < 2, l < 32) is nibble t (low first) of qs[32g + l],
 * in sub-block 2g + t. y = (d*sc)*q - dmin*mn: d*sc, dmin*mn (17 bits), (d*sc)*q (21 bits)
 * exact, the subtraction rounded once. */
static void deq_q4_K(float *y, const uint8_t *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++, b += 144) {
        float d = fp16_to_float(le16(b)), dmin = fp16_to_float(le16(b + 2));
        const uint8_t *s = b + 4, *q = b + 16;
        for (int g = 0; g < 4; g++, q += 32)
            for (int t = 0; t < 2; t++) {
                int sc, mn;
                k4_scale_min(&sc, &mn, 2 * g + t, s);
                float dl = d * (float)sc, ml = dmin * (float)mn;
                for (int l = 0; l < 32; l++) {
                    float p = dl * (float)((q[l] >> (4 * t)) & 0xf);
                    *y++ = p - ml;
                }
            }
    }
}

/* q5_K, 176 bytes {fp16 d; fp16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: as q4_K, and
 * element e = 64g + 32t + l gets 16 from bit (2g + t) of qh[l]; q in [0, 31]. y as q4_K
 * ((d*sc)*q has 22 bits: exact; the subtraction rounded once). */
static void deq_q5_K(float *y, const uint8_t *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++, b += 176) {
        float d = fp16_to_float(le16(b)), dmin = fp16_to_float(le16(b + 2));
        const uint8_t *s = b + 4, *qh = b + 16, *q = b + 48;
        for (int g = 0; g < 4; g++, q += 32)
            for (int t = 0; t < 2; t++) {
                int sc, mn, bit = 2 * g + t;
                k4_scale_min(&sc, &mn, bit, s);
                float dl = d * (float)sc, ml = dmin * (float)mn;
                for (int l = 0; l < 32; l++) {
                    int v = ((q[l] >> (4 * t)) & 0xf) | ((qh[l] >> bit) & 1) << 4;
                    float p = dl * (float)v;
                    *y++ = p - ml;
                }
            }
    }
}

/* q6_K, 210 bytes {u8 ql[128]; u8 qh[64]; i8 scales[16]; fp16 d}: element
 * e = 128h + 32g + l (h < 2, g < 4, l < 32) has the low four bits = nibble (g >= 2) of
 * ql[64h + 32(g & 1) + l] and the high two = (qh[32h + l] >> 2g) & 3; q = that 6-bit
 * number - 32, in [-32, 31]; scale = scales[8h + 2g + l / 16]. ggml writes d * sc * q, i.e.
 * (d*sc)*q: 11 + 7 + 5 = 23 bits at most, exact. */
static void deq_q6_K(float *y, const uint8_t *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++, b += 210) {
        float d = fp16_to_float(le16(b + 208));
        const uint8_t *ql = b, *qh = b + 128;
        const int8_t *sc = (const int8_t *)(b + 192);
        for (int h = 0; h < 2; h++, ql += 64, qh += 32, sc += 8, y += 128)
            for (int g = 0; g < 4; g++)
                for (int half = 0; half < 2; half++) {
                    float dl = d * (float)sc[2 * g + half];
                    for (int l = 16 * half; l < 16 * half + 16; l++) {
                        int lo = (ql[32 * (g & 1) + l] >> (4 * (g >> 1))) & 0xf;
                        int v = (lo | ((qh[l] >> (2 * g)) & 3) << 4) - 32;
                        y[32 * g + l] = dl * (float)v;
                    }
                }
    }
}

/* q8_K, 292 bytes {f32 d; i8 qs[256]; i16 bsums[16]}: y = d * q, rounded once (d has 24
 * bits); bsums (sums of 16 quants, for the dot products) are not values. */
static void deq_q8_K(float *y, const uint8_t *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++, b += 292, y += 256) {
        float d = float_of_bits(le32(b));
        const int8_t *qs = (const int8_t *)(b + 4);
        for (int j = 0; j < 256; j++) y[j] = d * (float)qs[j];
    }
}

int drift_ggml_dequantize(float *y, const void *x, uint32_t t, size_t n)
{
    size_t be = drift_ggml_block_elems(t);
    if (be == 0 || n % be) return DRIFT_EINVAL;
    if (n == 0) return DRIFT_OK;
    if (!y || !x) return DRIFT_EINVAL;
    const uint8_t *b = x;
    size_t nb = n / be;
    switch ((drift_ggml_type_t)t) {
    case DRIFT_GGML_F32: memcpy(y, b, n * sizeof *y); break; /* bit for bit, NaN payloads too */
    case DRIFT_GGML_F16:
        for (size_t i = 0; i < n; i++) y[i] = fp16_to_float(le16(b + 2 * i));
        break;
    case DRIFT_GGML_BF16:
        for (size_t i = 0; i < n; i++) y[i] = drift_bf16_bits_to_float(le16(b + 2 * i));
        break;
    case DRIFT_GGML_Q4_0: deq_q4_0(y, b, nb); break;
    case DRIFT_GGML_Q4_1: deq_q4_1(y, b, nb); break;
    case DRIFT_GGML_Q5_0: deq_q5_0(y, b, nb); break;
    case DRIFT_GGML_Q5_1: deq_q5_1(y, b, nb); break;
    case DRIFT_GGML_Q8_0: deq_q8(y, b, nb, 34, 2); break;
    case DRIFT_GGML_Q8_1: deq_q8(y, b, nb, 36, 4); break;
    case DRIFT_GGML_Q2_K: deq_q2_K(y, b, nb); break;
    case DRIFT_GGML_Q3_K: deq_q3_K(y, b, nb); break;
    case DRIFT_GGML_Q4_K: deq_q4_K(y, b, nb); break;
    case DRIFT_GGML_Q5_K: deq_q5_K(y, b, nb); break;
    case DRIFT_GGML_Q6_K: deq_q6_K(y, b, nb); break;
    case DRIFT_GGML_Q8_K: deq_q8_K(y, b, nb); break;
    default: return DRIFT_EINVAL;
    }
    return DRIFT_OK;
}
