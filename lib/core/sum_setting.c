/* sum_setting.c — the summation experiments' settings (sum_setting.h). */
#include "sum_setting.h"

#include <stdio.h>

int drift_sum_settings(drift_sum_setting_t *S, const drift_format_t *formats, int n)
{
    int ns = 0;
    for (int i = 0; i < n; i++) {
        drift_format_t f = formats[i];
        if (drift_format_info(f)->p < drift_format_info(DRIFT_FP32)->p)
            S[ns++] = (drift_sum_setting_t){f, DRIFT_FP32, ""};
        S[ns++] = (drift_sum_setting_t){f, f, ""};
    }
    for (int s = 0; s < ns; s++)
        snprintf(S[s].name, sizeof S[s].name, "%s/%s", drift_format_name(S[s].in), drift_format_name(S[s].acc));
    return ns;
}
