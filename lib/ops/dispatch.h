/* dispatch.h — the recipe dispatcher: the one place that knows which code computes a recipe
 * (recipe.h). The scalar orders go to drift_sum/drift_dot (order.h), tc:ARCH to the
 * tensor-core model (tc_model.h), exact to the exact references (exact.h), a GEMM to the
 * emulated kernels (gemm.h) with its kernel built from the recipe. Nothing outside the
 * dispatcher's files (dispatch*.c: a policy's kernel in dispatch_kernel_gemm.c, a GPU's GEMM
 * in dispatch_gpu_gemm.c) and the order parser branches on the tensor-core case: the kernels
 * run the kernel they are given (gemm.h's tc family), and callers ask drift_order_tc_params
 * when they need the model's parameters (error bounds, noise models), and dispatch_order.h
 * whether an order computes a sum or a dot product of their formats, and which architecture.
 *
 * The backend: when an accelerator is selected (backend.h, --backend cuda|auto), every call
 * below whose arguments the device takes runs there, deterministic kernels checked bit for
 * bit against their CPU twin as they are produced; the others run on the CPU. Experiments get
 * --backend cuda by computing through these functions (and drift_dispatch_gemm instead of
 * drift_gemm), never by calling the backend themselves. */
#ifndef DRIFT_DISPATCH_H
#define DRIFT_DISPATCH_H

#include <stddef.h>

#include "drift.h"
#include "backend.h"
#include "dispatch_order.h"
#include "gemm.h"
#include "recipe.h"
#include "softmax.h"
#include "tc_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* drift_recipe_validate, then whether the path exists: tc:ARCH needs an architecture with a
 * tensor-core path for the input format (DRIFT_EUNSUPPORTED otherwise, err says so). */
DRIFT_MUST_CHECK int drift_recipe_check(const drift_recipe_t *r, char *err, size_t errsz);

/* The accumulator's result of c + sum a[i] b[i] before the output rounding (a value of
 * r->acc.acc); a and b must be values of r->in; c may be NULL. Not for exact recipes
 * (DRIFT_EINVAL). Errors as drift_recipe_check, plus those of the path. */
DRIFT_MUST_CHECK int drift_recipe_dot_acc(
    double *y, const double *a, const double *b, size_t n, const double *c, const drift_recipe_t *r);
/* A value y of the accumulator stored in r->out (RNE; unchanged when out == acc). */
double drift_recipe_store(double y, const drift_recipe_t *r);
/* The recipe's dot product: store(dot_acc), or for exact recipes the exact dot rounded once
 * to r->out (c must then be NULL). */
DRIFT_MUST_CHECK int drift_recipe_dot(
    double *out, const double *a, const double *b, size_t n, const double *c, const drift_recipe_t *r);
/* The recipe's sum of x (values of r->in): exact sum rounded to out, or drift_sum stored in
 * out. A tensor-core recipe is a dot product only: DRIFT_EUNSUPPORTED. */
DRIFT_MUST_CHECK int drift_recipe_sum(double *out, const double *x, size_t n, const drift_recipe_t *r);

/* The GEMM kernel that follows r's order: seq -> naive, splitk:S[:tree] -> splitk, tc:ARCH ->
 * tc. DRIFT_EUNSUPPORTED for the other orders and for exact (no GEMM kernel computes them). */
DRIFT_MUST_CHECK int drift_recipe_gemm_kernel(drift_gemm_kernel_t *k, const drift_recipe_t *r);
/* GEMM options from r: in, acc, out, with alpha and beta. */
drift_gemm_opts_t drift_recipe_gemm_opts(const drift_recipe_t *r, double alpha, double beta);
/* C = alpha A B + beta C with r's kernel and options (gemm.h). An exact recipe gives each
 * output the exact dot product of the inputs rounded (RNE) to r->in, rounded once to r->out
 * (alpha = 1 and beta = 0 only; DRIFT_EUNSUPPORTED otherwise). */
DRIFT_MUST_CHECK int drift_recipe_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_recipe_t *r, double alpha, double beta);

/* C (M x N) = A (M x K) B (K x N) under r (order seq or tc:ARCH) with the kernel kern (a
 * policy's choice for the batch's shape), the result stored in out (r->out, or r->acc.acc for a
 * partial that is reduced later). A holds any values (rounded to r->in here); B already holds
 * values of r->in, and Bf the same as floats (NULL when r->in is not a float format). seq: on
 * the device when one is selected (checked against drift_gemm); with an fp32 accumulator and a
 * tiled or a seq-combined split-K kernel, drift_seq_gemm_f32 per chunk (the same chains, the
 * chunks added in fp32 in order); else drift_gemm. tc:ARCH: the tensor-core model
 * (tc_model.h: on Bf in place when drift_tc_gemm_floatb takes it, else drift_tc_gemm), under
 * a split-K kernel on each K slice, the slices added in the accumulator (RNE) in slice order.
 * scratch_a holds M*K doubles, scratch_c 2*M*max(K, N) (at least M*(2N + K) floats).
 * 0 or the errors of the kernels. */
DRIFT_MUST_CHECK int drift_dispatch_kernel_gemm(double *C, const double *A, const double *B, const float *Bf, size_t M,
    size_t N, size_t K, const drift_recipe_t *r, const drift_gemm_kernel_t *kern, drift_format_t out, double *scratch_a,
    double *scratch_c);
/* The same, with bf_valid = 1 when drift_dispatch_gemm_b_valid(Bf, K*N, r) returned 1 for this
 * B (unchanged since): the tensor-core model then reads Bf without checking it again. B may
 * be a slice of that matrix's rows. drift_dispatch_kernel_gemm is bf_valid = 0. */
DRIFT_MUST_CHECK int drift_dispatch_kernel_gemm_b(double *C, const double *A, const double *B, const float *Bf,
    int bf_valid, size_t M, size_t N, size_t K, const drift_recipe_t *r, const drift_gemm_kernel_t *kern,
    drift_format_t out, double *scratch_a, double *scratch_c);

/* Whether r's GEMM under drift_dispatch_kernel_gemm_b may read Bf (n floats, the B that call
 * receives) without checking its values again: for a tensor-core recipe, 1 when the model
 * takes Bf as it lies (drift_tc_floatb_valid for r->in), else 0; 0 for every other recipe (its
 * paths never check Bf). For callers that multiply by one B many times (the decoder's
 * weights): computed once, passed as bf_valid. */
int drift_dispatch_gemm_b_valid(const float *Bf, size_t n, const drift_recipe_t *r);

/* drift_gemm (same arguments, same errors) through the backend: on the device when one is
 * selected and takes the arguments (naive, tiled, splitk checked bit for bit against
 * drift_gemm; tc:ARCH on the device's own tensor cores, a measurement), else on the CPU. */
DRIFT_MUST_CHECK int drift_dispatch_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_gemm_kernel_t *kern, const drift_gemm_opts_t *opts);
/* A device-only GEMM path (splitk:S:atomic, cublas[:pedantic|:tf32], cublaslt[...]: no CPU
 * twin, nondeterministic or vendor-defined); ran receives what ran. DRIFT_EUNSUPPORTED when no
 * device is selected or it has no such path (drift_backend_message() says why). */
DRIFT_MUST_CHECK int drift_dispatch_gemm_spec(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const char *spec, const drift_gemm_opts_t *opts, char *ran, size_t ran_size);
/* out[i] = drift_round(in[i], f, o, 0) for every i, on the device when selected (checked). */
DRIFT_MUST_CHECK int drift_dispatch_round(
    double *out, const double *in, size_t n, drift_format_t f, const drift_round_opts_t *o);
/* drift_softmax of each of batch rows of n, on the device when selected (checked). */
DRIFT_MUST_CHECK int drift_dispatch_softmax(
    double *out, const double *x, size_t n, size_t batch, const drift_softmax_opts_t *o, char *err, size_t errsz);

#ifdef __cplusplus
}
#endif

#endif
