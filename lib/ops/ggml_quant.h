/* ggml_quant.h — the tensor types of ggml (GGUF files), block for block as ggml defines them.
 *
 * A row of n values of a block type is n / block_elems(t) consecutive blocks of
 * block_bytes(t) bytes, little-endian, laid out exactly as ggml's block_q4_0, block_q4_1, ...
 * (ggml-common.h). Dequantization gives, for every element, the value ggml's reference
 * (scalar) dequantize_row_* computes; each formula is written next to its type in
 * ggml_quant.c. The enum values are ggml's own type ids (they are what a GGUF file stores).
 *
 * Only the storage types a checkpoint holds are here; how a kernel then sees them (fp32,
 * bf16, or kept quantized with quantized activations, as llama.cpp's CPU backend does) is a
 * recipe's business. */
#ifndef DRIFT_GGML_QUANT_H
#define DRIFT_GGML_QUANT_H

#include <stddef.h>
#include <stdint.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DRIFT_GGML_F32 = 0,
    DRIFT_GGML_F16 = 1,
    DRIFT_GGML_Q4_0 = 2,
    DRIFT_GGML_Q4_1 = 3,
    DRIFT_GGML_Q5_0 = 6,
    DRIFT_GGML_Q5_1 = 7,
    DRIFT_GGML_Q8_0 = 8,
    DRIFT_GGML_Q8_1 = 9,
    DRIFT_GGML_Q2_K = 10,
    DRIFT_GGML_Q3_K = 11,
    DRIFT_GGML_Q4_K = 12,
    DRIFT_GGML_Q5_K = 13,
    DRIFT_GGML_Q6_K = 14,
    DRIFT_GGML_Q8_K = 15,
    DRIFT_GGML_BF16 = 30
} drift_ggml_type_t;

/* 1 when t is one of the types above. */
int drift_ggml_type_known(uint32_t t);
/* "f32" "f16" "q4_0" ... "bf16" (ggml's names), "?" for an unknown id. */
const char *drift_ggml_type_name(uint32_t t);
/* Elements per block (1 for f32/f16/bf16, 32 for q4_0..q8_1, 256 for the k-quants), and bytes
 * per block; 0 for an unknown type. */
size_t drift_ggml_block_elems(uint32_t t);
size_t drift_ggml_block_bytes(uint32_t t);
/* Bytes of a row of n elements into *bytes: 0, or DRIFT_EINVAL (unknown type, n not a
 * multiple of the block) / DRIFT_ERANGE (overflow). */
DRIFT_MUST_CHECK int drift_ggml_row_bytes(size_t *bytes, uint32_t t, uint64_t n);

/* y[0 .. n) = the values of the n elements at x (n a multiple of the block): 0, or
 * DRIFT_EINVAL. Every value is bit for bit ggml's scalar dequantize_row_*, which is the
 * type's formula rounded once to fp32: exact for the types without a min (the products of
 * an fp16 scale and small quants fit in 24 bits), rounded once by the final add for those
 * with one (q4_1, q5_1, q2_K, q4_K, q5_K: d*q + m can need more than 24 bits) and by the
 * multiply for q8_K (an fp32 d times an int8); see ggml_quant.c. */
DRIFT_MUST_CHECK int drift_ggml_dequantize(float *y, const void *x, uint32_t t, size_t n);

/* y = the n floats at x quantized to t in {Q8_0, Q8_1, Q8_K} by ggml's reference scalar
 * quantizers (quantize_row_q8_0_ref, quantize_row_q8_1_ref, quantize_row_q8_K_ref): the
 * definition of the blocks llama.cpp's CPU backend makes of the activations of a quantized
 * matmul (its SIMD quantize_row_* are separate code). 0;
 * DRIFT_EINVAL for another t, n not a multiple of the block, or a non-finite x;
 * DRIFT_ERANGE for a nonzero block so small (max |x| below about 127 * 2^-128) that ggml's
 * reciprocal scale overflows (its reference is undefined C there). Nothing is written on
 * error. */
DRIFT_MUST_CHECK int drift_ggml_quantize(void *y, const float *x, uint32_t t, size_t n);

/* IEEE binary16 and bfloat16 bit patterns to float: exact (a NaN stays a NaN, its payload
 * in the top fraction bits). */
float drift_fp16_bits_to_float(uint16_t h);
float drift_bf16_bits_to_float(uint16_t b);

#ifdef __cplusplus
}
#endif

#endif
