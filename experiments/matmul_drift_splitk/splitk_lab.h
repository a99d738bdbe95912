/* splitk_lab.h — what one run of the matmul_drift_splitk experiment knows once its products
 * are in: the sweep's shape, distributions and formats, its rows per split factor and its
 * distinct counts per output; and its declared output (two CSV tables, the fragment's takeaway,
 * the stdout table). */
#ifndef DRIFT_SPLITK_LAB_H
#define DRIFT_SPLITK_LAB_H

#include "cli.h"
#include "split_sweep.h"

typedef struct {
    const drift_cli_t *cli;
    const drift_mm_split_sweep_t *W;
    const drift_mm_split_t *srows;    /* nd x nf x DRIFT_MM_SPLIT_MAX */
    const drift_mm_distinct_t *drows; /* nd x nf */
} drift_splitk_lab_t;

/* Every output file, committed together; stdout unless --quiet. */
void drift_splitk_write(const drift_splitk_lab_t *L);

#endif
