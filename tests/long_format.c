/* long_format.c — exhaustive: every fp32 bit pattern rounded to fp16, bf16 and tf32 in
 * every non-sr mode; the fast path, the generic rounder and an MPFR oracle must agree
 * bit for bit. Label "long" (./lab test --long).
 *
 * Cost and how it is kept down: 2^32 patterns x 3 formats x 5 modes. The oracle runs MPFR
 * only on the 2^31 non-negative patterns, three roundings each (RZ, RA = away from zero,
 * RN), with the format's exponent range set once per thread (MPFR's documented subnormal
 * emulation: mpfr_set_emin(emin - p + 2), the operation, then mpfr_subnormalize). The
 * other modes follow exactly: for x >= 0, RD = RZ and RU = RA; ties-away is RA when x is
 * at or beyond the midpoint (RZ + RA) / 2 (exact in double: p + 1 <= 12 bits), else RZ;
 * and rounding is odd-symmetric, so round(-x, m) = -round(x, m') with RU and RD swapped.
 * Overflow is then judged on the result with an unbounded exponent (IEEE 754-2019 7.4).
 * The work is split into 3 formats x 8 slices of the pattern space (Criterion tests, run
 * in parallel by --jobs) and each slice uses OpenMP threads when available.
 * Rough cost: 1.3 * 10^11 library roundings plus 6.4 * 10^9 MPFR roundings, about 2 CPU-hours
 * (the generic rounder dominates): about an hour on 2 cores, 8 minutes on 16.
 *
 * DRIFT_LONG_STRIDE=N in the environment tests every Nth pattern only (a quick slice,
 * e.g. to see that the test starts correctly); the default 1 is exhaustive. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* OpenMP pragmas only when OpenMP is on (an unknown pragma is a warning, so an error here). */
#ifdef _OPENMP
#define OMP(x) _Pragma(#x)
#else
#define OMP(x)
#endif

#include "format.h"
#include "support.h"


typedef double (*fast_fn)(double, const drift_round_opts_t *, uint32_t);

typedef struct {
    drift_format_t f;
    int slice; /* of NSLICES over the non-negative patterns */
} slice_t;

#define NSLICES 8
static slice_t SLICES[3 * NSLICES];

ParameterizedTestParameters(exhaustive, fp32_patterns)
{
    drift_format_t fs[3] = {DRIFT_FP16, DRIFT_BF16, DRIFT_TF32};
    for (int i = 0; i < 3; i++)
        for (int s = 0; s < NSLICES; s++) SLICES[i * NSLICES + s] = (slice_t){fs[i], s};
    return cr_make_param_array(slice_t, SLICES, 3 * NSLICES);
}

/* The IEEE overflow rule for a rounded magnitude beyond max_finite, given the mode and the
 * sign (all three formats here have infinities). */
static double overflowed(double r, const drift_format_info_t *fi, drift_mode_t m)
{
    if (!(fabs(r) > fi->max_finite)) return r;
    int neg = r < 0;
    int to_max = m == DRIFT_RZ || (m == DRIFT_RU && neg) || (m == DRIFT_RD && !neg);
    double v = to_max ? fi->max_finite : INFINITY;
    return neg ? -v : v;
}

static double mpfr_round_flt(mpfr_t y, float x, mpfr_rnd_t rnd)
{
    int t = mpfr_set_flt(y, x, rnd);
    mpfr_subnormalize(y, t, rnd);
    return mpfr_get_d(y, MPFR_RNDN); /* exact: p <= 11 bits, in the double range */
}

ParameterizedTest(slice_t *c, exhaustive, fp32_patterns)
{
    const drift_format_info_t *fi = drift_format_info(c->f);
    fast_fn fast = c->f == DRIFT_FP16   ? drift_round_fp16_fast
                   : c->f == DRIFT_BF16 ? drift_round_bf16_fast
                                        : drift_round_tf32_fast;
    long stride = 1;
    const char *env = getenv("DRIFT_LONG_STRIDE");
    if (env && atol(env) > 0) stride = atol(env);

    /* non-negative patterns 0 .. 2^31 - 1, this slice's share */
    const int64_t per = ((int64_t)1 << 31) / NSLICES;
    const int64_t lo = per * c->slice, hi = lo + per;
    long bad = 0, checked = 0;
    char first[300] = "";

#ifdef _OPENMP
    int threads_ok = mpfr_buildopt_tls_p(); /* the exponent range must be per thread */
#endif
    OMP(omp parallel if (threads_ok) reduction(+ : bad, checked))
    {
        mpfr_set_emin(fi->emin - fi->p + 2); /* smallest subnormal 2^(emin-p+1) = 0.1b * 2^(emin-p+2) */
        mpfr_t y;
        mpfr_init2(y, fi->p);
        static const drift_mode_t modes[5] = {DRIFT_RNE, DRIFT_RZ, DRIFT_RNA, DRIFT_RU, DRIFT_RD};
        OMP(omp for schedule(dynamic, 65536))
        for (int64_t w = lo; w < hi; w += stride) {
            uint32_t u = (uint32_t)w;
            float xf;
            memcpy(&xf, &u, sizeof xf);
            double x = xf;
            double want[5]; /* for +x, in the order of modes[] */
            if (isnan(x)) {
                for (int i = 0; i < 5; i++) want[i] = NAN;
            } else if (isinf(x) || x == 0) {
                for (int i = 0; i < 5; i++) want[i] = x; /* exact in every format here */
            } else {
                double z = mpfr_round_flt(y, xf, MPFR_RNDZ);
                double a = mpfr_round_flt(y, xf, MPFR_RNDA);
                double n = mpfr_round_flt(y, xf, MPFR_RNDN);
                double rna = (z == a || x < (z + a) / 2) ? z : a;
                want[0] = n;
                want[1] = z;
                want[2] = rna;
                want[3] = a; /* RU of a positive value: away from zero */
                want[4] = z; /* RD: toward zero */
            }
            for (int sgn = 0; sgn < 2; sgn++) {
                double xs = sgn ? -x : x;
                for (int i = 0; i < 5; i++) {
                    drift_mode_t m = modes[i];
                    /* -x in RU is -(x in RD) and vice versa; the other modes are symmetric */
                    int j = !sgn ? i : m == DRIFT_RU ? 4 : m == DRIFT_RD ? 3 : i;
                    /* an infinite input converts exactly (IEEE 754 6.1): the overflow rule
                     * is for finite values only */
                    double w_m = isinf(x) ? xs : overflowed(sgn ? -want[j] : want[j], fi, m);
                    drift_round_opts_t o = {m, 0, 0};
                    double g = drift_round_generic(xs, fi, &o, 0), q = fast(xs, &o, 0);
                    checked++;
                    if (!same(g, w_m) || !same(q, w_m)) {
                        if (bad++ == 0) {
                            OMP(omp critical)
                            snprintf(first, sizeof first, "%s %s fp32 0x%08x (%a): generic %a, fast %a, oracle %a",
                                fi->name, drift_mode_name(m), u | (sgn ? 0x80000000u : 0), xs, g, q, w_m);
                        }
                    }
                }
            }
        }
        mpfr_clear(y);
        mpfr_free_cache();
    }
    cr_log_info("%s slice %d: %ld roundings checked (stride %ld)", fi->name, c->slice, checked, stride);
    cr_assert_eq(bad, 0, "%ld of %ld wrong; first: %s", bad, checked, first);
    cr_assert_gt(checked, 0);
}
