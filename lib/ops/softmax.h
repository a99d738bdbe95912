/* softmax.h — softmax, log-softmax and log-sum-exp as GPU kernels compute them, in every lab
 * format, with an explicit accumulator, sum order and exponential; plus the correctly
 * rounded references.
 *
 * A variant is data: the spec strings
 *   naive      e_i = exp(x_i); s = sum e_i; p_i = e_i / s            (no max: overflows)
 *   safe       m = max x; e_i = exp(x_i - m); s = sum e_i; p_i = e_i / s   (two passes)
 *   online     one pass (Milakov & Gimelshein 2018): for each i, m' = max(m, x_i),
 *              d = d * exp(m - m') + exp(x_i - m'); then p_i = exp(x_i - m) / d
 *   online:B   the same recurrence over blocks of B as inside FlashAttention-2: per block,
 *              m' = max(m, block max), alpha = exp(m - m'), r = sum over the block of
 *              exp(x_i - m') (in the sum order), d = d * alpha + r (fma or not, as
 *              acc.fma); then p_i = exp(x_i - m) / d. online is exactly online:1.
 *
 * Arithmetic (every step rounded once, nearest-even unless acc.mode says otherwise, to the
 * accumulator format A = acc.acc):
 *   - the logits are rounded (RNE) to the input format `in` first;
 *   - max is exact; differences t = x_i - m, products and quotients are rounded to A;
 *   - sums of exponentials follow `order` (lib/core/order.h, any spec but tc) in A;
 *     online:B sums each block in `order` (online's blocks hold one term, so for it the
 *     order is moot: the recurrence is the order);
 *   - p_i = round_out(round_A(e_i / s));
 *   - the exponential (`exp` option):
 *       DRIFT_EXP_EXPF (the default): e = round_A(expf(round_A(x - m))), where expf is the
 *         CORRECTLY ROUNDED fp32 exponential (fp64 exp when A is fp64) — what CUDA's expf
 *         promises to within 2 ulp, made exact here so results are bit-reproducible on
 *         every machine. We do NOT rely on the C library: glibc 2.36's expf is faithful
 *         (0.502 ulp), not correctly rounded. drift_kexp evaluates glibc's double exp
 *         (error < 1 ulp of double, glibc's documented bound), rounds it to the target
 *         format, and accepts it only when the whole +-2 ulp(double) interval rounds to
 *         the same value (rounding is monotone); otherwise MPFR decides (Ziv). A and
 *         formats narrower than fp32 take the fp32 value rounded to A ("expf then round").
 *         For A = fp64 the same test runs on glibc's long double expl / exp2l / logl
 *         (x86-64's 64-bit significand, documented error <= 2 ulp, accepted 4 ulp away
 *         from a midpoint), and MPFR decides the rest (everywhere, without 80-bit long
 *         double). So the results depend on no libm's rounding, only on its error bound.
 *       DRIFT_EXP_EXP2: FlashAttention's form. c = round_A(scale * log2 e) (scale = 1 for
 *         plain softmax), ms = round_A(m * c), t = fma_A(x, c, -ms) (one rounding), and
 *         e = round_A(exp2f(t)) with a correctly rounded exp2 (as above). Rescales use
 *         exp2(round_A(round_A(m_old - m_new) * c)).
 *   - a temperature `scale` (default 1; attention passes 1/sqrt(d)): expf mode rounds
 *     x_i' = round_A(x_i * scale) first (skipped when scale == 1); exp2 mode folds it into c.
 *   - lg = round_A(log(s)) (log correctly rounded as above); log-sum-exp = round_out(
 *     round_A(m' + lg)) with m' = m (expf) or round_A(m * scale) (exp2; naive: m' = 0);
 *     log-softmax_i = round_out(round_A(t_i - lg)) with t_i = round_A(x_i' - m) (expf) or
 *     round_A(fma_A(x_i, c, -ms) * round_A(ln 2)) (exp2).
 *
 * Special rows (documented results, never NaN garbage):
 *   - n == 0 or every logit -inf ("fully masked"): every p_i = +0, log-sum-exp = -inf,
 *     log-softmax_i = -inf. Any row whose sum of exponentials is exactly 0 (e.g. naive
 *     with all logits below the format's exp underflow) gives p_i = +0 likewise, as
 *     FlashAttention-2 does (inv_sum = 1 when sum == 0).
 *   - -inf entries of a live row give p_i = +0.
 *   - A NaN logit, or exp overflow (naive in fp16 once a logit exceeds ~11.09), propagates
 *     as the kernel would: inf / inf = NaN. That is the cliff the experiments measure.
 *
 * Reference: drift_softmax_reference / drift_logsumexp_reference give the exact softmax of
 * the given doubles (no input rounding) correctly rounded to any format, by MPFR (Ziv),
 * with the special rows above (fully masked: zeros / -inf). */
#ifndef DRIFT_SOFTMAX_H
#define DRIFT_SOFTMAX_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "drift.h"
#include "format.h"
#include "order.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_SOFTMAX_NAIVE = 0, DRIFT_SOFTMAX_SAFE, DRIFT_SOFTMAX_ONLINE } drift_softmax_kind_t;

typedef struct {
    drift_softmax_kind_t kind;
    long block; /* online:B: B (>= 1); online: 1; 0 for naive and safe */
} drift_softmax_variant_t;

typedef enum { DRIFT_EXP_EXPF = 0, DRIFT_EXP_EXP2 } drift_exp_kind_t;

#define DRIFT_SOFTMAX_SPEC_MAX 32
#define DRIFT_SOFTMAX_BLOCK_MAX (1L << 30)
#define DRIFT_ERRMSG_MAX 256

/* Specs: naive | safe | online | online:B (B decimal 1 .. 2^30, no sign or leading zero).
 * 0, or DRIFT_EINVAL with a one-line reason in err (if err != NULL, errsz > 0), e.g.
 * "softmax variant 'online:0': block size must be an integer 1..1073741824". */
DRIFT_MUST_CHECK int drift_softmax_parse(drift_softmax_variant_t *v, const char *spec, char *err, size_t errsz);
int drift_softmax_print(char *buf, size_t size, const drift_softmax_variant_t *v); /* length or EINVAL */

typedef struct {
    drift_softmax_variant_t variant;
    drift_format_t in;   /* logits are rounded (RNE) to this first */
    drift_acc_t acc;     /* arithmetic format A, its rounding mode (not SR), fma for d*alpha+r */
    drift_order_t order; /* order of the sums of exponentials (not tc) */
    drift_format_t out;  /* probabilities (and log values) are rounded to this */
    drift_exp_kind_t exp;
    double scale; /* temperature: softmax(scale * x); finite, > 0 (1 by default) */
} drift_softmax_opts_t;

/* variant safe, order seq, acc (A, RNE, fma), out = in, exp expf, scale 1. */
drift_softmax_opts_t drift_softmax_opts(drift_format_t in, drift_format_t acc);

/* 0, or DRIFT_EINVAL / DRIFT_EUNSUPPORTED with the one-line reason in err. */
DRIFT_MUST_CHECK int drift_softmax_validate(const drift_softmax_opts_t *o, char *err, size_t errsz);

/* out[0..n) = softmax of x[0..n) (out may equal x). Returns 0, DRIFT_EINVAL (NULL with
 * n > 0, bad options: reason in err), DRIFT_ENOMEM. err may be NULL. */
DRIFT_MUST_CHECK int drift_softmax(
    double *out, const double *x, size_t n, const drift_softmax_opts_t *o, char *err, size_t errsz);
DRIFT_MUST_CHECK int drift_log_softmax(
    double *out, const double *x, size_t n, const drift_softmax_opts_t *o, char *err, size_t errsz);
/* *out = log sum exp x_i in format o->out (the variant decides how m and s are found). */
DRIFT_MUST_CHECK int drift_logsumexp(
    double *out, const double *x, size_t n, const drift_softmax_opts_t *o, char *err, size_t errsz);

/* The row as a kernel keeps it before normalising: e[i] = the exponentials (values of A)
 * relative to the final max *m (in x units; 0 for naive), *s = their sum (the online
 * recurrence's d for online variants). Fully masked rows: e = 0, *m = -inf, *s = 0.
 * Used by attention's standard path; softmax_i = round_out(round_A(e_i / s)). */
DRIFT_MUST_CHECK int drift_softmax_row(
    double *e, double *m, double *s, const double *x, size_t n, const drift_softmax_opts_t *o);

/* The kernel's elementary functions: the correctly rounded (RNE) value of exp(t), exp2(t),
 * log(t) for a double t, in format f; fp32 and narrower formats get the correctly rounded
 * fp32 value rounded again to f (a kernel's "expf then convert"); fp64 gets the correctly
 * rounded double. Special values as C99 (exp(-inf) = +0, log(0) = -inf, log(<0) = NaN). */
double drift_kexp(double t, drift_format_t f);
double drift_kexp2(double t, drift_format_t f);
double drift_klog(double t, drift_format_t f);

/* Inline fast path of drift_kexp / drift_kexp2 for fp32 (same results for every t): (float)y
 * of glibc's double y is the correctly rounded value unless y's 29 dropped bits lie within 2
 * of the midpoint pattern 2^28 (glibc's error is below 1 ulp of double), or the result is
 * not a normal float; then the out-of-line function decides. */
static inline int drift_kf32_decided(double y)
{
    if (!(y >= 0x1p-126 && y <= 0x1.fffffep127)) return 0;
    uint64_t u;
    memcpy(&u, &y, sizeof u);
    uint64_t low = u & ((UINT64_C(1) << 29) - 1), mid = UINT64_C(1) << 28;
    return (low > mid ? low - mid : mid - low) > 2;
}
static inline float drift_kexpf(float t)
{
    double y = exp((double)t);
    return drift_kf32_decided(y) ? (float)y : (float)drift_kexp((double)t, DRIFT_FP32);
}
static inline float drift_kexp2f(float t)
{
    double y = exp2((double)t);
    return drift_kf32_decided(y) ? (float)y : (float)drift_kexp2((double)t, DRIFT_FP32);
}

/* References (MPFR, Ziv's strategy; exact softmax of x as given, correctly rounded to f).
 * Fully masked rows (every x -inf, or n == 0): zeros / -inf. A NaN or +inf logit: NaN.
 * 0, DRIFT_EINVAL, DRIFT_ENOMEM or DRIFT_ERANGE (2048 bits did not decide). */
DRIFT_MUST_CHECK int drift_softmax_reference(double *out, const double *x, size_t n, drift_format_t f);
DRIFT_MUST_CHECK int drift_logsumexp_reference(double *out, const double *x, size_t n, drift_format_t f);

/* ---- kernel arithmetic: one correctly rounded step in a format, fast where it can be ----
 * path DRIFT_KPATH_F64: native double; F32: native float (operands must be fp32 values);
 * SMALL (p <= 24, RNE, operands values of formats of at most 24 bits): computed in double
 * and rounded once more, innocuous because 53 >= 2p + 2 for + - * / (products of two
 * 24-bit values are exact, so fma is drift_round_sum2 of the exact product); GENERIC:
 * drift_add / drift_mul / drift_fma in any mode. Same reasoning as lib/core/order.c. */
typedef enum { DRIFT_KPATH_GENERIC = 0, DRIFT_KPATH_F64, DRIFT_KPATH_F32, DRIFT_KPATH_SMALL } drift_kpath_t;
typedef struct {
    drift_format_t f;
    drift_mode_t mode;
    drift_kpath_t path;
} drift_karith_t;

/* wide: some operand may be an fp64 value that is not an fp32 value (then only fp64 RNE
 * is fast). */
static inline drift_karith_t drift_karith(drift_format_t f, drift_mode_t mode, int wide)
{
    drift_karith_t k = {f, mode, DRIFT_KPATH_GENERIC};
    if (mode != DRIFT_RNE) return k;
    if (f == DRIFT_FP64)
        k.path = DRIFT_KPATH_F64;
    else if (wide)
        k.path = DRIFT_KPATH_GENERIC;
#if FLT_EVAL_METHOD == 0
    else if (f == DRIFT_FP32)
        k.path = DRIFT_KPATH_F32;
#endif
    else
        k.path = DRIFT_KPATH_SMALL;
    return k;
}
static inline double drift_kadd(const drift_karith_t *k, double a, double b)
{
    switch (k->path) {
    case DRIFT_KPATH_F64: return a + b;
    case DRIFT_KPATH_F32: return (double)((float)a + (float)b);
    case DRIFT_KPATH_SMALL: return drift_rne(a + b, k->f);
    default: return drift_add(a, b, k->f, k->mode);
    }
}
static inline double drift_ksub(const drift_karith_t *k, double a, double b) { return drift_kadd(k, a, -b); }
static inline double drift_kmul(const drift_karith_t *k, double a, double b)
{
    switch (k->path) {
    case DRIFT_KPATH_F64: return a * b;
    case DRIFT_KPATH_F32: return (double)((float)a * (float)b);
    case DRIFT_KPATH_SMALL: return drift_rne(a * b, k->f);
    default: return drift_mul(a, b, k->f, k->mode);
    }
}
/* a * b + c rounded once */
static inline double drift_kfma(const drift_karith_t *k, double a, double b, double c)
{
    switch (k->path) {
    case DRIFT_KPATH_F64: return fma(a, b, c);
    case DRIFT_KPATH_F32: return (double)fmaf((float)a, (float)b, (float)c);
    case DRIFT_KPATH_SMALL: return drift_round_sum2(a * b, c, k->f, DRIFT_RNE);
    default: return drift_fma(a, b, c, k->f, k->mode);
    }
}
/* a / b correctly rounded to f in mode m (MPFR at 200 bits: a quotient of two doubles that
 * is not exactly a rounding boundary lies at least 2^-110 relatively away from one). */
double drift_kdiv_exact(double a, double b, drift_format_t f, drift_mode_t m);
static inline double drift_kdiv(const drift_karith_t *k, double a, double b)
{
    switch (k->path) {
    case DRIFT_KPATH_F64: return a / b;
    case DRIFT_KPATH_F32: return (double)((float)a / (float)b);
    case DRIFT_KPATH_SMALL: return drift_rne(a / b, k->f);
    default: return drift_kdiv_exact(a, b, k->f, k->mode);
    }
}

#ifdef __cplusplus
}
#endif

#endif
