/* stored_summary.c — the random reals of one format by where the real lies (stored_summary.h). */
#include "stored_summary.h"

#include <math.h>

void drift_stored_summary_add(drift_stored_summary_t *s, const drift_stored_t *c)
{
    double r = c->result, rel = c->rel_err;
    if (!isfinite(r)) {
        s->n_overflow++;
    } else if (c->below_normal && r == 0) {
        s->n_zero++;
    } else if (c->below_normal) {
        s->n_below++;
        s->max_rel_below = fmax(s->max_rel_below, rel);
    } else {
        s->n_normal++;
        s->max_rel_normal = fmax(s->max_rel_normal, rel);
    }
}
