/* witness.c — exact witnesses and the errors against them (witness.h). */
#include "witness.h"
#include "drift.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

int drift_witness_read(mpfr_t out, const char *s)
{
    if (!strcmp(s, "pi")) {
        mpfr_const_pi(out, MPFR_RNDN);
        return 0;
    }
    const char *slash = strchr(s, '/');
    if (slash) {
        char num[64];
        size_t len = (size_t)(slash - s);
        if (len >= sizeof num) return DRIFT_EINVAL;
        memcpy(num, s, len);
        num[len] = 0;
        mpfr_t d;
        mpfr_init2(d, DRIFT_WITNESS_PREC);
        int bad = drift_witness_read(out, num) || drift_witness_read(d, slash + 1) || mpfr_zero_p(d);
        if (!bad) mpfr_div(out, out, d, MPFR_RNDN);
        mpfr_clear(d);
        return bad ? DRIFT_EINVAL : 0;
    }
    char *end;
    mpfr_strtofr(out, s, &end, 0, MPFR_RNDN); /* returns the ternary value, not a status */
    return (*s && end != s && !*end) ? 0 : DRIFT_EINVAL;
}

double drift_witness_round(mpfr_srcptr x, drift_format_t f)
{
    if (f == DRIFT_FP64) return mpfr_get_d(x, MPFR_RNDN);
    mpfr_t t;
    mpfr_init2(t, 53);
    int inexact = mpfr_set(t, x, MPFR_RNDZ);
    double d = mpfr_get_d(t, MPFR_RNDZ);
    mpfr_clear(t);
    if (inexact && isfinite(d)) {
        uint64_t u;
        memcpy(&u, &d, sizeof u);
        u |= 1;
        memcpy(&d, &u, sizeof d);
    }
    return drift_round(d, f, NULL, 0);
}

double drift_witness_ulp(mpfr_srcptr x, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    long e = mpfr_zero_p(x) ? fi->emin : (long)mpfr_get_exp(x) - 1;
    if (e < fi->emin) e = fi->emin;
    return ldexp(1.0, (int)e - (fi->p - 1));
}

void drift_witness_error(drift_stored_t *c, double result, mpfr_srcptr x, drift_format_t f, mpfr_ptr diff, mpfr_ptr q)
{
    c->result = result;
    c->cls = drift_classify(result, f);
    c->below_normal = mpfr_zero_p(x) || (long)mpfr_get_exp(x) - 1 < drift_format_info(f)->emin;
    if (!isfinite(result)) {
        c->dir = "overflow";
        c->abs_err = c->rel_err = c->ulp_err = isnan(result) ? NAN : INFINITY;
        return;
    }
    mpfr_set_d(diff, result, MPFR_RNDN);
    mpfr_sub(diff, diff, x, MPFR_RNDN); /* exact: DRIFT_WITNESS_DIFF_PREC covers the span */
    int s = mpfr_sgn(diff);
    c->dir = s == 0 ? "exact" : s > 0 ? "up" : "down";
    mpfr_abs(diff, diff, MPFR_RNDN);
    c->abs_err = mpfr_get_d(diff, MPFR_RNDU);
    if (mpfr_zero_p(x)) {
        c->rel_err = s == 0 ? 0 : INFINITY;
    } else {
        mpfr_div(q, diff, x, MPFR_RNDU);
        mpfr_abs(q, q, MPFR_RNDN);
        c->rel_err = mpfr_get_d(q, MPFR_RNDU);
    }
    mpfr_div_d(q, diff, drift_witness_ulp(x, f), MPFR_RNDU); /* division by a power of two */
    c->ulp_err = mpfr_get_d(q, MPFR_RNDU);
}
