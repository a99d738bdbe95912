/* order.h — reduction orders as data (law 2), and the generic reducer.
 *
 * Spec grammar (design brief): seq | rev | pairwise | blocked:B | splitk:S | splitk:S:tree |
 * warp:W | kahan | neumaier | random:SEED | tc:ARCH. The printed spec is canonical, so
 * parse(print(o)) == o.
 *
 * Semantics of the reducer, for a sum of x[0..n) (or a dot product whose terms are
 * a[i]*b[i]) with every intermediate rounded to acc->acc in mode acc->mode:
 *   seq        ((x0 + x1) + x2) + ...
 *   rev        ((x[n-1] + x[n-2]) + ...) + x0
 *   pairwise   n <= 1 trivial, else m = n/2 (floor): sum(x[0,m)) + sum(x[m,n))
 *   blocked:B  seq inside consecutive blocks of B, then seq over the block sums
 *   splitk:S   chunks of ceil(n/S) elements (the last shorter; empty chunks do not exist:
 *              there are ceil(n / ceil(n/S)) partials), each seq, partials combined seq
 *              (or pairwise with :tree)
 *   warp:W     lane i sums x[i], x[i+W], ... seq; then for off = W/2 .. 1:
 *              v[i] = v[i] + v[i xor off]; the result is v[0]
 *   kahan      compensated seq (Kahan 1965): y = x - c; t = s + y; c = (t - s) - y; s = t
 *   neumaier   Neumaier's improved Kahan–Babuška: the correction sums the lost low parts
 *              and is added once at the end
 *   random:S   Fisher–Yates permutation from the Philox stream (S, "order.random", 0, 0),
 *              i from n-1 down to 1 swapping x[i] and x[below(i+1)], then seq
 *   tc:ARCH    the tensor-core block-FMA model (lib/ops/tc_model.h), dot products only
 *
 * Dot products: a term is a[i]*b[i]. Where a term is added into a running chain (seq, rev,
 * random, blocked blocks, splitk chunks, warp lanes) fma=1 rounds chain + a*b once and
 * fma=0 rounds the product to acc first; the first term of a chain starts it as
 * round(a*b). pairwise leaves, kahan and neumaier terms are the products rounded to acc.
 * The initial value c (a GEMM's C operand), when given, starts the chain of the one-chain
 * orders (seq, rev, random, kahan, neumaier, tc); for the multi-partial orders (pairwise,
 * blocked, splitk, warp) the result is round(c + r), r being the reduction without c. */
#ifndef DRIFT_ORDER_H
#define DRIFT_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

typedef enum {
    DRIFT_ORDER_SEQ = 0,
    DRIFT_ORDER_REV,
    DRIFT_ORDER_PAIRWISE,
    DRIFT_ORDER_BLOCKED,
    DRIFT_ORDER_SPLITK,
    DRIFT_ORDER_WARP,
    DRIFT_ORDER_KAHAN,
    DRIFT_ORDER_NEUMAIER,
    DRIFT_ORDER_RANDOM,
    DRIFT_ORDER_TC
} drift_order_kind_t;

typedef enum { DRIFT_TC_V100 = 0, DRIFT_TC_A100, DRIFT_TC_H100, DRIFT_TC_B200, DRIFT_TC_NARCH } drift_tc_arch_t;

typedef struct {
    drift_order_kind_t kind;
    long param;    /* B of blocked, S of splitk, W of warp; 0 otherwise */
    int tree;      /* splitk:S:tree */
    uint64_t seed; /* random:SEED */
    drift_tc_arch_t arch; /* tc:ARCH */
} drift_order_t;

#define DRIFT_ORDER_SPEC_MAX 64

typedef struct {
    drift_format_t acc; /* accumulator format */
    drift_mode_t mode;  /* rounding of every accumulation step (DRIFT_SR is not supported) */
    int fma;            /* 1: chain + a*b rounded once; 0: product rounded to acc first */
} drift_acc_t;

/* 0, or DRIFT_EINVAL for a malformed spec (blocked:0, warp:6, splitk:, unknown name...). */
int drift_order_parse(drift_order_t *o, const char *spec);
/* Canonical spec into buf; returns its length, or DRIFT_EINVAL if it does not fit. */
int drift_order_print(char *buf, size_t size, const drift_order_t *o);
int drift_order_equal(const drift_order_t *a, const drift_order_t *b);
const char *drift_tc_arch_name(drift_tc_arch_t a);

/* Reductions. out receives the result (a value of acc->acc). Returns 0, DRIFT_EINVAL
 * (bad arguments), DRIFT_ENOMEM, or DRIFT_EUNSUPPORTED (tc on a sum, SR mode). */
int drift_sum(double *out, const double *x, size_t n, const drift_order_t *o, const drift_acc_t *acc);
int drift_dot(double *out, const double *a, const double *b, size_t n, const double *c, const drift_order_t *o,
              const drift_acc_t *acc);

/* Forward error bounds |computed - exact| <= bound, for the plots.
 * Deterministic (Higham, Accuracy and Stability, ch. 4): gamma_k * sum|x_i| with
 * gamma_k = k u / (1 - k u) and k = the largest number of roundings any term sees:
 * seq/rev/random n-1; pairwise ceil(log2 n); blocked:B (B-1) + (ceil(n/B)-1);
 * splitk:S (ceil(n/S)-1) + (S-1) (or ceil(log2 S) with :tree); warp:W
 * (ceil(n/W)-1) + log2 W; kahan/neumaier 2u + O(n u^2) (we return (2u + 2n u^2) sum|x|).
 * Returns INFINITY when k u >= 1. */
double drift_order_bound(const drift_order_t *o, size_t n, double u, double sum_abs);
/* Probabilistic (Higham & Mary 2019): lambda * sqrt(k) * u * sum|x_i|, holding with
 * probability at least drift_bound_prob(lambda, k, u) = 1 - 2k exp(-lambda^2 (1-u)^2 / 2)
 * under their model of independent rounding errors. */
double drift_order_bound_prob(const drift_order_t *o, size_t n, double u, double sum_abs, double lambda);
double drift_bound_prob(double lambda, size_t k, double u);

#endif
