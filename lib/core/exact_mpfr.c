/* exact_mpfr.c — the independent exact path (law 1): every product of two doubles is
 * exact in 106 bits, and mpfr_sum rounds the exact sum of them once. tests/test_exact.c
 * holds it against the superaccumulator of exact_xacc.c bit for bit. */
#include "exact.h"
#include "exact_impl.h"
#include "drift.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define mode_ok exact_mode_ok

/* ---- MPFR path -------------------------------------------------------------------- */

/* Output precisions at which mpfr_sum is exact: a sum of n <= 2^64 doubles is a multiple
 * of 2^-1074 below 2^1088 (2162 bits); of products, a multiple of 2^-2148 below 2^2112
 * (4260 bits). */
#define SUM_EXACT_PREC 2200
#define DOT_EXACT_PREC 4300

static mpfr_rnd_t mpfr_rnd(drift_mode_t m)
{
    switch (m) {
    case DRIFT_RZ: return MPFR_RNDZ;
    case DRIFT_RU: return MPFR_RNDU;
    case DRIFT_RD: return MPFR_RNDD;
    default: return MPFR_RNDN;
    }
}

double drift_mpfr_to_format(mpfr_srcptr x, drift_format_t f, drift_mode_t m)
{
    if (!mode_ok(f, m)) return NAN;
    const drift_format_info_t *fi = drift_format_info(f);
    if (mpfr_nan_p(x)) return NAN;
    int neg = mpfr_signbit(x) != 0;
    if (mpfr_inf_p(x)) {
        double r = fi->has_inf ? INFINITY : NAN; /* e4m3 has no infinity: NaN */
        return neg ? -r : r;
    }
    if (mpfr_zero_p(x)) return neg ? -0.0 : 0.0;

    /* |x| in [2^E, 2^(E+1)); below 2^emin the format keeps fewer bits (subnormals). */
    long E = (long)mpfr_get_exp(x) - 1;
    long peff = fi->p - (E < fi->emin ? fi->emin - E : 0);
    double r;
    if (peff >= 1) {
        mpfr_rnd_t rnd = mpfr_rnd(m);
        /* ties away: x is a tie exactly when it needs one bit more than kept */
        if (m == DRIFT_RNA) rnd = (long)mpfr_min_prec(x) == peff + 1 ? MPFR_RNDA : MPFR_RNDN;
        mpfr_t y;
        mpfr_init2(y, (mpfr_prec_t)peff);
        mpfr_set(y, x, rnd);
        /* Overflow is judged on the value rounded with unbounded exponent, as IEEE 754
         * and drift_round_generic do; e4m3 overflows above 448, its largest value. */
        if (mpfr_cmpabs_ui(y, 0) > 0 && mpfr_get_exp(y) > fi->emax + 1) {
            r = INFINITY;
        } else {
            r = fabs(mpfr_get_d(y, MPFR_RNDN)); /* exact: p <= 53 bits inside the range */
        }
        mpfr_clear(y);
        if (r > fi->max_finite) {
            int to_max = m == DRIFT_RZ || (m == DRIFT_RU && neg) || (m == DRIFT_RD && !neg);
            r = to_max ? fi->max_finite : (fi->has_inf ? INFINITY : NAN);
        }
    } else {
        /* |x| < min_subnormal: the result is 0 or min_subnormal; compare with the half */
        mpfr_t ax;
        mpfr_init2(ax, mpfr_get_prec(x));
        mpfr_abs(ax, x, MPFR_RNDN);
        int c = mpfr_cmp_ui_2exp(ax, 1, fi->emin - fi->p); /* vs min_subnormal / 2 */
        mpfr_clear(ax);
        int up = 0;
        switch (m) {
        case DRIFT_RNE: up = c > 0; break; /* a tie goes to 0, the even neighbour */
        case DRIFT_RNA: up = c >= 0; break;
        case DRIFT_RU: up = !neg; break;
        case DRIFT_RD: up = neg; break;
        default: break;
        }
        r = up ? fi->min_subnormal : 0.0;
    }
    return neg ? -r : r;
}


static int vec_init(mpfr_vec_t *vec, size_t n, mpfr_prec_t prec)
{
    size_t sz = mpfr_custom_get_size(prec);
    vec->v = NULL;
    vec->p = NULL;
    vec->mem = NULL;
    if (n > SIZE_MAX / (sz + sizeof(mpfr_t) + sizeof(mpfr_ptr))) return DRIFT_ENOMEM;
    vec->v = malloc((n ? n : 1) * sizeof(mpfr_t));
    vec->p = malloc((n ? n : 1) * sizeof(mpfr_ptr));
    vec->mem = malloc((n ? n : 1) * sz);
    if (!vec->v || !vec->p || !vec->mem) {
        free(vec->v);
        free(vec->p);
        free(vec->mem);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        void *limbs = (char *)vec->mem + i * sz;
        mpfr_custom_init(limbs, prec);
        mpfr_custom_init_set(vec->v[i], MPFR_ZERO_KIND, 0, prec, limbs);
        vec->p[i] = vec->v[i];
    }
    return DRIFT_OK;
}

static void vec_free(mpfr_vec_t *vec)
{
    free(vec->v);
    free(vec->p);
    free(vec->mem); /* custom-interface numbers own no memory of their own */
}

/* Rounds the exact sum of vec once; the mode passed to mpfr_sum only decides the sign
 * of an exact zero (IEEE 754 6.3), because the sum itself is exact at prec. */
static int sum_vec(double *out, mpfr_vec_t *vec, size_t n, mpfr_prec_t prec, drift_format_t f, drift_mode_t m)
{
    mpfr_t s;
    mpfr_init2(s, prec);
    int t = mpfr_sum(s, vec->p, (unsigned long)n, m == DRIFT_RD ? MPFR_RNDD : MPFR_RNDN);
    int rc = t == 0 ? DRIFT_OK : DRIFT_ERANGE; /* cannot happen: prec covers the range */
    *out = drift_mpfr_to_format(s, f, m);
    mpfr_clear(s);
    return rc;
}

int drift_exact_sum_mpfr(double *out, const double *x, size_t n, drift_format_t f, drift_mode_t m)
{
    if (!out || (!x && n) || !mode_ok(f, m)) return DRIFT_EINVAL;
    mpfr_vec_t vec;
    int rc = vec_init(&vec, n, 53);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) mpfr_set_d(vec.v[i], x[i], MPFR_RNDN); /* exact */
    rc = sum_vec(out, &vec, n, SUM_EXACT_PREC, f, m);
    vec_free(&vec);
    return rc;
}

int drift_exact_dot_mpfr(double *out, const double *a, const double *b, size_t n, drift_format_t f, drift_mode_t m)
{
    if (!out || ((!a || !b) && n) || !mode_ok(f, m)) return DRIFT_EINVAL;
    mpfr_vec_t vec;
    int rc = vec_init(&vec, n, 106); /* a product of two 53-bit numbers is exact in 106 */
    if (rc) return rc;
    mpfr_t ma, mb;
    mpfr_inits2(53, ma, mb, (mpfr_ptr)0);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(ma, a[i], MPFR_RNDN);
        mpfr_set_d(mb, b[i], MPFR_RNDN);
        mpfr_mul(vec.v[i], ma, mb, MPFR_RNDN); /* exact */
    }
    mpfr_clears(ma, mb, (mpfr_ptr)0);
    rc = sum_vec(out, &vec, n, DOT_EXACT_PREC, f, m);
    vec_free(&vec);
    return rc;
}
