/* test_forecast.c — the parting forecast (forecast.h) against hand derivations and simulation.
 *
 * Witnesses: (1) hand sums for the fits (the root mean square and the mean |x| of a few
 * deltas, the shares of nonzero steps); (2) the Gaussian's tabulated tail Phi(-1) =
 * 0.158655253931457 (Abramowitz & Stegun 26.2) and exp for the Laplace tail; (3) the product
 * rule 1 - (1 - p)^n written out; (4) hand Brier scores and log losses; (5) deltas simulated
 * from a known law with Philox (the fit must recover its parameter, and on simulated gaps and
 * flips the forecast must be calibrated and beat the constant rate). */
#include <criterion/criterion.h>
#include <math.h>

#include "drift.h"
#include "forecast.h"
#include "philox.h"

#define PHI_M1 0.158655253931457051 /* Phi(-1) */

Test(forecast, fit_by_hand)
{
    /* three zeros, three seen nonzero deltas (0.1, -0.1, 0.2), one unseen (NaN) */
    const double d[] = {0, 0, 0.1, -0.1, 0, 0.2, NAN};
    drift_delta_fit_t f;
    cr_assert_eq(drift_delta_fit(&f, d, NULL, 7), 0);
    cr_assert_eq(f.steps[0], 7);
    cr_assert_eq(f.nonzero[0], 4);
    cr_assert_float_eq(f.pi[0], 4.0 / 7.0, 1e-15);
    cr_assert_float_eq(f.sigma, sqrt(0.06 / 3), 1e-15); /* (0.01 + 0.01 + 0.04) / 3 */
    cr_assert_float_eq(f.b, 0.4 / 3, 1e-15);
    /* log-likelihoods of the three seen values under each law, by hand */
    double s = sqrt(0.02), b = 0.4 / 3, lg = 0, ll = 0;
    const double x[] = {0.1, -0.1, 0.2};
    for (int i = 0; i < 3; i++) {
        lg += -0.5 * (x[i] / s) * (x[i] / s) - log(s * sqrt(2 * M_PI));
        ll += -fabs(x[i]) / b - log(2 * b);
    }
    cr_assert_float_eq(f.loglik[DRIFT_DELTA_GAUSS], lg, 1e-12);
    cr_assert_float_eq(f.loglik[DRIFT_DELTA_LAPLACE], ll, 1e-12);
    cr_assert_eq(f.law, lg >= ll ? DRIFT_DELTA_GAUSS : DRIFT_DELTA_LAPLACE);
}

Test(forecast, fit_classes_and_bad_input)
{
    const double d[] = {0, 0.5, 0, 0, 0, -0.5};
    const unsigned char c[] = {0, 0, 0, 0, 1, 1};
    drift_delta_fit_t f;
    cr_assert_eq(drift_delta_fit(&f, d, c, 6), 0);
    cr_assert_float_eq(f.pi[0], 0.25, 1e-15);
    cr_assert_float_eq(f.pi[1], 0.5, 1e-15);
    cr_assert_float_eq(f.sigma, 0.5, 1e-15);
    const unsigned char bad[] = {0, 2};
    cr_assert_eq(drift_delta_fit(&f, d, bad, 2), DRIFT_EINVAL);
    const double inf[] = {INFINITY};
    cr_assert_eq(drift_delta_fit(&f, inf, NULL, 1), DRIFT_EINVAL);
    /* nothing nonzero: only a tie can go either way */
    const double z[] = {0, 0, NAN};
    cr_assert_eq(drift_delta_fit(&f, z, NULL, 3), 0);
    cr_assert_eq(f.sigma, 0);
    cr_assert_float_eq(drift_forecast_step(&f, -1, 0, 0), 0.5 / 3, 1e-15);
    cr_assert_eq(drift_forecast_step(&f, -1, 0.1, 0), 0);
}

Test(forecast, step_risk_is_the_laws_tail)
{
    drift_delta_fit_t f = {.law = DRIFT_DELTA_GAUSS, .sigma = 0.2, .b = 0.1, .pi = {0.5, 1}};
    cr_assert_float_eq(drift_forecast_step(&f, DRIFT_DELTA_GAUSS, 0.2, 0), 0.5 * PHI_M1, 1e-14);
    cr_assert_float_eq(drift_forecast_step(&f, DRIFT_DELTA_GAUSS, 0.2, 1), PHI_M1, 1e-14);
    cr_assert_float_eq(drift_forecast_step(&f, DRIFT_DELTA_LAPLACE, 0.2, 1), 0.5 * exp(-2.0), 1e-15);
    cr_assert_float_eq(drift_forecast_step(&f, -1, 0, 1), 0.5, 1e-15); /* a tie: either way */
    cr_assert(isnan(drift_forecast_step(&f, -1, -0.1, 0)));
    cr_assert(isnan(drift_forecast_step(&f, -1, NAN, 0)));
    cr_assert(isnan(drift_forecast_step(&f, -1, 0.1, 2)));
}

Test(forecast, text_risk_is_one_minus_the_product)
{
    drift_delta_fit_t f = {.law = DRIFT_DELTA_GAUSS, .sigma = 0.2, .pi = {1, 1}};
    const double gap[] = {0.4, 0.2, 0.2, 5.0};
    drift_forecast_t r;
    cr_assert_eq(drift_forecast_text(&r, &f, -1, gap, NULL, 4), 0);
    double q0 = 0.022750131948179207; /* Phi(-2), A & S 26.2 */
    double want = 1 - (1 - q0) * (1 - PHI_M1) * (1 - PHI_M1) * (1 - 0.5 * erfc(25 / sqrt(2)));
    cr_assert_float_eq(r.p, want, 1e-14);
    cr_assert_eq(r.step, 1); /* the first of the two largest risks */
    cr_assert_float_eq(r.step_p, PHI_M1, 1e-14);
    cr_assert_float_eq(r.step_gap, 0.2, 0);
    const double bad[] = {0.1, NAN};
    cr_assert_eq(drift_forecast_text(&r, &f, -1, bad, NULL, 2), DRIFT_EINVAL);
    cr_assert_eq(drift_forecast_text(&r, &f, -1, gap, NULL, 0), 0);
    cr_assert_eq(r.p, 0);
    cr_assert_eq(r.step, -1);
}

Test(forecast, empirical_tail_by_hand)
{
    /* seen nonzero |delta|: 0.125, 0.125, 0.25 (n = 3); Q(d) = (#{> d} + #{= d} / 2) / 6 */
    const double d[] = {0, 0.125, -0.125, 0.25, NAN};
    drift_delta_ecdf_t e;
    cr_assert_eq(drift_delta_ecdf(&e, d, 5), 0);
    cr_assert_eq(e.n, 3);
    cr_assert_float_eq(drift_delta_ecdf_tail(&e, 0), 0.5, 0);
    cr_assert_float_eq(drift_delta_ecdf_tail(&e, 0.1), 0.5, 0);
    cr_assert_float_eq(drift_delta_ecdf_tail(&e, 0.125), 2.0 / 6, 1e-15);
    cr_assert_float_eq(drift_delta_ecdf_tail(&e, 0.2), 1.0 / 6, 1e-15);
    cr_assert_float_eq(drift_delta_ecdf_tail(&e, 0.25), 1.0 / 12, 1e-15);
    cr_assert_eq(drift_delta_ecdf_tail(&e, 0.3), 0);
    cr_assert(isnan(drift_delta_ecdf_tail(&e, -1)));
    /* a text of gaps 0.125 and 0.25 with pi = 1/2: 1 - (1 - 1/6)(1 - 1/24) */
    drift_delta_fit_t f = {.pi = {0.5, 0.5}};
    const double gap[] = {0.125, 0.25};
    drift_forecast_t r;
    cr_assert_eq(drift_forecast_text_ecdf(&r, &f, &e, gap, NULL, 2), 0);
    cr_assert_float_eq(r.p, 1 - (5.0 / 6) * (23.0 / 24), 1e-15);
    cr_assert_eq(r.step, 0);
    drift_delta_ecdf_free(&e);
}

Test(forecast, scores_by_hand)
{
    const double p[] = {0.9, 0.2, 0, 1};
    const unsigned char y[] = {1, 0, 1, 1};
    /* (0.01 + 0.04 + 1 + 0) / 4 */
    cr_assert_float_eq(drift_brier(p, y, 4), 1.05 / 4, 1e-15);
    /* -log 0.9 - log 0.8 - log 1e-3 - log 0.999, over 4 (p clamped to [1e-3, 0.999]) */
    double ll = (-log(0.9) - log(0.8) - log(1e-3) - log(0.999)) / 4;
    cr_assert_float_eq(drift_log_loss(p, y, 4), ll, 1e-14);
    cr_assert(isnan(drift_brier(p, y, 0)));
    /* skill: the reference 0.75 everywhere has Brier (3 * 0.0625 + 0.5625) / 4 = 0.1875 */
    const double r[] = {0.75, 0.75, 0.75, 0.75};
    double s, lo, hi;
    cr_assert_eq(drift_brier_skill(&s, &lo, &hi, p, r, y, 4, 1, 500, 0.95), 0);
    cr_assert_float_eq(s, 1 - (1.05 / 4) / 0.1875, 1e-14);
    cr_assert(lo <= hi);
    /* a reference without error leaves no skill to measure */
    const unsigned char y1[] = {1, 1, 1, 1};
    const double r1[] = {1, 1, 1, 1};
    cr_assert_eq(drift_brier_skill(&s, &lo, &hi, p, r1, y1, 4, 1, 100, 0.95), 0);
    cr_assert(isnan(s) && isnan(lo) && isnan(hi));
    cr_assert_eq(drift_brier_skill(&s, &lo, &hi, p, r, y, 0, 1, 100, 0.95), DRIFT_EINVAL);
}

/* a standard normal from two Philox uniforms (Box-Muller) */
static double normal(drift_stream_t *s)
{
    double u = drift_stream_uniform_pos(s), v = drift_stream_uniform(s);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

Test(forecast, simulated_law_is_recovered_and_calibrated)
{
    /* deltas: 0 with probability 0.6, else N(0, 0.05^2) */
    enum { N = 200000 };
    static double d[N];
    drift_stream_t st;
    drift_stream_init(&st, 7, drift_fnv1a32("test.forecast"), 0, 0);
    for (int i = 0; i < N; i++) d[i] = drift_stream_uniform(&st) < 0.6 ? 0 : 0.05 * normal(&st);
    drift_delta_fit_t f;
    cr_assert_eq(drift_delta_fit(&f, d, NULL, N), 0);
    cr_assert_float_eq(f.pi[0], 0.4, 0.005);
    cr_assert_float_eq(f.sigma, 0.05, 0.0005);
    cr_assert_eq(f.law, DRIFT_DELTA_GAUSS);
    /* texts of 16 steps with gaps exponential of mean 0.3; a text parts at its first step
     * where gap + delta < 0 under the true law. The forecast from the fitted law is calibrated
     * (predicted total within 5 % of the observed) and beats the constant rate. */
    enum { P = 4000, T = 16 };
    static double p[P], c[P];
    static unsigned char y[P];
    double sum = 0;
    long k = 0;
    for (int i = 0; i < P; i++) {
        double gap[T];
        y[i] = 0;
        for (int t = 0; t < T; t++) {
            gap[t] = -0.3 * log(drift_stream_uniform_pos(&st));
            double delta = drift_stream_uniform(&st) < 0.6 ? 0 : 0.05 * normal(&st);
            if (!y[i] && gap[t] + delta < 0) y[i] = 1;
        }
        drift_forecast_t r;
        cr_assert_eq(drift_forecast_text(&r, &f, -1, gap, NULL, T), 0);
        p[i] = r.p, sum += r.p, k += y[i];
    }
    for (int i = 0; i < P; i++) c[i] = (double)k / P;
    cr_assert(fabs(sum - (double)k) < 0.05 * (double)k + 10, "predicted %g, observed %ld", sum, k);
    double s, lo, hi;
    cr_assert_eq(drift_brier_skill(&s, &lo, &hi, p, c, y, P, 1, 200, 0.95), 0);
    cr_assert(s > 0.05 && lo > 0, "skill %g [%g, %g]", s, lo, hi);
}

/* By hand: gaps 0.1 and 0.2 parted, 0.5 and 0.9 did not; tau = 0.1 leaves everything above
 * (rate 1/2, Brier 1/4), tau = 0.5 splits them exactly (rates 1 and 0, Brier 0). */
Test(forecast, gap_threshold_by_hand)
{
    const double mg[] = {0.1, 0.5, 0.2, 0.9};
    const unsigned char y[] = {1, 0, 1, 0};
    drift_gap_threshold_t t = drift_gap_threshold_fit(mg, y, 4);
    cr_expect_eq(t.tau, 0.5);
    cr_expect_eq(t.below, 1.0);
    cr_expect_eq(t.above, 0.0);
    const unsigned char none[] = {0, 0, 0, 0}; /* no parting: every tau ties at Brier 0, the first (0.1) is kept */
    t = drift_gap_threshold_fit(mg, none, 4);
    cr_expect_eq(t.tau, 0.1);
    cr_expect_eq(t.above, 0.0);
}

/* By hand: forecasts 0.1, 0.2 (one event) in [0, 0.5), 0.9 (an event) in [0.5, 1]; the
 * Wilson 95 % interval of 1 of 2 is 0.5 +- 1.96 sqrt(1/8 + 1.96^2/16) / (1 + 1.96^2/2)
 * = [0.094531, 0.905469]; an empty bin is left out. */
Test(forecast, reliability_by_hand)
{
    const double edges[] = {0, 0.5, 0.7, 1.0000001}, p[] = {0.1, 0.2, 0.9};
    const unsigned char y[] = {0, 1, 1};
    drift_rel_bin_t b[3];
    cr_assert_eq(drift_reliability(b, edges, 4, p, y, 3), 2);
    cr_expect(b[0].n == 2 && b[0].k == 1 && b[1].n == 1 && b[1].k == 1);
    cr_expect_float_eq(b[0].mean_p, 0.15, 1e-15);
    cr_expect_eq(b[1].lo, 0.7);
    cr_expect_float_eq(b[0].wilson_lo, 0.0945312, 1e-6);
    cr_expect_float_eq(b[0].wilson_hi, 0.9054688, 1e-6);
}

/* The tie rule by hand. A Gaussian delta of sd 1 on every step (pi = 1), A's gap 0.3, eps 0.5.
 * Runner-up with the lower id: A's gap is below eps, so A picks the runner-up; B picks it
 * too unless its gap reaches eps: delta > 0.2, P = Phi(-0.2). Top with the lower id: both
 * pick the top unless B's gap falls below -eps: delta < -0.8, P = Phi(-0.8). At eps = 0
 * both are the plain risk Phi(-0.3). Phi values from mpmath (30 digits). */
Test(forecast, tie_rule_by_hand)
{
    drift_delta_fit_t f = {.law = DRIFT_DELTA_GAUSS, .sigma = 1, .pi = {1, 1}};
    cr_assert(fabs(drift_tie_step_risk(&f, 0.3, 1, 0.5) - 0.42074029056089697) < 1e-15);
    cr_assert(fabs(drift_tie_step_risk(&f, 0.3, 0, 0.5) - 0.21185539858339667) < 1e-15);
    cr_assert(fabs(drift_tie_step_risk(&f, 0.3, 1, 0) - 0.38208857781104737) < 1e-15);
    cr_assert(fabs(drift_tie_step_risk(&f, 0.3, 0, 0) - 0.38208857781104737) < 1e-15);
    /* the rule acts only where a gap is below eps and the runner-up has the lower id */
    const double t1[] = {5, 5, 5}, t2[] = {4, 4.875, 4.9375}; /* gaps 1, 0.125, 0.0625: exact in binary */
    const int tok[] = {10, 10, 10}, run_hi[] = {20, 20, 20}, run_lo[] = {20, 20, 3};
    cr_assert_eq(drift_tie_rule_acts(t1, t2, tok, run_hi, 3, 0.2), 0, "runners-up above the top's id: greedy's picks");
    cr_assert_eq(drift_tie_rule_acts(t1, t2, tok, run_lo, 3, 0.2), 1, "step 2: gap 0.0625 < 0.2, runner-up id 3 < 10");
    cr_assert_eq(drift_tie_rule_acts(t1, t2, tok, run_lo, 3, 0.0625), 0, "gap 0.0625 is not below 0.0625");
    /* causes: gaps either side of eps; both below with another top two; both above */
    cr_assert_eq(drift_tie_parting_cause(0.1, 7, 3, 0.3, 7, 3, 0.2), DRIFT_TIE_BOUNDARY);
    cr_assert_eq(drift_tie_parting_cause(0.1, 7, 3, 0.15, 7, 9, 0.2), DRIFT_TIE_OTHER_PAIR);
    cr_assert_eq(drift_tie_parting_cause(0.3, 7, 3, 0.4, 3, 7, 0.2), DRIFT_TIE_CROSSED);
    cr_assert_eq(drift_tie_parting_cause(0.1, 7, 3, 0.15, 3, 7, 0.2), DRIFT_TIE_CROSSED,
        "both below, the same two: not a parting of the rule's");
}
