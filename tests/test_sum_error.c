/* test_sum_error.c — errors against the exact sum (lib/core/sum_error.h), distinct values with
 * counts (lib/core/distinct.h), growth exponents (lib/core/loglog.h) and clustered rates
 * (lib/core/cluster_rate.h). Expected values derived by hand next to each case. */
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
