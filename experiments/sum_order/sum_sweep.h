/* sum_sweep.h — the error-vs-n sweep: for every (distribution, n = 2^log2_min .. 2^log2_max,
 * trial) one vector from its own Philox stream, rounded to each setting's input format, summed
 * in every order with every setting's accumulator, each against the exact sum of the same
 * rounded inputs (sum_error.h). One task per vector, so the data does not depend on the thread
 * count (law 4). */
#ifndef DRIFT_SUM_SWEEP_H
#define DRIFT_SUM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "order.h"
#include "sum_error.h"
#include "sum_setting.h"

typedef struct {
    uint64_t seed;
    int log2_min, log2_max; /* n = 2^log2_min .. 2^log2_max */
    long trials;            /* vectors per (distribution, n) */
    const drift_sum_setting_t *S;
    int ns;
    const drift_order_t *O;
    int no;
    void (*progress)(void *ctx, size_t done, size_t total); /* may be NULL; called from one thread */
    void *ctx;
} drift_sum_sweep_t;

typedef struct {
    drift_sum_err_t m;
    double sum_abs; /* sum |x_i|, rounded up */
    double exact;   /* the exact sum rounded to double */
} drift_sum_cell_t;

/* How many cells drift_sum_sweep_run fills: DRIFT_NDISTS x nn x trials x ns x no. */
size_t drift_sum_sweep_ncells(const drift_sum_sweep_t *w);
/* Index of the cell (distribution d, li = log2 n - log2_min, trial, setting s, order o). */
size_t drift_sum_sweep_at(const drift_sum_sweep_t *w, int d, int li, long tr, int s, int o);
/* The vectors come from the stream (seed, "sum_order", 64 d + log2 n, trial). 0, DRIFT_ENOMEM,
 * or the first error of drift_sum. */
DRIFT_MUST_CHECK int drift_sum_sweep_run(drift_sum_cell_t *cells, const drift_sum_sweep_t *w);

#endif
