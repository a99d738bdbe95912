/* tc_model.h — bit-accurate model of NVIDIA tensor-core block FMA (Fasi, Higham, Mikaitis &
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
 *      normalisation), normalised once, and rounded to the output format: toward zero for
 *      fp32 output, to nearest-even for fp16 output, with subnormal results. A zero sum is
 *      +0. A result at or above 2^(emax+1) is +-inf (the model's all-ones exponent field),
 *      even under round-toward-zero.
 * Blocks along K are combined in order: the result of block t is the c of block t+1; the
 * last block may be short (the model pads with zeros, which are dropped).
 * When neab < 0 (H100 fp8, see below) the accumulator itself is narrower: step 3 keeps
 * 23 + neab fraction bits and the fp32 result keeps 24 + neab significant bits.
 *
 * Special values (checked over the whole dot product first, as the published GEMM model
 * does): any NaN, or inf * 0, or infinities of both signs give NaN; otherwise any infinity
 * gives that infinity. A finite overflow inside a block gives inf, which then propagates.
 *
 * Parameters (block = products per block FMA, neab, min_exp), from the published models:
 *   V100   fp16 4, 0                                  (min_exp none)
 *   A100   fp16 8, 1   bf16 8, 1   tf32 4, 1           (min_exp none)
 *   H100   fp16 16, 2  bf16 16, 2  tf32 8, 2  fp8 32, -10   (min_exp -133)
 *   B200   fp16 16, 2  bf16 16, 2  tf32 8, 2  fp8 32, 2     (min_exp -133; -15 for fp16->fp16)
 * H100 fp8 follows the published H100TC.m (neab = -10: a 14-bit accumulator, in line with
 * the "about 14 bits" FP8 accumulation that DeepSeek-V3's report measured on H800), not
 * the B200 value. */
#ifndef DRIFT_TC_MODEL_H
#define DRIFT_TC_MODEL_H

#include <stddef.h>

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

/* Parameters for arch and input format (out_fmt fp32 assumed; drift_tc_dot adjusts min_exp
 * for B200 fp16 -> fp16); DRIFT_EUNSUPPORTED when the architecture has no tensor-core path
 * for that input (fp8 on V100/A100, bf16 and tf32 on V100, fp32 and fp64 anywhere). */
int drift_tc_params(drift_tc_params_t *p, drift_tc_arch_t arch, drift_format_t in);

/* out = c + sum a[i]*b[i] with the model's arithmetic. a and b must already be values of
 * `in` (DRIFT_EINVAL otherwise) except for in == DRIFT_TF32, where fp32 values are
 * truncated (toward zero) to tf32 as the hardware does. out_fmt is DRIFT_FP32 (round
 * toward zero) or DRIFT_FP16 (RNE). c may be NULL (zero); a given c is first rounded to
 * out_fmt in the output rounding mode (the published GEMM model does the same to C).
 * n == 0 returns that rounded c. */
int drift_tc_dot(double *out, const double *a, const double *b, size_t n, const double *c, drift_tc_arch_t arch,
                 drift_format_t in, drift_format_t out_fmt);

/* The same model for every output of a row-major product: C[i][j] = drift_tc_dot of row i
 * of A (M x K) and column j of B (K x N), with C's entries as the initial c when c_init
 * is nonzero (else 0). A and B must be values of `in` (tf32: truncated as above); the
 * result is bit-identical to calling drift_tc_dot per output, whatever the thread count
 * (OpenMP across rows, vectorised across the outputs of a row). */
int drift_tc_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init,
                  drift_tc_arch_t arch, drift_format_t in, drift_format_t out_fmt);

#ifdef __cplusplus
}
#endif

#endif
