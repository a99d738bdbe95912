/* test_flipfit.c — the implied flip law per configuration, and critical gaps that lie where
 * flips can occur. Witness: a flip set simulated from the exact enumeration's law (the
 * triangle of test_fliplaw.c) on bf16 logits, whose critical gaps are known by hand:
 * D_P = kappa q (1 - 2P) with q = ulp_bf16(l1), at the kappa the fit returns. */
#include <criterion/criterion.h>
#include <math.h>

#include "drift.h"
#include "flipfit.h"
#include "philox.h"

Test(flipfit, implied_law_per_mechanism)
{
    cr_assert_eq(drift_flip_implied_law(1, DRIFT_FP32, DRIFT_FP32), DRIFT_FLIPLAW_TRIANGLE);
    cr_assert_eq(drift_flip_implied_law(0, DRIFT_FP32, DRIFT_BF16), DRIFT_FLIPLAW_CONV);
    cr_assert_eq(drift_flip_implied_law(0, DRIFT_BF16, DRIFT_BF16), DRIFT_FLIPLAW_CONV);
    cr_assert_eq(drift_flip_implied_law(0, DRIFT_FP32, DRIFT_FP32), DRIFT_FLIPLAW_GAUSS);
}

Test(flipfit, triangle_set_gives_gaps_below_one_ulp)
{
    const size_t n = 4000;
    drift_flipset_t s;
    cr_assert_eq(drift_flipset_alloc(&s, n, 1), 0);
    drift_stream_t st;
    drift_stream_init(&st, 5, drift_fnv1a32("test_flipfit"), 0, 0);
    for (size_t i = 0; i < n; i++) {
        drift_flip_trial_t *t = &s.t[i];
        t->s = 2.0;
        t->l1 = 9.0 + drift_stream_uniform(&st); /* bf16 ulp in [8, 16): 2^-4 */
        t->gap = 0x1p-4 * 1e-3 * pow(3e3, drift_stream_uniform(&st));
        t->rel = t->gap / t->s;
        s.flip[i] = drift_stream_uniform(&st) < drift_fliplaw_p(DRIFT_FLIPLAW_TRIANGLE, t->gap, 0, 0x1p-4);
    }
    drift_flip_laws_t L;
    drift_logbins_t bins;
    cr_assert_eq(drift_logbins_init(&bins, 1e-6, 1, 24), 0);
    cr_assert_eq(drift_flipset_laws(&L, &s, 0, DRIFT_FLIPLAW_TRIANGLE, DRIFT_BF16, &bins), 0);
    cr_assert_eq(L.pairs, (long)n);
    cr_assert_float_eq(L.q_med, 0x1p-4 / 2.0, 0); /* every l1 in one binade: q / s exactly */
    const drift_fliplaw_fit_t *T = &L.fit[DRIFT_FLIPLAW_TRIANGLE];
    cr_assert(T->lo <= 1 && 1 <= T->hi, "kappa %g [%g, %g]", T->theta, T->lo, T->hi);
    /* the gaps come from kappa as fitted, not from the 1 its interval holds: P = 1/2 (1 - D /
     * (kappa q)) gives D_0.1% = kappa q (1 - 0.002), i.e. 0.998 kappa ulps, and D_1% = 0.98 kappa
     * ulps (a few roundings: 1e-12) */
    cr_assert(T->theta != 1, "the fit lands exactly on 1 only by chance: %a", T->theta);
    cr_assert_float_eq(L.d001_ulp, 0.998 * T->theta, 1e-12);
    cr_assert_float_eq(L.d01_ulp, 0.98 * T->theta, 1e-12);
    cr_assert(L.choice.dloglik > 0 && L.choice.decided, "triangle over Gaussian: %g (power %g)", L.choice.dloglik,
        L.choice.power_a);
    drift_flipset_free(&s);
}
