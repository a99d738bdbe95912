/* argmax_realistic.h — the realistic-head experiment's own analysis and declared output
 * (argmax_run.h holds the run it reads): the two references, the CSV tables, the Markdown
 * fragment and the summary. */
#ifndef DRIFT_ARGMAX_REALISTIC_H
#define DRIFT_ARGMAX_REALISTIC_H

#include "argmax_run.h"
#include "drift.h"
#include "output.h"

/* Realistic rows against both references (exact of the rounded inputs, exact of the unrounded
 * fp32 inputs) into L's cells. */
void drift_afr_two_references(drift_aflab_t *L);
/* Every output file (CSV tables and the .md fragment) and the summary, committed together. 0 or
 * DRIFT_ENOMEM (nothing committed). */
DRIFT_MUST_CHECK int drift_afr_write(const drift_aflab_t *L);

/* ---- the CSV tables (realistic_tables.c) ---- */
enum { AFR_REAL, AFR_GAPS, AFR_BELOW, AFR_REFS, AFR_NCSV };
/* The declarations of the CSV tables into tables[0 .. AFR_NCSV). */
void drift_afr_declare_tables(drift_table_spec_t *tables);
/* Their metadata and rows. */
void drift_afr_write_tables(drift_out_t *o, const drift_aflab_t *L);

#endif
