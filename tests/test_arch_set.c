/* test_arch_set.c — the GPU generations an experiment compares (arch_set.h): the --archs list
 * (each name once, at least two, at most max) and the LM-head recipe of a generation, which
 * V100 lacks for bf16. */
#include <criterion/criterion.h>

#include "arch_set.h"
#include "drift.h"
#include "tc_model.h"

Test(arch_set, arch_set_and_head_recipe)
{
    drift_tc_arch_t a[8];
    int n;
    char err[256];
    cr_assert_eq(drift_arch_set_parse(a, &n, 8, "v100,h100,mi300x", err, sizeof err), 0);
    cr_assert(n == 3 && a[0] == DRIFT_TC_V100 && a[1] == DRIFT_TC_H100 && a[2] == DRIFT_TC_MI300X);
    const char *bad[] = {"h100", "h100,x999", "a100,a100", "", "a100,,"};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(drift_arch_set_parse(a, &n, 8, bad[i], err, sizeof err), DRIFT_EINVAL, "%s", bad[i]);
    cr_assert_eq(drift_arch_set_parse(a, &n, 2, "v100,a100,h100", err, sizeof err), DRIFT_EINVAL);
    drift_recipe_t rc;
    cr_assert_eq(drift_arch_head_recipe(&rc, DRIFT_BF16, DRIFT_TC_V100), DRIFT_EUNSUPPORTED);
    cr_assert_eq(drift_arch_head_recipe(&rc, DRIFT_BF16, DRIFT_TC_A100), 0);
}
