/* tc_model.h — bit-accurate model of the block FMA of NVIDIA tensor cores and AMD matrix cores (Fasi, Higham, Mikaitis &
 * Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ CS 7:e330, 2021; Khattak &
 * Mikaitis, "Accurate models of NVIDIA tensor cores", 2025, whose MATLAB models are
 * github.com/north-numerical-computing/MATLAB-tensor-core, models/tools/Generic_BFMA_TC.m).
 *
 * The model, for one block of `block` products a[k]*b[k] plus the running accumulator c
 * (a value of the output format):
 *   1. Products are exact. Zero products are dropped (they take no part in the alignment).
 *   2. Every input x has the exponent ex(x) = max(floor(log2|x|), emin_in): a subnormal input
 *      keeps the format's minimum exponent and a significand below 1. A product's exponent
 *      is ex(a) + ex(b), the exponent of its *unnormalised* significand in [0, 4) (the
 *      hardware does not normalise a product whose significand is in [2, 4)).
 *      c's exponent is max(floor(log2|c|), -126), and c takes part only when c != 0.
 *   3. E = the largest of those exponents (and never below the architecture's min_exp).
 *      Every term is truncated toward zero (sign-magnitude, no guard, round or sticky bit)
 *      to a multiple of 2^(E - 23 - neab): 23 fraction bits plus neab extra alignment bits.
 *   4. The truncated terms are summed exactly (carry-out bits, no intermediate
 *      normalisation), normalised once, and rounded to the output format (toward zero for
 *      fp32 output, to nearest-even for fp16 output, but see the table), with subnormal
 *      results. A zero sum is
 *      +0. A result at or above 2^(emax+1) is +-inf (the model's all-ones exponent field),
 *      even under round-toward-zero.
 * Blocks along K are combined in order: the result of block t is the c of block t+1; the
 * last block may be short (the model pads with zeros, which are dropped).
 * That is the NVIDIA model; AMD's differ in steps 3 and 4 (below).
 *
 * Special values (checked over the whole dot product first, as the published GEMM model
 * does): any NaN, or inf * 0, or infinities of both signs give NaN; otherwise any infinity
 * gives that infinity. A finite overflow inside a block gives inf, which then propagates.
 *
 * The parameters of every architecture are one table, TC_TABLE in tc_model.c, from the
 * published models at their latest revision (north-numerical-computing/MATLAB-tensor-core
 * commit b12b5a7, 2026-08-19), except where measured outputs decide otherwise (B200 fp8,
 * below); drift_tc_model() reads a row. In short (block, neab, alignment-exponent clamp for
 * fp32 output / for fp16 -> fp16; final rounding for fp32 output, RNE for fp16 output):
 *   V100 (Volta)        fp16 4, 0, none / -19
 *   A100, A2, A30       fp16, bf16 8, 1; tf32 4, 1; -132 / -20
 *   Ada, L40S           fp16, bf16 8, 1; tf32 4, 1; fp8 16, -10; -132 / -20
 *   H100, H200          fp16, bf16 16, 2; tf32 8, 2; fp8 32, -10; -133 / -21
 *   B200, RTX PRO 6000  fp16, bf16 16, 2; tf32 8, 2; -133 / -21; fp8: see below
 * all with truncation at the end for fp32 output. When neab < 0 (fp8 on Ada and Hopper)
 * the accumulator itself is narrower: step 3 keeps 23 + neab fraction bits and the fp32
 * result keeps 24 + neab significant bits (the "about 14 bits" FP8 accumulation that
 * DeepSeek-V3's report measured on H800).
 *
 * B200 fp8 (E4M3, E5M2) differs from the published B200TC.m (c inside the alignment,
 * truncation at the end), which misses about a third of the measured samples (1793 and
 * 1764 of 5000 for E4M3 and E5M2; B200TCRN.m, RNE at the end, 246 and 283): the 32
 * products alone are aligned (2 extra bits, truncation, clamp -133), summed, normalised and
 * truncated to fp32; that value is then added to c with one round-to-nearest-even (an fp32
 * addition). It reproduces all 10000 measured samples; the published model with RNE at the
 * end (B200TCRN.m) still misses some, whatever the alignment width, because c's low bits
 * must not reach the products' truncation.
 *
 * fp8 (E4M3, E5M2) with fp16 output on Hopper and Blackwell (H100, H200, B200; the measured
 * outputs come from mma.sync.m16n8k32 with an f16 accumulator, which sm_90 has no native
 * instruction for: the compiler converts the fp8 inputs to fp16, exactly, and issues fp16
 * tensor-core instructions, HMMA.16816; B200's bits show the same) is
 * DRIFT_TC_FP8_VIA_HMMA, fitted to the
 * measured outputs (0 of 30000 differ; none of the published models describes it):
 *   x = the Hopper fp16 -> fp16 block FMA (16 products, 2 extra bits, truncation, clamp
 *       -21, RNE to fp16) of the 16 products at positions k = 0, 1 mod 4 of the block of 32,
 *       with a zero accumulator;
 *   y = the same block FMA of the 16 products at k = 2, 3 mod 4, with x as its accumulator;
 *   result = y + c, one fp16 addition rounded to nearest-even.
 * Positions k = 0, 1 mod 4 are the low halves of the fp8 registers of the m16n8k32
 * fragments (4 consecutive k per register), which the fp8 -> f16x2 conversion turns into
 * the first HMMA's operands. The data do not decide neab (0..5 all fit: fp8 products have
 * at most 8 significant bits) nor the clamp: both are the fp16 path's. RTX PRO 6000 (sm_120,
 * native fp8 mma.sync) inherits the row unmeasured, as RTXPRO6000TC.m calls B200TC.m.
 *
 * AMD CDNA matrix cores (fp32 output only; the published MI*MC.m models):
 *   MI100 (CDNA1)  blocks of 4 (fp16) or 2 (bf16) products and c summed exactly, rounded
 *                  once to fp32 to nearest-even (MI100MC.m, "correct_rounding").
 *   MI250 (CDNA2)  blocks of 4 (fp16, bf16): each product rounded to fp32, summed pairwise
 *                  ((p0 + p1) + (p2 + p3)), then c + that; every addition an fp32 RNE
 *                  addition; subnormal inputs, products and sums flushed to (signed) zero
 *                  (MI210MC.m, which MI250MC.m calls). Unlike the others, an infinite
 *                  accumulator takes part in the addition (inf + -inf is NaN there).
 *   MI300X (CDNA3) blocks of 8 (fp16, bf16) or 4 (tf32): the products aligned to their
 *                  largest exponent with 1 extra bit and truncated (no clamp), their sum
 *                  then added to c: the operand with the smaller exponent is shifted
 *                  rounding toward -inf (the products keeping 7 more bits when they are
 *                  the smaller one), and the sum rounded to fp32 to nearest-even
 *                  (MI300MC.m at commit b4bf135, its last revision: d12a5b3 deleted it while
 *                  MI300XMC.m still calls it). Its fp8 path uses AMD's FNUZ encodings,
 *                  which the lab does not have: fp8 on MI300X is DRIFT_EUNSUPPORTED.
 */
#ifndef DRIFT_TC_MODEL_H
#define DRIFT_TC_MODEL_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "order.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int block;   /* products per block FMA */
    int neab;    /* extra alignment bits beyond 23 (negative: fewer, see above) */
    int min_exp; /* the alignment exponent E is never below this (-100000: no limit) */
} drift_tc_params_t;

/* Parameters for arch and input format with fp32 output (drift_tc_model gives those of any
 * output); DRIFT_EUNSUPPORTED when the architecture has no matrix-core path for that input
 * (fp8 on V100/Ampere/CDNA1/CDNA2/MI300X, bf16 and tf32 on V100, tf32 on CDNA1/CDNA2, fp32
 * and fp64 anywhere). */
DRIFT_MUST_CHECK int drift_tc_params(drift_tc_params_t *p, drift_tc_arch_t arch, drift_format_t in);

/* How a block FMA is computed (see the file comment). */
typedef enum {
    DRIFT_TC_ALIGN_TRUNC = 0, /* NVIDIA: products and c aligned together, truncated */
    DRIFT_TC_ALIGN_THEN_ADD,  /* B200 fp8: products aligned and truncated to fp32, + c (RNE) */
    DRIFT_TC_EXACT_BLOCK,     /* CDNA1: exact block sum, one rounding */
    DRIFT_TC_PAIRWISE_FP32,   /* CDNA2: pairwise fp32 additions, subnormals flushed */
    DRIFT_TC_ALIGN_LATE_C,    /* CDNA3: products aligned, c added after (round toward -inf) */
    DRIFT_TC_FP8_VIA_HMMA     /* Hopper/Blackwell fp8 -> fp16: two fp16 block FMAs, then + c */
} drift_tc_algo_t;

/* One row of the architecture table, for arch, input and output format. */
typedef struct {
    const char *family; /* "volta" "ampere" "ada" "hopper" "blackwell" "cdna1" "cdna2" "cdna3" */
    drift_tc_algo_t algo;
    int block;             /* products per block FMA */
    int neab;              /* extra alignment bits (aligning algorithms; 0 otherwise) */
    int min_exp;           /* clamp of the alignment exponent (-100000: none) */
    drift_mode_t rounding; /* of the block result: DRIFT_RZ or DRIFT_RNE */
    int subnormals;        /* 0: subnormal inputs and results are flushed to zero (CDNA2) */
} drift_tc_model_t;

/* The model for arch, in and out; DRIFT_EUNSUPPORTED as drift_tc_params, or for an output
 * other than fp32 and fp16 (AMD: fp32 only), DRIFT_EINVAL for an unknown arch. */
DRIFT_MUST_CHECK int drift_tc_model(drift_tc_model_t *m, drift_tc_arch_t arch, drift_format_t in, drift_format_t out);
const char *drift_tc_algo_name(drift_tc_algo_t a);

/* out = c + sum a[i]*b[i] with the model's arithmetic. a and b must already be values of
 * `in` (DRIFT_EINVAL otherwise) except for in == DRIFT_TF32, where fp32 values are
 * truncated (toward zero) to tf32 as the hardware does. out_fmt is DRIFT_FP32 or DRIFT_FP16 (the
 * table's rounding). c may be NULL (zero); a given c is first rounded to out_fmt, toward
 * zero for fp32 and to nearest-even for fp16, whatever the architecture (the published
 * GEMM.m rounds C so, with CPFloat, before any block).
 * n == 0 returns that rounded c. */
DRIFT_MUST_CHECK int drift_tc_dot(double *out, const double *a, const double *b, size_t n, const double *c,
    drift_tc_arch_t arch, drift_format_t in, drift_format_t out_fmt);

/* c rounded to the output format as drift_tc_dot rounds it: toward zero for fp32 output,
 * to nearest-even for fp16 (the published GEMM.m does so with CPFloat, for every
 * architecture); an fp32 result at or above 2^128 is +-inf, as the model's. DRIFT_EUNSUPPORTED
 * for other outputs. Callers that show or check c (drift-calc dot --c) use this. */
DRIFT_MUST_CHECK int drift_tc_round_c(double *out, double c, drift_format_t out_fmt);

/* The same model for every output of a row-major product: C[i][j] = drift_tc_dot of row i
 * of A (M x K) and column j of B (K x N), with C's entries as the initial c when c_init
 * is nonzero (else 0). A and B must be values of `in` (tf32: truncated as above); the
 * result is bit-identical to calling drift_tc_dot per output, whatever the thread count
 * (OpenMP across rows or tiles; the NVIDIA align-and-truncate blocks and MI250's fp32 blocks
 * vectorised across the outputs of a row in tc_gemm_packed.c, MI100's, MI300X's and B200
 * fp8's (fp32 output) on register tiles of 4 x 16 outputs in tc_gemm_tiles.c, MI300X's on
 * inputs beyond [2^-50, 2^50] across a row in tc_gemm_amd.c, Hopper/Blackwell fp8 -> fp16
 * one output at a time). */
DRIFT_MUST_CHECK int drift_tc_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    int c_init, drift_tc_arch_t arch, drift_format_t in, drift_format_t out_fmt);

/* drift_tc_gemm (c_init = 0) with B given as floats, Bf[t] == B[t] (row-major K x N; every
 * input format is a float format, so nothing is lost), read in place: no copy of B, the
 * decoder's weights as they are kept (tc_gemm_floatb.c). It takes the NVIDIA fp32-output
 * configurations with fp16 or bf16 inputs on an AVX-512 (F, DQ) or AVX2 (with F16C) CPU,
 * when every input is a finite value of `in` and every nonzero one lies in [2^-50, 2^51):
 * then *done = 1 and C is drift_tc_gemm's, bit for bit. Otherwise *done = 0, C's contents
 * are unspecified and the caller runs drift_tc_gemm (which also reports invalid inputs). B is
 * checked on the fly
 * unless b_valid says that drift_tc_floatb_valid(Bf, K*N, in) returned 1 for this very
 * matrix (a caller holding its weights unchanged checks them once). DRIFT_TC_NO_FLOATB=1 in
 * the environment makes it always decline (so that tests and benchmarks reach drift_tc_gemm).
 * DRIFT_EINVAL (NULL pointers), DRIFT_EUNSUPPORTED (as drift_tc_gemm) or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_tc_gemm_floatb(double *C, const double *A, const float *Bf, size_t M, size_t N, size_t K,
    drift_tc_arch_t arch, drift_format_t in, drift_format_t out_fmt, int b_valid, int *done);

/* 1 when drift_tc_gemm_floatb's conditions hold for every one of the n floats (finite values
 * of `in`, bf16 or fp16, nonzero ones in [2^-50, 2^51)) and this CPU runs it; else 0. */
int drift_tc_floatb_valid(const float *Bf, size_t n, drift_format_t in);

#ifdef __cplusplus
}
#endif

#endif
