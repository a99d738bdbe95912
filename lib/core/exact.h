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

#include "drift.h"
#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Digit i has weight 2^(32*i + DRIFT_XACC_LSB). The range must hold every exact product
 * of two doubles and their sums: products are multiples of 2^-1074 * 2^-1074 = 2^-2148
 * and below 2^1024 * 2^1024 = 2^2048, so n <= 2^64 of them sum below 2^2112. 160 digits
 * from 2^-2208 reach 2^2912: one spare digit below (a 53-bit mantissa shifted into a
 * digit spans three), and room above for the carries of any count. */
#define DRIFT_XACC_LSB (-2208)
#define DRIFT_XACC_DIGITS 160

/* "The exact sum so far": add values, read the value rounded to any format at any time.
 * Digits are signed and carries are deferred: each addition changes a digit by less than
 * 1.5 * 2^32, and carries are propagated every 2^30 additions, so no int64 overflows. */
typedef struct {
    int64_t d[DRIFT_XACC_DIGITS];
    int pending; /* additions since the last carry propagation */
    int nan;     /* a NaN, or +inf and -inf, were added */
    int inf;     /* +1 / -1 when an infinity was added, 0 otherwise */
    int zstate;  /* the sign of an exact zero result (IEEE 754 6.3): 0 nothing added,
                      1 only -0 added, 2 only +0 added, 3 anything else */
} drift_xacc_t;

void drift_xacc_init(drift_xacc_t *a);
void drift_xacc_add(drift_xacc_t *a, double x);
void drift_xacc_add_prod(drift_xacc_t *a, double x, double y); /* the exact product */
/* The exact value rounded once to f in mode m (not DRIFT_SR: NaN); a is not changed, so
 * it can be read after every addition (about 0.3 us per read). */
double drift_xacc_round(const drift_xacc_t *a, drift_format_t f, drift_mode_t m);
int drift_xacc_sign(const drift_xacc_t *a); /* -1, 0, +1 of the exact value */

/* Correctly rounded sum / dot, fast path and MPFR path. Return 0 or a DRIFT_E* code:
 * DRIFT_EINVAL for a NULL pointer with n > 0, an unknown format or DRIFT_SR.
 * The exact value is rounded once to f in mode m, with f's subnormals and f's overflow
 * rule (as drift_round_generic: RNE and RNA overflow to +-inf, NaN in fp8e4m3; RZ, RU
 * below zero and RD above zero give +-max_finite). Products are exact even where a*b
 * would overflow or underflow in double. IEEE 754 specials: a NaN, or +inf with -inf (or
 * inf * 0 in a dot), gives NaN; otherwise an infinity gives that infinity. An exact zero
 * is -0 when every term is -0, otherwise +0 (-0 in DRIFT_RD), as IEEE 754 6.3 and
 * mpfr_sum; n = 0 gives +0.
 * The fast sum and dot sum runs of terms whose exponents lie in a window (the usual case) in
 * SIMD floating point by exact extraction (AVX2 + FMA, chosen at run time), the others
 * in integer slots per exponent; the dot takes inputs with <= 24 significant bits
 * (fp32/bf16/fp16/fp8 values) at one exact double product per pair, wider doubles by
 * TwoProduct (FMA). */
DRIFT_MUST_CHECK int drift_exact_sum(double *out, const double *x, size_t n, drift_format_t f, drift_mode_t m);
DRIFT_MUST_CHECK int drift_exact_dot(
    double *out, const double *a, const double *b, size_t n, drift_format_t f, drift_mode_t m);
DRIFT_MUST_CHECK int drift_exact_sum_mpfr(double *out, const double *x, size_t n, drift_format_t f, drift_mode_t m);
DRIFT_MUST_CHECK int drift_exact_dot_mpfr(
    double *out, const double *a, const double *b, size_t n, drift_format_t f, drift_mode_t m);

/* An MPFR number (any precision, any exponent) rounded once to f (with f's subnormals and
 * overflow, as above) in mode m; NaN for DRIFT_SR or an unknown format. Does not touch
 * MPFR's exponent range. */
double drift_mpfr_to_format(mpfr_srcptr x, drift_format_t f, drift_mode_t m);

/* Correctly rounded (RNE, to double) elementary results, by Ziv's strategy: evaluate with
 * MPFR at 64, 128, ... bits with a proven error bound, until mpfr_can_round says the
 * rounding is decided. Return 0, DRIFT_EINVAL (NULL pointers), DRIFT_ENOMEM, or
 * DRIFT_ERANGE if 2048 bits did not decide (never seen).
 * exp: exp(nan) = nan, exp(+-inf) = inf / +0.
 * logsumexp: log(sum exp(x_i)); any NaN gives NaN, any +inf gives +inf, n = 0 or all -inf
 * gives -inf.
 * softmax: exp(x_i) / sum_j exp(x_j), each correctly rounded; a NaN, a +inf, or all -inf
 * make every output NaN (the real value is undefined); -inf entries give 0. */
DRIFT_MUST_CHECK int drift_exact_exp(double *out, double x);
DRIFT_MUST_CHECK int drift_exact_logsumexp(double *out, const double *x, size_t n);
DRIFT_MUST_CHECK int drift_exact_softmax(double *out, const double *x, size_t n); /* each out[i] correctly rounded */

#ifdef __cplusplus
}
#endif

#endif
