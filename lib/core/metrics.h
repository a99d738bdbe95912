/* metrics.h — how far a computed value is from its exact witness. */
#ifndef DRIFT_METRICS_H
#define DRIFT_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* |c - e| (computed exactly: the subtraction is rounded up, never down, so an error is
 * never reported smaller than it is). */
double drift_abs_err(double computed, double exact);
/* |c - e| / |e|; 0 when both are 0, INFINITY when only e is 0. */
double drift_rel_err(double computed, double exact);
/* |c - e| in units of the spacing of f at e (drift_ulp). */
double drift_ulp_err(double computed, double exact, drift_format_t f);
/* Number of steps between two values of f (0 when equal, signed zeros equal). */
int64_t drift_ulp_distance(double a, double b, drift_format_t f);
/* Normalised mean squared error sum (c - e)^2 / sum e^2 (the ggml test metric). */
double drift_nmse(const double *computed, const double *exact, size_t n);

/* Top two entries of x. top1 is the largest (lowest index among equals); top2 the largest
 * of the rest. gap = v1 - v2 >= 0; tie = (gap == 0). n >= 2. */
typedef struct {
    size_t top1, top2;
    double v1, v2, gap;
    int tie;
} drift_top2_t;
void drift_top2(drift_top2_t *out, const double *x, size_t n);

#ifdef __cplusplus
}
#endif

#endif
