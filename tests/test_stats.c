/* test_stats.c — binomial intervals, the normal distribution, bins and the probit flip fit.
 *
 * Known answers and their sources:
 *   - Wilson score interval: Newcombe, "Two-sided confidence intervals for the single
 *     proportion: comparison of seven methods", Stat. Med. 17:857-872 (1998), Table II,
 *     method 3 (score method without continuity correction), examples 81/263, 15/148, 0/20,
 *     1/29, printed to 4 decimals.
 *   - Phi, Phi^-1, log Phi, chi-square tails: values from mpmath 1.3.0 (ncdf, erfinv,
 *     gammainc) at 40 significant digits, an implementation independent of this code; the
 *     familiar ones agree with Abramowitz & Stegun Table 26.1 (P(1) = 0.841344746068543,
 *     P(1.96) = 0.975002104851780) and the chi-square 5% points of Table 26.8.
 *   - Phi is also checked against MPFR's erfc at 256 bits on a sweep of arguments.
 *   - The probit fit: two closed forms (all pairs at one gap) derived in the comments, and
 *     recovery of a known sigma from synthetic data whose tolerance is computed from the
 *     Fisher information of the very sample (written here, with libm's erfc only). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>

#include "drift.h"
#include "philox.h"
#include "stats.h"

/* ---- Wilson ------------------------------------------------------------------------------ */

typedef struct {
    long k, n;
    double lo, hi;
} wcase_t;

ParameterizedTestParameters(stats, wilson_newcombe)
{
    static wcase_t cases[] = {
        {81, 263, 0.2553, 0.3662},
        {15, 148, 0.0624, 0.1605},
        {0, 20, 0.0000, 0.1611},
        {1, 29, 0.0061, 0.1718},
    };
    return cr_make_param_array(wcase_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(wcase_t *c, stats, wilson_newcombe)
{
    double lo, hi;
    cr_assert_eq(drift_wilson(&lo, &hi, c->k, c->n, DRIFT_Z95), DRIFT_OK);
    /* 5e-5: the table is printed to 4 decimals, so it is within half a unit of the last place. */
    cr_expect(fabs(lo - c->lo) <= 5e-5, "%ld/%ld lo %.6f, table %.4f", c->k, c->n, lo, c->lo);
    cr_expect(fabs(hi - c->hi) <= 5e-5, "%ld/%ld hi %.6f, table %.4f", c->k, c->n, hi, c->hi);
}

Test(stats, wilson_edges_and_errors)
{
    double lo, hi;
    cr_assert_eq(drift_wilson(&lo, &hi, 0, 10, DRIFT_Z95), DRIFT_OK);
    cr_expect_eq(lo, 0.0);
    cr_assert_eq(drift_wilson(&lo, &hi, 10, 10, DRIFT_Z95), DRIFT_OK);
    cr_expect_eq(hi, 1.0);
    cr_expect(lo > 0.69 && lo < 0.73, "10/10 lower end %g (n/(n+z^2) = 0.7225)", lo);
    cr_expect_eq(drift_wilson(&lo, &hi, 1, 0, DRIFT_Z95), DRIFT_EINVAL);
    cr_expect_eq(drift_wilson(&lo, &hi, 11, 10, DRIFT_Z95), DRIFT_EINVAL);
    cr_expect_eq(drift_wilson(&lo, &hi, -1, 10, DRIFT_Z95), DRIFT_EINVAL);
    cr_expect_eq(drift_wilson(&lo, &hi, 1, 10, 0.0), DRIFT_EINVAL);
    cr_expect_eq(drift_wilson(&lo, &hi, 1, 10, NAN), DRIFT_EINVAL);
}

/* ---- Phi and friends ----------------------------------------------------------------------- */

typedef struct {
    double x, v;
} kv_t;

/* Relative tolerances: 4 ulp (8.9e-16) for Phi and log Phi. Why 4: glibc's erfc is within
 * about 1-2 ulp; the first-order argument correction leaves an error far below an ulp; the
 * halving is exact; the known values themselves are correctly rounded from 40 digits. */
#define TOL_PHI (4 * 0x1p-52)

Test(stats, phi_known_values)
{
    static const kv_t K[] = {
        {-1, 0.15865525393145705141},
        {-2, 0.0227501319481792072},
        {-3, 0.0013498980316300945267},
        {-5, 2.8665157187919391167e-7},
        {-8, 6.2209605742717841235e-16},
        {-10, 7.619853024160526066e-24},
        {-20, 2.7536241186062336951e-89},
        {-30, 4.9067139271481870595e-198},
        {-37, 5.7255712225245768227e-300},
        {0, 0.5},
        {1, 0.84134474606854294859},
        {1.96, 0.97500210485177956586},
        {3, 0.99865010196836990547},
        {6, 0.99999999901341235496},
    };
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++) {
        double p = drift_phi(K[i].x);
        cr_expect(fabs(p - K[i].v) <= TOL_PHI * K[i].v, "Phi(%g) = %.17g, expected %.17g", K[i].x, p, K[i].v);
    }
    /* Deep in the subnormal range only the absolute spacing 2^-1074 is left. */
    cr_expect(fabs(drift_phi(-38.4) - 6.601599854326407533e-323) <= 0x1p-1074);
    cr_expect_eq(drift_phi(-INFINITY), 0.0);
    cr_expect_eq(drift_phi(INFINITY), 1.0);
    cr_expect(isnan(drift_phi(NAN)));
}

/* MPFR oracle: Phi(x) = erfc(-x/sqrt 2)/2 evaluated at 256 bits (x/sqrt2 exact to 256 bits). */
Test(stats, phi_against_mpfr)
{
    mpfr_t t, s;
    mpfr_inits2(256, t, s, (mpfr_ptr)0);
    double worst = 0;
    for (int i = 0; i <= 4600; i++) {
        double x = -38.0 + i * 0.01; /* [-38, 8] */
        mpfr_set_d(t, -x, MPFR_RNDN);
        mpfr_sqrt_ui(s, 2, MPFR_RNDN);
        mpfr_div(t, t, s, MPFR_RNDN);
        mpfr_erfc(t, t, MPFR_RNDN);
        mpfr_div_2ui(t, t, 1, MPFR_RNDN);
        double ref = mpfr_get_d(t, MPFR_RNDN);
        double got = drift_phi(x);
        double rel = fabs(got - ref) / ref;
        if (rel > worst) worst = rel;
        /* In the subnormal range (x < -37.52) only absolute accuracy is left: the exponent is
         * assembled from log terms of size ~4.5 with ~1e-15 absolute error, i.e. ~1e-15 relative
         * of values <= 2^-1022, a few units of 2^-1074 (measured: 6 at the worst of 30000 points;
         * 8 leaves a margin). */
        cr_expect(rel <= TOL_PHI || fabs(got - ref) <= 8 * 0x1p-1074, "Phi(%.2f): %.17g vs MPFR %.17g (rel %.3g)", x,
            got, ref, rel);
    }
    mpfr_clears(t, s, (mpfr_ptr)0);
    mpfr_free_cache();
}

Test(stats, log_phi)
{
    static const kv_t K[] = {
        {-1000, -500007.82669481218431},
        {-100, -5005.5242086942050886},
        {-40, -804.60844201375378817},
    };
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++) {
        double l = drift_log_phi(K[i].x);
        cr_expect(fabs(l - K[i].v) <= TOL_PHI * fabs(K[i].v), "log Phi(%g) = %.17g, expected %.17g", K[i].x, l, K[i].v);
    }
    /* Where Phi is representable, log Phi must agree with log(Phi) (to 1e-15 absolute: the log
     * of a value with a 4-ulp error is off by at most 4 ulp of 1). */
    for (double x = -30; x <= 0; x += 0.37)
        cr_expect(fabs(drift_log_phi(x) - log(drift_phi(x))) <= 1e-15 * fmax(1, fabs(log(drift_phi(x)))), "x = %g", x);
    /* x > 0: log Phi(x) = log1p(-Phi(-x)), a tiny negative number: at x = 8,
     * -6.2209605742717860585e-16 (mpmath), which log(Phi(8)) = log(1 - 6.2e-16) could only
     * give to one significant digit. */
    cr_expect(fabs(drift_log_phi(8) + 6.2209605742717860585e-16) <= TOL_PHI * 6.3e-16, "%.20g", drift_log_phi(8));
    /* Continuity across the switch to the asymptotic series at x = -30. */
    double a = drift_log_phi(nextafter(-30.0, 0)), b = drift_log_phi(nextafter(-30.0, -INFINITY));
    cr_expect(fabs(a - b) <= 1e-12, "log Phi jumps at -30: %.17g vs %.17g", a, b);
}

Test(stats, phi_inv_known_values)
{
    static const kv_t K[] = {
        {1e-300, -37.047096299361199237},
        {1e-100, -21.273453560965324295},
        {1e-20, -9.2623400897984075737},
        {1e-10, -6.3613409024040562047},
        {1e-5, -4.2648907939228246285},
        {0.001, -3.0902323061678135415},
        {0.025, -1.9599639845400542355},
        {0.1, -1.281551565544600467},
        {0.25, -0.6744897501960817432},
        {0.4, -0.2533471031357997988},
        {0.75, 0.6744897501960817432},
        {0.975, 1.9599639845400542355},
        {0.999, 3.0902323061678135415},
    };
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++) {
        double x = drift_phi_inv(K[i].x);
        /* 4 ulp: the Newton polish is limited by drift_phi's own accuracy (above). The input p
         * is itself a rounded double, which moves the true quantile by u p/phi(x) = u/|x| at
         * most in the tail: below an ulp of x. */
        cr_expect(
            fabs(x - K[i].v) <= 4 * 0x1p-52 * fabs(K[i].v), "Phi^-1(%g) = %.17g, expected %.17g", K[i].x, x, K[i].v);
    }
    cr_expect_eq(drift_phi_inv(0.5), 0.0);
    cr_expect(isinf(drift_phi_inv(0.0)) && drift_phi_inv(0.0) < 0);
    cr_expect(isinf(drift_phi_inv(1.0)) && drift_phi_inv(1.0) > 0);
    cr_expect(isnan(drift_phi_inv(-0.1)));
    cr_expect(isnan(drift_phi_inv(1.5)));
    /* Round trip over 300 decades. Even the correctly rounded quantile x moves Phi by
     * dPhi/Phi ~ |x| dx, so the tolerance is |x| * 4 ulp(x) (4 ulp as above) plus Phi's own
     * 4 ulp: 1.2e-12 relative at p = 1e-300 (x = -37), 1e-15 near the centre. */
    for (double p = 1e-300; p < 0.5; p *= 3.7) {
        double x = drift_phi_inv(p);
        double back = drift_phi(x);
        double tol = fabs(x) * 4 * 0x1p-52 * fmax(1, fabs(x)) + TOL_PHI;
        cr_expect(fabs(back - p) <= tol * p, "Phi(Phi^-1(%g)) = %.17g", p, back);
    }
}

Test(stats, chi2_tail)
{
    /* 5% points (A&S Table 26.8), and mpmath values. 1e-12 relative: the continued fraction and
     * series stop at 1e-16 relative; lgamma and exp add a few ulp of a quantity ~1. */
    struct {
        double x, df, v;
    } K[] = {
        {3.841458820694124, 1, 0.050000000000000058397},
        {18.307038053275146, 10, 0.050000000000000013496},
        {43.77297182574219, 30, 0.04999999999999997889},
        {1, 5, 0.96256577324729636896},
        {100, 50, 0.000034549313829848639421},
    };
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++) {
        double q = drift_chi2_sf(K[i].x, K[i].df);
        cr_expect(
            fabs(q - K[i].v) <= 1e-12 * K[i].v, "chi2_sf(%g, %g) = %.17g, expected %.17g", K[i].x, K[i].df, q, K[i].v);
    }
    /* df = 2: the tail is exactly exp(-x/2). */
    for (double x = 0.01; x < 200; x *= 1.7)
        cr_expect(fabs(drift_chi2_sf(x, 2) - exp(-x / 2)) <= 1e-13 * exp(-x / 2), "x = %g", x);
    cr_expect_eq(drift_chi2_sf(0, 3), 1.0);
    cr_expect(isnan(drift_gamma_q(0, 1)));
}

/* ---- bins -------------------------------------------------------------------------------- */

Test(stats, logbins)
{
    drift_logbins_t b;
    cr_assert_eq(drift_logbins_init(&b, 1e-7, 1, 28), DRIFT_OK);
    cr_expect_eq(b.edge[0], 1e-7);
    cr_expect_eq(b.edge[28], 1.0);
    for (int i = 0; i <= 28; i++) {
        /* 4 bins per decade: edge i = 10^(-7 + i/4), to a few ulp of pow. */
        double want = pow(10.0, -7 + i / 4.0);
        cr_expect(fabs(b.edge[i] - want) <= 1e-14 * want, "edge %d = %.17g", i, b.edge[i]);
    }
    cr_expect_eq(drift_logbins_find(&b, 1e-7), 0);
    cr_expect_eq(drift_logbins_find(&b, 1.0), 27);
    cr_expect_eq(drift_logbins_find(&b, b.edge[5]), 5);
    cr_expect_eq(drift_logbins_find(&b, nextafter(b.edge[5], 0)), 4);
    cr_expect_eq(drift_logbins_find(&b, 0.99e-7), -1);
    cr_expect_eq(drift_logbins_find(&b, 1.01), -1);
    cr_expect_eq(drift_logbins_find(&b, NAN), -1);
    cr_expect_eq(drift_logbins_init(&b, 0, 1, 4), DRIFT_EINVAL);
    cr_expect_eq(drift_logbins_init(&b, 1, 1, 4), DRIFT_EINVAL);
    cr_expect_eq(drift_logbins_init(&b, 1, 2, 0), DRIFT_EINVAL);
    cr_expect_eq(drift_logbins_init(&b, 1, 2, DRIFT_BINS_MAX + 1), DRIFT_EINVAL);

    double x[] = {1e-7, 1.5e-7, 0.5, 0.6, 0.7, 5}; /* bin 0 is [1e-7, 10^-6.75 = 1.778e-7) */
    unsigned char ev[] = {1, 0, 1, 1, 0, 1};
    drift_rate_t r[28];
    cr_assert_eq(drift_binned_rates(r, &b, x, ev, 6), DRIFT_OK);
    cr_expect_eq(r[0].n, 2);
    cr_expect_eq(r[0].k, 1);
    cr_expect_eq(r[0].rate, 0.5);
    cr_expect_eq(r[26].n + r[27].n, 3); /* 0.5 in bin 26 ([0.316, 0.562)), 0.6 and 0.7 in bin 27 */
    cr_expect_eq(r[26].n, 1);
    cr_expect(isnan(r[10].rate));
}

/* ---- the fit ----------------------------------------------------------------------------- */

/* All pairs at one gap D with k flips of n: l(sigma) = k log q + (n-k) log(1-q), q =
 * Phi(-D/sigma), maximised at q = k/n, so sigma = -D / Phi^-1(k/n). D = 2, 10/100:
 * sigma = 2 / 1.281551565544600467 = 1.5606082921447581357 (mpmath). */
Test(stats, fit_single_gap_closed_form)
{
    enum { N = 100 };
    double gap[N];
    unsigned char flip[N];
    for (int i = 0; i < N; i++) {
        gap[i] = 2.0;
        flip[i] = i < 10;
    }
    drift_phi_fit_t f;
    cr_assert_eq(drift_phi_fit(&f, gap, flip, N, NULL), DRIFT_OK);
    cr_expect_eq(f.status, DRIFT_FIT_OK);
    cr_expect_eq(f.n, 100);
    cr_expect_eq(f.k, 10);
    /* 1e-7: a maximum located by comparing values of l is found only to about sqrt(u) ~ 1e-8
     * relative (l is flat to second order there, and each value carries ~1e-16 relative
     * rounding); statistically irrelevant, as the standard error is ~10% here. */
    cr_expect(fabs(f.sigma / 1.5606082921447581357 - 1) <= 1e-7, "sigma %.17g", f.sigma);
    cr_expect(f.sigma_lo < f.sigma && f.sigma < f.sigma_hi);
}

/* No flips at one gap D = 1, n = 100: l(sigma) = 100 log Phi(1/sigma), supremum 0 at sigma = 0;
 * the bound solves 100 log Phi(1/s) = -1.92073, s = 1 / Phi^-1(exp(-0.0192073)) =
 * 0.4820817319837080045 (mpmath). */
Test(stats, fit_no_flips_bound)
{
    enum { N = 100 };
    double gap[N];
    unsigned char flip[N] = {0};
    for (int i = 0; i < N; i++) gap[i] = 1.0;
    drift_phi_fit_t f;
    cr_assert_eq(drift_phi_fit(&f, gap, flip, N, NULL), DRIFT_OK);
    cr_expect_eq(f.status, DRIFT_FIT_NO_FLIPS);
    cr_expect_eq(f.sigma, 0.0);
    /* 1e-9: bisection to 1e-12 in log sigma, plus the 4-ulp log Phi. */
    cr_expect(fabs(f.sigma_hi / 0.4820817319837080045 - 1) <= 1e-9, "sigma_hi %.17g", f.sigma_hi);
}

Test(stats, fit_degenerate)
{
    double gap[] = {1e-3, 2e-3, 1, 2, 0, NAN};
    unsigned char flip[] = {1, 1, 0, 0, 1, 1};
    drift_phi_fit_t f;
    cr_assert_eq(drift_phi_fit(&f, gap, flip, 6, NULL), DRIFT_OK);
    cr_expect_eq(f.status, DRIFT_FIT_SEPARATED);
    cr_expect_eq(f.n, 4); /* the tie (gap 0) and the NaN are skipped */
    cr_expect_eq(f.sigma, 0.0);
    cr_expect(f.sigma_hi > 0 && isfinite(f.sigma_hi));
    cr_assert_eq(drift_phi_fit(&f, gap, flip, 0, NULL), DRIFT_OK);
    cr_expect_eq(f.status, DRIFT_FIT_EMPTY);
    unsigned char all[] = {1, 1, 1, 1};
    cr_assert_eq(drift_phi_fit(&f, gap, all, 4, NULL), DRIFT_OK);
    cr_expect_eq(f.status, DRIFT_FIT_ALL_FLIPS);
    cr_expect_eq(drift_phi_fit(&f, NULL, flip, 3, NULL), DRIFT_EINVAL);
}

/* Synthetic data from the model itself: gaps log-uniform over 4 decades around sigma, flips
 * drawn with probability Phi(-D/sigma) from a Philox stream. */
static void synth(double *gap, unsigned char *flip, int n, double sigma, int linear, uint32_t trial)
{
    drift_stream_t s;
    drift_stream_init(&s, 12345, drift_fnv1a32("test_stats"), 0, trial);
    for (int i = 0; i < n; i++) {
        gap[i] = sigma * pow(10.0, -2 + 4 * drift_stream_uniform(&s));
        /* linear: a misspecified model, P = max(0, (1 - D/(3 sigma))/2), the shape a coarse
         * output grid produces. */
        double p = linear ? fmax(0, 0.5 * (1 - gap[i] / (3 * sigma))) : 0.5 * erfc(gap[i] / sigma / sqrt(2.0));
        flip[i] = drift_stream_uniform(&s) < p;
    }
}

/* Fisher information for beta = 1/sigma at the true value, from the sample's gaps:
 * I = sum D^2 phi(bD)^2 / (Phi(-bD) Phi(bD)); se(sigma)/sigma = se(beta)/beta = 1/(beta sqrt I). */
static double rel_se(const double *gap, int n, double sigma)
{
    double I = 0, b = 1 / sigma;
    for (int i = 0; i < n; i++) {
        double z = b * gap[i];
        double pd = exp(-z * z / 2) / sqrt(2 * M_PI);
        double q = 0.5 * erfc(z / sqrt(2.0)), p = 0.5 * erfc(-z / sqrt(2.0));
        if (q > 0) I += gap[i] * gap[i] * pd * pd / (q * p);
    }
    return 1 / (b * sqrt(I));
}

Test(stats, fit_recovers_sigma)
{
    enum { N = 20000 };
    double *gap = malloc(N * sizeof *gap);
    unsigned char *flip = malloc(N);
    drift_logbins_t bins;
    const double sig[] = {3e-7, 1.0, 2.5e3};
    for (int j = 0; j < 3; j++) {
        synth(gap, flip, N, sig[j], 0, (uint32_t)j);
        cr_assert_eq(drift_logbins_init(&bins, sig[j] * 1e-2, sig[j] * 1e2, 16), 0);
        drift_phi_fit_t f;
        cr_assert_eq(drift_phi_fit(&f, gap, flip, N, &bins), DRIFT_OK);
        cr_expect_eq(f.status, DRIFT_FIT_OK);
        double se = rel_se(gap, N, sig[j]);
        /* 5 standard errors: a correct MLE misses by more with probability < 6e-7 (the MLE is
         * asymptotically normal; N = 20000 with ~5000 informative pairs is far into that regime).
         * se is ~1.5% here, so the test also fails for any systematic bias above ~7%. */
        cr_expect(fabs(f.sigma / sig[j] - 1) <= 5 * se, "sigma %.6g, true %.6g, se %.3g", f.sigma, sig[j], se);
        cr_expect(f.sigma_lo <= sig[j] * (1 + 5 * se) && f.sigma_hi >= sig[j] * (1 - 5 * se));
        /* A correct model: the deviance p-value is uniform; below 1e-4 would happen once in 10^4
         * seeds. */
        cr_expect(f.p_value > 1e-4, "p = %g, G2 = %g, df = %d", f.p_value, f.g2, f.df);
        /* 16 bins over 4 decades; the ~5 bins above 3 sigma expect < 5 flips together and pool */
        cr_expect(f.df >= 6 && f.df <= 15, "df = %d", f.df);
    }
    /* The wrong shape is caught: 20000 pairs from the linear profile give p << 1e-6. */
    synth(gap, flip, N, 1.0, 1, 7);
    cr_assert_eq(drift_logbins_init(&bins, 1e-2, 1e2, 16), 0);
    drift_phi_fit_t f;
    cr_assert_eq(drift_phi_fit(&f, gap, flip, N, &bins), DRIFT_OK);
    cr_expect(f.p_value < 1e-6, "misspecified model not rejected: p = %g, G2 = %g", f.p_value, f.g2);
    free(gap);
    free(flip);
}

Test(stats, gap_at)
{
    /* D_P = -sigma Phi^-1(P): at P = 0.001, 3.0902323061678135 sigma; at 0.5, 0. */
    cr_expect(fabs(drift_phi_gap_at(2.0, 0.001) - 2 * 3.0902323061678135415) <= 1e-14);
    cr_expect_eq(drift_phi_gap_at(2.0, 0.5), 0.0);
}

/* drift_median: odd and even counts (exact values, so equality is the right test), n = 0. */
Test(stats, median)
{
    const double x[] = {3, -1, 2, 10};
    double m;
    cr_assert_eq(drift_median(&m, x, 3), DRIFT_OK);
    cr_assert_eq(m, 2.0);
    cr_assert_eq(drift_median(&m, x, 4), DRIFT_OK);
    cr_assert_eq(m, 2.5);
    cr_assert_eq(drift_median(&m, x, 0), DRIFT_OK);
    cr_assert(isnan(m));
    cr_assert_eq(x[0], 3.0, "input untouched");
}
