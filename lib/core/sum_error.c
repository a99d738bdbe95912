/* sum_error.c — errors against the exact sum (sum_error.h). */
#include "sum_error.h"

#include <math.h>

void drift_exact_sum_abs(drift_xacc_t *s, double *sum_abs, const double *x, size_t n)
{
    drift_xacc_t a;
    drift_xacc_init(s);
    drift_xacc_init(&a);
    for (size_t i = 0; i < n; i++) {
        drift_xacc_add(s, x[i]);
        drift_xacc_add(&a, fabs(x[i]));
    }
    *sum_abs = drift_xacc_round(&a, DRIFT_FP64, DRIFT_RU);
}

void drift_sum_error(drift_sum_err_t *m, const drift_xacc_t *x, double result, drift_format_t acc)
{
    double exact = drift_xacc_round(x, DRIFT_FP64, DRIFT_RNE);
    m->result = result;
    if (!isfinite(result) || !isfinite(exact)) {
        m->abs_err = result == exact ? 0 : (isnan(result) || isnan(exact)) ? NAN : INFINITY;
    } else {
        drift_xacc_t d = *x;
        drift_xacc_add(&d, -result);
        int sg = drift_xacc_sign(&d);
        m->abs_err = sg > 0   ? drift_xacc_round(&d, DRIFT_FP64, DRIFT_RU)
                     : sg < 0 ? -drift_xacc_round(&d, DRIFT_FP64, DRIFT_RD)
                              : 0.0;
    }
    if (isnan(m->abs_err) || m->abs_err == 0) {
        m->rel_err = m->ulp_err = m->abs_err;
        return;
    }
    if (exact == 0 || !isfinite(exact)) {
        m->rel_err = m->ulp_err = INFINITY;
        return;
    }
    double q = m->abs_err / fabs(exact);
    if (isfinite(q) && fma(-q, fabs(exact), m->abs_err) > 0) q = nextafter(q, INFINITY);
    m->rel_err = q;
    m->ulp_err = m->abs_err / drift_ulp(exact, acc);
}
