/* plan_set.c — numbers for kernel plans (plan_set.h): a linear search, since a run sees at
 * most a few hundred distinct plans and looks each up once per decoding step. */
#include "plan_set.h"

#include <string.h>

#include "drift.h"

void drift_plan_set_clear(drift_plan_set_t *s) { s->n = 0; }

int drift_plan_number(drift_plan_set_t *s, const long *p, int n)
{
    if (n < 0 || n > DRIFT_PLAN_LEN_MAX) return DRIFT_EINVAL;
    for (int i = 0; i < s->n; i++)
        if (s->len[i] == n && (n == 0 || !memcmp(s->plans[i], p, (size_t)n * sizeof(long))))
            return i; /* p may be NULL when n = 0 */
    if (s->n >= DRIFT_PLAN_SET_MAX) return DRIFT_ERANGE;
    if (n) memcpy(s->plans[s->n], p, (size_t)n * sizeof(long));
    s->len[s->n] = n;
    return s->n++;
}
