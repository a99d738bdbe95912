/* long_llamacpp_twin.c — drift_llamacpp_step against llama.cpp's whole greedy record
 * (tests/llamacpp_twin.h): every prompt, every recorded step (64). */
#include "llamacpp_twin.h"

Test(llamacpp_twin, whole_record_bit_exact, .timeout = 3600)
{
    int prompts[TWIN_MAX_PROMPTS];
    static twin_prompt_t rec[TWIN_MAX_PROMPTS];
    const int n = twin_read_record(rec, TWIN_MAX_PROMPTS);
    for (int i = 0; i < n; i++) {
        prompts[i] = i;
    }
    twin_run(prompts, n > 0 ? n : 0, TWIN_MAX_STEPS);
}
