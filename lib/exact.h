/* exact.h — exact witnesses (law 1): correctly rounded sums and dot products, and
 * correctly rounded elementary functions for the softmax experiments.
 *
 * Two independent implementations of every sum and dot product:
 *   - the fast path: a superaccumulator (fixed-point over the whole double range in
 *     32-bit digits held in int64 words, carries deferred), never rounding until the end;
 *   - MPFR: mpfr_sum over the exact products (each product of two doubles is exact in
 *     106 bits).
 * tests/test_exact.c proves them bit-identical. */
#ifndef DRIFT_EXACT_H
#define DRIFT_EXACT_H

#include <stddef.h>
#include <stdint.h>

#include <mpfr.h>

#include "format.h"

/* Digit i has weight 2^(32*i + DRIFT_XACC_LSB). Covers 2^-1074 ... 2^1024 products of
 * doubles need more: exact products go down to 2^-2148, so the fast path keeps products
 * of doubles exact by splitting them (see exact.c); 160 digits cover 2^-2208 ... 2^2912. */
#define DRIFT_XACC_LSB (-2208)
#define DRIFT_XACC_DIGITS 160

/* "The exact sum so far": add values, read the value rounded to any format at any time. */
typedef struct {
    int64_t d[DRIFT_XACC_DIGITS];
    int pending;   /* additions since the last carry propagation */
    int nan;       /* a NaN, or +inf and -inf, were added */
    int inf;       /* +1 / -1 when an infinity was added, 0 otherwise */
} drift_xacc_t;

void drift_xacc_init(drift_xacc_t *a);
void drift_xacc_add(drift_xacc_t *a, double x);
void drift_xacc_add_prod(drift_xacc_t *a, double x, double y); /* the exact product */
/* The exact value rounded once to f in mode m (not DRIFT_SR); a is not changed. */
double drift_xacc_round(const drift_xacc_t *a, drift_format_t f, drift_mode_t m);
int drift_xacc_sign(const drift_xacc_t *a); /* -1, 0, +1 of the exact value */

/* Correctly rounded sum / dot, fast path and MPFR path. Return 0 or a DRIFT_E* code. */
int drift_exact_sum(double *out, const double *x, size_t n, drift_format_t f, drift_mode_t m);
int drift_exact_dot(double *out, const double *a, const double *b, size_t n, drift_format_t f, drift_mode_t m);
int drift_exact_sum_mpfr(double *out, const double *x, size_t n, drift_format_t f, drift_mode_t m);
int drift_exact_dot_mpfr(double *out, const double *a, const double *b, size_t n, drift_format_t f, drift_mode_t m);

/* An MPFR number rounded once to f (with f's subnormals and overflow) in mode m. */
double drift_mpfr_to_format(mpfr_srcptr x, drift_format_t f, drift_mode_t m);

/* Correctly rounded (RNE, to double) elementary results, by Ziv's strategy: evaluate with
 * MPFR at a working precision, widen until the result rounds unambiguously. */
int drift_exact_exp(double *out, double x);
int drift_exact_logsumexp(double *out, const double *x, size_t n);
int drift_exact_softmax(double *out, const double *x, size_t n); /* each out[i] correctly rounded */

#endif
