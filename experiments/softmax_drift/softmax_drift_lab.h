/* softmax_drift_lab.h — what one run of the softmax_drift experiment knows once its rows are
 * measured: the variants, the errors aggregated per (N, format, variant), the overflow
 * cliff's measurements; and its declared output (two CSV tables, the fragment's two tables
 * and takeaway, stdout). */
#ifndef DRIFT_SOFTMAX_DRIFT_LAB_H
#define DRIFT_SOFTMAX_DRIFT_LAB_H

#include <stddef.h>

#include "cli.h"
#include "softmax.h"

#define DRIFT_SMX_NVAR 4                /* naive, safe, online, online:B */
#define DRIFT_SMX_CROSSCHECK_MAX_N 8192 /* rows up to this N hold the fast reference against MPFR */

typedef struct { /* one (row, format, variant) */
    double l1_true, l1_round, rel_true, lse_true, lse_round;
    int top1_changed, top1_tied, nan;
} drift_smx_meas_t;

typedef struct { /* aggregated over rows */
    double l1_true_max, l1_round_max, rel_true_max, lse_true_max, lse_round_max;
    long top1_changed, top1_tied, nan_rows;
} drift_smx_agg_t;

typedef struct {
    const drift_cli_t *cli;
    size_t R, NC; /* rows per N; logits of a cliff row */
    double sigma;
    long block;      /* online:B's B */
    long xrows;      /* rows checked against MPFR */
    double xdev_max; /* their largest relative difference */
    int nf, nN, np;  /* formats, vocabulary sizes, planted peaks */
    const long *Ns;
    const double *peaks;
    const char (*vname)[DRIFT_SOFTMAX_SPEC_MAX];
    const drift_smx_agg_t *agg; /* [(ni * nf + f) * NVAR + v] */
    const drift_smx_meas_t *cm; /* cliff: [(f * 2 + v) * np + k], v naive or safe */
    const long *cnan;           /* cliff: NaN probabilities, same index */
    const double *clse;         /* cliff: computed log-sum-exp, same index */
    const double *clse_ref;     /* cliff: exact log-sum-exp, [f * np + k] */
} drift_softmax_lab_t;

/* Every output file, committed together; stdout unless --quiet. */
void drift_softmax_write(const drift_softmax_lab_t *L);

#endif
