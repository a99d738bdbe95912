/* test_argmax.c — the LM head machinery behind the argmax_flip experiment (lib/gen_logits):
 * error bounds, the rigorous pruning, flips far above the bound, exact ties, planted gaps.
 *
 * Independent witnesses: exact dot products are computed here with MPFR at 2400 bits (every
 * addition asserted exact: products of doubles need 106 bits and the values here span far
 * less than 2400 - 106 bits), never with the library's superaccumulator. The pruned
 * evaluation is checked against the brute-force one (every logit of every configuration),
 * and the brute-force exact top-2 against the MPFR argmax. */
#include <criterion/criterion.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "cli.h"
#include "dispatch.h"
#include "flips.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "philox.h"
#include "support.h"

#define XPREC 2400
#include "mp_dot.h"

static double mp_dot_d(const double *h, const double *w, size_t K)
{
    mpfr_t m;
    mpfr_init2(m, XPREC);
    mp_dot(m, h, w, K);
    double d = mpfr_get_d(m, MPFR_RNDN);
    mpfr_clear(m);
    return d;
}

static drift_recipe_t cfg(drift_format_t in, const char *order, drift_format_t acc, drift_format_t out)
{
    drift_recipe_t c;
    memset(&c, 0, sizeof c);
    c.in = in;
    cr_assert_eq(drift_order_parse(&c.order, order), 0, "order %s", order);
    c.acc = (drift_acc_t){acc, DRIFT_RNE, 1};
    c.out = out;
    return c;
}

static drift_recipe_t cfg_exact(drift_format_t in, drift_format_t out)
{
    drift_recipe_t c = cfg(in, "seq", DRIFT_FP32, out);
    c.exact = 1;
    return c;
}

/* The configurations of the experiment for input format f, plus a few extra orders. */
static int all_cfgs(drift_recipe_t *c, drift_format_t f, size_t K)
{
    static const char *const ORD[] = {
        "seq", "splitk:16", "pairwise", "warp:32", "splitk:3:tree", "blocked:64", "kahan", "tc:h100", "tc:a100"};
    int n = 0;
    for (size_t i = 0; i < sizeof ORD / sizeof ORD[0]; i++) {
        drift_recipe_t x = cfg(f, ORD[i], DRIFT_FP32, DRIFT_FP32);
        if (drift_recipe_check(&x, NULL, 0)) continue; /* tc with fp32 inputs */
        c[n++] = x;
        if (f == DRIFT_BF16 || f == DRIFT_FP16) c[n++] = cfg(f, ORD[i], DRIFT_FP32, f);
    }
    /* own-format accumulation only where a finite bound exists (K u < 1) */
    if ((f == DRIFT_FP16 || f == DRIFT_BF16) && (double)K * drift_format_info(f)->unit_roundoff < 0.5)
        c[n++] = cfg(f, "seq", f, f);
    c[n++] = cfg_exact(f, DRIFT_FP32);
    return n;
}

static const drift_format_t FMTS[] = {DRIFT_BF16, DRIFT_FP16, DRIFT_TF32, DRIFT_FP32};

/* ---- bounds --------------------------------------------------------------------------------- */

/* |computed - exact| <= drift_lmhead_bound for every configuration, on random and adversarial
 * rows; the exact value from MPFR. */
Test(argmax, bound_holds)
{
    static const size_t KS[] = {1, 7, 64, 300, 1000};
    drift_stream_t s;
    drift_stream_init(&s, 7, drift_fnv1a32("test_argmax"), 1, 0);
    long checked = 0;
    for (size_t ki = 0; ki < 5; ki++) {
        size_t K = KS[ki];
        double *h = malloc(K * sizeof *h), *w = malloc(K * sizeof *w);
        for (int trial = 0; trial < 12; trial++) {
            for (size_t i = 0; i < K; i++) {
                h[i] = drift_stream_normal(&s) * (trial % 3 == 0 && i % 97 == 3 ? 60 : 1);
                w[i] = drift_stream_normal(&s) / sqrt((double)K);
                if (trial % 4 == 1) w[i] *= 1e-4;                                /* fp16 subnormal weights */
                if (trial % 4 == 2 && i % 2) w[i] = -w[i - 1] * h[i - 1] / h[i]; /* cancellation */
            }
            for (int fi = 0; fi < 4; fi++) {
                drift_recipe_t c[DRIFT_LMHEAD_MAXCFG];
                int n = all_cfgs(c, FMTS[fi], K);
                double *hf = malloc(K * sizeof *hf), *wf = malloc(K * sizeof *wf);
                double sabs = 0, sl1 = 0;
                for (size_t i = 0; i < K; i++) {
                    hf[i] = drift_rne(h[i], FMTS[fi]);
                    wf[i] = drift_rne(w[i], FMTS[fi]);
                    sabs += fabs(hf[i] * wf[i]);
                    sl1 += fabs(hf[i]) + fabs(wf[i]);
                }
                /* the bound wants upper bounds: inflate the double sums by their own error */
                sabs *= 1 + 2e-13;
                sl1 *= 1 + 2e-13;
                mpfr_t ex, d;
                mpfr_inits2(XPREC, ex, d, (mpfr_ptr)0);
                mp_dot(ex, hf, wf, K);
                double mag = fabs(mpfr_get_d(ex, MPFR_RNDU)) * (1 + 1e-15);
                for (int k = 0; k < n; k++) {
                    double y, b = drift_lmhead_bound(&c[k], K, sabs, sl1, mag);
                    cr_assert_eq(drift_recipe_dot(&y, hf, wf, K, NULL, &c[k]), 0);
                    mpfr_set_d(d, y, MPFR_RNDN);
                    cr_assert_eq(mpfr_sub(d, d, ex, MPFR_RNDN), 0, "exact difference");
                    double err = fabs(mpfr_get_d(d, MPFR_RNDU));
                    char name[96];
                    drift_recipe_label(name, sizeof name, &c[k]);
                    cr_expect(err <= b, "%s in=%s K=%zu trial %d: |err| %.3g > bound %.3g", name,
                        drift_format_name(FMTS[fi]), K, trial, err, b);
                    checked++;
                }
                mpfr_clears(ex, d, (mpfr_ptr)0);
                free(hf);
                free(wf);
            }
        }
        free(h);
        free(w);
    }
    cr_expect(checked > 1000);
    mpfr_free_cache();
}

Test(argmax, bound_finite_where_it_should_be)
{
    /* fp32 accumulation of 4096 terms: gamma_4097(2^-24) ~ 2.4e-4; bf16 accumulation: K u = 16 >= 1,
     * no deterministic bound exists (so the realistic mode cannot prune it). */
    drift_recipe_t a = cfg(DRIFT_BF16, "seq", DRIFT_FP32, DRIFT_FP32),
                   b = cfg(DRIFT_BF16, "seq", DRIFT_BF16, DRIFT_BF16);
    double ba = drift_lmhead_bound(&a, 4096, 1.0, 100.0, 1.0);
    cr_expect(ba > 4097 * 0x1p-24 && ba < 2.5e-4, "fp32 bound %.4g", ba);
    cr_expect(isinf(drift_lmhead_bound(&b, 4096, 1.0, 100.0, 1.0)));
    drift_recipe_t t = cfg(DRIFT_BF16, "tc:h100", DRIFT_FP32, DRIFT_FP32);
    double bt = drift_lmhead_bound(&t, 4096, 1.0, 0.0, 1.0);
    cr_expect(isfinite(bt) && bt < 1e-3, "tc bound %.4g", bt);
    drift_recipe_t e = cfg_exact(DRIFT_BF16, DRIFT_FP32);
    /* the exact dot rounded once to fp32: half an ulp, u |x| with u = 2^-24 */
    cr_expect(drift_lmhead_bound(&e, 4096, 1.0, 0.0, 1.0) < 1.0001 * 0x1p-24 + 1e-40);
}

/* ---- pruning -------------------------------------------------------------------------------- */

Test(argmax, prune_by_hand)
{
    /* lower bounds 9, 8, 4, 7.5: the second largest is 8; upper bounds 11, 10, 6, 9.5: token 2
     * (6 < 8) is below tokens 0 and 1 whatever the values, the others stay. */
    double v[] = {10, 9, 5, 8.5}, r[] = {1, 1, 1, 1};
    size_t keep[4];
    size_t n = drift_prune_top2(keep, v, r, 4);
    cr_assert_eq(n, 3);
    cr_expect(keep[0] == 0 && keep[1] == 1 && keep[2] == 3);
    /* touching intervals are kept (a tie is possible) */
    double v2[] = {10, 9, 8}, r2[] = {1, 0, 1}; /* lower bounds 9, 9, 7; token 2 reaches 9 */
    cr_expect_eq(drift_prune_top2(keep, v2, r2, 3), 3);
}

/* The approximate pass stays inside its stated error. */
Test(argmax, approx_within_coef)
{
    const size_t V = 37, K = 1000, R = 5;
    drift_stream_t s;
    drift_stream_init(&s, 7, drift_fnv1a32("test_argmax"), 2, 0);
    drift_hidden_model_t m;
    cr_assert_eq(drift_hidden_model(&m, K, &s), 0);
    double *H = malloc(R * K * sizeof *H), *w = malloc(K * sizeof *w), *ap = malloc(R * V * sizeof *ap);
    float *W = malloc(V * K * sizeof *W);
    for (size_t r = 0; r < R; r++) drift_gen_hidden(H + r * K, &m, &s);
    for (size_t v = 0; v < V; v++) {
        drift_gen_weight_row(w, K, &s);
        for (size_t i = 0; i < K; i++) W[v * K + i] = (float)w[i];
    }
    cr_assert_eq(drift_lmhead_approx(ap, H, R, W, V, K), 0);
    for (size_t r = 0; r < R; r++)
        for (size_t v = 0; v < V; v++) {
            double hn = 0, wn = 0;
            for (size_t i = 0; i < K; i++) {
                w[i] = W[v * K + i];
                hn += H[r * K + i] * H[r * K + i];
                wn += w[i] * w[i];
            }
            double ex = mp_dot_d(H + r * K, w, K);
            double bound = drift_lmhead_approx_coef(K) * sqrt(hn) * sqrt(wn);
            cr_expect(fabs(ap[r * V + v] - ex) <= bound, "row %zu token %zu: %.9g vs %.9g (bound %.3g)", r, v,
                ap[r * V + v], ex, bound);
        }
    free(H);
    free(w);
    free(ap);
    free(W);
}

/* A random head with near-ties planted among the top tokens, evaluated pruned and in full. */
static void random_head(double *H, float *W, double *Wd, size_t R, size_t V, size_t K, uint32_t trial)
{
    drift_stream_t s;
    drift_stream_init(&s, 11, drift_fnv1a32("test_argmax.head"), (uint32_t)K, trial);
    drift_hidden_model_t m;
    cr_assert_eq(drift_hidden_model(&m, K, &s), 0);
    for (size_t r = 0; r < R; r++) drift_gen_hidden(H + r * K, &m, &s);
    double *w = malloc(K * sizeof *w);
    for (size_t v = 0; v < V; v++) {
        drift_gen_weight_row(w, K, &s);
        /* token 0 leans on the outlier channels (same channels and signs in every hidden state),
         * so it is at the top for every row; every 7th token is a perturbed copy of it: ~28
         * tokens crowd the top, where a pruning radius that is too small would drop a possible
         * winner */
        if (v == 0)
            for (int j = 0; j < m.n; j++)
                w[m.channel[j]] = drift_rne(w[m.channel[j]] + (m.scale[j] > 0 ? 0.05 : -0.05), DRIFT_FP32);
        if (v % 7 == 0 && v) {
            /* copy + eps g, eps log-spaced over 1e-7 .. 1e-1: logit differences from ~1e-7 to
             * ~0.3, the range of the input roundings' shifts (bf16: ~0.01 typical) */
            double eps = pow(10.0, -7 + 6.0 * (double)(v / 7 % 8) / 7);
            for (size_t i = 0; i < K; i++) w[i] = drift_rne(Wd[i] + eps * w[i], DRIFT_FP32);
        }
        for (size_t i = 0; i < K; i++) {
            W[v * K + i] = (float)w[i];
            Wd[v * K + i] = w[i];
        }
    }
    free(w);
}

Test(argmax, pruning_matches_full)
{
    const size_t V = 200, R = 6;
    static const size_t KS[] = {64, 256};
    long rows = 0, pruned_away = 0;
    for (int ki = 0; ki < 2; ki++) {
        size_t K = KS[ki];
        double *H = malloc(R * K * sizeof *H), *Wd = malloc(V * K * sizeof *Wd), *ap = malloc(R * V * sizeof *ap);
        double *l1 = malloc(V * sizeof *l1), *l2 = malloc(V * sizeof *l2);
        float *W = malloc(V * K * sizeof *W);
        for (uint32_t trial = 0; trial < 3; trial++) {
            random_head(H, W, Wd, R, V, K, trial);
            for (size_t v = 0; v < V; v++) {
                double a = 0, b = 0;
                for (size_t i = 0; i < K; i++) {
                    a += fabs(Wd[v * K + i]);
                    b += Wd[v * K + i] * Wd[v * K + i];
                }
                l1[v] = a * (1 + 1e-12);
                l2[v] = sqrt(b) * (1 + 1e-12);
            }
            cr_assert_eq(drift_lmhead_approx(ap, H, R, W, V, K), 0);
            for (size_t r = 0; r < R; r++)
                for (int fi = 0; fi < 4; fi++) {
                    drift_recipe_t c[DRIFT_LMHEAD_MAXCFG];
                    int n = all_cfgs(c, FMTS[fi], K);
                    /* own-format accumulation has no bound at these K for bf16: drop it here */
                    int m = 0;
                    for (int k = 0; k < n; k++)
                        if (isfinite(drift_lmhead_bound(&c[k], K, 1, 1, 1))) c[m++] = c[k];
                    drift_lmhead_result_t a, b;
                    cr_assert_eq(drift_lmhead_eval_full(&a, H + r * K, Wd, V, K, c, m), 0);
                    cr_assert_eq(drift_lmhead_eval_pruned(&b, H + r * K, W, V, K, ap + r * V, l1, l2, c, m), 0);
                    cr_expect_eq(a.exact.top1, b.exact.top1);
                    cr_expect_eq(a.exact.top2, b.exact.top2);
                    cr_expect_eq(a.exact.gap, b.exact.gap);
                    cr_expect_eq(a.exact.tie, b.exact.tie);
                    for (int k = 0; k < m; k++) {
                        cr_expect_eq(a.computed[k].top1, b.computed[k].top1, "cfg %d K %zu", k, K);
                        cr_expect_eq(a.computed[k].top2, b.computed[k].top2, "cfg %d K %zu", k, K);
                        cr_expect_eq(a.computed[k].v1, b.computed[k].v1);
                        cr_expect_eq(a.computed[k].v2, b.computed[k].v2);
                        cr_expect_eq(a.flip[k], b.flip[k]);
                    }
                    pruned_away += (long)(V - b.n_stage1);
                    rows++;
                    /* the full evaluation's exact argmax against MPFR */
                    double best = -INFINITY;
                    size_t arg = 0;
                    double *hf = malloc(K * sizeof *hf), *wf = malloc(K * sizeof *wf);
                    for (size_t i = 0; i < K; i++) hf[i] = drift_rne(H[r * K + i], FMTS[fi]);
                    for (size_t v = 0; v < V; v++) {
                        for (size_t i = 0; i < K; i++) wf[i] = drift_rne(Wd[v * K + i], FMTS[fi]);
                        double e = mp_dot_d(hf, wf, K);
                        if (e > best) {
                            best = e;
                            arg = v;
                        }
                    }
                    cr_expect_eq(a.exact.top1, arg);
                    free(hf);
                    free(wf);
                }
        }
        free(H);
        free(Wd);
        free(ap);
        free(l1);
        free(l2);
        free(W);
    }
    /* the pruning must also do its job: most tokens are discarded (200 tokens, ~29 in the
     * crowded cluster at the top) */
    cr_expect(pruned_away > rows * 100, "only %ld tokens pruned over %ld rows", pruned_away, rows);
    mpfr_free_cache();
}

/* ---- flips and ties ------------------------------------------------------------------------- */

/* A gap larger than the two logits' error bounds together cannot flip: over 100 planted pairs
 * per format, with every configuration, the flip count must be exactly 0. */
Test(argmax, no_flip_far_above_bound)
{
    const size_t K = 512;
    drift_stream_t s;
    drift_hidden_model_t m;
    drift_stream_init(&s, 5, drift_fnv1a32("test_argmax.far"), 0, 0);
    cr_assert_eq(drift_hidden_model(&m, K, &s), 0);
    double *h = malloc(K * sizeof *h), *W = malloc(2 * K * sizeof *W);
    long flips = 0, pairs = 0;
    for (uint32_t t = 0; t < 100; t++) {
        drift_stream_init(&s, 5, drift_fnv1a32("test_argmax.far"), 1, t);
        drift_gen_hidden(h, &m, &s);
        double sc = drift_logit_scale(h, K);
        for (int fi = 0; fi < 4; fi++) {
            drift_format_t f = FMTS[fi];
            drift_recipe_t c[DRIFT_LMHEAD_MAXCFG];
            int n = all_cfgs(c, f, K);
            double *hf = malloc(K * sizeof *hf);
            for (size_t i = 0; i < K; i++) hf[i] = drift_rne(h[i], f);
            drift_gen_row_with_logit(W, h, K, 4 * sc, &s);
            drift_gen_row_with_logit(W + K, h, K, 3.9 * sc, &s);
            for (size_t i = 0; i < 2 * K; i++) W[i] = drift_rne(W[i], f);
            /* the largest bound over the configurations, for either row */
            double bmax = 0;
            for (int r = 0; r < 2; r++) {
                double sa = 0, sl = 0;
                for (size_t i = 0; i < K; i++) {
                    sa += fabs(hf[i] * W[r * K + i]);
                    sl += fabs(hf[i]) + fabs(W[r * K + i]);
                }
                for (int k = 0; k < n; k++)
                    bmax = fmax(bmax, drift_lmhead_bound(&c[k], K, sa * 1.001, sl * 1.001, 10 * sc));
            }
            /* plant a gap 10x the sum of both bounds (so far above them), in whichever order */
            drift_plant_t p;
            cr_assert_eq(drift_plant_gap(&p, W + K, hf, W, K, 20 * bmax, f), 0);
            cr_assert(p.gap >= 19 * bmax, "planted %.3g for bound %.3g", p.gap, bmax);
            drift_lmhead_result_t res;
            cr_assert_eq(drift_lmhead_eval_full(&res, hf, W, 2, K, c, n), 0);
            cr_assert_eq(res.exact.top1, 0);
            cr_assert(!res.exact.tie);
            for (int k = 0; k < n; k++) flips += res.flip[k];
            pairs += n;
            free(hf);
        }
    }
    cr_expect_eq(flips, 0, "%ld flips among %ld (pair, configuration) cases far above the bound", flips, pairs);
    free(h);
    free(W);
}

/* Exact ties are reported as ties, never as flips, even when the computed logits differ. */
Test(argmax, ties_are_not_flips)
{
    const size_t K = 1024;
    drift_stream_t s;
    drift_hidden_model_t m;
    drift_stream_init(&s, 5, drift_fnv1a32("test_argmax.tie"), 0, 0);
    cr_assert_eq(drift_hidden_model(&m, K, &s), 0);
    double *h = malloc(K * sizeof *h), *W = malloc(3 * K * sizeof *W);
    long ties = 0, differ = 0, picked_hi = 0;
    for (uint32_t t = 0; t < 40; t++) {
        drift_stream_init(&s, 5, drift_fnv1a32("test_argmax.tie"), 1, t);
        drift_gen_hidden(h, &m, &s);
        double sc = drift_logit_scale(h, K);
        /* token 0 a bystander below, tokens 1 and 2 tied at the top */
        drift_gen_row_with_logit(W, h, K, 2 * sc, &s);
        drift_gen_row_with_logit(W + K, h, K, 4 * sc, &s);
        cr_assert_eq(drift_plant_tie(h, W + 2 * K, W + K, K, 16, &s), 0);
        mpfr_t a, b;
        mpfr_inits2(XPREC, a, b, (mpfr_ptr)0);
        for (int fi = 0; fi < 4; fi++) {
            drift_recipe_t c[DRIFT_LMHEAD_MAXCFG];
            int n = all_cfgs(c, FMTS[fi], K);
            drift_lmhead_result_t res;
            cr_assert_eq(drift_lmhead_eval_full(&res, h, W, 3, K, c, n), 0);
            /* the witness: the rounded rows' exact logits agree (MPFR) */
            double *hf = malloc(K * sizeof *hf), *w1 = malloc(K * sizeof *w1), *w2 = malloc(K * sizeof *w2);
            for (size_t i = 0; i < K; i++) {
                hf[i] = drift_rne(h[i], FMTS[fi]);
                w1[i] = drift_rne(W[K + i], FMTS[fi]);
                w2[i] = drift_rne(W[2 * K + i], FMTS[fi]);
            }
            mp_dot(a, hf, w1, K);
            mp_dot(b, hf, w2, K);
            cr_assert(mpfr_equal_p(a, b), "the planted tie is not exact");
            cr_expect(res.exact.tie, "tie not reported");
            cr_expect_eq(res.exact.gap, 0.0);
            cr_expect_eq(res.exact.top1, 1); /* the lower id */
            cr_expect_eq(res.exact.top2, 2);
            for (int k = 0; k < n; k++) {
                cr_expect_eq(res.flip[k], 0, "a tie counted as a flip");
                differ += res.computed[k].v1 != res.computed[k].v2;
                picked_hi += res.computed[k].top1 == 2;
            }
            ties++;
            free(hf);
            free(w1);
            free(w2);
        }
        mpfr_clears(a, b, (mpfr_ptr)0);
    }
    /* the test means something only if the kernels did tell the tied rows apart */
    cr_expect(differ > 0 && picked_hi > 0, "computed logits never differed (%ld) or never chose the higher id (%ld)",
        differ, picked_hi);
    cr_expect_eq(ties, 160);
    free(h);
    free(W);
    mpfr_free_cache();
}

/* ---- planted gaps --------------------------------------------------------------------------- */

Test(argmax, planted_gap_achieved)
{
    const size_t K = 4096;
    drift_stream_t s;
    drift_hidden_model_t m;
    drift_stream_init(&s, 3, drift_fnv1a32("test_argmax.plant"), 0, 0);
    cr_assert_eq(drift_hidden_model(&m, K, &s), 0);
    double *h = malloc(K * sizeof *h), *w1 = malloc(K * sizeof *w1), *w2 = malloc(K * sizeof *w2);
    double *hf = malloc(K * sizeof *hf), *w1f = malloc(K * sizeof *w1f), *w2f = malloc(K * sizeof *w2f);
    mpfr_t a, b;
    mpfr_inits2(XPREC, a, b, (mpfr_ptr)0);
    int trial = 0;
    for (double rel = 1e-7; rel <= 1.0001; rel *= 10, trial++) {
        drift_stream_init(&s, 3, drift_fnv1a32("test_argmax.plant"), 1, (uint32_t)trial);
        drift_gen_hidden(h, &m, &s);
        double sc = drift_logit_scale(h, K);
        drift_gen_row_with_logit(w1, h, K, 4 * sc, &s);
        drift_gen_row_with_logit(w2, h, K, (4 - rel) * sc, &s);
        for (int fi = 0; fi < 4; fi++) {
            drift_format_t f = FMTS[fi];
            for (size_t i = 0; i < K; i++) {
                hf[i] = drift_rne(h[i], f);
                w1f[i] = drift_rne(w1[i], f);
                w2f[i] = drift_rne(w2[i], f);
            }
            drift_plant_t p;
            double target = rel * sc;
            cr_assert_eq(drift_plant_gap(&p, w2f, hf, w1f, K, target, f), 0);
            /* every adjusted weight is still a value of the format */
            for (size_t i = 0; i < K; i++) cr_assert_eq(w2f[i], drift_rne(w2f[i], f));
            /* the recorded gap is the exact one (MPFR), rounded once */
            mp_dot(a, hf, w1f, K);
            mp_dot(b, hf, w2f, K);
            mpfr_sub(a, a, b, MPFR_RNDN); /* exact at XPREC */
            cr_expect_eq(p.gap, mpfr_get_d(a, MPFR_RNDN), "%s rel %g", drift_format_name(f), rel);
            cr_expect(p.reached, "%s: target %.3g (rel %g) not reached, got %.6g after %d steps", drift_format_name(f),
                target, rel, p.gap, p.steps);
            /* DRIFT_PLANT_TOL = 1e-3 relative to the target */
            cr_expect(fabs(p.gap - target) <= 1e-3 * target * (1 + 1e-12), "%s rel %g: %.9g vs %.9g",
                drift_format_name(f), rel, p.gap, target);
        }
    }
    mpfr_clears(a, b, (mpfr_ptr)0);
    free(h);
    free(w1);
    free(w2);
    free(hf);
    free(w1f);
    free(w2f);
    mpfr_free_cache();
}

Test(argmax, generators)
{
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("test_argmax.gen"), 0, 0);
    drift_hidden_model_t m;
    cr_assert_eq(drift_hidden_model(&m, 4096, &s), 0);
    cr_expect_eq(m.n, 8); /* K/512 */
    for (int i = 0; i < m.n; i++) {
        cr_expect(fabs(m.scale[i]) >= 20 && fabs(m.scale[i]) < 100);
        if (i) cr_expect(m.channel[i] > m.channel[i - 1]);
    }
    cr_expect_eq(drift_hidden_model(&m, 1, &s), DRIFT_EINVAL);
    /* weights: fp32 numbers with variance 1/K (4096 * 64 draws: the sample variance is within
     * 2% of 1/K with probability > 1 - 1e-9, sd of the estimate being sqrt(2/262144) = 0.28%) */
    double *w = malloc(4096 * sizeof *w), ss = 0;
    for (int r = 0; r < 64; r++) {
        drift_gen_weight_row(w, 4096, &s);
        for (int i = 0; i < 4096; i++) {
            cr_assert_eq(w[i], (double)(float)w[i]);
            ss += w[i] * w[i];
        }
    }
    cr_expect(fabs(ss / 64 - 1) < 0.02, "mean ||w||^2 = %g", ss / 64);
    /* conditioned row: the logit is met up to the fp32 rounding of the weights */
    double *h = malloc(4096 * sizeof *h);
    cr_assert_eq(drift_hidden_model(&m, 4096, &s), 0);
    drift_gen_hidden(h, &m, &s);
    double sc = drift_logit_scale(h, 4096);
    drift_gen_row_with_logit(w, h, 4096, 4 * sc, &s);
    double l = mp_dot_d(h, w, 4096);
    /* fp32 rounding of each weight: |sum h_i dw_i| <~ 2^-24 sum|h_i w_i| ~ 1e-5 s */
    cr_expect(fabs(l - 4 * sc) < 1e-4 * sc, "logit %.9g vs %.9g", l, 4 * sc);
    /* the largest of V normals: for V = 32000 its median is Phi^-1(0.5^(1/V)) = 3.9; all draws
     * fall in [2.5, 6.5] (P(outside) < 1e-12 per draw) */
    for (int i = 0; i < 100; i++) {
        double t = drift_gen_top_logit(32000, &s);
        cr_expect(t > 2.5 && t < 6.5, "top logit %g", t);
    }
    free(w);
    free(h);
}

/* drift_gen_head is row v of drift_gen_weight_row from stream (seed, id, K, v), in both precisions,
 * with l1/l2 upper bounds within 1e-9 relative of the double sums. */
Test(argmax, gen_head_by_hand)
{
    const size_t V = 5, K = 7;
    const uint32_t id = drift_fnv1a32("test_argmax.head");
    double Wd[5 * 7], l1[5], l2[5], w[7];
    float Wf[5 * 7];
    cr_assert_eq(drift_gen_head(Wd, Wf, l1, l2, V, K, 11, id), 0);
    for (size_t v = 0; v < V; v++) {
        drift_stream_t s;
        drift_stream_init(&s, 11, id, (uint32_t)K, (uint32_t)v);
        drift_gen_weight_row(w, K, &s);
        double a = 0, b = 0;
        for (size_t i = 0; i < K; i++) {
            cr_expect_eq(Wd[v * K + i], w[i]);
            cr_expect_eq((double)Wf[v * K + i], w[i]);
            a += fabs(w[i]);
            b += w[i] * w[i];
        }
        cr_expect(l1[v] >= a && l1[v] <= a * (1 + 2e-9), "l1 %.17g vs %.17g", l1[v], a);
        cr_expect(l2[v] >= sqrt(b) && l2[v] <= sqrt(b) * (1 + 2e-9), "l2 %.17g vs %.17g", l2[v], sqrt(b));
    }
    double l1b[5];
    cr_expect_eq(drift_gen_head(NULL, NULL, l1b, NULL, V, K, 11, id), 0); /* outputs are optional */
    for (size_t v = 0; v < V; v++) cr_expect_eq(l1b[v], l1[v]);
    cr_expect_eq(drift_gen_head(Wd, NULL, NULL, NULL, 0, K, 11, id), DRIFT_EINVAL);
}

/* drift_gen_planted_pair draws in the documented order; drift_plant_pair_in rounds, places the
 * rows by swap and plants the exact gap (ties: h.w1 == h.w2 exactly, pt zeroed). */
Test(argmax, planted_pair_by_hand)
{
    const size_t K = 256, V = 1000;
    drift_stream_t s, t;
    drift_hidden_model_t m;
    drift_stream_init(&s, 5, drift_fnv1a32("test_argmax.pair"), 0, 0);
    cr_assert_eq(drift_hidden_model(&m, K, &s), 0);
    double h[256], w1[256], w2[256], hx[256], x1[256], x2[256], hf[256], W2[512];
    int swaps = 0;
    for (int tr = 0; tr < 16; tr++) {
        int tie = tr % 4 == 3;
        double sc, rel = 1e-3, sx;
        int swap;
        drift_stream_init(&s, 5, drift_fnv1a32("test_argmax.pair"), 1, (uint32_t)tr);
        t = s;
        cr_assert_eq(drift_gen_planted_pair(h, w1, w2, &sc, &swap, &m, V, rel, tie, &s), 0);
        /* by hand, from a copy of the stream */
        drift_gen_hidden(hx, &m, &t);
        sx = drift_logit_scale(hx, K);
        double L1 = sx * drift_gen_top_logit(V, &t);
        drift_gen_row_with_logit(x1, hx, K, L1, &t);
        int sw = 0;
        if (tie) {
            cr_assert_eq(drift_plant_tie(hx, x2, x1, K, 16, &t), 0);
            sx = drift_logit_scale(hx, K);
        } else {
            drift_gen_row_with_logit(x2, hx, K, L1 - rel * sx, &t);
            sw = drift_stream_u32(&t) & 1;
        }
        cr_expect_eq(sc, sx);
        cr_expect_eq(swap, sw);
        swaps += swap;
        for (size_t i = 0; i < K; i++) {
            cr_expect_eq(h[i], hx[i]);
            cr_expect_eq(w1[i], x1[i]);
            cr_expect_eq(w2[i], x2[i]);
        }
        for (int fi = 0; fi < 4; fi++) {
            drift_format_t f = FMTS[fi];
            drift_plant_t pt;
            cr_assert_eq(drift_plant_pair_in(&pt, hf, W2, h, w1, w2, K, rel * sc, swap, tie, f), 0);
            const double *a = W2 + (swap ? K : 0), *b = W2 + (swap ? 0 : K);
            for (size_t i = 0; i < K; i++) {
                cr_expect_eq(hf[i], drift_rne(h[i], f));
                cr_expect_eq(a[i], drift_rne(w1[i], f));
                if (tie)
                    cr_expect_eq(b[i], drift_rne(w2[i], f));
                else
                    cr_expect_eq(b[i], drift_rne(b[i], f)); /* adjusted, still a value of f */
            }
            double g = mp_dot_d(hf, a, K) - mp_dot_d(hf, b, K);
            if (tie) {
                cr_expect_eq(pt.steps, 0);
                cr_expect_eq(pt.gap, 0);
                mpfr_t x, y;
                mpfr_inits2(XPREC, x, y, (mpfr_ptr)0);
                mp_dot(x, hf, a, K);
                mp_dot(y, hf, b, K);
                cr_expect_eq(mpfr_cmp(x, y), 0, "tie is exact");
                mpfr_clears(x, y, (mpfr_ptr)0);
            } else {
                cr_expect(fabs(pt.gap - rel * sc) <= 1e-3 * rel * sc * (1 + 1e-12));
                cr_expect(fabs(g - pt.gap) <= 1e-6 * pt.gap, "%.9g vs %.9g", g, pt.gap);
            }
        }
    }
    cr_expect(swaps > 0 && swaps < 12, "swap bit varies: %d of 12", swaps);
    mpfr_free_cache();
}

/* drift_lmhead_eval_pruned_some = drift_lmhead_eval_pruned on the used configurations, spread
 * over the full list; the left-out ones are zero. */
Test(argmax, pruned_some_by_hand)
{
    const size_t V = 300, K = 64;
    float *W = malloc(V * K * sizeof *W);
    double *l1 = malloc(V * sizeof *l1), *l2 = malloc(V * sizeof *l2), *ap = malloc(V * sizeof *ap), h[64];
    cr_assert(W && l1 && l2 && ap);
    cr_assert_eq(drift_gen_head(NULL, W, l1, l2, V, K, 2, drift_fnv1a32("test_argmax.some")), 0);
    drift_stream_t s;
    drift_hidden_model_t m;
    drift_stream_init(&s, 2, drift_fnv1a32("test_argmax.some.h"), 0, 0);
    cr_assert_eq(drift_hidden_model(&m, K, &s), 0);
    drift_gen_hidden(h, &m, &s);
    cr_assert_eq(drift_lmhead_approx(ap, h, 1, W, V, K), 0);
    drift_recipe_t c[4] = {cfg(DRIFT_BF16, "seq", DRIFT_FP32, DRIFT_FP32),
        cfg(DRIFT_BF16, "tc:h100", DRIFT_FP32, DRIFT_BF16), cfg(DRIFT_BF16, "pairwise", DRIFT_FP32, DRIFT_FP32),
        cfg_exact(DRIFT_BF16, DRIFT_FP32)};
    const unsigned char use[4] = {1, 0, 1, 1};
    drift_recipe_t sub[3] = {c[0], c[2], c[3]};
    drift_lmhead_result_t r, ref;
    cr_assert_eq(drift_lmhead_eval_pruned_some(&r, h, W, V, K, ap, l1, l2, c, 4, use), 0);
    cr_assert_eq(drift_lmhead_eval_pruned(&ref, h, W, V, K, ap, l1, l2, sub, 3), 0);
    cr_expect_eq(r.ncfg, 4);
    cr_expect_eq(r.n_stage1, ref.n_stage1);
    cr_expect_eq(r.exact.top1, ref.exact.top1);
    cr_expect_eq(r.exact.top2, ref.exact.top2);
    cr_expect_eq(r.exact.gap, ref.exact.gap);
    const int map[4] = {0, -1, 1, 2};
    for (int k = 0; k < 4; k++) {
        if (map[k] < 0) {
            cr_expect_eq(r.flip[k], 0);
            cr_expect_eq(r.n_eval[k], 0);
            cr_expect_eq(r.computed[k].top1, 0);
            cr_expect_eq(r.computed[k].top2, 0);
            continue;
        }
        cr_expect_eq(r.computed[k].top1, ref.computed[map[k]].top1);
        cr_expect_eq(r.computed[k].top2, ref.computed[map[k]].top2);
        cr_expect_eq(r.computed[k].gap, ref.computed[map[k]].gap);
        cr_expect_eq(r.flip[k], ref.flip[map[k]]);
        cr_expect_eq(r.n_eval[k], ref.n_eval[map[k]]);
    }
    const unsigned char none[4] = {0, 0, 0, 0};
    cr_expect_eq(drift_lmhead_eval_pruned_some(&r, h, W, V, K, ap, l1, l2, c, 4, none), DRIFT_EINVAL);
    free(W);
    free(l1);
    free(l2);
    free(ap);
}

/* ---- drift-calc argmax, from the outside ------------------------------------------------------ */

#include <sys/wait.h>
#include <unistd.h>

#define CALC DRIFT_BIN_DIR "/drift-calc"

/* exit status; the last stdout line in last (the CSV row) */
static int run_calc(const char *args, char *last, size_t size)
{
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, CALC " argmax %s 2>/dev/null", args);
    int st = run_stdout(cmd, out, sizeof out);
    if (last) {
        const char *line = out + strlen(out);
        if (line > out) line--; /* the last line's own newline */
        while (line > out && line[-1] != '\n') line--;
        size_t n = strlen(line) < size ? strlen(line) : size - 1;
        memcpy(last, line, n);
        last[n] = 0;
    }
    return st;
}

Test(argmax, calc_by_hand)
{
    /* h = (1e8, 1, -1e8); token 0 = (1, 1, 1) has the exact logit 1, token 1 = (0, 0.5, 0) has 0.5.
     * In fp32, seq: 1e8 + 1 rounds to 1e8 (the spacing at 1e8 is 8), then - 1e8 gives 0, so the
     * computed logits are 0 and 0.5: the argmax flips to token 1. In fp64 1e8 + 1 is exact. */
    const char *h = tmpfile_with(0, "1e8\n1\n-1e8\n"),
               *w = tmpfile_with(1, "# token 0\n1\n1\n1\n# token 1\n0\n0.5\n0\n");
    char line[1024], args[512];
    snprintf(args, sizeof args, "--format fp32 --order seq %s %s", h, w);
    cr_assert_eq(run_calc(args, line, sizeof line), 0);
    cr_expect_str_eq(line, "fp32,seq,fp32,fp32,3,2,0,1,0x1p+0,1,0x1p-1,0.5,0x1p-1,0.5,0,1,0,0x1p-1,0.5,0x0p+0,0,1\n");
    snprintf(args, sizeof args, "--format fp64 --order seq %s %s", h, w);
    cr_assert_eq(run_calc(args, line, sizeof line), 0);
    cr_expect_str_eq(line, "fp64,seq,fp64,fp64,3,2,0,1,0x1p+0,1,0x1p-1,0.5,0x1p-1,0.5,0,0,1,0x1p+0,1,0x1p-1,0.5,0\n");
    /* an exact tie: h = (1, 1), tokens (1, 2) and (2, 1) both give 3: tie = 1, never flipped */
    const char *h2 = tmpfile_with(2, "1\n1\n"), *w2 = tmpfile_with(3, "1\n2\n2\n1\n");
    snprintf(args, sizeof args, "--format bf16 --order pairwise --acc fp32 --logits bf16 %s %s", h2, w2);
    cr_assert_eq(run_calc(args, line, sizeof line), 0);
    cr_expect_str_eq(
        line, "bf16,pairwise,fp32,bf16,2,2,0,1,0x1.8p+1,3,0x1.8p+1,3,0x0p+0,0,1,0,1,0x1.8p+1,3,0x1.8p+1,3,0\n");
    /* bad input: exit 2 */
    snprintf(args, sizeof args, "--format fp32 --order seq %s %s", w, h2); /* 2 values are not V rows of K = 6 */
    cr_expect_eq(run_calc(args, NULL, 0), 2);
    snprintf(args, sizeof args, "--format fp32 --order tc:h100 %s %s", h, w); /* no fp32 tensor-core path */
    cr_expect_eq(run_calc(args, NULL, 0), 2);
    snprintf(args, sizeof args, "--format fp33 --order seq %s %s", h, w);
    cr_expect_eq(run_calc(args, NULL, 0), 2);
    snprintf(args, sizeof args, "--format fp32 --order seq %s /nonexistent/w", h);
    cr_expect_eq(run_calc(args, NULL, 0), 2);
    snprintf(args, sizeof args, "--format fp32 --order seq %s", h);
    cr_expect_eq(run_calc(args, NULL, 0), 2);
    remove(h);
    remove(w);
    remove(h2);
    remove(w2);
}

/* ---- the experiments, end to end (quick profile) ------------------------------------------------ */

#include <dirent.h>

/* Compares two result files line by line, skipping the lines that may differ between runs: the
 * date, the argv (which names the thread count), and the report fragment's table rows that carry
 * wall-clock cost ratios (marked "measured (", the one non-reproducible quantity a fragment may
 * carry: docs/decisions.md). 1 if equal. */
static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
    if (!fa || !fb) {
        if (fa) fclose(fa);
        if (fb) fclose(fb);
        return 0;
    }
    char la[4096], lb[4096];
    int eq = 1;
    for (;;) {
        char *ra, *rb;
        do ra = fgets(la, sizeof la, fa);
        while (ra && (!strncmp(la, "# date:", 7) || !strncmp(la, "# argv:", 7) || strstr(la, "measured (")));
        do rb = fgets(lb, sizeof lb, fb);
        while (rb && (!strncmp(lb, "# date:", 7) || !strncmp(lb, "# argv:", 7) || strstr(lb, "measured (")));
        if (!ra || !rb) {
            eq = !ra && !rb;
            break;
        }
        if (strcmp(la, lb)) {
            eq = 0;
            break;
        }
    }
    fclose(fa);
    fclose(fb);
    return eq;
}

/* Runs EXP twice (1 and 2 threads) into fresh directories; every output except the timing file
 * must be byte-identical apart from the date and argv lines. The run's manifest is left out: it
 * records argv and the files' SHA-256 (lib/run/manifest.h), so it differs by construction. */
static void reproducible(const char *exp, const char *extra)
{
    char d1[64], d2[64], cmd[1024];
    snprintf(d1, sizeof d1, "/tmp/drift_%s_1_%d", exp, (int)getpid());
    snprintf(d2, sizeof d2, "/tmp/drift_%s_2_%d", exp, (int)getpid());
    snprintf(cmd, sizeof cmd, "%s/%s --profile quick --quiet --threads 1 --out %s %s", DRIFT_BIN_DIR, exp, d1, extra);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "%s/%s --profile quick --quiet --threads 2 --out %s %s", DRIFT_BIN_DIR, exp, d2, extra);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    DIR *d = opendir(d1);
    cr_assert_not_null(d);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strstr(e->d_name, "_timing") || strstr(e->d_name, ".manifest")) continue;
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/%s", d1, e->d_name);
        snprintf(b, sizeof b, "%s/%s", d2, e->d_name);
        cr_expect(same_file(a, b), "%s differs between --threads 1 and 2", e->d_name);
        files++;
    }
    closedir(d);
    cr_expect(files >= 3, "only %d files written", files);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", d1, d2);
    cr_assert_eq(system(cmd), 0);
}

Test(argmax, experiment_reproducible, .timeout = 300) { reproducible("argmax_flip", ""); }

Test(argmax, realistic_reproducible, .timeout = 300) { reproducible("argmax_flip_realistic", "--rows 16"); }

Test(argmax, mitigations_reproducible, .timeout = 300) { reproducible("argmax_flip_mitigations", "--rows 16"); }

Test(argmax, sampling_reproducible, .timeout = 300) { reproducible("sampling_flip", ""); }

Test(argmax, experiments_reject_bad_options)
{
    char cmd[512], dir[64];
    snprintf(dir, sizeof dir, "/tmp/drift_argmax_bad_%d", (int)getpid());
    const char *bad[] = {"argmax_flip --formats fp8e4m3", "argmax_flip --K 8", "argmax_flip --device tpu",
        "argmax_flip --formats fp32 --orders tc:h100", "sampling_flip --orders pairwise", "sampling_flip --V 10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s/%s --out %s 2>/dev/null", DRIFT_BIN_DIR, bad[i], dir);
        int st = system(cmd);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2, "'%s' did not exit with 2", bad[i]);
        cr_expect(access(dir, F_OK) != 0, "'%s' touched the output directory", bad[i]);
    }
}

/* ---- flips.h and the LM head input formats: expected values derived by hand ----------------- */

Test(flips, input_formats)
{
    cr_assert(drift_lmhead_input_ok(DRIFT_BF16) && drift_lmhead_input_ok(DRIFT_FP16));
    cr_assert(drift_lmhead_input_ok(DRIFT_TF32) && drift_lmhead_input_ok(DRIFT_FP32));
    cr_assert(!drift_lmhead_input_ok(DRIFT_FP64) && !drift_lmhead_input_ok(DRIFT_FP8E4M3));
    drift_format_t ok[2] = {DRIFT_BF16, DRIFT_FP32};
    drift_lmhead_require_inputs(ok, 2); /* returns */
}

Test(flips, nu_and_c)
{
    drift_order_t o;
    cr_assert_eq(drift_order_parse(&o, "seq"), 0); /* each term lies in (K+1)/2 partial sums on average */
    cr_assert_float_eq(drift_flip_nu(&o, DRIFT_FP32, 1024), 1025.0 / 2048.0, 1e-15);
    cr_assert_eq(drift_order_parse(&o, "pairwise"), 0); /* depth 1 + log2 K */
    cr_assert_float_eq(drift_flip_nu(&o, DRIFT_FP32, 1024), 11.0 / 1024.0, 1e-15);
    cr_assert_eq(drift_order_parse(&o, "kahan"), 0);
    cr_assert_float_eq(drift_flip_nu(&o, DRIFT_FP32, 100), 0.02, 1e-15);
    cr_assert_float_eq(drift_flip_c(8 * log(2.0)), 1.0, 1e-15);
    cr_assert_float_eq(drift_flip_c(1025.0 / 2048.0), 0.3004, 1e-4); /* the 0.300 of the header */
}

Test(flips, tiebreak)
{
    cr_assert_eq(drift_flip_tiebreak(5, 3, 0.1, 1.0), 3); /* within eps: the smaller id */
    cr_assert_eq(drift_flip_tiebreak(3, 5, 0.1, 1.0), 3);
    cr_assert_eq(drift_flip_tiebreak(5, 3, 2.0, 1.0), 5); /* clear winner kept */
}

Test(flips, model_var_by_hand)
{
    /* seq, fp32: 1 is exact (no variance); 1 + 2^-30 is rounded once in [1, 2): ulp 2^-23,
     * variance ulp^2/12 = 2^-46/12. */
    drift_recipe_t c = {DRIFT_FP32, {0}, {DRIFT_FP32, DRIFT_RNE, 1}, DRIFT_FP32, 0};
    cr_assert_eq(drift_order_parse(&c.order, "seq"), 0);
    double p[2] = {1.0, ldexp(1.0, -30)};
    drift_flip_vv_t tmp[2 * (2 + 0 + 64)];
    cr_assert_eq(drift_flip_model_scratch(2, 0), 132);
    cr_assert_float_eq(drift_flip_model_var(&c, p, 2, tmp), ldexp(1.0, -46) / 12, 1e-30);
    /* stored in bf16 as well: one more rounding of the exact value 1 + 2^-30 in [1, 2) with
     * ulp 2^-7: + 2^-14/12 */
    c.out = DRIFT_BF16;
    cr_assert_float_eq(drift_flip_model_var(&c, p, 2, tmp), ldexp(1.0, -46) / 12 + ldexp(1.0, -14) / 12, 1e-20);
}

/* Three trials, two configurations, filled by hand. */
static void small_set(drift_flipset_t *s)
{
    cr_assert_eq(drift_flipset_alloc(s, 3, 2), 0);
    double rel[3] = {1e-3, 2e-3, 0.5};
    for (size_t i = 0; i < 3; i++) {
        s->t[i].rel = rel[i];
        s->t[i].gap = rel[i];
        s->t[i].s = 1;
        s->t[i].l1 = 1;
        cr_assert(isnan(s->pvar[i * 2]) && isnan(s->pvar[i * 2 + 1]));
    }
    /* config 0 flips trials 0 and 1; config 1 flips nothing */
    s->flip[0 * 2 + 0] = 1;
    s->flip[1 * 2 + 0] = 1;
    s->pick[0 * 2 + 0] = 1; /* trial 0: config 0 picks id 1, config 1 id 0 */
    s->cgap[2 * 2 + 1] = 0.25;
    s->neval[0 * 2 + 1] = 4;
    s->neval[2 * 2 + 1] = 2;
}

Test(flips, counts_changes_ties)
{
    drift_flipset_t s;
    small_set(&s);
    cr_assert_eq(drift_flipset_flips(&s, 0), 2);
    cr_assert_eq(drift_flipset_flips(&s, 1), 0);
    int both[2] = {0, 1}, one[1] = {0};
    cr_assert_eq(drift_flipset_changed(&s, 0, both, 2), 1);
    cr_assert_eq(drift_flipset_changed(&s, 1, both, 2), 0);
    cr_assert_eq(drift_flipset_changed(&s, 0, one, 1), 0);
    s.t[1].tie = 1;
    drift_flip_ties_t T = {0, 0, 0, 0};
    drift_flipset_ties(&T, &s, 1);
    cr_assert_eq(T.confirmed, 1);
    cr_assert_eq(T.distinguished, 1); /* trial 2's computed gap */
    cr_assert_eq(T.picked_higher, 0);
    drift_flipset_ties(&T, &s, 0); /* adds */
    cr_assert_eq(T.confirmed, 2);
    cr_assert_eq(T.picked_higher, 1);
    cr_assert_eq(T.flips, 2);
    drift_flipset_free(&s);
}

Test(flips, bin_by_hand)
{
    drift_flipset_t s;
    small_set(&s);
    drift_logbins_t b;
    cr_assert_eq(drift_logbins_init(&b, 1e-4, 1e-2, 2), 0); /* [1e-4, 1e-3), [1e-3, 1e-2) */
    drift_flip_bin_t B;
    cr_assert_eq(drift_flipset_bin(&B, &s, 0, &b, 1, DRIFT_FP32), 0);
    cr_assert_eq(B.n, 2);
    cr_assert_eq(B.k, 2);
    cr_assert_float_eq(B.rate, 1.0, 1e-15);
    cr_assert_float_eq(B.gap_abs, 1.5e-3, 1e-15);
    /* ulp of 1 in fp32 is 2^-23: mean gap / ulp = 1.5e-3 * 2^23 */
    cr_assert_float_eq(B.gap_ulp, 1.5e-3 * 8388608.0, 1e-6);
    /* Wilson, k = n = 2, z = 1.96: hi = 1, lo = n / (n + z^2) = 2 / 5.8416 */
    cr_assert_float_eq(B.hi, 1.0, 1e-12);
    cr_assert_float_eq(B.lo, 2.0 / (2.0 + 1.959963984540054 * 1.959963984540054), 1e-9);
    cr_assert_eq(drift_flipset_bin(&B, &s, 0, &b, 0, DRIFT_FP32), 0);
    cr_assert_eq(B.n, 0);
    cr_assert(isnan(B.rate) && isnan(B.lo) && isnan(B.gap_abs));
    cr_assert_eq(drift_flipset_bin(&B, &s, 2, &b, 0, DRIFT_FP32), DRIFT_EINVAL);
    drift_flipset_free(&s);
}

Test(flips, fit_predictions_and_realistic)
{
    drift_flipset_t s;
    small_set(&s);
    /* exact head, logits rounded once to fp32: norm-form variance 2 u^2 l1^2 / (8 ln 2) per
     * trial (u = 2^-24, l1 = s = 1), so sigma_pred = sqrt(2 / (8 ln 2)) 2^-24 */
    drift_recipe_t c = {DRIFT_FP32, {0}, {DRIFT_FP32, DRIFT_RNE, 1}, DRIFT_FP32, 1};
    cr_assert_eq(drift_order_parse(&c.order, "seq"), 0);
    s.pvar[0 * 2 + 0] = 4; /* only trial 0 has a partial-sum variance: sigma_sums = sqrt(4) */
    drift_flip_fit_t F;
    cr_assert_eq(drift_flipset_fit(&F, &s, 0, &c, 0, 1024, NULL), 0);
    cr_assert_float_eq(F.sigma_pred, sqrt(2 / (8 * log(2.0))) * ldexp(1.0, -24), 1e-22);
    cr_assert_float_eq(F.sigma_sums, 2.0, 1e-15);
    cr_assert_float_eq(F.s_med, 1.0, 1e-15);
    cr_assert_float_eq(F.l1_med, 1.0, 1e-15);
    /* flips at 1e-3 and 2e-3, none at 0.5: every flip below every non-flip */
    cr_assert_eq(F.fit.status, DRIFT_FIT_SEPARATED);
    cr_assert_float_eq(F.half, 0.674489750196 * F.fit.sigma_hi, 1e-9 * F.fit.sigma_hi);
    cr_assert_float_eq(F.p001, 3.090232306168 * F.fit.sigma_hi, 1e-9 * F.fit.sigma_hi);
    /* realistic summary against a hand-made fit: sigma = 1e-3, so predicted = Phi(-1) + Phi(-2)
     * + Phi(-500); half = 1.5e-3 and p001 = 0.6 set the counts below */
    drift_flip_fit_t G;
    memset(&G, 0, sizeof G);
    G.fit.status = DRIFT_FIT_OK;
    G.fit.sigma = 1e-3;
    G.half = 1.5e-3;
    G.p001 = 0.6;
    drift_flip_real_t R;
    drift_flipset_realistic(&R, &s, 1, &G);
    cr_assert_eq(R.flips, 0);
    cr_assert_float_eq(R.rate, 0.0, 1e-15);
    cr_assert_float_eq(R.predicted, 0.158655253931457 + 0.022750131948179, 1e-12);
    cr_assert_float_eq(R.eval_mean, 2.0, 1e-15);
    cr_assert_eq(R.below_half, 1);
    cr_assert_eq(R.below_p001, 3);
    G.fit.status = DRIFT_FIT_NO_FLIPS;
    drift_flipset_realistic(&R, &s, 0, &G);
    cr_assert_eq(R.flips, 2);
    cr_assert(isnan(R.predicted));
    drift_flipset_free(&s);
}
