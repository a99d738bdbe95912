/* test_dispatch_kernel_gemm.c — the decoder's GEMM (drift_dispatch_kernel_gemm) against
 * drift_gemm, the kernel it stands for: its fp32 fast paths (tiled, split-K with chunks added
 * in order) must give drift_gemm's bits. Shapes with K a multiple of S and not (a short last
 * chunk), M = 1 (decode) and M > 1, bf16 and fp32 inputs, outputs in fp32 and bf16. Tolerance 0:
 * both compute the same chains, each step one correctly rounded fp32 operation. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "drift.h"
#include "format.h"
#include "gemm.h"
#include "philox.h"

static void random_matrix(double *x, size_t n, drift_format_t f, uint32_t key)
{
    drift_stream_t s;
    drift_stream_init(&s, 11, drift_fnv1a32("test_dispatch_kernel_gemm"), key, 0);
    for (size_t i = 0; i < n; i++) x[i] = drift_rne(drift_stream_normal(&s), f);
}

static void same_as_gemm(
    size_t M, size_t N, size_t K, const drift_gemm_kernel_t *kern, drift_format_t in, drift_format_t out)
{
    double *A = malloc(M * K * sizeof(double)), *B = malloc(K * N * sizeof(double));
    double *C1 = malloc(M * N * sizeof(double)), *C2 = malloc(M * N * sizeof(double));
    size_t w = K > N ? K : N;
    double *sa = malloc(M * K * sizeof(double)), *sc = malloc(2 * M * w * sizeof(double));
    float *Bf = malloc(K * N * sizeof(float));
    cr_assert(A && B && C1 && C2 && sa && sc && Bf);
    random_matrix(A, M * K, DRIFT_FP64, 1); /* A any values: the kernel rounds them to in */
    random_matrix(B, K * N, in, 2);
    for (size_t i = 0; i < K * N; i++) Bf[i] = (float)B[i];
    drift_order_t seq;
    cr_assert_eq(drift_order_parse(&seq, "seq"), 0);
    drift_recipe_t r = drift_recipe(in, &seq, DRIFT_FP32, out);
    cr_assert_eq(drift_dispatch_kernel_gemm(C1, A, B, Bf, M, N, K, &r, kern, out, sa, sc), 0);
    drift_gemm_opts_t o = drift_gemm_opts(in, DRIFT_FP32);
    o.out = out;
    cr_assert_eq(drift_gemm(C2, A, B, M, N, K, kern, &o), 0);
    for (size_t i = 0; i < M * N; i++)
        cr_assert(memcmp(&C1[i], &C2[i], sizeof(double)) == 0, "M %zu N %zu K %zu S %d: C[%zu] %a, drift_gemm %a", M, N,
            K, kern->splits, i, C1[i], C2[i]);
    free(A), free(B), free(C1), free(C2), free(sa), free(sc), free(Bf);
}

Test(dispatch_kernel_gemm, split_k_fast_path_is_drift_gemm)
{
    const size_t shapes[][3] = {{1, 576, 576}, {1, 192, 576}, {1, 576, 1536}, {3, 40, 100}, {1, 17, 7}, {5, 64, 65}};
    const int splits[] = {2, 3, 4, 16};
    const drift_format_t ins[] = {DRIFT_FP32, DRIFT_BF16}, outs[] = {DRIFT_FP32, DRIFT_BF16};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t k = 0; k < sizeof splits / sizeof *splits; k++)
            for (int f = 0; f < 2; f++) {
                drift_gemm_kernel_t kern;
                memset(&kern, 0, sizeof kern);
                kern.family = DRIFT_GEMM_SPLITK;
                kern.splits = splits[k];
                same_as_gemm(shapes[s][0], shapes[s][1], shapes[s][2], &kern, ins[f], outs[f]);
            }
}

Test(dispatch_kernel_gemm, tiled_fast_path_is_drift_gemm)
{
    drift_gemm_kernel_t kern;
    memset(&kern, 0, sizeof kern);
    kern.family = DRIFT_GEMM_TILED;
    kern.bm = kern.bn = 128, kern.bk = 32;
    same_as_gemm(1, 576, 576, &kern, DRIFT_BF16, DRIFT_BF16);
    same_as_gemm(7, 33, 129, &kern, DRIFT_FP32, DRIFT_FP32);
}
