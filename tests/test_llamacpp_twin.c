/* test_llamacpp_twin.c — drift_llamacpp_step against llama.cpp's own greedy records, bit for bit
 * (tests/llamacpp_twin.h): two prompts of each record, 16 steps each. Prompt 1 is a short prompt
 * (flash attention's one_chunk path for its 13-token chunk); prompt 9 has 118 tokens, so its
 * prompt chunk takes the tiled path. Skipped when the model or a record is absent. The whole
 * records (every prompt, 64 steps) are long_llamacpp_twin.c. */
#include "llamacpp_twin.h"

static const int two_prompts[] = {1, 9};

Test(llamacpp_twin, avx2_two_prompts_sixteen_steps_bit_exact, .timeout = 300)
{
    twin_run(TWIN_RECORD, DRIFT_LLAMACPP_AVX2, two_prompts, 2, 16);
}

Test(llamacpp_twin, avx512_two_prompts_sixteen_steps_bit_exact, .timeout = 300)
{
    twin_run(TWIN_RECORD512, DRIFT_LLAMACPP_AVX512, two_prompts, 2, 16);
}
