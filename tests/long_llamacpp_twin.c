/* long_llamacpp_twin.c — drift_llamacpp_step against llama.cpp's whole greedy records
 * (tests/llamacpp_twin.h): every prompt, every recorded step (64), for each build. */
#include "llamacpp_twin.h"

Test(llamacpp_twin, avx2_whole_record_bit_exact, .timeout = 3600)
{
    twin_run(TWIN_RECORD, DRIFT_LLAMACPP_AVX2, NULL, -1, TWIN_MAX_STEPS);
}

Test(llamacpp_twin, avx512_whole_record_bit_exact, .timeout = 3600)
{
    twin_run(TWIN_RECORD512, DRIFT_LLAMACPP_AVX512, NULL, -1, TWIN_MAX_STEPS);
}
