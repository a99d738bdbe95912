/* argmax_lab.h — the declared output of the planted-pair experiment (argmax_run.h holds the run
 * it writes from): the CSV tables, the Markdown fragment and the summary. */
#ifndef DRIFT_ARGMAX_LAB_H
#define DRIFT_ARGMAX_LAB_H

#include "argmax_run.h"
#include "drift.h"
#include "output.h"

/* Every output file (CSV tables and the .md fragment) and the summary, committed together. 0 or
 * DRIFT_ENOMEM (nothing committed). */
DRIFT_MUST_CHECK int drift_afp_write(const drift_aflab_t *L);

/* ---- the CSV tables (argmax_tables.c) ---- */
enum { AFP_BINS, AFP_FIT, AFP_TIES, AFP_TRIALS, AFP_LAWS, AFP_NCSV };
/* The declarations of the CSV tables into tables[0 .. AFP_NCSV). */
void drift_afp_declare_tables(drift_table_spec_t *tables, const drift_aflab_t *L);
/* Their metadata and rows. */
void drift_afp_write_tables(drift_out_t *o, const drift_aflab_t *L);

#endif
