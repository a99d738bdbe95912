/* order_bound.c — forward error bounds of the reduction orders (order.h): the depth of each
 * order's summation tree, Higham's deterministic gamma_k bound and Higham & Mary's
 * probabilistic one. Split from order.c, which parses and reduces. */
#include "order.h"

#include <math.h>
#include <stddef.h>

/* ---- error bounds ------------------------------------------------------------------- */

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

static size_t ceil_log2(size_t n)
{
    size_t k = 0;
    while (k < 64 && ((size_t)1 << k) < n) k++;
    return k;
}

size_t drift_order_depth(const drift_order_t *o, size_t n)
{
    if (n <= 1) return 0;
    switch (o->kind) {
    case DRIFT_ORDER_PAIRWISE: return ceil_log2(n);
    case DRIFT_ORDER_BLOCKED: {
        size_t B = (size_t)o->param;
        return ((n < B ? n : B) - 1) + (ceil_div(n, B) - 1);
    }
    case DRIFT_ORDER_SPLITK: {
        size_t len = ceil_div(n, (size_t)o->param);
        size_t P = ceil_div(n, len);
        return (len - 1) + (o->tree ? ceil_log2(P) : P - 1);
    }
    case DRIFT_ORDER_WARP: {
        size_t W = (size_t)o->param;
        return (ceil_div(n, W) - 1) + ceil_log2(W);
    }
    default: return n - 1; /* seq, rev, random (and kahan/neumaier, unused) */
    }
}

double drift_gamma(size_t k, double u)
{
    double ku = (double)k * u;
    if (ku >= 1) return INFINITY;
    return ku / (1 - ku);
}

/* Kahan and Neumaier: |E| <= (2u + O(n u^2)) sum|x| (Higham 2002, eq. 4.9; Neumaier 1974).
 * Goldberg's proof of his Theorem 8 gives the second-order coefficient (4n + 2) u^2 for
 * Kahan; we return (2u + (4n + 4) u^2) sum|x|, the extra 2u^2 absorbing the third-order
 * remainder, and INFINITY once n u > 1/8 where the expansion is no longer small. */
static double compensated_bound(size_t n, double u, double sum_abs)
{
    double nu = (double)n * u;
    if (nu > 0.125) return INFINITY;
    return (2 * u + (4 * (double)n + 4) * u * u) * sum_abs;
}

double drift_order_bound(const drift_order_t *o, size_t n, double u, double sum_abs)
{
    if (drift_order_is_tc(o)) return NAN;
    if (o->kind == DRIFT_ORDER_KAHAN || o->kind == DRIFT_ORDER_NEUMAIER) return compensated_bound(n, u, sum_abs);
    return drift_gamma(drift_order_depth(o, n), u) * sum_abs;
}

/* Higham & Mary 2019, Theorem 2.4: a product of k factors (1 + delta), independent with
 * mean zero and |delta| <= u, is 1 + theta with |theta| <= gamma~_k(lambda) =
 * exp(lambda sqrt(k) u + k u^2 / (1 - u)) - 1 (~ lambda sqrt(k) u), with probability at
 * least 1 - 2 exp(-lambda^2 (1-u)^2 / 2). A sum has one such product per term, so the
 * bound gamma~_k(lambda) sum|x| holds for all n terms together with probability at least
 * drift_bound_prob(lambda, n, u) (union bound over the n terms). */
double drift_order_bound_prob(const drift_order_t *o, size_t n, double u, double sum_abs, double lambda)
{
    if (drift_order_is_tc(o)) return NAN;
    if (o->kind == DRIFT_ORDER_KAHAN || o->kind == DRIFT_ORDER_NEUMAIER) return compensated_bound(n, u, sum_abs);
    double k = (double)drift_order_depth(o, n);
    return expm1(lambda * sqrt(k) * u + k * u * u / (1 - u)) * sum_abs;
}

double drift_bound_prob(double lambda, size_t k, double u)
{
    double p = 1 - 2 * (double)k * exp(-lambda * lambda * (1 - u) * (1 - u) / 2);
    return p > 0 ? p : 0;
}
