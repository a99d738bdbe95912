/* dispatch.c — which code computes a recipe (dispatch.h). */
#include "dispatch.h"
#include "drift.h"
#include "exact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int drift_order_tc_params(drift_tc_params_t *p, const drift_order_t *o, drift_format_t in)
{
    drift_tc_params_t tmp;
    if (!o || o->kind != DRIFT_ORDER_TC) return 0;
    int rc = drift_tc_params(p ? p : &tmp, o->arch, in);
    return rc ? DRIFT_EUNSUPPORTED : 1;
}

int drift_recipe_check(const drift_recipe_t *r, char *why, size_t size)
{
    int rc = drift_recipe_validate(r, why, size);
    if (rc || r->exact) return rc;
    if (drift_order_tc_params(NULL, &r->order, r->in) < 0) {
        if (why && size)
            snprintf(why, size, "tc:%s has no tensor-core path for %s inputs", drift_tc_arch_name(r->order.arch),
                     drift_format_name(r->in));
        return DRIFT_EUNSUPPORTED;
    }
    return DRIFT_OK;
}

int drift_recipe_dot_acc(double *y, const double *a, const double *b, size_t n, const double *c, const drift_recipe_t *r)
{
    int rc = drift_recipe_check(r, NULL, 0);
    if (rc) return rc;
    if (r->exact) return DRIFT_EINVAL;
    if (r->order.kind == DRIFT_ORDER_TC) return drift_tc_dot(y, a, b, n, c, r->order.arch, r->in, r->acc.acc);
    return drift_dot(y, a, b, n, c, &r->order, &r->acc);
}

double drift_recipe_store(double y, const drift_recipe_t *r)
{
    return r->out == r->acc.acc ? y : drift_rne(y, r->out);
}

int drift_recipe_dot(double *out, const double *a, const double *b, size_t n, const double *c, const drift_recipe_t *r)
{
    int rc = drift_recipe_check(r, NULL, 0);
    if (rc || !out) return rc ? rc : DRIFT_EINVAL;
    if (r->exact) return c ? DRIFT_EUNSUPPORTED : drift_exact_dot(out, a, b, n, r->out, DRIFT_RNE);
    double y;
    if ((rc = drift_recipe_dot_acc(&y, a, b, n, c, r))) return rc;
    *out = drift_recipe_store(y, r);
    return DRIFT_OK;
}

int drift_recipe_sum(double *out, const double *x, size_t n, const drift_recipe_t *r)
{
    int rc = drift_recipe_check(r, NULL, 0);
    if (rc || !out) return rc ? rc : DRIFT_EINVAL;
    if (r->exact) return drift_exact_sum(out, x, n, r->out, DRIFT_RNE);
    if (r->order.kind == DRIFT_ORDER_TC) return DRIFT_EUNSUPPORTED;
    double y;
    if ((rc = drift_sum(&y, x, n, &r->order, &r->acc))) return rc;
    *out = drift_recipe_store(y, r);
    return DRIFT_OK;
}

int drift_recipe_gemm_kernel(drift_gemm_kernel_t *k, const drift_recipe_t *r)
{
    if (!k || !r || drift_recipe_validate(r, NULL, 0)) return DRIFT_EINVAL;
    memset(k, 0, sizeof *k);
    if (r->exact) return DRIFT_EUNSUPPORTED;
    switch (r->order.kind) {
    case DRIFT_ORDER_SEQ: k->family = DRIFT_GEMM_NAIVE; return DRIFT_OK;
    case DRIFT_ORDER_SPLITK:
        if (r->order.param > DRIFT_GEMM_SPLIT_MAX) return DRIFT_EUNSUPPORTED;
        k->family = DRIFT_GEMM_SPLITK;
        k->splits = (int)r->order.param;
        k->tree = r->order.tree;
        return DRIFT_OK;
    case DRIFT_ORDER_TC:
        k->family = DRIFT_GEMM_TC;
        k->arch = r->order.arch;
        return DRIFT_OK;
    default: return DRIFT_EUNSUPPORTED;
    }
}

drift_gemm_opts_t drift_recipe_gemm_opts(const drift_recipe_t *r, double alpha, double beta)
{
    drift_gemm_opts_t o = drift_gemm_opts(r->in, r->acc.acc);
    o.acc = r->acc;
    o.out = r->out;
    o.alpha = alpha;
    o.beta = beta;
    return o;
}

/* C = A B exactly, each output the exact dot product of the rounded inputs rounded once to out. */
static int exact_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, const drift_recipe_t *r)
{
    double *a = malloc((K + 1) * sizeof *a), *b = malloc((K + 1) * N * sizeof *b);
    int rc = a && b ? DRIFT_OK : DRIFT_ENOMEM;
    for (size_t j = 0; !rc && j < N; j++) /* B transposed: column j is b[j*K .. j*K+K) */
        for (size_t k = 0; k < K; k++) b[j * K + k] = drift_rne(B[k * N + j], r->in);
    for (size_t i = 0; !rc && i < M; i++) {
        for (size_t k = 0; k < K; k++) a[k] = drift_rne(A[i * K + k], r->in);
        for (size_t j = 0; !rc && j < N; j++) rc = drift_exact_dot(&C[i * N + j], a, b + j * K, K, r->out, DRIFT_RNE);
    }
    free(a);
    free(b);
    return rc;
}

int drift_recipe_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
                      const drift_recipe_t *r, double alpha, double beta)
{
    if (!C || !A || !B || !r || drift_recipe_validate(r, NULL, 0)) return DRIFT_EINVAL;
    if (r->exact) return alpha == 1 && beta == 0 ? exact_gemm(C, A, B, M, N, K, r) : DRIFT_EUNSUPPORTED;
    drift_gemm_kernel_t k;
    int rc = drift_recipe_gemm_kernel(&k, r);
    if (rc) return rc;
    drift_gemm_opts_t o = drift_recipe_gemm_opts(r, alpha, beta);
    return drift_gemm(C, A, B, M, N, K, &k, &o);
}
