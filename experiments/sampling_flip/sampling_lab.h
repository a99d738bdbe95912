/* sampling_lab.h — what one run of the sampling_flip experiment knows once its tokens are
 * drawn: per input format the configurations (exact logits first), the tokens every sampler
 * drew at every temperature from each configuration's logits, the rows with a tie at the top,
 * and the planted ties; and its declared output (three CSV tables, the fragment's tables and
 * takeaway, the stdout table). */
#ifndef DRIFT_SAMPLING_LAB_H
#define DRIFT_SAMPLING_LAB_H

#include "drift.h"
#include "cli.h"
#include "sampling_sweep.h"
#include "tie_demo.h"

#define DRIFT_SF_MAXF 4  /* input formats */
#define DRIFT_SF_MAXC 8  /* configurations per format */
#define DRIFT_SF_MAXT 16 /* temperatures of either sweep */
#define DRIFT_SF_MAXE 8  /* engines' samplers */

typedef struct {
    const drift_cli_t *cli;
    long K, V, rows, draws, ties;
    const drift_sf_sweep_t *SW; /* temperatures, cuts, engines */
    const char *const *engine_name;
    int nF;
    const int *nC;
    const char *const (*cname)[DRIFT_SF_MAXC]; /* [format][configuration]; configuration 0: exact */
    /* tokens: tok + (f * MAXC + c) * nt * DRIFT_NCUTS * steps, laid out as sampling_sweep.h's tok;
     * tok2 likewise with net * ne per configuration */
    const size_t *tok, *tok2;
    const long (*top_ties)[DRIFT_SF_MAXC];
    double softmax_check;
    const drift_tie_demo_t *TI; /* ties of them, inputs in ft */
    drift_format_t ft;
} drift_sf_lab_t;

/* Every output file, committed together; stdout unless --quiet. 0, or DRIFT_ENOMEM with no file written. */
DRIFT_MUST_CHECK int drift_sampling_write(const drift_sf_lab_t *L);

#endif
