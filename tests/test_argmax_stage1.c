/* test_argmax_stage1.c — the first pruning stage of the realistic argmax_flip heads
 * (drift_lmhead_stage1) on adversarial rows: no token that could be the argmax (or the
 * runner-up) under ANY of the experiment's kernels, or exactly, may be dropped.
 *
 * Independent witnesses: every token's exact logit (inputs rounded to the format with MPFR,
 * products and sums in MPFR at 2400 bits, every operation asserted exact), and every kernel's
 * output on the full vocabulary from its emulation (drift_recipe_dot, the definition of what the
 * kernel computes; checked against MPFR by test_argmax's bound_holds). Each token's radius is
 * checked against both: |kernel logit - approx| and |exact logit - approx| <= rad[v] (the
 * difference taken exactly in MPFR), the top-2 of the exact logits and of every kernel's
 * logits (with every token tied to them) must be among the survivors, and the whole pruned
 * evaluation must give the brute-force outcome (drift_lmhead_eval_full).
 *
 * The adversarial rows (per format): token 0 is a weight row pushed so that rounding to the
 * format lowers its logit as much as it can (every weight just short of a rounding midpoint,
 * on the side of sign(h)), near-copies of it are pushed the other way (rounding raises their
 * logits), and the hidden state itself sits just short of midpoints with the sign that raises
 * the copies: on the master values the approximate pass ranks token 0 first by about twice the
 * largest input-rounding shift, and the true argmax is a copy that a radius missing any part
 * of the input-rounding term would drop. Further tokens fill the neighbourhood at log-spaced
 * distances (1e-7 .. 1e-4 of the weights), one is an exact duplicate (an exact tie), and the
 * hidden state has outlier channels (the split channels of the tighter bound). */
#include <criterion/criterion.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argmax_kernels.h"
#include "dispatch.h"
#include "drift.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "oracle.h"
#include "philox.h"
#include "policy.h"

#define XPREC 2400
#include "mp_dot.h"

static const drift_format_t FMTS[] = {DRIFT_BF16, DRIFT_FP16, DRIFT_TF32, DRIFT_FP32};

/* x rounded to f (RNE) by MPFR */
static double rnd(double x, drift_format_t f)
{
    mpfr_t m;
    mpfr_init2(m, 64);
    mpfr_set_d(m, x, MPFR_RNDN);
    double y = oracle_round_fmt(m, f, MPFR_RNDN);
    mpfr_clear(m);
    return y;
}

/* x moved toward the rounding midpoint of f on side s (+1 / -1), just short of it, so that x
 * still rounds to rnd(x) but is as far from it as an fp32 number can be (2^-10 of the format's
 * spacing short of the midpoint): the largest rounding error of that sign. x's own rounding
 * r = rnd(x); the result is r + s (1/2 - 2^-10) ulp (the spacing on that side of r), an fp32 number (the format has at most
 * 11 significant bits, fp32 has 24). */
static double push(double x, int s, drift_format_t f)
{
    if (f == DRIFT_FP32) return x;
    double r = rnd(x, f);
    if (r == 0) return r;
    double ulp = drift_ulp(r + s * fabs(r) * 0x1p-30, f); /* the spacing on the side we move to */
    double y = r + s * (0.5 - 0x1p-10) * ulp;
    cr_assert_eq((double)(float)y, y, "pushed value is an fp32 number");
    cr_assert_eq(rnd(y, f), r, "pushed value still rounds to r");
    return y;
}

/* |x - a| <= r, decided exactly (x in MPFR, a and r doubles) */
static int within(mpfr_srcptr x, double a, double r)
{
    mpfr_t d;
    mpfr_init2(d, XPREC);
    cr_assert_eq(mpfr_sub_d(d, x, a, MPFR_RNDN), 0, "exact difference");
    mpfr_abs(d, d, MPFR_RNDN);
    int ok = mpfr_cmp_d(d, r) <= 0;
    mpfr_clear(d);
    return ok;
}

/* The experiment's kernel set for f at K, without own-format accumulation (no finite bound:
 * the realistic mode leaves it out), policy kernels included. */
static int kernels(drift_recipe_t *c, drift_format_t f, size_t K)
{
    static const char *const ORD[] = {"seq", "splitk:16", "pairwise", "warp:32", "tc:h100"};
    drift_order_t o[5];
    for (int i = 0; i < 5; i++) cr_assert_eq(drift_order_parse(&o[i], ORD[i]), 0);
    drift_device_t dev;
    cr_assert_eq(drift_device_lookup(&dev, "h100"), 0);
    static drift_polrow_t pol[DRIFT_AF_NPOL];
    for (int q = 0; q < DRIFT_AF_NPOL; q++) cr_assert_eq(drift_policy_row(&pol[q], q, 32000, 8, K, &dev), 0);
    static drift_kset_t ks;
    int polcfg[DRIFT_AF_NPOL][2];
    cr_assert_eq(drift_kset_build(&ks, polcfg, f, o, 5, pol, DRIFT_AF_NPOL, K), 0);
    int n = 0;
    for (int k = 0; k < ks.n; k++)
        if (ks.k[k].role != DRIFT_ROLE_OWN) c[n++] = ks.k[k].c;
    return n;
}

/* One adversarial head for format f: h (K) and W (V x K fp32 numbers, as float and double). */
static void adversarial(double *h, float *W, double *Wd, size_t V, size_t K, drift_format_t f, uint32_t trial)
{
    drift_stream_t s;
    drift_stream_init(&s, 5, drift_fnv1a32("test_argmax_stage1"), (uint32_t)(K * 8 + (size_t)f), trial);
    drift_hidden_model_t m;
    cr_assert_eq(drift_hidden_model(&m, K, &s), 0);
    drift_gen_hidden(h, &m, &s);
    double *w0 = malloc(K * sizeof *w0), *g = malloc(K * sizeof *g);
    drift_gen_weight_row(w0, K, &s);
    /* token 0 and its copies lean on h: they are the top of the head */
    for (size_t i = 0; i < K; i++) w0[i] = (double)(float)(w0[i] + (h[i] >= 0 ? 1 : -1) / sqrt((double)K));
    /* the hidden state short of its midpoints, on the side that raises the copies' logits:
     * -(h - h^f) . w > 0 for w ~ w0 wants h - h^f of sign -sign(w0) */
    for (size_t i = 0; i < K; i++) h[i] = push(h[i], w0[i] >= 0 ? -1 : 1, f);
    for (size_t v = 0; v < V; v++) {
        double *w = Wd + v * K;
        drift_gen_weight_row(g, K, &s);
        if (v == 0) {
            /* rounds to r0 = rnd(w0), master value pushed up: h . w - h^f . w^f as large as it gets */
            for (size_t i = 0; i < K; i++) w[i] = push(w0[i], rnd(h[i], f) >= 0 ? 1 : -1, f);
        } else if (v < 24 && v % 2) {
            /* r0 raised by k spacings on one channel (the rounded logit exceeds token 0's by
             * k |h^f_j| ulp), master values pushed down: below token 0 on the master values,
             * above it after rounding, for k small against the pushes' sum */
            size_t j = (v * 37) % K;
            for (size_t i = 0; i < K; i++) w[i] = rnd(w0[i], f);
            if (f != DRIFT_FP32) {
                double hs = rnd(h[j], f) >= 0 ? 1 : -1;
                for (size_t k = 0; k < v / 2 + 1; k++)
                    w[j] = w[j] + hs * drift_ulp(w[j] + hs * fabs(w[j]) * 0x1p-30, f);
                for (size_t i = 0; i < K; i++) w[i] = push(w[i], rnd(h[i], f) >= 0 ? -1 : 1, f);
            }
        } else if (v < 24) {
            /* near-copies, log-spaced 1e-7 .. 1e-4 of the weights, pushed up or down */
            double eps = pow(10.0, -7 + 3.0 * (double)(v / 2 % 12) / 11);
            for (size_t i = 0; i < K; i++) {
                double x = (double)(float)(w0[i] + eps * g[i]);
                w[i] = push(x, (rnd(h[i], f) >= 0) == (v % 4 == 0) ? -1 : 1, f);
            }
        } else if (v == 24) {
            memcpy(w, Wd + 1 * K, K * sizeof *w); /* an exact duplicate of token 1: an exact tie */
        } else {
            /* the rest of the head: independent rows, every 5th leaning on h */
            double lean = v % 5 == 0 ? 0.5 : 0; /* half as far up as token 0: the crowd below */
            for (size_t i = 0; i < K; i++) w[i] = (double)(float)(g[i] + lean * (h[i] > 0 ? 1 : -1) / sqrt((double)K));
        }
        for (size_t i = 0; i < K; i++) W[v * K + i] = (float)w[i];
    }
    free(w0);
    free(g);
}

/* The ids (of n) whose value equals the largest or the second largest of vals (mpfr) */
static void top2_set(unsigned char *mark, mpfr_t *vals, size_t n)
{
    size_t i1 = 0;
    for (size_t i = 1; i < n; i++)
        if (mpfr_cmp(vals[i], vals[i1]) > 0) i1 = i;
    size_t i2 = i1 == 0 ? 1 : 0;
    for (size_t i = 0; i < n; i++)
        if (i != i1 && mpfr_cmp(vals[i], vals[i2]) > 0) i2 = i;
    for (size_t i = 0; i < n; i++)
        if (mpfr_cmp(vals[i], vals[i2]) >= 0) mark[i] = 1;
}

Test(argmax_stage1, adversarial_rows_keep_every_candidate, .timeout = 600)
{
    static const size_t KS[] = {256, 1536};
    const size_t V = 96;
    long checked = 0, pruned = 0, total = 0, moved = 0, within_r = 0;
    for (int ki = 0; ki < 2; ki++) {
        size_t K = KS[ki];
        double *h = malloc(K * sizeof *h), *Wd = malloc(V * K * sizeof *Wd), *hf = malloc(K * sizeof *hf);
        double *wf = malloc(V * K * sizeof *wf), *l1 = malloc(V * sizeof *l1), *l2 = malloc(V * sizeof *l2);
        double *dl2 = malloc(V * sizeof *dl2), *ap = malloc(V * sizeof *ap), *rad = malloc(V * sizeof *rad);
        float *W = malloc(V * K * sizeof *W), *cols = malloc(V * DRIFT_LMHEAD_MAXSPLIT * sizeof *cols);
        size_t *keep = malloc(V * sizeof *keep), split[DRIFT_LMHEAD_MAXSPLIT];
        mpfr_t *ex = malloc(V * sizeof *ex), *cv = malloc(V * sizeof *cv);
        for (size_t v = 0; v < V; v++) mpfr_inits2(XPREC, ex[v], cv[v], (mpfr_ptr)0);
        for (int fi = 0; fi < 4; fi++) {
            drift_format_t f = FMTS[fi];
            drift_recipe_t c[DRIFT_LMHEAD_MAXCFG];
            int nc = kernels(c, f, K);
            for (uint32_t trial = 0; trial < 2; trial++) {
                adversarial(h, W, Wd, V, K, f, trial);
                for (size_t i = 0; i < K; i++) hf[i] = rnd(h[i], f);
                for (size_t v = 0; v < V; v++) {
                    double a = 0, b = 0, e = 0;
                    for (size_t i = 0; i < K; i++) {
                        double x = Wd[v * K + i];
                        wf[v * K + i] = rnd(x, f);
                        a += fabs(x);
                        b += x * x;
                        e += (x - wf[v * K + i]) * (x - wf[v * K + i]);
                    }
                    /* upper bounds: a K-term double sum errs by < K 2^-53 relatively (K <= 1536:
                     * < 2e-13); 1e-12 covers it and the square root's rounding */
                    l1[v] = a * (1 + 1e-12);
                    l2[v] = sqrt(b) * (1 + 1e-12);
                    dl2[v] = sqrt(e) * (1 + 1e-12);
                    mp_dot(ex[v], hf, wf + v * K, K);
                }
                cr_assert_eq(drift_lmhead_approx(ap, h, 1, W, V, K), 0);
                size_t M = K / 256;
                cr_assert_eq(drift_lmhead_split_choose(split, M, h, 1, K), 0);
                cr_assert_eq(drift_lmhead_split_cols(cols, W, V, K, split, M), 0);
                /* the master argmax is not the exact argmax of the rounded inputs: the rows do
                 * what they were built for */
                size_t am = 0, ae = 0;
                for (size_t v = 1; v < V; v++) {
                    if (ap[v] > ap[am]) am = v;
                    if (mpfr_cmp(ex[v], ex[ae]) > 0) ae = v;
                }
                moved += am != ae;
                /* every kernel's logits on the full vocabulary, and the candidates */
                unsigned char must[96] = {0};
                top2_set(must, ex, V);
                double *y = malloc((size_t)nc * V * sizeof *y);
                for (int k = 0; k < nc; k++) {
                    for (size_t v = 0; v < V; v++) {
                        cr_assert_eq(drift_recipe_dot(&y[k * V + v], hf, wf + v * K, K, NULL, &c[k]), 0);
                        mpfr_set_d(cv[v], y[k * V + v], MPFR_RNDN);
                    }
                    top2_set(must, cv, V);
                }
                /* three first stages: split + residual norms, prepared (the experiment's), plain
                 * (no aids, maxima per call), and the global one (stage1_global) */
                for (int variant = 0; variant < 3; variant++) {
                    drift_lmhead_head_t hd = {.W = W,
                        .V = V,
                        .K = K,
                        .row_l1 = l1,
                        .row_l2 = l2,
                        .row_dl2 = variant == 0 ? dl2 : NULL,
                        .nsplit = variant == 0 ? M : 0,
                        .split = split,
                        .split_cols = cols,
                        .stage1_global = variant == 2};
                    if (variant == 0) cr_assert_eq(drift_lmhead_head_prepare(&hd), 0);
                    size_t n = 0;
                    cr_assert_eq(drift_lmhead_stage1(keep, &n, rad, h, &hd, ap, c, nc), 0);
                    unsigned char kept[96] = {0};
                    for (size_t j = 0; j < n; j++) kept[keep[j]] = 1;
                    for (size_t v = 0; v < V; v++) {
                        cr_expect(!must[v] || kept[v], "K %zu %s trial %u variant %d: candidate token %zu dropped", K,
                            drift_format_name(f), trial, variant, v);
                        cr_expect(within(ex[v], ap[v], rad[v]), "K %zu %s variant %d: exact logit of %zu outside rad",
                            K, drift_format_name(f), variant, v);
                        for (int k = 0; k < nc; k++) {
                            mpfr_set_d(cv[v], y[k * V + v], MPFR_RNDN);
                            cr_expect(within(cv[v], ap[v], rad[v]),
                                "K %zu %s variant %d: kernel %d logit of %zu outside rad", K, drift_format_name(f),
                                variant, k, v);
                            checked++;
                        }
                    }
                    /* the runner-up lies within the radius of the master top: the rows are hard */
                    mpfr_t d;
                    mpfr_init2(d, XPREC);
                    size_t i2 = ae == 0 ? 1 : 0;
                    for (size_t v = 0; v < V; v++)
                        if (v != ae && mpfr_cmp(ex[v], ex[i2]) > 0) i2 = v;
                    mpfr_sub(d, ex[ae], ex[i2], MPFR_RNDN);
                    within_r += mpfr_cmp_d(d, rad[ae]) <= 0;
                    mpfr_clear(d);
                    pruned += (long)(V - n);
                    total += (long)V;
                    /* and the whole pruned evaluation gives the brute-force outcome */
                    drift_lmhead_result_t full, pr;
                    cr_assert_eq(drift_lmhead_eval_full(&full, h, Wd, V, K, c, nc), 0);
                    cr_assert_eq(drift_lmhead_eval_pruned_head(&pr, h, &hd, ap, c, nc, NULL), 0);
                    cr_expect(full.exact.top1 == pr.exact.top1 && full.exact.top2 == pr.exact.top2 &&
                              full.exact.gap == pr.exact.gap && full.exact.tie == pr.exact.tie);
                    for (int k = 0; k < nc; k++)
                        cr_expect(full.computed[k].top1 == pr.computed[k].top1 &&
                                      full.computed[k].top2 == pr.computed[k].top2 &&
                                      full.computed[k].v1 == pr.computed[k].v1 &&
                                      full.computed[k].v2 == pr.computed[k].v2 && full.flip[k] == pr.flip[k],
                            "K %zu %s variant %d kernel %d: pruned outcome differs", K, drift_format_name(f), variant,
                            k);
                }
                free(y);
            }
        }
        for (size_t v = 0; v < V; v++) mpfr_clears(ex[v], cv[v], (mpfr_ptr)0);
        free(ex);
        free(cv);
        free(h);
        free(Wd);
        free(hf);
        free(wf);
        free(l1);
        free(l2);
        free(dl2);
        free(ap);
        free(rad);
        free(W);
        free(cols);
        free(keep);
    }
    cr_expect(checked > 20000, "checked %ld", checked);
    /* the construction works: in most lossy rows the master argmax is not the exact one, the
     * runner-up sits within the radius, and the stage still prunes most of the head */
    cr_expect(moved >= 6, "master argmax moved by rounding in %ld rows", moved);
    cr_expect(within_r >= 12, "runner-up within the radius in %ld cases", within_r);
    cr_expect(pruned > total / 2, "pruned %ld of %ld", pruned, total);
    mpfr_free_cache();
}

/* The tighter stage keeps fewer tokens than the previous one on a realistic head (the reason it
 * exists), and never more; the pruned evaluation's outcome is the same with and without it. */
Test(argmax_stage1, tighter_than_global_same_outcome)
{
    const size_t V = 2000, K = 1024;
    drift_stream_t s;
    drift_stream_init(&s, 3, drift_fnv1a32("test_argmax_stage1.real"), 0, 0);
    drift_hidden_model_t m;
    cr_assert_eq(drift_hidden_model(&m, K, &s), 0);
    double *h = malloc(K * sizeof *h), *w = malloc(K * sizeof *w), *ap = malloc(V * sizeof *ap);
    double *l1 = malloc(V * sizeof *l1), *l2 = malloc(V * sizeof *l2), *dl2 = malloc(V * sizeof *dl2);
    float *W = malloc(V * K * sizeof *W), *cols = malloc(V * 4 * sizeof *cols);
    size_t split[4];
    for (size_t v = 0; v < V; v++) {
        drift_gen_weight_row(w, K, &s);
        double a = 0, b = 0;
        for (size_t i = 0; i < K; i++) {
            W[v * K + i] = (float)w[i];
            a += fabs(w[i]);
            b += w[i] * w[i];
        }
        l1[v] = a * (1 + 1e-12); /* upper bounds (see above) */
        l2[v] = sqrt(b) * (1 + 1e-12);
    }
    long n_new = 0, n_old = 0;
    for (int row = 0; row < 4; row++) {
        drift_gen_hidden(h, &m, &s);
        cr_assert_eq(drift_lmhead_approx(ap, h, 1, W, V, K), 0);
        cr_assert_eq(drift_lmhead_split_choose(split, 4, h, 1, K), 0);
        cr_assert_eq(drift_lmhead_split_cols(cols, W, V, K, split, 4), 0);
        for (int fi = 0; fi < 4; fi++) {
            drift_recipe_t c[DRIFT_LMHEAD_MAXCFG];
            int nc = kernels(c, FMTS[fi], K);
            cr_assert_eq(drift_lmhead_round_norms(dl2, W, V, K, FMTS[fi]), 0);
            drift_lmhead_head_t a = {.W = W,
                .V = V,
                .K = K,
                .row_l1 = l1,
                .row_l2 = l2,
                .row_dl2 = dl2,
                .nsplit = 4,
                .split = split,
                .split_cols = cols};
            drift_lmhead_head_t b = a;
            b.stage1_global = 1;
            drift_lmhead_result_t ra, rb;
            cr_assert_eq(drift_lmhead_eval_pruned_head(&ra, h, &a, ap, c, nc, NULL), 0);
            cr_assert_eq(drift_lmhead_eval_pruned_head(&rb, h, &b, ap, c, nc, NULL), 0);
            cr_expect(ra.n_stage1 <= rb.n_stage1);
            n_new += (long)ra.n_stage1, n_old += (long)rb.n_stage1;
            cr_expect_eq(ra.exact.top1, rb.exact.top1);
            cr_expect_eq(ra.exact.top2, rb.exact.top2);
            cr_expect_eq(ra.exact.gap, rb.exact.gap);
            for (int k = 0; k < nc; k++) {
                cr_expect_eq(ra.computed[k].top1, rb.computed[k].top1);
                cr_expect_eq(ra.computed[k].top2, rb.computed[k].top2);
                cr_expect_eq(ra.computed[k].v1, rb.computed[k].v1);
                cr_expect_eq(ra.computed[k].v2, rb.computed[k].v2);
                cr_expect_eq(ra.n_eval[k], rb.n_eval[k], "stage 2 keeps the same tokens");
            }
        }
    }
    cr_expect(n_new < n_old, "stage-1 survivors: new %ld, previous %ld", n_new, n_old);
    free(h);
    free(w);
    free(ap);
    free(l1);
    free(l2);
    free(dl2);
    free(W);
    free(cols);
}

/* drift_lmhead_round_norms against MPFR's rounding; the split helpers by hand. */
Test(argmax_stage1, helpers)
{
    const size_t V = 3, K = 5;
    float W[15] = {1.0f + 0x1p-12f, -3.0f, 0.1f, 1e-30f, 65519.0f, 0, 0, 0, 0, 0, 2.5f, 2.5f, -7.0f, 0.3f, 1e-6f};
    double dl2[3];
    cr_assert_eq(drift_lmhead_round_norms(dl2, W, V, K, DRIFT_FP16), 0);
    for (size_t v = 0; v < V; v++) {
        double e = 0;
        for (size_t i = 0; i < K; i++) {
            double x = W[v * K + i], d = x - rnd(x, DRIFT_FP16);
            e += d * d;
        }
        /* an upper bound, and a tight one: the library sums K = 5 squares in double */
        cr_expect(dl2[v] >= sqrt(e) && dl2[v] <= sqrt(e) * (1 + 1e-12) + 1e-300, "row %zu: %.17g vs %.17g", v, dl2[v],
            sqrt(e));
    }
    cr_assert_eq(drift_lmhead_round_norms(dl2, W, V, K, DRIFT_FP32), 0);
    cr_expect(dl2[0] == 0 && dl2[1] == 0 && dl2[2] == 0);
    /* channel maxima of |H| over the two rows: 1, 9, 3, 9, 2 -> the two largest are channels 1
     * and 3 (9 each), the third largest is channel 2 (3) */
    double H[10] = {1, -9, 0, 4, 2, -0.5, 1, 3, -9, 0};
    size_t ch[3];
    cr_assert_eq(drift_lmhead_split_choose(ch, 2, H, 2, K), 0);
    cr_expect(ch[0] == 1 && ch[1] == 3, "%zu %zu", ch[0], ch[1]);
    cr_assert_eq(drift_lmhead_split_choose(ch, 3, H, 2, K), 0);
    cr_expect(ch[0] == 1 && ch[1] == 2 && ch[2] == 3, "%zu %zu %zu", ch[0], ch[1], ch[2]);
    float cols[6];
    cr_assert_eq(drift_lmhead_split_cols(cols, W, V, K, ch, 2), 0);
    cr_expect(cols[0] == W[1] && cols[1] == W[2] && cols[4] == W[11] && cols[5] == W[12]);
    cr_expect_eq(drift_lmhead_split_choose(ch, 6, H, 2, K), DRIFT_EINVAL);
    size_t dup[2] = {1, 1};
    double ap[3] = {0, 0, 0}, l[3] = {1, 1, 1}, hh[5] = {0};
    size_t keep[3], n;
    drift_recipe_t c;
    memset(&c, 0, sizeof c);
    c.in = DRIFT_FP16;
    cr_assert_eq(drift_order_parse(&c.order, "seq"), 0);
    c.acc = (drift_acc_t){DRIFT_FP32, DRIFT_RNE, 1};
    c.out = DRIFT_FP32;
    drift_lmhead_head_t hd = {
        .W = W, .V = V, .K = K, .row_l1 = l, .row_l2 = l, .nsplit = 2, .split = dup, .split_cols = cols};
    cr_expect_eq(drift_lmhead_stage1(keep, &n, NULL, hh, &hd, ap, &c, 1), DRIFT_EINVAL, "repeated split channel");
}

/* The approximate pass computes the order its error bound counts on (lmhead.h): lane j of each
 * (row, token) adds the rounded products h_i w_i for i = j mod 16 in increasing i, in float, and
 * the 16 lanes are then added in sequence. Bit for bit against that order written out here, with
 * and without the AVX2 build, for K with and without a tail and across channel blocks. */
Test(argmax_stage1, approx_pass_order_bit_exact)
{
    static const size_t KS[] = {5, 37, 1000, 1100, 1536};
    const size_t R = 5, V = 19;
    drift_stream_t s;
    drift_stream_init(&s, 9, drift_fnv1a32("test_argmax_stage1.approx"), 0, 0);
    for (int ki = 0; ki < 5; ki++) {
        size_t K = KS[ki];
        double *H = malloc(R * K * sizeof *H), *ap = malloc(R * V * sizeof *ap);
        float *W = malloc(V * K * sizeof *W);
        for (size_t i = 0; i < R * K; i++) H[i] = (float)(drift_stream_normal(&s) * (i % 97 == 0 ? 50 : 1));
        for (size_t i = 0; i < V * K; i++) W[i] = (float)(drift_stream_normal(&s) / sqrt((double)K));
        for (int simd = 0; simd < 2; simd++) {
            setenv("DRIFT_NO_SIMD", simd ? "0" : "1", 1);
            cr_assert_eq(drift_lmhead_approx(ap, H, R, W, V, K), 0);
            for (size_t r = 0; r < R; r++)
                for (size_t v = 0; v < V; v++) {
                    float lane[16] = {0};
                    for (size_t i = 0; i < K; i++) {
                        float p = (float)H[r * K + i] * W[v * K + i]; /* rounded product (no contraction) */
                        lane[i % 16] = lane[i % 16] + p;
                    }
                    float sum = 0;
                    for (int j = 0; j < 16; j++) sum = sum + lane[j];
                    cr_expect_eq(ap[r * V + v], (double)sum, "K %zu simd %d row %zu token %zu: %a vs %a", K, simd, r, v,
                        ap[r * V + v], (double)sum);
                }
        }
        unsetenv("DRIFT_NO_SIMD");
        free(H);
        free(ap);
        free(W);
    }
}
