/* greedy_step.h — one forward step of a decoding model and its greedy answer: the target's
 * plain and verify rows and the draft's rows of the speculative experiment all take it. */
#ifndef DRIFT_GREEDY_STEP_H
#define DRIFT_GREEDY_STEP_H

#include <stddef.h>

#include "model.h"

/* One step of ntok tokens at pos (sequence 0), logits into lg (V values); the argmax after
 * the last token (the lowest index among equals). Dies when the step fails. */
int drift_greedy_step(drift_model_t *m, double *lg, int pos, int ntok, const int *tok, size_t V);

#endif
