/* test_sampler.c — the samplers against exact-rational computations on small vocabularies and
 * against hand-worked draws.
 *
 * Witnesses: (1) for p = (1/2, 1/3, 1/6) every sampler draws token i with probability p_i (the
 * exponential race: P(i wins) = p_i / sum p, sampler.h), and with a filter that keeps tokens
 * 0 and 1, with (1/2, 1/3) / (5/6) = (3/5, 2/5) — rationals computed by hand; the empirical
 * frequencies of N keyed draws must lie within 5 binomial standard deviations (a false
 * failure has probability ~6e-7 per check, and the seed is fixed, so the test is
 * deterministic). (2) The deterministic transform on hand-chosen exponentials and uniforms,
 * each outcome worked out next to the case. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "drift.h"
#include "sampler.h"

static const double P3[3] = {0.5, 1.0 / 3, 1.0 / 6};

static void logits3(double *l)
{
    for (int i = 0; i < 3; i++) l[i] = log(P3[i]); /* softmax(l) = P3 up to ~1e-16 */
}

static void check_freq(const char *spec, const double expect[3])
{
    drift_sampler_t s;
    cr_assert_eq(drift_sampler_parse(&s, spec), 0, "%s", spec);
    double l[3], e[3];
    logits3(l);
    const long N = 30000;
    long count[3] = {0, 0, 0};
    for (long t = 0; t < N; t++) {
        drift_draw_key_t key = {7, (uint32_t)t, 0};
        drift_sampler_exponentials(e, 3, &key);
        size_t tok;
        cr_assert_eq(drift_sampler_draw(&tok, l, 3, &s, e, &key), 0);
        count[tok]++;
    }
    for (int i = 0; i < 3; i++) {
        double m = N * expect[i], sd = sqrt(N * expect[i] * (1 - expect[i]));
        cr_assert(fabs((double)count[i] - m) <= 5 * sd + (expect[i] == 0 ? 0 : 1e-9),
            "%s token %d: %ld of %ld, expected %.1f +- %.1f", spec, i, count[i], N, m, 5 * sd);
    }
}

Test(sampler, frequencies_equal_exact_probabilities)
{
    const double full[3] = {0.5, 1.0 / 3, 1.0 / 6}, kept[3] = {0.6, 0.4, 0.0};
    const char *kinds[] = {"inverse-cdf", "exp-race", "gumbel", "rejection"};
    for (int k = 0; k < 4; k++) {
        char spec[64];
        check_freq(kinds[k], full);
        /* top-k = 2 keeps the two largest */
        snprintf(spec, sizeof spec, "%s:k=2", kinds[k]);
        check_freq(spec, kept);
        /* top-p = 0.6: the mass above token 1 is 1/2 < 0.6 (kept); above token 2 it is 5/6 */
        snprintf(spec, sizeof spec, "%s:p=0.6", kinds[k]);
        check_freq(spec, kept);
        /* min-p = 0.4: keep p >= 0.4 * p_max = 0.2, i.e. tokens 0 and 1 */
        snprintf(spec, sizeof spec, "%s:minp=0.4", kinds[k]);
        check_freq(spec, kept);
    }
}

/* The exponential race on hand-chosen exponentials E (p / E, largest wins):
 *   E = (1, 0.5, 0.1):  0.5, 0.667, 1.667   -> token 2
 *   E = (0.2, 1, 1):    2.5, 0.333, 0.167   -> token 0
 *   E = (1, 0.6, 1):    0.5, 0.556, 0.167   -> token 1
 * Gumbel-max is the same comparison after a log (monotone): the same tokens. */
Test(sampler, exp_race_and_gumbel_by_hand)
{
    double l[3];
    logits3(l);
    const double E[3][3] = {{1, 0.5, 0.1}, {0.2, 1, 1}, {1, 0.6, 1}};
    const size_t want[3] = {2, 0, 1};
    drift_sampler_t race = drift_sampler_default(DRIFT_SAMPLER_EXPRACE),
                    gum = drift_sampler_default(DRIFT_SAMPLER_GUMBEL);
    for (int c = 0; c < 3; c++) {
        size_t a, b;
        cr_assert_eq(drift_sampler_draw_given(&a, l, 3, &race, E[c], NULL, 0), 0);
        cr_assert_eq(drift_sampler_draw_given(&b, l, 3, &gum, E[c], NULL, 0), 0);
        cr_assert_eq(a, want[c], "race case %d: %zu", c, a);
        cr_assert_eq(b, want[c], "gumbel case %d: %zu", c, b);
    }
    /* top-k = 2 removes token 2: case 0 becomes 0.5/1 = 0.5 vs (1/3)/0.5 = 0.667 -> token 1 */
    race.top_k = 2;
    size_t a;
    cr_assert_eq(drift_sampler_draw_given(&a, l, 3, &race, E[0], NULL, 0), 0);
    cr_assert_eq(a, 1);
}

/* Inverse CDF in id order: cumulative (1/2, 5/6, 1). u = 0.49 -> 0, 0.51 -> 1, 0.84 -> 2; with
 * top-k = 2 the cumulative is (3/5, 1): u = 0.61 -> 1, u = 0.59 -> 0. */
Test(sampler, inverse_cdf_by_hand)
{
    double l[3];
    logits3(l);
    drift_sampler_t s = drift_sampler_default(DRIFT_SAMPLER_INVCDF);
    const double u[] = {0.49, 0.51, 0.84};
    const size_t want[] = {0, 1, 2};
    for (int c = 0; c < 3; c++) {
        size_t t;
        cr_assert_eq(drift_sampler_draw_given(&t, l, 3, &s, NULL, &u[c], 1), 0);
        cr_assert_eq(t, want[c], "u = %g: %zu", u[c], t);
    }
    s.top_k = 2;
    size_t t;
    double u1 = 0.61, u2 = 0.59;
    cr_assert_eq(drift_sampler_draw_given(&t, l, 3, &s, NULL, &u1, 1), 0);
    cr_assert_eq(t, 1);
    cr_assert_eq(drift_sampler_draw_given(&t, l, 3, &s, NULL, &u2, 1), 0);
    cr_assert_eq(t, 0);
}

/* Rejection with top-k = 1 (FlashInfer): round 0, u = 0.9 over all tokens: cumulative
 * (1/2, 5/6, 1) -> token 2; 2 tokens above it, not < 1: reject, pivot = 1/6. Round 1 over
 * tokens with p > 1/6, Z = 5/6, u = 0.7: target 0.583 -> token 1 (cumulative 0.5, 0.833);
 * 1 token above, reject, pivot = 1/3. Round 2: only token 0 remains -> accepted. With two
 * uniforms only, the third round has none: DRIFT_ERANGE. */
Test(sampler, rejection_by_hand)
{
    double l[3];
    logits3(l);
    drift_sampler_t s;
    cr_assert_eq(drift_sampler_parse(&s, "rejection:k=1"), 0);
    const double u[3] = {0.9, 0.7, 0.3};
    size_t t = 99;
    cr_assert_eq(drift_sampler_draw_given(&t, l, 3, &s, NULL, u, 3), 0);
    cr_assert_eq(t, 0);
    cr_assert_eq(drift_sampler_draw_given(&t, l, 3, &s, NULL, u, 2), DRIFT_ERANGE);
}

/* Greedy thresholds: two tokens tied at the top. T = 0 and T below vLLM's 1e-5 with
 * greedy=vllm take the lowest id; T = 1e-8 without a threshold samples, and the race picks
 * whichever tied token has the smaller exponential. */
Test(sampler, greedy_thresholds)
{
    const double l[3] = {5, 5, 0}, E[3] = {1.0, 0.5, 1.0};
    drift_sampler_t s;
    size_t t;
    cr_assert_eq(drift_sampler_parse(&s, "exp-race:T=1e-08,greedy=vllm"), 0);
    cr_assert_eq(s.greedy_below, DRIFT_SAMPLER_VLLM_GREEDY);
    cr_assert_eq(drift_sampler_draw_given(&t, l, 3, &s, E, NULL, 0), 0);
    cr_assert_eq(t, 0);
    cr_assert_eq(drift_sampler_parse(&s, "exp-race:T=1e-08"), 0);
    cr_assert_eq(drift_sampler_draw_given(&t, l, 3, &s, E, NULL, 0), 0);
    cr_assert_eq(t, 1); /* p = (1/2, 1/2, ~0): 0.5/1 < 0.5/0.5 */
    cr_assert_eq(drift_sampler_parse(&s, "exp-race:T=0"), 0);
    cr_assert_eq(drift_sampler_draw_given(&t, l, 3, &s, E, NULL, 0), 0);
    cr_assert_eq(t, 0);
}

Test(sampler, keyed_randomness_is_a_function_of_the_key)
{
    drift_draw_key_t k1 = {1, 5, 2}, k2 = {1, 5, 3};
    double a = drift_sampler_token_uniform(&k1, 17), b = drift_sampler_token_uniform(&k1, 17);
    cr_assert_eq(a, b);
    cr_assert_neq(a, drift_sampler_token_uniform(&k2, 17));
    cr_assert_neq(a, drift_sampler_token_uniform(&k1, 16));
    cr_assert(a > 0 && a <= 1);
    double u = drift_sampler_draw_uniform(&k1, 0);
    cr_assert(u >= 0 && u < 1);
}

Test(sampler, specs_round_trip_and_refuse_bad_input)
{
    const char *good[] = {"inverse-cdf", "exp-race:T=0.59999999999999998", "gumbel:k=50,p=0.90000000000000002",
        "rejection:k=20,p=0.5,minp=0.10000000000000001", "exp-race:greedy=1.0000000000000001e-05"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        drift_sampler_t s, r;
        char buf[DRIFT_SAMPLER_SPEC_MAX];
        cr_assert_eq(drift_sampler_parse(&s, good[i]), 0, "%s", good[i]);
        cr_assert_gt(drift_sampler_print(buf, sizeof buf, &s), 0);
        cr_assert_str_eq(buf, good[i]);
        cr_assert_eq(drift_sampler_parse(&r, buf), 0);
        cr_assert(r.kind == s.kind && r.temperature == s.temperature && r.top_k == s.top_k && r.top_p == s.top_p &&
                      r.min_p == s.min_p && r.greedy_below == s.greedy_below,
            "%s", good[i]);
    }
    const char *bad[] = {"", "multinomial", "exp-race:", "exp-race:T=-1", "exp-race:k=1.5", "exp-race:p=0",
        "exp-race:p=1.5", "exp-race:minp=1", "exp-race:x=1", "exp-race:T=1,", "exp-race:T=vllm", "exp-race:T= 1",
        "exp-race:T=nan"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        drift_sampler_t s;
        cr_assert_eq(drift_sampler_parse(&s, bad[i]), DRIFT_EINVAL, "accepted %s", bad[i]);
    }
    const char *why = NULL;
    drift_sampler_t s = drift_sampler_default(DRIFT_SAMPLER_GUMBEL);
    s.top_p = 2;
    cr_assert_eq(drift_sampler_validate(&s, &why), DRIFT_EINVAL);
    cr_assert(why && strstr(why, "top-p"));
}
