/* matmul_lab.h — what one run of the matmul_drift experiment knows once its products are in:
 * the kernels, settings and inner dimensions, and the K sweep's cells with their growth
 * exponents; and its declared output (the CSV table, the fragment's NMSE table and takeaway,
 * the stdout table). */
#ifndef DRIFT_MATMUL_LAB_H
#define DRIFT_MATMUL_LAB_H

#include "cli.h"
#include "matmul_sweep.h"

#define DRIFT_LLAMA_NMSE_MATMUL 5e-4 /* llama.cpp tests/test-backend-ops.cpp: test_mul_mat max_nmse_err */

typedef struct {
    const drift_cli_t *cli;
    const drift_mm_sweep_t *W; /* shape, K list, distributions, settings, kernels */
    const char (*kname)[DRIFT_GEMM_KERNEL_SPEC_MAX];
    const char *kernels_opt; /* the --kernels list as given */
    const drift_mm_cell_t *cells;
    const double *slope; /* [(d * ns + si) * nk + kk]: growth exponent of the median relative error in K */
    int key;             /* index of the tables' K */
} drift_matmul_lab_t;

/* Every output file, committed together; stdout unless --quiet. */
void drift_matmul_write(const drift_matmul_lab_t *L);

#endif
