/* long_llamacpp_twin.c — drift_llamacpp_step against llama.cpp's whole greedy records
 * (tests/llamacpp_twin.h): every prompt, every recorded step (64), for each build; and one long
 * generation recorded at 4 threads. */
#include "llamacpp_twin.h"

Test(llamacpp_twin, avx2_whole_record_bit_exact, .timeout = 3600)
{
    twin_run(TWIN_RECORD, DRIFT_LLAMACPP_AVX2, NULL, -1, TWIN_MAX_STEPS);
}

Test(llamacpp_twin, avx512_whole_record_bit_exact, .timeout = 3600)
{
    twin_run(TWIN_RECORD512, DRIFT_LLAMACPP_AVX512, NULL, -1, TWIN_MAX_STEPS);
}

/* prompt 0 for 400 steps with llama.cpp at 4 threads: positions past 256 take the split-KV
 * attention path, cut into 4 chunks (the one-thread twin parts from this record at step 235,
 * the first token at position 256) */
Test(llamacpp_twin, avx2_four_threads_400_steps_bit_exact, .timeout = 3600)
{
    twin_run_threads(DRIFT_SOURCE_DIR "/tests/data/llamacpp_smollm2_avx2_threads4_400.csv", DRIFT_LLAMACPP_AVX2, 4,
        NULL, -1, TWIN_MAX_STEPS);
}
