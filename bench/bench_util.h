/* bench_util.h — what every benchmark shares: the thread's CPU time, and interleaved
 * repetitions reduced to min and median, so that ratios measured in one run stay
 * meaningful on a machine shared with other jobs (wall-clock times would not). */
#ifndef DRIFT_BENCH_UTIL_H
#define DRIFT_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Min and median of n samples (the array is sorted in place). */
typedef struct {
    double min, med;
} bench_stat_t;

static inline bench_stat_t bench_stat(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    bench_stat_t s = {t[0], n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2])};
    return s;
}

/* Per-sample ratios a[i]/b[i] of interleaved runs: the median of these is robust to a
 * neighbour's load that hits both members of a pair alike. */
static inline bench_stat_t bench_ratio(const double *a, const double *b, int n)
{
    double r[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) r[i] = a[i] / b[i];
    bench_stat_t s = bench_stat(r, n);
    return s;
}

/* Repetitions so that each timed call does roughly `work` element operations in total
 * per sample (small n is repeated inside the sample to rise above the clock's grain). */
static inline long bench_inner(size_t n, double work)
{
    double k = work / (double)(n ? n : 1);
    return k < 1 ? 1 : (long)k;
}

#endif
