/* argmax_mitigations.h — the mitigations experiment's own state, analysis and declared output
 * (argmax_run.h holds the sweep it reads): the mitigations at the headline's point, their
 * wall-clock costs, the CSV tables, the Markdown fragment and the summary. */
#ifndef DRIFT_ARGMAX_MITIGATIONS_H
#define DRIFT_ARGMAX_MITIGATIONS_H

#include "argmax_run.h"
#include "drift.h"
#include "output.h"

typedef struct {
    const char *what;
    double us; /* microseconds per logit */
} drift_afcost_t;

typedef struct {
    const char *name;
    int cfg;       /* kernel index, or -1 */
    long n, flips; /* per mode */
    long changed;  /* (c): trials whose argmax differs between batch sizes; -1 n/a */
    double cost;   /* cost ratio vs the baseline; NAN unknown */
    const char *cost_src;
} drift_mit_t;

/* The mitigations at the headline's point of a sweep: the baseline's sigma and the tie-breaker's
 * thresholds, the measured costs and, per mode, each mitigation's flips. */
typedef struct {
    double base_sigma, eps_rel[2];
    drift_afcost_t cost[6];
    int ncost;
    drift_mit_t rows[2][8]; /* [planted, realistic][mitigation] */
    int n;
} drift_afm_t;

/* Wall-clock cost per logit of each mitigation (not reproducible: reported apart). 0, DRIFT_ENOMEM
 * or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_afm_measure_costs(drift_afm_t *M, const drift_aflab_t *L);
/* The baseline's thresholds, then flip rates, batch changes and cost ratios (needs M->cost). */
void drift_afm_mitigations(drift_afm_t *M, const drift_aflab_t *L);
/* N = ceil(V / shard): the vocabulary one device holds in a vocabulary-parallel LM head. */
size_t drift_afm_sharded_n(const drift_aflab_t *L);
/* Every output file (CSV tables and the .md fragment) and the summary, committed together. */
void drift_afm_write(const drift_afm_t *M, const drift_aflab_t *L);

/* ---- the CSV tables (mitigations_tables.c) ---- */
enum { AFM_MIT, AFM_BATCH, AFM_TIMING, AFM_NCSV };
/* The declarations of the CSV tables into tables[0 .. AFM_NCSV). */
void drift_afm_declare_tables(drift_table_spec_t *tables);
/* Their metadata and rows. */
void drift_afm_write_tables(drift_out_t *o, const drift_afm_t *M, const drift_aflab_t *L);

#endif
