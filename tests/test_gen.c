/* test_gen.c — input distributions: known first values, shapes, and the properties each
 * distribution's comment promises. */
#include <criterion/criterion.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "gen.h"

Test(gen, names)
{
    const char *names[] = {"uniform", "normal", "illcond", "llm"};
    for (int i = 0; i < DRIFT_NDISTS; i++) {
        drift_dist_t d;
        cr_assert_str_eq(drift_dist_name((drift_dist_t)i), names[i]);
        cr_assert_eq(drift_dist_parse(&d, names[i]), 0);
        cr_assert_eq((int)d, i);
    }
    const char *bad[] = {"", "Uniform", "llm ", "normal2", "ill"};
    for (int i = 0; i < 5; i++) {
        drift_dist_t d;
        cr_assert_neq(drift_dist_parse(&d, bad[i]), 0, "'%s'", bad[i]);
    }
}

/* Philox4x32-10 known answer (Random123 kat_vectors): key (0, 0), counter (0, 0, 0, 0)
 * gives 6627e8d5 e169c58d bc57ac4c 9b00dbd8. The stream (seed 0, experiment 0, point 0,
 * trial 0) has exactly that key and counter, and a uniform takes the top 27 bits of one
 * word and the top 26 of the next. */
Test(gen, uniform_known_answer)
{
    drift_stream_t s;
    drift_stream_init(&s, 0, 0, 0, 0);
    double x[2];
    drift_gen_fill(x, 2, DRIFT_DIST_UNIFORM, &s);
    double w0 = (double)(((uint64_t)(0x6627e8d5u >> 5) << 26) | (0xe169c58du >> 6)) * 0x1p-53;
    double w1 = (double)(((uint64_t)(0xbc57ac4cu >> 5) << 26) | (0x9b00dbd8u >> 6)) * 0x1p-53;
    cr_assert_eq(x[0], w0, "%a %a", x[0], w0);
    cr_assert_eq(x[1], w1, "%a %a", x[1], w1);
}

Test(gen, normal_known_answer_and_moments)
{
    drift_stream_t s;
    drift_stream_init(&s, 0, 0, 0, 0);
    double x;
    drift_gen_fill(&x, 1, DRIFT_DIST_NORMAL, &s);
    /* Box–Muller, cosine branch, with u1 = 1 - w0 (in (0,1]) and u2 = w1 from above */
    double w0 = (double)(((uint64_t)(0x6627e8d5u >> 5) << 26) | (0xe169c58du >> 6)) * 0x1p-53;
    double w1 = (double)(((uint64_t)(0xbc57ac4cu >> 5) << 26) | (0x9b00dbd8u >> 6)) * 0x1p-53;
    cr_assert_eq(x, sqrt(-2.0 * log(1.0 - w0)) * cos(6.283185307179586 * w1));
    enum { N = 100000 };
    static double v[N];
    drift_stream_init(&s, 5, 1, 2, 3);
    drift_gen_fill(v, N, DRIFT_DIST_NORMAL, &s);
    double m = 0, q = 0;
    for (int i = 0; i < N; i++) m += v[i];
    m /= N;
    for (int i = 0; i < N; i++) q += (v[i] - m) * (v[i] - m);
    q /= N - 1;
    /* 5 standard errors: mean 1/sqrt(N) = 0.0032, variance sqrt(2/N) = 0.0045 */
    cr_assert_lt(fabs(m), 0.016);
    cr_assert_lt(fabs(q - 1), 0.023);
}

Test(gen, uniform_range_and_mean)
{
    enum { N = 100000 };
    static double v[N];
    drift_stream_t s;
    drift_stream_init(&s, 9, 1, 0, 0);
    drift_gen_fill(v, N, DRIFT_DIST_UNIFORM, &s);
    double m = 0;
    for (int i = 0; i < N; i++) {
        cr_assert(v[i] >= 0 && v[i] < 1);
        m += v[i];
    }
    /* 5 standard errors of the mean: 5 * sqrt(1/12 / N) = 0.0046 */
    cr_assert_lt(fabs(m / N - 0.5), 0.0046);
}

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

/* The exact sum of the vector rounded to f (MPFR, 4400 bits: exact for doubles). */
static double exact_sum_rounded(const double *x, size_t n, drift_format_t f, double *sum_abs)
{
    mpfr_t s, a;
    mpfr_inits2(4400, s, a, (mpfr_ptr)0);
    mpfr_set_zero(s, 1);
    mpfr_set_zero(a, 1);
    for (size_t i = 0; i < n; i++) {
        double r = drift_rne(x[i], f);
        mpfr_add_d(s, s, r, MPFR_RNDN);
        mpfr_add_d(a, a, fabs(r), MPFR_RNDN);
    }
    double out = mpfr_get_d(s, MPFR_RNDN);
    *sum_abs = mpfr_get_d(a, MPFR_RNDN);
    mpfr_clears(s, a, (mpfr_ptr)0);
    return out;
}

Test(gen, illcond)
{
    enum { N = 1000 };
    static double x[N], sorted[N];
    drift_stream_t s;
    drift_stream_init(&s, 1, 2, 3, 4);
    drift_gen_fill(x, N, DRIFT_DIST_ILLCOND, &s);
    /* 250 pairs v, -v and 500 signal values in [2^-21, 2^-20) */
    int signal = 0, adjacent = 0;
    for (int i = 0; i < N; i++) signal += x[i] >= 0x1p-21 && x[i] < 0x1p-20;
    cr_assert_eq(signal, 500);
    for (int i = 0; i + 1 < N; i++) adjacent += x[i + 1] == -x[i];
    cr_assert_lt(adjacent, 50, "shuffled: few pairs stay adjacent (%d)", adjacent);
    memcpy(sorted, x, sizeof x);
    qsort(sorted, N, sizeof *sorted, cmp_abs);
    for (int i = 500; i < N; i += 2) cr_assert_eq(sorted[i], -sorted[i + 1], "pairs cancel exactly");
    /* The large pairs cancel exactly in every format (negation commutes with RNE), so the
     * exact sum of the rounded inputs is the sum of the rounded signal. Condition number
     * sum|x| / |sum x|: 2 * 250 E|v| / (500 * 1.5 * 2^-21) = 1.116e6, with a relative
     * standard deviation of about 5% at this n (|v| has sd 0.603 over 250 draws): the
     * window [0.85e6, 1.4e6] is about 4 sigma either side. */
    drift_format_t fs[] = {DRIFT_FP64, DRIFT_FP32, DRIFT_BF16, DRIFT_FP16};
    for (int k = 0; k < 4; k++) {
        double sa, ex = exact_sum_rounded(x, N, fs[k], &sa);
        mpfr_t sig;
        mpfr_init2(sig, 4400);
        mpfr_set_zero(sig, 1);
        for (int i = 0; i < N; i++)
            if (x[i] > 0 && x[i] < 0x1p-20) mpfr_add_d(sig, sig, drift_rne(x[i], fs[k]), MPFR_RNDN);
        double rsig = mpfr_get_d(sig, MPFR_RNDN);
        mpfr_clear(sig);
        cr_assert_eq(ex, rsig, "format %d: exact sum is the signal", k); /* both correctly rounded */
        double kappa = sa / fabs(ex);
        cr_assert(kappa > 0.85e6 && kappa < 1.4e6, "format %d: condition number %g", k, kappa);
    }
}

Test(gen, llm)
{
    enum { N = 200000 };
    static double x[N];
    drift_stream_t s;
    drift_stream_init(&s, 3, 7, 0, 0);
    drift_gen_fill(x, N, DRIFT_DIST_LLM, &s);
    int out = 0, neg = 0;
    double abs_out = 0, abs_all = 0;
    for (int i = 0; i < N; i++) {
        abs_all += fabs(x[i]);
        if (fabs(x[i]) >= 20) {
            out++;
            neg += x[i] < 0;
            abs_out += fabs(x[i]);
            cr_assert_leq(fabs(x[i]), 100.0 * (1 + 1e-15), "outlier magnitude <= 100 (pow rounding)");
        } else {
            /* a normal(0,1) value beyond 6 would be a 2e-9 event; none expected here */
            cr_assert_lt(fabs(x[i]), 6.5);
        }
    }
    /* outliers: 0.5% +- 5 sigma (sigma = sqrt(0.005 * 0.995 / N) = 1.58e-4) */
    cr_assert_lt(fabs((double)out / N - 0.005), 8e-4, "outlier fraction %g", (double)out / N);
    /* random signs: half +- 5 sigma (sqrt(out)/2 / out ~ 1.6%) */
    cr_assert_lt(fabs((double)neg / out - 0.5), 0.08);
    /* outliers hold about a quarter of sum|x|: 0.005 * 80/ln5 / (that + 0.995 sqrt(2/pi))
     * = 0.2385; +-0.03 covers the sampling spread of both parts (5 sigma). */
    cr_assert_lt(fabs(abs_out / abs_all - 0.2385), 0.03, "share %g", abs_out / abs_all);
}

Test(gen, deterministic)
{
    double a[257], b[257], c[257];
    for (int d = 0; d < DRIFT_NDISTS; d++) {
        drift_stream_t s;
        drift_stream_init(&s, 42, 1, 2, 3);
        drift_gen_fill(a, 257, (drift_dist_t)d, &s);
        drift_stream_init(&s, 42, 1, 2, 3);
        drift_gen_fill(b, 257, (drift_dist_t)d, &s);
        drift_stream_init(&s, 42, 1, 2, 4);
        drift_gen_fill(c, 257, (drift_dist_t)d, &s);
        cr_assert_eq(memcmp(a, b, sizeof a), 0, "dist %d", d);
        cr_assert_neq(memcmp(a, c, sizeof a), 0, "dist %d: another trial differs", d);
    }
}
