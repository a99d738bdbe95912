/* plan_set.h — numbers for kernel plans (the choice lists of drift_model_plan): equal plans
 * get equal numbers, so two decoding steps' plans compare as two ints and a request's plan
 * sequence sorts as an int array (greedy_divergence shares decoded prefixes that way). */
#ifndef DRIFT_PLAN_SET_H
#define DRIFT_PLAN_SET_H


#include "drift.h"
#define DRIFT_PLAN_LEN_MAX 96   /* values in one plan */
#define DRIFT_PLAN_SET_MAX 4096 /* distinct plans one set numbers */

typedef struct {
    long plans[DRIFT_PLAN_SET_MAX][DRIFT_PLAN_LEN_MAX];
    int len[DRIFT_PLAN_SET_MAX], n;
} drift_plan_set_t;

/* Empties s (numbers start again at 0). */
void drift_plan_set_clear(drift_plan_set_t *s);
/* The number of plan p[0..n) in s: the number of an equal plan given before, else the next
 * number (0, 1, ...). DRIFT_EINVAL when n is outside 0..DRIFT_PLAN_LEN_MAX, DRIFT_ERANGE
 * when s already holds DRIFT_PLAN_SET_MAX plans and p is new. */
DRIFT_MUST_CHECK int drift_plan_number(drift_plan_set_t *s, const long *p, int n);

#endif
