/* formats_lab.h — what one run of the formats experiment knows once it has measured: the values
 * (teaching values and the user's) with their witnesses and what each format stores, and the
 * formats' constants and spacing; and its declared output (three CSV tables, the Markdown
 * fragment's tables and takeaway, the stdout tables). */
#ifndef DRIFT_FORMATS_LAB_H
#define DRIFT_FORMATS_LAB_H

#include "cli.h"
#include "format_probe.h"
#include "witness.h"

typedef struct {
    char label[64];
    int sum;            /* 0: the real number rounded once; 1: a + b computed in the format */
    mpfr_t a, b, exact; /* a, b: the operands of a sum; exact: the witness */
    const char *lesson; /* one line for stdout */
} drift_formats_value_t;

typedef struct {
    const drift_cli_t *cli;
    const drift_format_t *F;
    int nf;
    const drift_formats_value_t *vals;
    int nv;
    const drift_stored_t *cells; /* [i * nf + j]: value i in format j */
    const drift_format_consts_t *consts;
    drift_binade_t *const *steps; /* per format, nsteps[j] binades */
    const int *nsteps;
} drift_formats_lab_t;

/* Every output file, committed together; stdout unless --quiet. */
void drift_formats_write(const drift_formats_lab_t *L);

#endif
