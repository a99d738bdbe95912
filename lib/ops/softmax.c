/* softmax.c — softmax variants as kernels compute them (see softmax.h for the arithmetic). */
#include "softmax.h"

#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "drift.h"
#include "dispatch_order.h"
#include "exact.h"
#include "why.h"

/* ---- variants as data ------------------------------------------------------------- */

/* Decimal 1 .. max, no sign, blanks or leading zeros, nothing trailing. */
static int parse_count(long *out, const char *s, long max)
{
    if (!*s || *s == '0') return 0;
    long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return 0;
        if (v > (max - (*p - '0')) / 10) return 0;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return v >= 1;
}

int drift_softmax_parse(drift_softmax_variant_t *v, const char *spec, char *err, size_t errsz)
{
    if (!v || !spec) return drift_why(err, errsz, DRIFT_EINVAL, "softmax variant: missing");
    if (!strcmp(spec, "naive")) {
        *v = (drift_softmax_variant_t){DRIFT_SOFTMAX_NAIVE, 0};
        return 0;
    }
    if (!strcmp(spec, "safe")) {
        *v = (drift_softmax_variant_t){DRIFT_SOFTMAX_SAFE, 0};
        return 0;
    }
    if (!strcmp(spec, "online")) {
        *v = (drift_softmax_variant_t){DRIFT_SOFTMAX_ONLINE, 1};
        return 0;
    }
    if (!strncmp(spec, "online:", 7)) {
        long b;
        if (!parse_count(&b, spec + 7, DRIFT_SOFTMAX_BLOCK_MAX))
            return drift_why(err, errsz, DRIFT_EINVAL, "softmax variant '%s': block size must be an integer 1..%ld",
                spec, DRIFT_SOFTMAX_BLOCK_MAX);
        *v = (drift_softmax_variant_t){DRIFT_SOFTMAX_ONLINE, b};
        return 0;
    }
    return drift_why(err, errsz, DRIFT_EINVAL, "softmax variant '%s': expected naive, safe, online or online:B", spec);
}

int drift_softmax_print(char *buf, size_t size, const drift_softmax_variant_t *v)
{
    if (!buf || !v) return DRIFT_EINVAL;
    int n;
    switch (v->kind) {
    case DRIFT_SOFTMAX_NAIVE: n = snprintf(buf, size, "naive"); break;
    case DRIFT_SOFTMAX_SAFE: n = snprintf(buf, size, "safe"); break;
    case DRIFT_SOFTMAX_ONLINE:
        if (v->block < 1 || v->block > DRIFT_SOFTMAX_BLOCK_MAX) return DRIFT_EINVAL;
        n = v->block == 1 ? snprintf(buf, size, "online") : snprintf(buf, size, "online:%ld", v->block);
        break;
    default: return DRIFT_EINVAL;
    }
    return n >= 0 && (size_t)n < size ? n : DRIFT_EINVAL;
}

drift_softmax_opts_t drift_softmax_opts(drift_format_t in, drift_format_t acc)
{
    drift_softmax_opts_t o;
    memset(&o, 0, sizeof o);
    o.variant = (drift_softmax_variant_t){DRIFT_SOFTMAX_SAFE, 0};
    o.in = in;
    o.acc = (drift_acc_t){acc, DRIFT_RNE, 1};
    o.order = (drift_order_t){DRIFT_ORDER_SEQ, 0, 0, 0, DRIFT_TC_V100};
    o.out = in;
    o.exp = DRIFT_EXP_EXPF;
    o.scale = 1.0;
    return o;
}

static int format_ok(drift_format_t f) { return (int)f >= 0 && f < DRIFT_NFORMATS; }

int drift_softmax_validate(const drift_softmax_opts_t *o, char *err, size_t errsz)
{
    if (!o) return drift_why(err, errsz, DRIFT_EINVAL, "softmax options: missing");
    if (!format_ok(o->in) || !format_ok(o->out) || !format_ok(o->acc.acc))
        return drift_why(err, errsz, DRIFT_EINVAL,
            "softmax options: unknown format (accepted: fp64 fp32 tf32 fp16 bf16 fp8e4m3 fp8e5m2)");
    if ((int)o->acc.mode < 0 || o->acc.mode >= DRIFT_NMODES || o->acc.mode == DRIFT_SR)
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
            "softmax options: accumulator rounding must be rne, rz, rna, ru or rd (not sr)");
    char buf[DRIFT_ORDER_SPEC_MAX];
    if (drift_order_print(buf, sizeof buf, &o->order) < 0)
        return drift_why(err, errsz, DRIFT_EINVAL, "softmax options: invalid sum order");
    char why[DRIFT_ERRMSG_MAX];
    int rc = drift_order_sum_check(&o->order, "a sum of exponentials", why, sizeof why);
    if (rc) return drift_why(err, errsz, rc, "softmax options: %s", why);
    if (drift_softmax_print(buf, sizeof buf, &o->variant) < 0)
        return drift_why(err, errsz, DRIFT_EINVAL,
            "softmax options: invalid variant (accepted: naive, safe, online, online:B with B 1..%ld)",
            DRIFT_SOFTMAX_BLOCK_MAX);
    if (o->exp != DRIFT_EXP_EXPF && o->exp != DRIFT_EXP_EXP2)
        return drift_why(err, errsz, DRIFT_EINVAL, "softmax options: exp must be expf or exp2");
    if (!(o->scale > 0) || !isfinite(o->scale))
        return drift_why(err, errsz, DRIFT_EINVAL, "softmax options: scale must be finite and > 0");
    return 0;
}

/* ---- correctly rounded elementary functions ----------------------------------------- */

typedef int (*mpfr_fn_t)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

/* f(t) correctly rounded (RNE) to format f by Ziv: MPFR at 64, 128, ... bits; the exact
 * value lies within 2^(EXP(y) - prec) of y (half an ulp of y); when both ends of that
 * interval round to the same value, every value between does (monotone rounding). */
static double mpfr_cr(mpfr_fn_t fn, double t, drift_format_t f)
{
    mpfr_t x, y, lo, hi, eps;
    mpfr_init2(x, 53);
    mpfr_set_d(x, t, MPFR_RNDN);
    double r = NAN;
    for (mpfr_prec_t w = 64; w <= 2048; w *= 2) {
        mpfr_init2(y, w);
        int tern = fn(y, x, MPFR_RNDN);
        if (tern == 0 || !mpfr_number_p(y) || mpfr_zero_p(y)) {
            r = drift_mpfr_to_format(y, f, DRIFT_RNE);
            mpfr_clear(y);
            break;
        }
        mpfr_inits2(w + 2, lo, hi, eps, (mpfr_ptr)0);
        mpfr_set_ui_2exp(eps, 1, mpfr_get_exp(y) - w, MPFR_RNDN);
        mpfr_sub(lo, y, eps, MPFR_RNDN);
        mpfr_add(hi, y, eps, MPFR_RNDN);
        double rl = drift_mpfr_to_format(lo, f, DRIFT_RNE), rh = drift_mpfr_to_format(hi, f, DRIFT_RNE);
        mpfr_clears(lo, hi, eps, y, (mpfr_ptr)0);
        if (rl == rh && signbit(rl) == signbit(rh)) {
            r = rl;
            break;
        }
    }
    mpfr_clear(x);
    return r;
}

/* y = glibc's double approximation of a real v (error < 1 ulp of double: the bound glibc
 * documents for exp, exp2 and log on x86_64). Accept round_fp32(y) when every value within
 * 2 ulp(double) of y rounds alike (rounding is monotone, so v does too). Fast test: for a
 * normal fp32 result, (float)y is decided unless y's 29 dropped bits lie within 2 of the
 * midpoint pattern 2^28; elsewhere (subnormal, overflow) round both ends of the interval. */
static int guard_ok(double *out, double y)
{
    if (isnan(y)) return 0;
    double ay = fabs(y);
    if (ay >= 0x1p-126 && ay <= 0x1.fffffep127) {
        if (!drift_kf32_decided(ay)) return 0;
        *out = (double)(float)y;
        return 1;
    }
    double lo = nextafter(nextafter(y, -INFINITY), -INFINITY);
    double hi = nextafter(nextafter(y, INFINITY), INFINITY);
    double rl = drift_rne(lo, DRIFT_FP32), rh = drift_rne(hi, DRIFT_FP32);
    if (rl != rh || signbit(rl) != signbit(rh)) return 0;
    *out = rl;
    return 1;
}

/* The same for a double result from a long double approximation y (x86-64's 80-bit format:
 * 64 significant bits, 11 below double's; glibc documents at most 1-2 ulp for expl, exp2l
 * and logl): decided unless the 11 dropped bits lie within 4 of the midpoint 2^10, or the
 * result leaves double's normal range. Without an 80-bit long double: never (MPFR decides). */
static int guard_ld(double *out, long double y)
{
#if LDBL_MANT_DIG == 64
    long double ay = fabsl(y);
    if (!(ay >= (long double)DBL_MIN && ay <= (long double)DBL_MAX)) return 0;
    int e;
    long double m = frexpl(ay, &e);         /* m in [1/2, 1): 64 bits */
    uint64_t sig = (uint64_t)ldexpl(m, 64); /* exact */
    uint64_t low = sig & 0x7ff;
    if ((low > 0x400 ? low - 0x400 : 0x400 - low) <= 4) return 0;
    *out = (double)y; /* the conversion rounds to nearest even */
    return 1;
#else
    (void)out;
    (void)y;
    return 0;
#endif
}

double drift_kexp(double t, drift_format_t f)
{
    if (isnan(t)) return t;
    if (t == -INFINITY) return 0.0;
    double r;
    if (f == DRIFT_FP64) {
        if (t == 0) return 1.0;
        if (guard_ld(&r, expl((long double)t))) return r;
        return drift_exact_exp(&r, t) ? NAN : r;
    }
    /* exp(t) < 2^-288 for t < -200: below half fp32's smallest subnormal (2^-150) */
    if (t < -200)
        r = 0.0;
    else if (t > 200)
        r = INFINITY;
    else if (!guard_ok(&r, exp(t)))
        r = mpfr_cr(mpfr_exp, t, DRIFT_FP32);
    return f == DRIFT_FP32 ? r : drift_rne(r, f);
}

double drift_kexp2(double t, drift_format_t f)
{
    if (isnan(t)) return t;
    if (t == -INFINITY) return 0.0;
    double r;
    if (f == DRIFT_FP64) {
        if (t == rint(t) && fabs(t) < 1000) return ldexp(1.0, (int)t); /* exact (or an exact subnormal / 0) */
        if (guard_ld(&r, exp2l((long double)t))) return r;
        return mpfr_cr(mpfr_exp2, t, DRIFT_FP64);
    }
    if (t < -300)
        r = 0.0;
    else if (t > 300)
        r = INFINITY;
    else if (!guard_ok(&r, exp2(t)))
        r = mpfr_cr(mpfr_exp2, t, DRIFT_FP32);
    return f == DRIFT_FP32 ? r : drift_rne(r, f);
}

double drift_klog(double t, drift_format_t f)
{
    if (isnan(t) || t < 0) return NAN;
    if (t == 0) return -INFINITY;
    if (t == INFINITY) return INFINITY;
    if (t == 1) return 0.0;
    double r;
    if (f == DRIFT_FP64) {
        if (guard_ld(&r, logl((long double)t))) return r;
        return mpfr_cr(mpfr_log, t, DRIFT_FP64);
    }
    if (!guard_ok(&r, log(t))) r = mpfr_cr(mpfr_log, t, DRIFT_FP32);
    return f == DRIFT_FP32 ? r : drift_rne(r, f);
}

double drift_kdiv_exact(double a, double b, drift_format_t f, drift_mode_t m)
{
    mpfr_t q, x, y;
    mpfr_inits2(200, q, (mpfr_ptr)0);
    mpfr_inits2(53, x, y, (mpfr_ptr)0);
    mpfr_set_d(x, a, MPFR_RNDN);
    mpfr_set_d(y, b, MPFR_RNDN);
    mpfr_div(q, x, y, MPFR_RNDN);
    double r = drift_mpfr_to_format(q, f, m);
    mpfr_clears(q, x, y, (mpfr_ptr)0);
    return r;
}

/* ---- the row ----------------------------------------------------------------------- */

typedef struct {
    drift_karith_t k; /* arithmetic in A */
    drift_format_t A;
    drift_exp_kind_t exp;
    double c;  /* exp2: round_A(scale * log2 e) */
    double ms; /* exp2: round_A(m * c) for the current m */
} rowctx_t;

static void set_max(rowctx_t *r, double m)
{
    if (r->exp == DRIFT_EXP_EXP2) r->ms = drift_kmul(&r->k, m, r->c);
}

/* exp(x - m) for the current m, x a value of A's inputs (x may be -inf: 0). */
static inline double e_of(const rowctx_t *r, double x, double m)
{
    if (x == -INFINITY) return 0.0;
    if (r->exp == DRIFT_EXP_EXP2) return drift_kexp2(drift_kfma(&r->k, x, r->c, -r->ms), r->A);
    return drift_kexp(drift_ksub(&r->k, x, m), r->A);
}

/* alpha = exp(m_old - m_new), m_old finite. */
static inline double rescale(const rowctx_t *r, double m_old, double m_new)
{
    double d = drift_ksub(&r->k, m_old, m_new);
    if (r->exp == DRIFT_EXP_EXP2) return drift_kexp2(drift_kmul(&r->k, d, r->c), r->A);
    return drift_kexp(d, r->A);
}

static double max_of(const double *x, size_t n)
{
    double m = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (x[i] > m || isnan(x[i])) m = isnan(m) ? m : x[i];
    return m;
}

/* xr = the kernel's view of the logits: rounded to in, then (expf mode) times scale. */
static void load(double *xr, const double *x, size_t n, const drift_softmax_opts_t *o, const rowctx_t *r)
{
    for (size_t i = 0; i < n; i++) xr[i] = o->in == DRIFT_FP64 ? x[i] : drift_rne(x[i], o->in);
    if (o->exp == DRIFT_EXP_EXPF && o->scale != 1.0) {
        double sc = o->acc.acc == DRIFT_FP64 ? o->scale : drift_rne(o->scale, o->acc.acc);
        for (size_t i = 0; i < n; i++) xr[i] = drift_kmul(&r->k, xr[i], sc);
    }
}

static rowctx_t make_ctx(const drift_softmax_opts_t *o)
{
    rowctx_t r;
    int wide = o->in == DRIFT_FP64 || o->out == DRIFT_FP64;
    r.k = drift_karith(o->acc.acc, o->acc.mode, wide);
    r.A = o->acc.acc;
    r.exp = o->exp;
    /* scale * log2 e in double, rounded once to A: the host-side float constant of FA2 */
    r.c = drift_round(o->scale * 1.4426950408889634, o->acc.acc, &(drift_round_opts_t){o->acc.mode, 0, 0}, 0);
    r.ms = 0;
    return r;
}

/* e (values of A), m and s of the row xr (already loaded). */
static int row_core(
    double *e, double *m_out, double *s_out, const double *xr, size_t n, const drift_softmax_opts_t *o, rowctx_t *r)
{
    double m = -INFINITY, s = 0;
    int st = 0;
    switch (o->variant.kind) {
    case DRIFT_SOFTMAX_NAIVE:
        m = 0;
        set_max(r, 0);
        for (size_t i = 0; i < n; i++)
            e[i] = xr[i] == -INFINITY ? 0.0
                                      : (r->exp == DRIFT_EXP_EXP2 ? drift_kexp2(drift_kmul(&r->k, xr[i], r->c), r->A)
                                                                  : drift_kexp(xr[i], r->A));
        st = drift_sum(&s, e, n, &o->order, &o->acc);
        break;
    case DRIFT_SOFTMAX_SAFE:
        m = max_of(xr, n);
        if (m == -INFINITY) break;
        set_max(r, m);
        for (size_t i = 0; i < n; i++) e[i] = e_of(r, xr[i], m);
        st = drift_sum(&s, e, n, &o->order, &o->acc);
        break;
    case DRIFT_SOFTMAX_ONLINE: {
        size_t B = (size_t)o->variant.block;
        for (size_t b0 = 0; b0 < n; b0 += B) {
            size_t len = n - b0 < B ? n - b0 : B;
            double bm = max_of(xr + b0, len);
            double mn = bm > m || isnan(bm) ? bm : m;
            if (mn == -INFINITY) continue; /* nothing live yet: d stays 0 */
            double alpha = m == -INFINITY ? 0.0 : rescale(r, m, mn);
            set_max(r, mn);
            for (size_t i = 0; i < len; i++) e[b0 + i] = e_of(r, xr[b0 + i], mn);
            double rs;
            if ((st = drift_sum(&rs, e + b0, len, &o->order, &o->acc))) break;
            s = o->acc.fma ? drift_kfma(&r->k, s, alpha, rs) : drift_kadd(&r->k, drift_kmul(&r->k, s, alpha), rs);
            m = mn;
        }
        if (st || m == -INFINITY) break;
        set_max(r, m);
        for (size_t i = 0; i < n; i++) e[i] = e_of(r, xr[i], m);
        break;
    }
    }
    if (m == -INFINITY) { /* fully masked */
        for (size_t i = 0; i < n; i++) e[i] = 0.0;
        s = 0;
    }
    *m_out = m;
    *s_out = s;
    return st;
}

int drift_softmax_row(double *e, double *m, double *s, const double *x, size_t n, const drift_softmax_opts_t *o)
{
    int st = drift_softmax_validate(o, NULL, 0);
    if (st) return st;
    if (!m || !s || (n && (!e || !x))) return DRIFT_EINVAL;
    rowctx_t r = make_ctx(o);
    if (e != x) memcpy(e, x, n * sizeof *e);
    load(e, e, n, o, &r);
    return row_core(e, m, s, e, n, o, &r);
}

typedef enum { WANT_P, WANT_LOGP, WANT_LSE } want_t;

static int run(
    double *out, const double *x, size_t n, const drift_softmax_opts_t *o, char *err, size_t errsz, want_t want)
{
    int st = drift_softmax_validate(o, err, errsz);
    if (st) return st;
    if (!out || (n && !x)) return drift_why(err, errsz, DRIFT_EINVAL, "softmax: NULL buffer");
    if (n > SIZE_MAX / (2 * sizeof(double)))
        return drift_why(err, errsz, DRIFT_ENOMEM, "softmax: n = %zu cannot fit", n);
    double *xr = malloc((n ? n : 1) * 2 * sizeof *xr);
    if (!xr) return drift_why(err, errsz, DRIFT_ENOMEM, "softmax: out of memory for n = %zu", n);
    double *e = xr + n;
    rowctx_t r = make_ctx(o);
    load(xr, x, n, o, &r);
    double m, s;
    if ((st = row_core(e, &m, &s, xr, n, o, &r))) {
        free(xr);
        return drift_why(err, errsz, st, "softmax: sum failed: %s", drift_strerror(st));
    }
    const drift_karith_t *k = &r.k;
    if (want == WANT_P) {
        for (size_t i = 0; i < n; i++) {
            double p = s == 0 ? 0.0 : drift_kdiv(k, e[i], s);
            out[i] = drift_round(p, o->out, NULL, 0);
        }
    } else {
        double lg = drift_klog(s, r.A);
        double mm = m;
        if (o->variant.kind == DRIFT_SOFTMAX_NAIVE)
            mm = 0;
        else if (o->exp == DRIFT_EXP_EXP2 && m != -INFINITY && o->scale != 1.0)
            mm = drift_kmul(k, m, drift_round(o->scale, r.A, NULL, 0));
        if (want == WANT_LSE) {
            *out = drift_round(s == 0 ? -INFINITY : drift_kadd(k, mm, lg), o->out, NULL, 0);
        } else {
            double ln2 = drift_round(0.6931471805599453, r.A, NULL, 0);
            set_max(&r, m);
            for (size_t i = 0; i < n; i++) {
                double v;
                if (s == 0 || xr[i] == -INFINITY)
                    v = -INFINITY;
                else if (o->exp == DRIFT_EXP_EXP2) {
                    double t = o->variant.kind == DRIFT_SOFTMAX_NAIVE ? drift_kmul(k, xr[i], r.c)
                                                                      : drift_kfma(k, xr[i], r.c, -r.ms);
                    v = drift_ksub(k, drift_kmul(k, t, ln2), lg);
                } else {
                    double t = o->variant.kind == DRIFT_SOFTMAX_NAIVE ? xr[i] : drift_ksub(k, xr[i], m);
                    v = drift_ksub(k, t, lg);
                }
                out[i] = drift_round(v, o->out, NULL, 0);
            }
        }
    }
    free(xr);
    return 0;
}

int drift_softmax(double *out, const double *x, size_t n, const drift_softmax_opts_t *o, char *err, size_t errsz)
{
    return run(out, x, n, o, err, errsz, WANT_P);
}

int drift_log_softmax(double *out, const double *x, size_t n, const drift_softmax_opts_t *o, char *err, size_t errsz)
{
    return run(out, x, n, o, err, errsz, WANT_LOGP);
}

int drift_logsumexp(double *out, const double *x, size_t n, const drift_softmax_opts_t *o, char *err, size_t errsz)
{
    return run(out, x, n, o, err, errsz, WANT_LSE);
}

/* ---- references ---------------------------------------------------------------------- */

/* With w-bit MPFR arithmetic: e_j = exp(x_j - m) (relative error 2^-w each, x_j - m is
 * computed exactly at w >= 2100 bits... it is not in general, so it is rounded too: its
 * absolute error 2^-w |x_j - m| turns into a relative error of the exponential of the same
 * size), the sum adds n roundings of relative size 2^-w, the quotient one more. With
 * |x_j - m| <= 2^11 (larger gaps give terms below e^-2048, kept anyway) the relative error
 * of every p_i is below (n + 2^12 + 4) 2^-w; err = w - ceil(log2(n + 2^12 + 4)) - 1. */
static int ref_run(double *out, const double *x, size_t n, drift_format_t f, int lse)
{
    if (!out || (n && !x) || !format_ok(f)) return DRIFT_EINVAL;
    double m = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]) || x[i] == INFINITY) {
            if (lse)
                *out = NAN;
            else
                for (size_t j = 0; j < n; j++) out[j] = NAN;
            return 0;
        }
        if (x[i] > m) m = x[i];
    }
    if (m == -INFINITY) {
        if (lse)
            *out = -INFINITY;
        else
            for (size_t j = 0; j < n; j++) out[j] = 0.0;
        return 0;
    }
    int lgn = 1;
    while (lgn < 62 && ((size_t)1 << lgn) < n + 4096 + 4) lgn++;
    mpfr_t *e = malloc(n * sizeof *e);
    unsigned char *todo = malloc(n + 1);
    if (!e || !todo) {
        free(e);
        free(todo);
        return DRIFT_ENOMEM;
    }
    size_t left = lse ? 1 : n;
    for (size_t i = 0; i < n; i++) {
        todo[i] = !lse;
        if (!lse && x[i] == -INFINITY) {
            out[i] = 0.0;
            todo[i] = 0;
            left--;
        }
    }
    mpfr_t s, q, d, lo, hi, eps;
    for (mpfr_prec_t w = 128; w <= 4096 && left; w *= 2) {
        for (size_t i = 0; i < n; i++) mpfr_init2(e[i], w);
        mpfr_inits2(w, s, q, d, (mpfr_ptr)0);
        mpfr_inits2(w + 2, lo, hi, eps, (mpfr_ptr)0);
        mpfr_set_zero(s, 1);
        for (size_t i = 0; i < n; i++) {
            if (x[i] == -INFINITY) {
                mpfr_set_zero(e[i], 1);
                continue;
            }
            mpfr_set_d(d, x[i], MPFR_RNDN);
            mpfr_sub_d(d, d, m, MPFR_RNDN);
            mpfr_exp(e[i], d, MPFR_RNDN);
            mpfr_add(s, s, e[i], MPFR_RNDN);
        }
        mpfr_exp_t err = w - lgn - 1;
        for (size_t i = 0; i < (lse ? 1 : n); i++) {
            if (!todo[i] && !lse) continue;
            if (lse) {
                /* log s + m: s in [1, n]: the absolute error of log s is the relative error
                 * of s; adding m (exact at w bits once |m| < 2^(w-60)) keeps it absolute. */
                mpfr_log(q, s, MPFR_RNDN);
                mpfr_add_d(q, q, m, MPFR_RNDN);
                if (mpfr_zero_p(q)) {
                    *out = 0.0; /* log s = -m exactly only for s = 1, m = 0 */
                    left = 0;
                    break;
                }
                mpfr_set_ui_2exp(eps, 1, -(mpfr_exp_t)(w - lgn - 1 - 4), MPFR_RNDN);
            } else {
                mpfr_div(q, e[i], s, MPFR_RNDN);
                if (mpfr_zero_p(q)) {
                    out[i] = 0.0;
                    todo[i] = 0;
                    left--;
                    continue;
                }
                mpfr_set_ui_2exp(eps, 1, mpfr_get_exp(q) - err, MPFR_RNDN);
            }
            mpfr_sub(lo, q, eps, MPFR_RNDN);
            mpfr_add(hi, q, eps, MPFR_RNDN);
            double rl = drift_mpfr_to_format(lo, f, DRIFT_RNE), rh = drift_mpfr_to_format(hi, f, DRIFT_RNE);
            if (rl == rh && signbit(rl) == signbit(rh)) {
                if (lse)
                    *out = rl;
                else {
                    out[i] = rl;
                    todo[i] = 0;
                }
                left--;
            }
        }
        for (size_t i = 0; i < n; i++) mpfr_clear(e[i]);
        mpfr_clears(s, q, d, lo, hi, eps, (mpfr_ptr)0);
    }
    free(e);
    free(todo);
    return left ? DRIFT_ERANGE : 0;
}

int drift_softmax_reference(double *out, const double *x, size_t n, drift_format_t f)
{
    return ref_run(out, x, n, f, 0);
}

int drift_logsumexp_reference(double *out, const double *x, size_t n, drift_format_t f)
{
    return ref_run(out, x, n, f, 1);
}
