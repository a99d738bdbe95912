/* dispatch.c — which code computes a recipe (dispatch.h). */
#include "dispatch.h"
#include "drift.h"
#include "exact.h"
#include "why.h"

#include <stdint.h>
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

int drift_order_sum_check(const drift_order_t *o, const char *what, char *err, size_t errsz)
{
    if (!o || o->kind != DRIFT_ORDER_TC) return DRIFT_OK;
    char buf[DRIFT_ORDER_SPEC_MAX];
    if (drift_order_print(buf, sizeof buf, o) < 0) snprintf(buf, sizeof buf, "?");
    return drift_why(err, errsz, DRIFT_EUNSUPPORTED, "order '%s' is a dot-product model; %s takes " DRIFT_SUM_ORDERS,
        buf, what ? what : "a sum");
}

int drift_order_dot_check(const drift_order_t *o, drift_format_t in, drift_format_t acc, char *err, size_t errsz)
{
    if (!o || o->kind != DRIFT_ORDER_TC) return DRIFT_OK;
    char buf[DRIFT_ORDER_SPEC_MAX];
    if (drift_order_print(buf, sizeof buf, o) < 0) snprintf(buf, sizeof buf, "?");
    drift_tc_params_t p;
    if (drift_tc_params(&p, o->arch, in))
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED, "order %s has no tensor-core path for input %s", buf,
            drift_format_name(in));
    if (acc != DRIFT_FP32 && acc != DRIFT_FP16)
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED, "order %s accumulates in fp32 or fp16, not %s", buf,
            drift_format_name(acc));
    return DRIFT_OK;
}

int drift_order_tc_arch(drift_tc_arch_t *arch, const drift_order_t *o)
{
    if (!o || o->kind != DRIFT_ORDER_TC) return 0;
    if (arch) *arch = o->arch;
    return 1;
}

int drift_order_dot(double *y, const double *a, const double *b, size_t n, const double *c, const drift_order_t *o,
    drift_format_t in, const drift_acc_t *acc)
{
    if (o && o->kind == DRIFT_ORDER_TC) return drift_tc_dot(y, a, b, n, c, o->arch, in, acc->acc);
    return drift_dot(y, a, b, n, c, o, acc);
}

int drift_recipe_check(const drift_recipe_t *r, char *err, size_t errsz)
{
    int rc = drift_recipe_validate(r, err, errsz);
    if (rc || r->exact) return rc;
    if (drift_order_tc_params(NULL, &r->order, r->in) < 0) {
        if (err && errsz)
            snprintf(err, errsz, "tc:%s has no tensor-core path for %s inputs", drift_tc_arch_name(r->order.arch),
                drift_format_name(r->in));
        return DRIFT_EUNSUPPORTED;
    }
    return DRIFT_OK;
}

/* ---- the backend's routing -------------------------------------------------------------- */

/* The name of a recipe for a mismatch line: "dot fp32/seq/fp32/fp32". */
static void recipe_label(char *buf, size_t size, const char *what, const drift_recipe_t *r)
{
    char rs[80];
    if (drift_recipe_print(rs, sizeof rs, r) < 0) snprintf(rs, sizeof rs, "?");
    snprintf(buf, size, "%s %s", what, rs);
}

/* The device's answer for a call the CPU has already computed into cpu[0..n): 0 when it
 * ran and every bit agrees, or when the device has no path for it (counted as on the CPU);
 * the mismatch's or failure's code otherwise. dev is scratch for n values. */
static int twin_check(int rc, const double *dev, const double *cpu, size_t n, size_t cols, const char *label)
{
    if (rc == DRIFT_EUNSUPPORTED) {
        drift_backend_count(0, 0, 1);
        return DRIFT_OK;
    }
    if (rc) return drift_backend_failed(rc, label);
    drift_backend_count(1, 0, 0);
    size_t i = drift_backend_first_diff(dev, cpu, n);
    return i < n ? drift_backend_mismatch(label, i, cols, dev[i], cpu[i]) : DRIFT_OK;
}

static const drift_backend_ops_t *device(void) { return drift_backend_active() ? drift_backend_registered() : NULL; }

int drift_recipe_dot_acc(
    double *y, const double *a, const double *b, size_t n, const double *c, const drift_recipe_t *r)
{
    int rc = drift_recipe_check(r, NULL, 0);
    if (rc) return rc;
    if (r->exact) return DRIFT_EINVAL;
    const drift_backend_ops_t *dev = device();
    if (r->order.kind == DRIFT_ORDER_TC) {
        if (dev && dev->gemm && !c && y && (n == 0 || (a && b))) {
            /* the device's tensor cores: a measurement, held against the exact reference */
            drift_gemm_kernel_t k = {.family = DRIFT_GEMM_TC, .arch = r->order.arch};
            drift_gemm_opts_t o = drift_recipe_gemm_opts(r, 1, 0);
            o.out = r->acc.acc;
            char ran[64];
            drift_backend_lock();
            rc = dev->gemm(y, a, b, 1, 1, n, &k, &o, ran, sizeof ran);
            drift_backend_unlock();
            if (!rc) {
                drift_backend_count(0, 1, 0);
                return DRIFT_OK;
            }
            if (rc != DRIFT_EUNSUPPORTED) return drift_backend_failed(rc, "dot tc");
        }
        if (dev) drift_backend_count(0, 0, 1);
        return drift_tc_dot(y, a, b, n, c, r->order.arch, r->in, r->acc.acc);
    }
    if ((rc = drift_dot(y, a, b, n, c, &r->order, &r->acc)) || !dev) return rc;
    if (!dev->dot || c) { /* the device's dot has no initial value */
        drift_backend_count(0, 0, 1);
        return DRIFT_OK;
    }
    double got;
    drift_backend_lock();
    rc = dev->dot(&got, a, b, n, 1, &r->order, &r->acc);
    drift_backend_unlock();
    char label[96];
    recipe_label(label, sizeof label, "dot", r);
    return twin_check(rc, &got, y, 1, 0, label);
}

double drift_recipe_store(double y, const drift_recipe_t *r) { return r->out == r->acc.acc ? y : drift_rne(y, r->out); }

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
    const drift_backend_ops_t *dev = device();
    if (!dev) return DRIFT_OK;
    if (!dev->sum) {
        drift_backend_count(0, 0, 1);
        return DRIFT_OK;
    }
    double got;
    drift_backend_lock();
    rc = dev->sum(&got, x, n, 1, &r->order, &r->acc);
    drift_backend_unlock();
    char label[96];
    recipe_label(label, sizeof label, "sum", r);
    return twin_check(rc, &got, &y, 1, 0, label);
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
static int exact_gemm(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, const drift_recipe_t *r)
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
    return drift_dispatch_gemm(C, A, B, M, N, K, &k, &o);
}

static void kernel_label(char *buf, size_t size, const drift_gemm_kernel_t *k, const drift_gemm_opts_t *o)
{
    char ks[64];
    if (drift_gemm_kernel_print(ks, sizeof ks, k) < 0) snprintf(ks, sizeof ks, "?");
    snprintf(buf, size, "gemm %s %s->%s", ks, drift_format_name(o->in), drift_format_name(o->out));
}

int drift_dispatch_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_gemm_kernel_t *kern, const drift_gemm_opts_t *opts)
{
    const drift_backend_ops_t *dev = device();
    if (!dev || !dev->gemm || !kern || !opts || M == 0 || N == 0) {
        int rc = drift_gemm(C, A, B, M, N, K, kern, opts);
        if (!rc && dev && M && N) drift_backend_count(0, 0, 1);
        return rc;
    }
    char label[128], ran[64];
    kernel_label(label, sizeof label, kern, opts);
    if (kern->family == DRIFT_GEMM_TC) { /* measured: the device's tensor cores, no twin */
        drift_tc_params_t p;
        if (!C || !A || !B || drift_tc_params(&p, kern->arch, opts->in)) /* the CPU's verdict */
            return drift_gemm(C, A, B, M, N, K, kern, opts);
        drift_backend_lock();
        int rc = dev->gemm(C, A, B, M, N, K, kern, opts, ran, sizeof ran);
        drift_backend_unlock();
        if (!rc) {
            drift_backend_count(0, 1, 0);
            return DRIFT_OK;
        }
        /* no device path, or arguments the CPU refuses too: the CPU's answer and its code */
        int cpu = drift_gemm(C, A, B, M, N, K, kern, opts);
        if (cpu || rc == DRIFT_EUNSUPPORTED) {
            if (!cpu) drift_backend_count(0, 0, 1);
            return cpu;
        }
        return drift_backend_failed(rc, label);
    }
    /* a twin: the CPU first (its errors are the call's errors), then the device, bit for bit;
     * the device gets C as it was (beta != 0 reads it) */
    if (M > SIZE_MAX / sizeof(double) / N) return drift_gemm(C, A, B, M, N, K, kern, opts);
    double *got = malloc(M * N * sizeof *got);
    if (!got) { /* the CPU's verdict on the arguments first */
        int cpu = drift_gemm(C, A, B, M, N, K, kern, opts);
        return cpu ? cpu : DRIFT_ENOMEM;
    }
    if (opts->beta != 0 && C) memcpy(got, C, M * N * sizeof *got);
    int rc = drift_gemm(C, A, B, M, N, K, kern, opts);
    if (rc) {
        free(got);
        return rc;
    }
    drift_backend_lock();
    rc = dev->gemm(got, A, B, M, N, K, kern, opts, ran, sizeof ran);
    drift_backend_unlock();
    rc = twin_check(rc, got, C, M * N, N, label);
    free(got);
    return rc;
}

int drift_dispatch_gemm_spec(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const char *spec, const drift_gemm_opts_t *opts, char *ran, size_t ran_size)
{
    const drift_backend_ops_t *dev = device();
    if (!spec || !opts) return DRIFT_EINVAL;
    if (!dev || !dev->gemm_spec) {
        char why[64];
        snprintf(why, sizeof why, "gemm %s", spec);
        return drift_backend_failed(DRIFT_EUNSUPPORTED, why);
    }
    drift_backend_lock();
    int rc = dev->gemm_spec(C, A, B, M, N, K, spec, opts, ran, ran_size);
    drift_backend_unlock();
    if (rc) {
        char why[64];
        snprintf(why, sizeof why, "gemm %s", spec);
        return drift_backend_failed(rc, why);
    }
    drift_backend_count(0, 1, 0);
    return DRIFT_OK;
}

int drift_dispatch_round(double *out, const double *in, size_t n, drift_format_t f, const drift_round_opts_t *o)
{
    if (n && (!out || !in)) return DRIFT_EINVAL;
    if ((unsigned)f >= DRIFT_NFORMATS) return DRIFT_EINVAL;
    if (o && o->mode == DRIFT_SR) return DRIFT_EUNSUPPORTED; /* needs random bits per element */
    for (size_t i = 0; i < n; i++) out[i] = drift_round(in[i], f, o, 0);
    const drift_backend_ops_t *dev = device();
    if (!dev || !n) return DRIFT_OK;
    if (!dev->round) {
        drift_backend_count(0, 0, 1);
        return DRIFT_OK;
    }
    double *got = malloc(n * sizeof *got);
    if (!got) return DRIFT_ENOMEM;
    drift_backend_lock();
    int rc = dev->round(got, in, n, f, o);
    drift_backend_unlock();
    char label[64];
    snprintf(label, sizeof label, "round to %s", drift_format_name(f));
    rc = twin_check(rc, got, out, n, 0, label);
    free(got);
    return rc;
}

int drift_dispatch_softmax(
    double *out, const double *x, size_t n, size_t batch, const drift_softmax_opts_t *o, char *err, size_t errsz)
{
    if (batch && n > SIZE_MAX / batch) return DRIFT_ENOMEM;
    for (size_t r = 0; r < batch; r++) {
        int rc = drift_softmax(out + r * n, x + r * n, n, o, err, errsz);
        if (rc) return rc;
    }
    const drift_backend_ops_t *dev = device();
    if (!dev || !n || !batch) return DRIFT_OK;
    if (!dev->softmax) {
        drift_backend_count(0, 0, 1);
        return DRIFT_OK;
    }
    double *got = malloc(n * batch * sizeof *got);
    if (!got) return DRIFT_ENOMEM;
    drift_backend_lock();
    int rc = dev->softmax(got, x, n, batch, o);
    drift_backend_unlock();
    rc = twin_check(rc, got, out, n * batch, n, "softmax");
    free(got);
    return rc;
}
