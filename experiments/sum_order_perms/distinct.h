/* distinct.h — the distinct values of a list of doubles, ascending, each with its count: how
 * many different results one computation gave over many runs (orders, seeds). */
#ifndef DRIFT_DISTINCT_H
#define DRIFT_DISTINCT_H

typedef struct {
    double v;
    long count;
} drift_distinct_t;

/* Fills bins (room for n) with the distinct values of x[0..n) in ascending order (compared
 * with ==: -0 and +0 are one value, each NaN its own) and returns how many there are. An
 * insertion into a sorted list: fast when the distinct values are few. */
int drift_distinct(drift_distinct_t *bins, const double *x, long n);

#endif
