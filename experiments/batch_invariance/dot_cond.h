/* dot_cond.h — how ill-conditioned a row of dot products is: the condition number
 * sum |a_k b_k| / |sum a_k b_k| of each, which bounds how far any summation order can move
 * the result in units of the rounding error (Higham, Accuracy and Stability, 2nd ed., 3.1). */
#ifndef DRIFT_DOT_COND_H
#define DRIFT_DOT_COND_H

#include <stddef.h>

#include "drift.h"
#include "format.h"

/* The median over the N columns j of B (K x N, row-major) of sum_k |a_k B_kj| / |sum_k a_k B_kj|,
 * the inputs first rounded (RNE) to `in`, both sums exact (superaccumulator, exact.h) and rounded
 * once to fp64. in must be narrower than fp64, so that every product is exact in a double.
 * exact: the N exact dot products of the rounded inputs rounded to fp64 when the caller has
 * them, or NULL. 0, DRIFT_EINVAL (fp64 inputs), DRIFT_ENOMEM, or the exact sum's error. */
DRIFT_MUST_CHECK int drift_dot_cond_median(
    double *med, const double *a, const double *B, size_t K, size_t N, drift_format_t in, const double *exact);

#endif
