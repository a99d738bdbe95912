/* test_dispatch_order.c — the dispatcher's answers about an order (dispatch_order.h), from the
 * hardware's documented tensor-core formats (Volta: fp16 inputs only; fp32 or fp16
 * accumulation everywhere) and small dot products computed by hand. */
#include <criterion/criterion.h>
#include <string.h>

#include "dispatch_order.h"
#include "drift.h"

static drift_order_t order(const char *spec)
{
    drift_order_t o;
    cr_assert_eq(drift_order_parse(&o, spec), 0, "%s", spec);
    return o;
}

Test(dispatch_order, sums_take_every_order_but_tensor_cores)
{
    const char *const ok[] = {
        "seq", "rev", "pairwise", "blocked:64", "splitk:8", "warp:32", "kahan", "neumaier", "random:3"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        drift_order_t o = order(ok[i]);
        cr_assert_eq(drift_order_sum_check(&o, "a sum", NULL, 0), 0, "%s", ok[i]);
    }
    drift_order_t tc = order("tc:h100");
    char why[256] = "";
    cr_assert_eq(drift_order_sum_check(&tc, "a sum of exponentials", why, sizeof why), DRIFT_EUNSUPPORTED);
    cr_assert_str_eq(why,
        "order 'tc:h100' is a dot-product model; a sum of exponentials takes seq, rev, pairwise, blocked:B, "
        "splitk:S, warp:W, kahan, neumaier or random:SEED");
    cr_assert_eq(drift_order_sum_check(&tc, NULL, NULL, 0), DRIFT_EUNSUPPORTED); /* no buffer: the code alone */
}

Test(dispatch_order, dot_products_under_tensor_cores)
{
    drift_order_t v100 = order("tc:v100"), h100 = order("tc:h100"), seq = order("seq");
    char why[256] = "";
    cr_assert_eq(drift_order_dot_check(&v100, DRIFT_BF16, DRIFT_FP32, why, sizeof why), DRIFT_EUNSUPPORTED);
    cr_assert_str_eq(why, "order tc:v100 has no tensor-core path for input bf16");
    cr_assert_eq(drift_order_dot_check(&h100, DRIFT_BF16, DRIFT_FP64, why, sizeof why), DRIFT_EUNSUPPORTED);
    cr_assert_str_eq(why, "order tc:h100 accumulates in fp32 or fp16, not fp64");
    cr_assert_eq(drift_order_dot_check(&h100, DRIFT_BF16, DRIFT_FP32, why, sizeof why), 0);
    cr_assert_eq(drift_order_dot_check(&v100, DRIFT_FP16, DRIFT_FP16, why, sizeof why), 0);
    cr_assert_eq(drift_order_dot_check(&seq, DRIFT_FP64, DRIFT_FP64, why, sizeof why), 0);
}

Test(dispatch_order, tensor_core_architecture)
{
    drift_order_t b200 = order("tc:b200"), seq = order("seq");
    drift_tc_arch_t a = DRIFT_TC_V100;
    cr_assert_eq(drift_order_tc_arch(&a, &b200), 1);
    cr_assert_eq(a, DRIFT_TC_B200);
    a = DRIFT_TC_A100;
    cr_assert_eq(drift_order_tc_arch(&a, &seq), 0);
    cr_assert_eq(a, DRIFT_TC_A100, "untouched when the order is no tensor-core order");
}

/* 1 + (1 2 3 4) . (5 6 7 8) = 1 + 70 = 71: small integers, exact in bf16 and fp32 under every
 * order and on the tensor-core model. */
Test(dispatch_order, dot_by_hand)
{
    const double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c = 1;
    const drift_acc_t acc = {DRIFT_FP32, DRIFT_RNE, 1};
    const char *const specs[] = {"seq", "pairwise", "tc:h100", "tc:a100"};
    for (int i = 0; i < 4; i++) {
        drift_order_t o = order(specs[i]);
        double y = 0;
        cr_assert_eq(drift_order_dot(&y, a, b, 4, &c, &o, DRIFT_BF16, &acc), 0, "%s", specs[i]);
        cr_assert_eq(y, 71, "%s: %g", specs[i], y);
    }
}
