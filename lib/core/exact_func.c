/* exact_func.c — correctly rounded exp, log-sum-exp and softmax (RNE to double) by
 * Ziv's strategy over MPFR, for the softmax experiments. */
#include "exact.h"
#include "exact_impl.h"
#include "drift.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- correctly rounded elementary results (Ziv) ----------------------------------- */

/* Working precisions tried: 64, 128, ..., ZIV_MAX_PREC bits. Hard cases of exp in double
 * need about 160 bits (Lefèvre & Muller); the error analyses below hold up to 2048. */
#define ZIV_MIN_PREC 64
#define ZIV_MAX_PREC 2048
/* exp(d) for d < FAR_BELOW is below 2^-2885: such terms are left out of the sums and
 * counted in the error bound instead (n of them add at most n * 2^-2885 <= 2^-2821). */
#define FAR_BELOW (-2000.0)

/* y approximates a real value v with |v - y| <= 2^(EXP(y) - err), v never a double nor a
 * midpoint between doubles. If every value in that interval rounds (RNE) to the same
 * double, stores it and returns 1. */
static int ziv_decide(double *out, mpfr_srcptr y, mpfr_exp_t err)
{
    if (mpfr_zero_p(y) || !mpfr_number_p(y)) return 0;
    long E = (long)mpfr_get_exp(y) - 1;
    long peff = 53 - (E < -1022 ? -1022 - E : 0);
    if (peff >= 1 && E <= 1023) {
        /* MPFR's documented test for nearest: directed rounding at one bit more */
        if (mpfr_can_round(y, err, MPFR_RNDN, MPFR_RNDZ, (mpfr_prec_t)peff + 1)) {
            *out = drift_mpfr_to_format(y, DRIFT_FP64, DRIFT_RNE);
            return 1;
        }
        /* That test is conservative when the interval straddles a double (softmax of
         * {0, 0, -1500} is 1/2 minus 2^-2165): the end test below decides such cases. */
    }
    /* Past the double range, below half the smallest subnormal, or straddling a double:
     * round both ends of the interval (rounding is monotone, so equal ends decide every
     * value between). */
    mpfr_prec_t pr = mpfr_get_prec(y) > err ? mpfr_get_prec(y) + 2 : (mpfr_prec_t)err + 2;
    mpfr_t lo, hi, eps;
    mpfr_inits2(pr, lo, hi, eps, (mpfr_ptr)0);
    mpfr_set_ui_2exp(eps, 1, mpfr_get_exp(y) - err, MPFR_RNDN);
    mpfr_sub(lo, y, eps, MPFR_RNDN); /* exact at pr bits */
    mpfr_add(hi, y, eps, MPFR_RNDN);
    double rl = drift_mpfr_to_format(lo, DRIFT_FP64, DRIFT_RNE);
    double rh = drift_mpfr_to_format(hi, DRIFT_FP64, DRIFT_RNE);
    mpfr_clears(lo, hi, eps, (mpfr_ptr)0);
    if (rl != rh || signbit(rl) != signbit(rh)) return 0;
    *out = rl;
    return 1;
}

int drift_exact_exp(double *out, double x)
{
    if (!out) return DRIFT_EINVAL;
    if (isnan(x)) {
        *out = x;
        return DRIFT_OK;
    }
    /* exp(0) = 1 is the only double argument with a rational result (Lindemann). */
    if (x == 0) {
        *out = 1.0;
        return DRIFT_OK;
    }
    /* exp(1000) > 2^1442 overflows, exp(-1000) < 2^-1442 is far below half the smallest
     * subnormal: no need to bother MPFR's exponent range with them. */
    if (x > 1000) {
        *out = INFINITY;
        return DRIFT_OK;
    }
    if (x < -1000) {
        *out = 0.0;
        return DRIFT_OK;
    }
    int rc = DRIFT_ERANGE;
    mpfr_t mx, y;
    mpfr_init2(mx, 53);
    mpfr_set_d(mx, x, MPFR_RNDN);
    mpfr_init2(y, ZIV_MIN_PREC);
    for (mpfr_prec_t w = ZIV_MIN_PREC; w <= ZIV_MAX_PREC; w *= 2) {
        mpfr_set_prec(y, w);
        mpfr_exp(y, mx, MPFR_RNDN); /* within half an ulp: 2^(EXP(y) - w - 1) */
        if (ziv_decide(out, y, w)) {
            rc = DRIFT_OK;
            break;
        }
    }
    mpfr_clears(mx, y, (mpfr_ptr)0);
    return rc;
}

/* Scan for NaN, +inf, the largest finite value and how many finite values there are. */
typedef struct {
    int nan, posinf;
    size_t nfinite;
    double max;
    int all_equal; /* every finite value equals max */
} scan_t;

static scan_t scan(const double *x, size_t n)
{
    scan_t s = {0, 0, 0, -INFINITY, 1};
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            s.nan = 1;
        else if (x[i] == INFINITY)
            s.posinf = 1;
        else if (x[i] != -INFINITY) {
            s.nfinite++;
            if (x[i] > s.max) s.max = x[i];
        }
    }
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && x[i] != s.max) s.all_equal = 0;
    return s;
}

/* d = x - max exactly (two doubles differ by a number of at most 2099 bits). */
static void exact_diff(mpfr_ptr d, double x, double max)
{
    double t = x - max, bv = t - x, e = (x - (t - bv)) + (-max - bv); /* TwoSum */
    if (e == 0) {
        mpfr_set_prec(d, 53);
        mpfr_set_d(d, t, MPFR_RNDN);
        return;
    }
    mpfr_t mx;
    mpfr_init2(mx, 53);
    mpfr_set_d(mx, max, MPFR_RNDN);
    mpfr_set_prec(d, 2200);
    mpfr_set_d(d, x, MPFR_RNDN);
    mpfr_sub(d, d, mx, MPFR_RNDN);
    mpfr_clear(mx);
}

/* The terms exp(x_i - max) at precision w for the near entries (far ones set to 0) and
 * s = their sum rounded to w bits: s = S * (1 + theta), |theta| <= 2^(2 - w), where S is
 * the exact sum of exp(x_i - max) over all i (analysis at drift_exact_logsumexp). */
static void exp_terms(mpfr_vec_t *vec, mpfr_ptr s, const double *x, size_t n, double max, mpfr_prec_t w)
{
    mpfr_t d;
    mpfr_init2(d, 53);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_prec(vec->v[i], w);
        if (isfinite(x[i]) && x[i] - max >= FAR_BELOW) {
            exact_diff(d, x[i], max);
            mpfr_exp(vec->v[i], d, MPFR_RNDN);
        } else {
            mpfr_set_zero(vec->v[i], 1);
        }
    }
    mpfr_clear(d);
    mpfr_set_prec(s, w);
    mpfr_sum(s, vec->p, (unsigned long)n, MPFR_RNDN);
}

static int vec_init_plain(mpfr_vec_t *vec, size_t n)
{
    vec->mem = NULL;
    vec->v = malloc((n ? n : 1) * sizeof(mpfr_t));
    vec->p = malloc((n ? n : 1) * sizeof(mpfr_ptr));
    if (!vec->v || !vec->p) {
        free(vec->v);
        free(vec->p);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        mpfr_init2(vec->v[i], ZIV_MIN_PREC);
        vec->p[i] = vec->v[i];
    }
    return DRIFT_OK;
}

static void vec_free_plain(mpfr_vec_t *vec, size_t n)
{
    for (size_t i = 0; i < n; i++) mpfr_clear(vec->v[i]);
    free(vec->v);
    free(vec->p);
}

/* Error analysis at working precision w (every MPFR operation rounds to nearest, so each
 * is off by at most 2^-w relative):
 *   s = S (1 + theta), |theta| <= 2^-w + 2^-w + 2^-2w + 2^-2821 <= 2^(2-w)
 *   l = log(s) (1 + d1): |l - log S| <= |log(1 + theta)| + 2^-w |log s|
 *                                    <= 2^(3-w) + 45 * 2^-w      (S <= n <= 2^64)
 *   r = (max + l) (1 + d2): |r - lse| <= 2^(EXP(r) - w - 1) + 53 * 2^-w
 *                                     <= 2^(max(EXP(r), 7) - w).
 * So err = w - max(0, 7 - EXP(r)) in ziv_decide's terms. The result is irrational unless
 * only one value is finite (Lindemann–Weierstrass), which is handled exactly. */
int drift_exact_logsumexp(double *out, const double *x, size_t n)
{
    if (!out || (!x && n)) return DRIFT_EINVAL;
    scan_t sc = scan(x, n);
    if (sc.nan) {
        *out = NAN;
        return DRIFT_OK;
    }
    if (sc.posinf) {
        *out = INFINITY;
        return DRIFT_OK;
    }
    if (sc.nfinite == 0) { /* log(0) */
        *out = -INFINITY;
        return DRIFT_OK;
    }
    if (sc.nfinite == 1) { /* log(exp(max)) exactly */
        *out = sc.max;
        return DRIFT_OK;
    }
    mpfr_vec_t vec;
    if (vec_init_plain(&vec, n)) return DRIFT_ENOMEM;
    int rc = DRIFT_ERANGE;
    mpfr_t s, mmax;
    mpfr_inits2(ZIV_MIN_PREC, s, (mpfr_ptr)0);
    mpfr_init2(mmax, 53);
    mpfr_set_d(mmax, sc.max, MPFR_RNDN);
    for (mpfr_prec_t w = ZIV_MIN_PREC; w <= ZIV_MAX_PREC; w *= 2) {
        exp_terms(&vec, s, x, n, sc.max, w);
        mpfr_log(s, s, MPFR_RNDN);
        mpfr_add(s, s, mmax, MPFR_RNDN);
        long e = mpfr_zero_p(s) ? 0 : (long)mpfr_get_exp(s);
        mpfr_exp_t err = w - (e < 7 ? 7 - e : 0);
        if (err > 0 && ziv_decide(out, s, err)) {
            rc = DRIFT_OK;
            break;
        }
    }
    mpfr_clears(s, mmax, (mpfr_ptr)0);
    vec_free_plain(&vec, n);
    return rc;
}

/* out[i] = exp(x_i - max) / S. With s as in exp_terms and the terms and the quotient
 * rounded to w bits, the relative error is at most 2^-w + 2^-w + 2^(2-w) + cross terms
 * <= 2^(3-w): err = w - 3. A far term is below e^-2000 / 1 and rounds to +0. The value
 * is irrational unless all finite inputs are equal (then it is 1/count, handled exactly):
 * any other x_j - x_i != 0 makes sum_j exp(x_j - x_i) transcendental. */
int drift_exact_softmax(double *out, const double *x, size_t n)
{
    if ((!out || !x) && n) return DRIFT_EINVAL;
    if (n == 0) return DRIFT_OK;
    scan_t sc = scan(x, n);
    if (sc.nan || sc.posinf || sc.nfinite == 0) { /* inf/inf and 0/0: undefined */
        for (size_t i = 0; i < n; i++) out[i] = NAN;
        return DRIFT_OK;
    }
    if (sc.all_equal) {
        mpfr_t q;
        mpfr_init2(q, 53);
        mpfr_set_ui(q, 1, MPFR_RNDN);
        mpfr_div_ui(q, q, (unsigned long)sc.nfinite, MPFR_RNDN); /* 1/count, normal: RNE */
        double v = mpfr_get_d(q, MPFR_RNDN);
        mpfr_clear(q);
        for (size_t i = 0; i < n; i++) out[i] = isfinite(x[i]) ? v : 0.0;
        return DRIFT_OK;
    }
    mpfr_vec_t vec;
    if (vec_init_plain(&vec, n)) return DRIFT_ENOMEM;
    unsigned char *todo = malloc(n);
    if (!todo) {
        vec_free_plain(&vec, n);
        return DRIFT_ENOMEM;
    }
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        todo[i] = isfinite(x[i]) && x[i] - sc.max >= FAR_BELOW;
        if (!todo[i]) out[i] = 0.0;
        left += todo[i];
    }
    mpfr_t s, q;
    mpfr_inits2(ZIV_MIN_PREC, s, q, (mpfr_ptr)0);
    for (mpfr_prec_t w = ZIV_MIN_PREC; w <= ZIV_MAX_PREC && left; w *= 2) {
        exp_terms(&vec, s, x, n, sc.max, w);
        mpfr_set_prec(q, w);
        for (size_t i = 0; i < n; i++) {
            if (!todo[i]) continue;
            mpfr_div(q, vec.v[i], s, MPFR_RNDN);
            if (ziv_decide(&out[i], q, w - 3)) {
                todo[i] = 0;
                left--;
            }
        }
    }
    mpfr_clears(s, q, (mpfr_ptr)0);
    vec_free_plain(&vec, n);
    free(todo);
    return left ? DRIFT_ERANGE : DRIFT_OK;
}
