/* test_softmax.c — every softmax variant against an independent scalar emulation, and the
 * MPFR references against independent high-precision computations.
 *
 * The emulation is written from softmax.h's documented semantics in plain C float
 * arithmetic (the accumulator A = fp32, so every step is one IEEE binary32 operation,
 * fmaf where the header says fma), with its own correctly rounded expf/exp2f (MPFR at 200
 * bits, then mpfr_get_flt: a double rounding at 200 bits cannot matter for a binary32
 * result that is not exactly a midpoint, and exp of a nonzero float never is) and its own
 * input rounding (_Float16 conversion for fp16, the round-half-even bit trick for bf16).
 * Every comparison is bit-for-bit: the library claims exact-once arithmetic. */
#include <criterion/criterion.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "exact.h"
#include "philox.h"
#include "softmax.h"

/* ---- the emulation ------------------------------------------------------------------- */

static float em_exp(float t, int base2)
{
    if (t == -INFINITY) return 0.0f;
    mpfr_t x, y;
    mpfr_inits2(200, x, y, (mpfr_ptr)0);
    mpfr_set_flt(x, t, MPFR_RNDN);
    if (base2)
        mpfr_exp2(y, x, MPFR_RNDN);
    else
        mpfr_exp(y, x, MPFR_RNDN);
    float r = mpfr_get_flt(y, MPFR_RNDN);
    mpfr_clears(x, y, (mpfr_ptr)0);
    return r;
}

static float bf16_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

static float to_fmt(float x, drift_format_t f)
{
    if (f == DRIFT_FP16) return (float)(_Float16)x;
    if (f == DRIFT_BF16) return bf16_of(x);
    return x; /* fp32 */
}

typedef struct {
    int kind; /* 0 naive, 1 safe, 2 online:B */
    long B;
    int base2;    /* exp2 mode */
    int pairwise; /* sum order pairwise instead of seq (naive, safe, online blocks) */
} em_t;

static float em_sum(const float *e, size_t n, int pairwise)
{
    if (n == 0) return 0.0f;
    if (!pairwise) {
        float s = e[0];
        for (size_t i = 1; i < n; i++) s += e[i];
        return s;
    }
    if (n == 1) return e[0];
    size_t m = n / 2;
    return em_sum(e, m, 1) + em_sum(e + m, n - m, 1);
}

static const float L2E = 1.44269504f; /* log2 e rounded to fp32 */

static float em_e(const em_t *v, float x, float m)
{
    if (x == -INFINITY) return 0.0f;
    if (v->base2) return em_exp(fmaf(x, L2E, -(m * L2E)), 1);
    return em_exp(x - m, 0);
}

/* p = softmax(x) with A = fp32, out = in (fixed in the callers). */
static void emulate(float *p, const float *xin, size_t n, drift_format_t in, const em_t *v)
{
    float *x = malloc(n * sizeof *x), *e = malloc(n * sizeof *e);
    for (size_t i = 0; i < n; i++) x[i] = to_fmt(xin[i], in);
    float m = -INFINITY, s = 0;
    if (v->kind == 0) {
        m = 0;
        for (size_t i = 0; i < n; i++)
            e[i] = x[i] == -INFINITY ? 0.0f : (v->base2 ? em_exp(x[i] * L2E, 1) : em_exp(x[i], 0));
        s = em_sum(e, n, v->pairwise);
    } else if (v->kind == 1) {
        for (size_t i = 0; i < n; i++) m = fmaxf(m, x[i]);
        if (m != -INFINITY) {
            for (size_t i = 0; i < n; i++) e[i] = em_e(v, x[i], m);
            s = em_sum(e, n, v->pairwise);
        }
    } else {
        for (size_t b = 0; b < n; b += (size_t)v->B) {
            size_t len = n - b < (size_t)v->B ? n - b : (size_t)v->B;
            float bm = -INFINITY;
            for (size_t i = 0; i < len; i++) bm = fmaxf(bm, x[b + i]);
            float mn = fmaxf(m, bm);
            if (mn == -INFINITY) continue;
            float alpha = m == -INFINITY ? 0.0f : (v->base2 ? em_exp((m - mn) * L2E, 1) : em_exp(m - mn, 0));
            for (size_t i = 0; i < len; i++) e[b + i] = em_e(v, x[b + i], mn);
            s = fmaf(s, alpha, em_sum(e + b, len, v->pairwise));
            m = mn;
        }
        if (m != -INFINITY)
            for (size_t i = 0; i < n; i++) e[i] = em_e(v, x[i], m);
    }
    for (size_t i = 0; i < n; i++) p[i] = (m == -INFINITY || s == 0) ? 0.0f : to_fmt(e[i] / s, in);
    free(x);
    free(e);
}

/* ---- inputs ------------------------------------------------------------------------- */

enum { RANDOM, ALL_EQUAL, ONE_HUGE, MASKED, FULLY_MASKED, NCASES };
static const char *case_name[] = {"random", "all-equal", "one-huge", "masked", "fully-masked"};

static void make_case(float *x, size_t n, int c, uint64_t seed)
{
    drift_stream_t st;
    drift_stream_init(&st, seed, 10, (uint32_t)c, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        float r = (float)(3.0 * drift_stream_normal(&st));
        switch (c) {
        case RANDOM: x[i] = r; break;
        case ALL_EQUAL: x[i] = 2.5f; break;
        case ONE_HUGE: x[i] = i == n / 3 ? 3.0e4f : r; break;
        case MASKED: x[i] = drift_stream_below(&st, 3) == 0 ? -INFINITY : r; break;
        default: x[i] = -INFINITY;
        }
    }
}

static void check_variant(const char *spec, em_t v)
{
    static const drift_format_t fmts[] = {DRIFT_FP32, DRIFT_BF16, DRIFT_FP16};
    static const size_t sizes[] = {1, 7, 300};
    for (int b2 = 0; b2 < 2; b2++)
        for (int pw = 0; pw < 2; pw++)
            for (int fi = 0; fi < 3; fi++)
                for (int si = 0; si < 3; si++)
                    for (int c = 0; c < NCASES; c++) {
                        size_t n = sizes[si];
                        drift_format_t in = fmts[fi];
                        if (c == ONE_HUGE && in == DRIFT_FP16)
                            continue; /* 3e4 fits fp16 but keep it simple: covered by fp32/bf16 */
                        float x[300], pe[300];
                        double xd[300], pl[300];
                        make_case(x, n, c, 1);
                        for (size_t i = 0; i < n; i++) xd[i] = x[i];
                        v.base2 = b2;
                        v.pairwise = pw;
                        emulate(pe, x, n, in, &v);
                        drift_softmax_opts_t o = drift_softmax_opts(in, DRIFT_FP32);
                        char err[DRIFT_ERRMSG_MAX];
                        cr_assert_eq(drift_softmax_parse(&o.variant, spec, err, sizeof err), 0);
                        o.exp = b2 ? DRIFT_EXP_EXP2 : DRIFT_EXP_EXPF;
                        if (pw) cr_assert_eq(drift_order_parse(&o.order, "pairwise"), 0);
                        cr_assert_eq(drift_softmax(pl, xd, n, &o, err, sizeof err), 0, "%s", err);
                        for (size_t i = 0; i < n; i++)
                            cr_assert((isnan(pl[i]) && isnan(pe[i])) ||
                                          (pl[i] == (double)pe[i] && signbit(pl[i]) == signbit(pe[i])),
                                "%s %s %s n=%zu %s pairwise=%d i=%zu: lib %a emu %a", spec, drift_format_name(in),
                                b2 ? "exp2" : "expf", n, case_name[c], pw, i, pl[i], (double)pe[i]);
                    }
}

Test(softmax, naive_matches_emulation) { check_variant("naive", (em_t){0, 0, 0, 0}); }
Test(softmax, safe_matches_emulation) { check_variant("safe", (em_t){1, 0, 0, 0}); }
Test(softmax, online_matches_emulation) { check_variant("online", (em_t){2, 1, 0, 0}); }
Test(softmax, online_blocked_matches_emulation) { check_variant("online:64", (em_t){2, 64, 0, 0}); }
Test(softmax, online_blocked_partial_block) { check_variant("online:5", (em_t){2, 5, 0, 0}); }

/* Fully masked rows: zeros, lse -inf, log-softmax -inf (softmax.h), for every variant. */
Test(softmax, fully_masked_rows_documented)
{
    const char *specs[] = {"naive", "safe", "online", "online:4"};
    double x[5] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY}, p[5], lse;
    for (int k = 0; k < 4; k++)
        for (int e = 0; e < 2; e++) {
            drift_softmax_opts_t o = drift_softmax_opts(DRIFT_BF16, DRIFT_FP32);
            cr_assert_eq(drift_softmax_parse(&o.variant, specs[k], NULL, 0), 0);
            o.exp = e ? DRIFT_EXP_EXP2 : DRIFT_EXP_EXPF;
            cr_assert_eq(drift_softmax(p, x, 5, &o, NULL, 0), 0);
            for (int i = 0; i < 5; i++) cr_assert(p[i] == 0 && !signbit(p[i]), "%s p[%d] = %a", specs[k], i, p[i]);
            cr_assert_eq(drift_logsumexp(&lse, x, 5, &o, NULL, 0), 0);
            cr_assert(lse == -INFINITY);
            cr_assert_eq(drift_log_softmax(p, x, 5, &o, NULL, 0), 0);
            for (int i = 0; i < 5; i++) cr_assert(p[i] == -INFINITY);
        }
    cr_assert_eq(drift_logsumexp_reference(&lse, x, 5, DRIFT_FP64), 0);
    cr_assert(lse == -INFINITY);
}

/* exp(11) = 59874.1 < 65504 <= exp(11.1) = 66171.2: naive overflows an fp16 accumulator
 * between those logits (naive softmax's cliff), safe does not. */
Test(softmax, naive_fp16_overflow_cliff)
{
    double x[2] = {11.0, 0.0}, y[2] = {11.125, 0.0}, p[2];
    drift_softmax_opts_t o = drift_softmax_opts(DRIFT_FP16, DRIFT_FP16);
    cr_assert_eq(drift_softmax_parse(&o.variant, "naive", NULL, 0), 0);
    cr_assert_eq(drift_softmax(p, x, 2, &o, NULL, 0), 0);
    cr_assert(isfinite(p[0]) && p[0] > 0.99);
    cr_assert_eq(drift_softmax(p, y, 2, &o, NULL, 0), 0);
    cr_assert(isnan(p[0]), "inf / inf is NaN, as the kernel gives: %a", p[0]);
    cr_assert_eq(drift_softmax_parse(&o.variant, "safe", NULL, 0), 0);
    cr_assert_eq(drift_softmax(p, y, 2, &o, NULL, 0), 0);
    cr_assert(isfinite(p[0]) && p[0] > 0.99);
}

/* log-sum-exp and log-softmax in fp64 arithmetic against long double (64-bit significand):
 * the library's value is a few double roundings from the truth (sum of 50 terms: <= 50 u
 * relative to the sum, log adds u), the long double one 2^-11 times less; 64 ulp covers it. */
Test(softmax, logsumexp_and_log_softmax_fp64_near_long_double)
{
    float xf[50];
    double x[50], ls[50], lse;
    make_case(xf, 50, RANDOM, 7);
    for (int i = 0; i < 50; i++) x[i] = xf[i];
    drift_softmax_opts_t o = drift_softmax_opts(DRIFT_FP64, DRIFT_FP64);
    cr_assert_eq(drift_logsumexp(&lse, x, 50, &o, NULL, 0), 0);
    cr_assert_eq(drift_log_softmax(ls, x, 50, &o, NULL, 0), 0);
    long double m = -INFINITY, s = 0;
    for (int i = 0; i < 50; i++) m = x[i] > m ? x[i] : m;
    for (int i = 0; i < 50; i++) s += expl((long double)x[i] - m);
    long double L = m + logl(s);
    cr_assert(fabsl(L - lse) <= 64 * nextafter(fabs(lse), INFINITY) - 64 * fabs(lse), "lse %a vs %La", lse, L);
    for (int i = 0; i < 50; i++) {
        long double t = (long double)x[i] - L;
        cr_assert(fabsl(t - ls[i]) <= 64 * (nextafter(fabs(ls[i]), INFINITY) - fabs(ls[i])) + 1e-15L, "i=%d", i);
    }
}

/* The MPFR reference against exact.c's independent Ziv softmax (correctly rounded to
 * double: must agree bit for bit) and against long double (within one ulp of double: the
 * long double value is within 2^-60 relative of the truth, the reference within half an
 * ulp). In bf16: within one bf16 ulp of the long double value rounded. */
Test(softmax, reference_agrees_with_independent)
{
    for (int c = 0; c < NCASES - 1; c++) {
        float xf[40];
        double x[40], r[40], q[40], rb[40];
        make_case(xf, 40, c, 3);
        for (int i = 0; i < 40; i++) x[i] = xf[i];
        cr_assert_eq(drift_softmax_reference(r, x, 40, DRIFT_FP64), 0);
        cr_assert_eq(drift_exact_softmax(q, x, 40), 0);
        cr_assert_eq(drift_softmax_reference(rb, x, 40, DRIFT_BF16), 0);
        long double m = -INFINITY, s = 0;
        for (int i = 0; i < 40; i++) m = x[i] > m ? x[i] : m;
        for (int i = 0; i < 40; i++) s += expl((long double)x[i] - m);
        for (int i = 0; i < 40; i++) {
            cr_assert(r[i] == q[i], "%s i=%d: %a vs exact.c %a", case_name[c], i, r[i], q[i]);
            long double p = expl((long double)x[i] - m) / s;
            cr_assert(fabsl(p - r[i]) <= (long double)nextafter(r[i], INFINITY) - r[i], "%s i=%d", case_name[c], i);
            double pb = drift_rne((double)p, DRIFT_BF16);
            cr_assert(fabs(pb - rb[i]) <= drift_ulp(pb, DRIFT_BF16), "%s i=%d bf16", case_name[c], i);
        }
        double lse, lq;
        cr_assert_eq(drift_logsumexp_reference(&lse, x, 40, DRIFT_FP64), 0);
        cr_assert_eq(drift_exact_logsumexp(&lq, x, 40), 0);
        cr_assert(lse == lq, "%s: lse %a vs exact.c %a", case_name[c], lse, lq);
    }
}

/* The kernel's correctly rounded expf, exp2f, logf against MPFR at 24 bits (the emulation's
 * em_exp) on a sweep that includes subnormal results and overflow. */
Test(softmax, kernel_functions_correctly_rounded)
{
    for (double t = -110.0; t < 90.0; t += 0.0371) {
        double tf = (double)(float)t;
        cr_assert(drift_kexp(tf, DRIFT_FP32) == (double)em_exp((float)tf, 0), "exp(%a)", tf);
        double t2 = (double)(float)(tf * 1.4);
        cr_assert(drift_kexp2(t2, DRIFT_FP32) == (double)em_exp((float)t2, 1), "exp2(%a)", t2);
    }
    mpfr_t x, y;
    mpfr_inits2(200, x, y, (mpfr_ptr)0);
    for (double t = 1e-6; t < 1e6; t *= 1.37) {
        double tf = (double)(float)t;
        mpfr_set_d(x, tf, MPFR_RNDN);
        mpfr_log(y, x, MPFR_RNDN);
        cr_assert(drift_klog(tf, DRIFT_FP32) == (double)mpfr_get_flt(y, MPFR_RNDN), "log(%a)", tf);
    }
    mpfr_clears(x, y, (mpfr_ptr)0);
}

/* Validators: one line naming the option and what it accepts. */
Test(softmax, validator_messages)
{
    drift_softmax_variant_t v;
    char err[DRIFT_ERRMSG_MAX];
    cr_assert_eq(drift_softmax_parse(&v, "online:0", err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err, "softmax variant 'online:0': block size must be an integer 1..1073741824");
    cr_assert_eq(drift_softmax_parse(&v, "fast", err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err, "softmax variant 'fast': expected naive, safe, online or online:B");
    cr_assert_eq(drift_softmax_parse(&v, "online:08", err, sizeof err), DRIFT_EINVAL);
    cr_assert_eq(drift_softmax_parse(&v, "online:64", err, sizeof err), 0);
    char buf[DRIFT_SOFTMAX_SPEC_MAX];
    cr_assert_eq(drift_softmax_print(buf, sizeof buf, &v), 9);
    cr_assert_str_eq(buf, "online:64");
    drift_softmax_opts_t o = drift_softmax_opts(DRIFT_BF16, DRIFT_FP32);
    cr_assert_eq(drift_order_parse(&o.order, "tc:h100"), 0);
    double p;
    cr_assert_eq(drift_softmax(&p, &p, 1, &o, err, sizeof err), DRIFT_EUNSUPPORTED);
    cr_assert(strstr(err, "order 'tc:h100'") && !strchr(err, '\n'), "%s", err);
    o = drift_softmax_opts(DRIFT_BF16, DRIFT_FP32);
    o.scale = 0;
    cr_assert_eq(drift_softmax_validate(&o, err, sizeof err), DRIFT_EINVAL);
    cr_assert_str_eq(err, "softmax options: scale must be finite and > 0");
}

/* The fp64 kernel functions (long double first, MPFR when undecided) against exact.c's
 * proven Ziv exp and against MPFR at 300 bits for exp2 and log (a double rounding at 300
 * bits could only matter for a value within 2^-300 relatively of a midpoint; the known
 * hardest cases of these functions in double are about 2^-120 away). */
Test(softmax, kernel_functions_fp64_correctly_rounded)
{
    drift_stream_t st;
    drift_stream_init(&st, 5, 10, 77, 0);
    mpfr_t x, y;
    mpfr_inits2(300, x, y, (mpfr_ptr)0);
    for (int i = 0; i < 3000; i++) {
        double t = (drift_stream_uniform(&st) - 0.5) * (i % 3 == 0 ? 1400.0 : i % 3 == 1 ? 40.0 : 1e-3);
        double e;
        cr_assert_eq(drift_exact_exp(&e, t), 0);
        cr_assert(drift_kexp(t, DRIFT_FP64) == e, "exp(%a): %a vs %a", t, drift_kexp(t, DRIFT_FP64), e);
        mpfr_set_d(x, t, MPFR_RNDN);
        mpfr_exp2(y, x, MPFR_RNDN);
        cr_assert(drift_kexp2(t, DRIFT_FP64) == mpfr_get_d(y, MPFR_RNDN), "exp2(%a)", t);
        double a = fabs(t) * 7.3 + 1e-300;
        mpfr_set_d(x, a, MPFR_RNDN);
        mpfr_log(y, x, MPFR_RNDN);
        cr_assert(drift_klog(a, DRIFT_FP64) == mpfr_get_d(y, MPFR_RNDN), "log(%a)", a);
    }
    for (int k = -1100; k < 1030; k += 7) {
        mpfr_set_si(x, k, MPFR_RNDN);
        mpfr_exp2(y, x, MPFR_RNDN);
        cr_assert(drift_kexp2((double)k, DRIFT_FP64) == mpfr_get_d(y, MPFR_RNDN), "exp2(%d)", k);
    }
    mpfr_clears(x, y, (mpfr_ptr)0);
}
