/* greedy_step.c — one forward step and its argmax (greedy_step.h). */
#include "greedy_step.h"

#include "cli.h"
#include "metrics.h"

int drift_greedy_step(drift_model_t *m, double *lg, int pos, int ntok, const int *tok, size_t V)
{
    drift_seq_step_t s = {0, pos, ntok, tok};
    if (drift_model_step(m, lg, &s, 1)) drift_die("forward step failed");
    drift_top2_t t;
    drift_top2(&t, lg, V);
    return (int)t.top1;
}
