/* kernel_plans.h — which pass sizes M give a model other kernels than one row: the verify pass
 * of speculative decoding runs M = k+1 rows where plain decoding runs one. */
#ifndef DRIFT_KERNEL_PLANS_H
#define DRIFT_KERNEL_PLANS_H

#include "model.h"

/* For M = 2 .. Mmax: dif[M] = 1 when a pass of M rows (M sequences of one row at a context of
 * kv_len, the LM head's included) gets other GEMM kernels, split counts or ring chunks than
 * M = 1 (drift_model_plan), else 0. Returns the first such M, or -1. Dies when a plan fails. */
int drift_plans_differ(int *dif, const drift_model_t *m, int kv_len, int Mmax);

#endif
