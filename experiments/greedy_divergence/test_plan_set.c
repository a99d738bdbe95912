/* test_plan_set.c — plan numbering (plan_set.h). Expected numbers are written by hand from
 * the rule: first appearance order, equal plans equal numbers, length part of the plan. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "drift.h"
#include "plan_set.h"

Test(plan_set, equal_plans_share_a_number_in_first_seen_order)
{
    drift_plan_set_t *s = malloc(sizeof *s);
    cr_assert(s);
    drift_plan_set_clear(s);
    const long a[] = {4, 1, 2}, b[] = {4, 1, 3}, a2[] = {4, 1, 2};
    cr_expect_eq(drift_plan_number(s, a, 3), 0);
    cr_expect_eq(drift_plan_number(s, b, 3), 1);
    cr_expect_eq(drift_plan_number(s, a2, 3), 0);
    cr_expect_eq(drift_plan_number(s, a, 2), 2, "a prefix of a plan is another plan");
    cr_expect_eq(drift_plan_number(s, NULL, 0), 3, "the empty plan is a plan");
    drift_plan_set_clear(s);
    cr_expect_eq(drift_plan_number(s, b, 3), 0, "numbers start again after clear");
    free(s);
}

Test(plan_set, refuses_long_plans_and_a_full_set)
{
    drift_plan_set_t *s = malloc(sizeof *s);
    cr_assert(s);
    drift_plan_set_clear(s);
    long p[DRIFT_PLAN_LEN_MAX + 1] = {0};
    cr_expect_eq(drift_plan_number(s, p, DRIFT_PLAN_LEN_MAX + 1), DRIFT_EINVAL);
    cr_expect_eq(drift_plan_number(s, p, -1), DRIFT_EINVAL);
    for (long i = 0; i < DRIFT_PLAN_SET_MAX; i++) {
        p[0] = i;
        cr_assert_eq(drift_plan_number(s, p, 1), (int)i);
    }
    p[0] = DRIFT_PLAN_SET_MAX;
    cr_expect_eq(drift_plan_number(s, p, 1), DRIFT_ERANGE, "a new plan in a full set");
    p[0] = 7;
    cr_expect_eq(drift_plan_number(s, p, 1), 7, "a known plan is still found in a full set");
    free(s);
}
