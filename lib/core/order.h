/* order.h — reduction orders as data (law 2), and the generic reducer.
 *
 * Spec grammar: seq | rev | pairwise | blocked:B | splitk:S | splitk:S:tree |
 * warp:W | kahan | neumaier | random:SEED | tc:ARCH. The printed spec is canonical, so
 * parse(print(o)) == o. Parsing is strict: names are lower case; B, S, W are decimal
 * integers >= 1 without sign, blanks or leading zeros that fit a long; W is a power of two
 * <= 2^20; SEED is decimal 0 .. 2^64-1 (no leading zeros); ARCH is a drift_tc_arch_name
 * (v100, a100, h100, b200, ..., mi300x: drift_tc_arch_t below).
 * Anything else (blocked:0, warp:6, splitk:, splitk:3:foo, random:, trailing junk) is
 * DRIFT_EINVAL.
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
 *   kahan      compensated seq (Kahan 1965): y = x - c; t = s + y; c = (t - s) - y; s = t;
 *              the result is s (no final correction)
 *   neumaier   Neumaier's improved Kahan–Babuška: t = s + x; c += |s| >= |x| ?
 *              (s - t) + x : (x - t) + s; s = t; the result is s + c
 *   random:S   Fisher–Yates permutation from the Philox stream (S, "order.random", 0, 0),
 *              i from n-1 down to 1 swapping x[i] and x[below(i+1)], then seq
 *   tc:ARCH    the tensor-core block-FMA model (lib/ops/tc_model.h), dot products only;
 *              drift_sum and drift_dot return DRIFT_EUNSUPPORTED for it: the model needs
 *              the input format, so callers call drift_tc_dot directly
 *
 * Sums: a term enters a chain addition unrounded (s = round(s + x[i]), one rounding);
 * where a term stands alone (a chain's first term, a pairwise leaf, a kahan/neumaier
 * term) it is round(x[i]). For inputs that are values of acc (the usual case) both are
 * just x[i]. No terms (n = 0): +0 (or the initial value c of a dot product, rounded).
 * An empty warp lane holds +0. kahan and neumaier start at s = the first term (or c)
 * with a +0 correction.
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

#include "drift.h"
#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Tensor-core architectures (lib/ops/tc_model.h holds their parameters): NVIDIA V100 (Volta),
 * A100, A2, A30 (Ampere), Ada (RTX 4000-class) and L40S (Ada Lovelace), H100, H200 (Hopper),
 * B200, RTX PRO 6000 (Blackwell), and AMD's CDNA matrix cores MI100 (CDNA1), MI250 (CDNA2),
 * MI300X (CDNA3). New values go at the end: the numbers of the first four are stable. */
typedef enum {
    DRIFT_TC_V100 = 0,
    DRIFT_TC_A100,
    DRIFT_TC_H100,
    DRIFT_TC_B200,
    DRIFT_TC_ADA,
    DRIFT_TC_L40S,
    DRIFT_TC_A2,
    DRIFT_TC_A30,
    DRIFT_TC_H200,
    DRIFT_TC_RTXPRO6000,
    DRIFT_TC_MI100,
    DRIFT_TC_MI250,
    DRIFT_TC_MI300X,
    DRIFT_TC_NARCH
} drift_tc_arch_t;

typedef struct {
    drift_order_kind_t kind;
    long param;           /* B of blocked, S of splitk, W of warp; 0 otherwise */
    int tree;             /* splitk:S:tree */
    uint64_t seed;        /* random:SEED */
    drift_tc_arch_t arch; /* tc:ARCH */
} drift_order_t;

#define DRIFT_ORDER_SPEC_MAX 64

typedef struct {
    drift_format_t acc; /* accumulator format */
    drift_mode_t mode;  /* rounding of every accumulation step (DRIFT_SR is not supported) */
    int fma;            /* 1: chain + a*b rounded once; 0: product rounded to acc first */
} drift_acc_t;

/* 0, or DRIFT_EINVAL for a malformed spec (blocked:0, warp:6, splitk:, unknown name...). */
DRIFT_MUST_CHECK int drift_order_parse(drift_order_t *o, const char *spec);
/* Canonical spec into buf; returns its length, or DRIFT_EINVAL if it does not fit. */
int drift_order_print(char *buf, size_t size, const drift_order_t *o);
int drift_order_equal(const drift_order_t *a, const drift_order_t *b);
const char *drift_tc_arch_name(drift_tc_arch_t a);
/* 1 when o is tc:ARCH (a tensor-core model, computed only through the recipe dispatcher). */
int drift_order_is_tc(const drift_order_t *o);

/* Reductions. out receives the result (a value of acc->acc). Returns 0, DRIFT_EINVAL
 * (bad arguments), DRIFT_ENOMEM, or DRIFT_EUNSUPPORTED (tc on a sum, SR mode). */
DRIFT_MUST_CHECK int drift_sum(double *out, const double *x, size_t n, const drift_order_t *o, const drift_acc_t *acc);
DRIFT_MUST_CHECK int drift_dot(double *out, const double *a, const double *b, size_t n, const double *c,
    const drift_order_t *o, const drift_acc_t *acc);

/* Forward error bounds |computed - exact| <= bound for a sum of n values of acc, for the
 * plots; u is the unit roundoff of acc (2u for the directed modes RZ/RU/RD). Overflow is
 * outside every bound. A dot product with k = drift_order_depth(o, n) + 1 (the product's
 * rounding, or the fma's) satisfies |E| <= gamma_k * sum|a_i b_i|.
 * Deterministic (Higham, Accuracy and Stability, ch. 4): gamma_k * sum|x_i| with
 * gamma_k = k u / (1 - k u) and k = drift_order_depth(o, n), the largest number of
 * roundings any term sees: seq/rev/random n-1; pairwise ceil(log2 n); blocked:B
 * (min(B,n)-1) + (ceil(n/B)-1); splitk:S with L = ceil(n/S) and P = ceil(n/L) partials:
 * (L-1) + (P-1) (or ceil(log2 P) with :tree); warp:W (ceil(n/W)-1) + log2 W;
 * kahan/neumaier 2u + O(n u^2): we return (2u + (4n+4) u^2) sum|x| (see order.c) and
 * INFINITY once n u > 1/8. Returns INFINITY when k u >= 1, NAN for tc. */
double drift_order_bound(const drift_order_t *o, size_t n, double u, double sum_abs);
size_t drift_order_depth(const drift_order_t *o, size_t n);
double drift_gamma(size_t k, double u); /* k u / (1 - k u), INFINITY when k u >= 1 */
/* Probabilistic (Higham & Mary 2019, Thm 2.4 and 3.1): gamma~_k(lambda) * sum|x_i| with
 * gamma~_k(lambda) = exp(lambda sqrt(k) u + k u^2/(1-u)) - 1 (= lambda sqrt(k) u to first
 * order), k = drift_order_depth(o, n), holding under their model of independent
 * mean-zero rounding errors with probability at least drift_bound_prob(lambda, n, u) =
 * max(0, 1 - 2n exp(-lambda^2 (1-u)^2 / 2)): pass the number of TERMS n (the union bound
 * runs over the terms), not k. kahan/neumaier: the deterministic bound; tc: NAN. */
double drift_order_bound_prob(const drift_order_t *o, size_t n, double u, double sum_abs, double lambda);
double drift_bound_prob(double lambda, size_t k, double u);

#ifdef __cplusplus
}
#endif

#endif
