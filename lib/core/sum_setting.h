/* sum_setting.h — the inputs/accumulator settings of the summation experiments (sum_order,
 * sum_order_perms): each input format summed in its own accumulator and, below fp32's
 * precision, also in fp32 (the mixed-precision GPU default). */
#ifndef DRIFT_SUM_SETTING_H
#define DRIFT_SUM_SETTING_H

#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    drift_format_t in, acc;
    char name[24]; /* "fp16/fp32": inputs / accumulator */
} drift_sum_setting_t;

/* Fills S (room for 2 n) from formats[0..n) in their order, the fp32 accumulator before a
 * narrow format's own, each named "in/acc"; returns how many. */
int drift_sum_settings(drift_sum_setting_t *S, const drift_format_t *formats, int n);

#ifdef __cplusplus
}
#endif

#endif
