/* test_sum_error.c — errors against the exact sum (lib/core/sum_error.h), distinct values with
 * counts (experiments/sum_order_perms/distinct.h), growth laws (lib/core/loglog.h) and clustered rates
 * (experiments/sampling_flip/cluster_rate.h). Expected values derived by hand next to each case. */
#include <criterion/criterion.h>
#include <math.h>

#include "cluster_rate.h"
#include "distinct.h"
#include "loglog.h"
#include "stats.h"
#include "sum_error.h"

/* 1e16 + 1 - 1e16 summed left to right in fp64 gives 0 (1e16 + 1 rounds back to 1e16: the
 * spacing there is 2); the exact sum is 1: abs 1, rel 1, and 2^52 ulps of fp64 at 1. */
Test(sum_error, the_lost_one)
{
    const double x[] = {1e16, 1, -1e16};
    drift_xacc_t s;
    double sum_abs;
    drift_exact_sum_abs(&s, &sum_abs, x, 3);
    /* sum |x| = 2e16 + 1 exactly; doubles near 2e16 (between 2^54 and 2^55) are 4 apart and
     * 2e16 = 4 * 5e15 is one, so rounded up: 2e16 + 4 */
    cr_assert_eq(sum_abs, 2e16 + 4);
    drift_sum_err_t m;
    drift_sum_error(&m, &s, 0.0, DRIFT_FP64);
    cr_assert(m.abs_err == 1 && m.rel_err == 1 && m.ulp_err == 0x1p52);
    drift_sum_error(&m, &s, 1.0, DRIFT_FP64);
    cr_assert(m.abs_err == 0 && m.rel_err == 0 && m.ulp_err == 0);
    drift_sum_error(&m, &s, INFINITY, DRIFT_FP64);
    cr_assert(isinf(m.abs_err) && isinf(m.rel_err));
}

Test(distinct, ascending_with_counts)
{
    const double x[] = {3, 1, 3, 2, 3, -0.0, 0.0, 1};
    drift_distinct_t b[8];
    int n = drift_distinct(b, x, 8);
    /* -0 == +0: one value; then 1 (twice), 2, 3 (three times) */
    cr_assert_eq(n, 4);
    cr_assert(b[0].v == 0 && b[0].count == 2 && b[1].v == 1 && b[1].count == 2);
    cr_assert(b[2].v == 2 && b[2].count == 1 && b[3].v == 3 && b[3].count == 3);
}

Test(loglog, slope_of_a_power_law)
{
    /* y = 3 sqrt(x): slope 1/2; the zero and the NaN are skipped. Logs of powers of 4 and of
     * 3 * 2^k are rounded once each, so the slope is 0.5 to within a few ulps: 1e-12. */
    const double x[] = {4, 16, 64, 256, 1024}, y[] = {6, 12, 0, 48, NAN};
    cr_assert(fabs(drift_loglog_slope(x, y, 5) - 0.5) < 1e-12);
    cr_assert(isnan(drift_loglog_slope(x, y, 1)), "one point has no slope");
}

/* The growth laws layer_drift fits (loglog.h), on cases solved by hand. */
Test(loglog, factor_per_step_of_an_exponential)
{
    /* y = 3 * 2^x at x = 1..4: log y = log 3 + x log 2 exactly on a line, so slope log 2,
     * intercept log 3, rms 0, up to the rounding of four logarithms: 1e-12. The zero and the
     * NaN are skipped (n = 4). */
    const double x[] = {1, 2, 3, 4, 5, 6}, y[] = {6, 12, 24, 48, 0, NAN};
    drift_logfit_t f;
    cr_assert_eq(drift_loglin_fit(&f, x, y, 6), 0);
    cr_assert_eq(f.n, 4);
    cr_assert(fabs(f.slope - log(2)) < 1e-12 && fabs(exp(f.slope) - 2) < 1e-12, "slope %.17g", f.slope);
    cr_assert(fabs(f.intercept - log(3)) < 1e-12, "intercept %.17g", f.intercept);
    cr_assert(f.rms < 1e-12, "rms %.17g", f.rms);
}

Test(loglog, misfit_is_the_rms_residual)
{
    /* log y = x + r at x = 0..3 with residuals r = (d, -d, -d, d): r sums to 0 and is
     * orthogonal to x - 3/2 (d (-3/2 + 1/2 - 1/2 + 3/2) = 0), so the least-squares line is
     * log y = x itself (slope 1: a factor e per step, intercept 0) and the rms residual is d.
     * d = 0.1: y = e^0.1, e^0.9, e^1.9, e^3.1; a few roundings: 1e-12. */
    const double d = 0.1, x[] = {0, 1, 2, 3}, y[] = {exp(d), exp(1 - d), exp(2 - d), exp(3 + d)};
    drift_logfit_t f;
    cr_assert_eq(drift_loglin_fit(&f, x, y, 4), 0);
    cr_assert(fabs(f.slope - 1) < 1e-12 && fabs(f.intercept) < 1e-12 && fabs(f.rms - d) < 1e-12, "%.17g %.17g %.17g",
        f.slope, f.intercept, f.rms);
    /* the same residuals on a power law: y = 5 l^(1/2) e^r at l = 1, 2, 4, 8 (log l = 0, 1, 2,
     * 3 times log 2: the residuals again sum to 0 and are orthogonal to log l - its mean): p = 1/2
     * (sqrt(L)'s law), intercept log 5, rms d. */
    const double l[] = {1, 2, 4, 8}, z[] = {5 * exp(d), 5 * sqrt(2) * exp(-d), 5 * 2 * exp(-d), 5 * sqrt(8) * exp(d)};
    cr_assert_eq(drift_loglog_fit(&f, l, z, 4), 0);
    cr_assert(fabs(f.slope - 0.5) < 1e-12 && fabs(f.intercept - log(5)) < 1e-12 && fabs(f.rms - d) < 1e-12,
        "%.17g %.17g %.17g", f.slope, f.intercept, f.rms);
    cr_assert(fabs(drift_loglog_slope(l, z, 4) - 0.5) < 1e-12, "the slope alone agrees");
}

Test(loglog, too_few_points_or_one_x)
{
    const double x[] = {2, 2, 2}, y[] = {1, 2, 3};
    drift_logfit_t f;
    cr_assert_eq(drift_loglin_fit(&f, x, y, 1), -1);
    cr_assert(f.n == 1 && isnan(f.slope) && isnan(f.rms), "one point has no line");
    cr_assert_eq(drift_loglin_fit(&f, x, y, 3), -1, "three points at one x have no slope");
    cr_assert(isnan(f.slope));
    const double l[] = {-1, 0, 4}, z[] = {1, 1, 2};
    cr_assert_eq(drift_loglog_fit(&f, l, z, 3), -1, "the power law keeps only x > 0: one point");
    cr_assert_eq(f.n, 1);
}

Test(cluster_rate, units_not_events)
{
    /* 4 units of 2 events, counts 0 1 2 1: fractions 0, 1/2, 1, 1/2, mean p = 1/2 over n = 4
     * units. Wilson by hand: centre (p + z^2/8) / (1 + z^2/4) = 1/2, half-width
     * z sqrt(p(1-p)/4 + z^2/64) / (1 + z^2/4) = z sqrt(1/16 + z^2/64) / (1 + z^2/4). A few
     * roundings of double arithmetic: 1e-12. */
    const long c[] = {0, 1, 2, 1};
    double r, lo, hi;
    drift_clustered_rate(&r, &lo, &hi, c, 4, 2);
    const double z = DRIFT_Z95, half = z * sqrt(1.0 / 16 + z * z / 64) / (1 + z * z / 4);
    cr_assert_eq(r, 0.5);
    cr_assert(fabs(lo - (0.5 - half)) < 1e-12 && fabs(hi - (0.5 + half)) < 1e-12, "[%g, %g]", lo, hi);
    /* no event: Wilson's interval for 0 of 4 units, [0, z^2 / (4 + z^2)] */
    const long zc[] = {0, 0, 0, 0};
    drift_clustered_rate(&r, &lo, &hi, zc, 4, 2);
    cr_assert(r == 0 && lo == 0 && fabs(hi - z * z / (4 + z * z)) < 1e-12, "[%g, %g]", lo, hi);
    /* one event among 128 units of 16 draws may not get a narrower interval than none (the
     * clustered Wald interval gave [0, 0.0014] against [0, 0.029]) */
    long one[128] = {0}, none[128] = {0};
    one[7] = 1;
    double l1, h1, l0, h0;
    drift_clustered_rate(&r, &l1, &h1, one, 128, 16);
    drift_clustered_rate(&r, &l0, &h0, none, 128, 16);
    cr_assert(h1 > h0, "one event %g, none %g", h1, h0);
}
