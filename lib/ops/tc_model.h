/* tc_model.h — bit-accurate model of NVIDIA tensor-core block FMA (Fasi, Higham, Mikaitis &
 * Pranesh 2021; Khattak & Mikaitis 2025).
 *
 * For each block of `block` products plus the running accumulator: products are exact;
 * all terms are aligned to the largest exponent keeping 23 + neab fraction bits and
 * truncating the rest (no sticky bit); they are summed without intermediate
 * normalisation, normalised once per block, and rounded toward zero for fp32 output
 * (nearest-even for fp16 output). Blocks along K are combined in order. */
#ifndef DRIFT_TC_MODEL_H
#define DRIFT_TC_MODEL_H

#include <stddef.h>

#include "../format.h"
#include "../order.h"

typedef struct {
    int block; /* products per block FMA */
    int neab;  /* extra alignment bits beyond 23 */
} drift_tc_params_t;

/* Parameters for arch and input format; DRIFT_EUNSUPPORTED when the architecture has no
 * tensor-core path for that input (e.g. fp8 on A100, bf16 on V100). */
int drift_tc_params(drift_tc_params_t *p, drift_tc_arch_t arch, drift_format_t in);

/* out = c + sum a[i]*b[i] with the model's arithmetic. a and b must already be values of
 * `in` except for in == DRIFT_TF32, where fp32 values are truncated to tf32 as the
 * hardware does. out_fmt is DRIFT_FP32 (round toward zero) or DRIFT_FP16 (RNE). c may be
 * NULL (zero). */
int drift_tc_dot(double *out, const double *a, const double *b, size_t n, const double *c, drift_tc_arch_t arch,
                 drift_format_t in, drift_format_t out_fmt);

#endif
