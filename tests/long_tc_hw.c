/* long_tc_hw.c — all 5000 measured samples of every (GPU, input format, output format)
 * configuration through the tensor-core model, bit for bit (tests/test_tc_hw.c runs every
 * 5th; the data ship with the repository, tests/tc_hw/, so this runs on a clean clone). */
#include <criterion/criterion.h>

#include "tc_hw_data.h"

Test(tc_hw_long, every_sample_reproduces_bit_for_bit, .timeout = 1800)
{
    static tc_hw_count_t cnt[TC_HW_NCFG];
    int n = tc_hw_run(cnt, 1);
    tc_hw_check(cnt, n, 5000);
}
