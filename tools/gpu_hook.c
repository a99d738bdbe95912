/* gpu_hook.c — linked into every program when the CUDA backend is built: registers cuda/'s
 * device description with the environment snapshot before main runs, so that lib/ itself never
 * calls into cuda/ (the layers only look down). */
#include "envinfo.h"

#include <stddef.h>

void drift_cuda_describe(char *buf, size_t size); /* cuda/describe.cu */

__attribute__((constructor)) static void drift_register_gpu_hook(void)
{
    drift_env_set_gpu_hook(drift_cuda_describe);
}
