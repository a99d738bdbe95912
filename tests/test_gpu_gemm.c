/* test_gpu_gemm.c — a GEMM kernel as a GPU runs it (gpu_gemm.h): which arithmetic each input
 * gets, from the hardware's documented tensor-core formats (Volta: fp16 only; Ampere and later:
 * tf32 and bf16 too), and small products computed by hand. */
#include <criterion/criterion.h>

#include "drift.h"
#include "gpu_gemm.h"

Test(gpu_gemm, device_names)
{
    drift_tc_arch_t a;
    cr_assert_eq(drift_gpu_arch(&a, "h100"), 0);
    cr_assert_eq(a, DRIFT_TC_H100);
    cr_assert_eq(drift_gpu_arch(&a, "v100"), 0);
    cr_assert_eq(a, DRIFT_TC_V100);
    cr_assert_eq(drift_gpu_arch(&a, "x100"), DRIFT_EINVAL);
    cr_assert_eq(drift_gpu_arch(&a, NULL), DRIFT_EINVAL);
}

Test(gpu_gemm, which_inputs_run_on_tensor_cores)
{
    cr_assert_eq(drift_gpu_uses_tc(DRIFT_BF16, DRIFT_TC_H100), 1);
    cr_assert_eq(drift_gpu_uses_tc(DRIFT_TF32, DRIFT_TC_A100), 1);
    cr_assert_eq(drift_gpu_uses_tc(DRIFT_FP16, DRIFT_TC_V100), 1);
    cr_assert_eq(drift_gpu_uses_tc(DRIFT_BF16, DRIFT_TC_V100), 0); /* Volta has no bf16 tensor cores */
    cr_assert_eq(drift_gpu_uses_tc(DRIFT_FP32, DRIFT_TC_H100), 0); /* fp32: FMA units */
}

/* A = (1 2; 3 4), B = (5 6; 7 8): A B = (19 22; 43 50), small integers exact in every format
 * and order, on FMA (fp32) and on the tensor-core model (bf16); the row-0 cache holds one row
 * per distinct kernel. */
Test(gpu_gemm, small_product_by_hand)
{
    const double A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8}, expect[4] = {19, 22, 43, 50};
    drift_gemm_kernel_t naive, split;
    cr_assert_eq(drift_gemm_kernel_parse(&naive, "naive"), 0);
    cr_assert_eq(drift_gemm_kernel_parse(&split, "splitk:2"), 0);
    const drift_format_t fmts[2] = {DRIFT_FP32, DRIFT_BF16};
    for (int f = 0; f < 2; f++) {
        drift_gemm_opts_t o = drift_gemm_opts(fmts[f], DRIFT_FP32);
        double C[4];
        cr_assert_eq(drift_gpu_gemm(C, A, B, 2, 2, 2, &split, &o, DRIFT_TC_H100), 0);
        for (int i = 0; i < 4; i++) cr_assert_eq(C[i], expect[i], "format %d entry %d: %g", f, i, C[i]);
        drift_row0_cache_t c = {0};
        cr_assert_eq(drift_gpu_row0_of(&c, &naive, A, B, 2, 2, &o, DRIFT_TC_H100), 0);
        cr_assert_eq(drift_gpu_row0_of(&c, &split, A, B, 2, 2, &o, DRIFT_TC_H100), 1);
        cr_assert_eq(drift_gpu_row0_of(&c, &naive, A, B, 2, 2, &o, DRIFT_TC_H100), 0);
        cr_assert_eq(c.n, 2);
        cr_assert(c.row[1][0] == 19 && c.row[1][1] == 22);
        drift_row0_free(&c);
    }
}
