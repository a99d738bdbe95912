/* budget.c — the error budget of a dot product (budget.h), in exact arithmetic. */
#include "budget.h"

#include <math.h>
#include <string.h>

#include "drift.h"
#include "exact.h"

/* acc += sign * sum a_k b_k, the inputs rounded to `in` first when round_in. */
static void add_dot(drift_xacc_t *acc, const double *a, const double *b, size_t n, drift_format_t in, int round_in,
                    double sign)
{
    for (size_t k = 0; k < n; k++) {
        double x = round_in ? drift_rne(a[k], in) : a[k];
        double y = round_in ? drift_rne(b[k], in) : b[k];
        drift_xacc_add_prod(acc, sign * x, y); /* negating a double is exact */
    }
}

static double rn64(const drift_xacc_t *a)
{
    return drift_xacc_round(a, DRIFT_FP64, DRIFT_RNE);
}

int drift_budget_dot(drift_budget_t *out, const double *a, const double *b, size_t n, drift_format_t in,
                     double computed, double stored)
{
    if (!out || (n && (!a || !b)) || (unsigned)in >= DRIFT_NFORMATS) return DRIFT_EINVAL;
    if (!isfinite(computed) || !isfinite(stored)) return DRIFT_EINVAL;
    for (size_t k = 0; k < n; k++)
        if (!isfinite(a[k]) || !isfinite(b[k])) return DRIFT_EINVAL;
    memset(out, 0, sizeof *out);
    out->computed = computed;
    out->stored = stored;
    drift_xacc_t x;

    drift_xacc_init(&x);
    add_dot(&x, a, b, n, in, 0, 1);
    out->exact_unrounded = rn64(&x);
    drift_xacc_init(&x);
    add_dot(&x, a, b, n, in, 1, 1);
    out->exact_rounded = rn64(&x);

    drift_xacc_init(&x); /* total = stored - E_u */
    drift_xacc_add(&x, stored);
    add_dot(&x, a, b, n, in, 0, -1);
    out->total = rn64(&x);

    drift_xacc_init(&x); /* input = E_r - E_u */
    add_dot(&x, a, b, n, in, 1, 1);
    add_dot(&x, a, b, n, in, 0, -1);
    out->input = rn64(&x);

    drift_xacc_init(&x); /* accumulation = computed - E_r */
    drift_xacc_add(&x, computed);
    add_dot(&x, a, b, n, in, 1, -1);
    out->accumulation = rn64(&x);

    drift_xacc_init(&x); /* output = stored - computed */
    drift_xacc_add(&x, stored);
    drift_xacc_add(&x, -computed);
    out->output = rn64(&x);

    drift_xacc_init(&x); /* residual of the rounded parts, exactly */
    drift_xacc_add(&x, out->total);
    drift_xacc_add(&x, -out->input);
    drift_xacc_add(&x, -out->accumulation);
    drift_xacc_add(&x, -out->output);
    out->residual = rn64(&x);
    return DRIFT_OK;
}
