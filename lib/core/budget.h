/* budget.h — the error budget of one dot product, split by mechanism so that it adds up (law 1).
 *
 * For unrounded inputs a, b (doubles, e.g. the fp32 weights a model means) and a kernel that
 * rounded them to the format `in`, accumulated to `computed` and stored `stored`:
 *
 *   E_u = sum a_k b_k               exact(unrounded inputs): what the model means
 *   E_r = sum RNE_in(a_k) RNE_in(b_k)   exact(rounded inputs): the best the kernel could do
 *
 *   total        = stored   - E_u
 *   input        = E_r      - E_u       (rounding the inputs to `in`)
 *   accumulation = computed - E_r       (the kernel's sums and products)
 *   output       = stored   - computed  (rounding the result to the output format)
 *
 * The three parts sum to the total identically in the reals. Each is computed exactly (the
 * superaccumulator of exact.h holds every sum without rounding) and reported rounded once to
 * fp64 (RNE); `residual` is the exact value of total - (input + accumulation + output) of those
 * rounded doubles, rounded once: at most half an fp64 ulp of each of the four, and 0 whenever
 * the parts are doubles (tests/test_budget.c checks both against MPFR). */
#ifndef DRIFT_BUDGET_H
#define DRIFT_BUDGET_H

#include <stddef.h>

#include "format.h"

typedef struct {
    double exact_unrounded, exact_rounded; /* E_u, E_r rounded once to fp64 */
    double computed, stored;               /* as given */
    double total, input, accumulation, output; /* exact parts rounded once to fp64 */
    double residual;                       /* exact total - (input + accumulation + output), rounded */
} drift_budget_t;

/* 0, or DRIFT_EINVAL (NULL pointers with n > 0, unknown format, non-finite values). */
int drift_budget_dot(drift_budget_t *out, const double *a, const double *b, size_t n, drift_format_t in,
                     double computed, double stored);

#endif
