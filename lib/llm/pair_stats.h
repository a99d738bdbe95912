/* pair_stats.h — bookkeeping for experiments that compare n configurations pairwise and each
 * against a reference (gpu_generations: GPU generations and the exact result): pair indices,
 * counts of differing outcomes with their rates as text, and summaries of the distances
 * between two configurations' outputs. */
#ifndef DRIFT_PAIR_STATS_H
#define DRIFT_PAIR_STATS_H

#include <stddef.h>
#include <stdint.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pairs (a, b) with 0 <= a < b <= n (b == n: the reference): n (n + 1) / 2 of them, indexed
 * in order (0,1), (0,2), .., (0,n), (1,2), .. */
static inline int drift_pair_count(int n) { return (n + 1) * n / 2; }
static inline int drift_pair_index(int a, int b, int n) { return a * (2 * n + 1 - a) / 2 + b - a - 1; }

/* k of n cases differ. */
typedef struct {
    long n, k;
} drift_count_t;

/* "k/n = r% [lo%, hi%]" with the Wilson 95% interval (n = 0: "0/0"). The length written
 * (as snprintf). */
int drift_rate_text(char *buf, size_t size, long k, long n);
/* "k0/n0, k1/n1, ..." over c[0], c[stride], ... (count values); their sum in *all (may be NULL).
 * The length written. */
int drift_counts_text(char *buf, size_t size, const drift_count_t *c, int count, size_t stride, drift_count_t *all);

/* Distances between two configurations' outputs: u in output ulps (steps), d in any unit. */
typedef struct {
    size_t n, same;           /* values, and values with u == 0 */
    int64_t median, p99, max; /* of u: u[n/2], u[n-1-n/100], u[n-1] after sorting */
    double d_p99, d_max;      /* of d, the same ranks */
} drift_distance_summary_t;

/* Sorts u and d (n values each, n >= 1; d may be NULL: d_p99 = d_max = NAN) in place and
 * summarizes them. 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_distance_summary(drift_distance_summary_t *s, int64_t *u, double *d, size_t n);
/* The same on copies: u and d untouched. 0 or DRIFT_EINVAL / DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_distance_summary_of(
    drift_distance_summary_t *s, const int64_t *u, const double *d, size_t n);

#ifdef __cplusplus
}
#endif

#endif
