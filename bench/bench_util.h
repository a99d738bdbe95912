/* bench_util.h — what every benchmark shares: --help and --version, the thread's CPU time,
 * and interleaved repetitions reduced to min and median, so that ratios measured in one run
 * stay meaningful on a machine shared with other jobs (wall-clock times would not). */
#ifndef DRIFT_BENCH_UTIL_H
#define DRIFT_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "drift.h"

/* The usage line bench_args prints for --help (a slot, so that no file-scope static is left
 * unused by a benchmark that includes this header). */
static inline const char **bench_usage_slot(void)
{
    static const char *usage;
    return &usage;
}
static inline void bench_usage(FILE *fp) { fprintf(fp, "%s\n", *bench_usage_slot()); }

/* A benchmark's arguments by the lab's one syntax (cli.h drift_args_parse): --name VALUE or
 * --name=VALUE into opts' strings, other words into pos (at most maxpos); --help prints usage,
 * --version "bench_x (driftlab VERSION)", both exit 0; an unknown option (the nearest named), a
 * missing value, an option given twice or a word too many: one line, exit 2. Returns the
 * number of words. */
static inline int bench_args(
    const drift_arg_opt_t *opts, int nopts, const char **pos, int maxpos, int argc, char **argv, const char *usage)
{
    const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    drift_set_program(name);
    *bench_usage_slot() = usage;
    return drift_args_parse(opts, nopts, pos, maxpos, argc, argv, bench_usage);
}

/* what's value as an integer in lo..hi (drift_parse_long: the whole word), or one line, exit 2
 * ("5x" and "--reps" were read as 5 and 0 by atoi). */
static inline long bench_long(const char *what, const char *value, long lo, long hi)
{
    long v;
    if (drift_parse_long(&v, value) || v < lo || v > hi)
        drift_die("%s: expected an integer in %ld..%ld, found '%s'", what, lo, hi, value);
    return v;
}

/* what's comma list as integers in lo..hi, each as bench_long reads it, no empty item, at most
 * max (more were dropped without a word); returns the count. */
static inline int bench_long_list(const char *what, const char *value, long *out, int max, long lo, long hi)
{
    int n = 0;
    for (const char *p = value;;) {
        size_t len = strcspn(p, ",");
        char item[32];
        if (len == 0)
            drift_die(
                "%s: an empty item in '%s' (accepted: comma-separated integers in %ld..%ld)", what, value, lo, hi);
        if (n == max) drift_die("%s: more than %d values in '%s'", what, max, value);
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
        out[n++] = len < sizeof item ? bench_long(what, item, lo, hi) : bench_long(what, p, lo, hi);
        if (!p[len]) return n;
        p += len + 1;
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
