/* bench_util.h — what every benchmark shares: --help and --version, the thread's CPU time,
 * and interleaved repetitions reduced to min and median, so that ratios measured in one run
 * stay meaningful on a machine shared with other jobs (wall-clock times would not). */
#ifndef DRIFT_BENCH_UTIL_H
#define DRIFT_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drift.h"

/* --help (or -h) and --version, answered as every program of the lab answers them, before a
 * benchmark reads its own arguments (where "--version" was taken for a round count or a file):
 * usage on stdout, or "NAME (driftlab VERSION)"; exit 0. A word after "--" is never one. */
static inline void bench_std_args(int argc, char **argv, const char *usage)
{
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--version")) printf("%s (driftlab %s)\n", name, DRIFT_VERSION);
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) printf("%s\n", usage);
        else continue;
        exit(fflush(stdout) || ferror(stdout) ? 2 : 0);
    }
}

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
