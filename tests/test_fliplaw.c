/* test_fliplaw.c — the three flip laws against independent witnesses.
 *
 * Witnesses: (1) exact enumeration of pairs on a grid of exact values with a uniform offset,
 * rounded by the lab's drift_round (validated against MPFR in test_format.c) and argmax taken
 * with the lowest-id tie rule, counted as integers and compared with the law as rationals;
 * (2) the Gaussian's published quantile; (3) direct numerical integration of the convolution;
 * (4) data simulated from a known law, for the fits and the model choice. */
#include <criterion/criterion.h>
#include <math.h>

#include "drift.h"
#include "fliplaw.h"
#include "format.h"
#include "philox.h"

/* Same binade. bf16 at [1, 2): q = 2^-7. Offsets j d with d = q / 2^m over two grid cells (one
 * with an even and one with an odd grid point, so the RNE ties of both parities are counted);
 * the top token's id is either of the two (both cases enumerated); argmax = lowest id among
 * equal stored values. Hand count (fliplaw.h): per pair of cells 2 (2^m - g) tied offsets for
 * gap g d with g < 2^m, each tie a flip in one of the two id cases, so
 * flips / (2 * 2^(m+1)) = (2^m - g) / 2^(m+1) = 1/2 (1 - g d / q) exactly. */
static void enumerate_same_binade(drift_format_t f, double base, int m)
{
    double q = drift_ulp(base, f), d = ldexp(q, -m);
    long cells = 2L << m; /* offsets over two cells */
    for (long g = 0; g <= (1L << m) + 2; g++) {
        long flips = 0, trials = 0;
        for (long j = 0; j < cells; j++) {
            double l2 = base + 8 * q + (double)j * d, l1 = l2 + (double)g * d; /* exact: few bits */
            double s1 = drift_round(l1, f, NULL, 0), s2 = drift_round(l2, f, NULL, 0);
            for (int top_id = 0; top_id < 2; top_id++) {
                /* top token has id top_id, the other 1 - top_id; argmax, lowest id on ties */
                double v0 = top_id == 0 ? s1 : s2, v1 = top_id == 0 ? s2 : s1;
                int pick = v1 > v0 ? 1 : 0;
                flips += g > 0 && pick != top_id;
                trials++;
            }
        }
        if (g == 0) continue; /* a zero gap is an exact tie, never a flip */
        double law = drift_fliplaw_p(DRIFT_FLIPLAW_TRIANGLE, (double)g * d, 0, q);
        if (g < (1L << m)) {
            /* law * trials is an integer here (a dyadic rational times 2^(m+2)): exact */
            cr_assert_eq((double)flips, law * (double)trials, "%s g=%ld: %ld flips of %ld, law %.17g",
                drift_format_name(f), g, flips, trials, law);
        } else if (g == (1L << m)) {
            /* gap exactly q: both ends of one even cell are ties that round to its even point,
             * one offset in 2^(m+1) (measure zero in the continuous law, which gives 0) */
            cr_assert_eq(flips, 1, "gap q: %ld", flips);
        } else {
            cr_assert_eq(flips, 0, "beyond q no flip: g=%ld flips=%ld", g, flips);
        }
    }
}

Test(fliplaw, triangle_is_exact_enumeration_bf16) { enumerate_same_binade(DRIFT_BF16, 1.0, 6); }
Test(fliplaw, triangle_is_exact_enumeration_fp16) { enumerate_same_binade(DRIFT_FP16, 24.0, 5); }
Test(fliplaw, triangle_is_exact_enumeration_fp32) { enumerate_same_binade(DRIFT_FP32, 3.0, 4); }

/* Straddling a binade boundary B = 2 in bf16: qlo = 2^-7 below, qhi = 2^-6 above. Lower logit
 * l2 = B - j d (j >= 1), upper l1 = l2 + g d >= B; count the j for which both round to one
 * value. Hand count: j <= qlo/(2d), j <= g, j >= g - qhi/(2d), so
 * count = min(g, a) - max(1, g - b) + 1 with a = qlo/2d, b = qhi/2d, which is L(g d)/d or
 * L(g d)/d + 1 (the closed ends: B - qlo/2 and B + qhi/2 are ties that go to B, even). */
Test(fliplaw, straddle_length_is_exact_enumeration)
{
    const double B = 2.0, qlo = 0x1p-7, qhi = 0x1p-6, d = 0x1p-12;
    long a = (long)(qlo / (2 * d)), bb = (long)(qhi / (2 * d));
    for (long g = 1; g <= 3 * bb; g++) {
        long count = 0;
        for (long j = 1; j <= 4 * bb; j++) {
            double l2 = B - (double)j * d, l1 = l2 + (double)g * d;
            if (l1 < B) continue;
            count += drift_rne(l1, DRIFT_BF16) == drift_rne(l2, DRIFT_BF16);
        }
        double L = drift_fliplaw_straddle_len((double)g * d, qlo, qhi) / d;
        long lo = g < a ? g : a, hi2 = g - bb > 1 ? g - bb : 1;
        long hand = lo - hi2 + 1 > 0 ? lo - hi2 + 1 : 0;
        cr_assert_eq(count, hand, "g=%ld: enumerated %ld, hand count %ld", g, count, hand);
        cr_assert(count == (long)L || count == (long)L + 1, "g=%ld: count %ld vs L/d %.3f", g, count, L);
        /* and no straddling tie at or beyond 0.75 qhi (plus the closed end) */
        if ((double)g * d > 0.75 * qhi) cr_assert_eq(count, 0);
    }
}

/* Phi^-1(0.001) = -3.090232306167813 and Phi^-1(0.01) = -2.326347874040841 (standard tables,
 * e.g. Abramowitz & Stegun 26.2); 1e-9 relative: AS 241 plus a Newton step is ~1e-15. */
Test(fliplaw, critical_gaps)
{
    cr_assert_float_eq(drift_fliplaw_gap_at(DRIFT_FLIPLAW_GAUSS, 2.0, 0, 0.001), 2 * 3.090232306167813, 1e-8);
    cr_assert_float_eq(drift_fliplaw_gap_at(DRIFT_FLIPLAW_GAUSS, 1.0, 0, 0.01), 2.326347874040841, 1e-8);
    /* triangle: 1/2 (1 - D/q) = p  =>  D = q (1 - 2p), exactly representable here */
    cr_assert_eq(drift_fliplaw_gap_at(DRIFT_FLIPLAW_TRIANGLE, 0, 0.5, 0.25), 0.25);
    cr_assert_float_eq(drift_fliplaw_gap_at(DRIFT_FLIPLAW_TRIANGLE, 0, 1.0, 0.001), 0.998, 1e-15);
    /* conv: the gap solves the law; it lies above both components' gaps (noise only widens) */
    double D = drift_fliplaw_gap_at(DRIFT_FLIPLAW_CONV, 0.1, 1.0, 0.001);
    cr_assert_float_eq(drift_fliplaw_p(DRIFT_FLIPLAW_CONV, D, 0.1, 1.0), 0.001, 1e-12);
    cr_assert(D > 0.998 && D > 0.309, "%g", D);
}

/* The convolution against direct integration: P(D) = integral ramp(D + e) phi(e/s)/s de with
 * ramp(x) = clamp(1/2 - x/2q, 0, 1), by the composite Simpson rule on [-12 s, 12 s] with
 * 200000 panels (error ~ (h^4) f'''' ~ 1e-14 where the ramp is smooth; the two kinks add
 * O(h^2) ~ 1e-10 each): tolerance 1e-8 absolute. */
static double ramp(double x, double q)
{
    double r = 0.5 - x / (2 * q);
    return r < 0 ? 0 : r > 1 ? 1 : r;
}

Test(fliplaw, conv_matches_numerical_integration)
{
    const double cases[][3] = {{0.0, 0.3, 1.0}, {0.5, 0.3, 1.0}, {1.2, 0.3, 1.0}, {2.0, 1.0, 0.5}, {0.1, 0.01, 1.0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        double D = cases[c][0], s = cases[c][1], q = cases[c][2];
        int n = 200000;
        double a = -12 * s, h = 24 * s / n, sum = 0;
        for (int i = 0; i <= n; i++) {
            double e = a + i * h, w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
            sum += w * ramp(D + e, q) * exp(-0.5 * (e / s) * (e / s)) / (s * sqrt(2 * M_PI));
        }
        sum *= h / 3;
        cr_assert_float_eq(drift_fliplaw_p(DRIFT_FLIPLAW_CONV, D, s, q), sum, 1e-8, "case %zu: %.12g vs %.12g", c,
            drift_fliplaw_p(DRIFT_FLIPLAW_CONV, D, s, q), sum);
    }
    /* limits: sigma -> 0 is the triangle, q -> 0 the Gaussian (to first order in the other) */
    cr_assert_float_eq(drift_fliplaw_p(DRIFT_FLIPLAW_CONV, 0.4, 1e-9, 1.0), 0.3, 1e-8);
    cr_assert_float_eq(drift_fliplaw_p(DRIFT_FLIPLAW_CONV, 0.4, 1.0, 1e-9), drift_phi(-0.4), 1e-8);
}

/* Simulated data: gaps log-uniform over [1e-3, 3] q (q = 1), flips drawn from a known law. */
static void simulate(double *gap, double *q, unsigned char *flip, size_t n, drift_fliplaw_t law, double sigma,
    double lo, double hi, uint64_t seed)
{
    drift_stream_t s;
    drift_stream_init(&s, seed, drift_fnv1a32("test_fliplaw"), 0, 0);
    for (size_t i = 0; i < n; i++) {
        gap[i] = lo * pow(hi / lo, drift_stream_uniform(&s));
        q[i] = 1.0;
        flip[i] = drift_stream_uniform(&s) < drift_fliplaw_p(law, gap[i], sigma, 1.0);
    }
}

#define NSIM 3000
Test(fliplaw, fits_recover_the_law_and_choose_it)
{
    static double gap[NSIM], q[NSIM];
    static unsigned char flip[NSIM];
    drift_logbins_t bins;
    cr_assert_eq(drift_logbins_init(&bins, 1e-3, 3, 24), 0);

    /* triangle data: kappa's 95% interval holds 1 (coverage: fails 5% of seeds; seed fixed) */
    simulate(gap, q, flip, NSIM, DRIFT_FLIPLAW_TRIANGLE, 0, 1e-3, 3, 1);
    drift_fliplaw_fit_t T, G, C;
    cr_assert_eq(drift_fliplaw_fit(&T, DRIFT_FLIPLAW_TRIANGLE, gap, q, flip, NSIM, &bins), 0);
    cr_assert_eq(drift_fliplaw_fit(&G, DRIFT_FLIPLAW_GAUSS, gap, NULL, flip, NSIM, &bins), 0);
    cr_assert(T.lo <= 1 && 1 <= T.hi, "kappa %g [%g, %g]", T.theta, T.lo, T.hi);
    drift_fliplaw_choice_t ch;
    cr_assert_eq(drift_fliplaw_choose(&ch, &T, &G, gap, q, flip, NSIM), 0);
    cr_assert(
        ch.dloglik > 0 && ch.decided, "triangle data: dloglik %g power %g/%g", ch.dloglik, ch.power_a, ch.power_b);

    /* Gaussian data with sigma = 0.2 q, gaps over [0.01, 2] q (most pairs informative): the
     * Gaussian wins and sigma's interval holds 0.2 */
    simulate(gap, q, flip, NSIM, DRIFT_FLIPLAW_GAUSS, 0.2, 1e-2, 2, 2);
    cr_assert_eq(drift_fliplaw_fit(&T, DRIFT_FLIPLAW_TRIANGLE, gap, q, flip, NSIM, &bins), 0);
    cr_assert_eq(drift_fliplaw_fit(&G, DRIFT_FLIPLAW_GAUSS, gap, NULL, flip, NSIM, &bins), 0);
    cr_assert(G.lo <= 0.2 && 0.2 <= G.hi, "sigma %g [%g, %g]", G.theta, G.lo, G.hi);
    cr_assert_eq(drift_fliplaw_choose(&ch, &G, &T, gap, q, flip, NSIM), 0);
    cr_assert(ch.dloglik > 0 && ch.decided, "gauss data: dloglik %g power %g", ch.dloglik, ch.power_a);

    /* conv data (sigma = 0.3 q): the conv fit holds sigma, and beats the pure triangle */
    simulate(gap, q, flip, NSIM, DRIFT_FLIPLAW_CONV, 0.3, 1e-3, 3, 3);
    cr_assert_eq(drift_fliplaw_fit(&C, DRIFT_FLIPLAW_CONV, gap, q, flip, NSIM, &bins), 0);
    cr_assert(C.lo <= 0.3 && 0.3 <= C.hi, "conv sigma %g [%g, %g]", C.theta, C.lo, C.hi);
    cr_assert(C.df >= 3, "enough groups for a goodness of fit: %d", C.df);

    /* A design without power: 40 pairs, all at gaps 2..3 q, where both laws predict (almost)
     * no flips: the choice must not be declared decided. */
    simulate(gap, q, flip, 40, DRIFT_FLIPLAW_GAUSS, 0.2, 2, 3, 4);
    cr_assert_eq(drift_fliplaw_fit(&T, DRIFT_FLIPLAW_TRIANGLE, gap, q, flip, 40, NULL), 0);
    cr_assert_eq(drift_fliplaw_fit(&G, DRIFT_FLIPLAW_GAUSS, gap, NULL, flip, 40, NULL), 0);
    cr_assert_eq(drift_fliplaw_choose(&ch, &G, &T, gap, q, flip, 40), 0);
    cr_assert(!ch.decided, "no power, yet decided: %g %g %g", ch.dloglik, ch.power_a, ch.power_b);
}

Test(fliplaw, names_and_bad_arguments)
{
    drift_fliplaw_t l;
    cr_assert_eq(drift_fliplaw_parse(&l, "conv"), 0);
    cr_assert_eq(l, DRIFT_FLIPLAW_CONV);
    cr_assert_eq(drift_fliplaw_parse(&l, "normal"), DRIFT_EINVAL);
    cr_assert(isnan(drift_fliplaw_p(DRIFT_FLIPLAW_GAUSS, -1, 1, 0)));
    cr_assert(isnan(drift_fliplaw_gap_at(DRIFT_FLIPLAW_TRIANGLE, 0, 1, 0.5)));
    drift_fliplaw_fit_t F;
    double g = 1;
    unsigned char f = 0;
    cr_assert_eq(drift_fliplaw_fit(&F, DRIFT_FLIPLAW_TRIANGLE, &g, NULL, &f, 1, NULL), DRIFT_EINVAL);
}
