/* test_llamacpp_twin.c — drift_llamacpp_step against llama.cpp's own greedy record, bit for bit
 * (tests/llamacpp_twin.h): two prompts of the record, 16 steps each. Prompt 1 is a short prompt
 * (flash attention's one_chunk path for its 13-token chunk); prompt 9 has 118 tokens, so its
 * prompt chunk takes the tiled path. Skipped when the model or the record is absent. The full
 * record (every prompt, 64 steps) is long_llamacpp_twin.c. */
#include "llamacpp_twin.h"

Test(llamacpp_twin, two_prompts_sixteen_steps_bit_exact, .timeout = 300)
{
    const int prompts[] = {1, 9};
    twin_run(prompts, 2, 16);
}
