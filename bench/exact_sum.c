/* bench/exact_sum.c — what does an exact sum of doubles cost, next to a naive loop and
 * next to xsum (Radford Neal's large superaccumulator, the peer a user would reach for)?
 *
 * For n = 10^3 ... 10^7 doubles (uniform [-1, 1) with all 53 bits, Philox seed 1), times
 *   naive       s += x[i] left to right in double (rounds n times; the floor to beat);
 *   fast_exact  drift_exact_sum: correctly rounded;
 *   xsum        xsum_large_addv + xsum_large_round (only when built with
 *               -DDRIFT_XSUM_DIR=<xsum source>; skipped with a message otherwise).
 * Thread CPU time, the functions interleaved within each of R rounds; small n repeated
 * inside a sample. Prints fast_exact/naive and fast_exact/xsum as min and median ratios.
 * Goal: fast_exact/naive <= 1.5 and fast_exact/xsum <= 1.0 for n >= 10^4.
 * Exits 1 if fast_exact and MPFR disagree in a single bit.
 *
 * Usage: bench_exact_sum [ROUNDS]   (default 11) */
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

__attribute__((noinline)) static double naive_sum(const double *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}

__attribute__((noinline)) static double fast_sum(const double *x, size_t n)
{
    double r;
    if (drift_exact_sum(&r, x, n, DRIFT_FP64, DRIFT_RNE) != 0) abort();
    return r;
}

#ifdef DRIFT_HAVE_XSUM
__attribute__((noinline)) static double xsum_sum(const double *x, size_t n)
{
    xsum_large_accumulator lacc;
    xsum_large_init(&lacc);
    xsum_large_addv(&lacc, x, (xsum_length)n);
    return xsum_large_round(&lacc);
}
#endif

typedef double (*sum_fn)(const double *, size_t);

static double timed(sum_fn fn, const double *x, size_t n, long inner)
{
    double t0 = bench_cpu_now();
    for (long k = 0; k < inner; k++) {
        volatile double v = fn(x, n); /* volatile: the call cannot be dropped */
        (void)v;
    }
    return (bench_cpu_now() - t0) / (double)inner;
}

int main(int argc, char **argv)
{
    const char *pos[1];
    int np = bench_args(NULL, 0, pos, 1, argc, argv, "usage: bench_exact_sum [ROUNDS]   (1..1000, default 11)");
    int rounds = np ? (int)bench_long("ROUNDS", pos[0], 1, 1000) : 11;
    const size_t nmax = 10000000;
    double *x = malloc(nmax * sizeof *x);
    if (!x) {
        fprintf(stderr, "bench_exact_sum: out of memory\n");
        return 2;
    }
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("bench_exact_sum"), 0, 0);
    for (size_t i = 0; i < nmax; i++) x[i] = 2.0 * drift_stream_uniform(&s) - 1.0;

    printf("exact_sum: doubles uniform [-1,1) (philox seed 1), thread CPU time, %d interleaved rounds\n", rounds);
#ifndef DRIFT_HAVE_XSUM
    printf("xsum: not built (configure with -DDRIFT_XSUM_DIR=<dir with xsum.c>): fast_exact/xsum skipped\n");
#endif
    printf("%9s %11s %12s %12s %12s %12s\n", "n", "naive ns/el", "exact/naive", "(median)", "exact/xsum", "(median)");
    int bad = 0;
    const size_t ns[] = {1000, 10000, 100000, 1000000, 10000000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        size_t n = ns[k];
        long inner = bench_inner(n, 4e6);
        double tn[1000], tf[1000], tx[1000];
        for (int r = 0; r < rounds; r++) {
            tn[r] = timed(naive_sum, x, n, inner);
            tf[r] = timed(fast_sum, x, n, inner);
#ifdef DRIFT_HAVE_XSUM
            tx[r] = timed(xsum_sum, x, n, inner);
#else
            tx[r] = 0;
#endif
        }
        double rf = fast_sum(x, n), rm;
        if (drift_exact_sum_mpfr(&rm, x, n, DRIFT_FP64, DRIFT_RNE) != 0 || memcmp(&rf, &rm, sizeof rf)) bad = 1;
        bench_stat_t sn = bench_stat(tn, rounds), sf = bench_stat(tf, rounds), sx = bench_stat(tx, rounds);
        printf("%9zu %11.2f %12.2f %12.2f", n, 1e9 * sn.min / (double)n, sf.min / sn.min, sf.med / sn.med);
#ifdef DRIFT_HAVE_XSUM
        printf(" %12.2f %12.2f\n", sf.min / sx.min, sf.med / sx.med);
#else
        (void)sx;
        printf(" %12s %12s\n", "-", "-");
#endif
    }
    printf("fast exact == MPFR exact bit for bit at every n: %s\n", bad ? "NO" : "yes");
    free(x);
    return bad;
}
