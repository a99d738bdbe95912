/* hidden_trace.h — a model's hidden state after every sub-block of one teacher-forced pass
 * (drift_model_set_trace), and its error against another pass's. */
#ifndef DRIFT_HIDDEN_TRACE_H
#define DRIFT_HIDDEN_TRACE_H

#include <stddef.h>

#include "checkpoint.h"
#include "model.h"

#define DRIFT_TRACE_BLOCKS 4 /* sub-blocks per layer; the final norm is depth 4 L */

/* The trace: every (layer, block) keeps its rows in token order (one row per step). */
typedef struct {
    int L;
    size_t dim, T;
    double *h;     /* (4 L + 1) x T x dim */
    size_t *count; /* rows seen per depth */
} drift_hidden_trace_t;

/* Room for the 4 L + 1 depths of T tokens of width dim: 0, or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_hidden_trace_alloc(drift_hidden_trace_t *t, int L, size_t dim, size_t T);
void drift_hidden_trace_free(drift_hidden_trace_t *t);
/* Scores tok[0..t->T) teacher-forced under nx, tracing every sub-block into t. Dies when the
 * model cannot be made or the pass fails. */
void drift_hidden_trace_run(
    drift_hidden_trace_t *t, const drift_checkpoint_t *ck, const drift_numerics_t *nx, const int *tok);
/* At depth d: the relative error ||a - b|| / ||b|| of each token's row of a against b's, the
 * mean over the tokens (returned) and the largest (*max). */
double drift_hidden_trace_err(double *max, const drift_hidden_trace_t *a, const drift_hidden_trace_t *b, size_t d);

#endif
