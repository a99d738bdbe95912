/* args.c — the CUDA backend's argument checking, in plain C so that it runs (and is tested,
 * tests/test_cuda_args.c) on machines without a device and in builds without nvcc.
 *
 * Rule: the GPU refuses what the CPU refuses with the CPU's own code, because the check asks
 * the CPU path itself (drift_sum / drift_dot / drift_gemm on an empty problem validate the
 * order, accumulator, kernel and options and do nothing else). Only then come the GPU's own
 * limits, each DRIFT_EUNSUPPORTED with a one-line reason in drift_cuda_message(). */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "drift.h"
#include "drift_cuda.h"
#include "drift_cuda_gemm.h"
#include "drift_cuda_reduce.h"
#include "format.h"
#include "gemm.h"
#include "order.h"

/* ---- the message ------------------------------------------------------------------------ */

static char g_message[512];

const char *drift_cuda_message(void) { return g_message; }

int drift_cuda_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_message, sizeof g_message, fmt, ap);
    va_end(ap);
    return code;
}

static int is_f32_value(double x) { return isnan(x) || (double)(float)x == x; }

/* ---- conversions ------------------------------------------------------------------------- */

int drift_cuda_check_round(
    const double *out, const double *in, size_t n, drift_format_t f, const drift_round_opts_t *o, int kernel)
{
    static const drift_round_opts_t rne = {DRIFT_RNE, 0, 0};
    if (!o) o = &rne;
    if ((unsigned)f >= DRIFT_NFORMATS) return drift_cuda_fail(DRIFT_EINVAL, "round: format %d out of range", (int)f);
    if ((unsigned)o->mode >= DRIFT_NMODES)
        return drift_cuda_fail(DRIFT_EINVAL, "round: mode %d out of range", (int)o->mode);
    if (kernel < 1 || kernel > DRIFT_CUDA_ROUND_KERNELS)
        return drift_cuda_fail(DRIFT_EINVAL, "round: kernel %d (accepted: 1..%d)", kernel, DRIFT_CUDA_ROUND_KERNELS);
    if (n > 0 && (!out || !in)) return drift_cuda_fail(DRIFT_EINVAL, "round: NULL pointer with n = %zu", n);
    const char *fn = drift_format_name(f), *mn = drift_mode_name(o->mode);
    if (o->mode == DRIFT_SR)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "round: no GPU instruction rounds stochastically");
    if (o->flush_subnormals)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "round: flush_subnormals has no conversion instruction (.ftz is for arithmetic)");
    int fp8 = f == DRIFT_FP8E4M3 || f == DRIFT_FP8E5M2;
    if (o->saturate && !fp8)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "round: saturate exists only for fp8 (__NV_SATFINITE), not %s", fn);
    int ok;
    switch (f) {
    case DRIFT_FP64: ok = 1; break;
    case DRIFT_TF32: ok = o->mode == DRIFT_RNA || o->mode == DRIFT_RNE || o->mode == DRIFT_RZ; break;
    case DRIFT_FP8E4M3:
    case DRIFT_FP8E5M2: ok = o->mode == DRIFT_RNE; break;
    default: ok = o->mode != DRIFT_RNA; break;
    }
    if (kernel == 3 && f == DRIFT_FP64) ok = 0;
    if (kernel == 3 && f == DRIFT_FP32) ok = 1; /* a copy: the inputs are fp32 values */
    if (!ok)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "round: no GPU conversion to %s in mode %s (kernel %d)", fn, mn, kernel);
    if (kernel == 3)
        for (size_t i = 0; i < n; i++)
            if (!is_f32_value(in[i]))
                return drift_cuda_fail(
                    DRIFT_EINVAL, "round: kernel 3 takes fp32 values; in[%zu] = %a is not one", i, in[i]);
    return DRIFT_OK;
}

/* ---- sums and dot products --------------------------------------------------------------- */

int drift_cuda_reduce_kernels(const drift_order_t *o)
{
    if (!o) return 0;
    return o->kind == DRIFT_ORDER_WARP || o->kind == DRIFT_ORDER_BLOCKED ? 2 : 1;
}

int drift_cuda_check_reduce(const double *out, const double *a, const double *b, size_t n, size_t batch,
    const drift_order_t *o, const drift_acc_t *acc, int kernel)
{
    double dummy;
    /* the CPU's verdict on the order and the accumulator (n = 0: nothing else happens) */
    int rc = b ? drift_dot(&dummy, NULL, NULL, 0, NULL, o, acc) : drift_sum(&dummy, NULL, 0, o, acc);
    if (rc)
        return drift_cuda_fail(
            rc, "%s: the CPU path refuses this order/accumulator (%s)", b ? "dot" : "sum", drift_strerror(rc));
    const char *what = b ? "dot" : "sum";
    if (!out && batch > 0) return drift_cuda_fail(DRIFT_EINVAL, "%s: out is NULL", what);
    if (n > 0 && batch > 0 && !a) return drift_cuda_fail(DRIFT_EINVAL, "%s: input is NULL", what);
    char spec[DRIFT_ORDER_SPEC_MAX];
    drift_order_print(spec, sizeof spec, o);
    if (acc->acc != DRIFT_FP32 && acc->acc != DRIFT_FP64)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "%s: the GPU accumulates in fp32 or fp64, not %s", what, drift_format_name(acc->acc));
    if (acc->mode == DRIFT_RNA)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "%s: no GPU add/fma rounds to nearest-away (accepted: rne rz ru rd)", what);
    if (o->kind == DRIFT_ORDER_RANDOM)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "%s: order %s is a host permutation: permute, then run seq", what, spec);
    if (o->kind == DRIFT_ORDER_WARP && o->param > 1024)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "%s: order %s: at most 1024 lanes (one thread block)", what, spec);
    int nk = drift_cuda_reduce_kernels(o);
    if (kernel < 0 || kernel > nk)
        return drift_cuda_fail(DRIFT_EINVAL, "%s: kernel %d for order %s (accepted: 0..%d)", what, kernel, spec, nk);
    if (o->kind == DRIFT_ORDER_WARP && kernel == 2 && o->param > 32)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "%s: kernel 2 (shuffles) needs warp:W with W <= 32, not %s", what, spec);
    if (n > INT_MAX || batch > 65535 || (batch && n > (size_t)INT_MAX * 64 / batch))
        return drift_cuda_fail(DRIFT_EUNSUPPORTED,
            "%s: n = %zu, batch = %zu is beyond the GPU path's limits (n < 2^31, batch <= 65535)", what, n, batch);
    if (acc->acc == DRIFT_FP32)
        for (size_t i = 0; i < n * batch; i++)
            if (!is_f32_value(a[i]) || (b && !is_f32_value(b[i])))
                return drift_cuda_fail(
                    DRIFT_EUNSUPPORTED, "%s: element %zu is not an fp32 value; the GPU reads fp32 inputs", what, i);
    return DRIFT_OK;
}

/* ---- GEMM specs -------------------------------------------------------------------------- */

int drift_cuda_gemm_parse(drift_cuda_gemm_t *g, const char *spec)
{
    if (!g || !spec) return DRIFT_EINVAL;
    drift_cuda_gemm_t r;
    memset(&r, 0, sizeof r);
    if (drift_gemm_kernel_parse(&r.kern, spec) == 0) {
        r.path = DRIFT_CUDA_TWIN;
        *g = r;
        return DRIFT_OK;
    }
    static const struct {
        const char *name;
        drift_cuda_gemm_path_t path;
        drift_cuda_math_t math;
    } vendor[] = {{"cublas", DRIFT_CUDA_CUBLAS, DRIFT_CUDA_MATH_DEFAULT},
        {"cublas:pedantic", DRIFT_CUDA_CUBLAS, DRIFT_CUDA_MATH_PEDANTIC},
        {"cublas:tf32", DRIFT_CUDA_CUBLAS, DRIFT_CUDA_MATH_TF32},
        {"cublaslt", DRIFT_CUDA_CUBLASLT, DRIFT_CUDA_MATH_DEFAULT},
        {"cublaslt:pedantic", DRIFT_CUDA_CUBLASLT, DRIFT_CUDA_MATH_PEDANTIC},
        {"cublaslt:tf32", DRIFT_CUDA_CUBLASLT, DRIFT_CUDA_MATH_TF32},
        {"cublaslt:fixed", DRIFT_CUDA_CUBLASLT, DRIFT_CUDA_MATH_FIXED}};
    for (size_t i = 0; i < sizeof vendor / sizeof *vendor; i++)
        if (strcmp(spec, vendor[i].name) == 0) {
            r.path = vendor[i].path;
            r.math = vendor[i].math;
            r.kern.family = DRIFT_GEMM_NAIVE;
            *g = r;
            return DRIFT_OK;
        }
    /* splitk:S:atomic: the CPU grammar's splitk:S followed by ":atomic" */
    size_t len = strlen(spec);
    static const char suffix[] = ":atomic";
    if (len > sizeof suffix - 1 && strcmp(spec + len - (sizeof suffix - 1), suffix) == 0 && len < 64) {
        char head[64];
        memcpy(head, spec, len - (sizeof suffix - 1));
        head[len - (sizeof suffix - 1)] = '\0';
        if (drift_gemm_kernel_parse(&r.kern, head) == 0 && r.kern.family == DRIFT_GEMM_SPLITK && !r.kern.tree) {
            r.path = DRIFT_CUDA_ATOMIC;
            *g = r;
            return DRIFT_OK;
        }
    }
    return DRIFT_EINVAL;
}

int drift_cuda_gemm_print(char *buf, size_t size, const drift_cuda_gemm_t *g)
{
    if (!buf || !g) return DRIFT_EINVAL;
    static const char *const maths[] = {"", ":pedantic", ":tf32", ":fixed"};
    int n;
    switch (g->path) {
    case DRIFT_CUDA_TWIN: return drift_gemm_kernel_print(buf, size, &g->kern);
    case DRIFT_CUDA_ATOMIC:
        if (g->kern.family != DRIFT_GEMM_SPLITK || g->kern.splits < 1) return DRIFT_EINVAL;
        n = snprintf(buf, size, "splitk:%d:atomic", g->kern.splits);
        break;
    case DRIFT_CUDA_CUBLAS:
    case DRIFT_CUDA_CUBLASLT:
        if ((unsigned)g->math > DRIFT_CUDA_MATH_FIXED ||
            (g->path == DRIFT_CUDA_CUBLAS && g->math == DRIFT_CUDA_MATH_FIXED))
            return DRIFT_EINVAL;
        n = snprintf(buf, size, "%s%s", g->path == DRIFT_CUDA_CUBLAS ? "cublas" : "cublaslt", maths[g->math]);
        break;
    default: return DRIFT_EINVAL;
    }
    return n < 0 || (size_t)n >= size ? DRIFT_EINVAL : n;
}

int drift_cuda_gemm_is_twin(const drift_cuda_gemm_t *g)
{
    return g && g->path == DRIFT_CUDA_TWIN && g->kern.family != DRIFT_GEMM_TC;
}

int drift_cuda_gemm_storage_bytes(const drift_cuda_gemm_t *g, drift_format_t in)
{
    int simt = g->path == DRIFT_CUDA_ATOMIC || (g->path == DRIFT_CUDA_TWIN && g->kern.family != DRIFT_GEMM_TC);
    if (simt || in == DRIFT_FP32 || in == DRIFT_TF32) return 4;
    if (in == DRIFT_FP16 || in == DRIFT_BF16) return 2;
    return 1;
}

/* ---- GEMM arguments ---------------------------------------------------------------------- */

int drift_cuda_check_gemm(const double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_cuda_gemm_t *g, const drift_gemm_opts_t *opts)
{
    if (!g) return drift_cuda_fail(DRIFT_EINVAL, "gemm: kernel is NULL");
    char spec[DRIFT_CUDA_GEMM_SPEC_MAX];
    if (drift_cuda_gemm_print(spec, sizeof spec, g) < 0) return drift_cuda_fail(DRIFT_EINVAL, "gemm: invalid kernel");
    /* The CPU's verdict, in the CPU's order: pointers first, then kernel and options. The
     * vendor and atomic paths ask with naive, the kernel that validates only the options. */
    if (!C || !opts || (M && K && !A) || (K && N && !B))
        return drift_cuda_fail(DRIFT_EINVAL, "gemm: NULL pointer (C, options, or A/B with nonzero sizes)");
    drift_gemm_kernel_t cpu_kern = g->kern;
    if (g->path != DRIFT_CUDA_TWIN) {
        memset(&cpu_kern, 0, sizeof cpu_kern);
        cpu_kern.family = DRIFT_GEMM_NAIVE;
    }
    double dummy = 0;
    int rc = drift_gemm(&dummy, &dummy, &dummy, 0, 0, 0, &cpu_kern, opts);
    if (rc) return drift_cuda_fail(rc, "gemm %s: the CPU path refuses these options (%s)", spec, drift_strerror(rc));
    if (M && N && (M > SIZE_MAX / 8 / N || (K && (M > SIZE_MAX / 8 / K || N > SIZE_MAX / 8 / K))))
        return drift_cuda_fail(DRIFT_ENOMEM, "gemm: %zu x %zu x %zu cannot fit in memory", M, N, K);
    /* the GPU's own limits */
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX || M * K > INT_MAX || K * N > INT_MAX || M * N > INT_MAX)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED,
            "gemm: %zu x %zu x %zu: the GPU path indexes with int (each matrix < 2^31 elements)", M, N, K);
    if (opts->acc.acc != DRIFT_FP32)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "gemm %s: the GPU accumulates in fp32, not %s", spec, drift_format_name(opts->acc.acc));
    if (opts->out != DRIFT_FP32 || opts->alpha != 1.0 || opts->beta != 0.0)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "gemm %s: the GPU epilogue is C = A B in fp32 (alpha 1, beta 0, out fp32)", spec);
    const char *in = drift_format_name(opts->in);
    int tc = g->path == DRIFT_CUDA_TWIN && g->kern.family == DRIFT_GEMM_TC;
    if (!tc && g->path != DRIFT_CUDA_CUBLAS && g->path != DRIFT_CUDA_CUBLASLT && opts->acc.mode != DRIFT_RNE)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "gemm %s: the GPU kernels accumulate with rne only, not %s", spec,
            drift_mode_name(opts->acc.mode));
    int simt = g->path == DRIFT_CUDA_ATOMIC || (g->path == DRIFT_CUDA_TWIN && !tc);
    int splits = g->path == DRIFT_CUDA_ATOMIC || g->kern.family == DRIFT_GEMM_SPLITK ? g->kern.splits : 1;
    if (simt && (splits > 65535 || M > 65535u * 16u))
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "gemm %s: grid limits: S <= 65535 slices and M <= 1048560 rows", spec);
    if (opts->in == DRIFT_FP64)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "gemm %s: fp64 inputs do not fit the fp32 GPU kernels", spec);
    if (tc && opts->in == DRIFT_FP32)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "gemm %s: tensor cores take fp16, bf16, tf32 or fp8, not fp32", spec);
    if (tc && g->kern.arch != DRIFT_TC_A100 && g->kern.arch != DRIFT_TC_H100 && g->kern.arch != DRIFT_TC_B200)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "gemm %s: the mma paths need sm_80 or newer (a100, h100, b200)", spec);
    if (g->path == DRIFT_CUDA_CUBLAS || g->path == DRIFT_CUDA_CUBLASLT) {
        int f8 = opts->in == DRIFT_FP8E4M3 || opts->in == DRIFT_FP8E5M2;
        if (f8)
            return drift_cuda_fail(DRIFT_EUNSUPPORTED,
                "gemm %s: fp8 inputs need scales; not offered (accepted: fp32 tf32 fp16 bf16)", spec);
        if (g->math == DRIFT_CUDA_MATH_TF32 && opts->in != DRIFT_FP32 && opts->in != DRIFT_TF32)
            return drift_cuda_fail(DRIFT_EUNSUPPORTED, "gemm %s: tf32 math needs fp32 or tf32 input, not %s", spec, in);
    }
    return DRIFT_OK;
}

int drift_cuda_check_gemm_streams(const double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_cuda_gemm_t *g, const drift_gemm_opts_t *opts, int nstreams)
{
    int rc = drift_cuda_check_gemm(C, A, B, M, N, K, g, opts);
    if (rc) return rc;
    if (nstreams < 1 || nstreams > DRIFT_CUDA_MAX_STREAMS)
        return drift_cuda_fail(
            DRIFT_EINVAL, "gemm streams: %d streams (accepted: 1..%d)", nstreams, DRIFT_CUDA_MAX_STREAMS);
    if (g->path == DRIFT_CUDA_TWIN)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED,
            "gemm streams: twins are deterministic by construction (accepted: splitk:S:atomic, cublas, cublaslt)");
    if (g->path == DRIFT_CUDA_CUBLASLT && g->math == DRIFT_CUDA_MATH_FIXED)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "gemm streams: cublaslt:fixed needs an earlier call's algorithm");
    if (M && N && M > SIZE_MAX / sizeof(double) / N / (size_t)nstreams)
        return drift_cuda_fail(DRIFT_ENOMEM, "gemm streams: %d results of %zu x %zu cannot fit", nstreams, M, N);
    return DRIFT_OK;
}

/* ---- softmax ------------------------------------------------------------------------------ */
#include "drift_cuda_softmax.h"
int drift_cuda_check_softmax(const double *out, const double *x, size_t n, size_t batch, const drift_softmax_opts_t *o)
{
    char why[DRIFT_ERRMSG_MAX] = "";
    int rc = drift_softmax_validate(o, why, sizeof why);
    if (rc) return drift_cuda_fail(rc, "%s", why);
    if (n * batch > 0 && (!out || !x)) return drift_cuda_fail(DRIFT_EINVAL, "softmax: NULL buffer");
    if (o->exp != DRIFT_EXP_EXPF)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "softmax on the GPU: exp must be expf (exp2 is not offered yet)");
    if (o->acc.acc != DRIFT_FP32 || o->acc.mode != DRIFT_RNE)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "softmax on the GPU: the accumulator is fp32 rne");
    if (o->order.kind != DRIFT_ORDER_SEQ)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "softmax on the GPU: sums of exponentials in order seq only");
    if (o->in == DRIFT_FP64 || o->out == DRIFT_FP64)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "softmax on the GPU: fp64 logits or output are not offered");
    if (n > INT_MAX || batch > INT_MAX || (batch && n > (size_t)INT_MAX * 64 / batch))
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "softmax on the GPU: n = %zu, batch = %zu too large", n, batch);
    return DRIFT_OK;
}

/* ---- attention ---------------------------------------------------------------------------- */
#include "drift_cuda_attention.h"

static int attn_recipe_on_device(const drift_recipe_t *r, const char *name)
{
    if (r->order.kind != DRIFT_ORDER_SEQ)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "attention on the GPU: the %s order must be seq", name);
    if (r->acc.acc != DRIFT_FP32 || r->acc.mode != DRIFT_RNE || !r->acc.fma)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "attention on the GPU: the %s accumulator must be fp32 rne with fma", name);
    if (r->in == DRIFT_FP64)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "attention on the GPU: the %s input must not be fp64", name);
    return DRIFT_OK;
}

/* The formats the device rounds to itself (the exponentials to pv.in, standard's scores to
 * qk.out). */
static int attn_device_format(drift_format_t f) { return f == DRIFT_FP32 || f == DRIFT_BF16 || f == DRIFT_FP16; }

int drift_cuda_check_attention(const double *out, const double *q, size_t nq, size_t q_pos, const drift_kv_cache_t *kv,
    const unsigned char *key_mask, const drift_attn_opts_t *o)
{
    (void)key_mask;
    char why[DRIFT_ERRMSG_MAX] = "";
    int rc = drift_attn_validate(o, why, sizeof why);
    if (rc) return drift_cuda_fail(rc, "%s", why);
    /* drift_attention's own checks, in its order and words */
    if (!kv || !kv->k) return drift_cuda_fail(DRIFT_EINVAL, "attention: missing kv cache");
    if (nq && (!out || !q)) return drift_cuda_fail(DRIFT_EINVAL, "attention: NULL buffer");
    if (kv->kv_heads != o->kv_heads || kv->head_dim != o->head_dim)
        return drift_cuda_fail(DRIFT_EINVAL,
            "attention: the cache has kv_heads %d and head_dim %d, the options %d and %d", kv->kv_heads, kv->head_dim,
            o->kv_heads, o->head_dim);
    if (o->causal && (q_pos > kv->len || nq > kv->len - q_pos))
        return drift_cuda_fail(DRIFT_EINVAL,
            "attention: causal queries at positions %zu..%zu need that many cached keys (the cache has %zu)", q_pos,
            q_pos + nq - 1, kv->len);
    /* the device's subset */
    if ((rc = attn_recipe_on_device(&o->qk, "qk")) || (rc = attn_recipe_on_device(&o->pv, "pv"))) return rc;
    if (!attn_device_format(o->pv.in))
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "attention on the GPU: pv.in must be fp32, bf16 or fp16, not %s",
            drift_format_name(o->pv.in));
    if (o->softmax_acc.acc != DRIFT_FP32 || o->softmax_acc.mode != DRIFT_RNE)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "attention on the GPU: the softmax accumulator must be fp32 rne");
    if (o->sum_order.kind != DRIFT_ORDER_SEQ)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "attention on the GPU: row sums in order seq only");
    if (o->exp != DRIFT_EXP_EXPF)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED, "attention on the GPU: exp must be expf (exp2 is not offered yet)");
    if (o->kernel.kind == DRIFT_ATTN_STANDARD) {
        if (o->softmax.kind != DRIFT_SOFTMAX_SAFE || o->normalise_after)
            return drift_cuda_fail(
                DRIFT_EUNSUPPORTED, "attention on the GPU: standard takes the safe softmax, normalised before P.V");
        if (!attn_device_format(o->qk.out))
            return drift_cuda_fail(DRIFT_EUNSUPPORTED,
                "attention on the GPU: standard's qk.out must be fp32, bf16 or fp16, not %s",
                drift_format_name(o->qk.out));
    }
    size_t rows = nq * (size_t)o->heads;
    if (nq > (size_t)INT_MAX || rows / (size_t)o->heads != nq || rows > (size_t)INT_MAX || kv->len > (size_t)INT_MAX)
        return drift_cuda_fail(DRIFT_EUNSUPPORTED,
            "attention on the GPU: %zu queries x %d heads over %zu keys is too large", nq, o->heads, kv->len);
    return DRIFT_OK;
}
