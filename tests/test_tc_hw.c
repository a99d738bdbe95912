/* test_tc_hw.c — the tensor-core model against outputs measured on eight real GPUs (V100,
 * A100, A2, Ada, L40S, H100, H200, B200; Khattak & Mikaitis's validation data, see
 * tests/tc_hw/README.md): every 5th sample of every (GPU, input format, output format)
 * configuration, 1000 of each configuration's 5000, must come out bit for bit (tolerance 0:
 * the model is meant to be the hardware's arithmetic, not an approximation of it).
 * tests/long_tc_hw.c runs all 5000. */
#include <criterion/criterion.h>

#include "tc_hw_data.h"

Test(tc_hw, every_fifth_sample_reproduces_bit_for_bit, .timeout = 300)
{
    static tc_hw_count_t cnt[TC_HW_NCFG];
    int n = tc_hw_run(cnt, 5);
    tc_hw_check(cnt, n, 1000);
}
