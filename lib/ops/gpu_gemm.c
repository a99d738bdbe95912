/* gpu_gemm.c — which GPU and whether it runs an input format on its tensor cores (gpu_gemm.h);
 * the GEMM itself, which branches on that, is the dispatcher's (dispatch_gpu_gemm.c). */
#include "gpu_gemm.h"
#include "cards.h"
#include "drift.h"

#include <string.h>

int drift_gpu_arch(drift_tc_arch_t *arch, const char *device)
{
    drift_card_t c;
    if (device && drift_card_parse(&c, device) == DRIFT_OK) { /* a card: its tensor-core model */
        *arch = c.arch;
        return DRIFT_OK;
    }
    for (int a = 0; device && a < DRIFT_TC_NARCH; a++)
        if (!strcmp(drift_tc_arch_name((drift_tc_arch_t)a), device)) {
            *arch = (drift_tc_arch_t)a;
            return DRIFT_OK;
        }
    return DRIFT_EINVAL;
}

int drift_gpu_uses_tc(drift_format_t in, drift_tc_arch_t arch)
{
    drift_tc_params_t p;
    return (in == DRIFT_BF16 || in == DRIFT_FP16 || in == DRIFT_TF32) && drift_tc_params(&p, arch, in) == 0;
}
