/* dispatch.h — the recipe dispatcher: the one place that knows which code computes a recipe
 * (recipe.h). The scalar orders go to drift_sum/drift_dot (order.h), tc:ARCH to the
 * tensor-core model (tc_model.h), exact to the exact references (exact.h), a GEMM to the
 * emulated kernels (gemm.h) with its kernel built from the recipe. Nothing outside this file
 * and the order parser branches on the tensor-core case: callers ask drift_order_tc_params
 * when they need the model's parameters (error bounds, noise models). */
#ifndef DRIFT_DISPATCH_H
#define DRIFT_DISPATCH_H

#include <stddef.h>

#include "gemm.h"
#include "recipe.h"
#include "tc_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* drift_recipe_validate, then whether the path exists: tc:ARCH needs an architecture with a
 * tensor-core path for the input format (DRIFT_EUNSUPPORTED otherwise, why says so). */
int drift_recipe_check(const drift_recipe_t *r, char *why, size_t why_size);

/* 1 when o is a tensor-core order whose architecture takes `in` (p receives the model's
 * parameters), 0 when o is not a tensor-core order, DRIFT_EUNSUPPORTED when it is one that
 * has no path for `in`. */
int drift_order_tc_params(drift_tc_params_t *p, const drift_order_t *o, drift_format_t in);

/* The accumulator's result of c + sum a[i] b[i] before the output rounding (a value of
 * r->acc.acc); a and b must be values of r->in; c may be NULL. Not for exact recipes
 * (DRIFT_EINVAL). Errors as drift_recipe_check, plus those of the path. */
int drift_recipe_dot_acc(double *y, const double *a, const double *b, size_t n, const double *c, const drift_recipe_t *r);
/* A value y of the accumulator stored in r->out (RNE; unchanged when out == acc). */
double drift_recipe_store(double y, const drift_recipe_t *r);
/* The recipe's dot product: store(dot_acc), or for exact recipes the exact dot rounded once
 * to r->out (c must then be NULL). */
int drift_recipe_dot(double *out, const double *a, const double *b, size_t n, const double *c, const drift_recipe_t *r);
/* The recipe's sum of x (values of r->in): exact sum rounded to out, or drift_sum stored in
 * out. A tensor-core recipe is a dot product only: DRIFT_EUNSUPPORTED. */
int drift_recipe_sum(double *out, const double *x, size_t n, const drift_recipe_t *r);

/* The GEMM kernel that follows r's order: seq -> naive, splitk:S[:tree] -> splitk, tc:ARCH ->
 * tc. DRIFT_EUNSUPPORTED for the other orders and for exact (no GEMM kernel computes them). */
int drift_recipe_gemm_kernel(drift_gemm_kernel_t *k, const drift_recipe_t *r);
/* GEMM options from r: in, acc, out, with alpha and beta. */
drift_gemm_opts_t drift_recipe_gemm_opts(const drift_recipe_t *r, double alpha, double beta);
/* C = alpha A B + beta C with r's kernel and options (gemm.h). An exact recipe gives each
 * output the exact dot product of the inputs rounded (RNE) to r->in, rounded once to r->out
 * (alpha = 1 and beta = 0 only; DRIFT_EUNSUPPORTED otherwise). */
int drift_recipe_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
                      const drift_recipe_t *r, double alpha, double beta);

#ifdef __cplusplus
}
#endif

#endif
