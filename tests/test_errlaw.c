/* test_errlaw.c — the error laws against independent witnesses: values of the normal CDF
 * computed with mpmath at 60 digits (written next to each case), the closed-form KL of two
 * Gaussians, the Gaussian's closed-form maximum likelihood, and data simulated from a known
 * mechanism (Gaussian noise, then round to nearest on a grid) for the CONV fit and the test
 * between the laws. */
#include <criterion/criterion.h>
#include <math.h>

#include "drift.h"
#include "errlaw.h"
#include "format.h"
#include "philox.h"

Test(errlaw, conv_density_at_hand_values)
{
    /* sigma = 1, q = 2, e = 0: (1/2) (Phi(1) - Phi(-1)); mpmath: log = -1.07486232686207138 */
    cr_assert(fabs(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, 0, 1, 2) - -1.0748623268620714) < 1e-13);
    /* e = 0.25, sigma = 0.1, q = 1: Phi(7.5) - Phi(-2.5); mpmath: log = -0.00622902548589211068 */
    cr_assert(fabs(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, 0.25, 0.1, 1) - -0.0062290254858921107) < 1e-13);
    /* far in the tail, e = 20, sigma = 1, q = 2: (1/2)(Q(19) - Q(21)); mpmath: log = -185.059275849720913.
     * A plain difference of Phi values gives -inf here. */
    cr_assert(fabs(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, 20, 1, 2) - -185.05927584972091) < 1e-9);
    cr_assert(fabs(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, -20, 1, 2) - -185.05927584972091) < 1e-9, "symmetric");
}

Test(errlaw, limits_and_bad_parameters)
{
    /* q -> 0: the Gaussian, log f(0.3; 1) = -0.045 - log sqrt(2 pi) */
    const double g = -0.5 * 0.09 - 0.5 * log(2 * M_PI);
    cr_assert(fabs(drift_errlaw_logpdf(DRIFT_ERRLAW_GAUSS, 0.3, 1, 5) - g) < 1e-15, "GAUSS ignores q");
    cr_assert(fabs(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, 0.3, 1, 0) - g) < 1e-15);
    cr_assert(
        fabs(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, 0.3, 1, 1e-3) - g) < 1e-6, "O(q^2 / sigma^2) from the Gaussian");
    /* sigma -> 0: the uniform on [-q/2, q/2] */
    cr_assert(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, 0.1, 0, 0.5) == -log(0.5));
    cr_assert(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, 0.25, 0, 0.5) == -log(1.0), "half the density on the edge");
    cr_assert(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, 0.3, 0, 0.5) == -INFINITY);
    cr_assert(fabs(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, 0.1, 1e-9, 0.5) - -log(0.5)) < 1e-12);
    cr_assert(isnan(drift_errlaw_logpdf(DRIFT_ERRLAW_GAUSS, 0.1, 0, 1)));
    cr_assert(isnan(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, 0.1, -1, 1)));
    cr_assert(isnan(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, NAN, 1, 1)));
}

Test(errlaw, conv_density_integrates_to_one)
{
    /* trapezoid over +-(q/2 + 12 sigma), fine against both scales */
    const double s[] = {0.01, 0.3, 2}, q = 1;
    for (int k = 0; k < 3; k++) {
        double L = q / 2 + 12 * s[k], h = 2 * L / 200000, sum = 0;
        for (int i = 0; i <= 200000; i++)
            sum += (i == 0 || i == 200000 ? 0.5 : 1) * exp(drift_errlaw_logpdf(DRIFT_ERRLAW_CONV, -L + h * i, s[k], q));
        cr_assert(fabs(sum * h - 1) < 1e-6, "sigma %g: integral %.12g", s[k], sum * h);
    }
}

Test(errlaw, fits)
{
    const double e[] = {-3, -1, 1, 3};
    double s;
    cr_assert_eq(drift_errlaw_fit(&s, DRIFT_ERRLAW_GAUSS, e, 4, 0), 0);
    cr_assert(fabs(s - sqrt(5)) < 1e-15, "the rms");
    /* simulated: exact values uniform on a grid of spacing q = 1, noise sd 0.3, then rounded
     * to the grid: the CONV fit recovers the noise (n = 20000: sd of the estimate ~1 %) and
     * the Gaussian fit the total sd sqrt(0.09 + 1/12) = 0.416 */
    enum { N = 20000 };
    static double x[N];
    drift_stream_t st;
    drift_stream_init(&st, 7, drift_fnv1a32("test_errlaw"), 0, 0);
    for (int i = 0; i < N; i++) {
        double u1 = (drift_stream_u32(&st) + 0.5) / 4294967296.0, u2 = (drift_stream_u32(&st) + 0.5) / 4294967296.0;
        double v = 100 * u1 + 0.3 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2), exact = 100 * u1;
        x[i] = nearbyint(v) - exact;
    }
    cr_assert_eq(drift_errlaw_fit(&s, DRIFT_ERRLAW_CONV, x, N, 1), 0);
    cr_assert(fabs(s - 0.3) < 0.02, "CONV sigma %g", s);
    double sg;
    cr_assert_eq(drift_errlaw_fit(&sg, DRIFT_ERRLAW_GAUSS, x, N, 1), 0);
    cr_assert(fabs(sg - sqrt(0.09 + 1.0 / 12)) < 0.01, "GAUSS sigma %g", sg);
    /* the right law wins on these data, by about what the power says: the log-likelihood
     * ratio's expectation is N KL(CONV || GAUSS) (about 48 here), its sd about
     * sqrt(2 N KL) (10) */
    double d =
        drift_errlaw_loglik(DRIFT_ERRLAW_CONV, x, N, s, 1) - drift_errlaw_loglik(DRIFT_ERRLAW_GAUSS, x, N, sg, 1);
    double power = N * drift_errlaw_kl(DRIFT_ERRLAW_CONV, s, DRIFT_ERRLAW_GAUSS, sg, 1);
    cr_assert(d > 2.995732273553991, "log-likelihood ratio %g", d);
    cr_assert(fabs(d - power) < 4 * sqrt(2 * power), "log-likelihood ratio %g, expected %g", d, power);
    /* bad input */
    cr_assert_eq(drift_errlaw_fit(&s, DRIFT_ERRLAW_CONV, x, 0, 1), DRIFT_EINVAL);
    const double bad[] = {0.1, INFINITY};
    cr_assert_eq(drift_errlaw_fit(&s, DRIFT_ERRLAW_CONV, bad, 2, 1), DRIFT_EINVAL);
    const double zero[] = {0, 0};
    cr_assert_eq(drift_errlaw_fit(&s, DRIFT_ERRLAW_GAUSS, zero, 2, 0), DRIFT_EINVAL);
}

Test(errlaw, kl)
{
    /* two Gaussians: log(s2/s1) + s1^2 / (2 s2^2) - 1/2; sigma 1 against 2: 0.318147180559945309 */
    cr_assert(fabs(drift_errlaw_kl(DRIFT_ERRLAW_GAUSS, 1, DRIFT_ERRLAW_GAUSS, 2, 0) - 0.31814718055994531) < 1e-9);
    cr_assert(fabs(drift_errlaw_kl(DRIFT_ERRLAW_GAUSS, 1, DRIFT_ERRLAW_GAUSS, 1, 0)) < 1e-12);
    /* CONV with q far below sigma is the Gaussian: no power to tell them apart */
    cr_assert(drift_errlaw_kl(DRIFT_ERRLAW_CONV, 1, DRIFT_ERRLAW_GAUSS, 1, 1e-4) < 1e-9);
    /* a Gaussian against the pure uniform: infinite (the uniform cannot explain a tail) */
    cr_assert(drift_errlaw_kl(DRIFT_ERRLAW_GAUSS, 1, DRIFT_ERRLAW_CONV, 0, 1) == INFINITY);
    cr_assert(drift_errlaw_kl(DRIFT_ERRLAW_CONV, 0.05, DRIFT_ERRLAW_GAUSS, sqrt(0.0025 + 1.0 / 12), 1) > 0.1);
}

/* Per binade, held out by unit: values in two binades of bf16, errors simulated by the
 * mechanism. In [16, 32) bf16's spacing is q = 2^-3 = 0.125; with noise sd 0.01 the
 * stored value's error is nearly the uniform rounding: CONV must win on every unit. In
 * [2^-3, 2^-2) q = 2^-10, far below the same noise: the two laws coincide and no test can
 * decide (power ~ (q/sigma)^4 n). Values below 2^-3 are left out. */
Test(errlaw, binades_decide_where_the_mechanism_shows)
{
    enum { N = 6000 };
    static double err[N], val[N];
    static int unit[N];
    drift_stream_t st;
    drift_stream_init(&st, 11, drift_fnv1a32("test_errlaw.binades"), 0, 0);
    for (int i = 0; i < N; i++) {
        double u1 = (drift_stream_u32(&st) + 0.5) / 4294967296.0, u2 = (drift_stream_u32(&st) + 0.5) / 4294967296.0;
        double g = 0.01 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
        int b = i % 3; /* 0: [16, 32); 1: [2^-3, 2^-2); 2: below, left out */
        double v = b == 0 ? 16 + 16 * u1 : b == 1 ? 0.125 + 0.125 * u1 : 0.01 * u1;
        val[i] = v, err[i] = drift_round(v + g, DRIFT_BF16, NULL, 0) - v, unit[i] = (i / 3) % 3;
    }
    drift_errlaw_bin_t bins[9];
    int nb = drift_errlaw_binades(bins, err, val, unit, N, 3, -3, 9, DRIFT_BF16);
    cr_assert_eq(nb, 2, "two binades hold values");
    cr_assert(bins[0].lo == 0.125 && bins[0].q == ldexp(1, -10) && bins[0].n == N / 3);
    cr_assert_eq(bins[0].winner, 'u', "q far below the noise: undecided (power %g)", bins[0].power_conv);
    cr_assert(bins[1].lo == 16 && bins[1].q == 0.125 && bins[1].folds == 3);
    cr_assert_eq(
        bins[1].winner, 'c', "the rounding shows: CONV (dloglik %g, power %g)", bins[1].dloglik, bins[1].power_conv);
    cr_assert_eq(bins[1].folds_conv, 3);
    cr_assert(bins[1].sigma_conv < 0.02, "the noise under the rounding: %g", bins[1].sigma_conv);
    cr_assert(
        fabs(bins[1].rms - 0.125 / sqrt(12)) < 0.01, "the rms is about the uniform's q / sqrt 12: %g", bins[1].rms);
}
