/* bench/exact_dot.c — what does an exact witness of a dot product cost?
 *
 * For n = 10^3, 10^5, 10^7 pairs (uniform [-1, 1), Philox seed 1), times
 *   naive       s += a[i] * b[i] in double, left to right (rounds 2n times);
 *   fast_exact  drift_exact_dot on fp32-valued pairs (the lab's inputs);
 *   exact_53    drift_exact_dot on pairs with all 53 bits (the TwoProduct path);
 *   xsum        xsum_large_add_dot + round, fp32-valued pairs (only when built with
 *               -DDRIFT_XSUM_DIR=<xsum source>; skipped with a message otherwise).
 * Thread CPU time, the functions interleaved within each of R rounds (small n repeated
 * inside a sample); ratios as min and median. Goal: fast_exact/naive <= 1.5
 * for n >= 10^5 and <= 2 at 10^3; exact_53/naive <= 3. At n = 10^5 the MPFR path is timed
 * too, and every exact result is checked against MPFR bit for bit (exit 1 otherwise).
 *
 * Usage: bench_exact_dot [ROUNDS]   (default 11) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "bench_util.h"
#include "exact.h"
#include "philox.h"
#ifdef DRIFT_HAVE_XSUM
#include "xsum.h"
#endif

/* noinline and the result kept: the loop is timed as written. Without -ffast-math (and
 * with -ffp-contract=off) the compiler may neither reorder the sum into vector lanes nor
 * fuse the multiply-add, so this is the plain sequential dot. */
__attribute__((noinline)) static double naive_dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

__attribute__((noinline)) static double fast_dot(const double *a, const double *b, size_t n)
{
    double r;
    if (drift_exact_dot(&r, a, b, n, DRIFT_FP64, DRIFT_RNE) != 0) abort();
    return r;
}

__attribute__((noinline)) static double mpfr_exact_dot(const double *a, const double *b, size_t n)
{
    double r;
    if (drift_exact_dot_mpfr(&r, a, b, n, DRIFT_FP64, DRIFT_RNE) != 0) abort();
    return r;
}

#ifdef DRIFT_HAVE_XSUM
__attribute__((noinline)) static double xsum_dot(const double *a, const double *b, size_t n)
{
    xsum_large_accumulator lacc;
    xsum_large_init(&lacc);
    xsum_large_add_dot(&lacc, a, b, (xsum_length)n);
    return xsum_large_round(&lacc);
}
#endif

typedef double (*dot_fn)(const double *, const double *, size_t);

static double timed(dot_fn fn, const double *a, const double *b, size_t n, long inner)
{
    double t0 = bench_cpu_now();
    for (long k = 0; k < inner; k++) {
        volatile double v = fn(a, b, n); /* volatile: the call cannot be dropped */
        (void)v;
    }
    return (bench_cpu_now() - t0) / (double)inner;
}

static int same_as_mpfr(const double *a, const double *b, size_t n)
{
    double f = fast_dot(a, b, n), m = mpfr_exact_dot(a, b, n);
    return memcmp(&f, &m, sizeof f) == 0;
}

int main(int argc, char **argv)
{
    const char *pos[1];
    int np = bench_args(NULL, 0, pos, 1, argc, argv, "usage: bench_exact_dot [ROUNDS]   (1..1000, default 11)");
    int rounds = np ? (int)bench_long("ROUNDS", pos[0], 1, 1000) : 11;
    const size_t nmax = 10000000;
    double *a = malloc(nmax * sizeof *a), *b = malloc(nmax * sizeof *b);
    double *a53 = malloc(nmax * sizeof *a53), *b53 = malloc(nmax * sizeof *b53);
    if (!a || !b || !a53 || !b53) {
        fprintf(stderr, "bench_exact_dot: out of memory\n");
        return 2;
    }
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("bench_exact_dot"), 0, 0);
    for (size_t i = 0; i < nmax; i++) {
        a53[i] = 2.0 * drift_stream_uniform(&s) - 1.0;
        b53[i] = 2.0 * drift_stream_uniform(&s) - 1.0;
        a[i] = (float)a53[i];
        b[i] = (float)b53[i];
    }
    printf("exact_dot: pairs uniform [-1,1) (philox seed 1), thread CPU time, %d interleaved rounds\n", rounds);
#ifndef DRIFT_HAVE_XSUM
    printf("xsum: not built (configure with -DDRIFT_XSUM_DIR=<dir with xsum.c>): fast_exact/xsum skipped\n");
#endif
    printf("%9s %11s %13s %9s %13s %9s %12s %9s\n", "n", "naive ns/el", "fast/naive", "(median)", "exact53/naive",
        "(median)", "fast/xsum", "(median)");
    int bad = 0;
    const size_t ns[] = {1000, 100000, 10000000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        size_t n = ns[k];
        long inner = bench_inner(n, 4e6);
        double tn[1000], tf[1000], t53[1000], tx[1000];
        for (int r = 0; r < rounds; r++) {
            tn[r] = timed(naive_dot, a, b, n, inner);
            tf[r] = timed(fast_dot, a, b, n, inner);
            t53[r] = timed(fast_dot, a53, b53, n, inner);
#ifdef DRIFT_HAVE_XSUM
            tx[r] = timed(xsum_dot, a, b, n, inner);
#else
            tx[r] = 1;
#endif
        }
        bench_stat_t sn = bench_stat(tn, rounds), sf = bench_stat(tf, rounds), s53 = bench_stat(t53, rounds),
                     sx = bench_stat(tx, rounds);
        printf("%9zu %11.2f %13.2f %9.2f %13.2f %9.2f", n, 1e9 * sn.min / (double)n, sf.min / sn.min, sf.med / sn.med,
            s53.min / sn.min, s53.med / sn.med);
#ifdef DRIFT_HAVE_XSUM
        printf(" %12.2f %9.2f\n", sf.min / sx.min, sf.med / sx.med);
#else
        (void)sx;
        printf(" %12s %9s\n", "-", "-");
#endif
        if (n <= 100000 && (!same_as_mpfr(a, b, n) || !same_as_mpfr(a53, b53, n))) bad = 1;
    }
    const size_t nm = 100000;
    double tm[5], tf[5];
    for (int r = 0; r < 5; r++) {
        tf[r] = timed(fast_dot, a, b, nm, 1);
        tm[r] = timed(mpfr_exact_dot, a, b, nm, 1);
    }
    bench_stat_t sm = bench_stat(tm, 5), sf = bench_stat(tf, 5);
    printf("mpfr/fast_exact at n = %zu: %.0fx (min) %.0fx (median)\n", nm, sm.min / sf.min, sm.med / sf.med);
    printf("fast exact == MPFR exact bit for bit (fp32-valued and 53-bit, n <= 10^5): %s\n", bad ? "NO" : "yes");
    free(a);
    free(b);
    free(a53);
    free(b53);
    return bad;
}
