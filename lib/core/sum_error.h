/* sum_error.h — the error of a computed sum against the exact sum of the same inputs (law 1):
 * the exact sum and sum of magnitudes (superaccumulator, exact.h), and the absolute, relative
 * and ulp errors computed exactly and rounded up, so never reported smaller than they are.
 * The summation experiments (sum_order, sum_order_perms) measure every sum with it. */
#ifndef DRIFT_SUM_ERROR_H
#define DRIFT_SUM_ERROR_H

#include <stddef.h>

#include "exact.h"
#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double result, abs_err, rel_err, ulp_err;
} drift_sum_err_t;

/* s = the exact sum of x[0..n) (initialised here); *sum_abs = sum |x_i| rounded up. */
void drift_exact_sum_abs(drift_xacc_t *s, double *sum_abs, const double *x, size_t n);

/* |result - S| with S held exactly in x: computed exactly and rounded up; relative to |S|
 * (rounded up); and in units of acc's spacing at S rounded to double (drift_ulp). */
void drift_sum_error(drift_sum_err_t *m, const drift_xacc_t *x, double result, drift_format_t acc);

#ifdef __cplusplus
}
#endif

#endif
