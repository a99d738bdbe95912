/* layer_drift_lab.h — what one run of the layer_drift experiment knows once every model has
 * run under every configuration used: per (model, configuration) the error after the first and
 * the last layer, the growth and its fits; and the words of the run's takeaway and summary. */
#ifndef DRIFT_LAYER_DRIFT_LAB_H
#define DRIFT_LAYER_DRIFT_LAB_H

#include "layer_configs.h"
#include "loglog.h"
#include "output.h"

typedef struct {
    const int *use; /* [DRIFT_NCONFS]: the configurations run */
    int nuse;
    const char *model[2]; /* the checkpoint's model, then the synthetic one */
    int layers[2];
    const char *brief[2]; /* each model's sample, for the takeaway */
    double growth[2][DRIFT_NCONFS],
        last[2][DRIFT_NCONFS];       /* mean error after the last layer / after the first; after the last */
    double first_u[2][DRIFT_NCONFS]; /* after the first layer, in units of the format's unit roundoff */
    drift_logfit_t fexp[2][DRIFT_NCONFS],
        fpow[2][DRIFT_NCONFS]; /* log rel_err against the layer, and against its log */
} drift_layer_lab_t;

/* The fragment's takeaway and the run's summary, every number from L. */
void drift_layer_drift_write(drift_out_t *out, const drift_layer_lab_t *L);

#endif
