/* matrix_rows.h — test matrices drawn row by row, so that a row does not depend on how many
 * rows are drawn: row 0 of A[:M] is row 0 of A[:1] for every M, which the batch-invariance
 * test needs (the batch grows, row 0 must stay the same input).
 *   DRIFT_ROWS_NORMAL    N(0,1) rounded to fp32, one Philox stream per row:
 *                        (seed, drift_fnv1a32(name), key, row) (philox.h)
 *   DRIFT_ROWS_LINSPACE  linspace(-100, 100, rows_total * cols) in row-major order, as torch
 *                        computes it for doubles (lo + t * ((hi - lo) / (n - 1))): the inputs of
 *                        Thinking Machines' batch_invariant_ops, an ill-conditioned worst case */
#ifndef DRIFT_MATRIX_ROWS_H
#define DRIFT_MATRIX_ROWS_H

#include <stddef.h>
#include <stdint.h>

typedef enum { DRIFT_ROWS_NORMAL = 0, DRIFT_ROWS_LINSPACE } drift_rows_kind_t;

typedef struct {
    drift_rows_kind_t kind;
    uint64_t seed;    /* NORMAL: the run's seed */
    const char *name; /* NORMAL: the stream's name, one per matrix, e.g. "batch_invariance.A" */
    uint32_t key;     /* NORMAL: the stream's third key (the experiment's inner dimension K) */
} drift_rows_src_t;

/* Rows first_row .. first_row + nrows - 1 of a rows_total x cols matrix into x (nrows x cols,
 * row-major). */
void drift_rows_fill(
    double *x, const drift_rows_src_t *src, size_t rows_total, size_t cols, size_t first_row, size_t nrows);

#endif
