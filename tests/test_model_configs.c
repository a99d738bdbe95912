/* test_model_configs.c — the lab's four model numerics, against their definitions: fp32 is
 * fp32 everywhere; bf16 and fp16 round the inputs and the stored results of every matmul to the
 * format, with fp32 accumulation, and keep fp32 weights; LayerCast (Yuan et al. 2025) stores
 * the weights in bf16 and computes in fp32. */
#include <criterion/criterion.h>

#include "drift.h"
#include "model_configs.h"
#include "order.h"

Test(model_configs, each_config_is_its_definition)
{
    static const struct {
        drift_format_t in, out, weights;
        int tc;
    } WANT[DRIFT_NCONFS] = {
        [DRIFT_CONF_FP32] = {DRIFT_FP32, DRIFT_FP32, DRIFT_FP32, 0},
        [DRIFT_CONF_BF16] = {DRIFT_BF16, DRIFT_BF16, DRIFT_FP32, 1},
        [DRIFT_CONF_FP16] = {DRIFT_FP16, DRIFT_FP16, DRIFT_FP32, 1},
        [DRIFT_CONF_LAYERCAST] = {DRIFT_FP32, DRIFT_FP32, DRIFT_BF16, 0},
    };
    for (int c = 0; c < DRIFT_NCONFS; c++) {
        drift_numerics_t nx;
        cr_assert_eq(drift_model_config_numerics(&nx, c), 0, "%s", drift_model_configs[c].name);
        cr_expect_eq(nx.weights, WANT[c].weights, "%s weights", drift_model_configs[c].name);
        for (int op = 0; op < DRIFT_NOPS; op++) {
            cr_expect_eq(nx.mm[op].in, WANT[c].in, "%s op %d in", drift_model_configs[c].name, op);
            cr_expect_eq(nx.mm[op].out, WANT[c].out, "%s op %d out", drift_model_configs[c].name, op);
            cr_expect_eq(
                nx.mm[op].acc.acc, DRIFT_FP32, "%s op %d accumulates in fp32", drift_model_configs[c].name, op);
            cr_expect_eq(drift_order_is_tc(&nx.mm[op].order), WANT[c].tc, "%s op %d", drift_model_configs[c].name, op);
        }
        cr_expect_eq(drift_model_configs[c].tc, WANT[c].tc);
    }
}

Test(model_configs, out_of_range_is_refused)
{
    drift_numerics_t nx;
    cr_expect_eq(drift_model_config_numerics(&nx, -1), DRIFT_EINVAL);
    cr_expect_eq(drift_model_config_numerics(&nx, DRIFT_NCONFS), DRIFT_EINVAL);
}
