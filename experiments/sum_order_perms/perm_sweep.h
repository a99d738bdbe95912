/* perm_sweep.h — one vector per (distribution, setting) summed seq in many random orders, each
 * result against the exact sum of the same rounded inputs (sum_error.h), and the distinct
 * results that gives. One task per vector, so the data does not depend on the thread count
 * (law 4). */
#ifndef DRIFT_PERM_SWEEP_H
#define DRIFT_PERM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "distinct.h"
#include "drift.h"
#include "exact.h"
#include "sum_setting.h"

typedef struct {
    drift_xacc_t x;         /* the exact sum */
    double exact, cr, ulp;  /* rounded to double; rounded once to the accumulator; its spacing there */
    drift_distinct_t *bins; /* the distinct results, ascending (free() them) */
    int nbins;
    long crcount; /* orders that gave the correctly rounded sum */
} drift_sum_perm_t;

/* p[d * ns + s]: one vector of n values from the stream (seed, "sum_order.perms", d, 0) per
 * distribution, rounded to setting s's inputs, summed seq in the orders random:SEED with
 * SEED = seed * 2^32 + r, r = 0 .. perms-1. 0, DRIFT_ENOMEM, or the first error of drift_sum. */
DRIFT_MUST_CHECK int drift_sum_perms_run(
    drift_sum_perm_t *p, uint64_t seed, const drift_sum_setting_t *S, int ns, size_t n, long perms);

#endif
