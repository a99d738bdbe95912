/* kernel_list.h — a comma-separated list of GEMM kernel specs ("naive,tiled:128,64,32,tc:h100"),
 * split so that tiled:BM,BN,BK stays whole, each parsed (gemm.h) and printed canonically. */
#ifndef DRIFT_KERNEL_LIST_H
#define DRIFT_KERNEL_LIST_H

#include <stddef.h>

#include "drift.h"
#include "gemm.h"

/* Fills k[0..) and names[0..) (at most max) and returns how many; on a malformed, repeated or
 * too long list DRIFT_EINVAL with the problem and what is accepted in err (one line). */
DRIFT_MUST_CHECK int drift_kernel_list_parse(drift_gemm_kernel_t *k, char names[][DRIFT_GEMM_KERNEL_SPEC_MAX], int max,
    const char *list, char *err, size_t errsz);

#endif
