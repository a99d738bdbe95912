/* bench/exact_dot.c — what does an exact witness cost?
 *
 * On one set of 10^6 fp32-valued pairs (Philox, seed 1), times three dot products:
 *   naive_double  s += a[i] * b[i] in double, left to right (rounds 2n times);
 *   fast_exact    drift_exact_dot: superaccumulator, correctly rounded;
 *   mpfr_exact    drift_exact_dot_mpfr: exact MPFR products + mpfr_sum.
 * Each is the best of 31 repetitions (MPFR: 5) (CLOCK_MONOTONIC). Prints the times and
 *   fast_exact/naive_double = X.Xx   (goal: <= 3x)
 *   mpfr/fast_exact = X.Xx           (goal: >= 50x)
 * and fails (exit 1) if the two exact results differ in a single bit.
 *
 * Usage: bench_exact_dot [N]   (default 1000000) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exact.h"
#include "philox.h"
#ifdef DRIFT_HAVE_CBLAS
#include <cblas.h>
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* noinline and the result printed: the loop is timed as written, once per call. Without
 * -ffast-math (and with -ffp-contract=off) the compiler may neither reorder the sum into
 * vector lanes nor fuse the multiply-add, so this is the plain sequential dot. */
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

__attribute__((noinline)) static double mpfr_dot_exact(const double *a, const double *b, size_t n)
{
    double r;
    if (drift_exact_dot_mpfr(&r, a, b, n, DRIFT_FP64, DRIFT_RNE) != 0) abort();
    return r;
}

#ifdef DRIFT_HAVE_CBLAS
__attribute__((noinline)) static double blas_dot(const double *a, const double *b, size_t n)
{
    return cblas_ddot((int)n, a, 1, b, 1);
}
#endif

typedef double (*dot_fn)(const double *, const double *, size_t);

static double best_of(dot_fn fn, const double *a, const double *b, size_t n, int reps, double *result)
{
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        volatile double v = fn(a, b, n); /* volatile: the call cannot be dropped */
        double t = now() - t0;
        *result = v;
        if (t < best) best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    size_t n = 1000000;
    if (argc > 1) {
        char *end;
        unsigned long long v = strtoull(argv[1], &end, 10);
        if (*end || v == 0) {
            fprintf(stderr, "bench_exact_dot: N must be a positive integer\n");
            return 2;
        }
        n = (size_t)v;
    }
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) {
        fprintf(stderr, "bench_exact_dot: out of memory\n");
        return 2;
    }
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("bench_exact_dot"), 0, 0);
    for (size_t i = 0; i < n; i++) { /* uniform [-1, 1) rounded to fp32 */
        a[i] = (float)(2.0 * drift_stream_uniform(&s) - 1.0);
        b[i] = (float)(2.0 * drift_stream_uniform(&s) - 1.0);
    }

    double r_naive, r_fast, r_mpfr;
    double t_naive = best_of(naive_dot, a, b, n, 31, &r_naive);
    double t_fast = best_of(fast_dot, a, b, n, 31, &r_fast);
    double t_mpfr = best_of(mpfr_dot_exact, a, b, n, 5, &r_mpfr);

    printf("exact_dot: n = %zu fp32-valued pairs (uniform [-1,1), philox seed 1), best of 31/31/5\n", n);
    printf("%-14s %10.3f ms  %-24a %.17g\n", "naive_double", 1e3 * t_naive, r_naive, r_naive);
#ifdef DRIFT_HAVE_CBLAS
    double r_blas;
    double t_blas = best_of(blas_dot, a, b, n, 31, &r_blas);
    printf("%-14s %10.3f ms  %-24a %.17g  (OpenBLAS, reordered: for scale only)\n", "cblas_ddot", 1e3 * t_blas,
           r_blas, r_blas);
#endif
    printf("%-14s %10.3f ms  %-24a %.17g\n", "fast_exact", 1e3 * t_fast, r_fast, r_fast);
    printf("%-14s %10.3f ms  %-24a %.17g\n", "mpfr_exact", 1e3 * t_mpfr, r_mpfr, r_mpfr);
    printf("fast_exact/naive_double = %.1fx\n", t_fast / t_naive);
    printf("mpfr/fast_exact = %.1fx\n", t_mpfr / t_fast);
    int same = memcmp(&r_fast, &r_mpfr, sizeof r_fast) == 0;
    printf("fast exact == MPFR exact bit for bit: %s\n", same ? "yes" : "NO");
    free(a);
    free(b);
    return same ? 0 : 1;
}
