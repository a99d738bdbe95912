/* sum_order_lab.h — what one run of the sum_order experiment knows once its sums are in: the
 * options, the settings and orders, and the error-vs-n sweep with its summary against the
 * bounds; and its declared output (the two CSV tables, the Markdown fragment with its table
 * and takeaway, the stdout table). */
#ifndef DRIFT_SUM_ORDER_LAB_H
#define DRIFT_SUM_ORDER_LAB_H

#include "cli.h"
#include "order.h"
#include "sum_bounds.h"

typedef struct {
    const drift_cli_t *cli;
    long trials;
    int log2_min, log2_max, slope_from; /* n = 2^log2_min .. 2^log2_max; slopes fitted from 2^slope_from */
    const drift_order_t *O;
    const char *const *ospec; /* the orders as printed */
    int no;
    const drift_sum_setting_t *S; /* the sweep's settings */
    int ns;
    double lambda, umax; /* the probabilistic bound's lambda, for the largest unit roundoff */
    /* the sweep, its summary (sum_bounds.h) and tally */
    const drift_sum_sweep_t *W;
    const drift_sum_cell_t *cells;
    const drift_sum_summary_t *sm;
    const double *slope;
    drift_sum_tally_t tally;
} drift_sum_order_lab_t;

/* Every output file (CSV tables and the .md fragment), committed together; stdout unless --quiet. */
void drift_sum_order_write(const drift_sum_order_lab_t *L);

#endif
