/* formats_relerr_lab.h — what one run of formats_relerr knows once it has measured: the random
 * reals, each one's error in every format, and the per-format summary; and its declared output
 * (two CSV tables, the Markdown fragment's takeaway, the stdout table). */
#ifndef DRIFT_FORMATS_RELERR_LAB_H
#define DRIFT_FORMATS_RELERR_LAB_H

#include "cli.h"
#include "stored_summary.h"
#include "witness.h"

typedef struct {
    const drift_cli_t *cli;
    const drift_format_t *F;
    int nf;
    long nrand; /* random reals x = rhi + rlo, exponents in [rand_emin, rand_emax) */
    int rand_emin, rand_emax;
    const double *rhi, *rlo;
    const drift_stored_t *rc;         /* [i * nf + j]: real i in format j */
    const drift_stored_summary_t *rs; /* per format */
} drift_formats_relerr_lab_t;

/* Every output file, committed together; stdout unless --quiet. */
void drift_formats_relerr_write(const drift_formats_relerr_lab_t *L);

#endif
