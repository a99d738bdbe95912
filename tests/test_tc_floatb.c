/* test_tc_floatb.c — drift_tc_gemm_floatb (the tensor-core model on B read in place as
 * floats) against the scalar model, drift_tc_dot per output (tc_model.c's tc_block, which
 * test_tc_model.c holds against the published probes and an MPFR emulation, and long_tc_hw
 * against measured outputs): every output must have its bits (tolerance 0: the model is
 * deterministic bit arithmetic), for every row-group shape (M = 1 .. 13: the 1 x 64, 2 x 32,
 * 3 x 16 and 4 x 16 tiles of AVX-512, 1 x 32, 2 x 16, 3 x 8 and 4 x 8 of AVX2), columns across
 * the end of a tile, K across the end of a block, zeros, inputs from 2^-40 to 2^40, the int32
 * sum that wraps (Hopper), fp16 subnormals, checked and pre-validated B. The valid cases must
 * be taken (*done = 1): the test runs on CPUs with AVX-512 or AVX2 and F16C. Where the path
 * must decline (*done = 0: invalid or out-of-range inputs,
 * configurations it does not take) the test says so; the dispatch must then still give the
 * model's bits, and drift_dispatch_kernel_gemm_b the same as the path through doubles. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "drift.h"
#include "format.h"
#include "philox.h"
#include "tc_model.h"

typedef struct {
    double *A, *B, *C, *R;
    float *Bf;
} bufs_t;

static bufs_t alloc_bufs(size_t M, size_t N, size_t K)
{
    bufs_t b = {malloc(M * K * sizeof(double)), malloc(K * N * sizeof(double)), malloc(M * N * sizeof(double)),
        malloc(M * N * sizeof(double)), malloc(K * N * sizeof(float))};
    cr_assert(b.A && b.B && b.C && b.R && b.Bf);
    return b;
}

static void free_bufs(bufs_t *b) { free(b->A), free(b->B), free(b->C), free(b->R), free(b->Bf); }

/* Values of f: normal deviates (at least 2^-4 in magnitude) times 2^scale (times 2^e, e
 * uniform in -scale .. scale, when spread), about one in `zeros` of them 0. */
static void fill(double *x, size_t n, drift_format_t f, uint32_t key, int scale, int spread, int zeros)
{
    drift_stream_t s;
    drift_stream_init(&s, 5, drift_fnv1a32("test_tc_floatb"), key, 0);
    for (size_t i = 0; i < n; i++) {
        double v = drift_stream_normal(&s);
        v = fabs(v) < 0x1p-4 ? copysign(0x1p-4, v) : v; /* no deviate below 2^-4: the spread stays in range */
        int e = spread ? (int)drift_stream_below(&s, (uint32_t)(2 * scale + 1)) - scale : scale;
        v = ldexp(v, e);
        if (zeros && drift_stream_uniform(&s) * zeros < 1) v = 0;
        x[i] = drift_rne(v, f);
    }
}

/* The scalar model per output: R[i][j] = drift_tc_dot(row i of A, column j of B). */
static void reference(
    double *R, const double *A, const double *B, size_t M, size_t N, size_t K, drift_tc_arch_t arch, drift_format_t in)
{
    double *col = malloc((K ? K : 1) * sizeof(double));
    cr_assert(col);
    for (size_t j = 0; j < N; j++) {
        for (size_t k = 0; k < K; k++) col[k] = B[k * N + j];
        for (size_t i = 0; i < M; i++)
            cr_assert_eq(drift_tc_dot(&R[i * N + j], A + i * K, col, K, NULL, arch, in, DRIFT_FP32), 0);
    }
    free(col);
}

static void same_bits(const double *C, const double *R, size_t n, const char *what)
{
    for (size_t t = 0; t < n; t++)
        cr_assert(
            memcmp(&C[t], &R[t], sizeof(double)) == 0, "%s: output %zu is %a, the model's %a", what, t, C[t], R[t]);
}

/* Run the path on (A, B) with B checked on the fly and pre-validated; expect `take` (done). */
static void check_case(
    bufs_t *b, size_t M, size_t N, size_t K, drift_tc_arch_t arch, drift_format_t in, int take, const char *what)
{
    for (size_t t = 0; t < K * N; t++) b->Bf[t] = (float)b->B[t];
    reference(b->R, b->A, b->B, M, N, K, arch, in);
    int valid = drift_tc_floatb_valid(b->Bf, K * N, in);
    for (int bv = 0; bv <= valid; bv++) {
        int done = -1;
        cr_assert_eq(drift_tc_gemm_floatb(b->C, b->A, b->Bf, M, N, K, arch, in, DRIFT_FP32, bv, &done), 0, "%s", what);
        cr_assert_eq(done, take, "%s (M %zu N %zu K %zu): done %d, expected %d", what, M, N, K, done, take);
        if (done) same_bits(b->C, b->R, M * N, what);
    }
}

Test(tc_floatb, shapes_and_scales_give_the_scalar_models_bits)
{
    /* M = 1 .. 5 and 13 (groups of 4 plus 1, 2, 3), N across 16- and 64-column tiles, K across
     * blocks of 4, 8 and 16 */
    const size_t Ms[] = {1, 2, 3, 4, 5, 13}, Ns[] = {1, 17, 64, 100}, Ks[] = {1, 7, 16, 33, 100};
    const struct {
        drift_tc_arch_t arch;
        drift_format_t in;
    } cfgs[] = {{DRIFT_TC_A100, DRIFT_BF16}, {DRIFT_TC_H100, DRIFT_BF16}, {DRIFT_TC_H100, DRIFT_FP16},
        {DRIFT_TC_V100, DRIFT_FP16}, {DRIFT_TC_B200, DRIFT_BF16}, {DRIFT_TC_ADA, DRIFT_FP16}};
    uint32_t key = 0;
    for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++)
        for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
            for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++)
                for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++) {
                    size_t M = Ms[a], N = Ns[n], K = Ks[k];
                    bufs_t b = alloc_bufs(M, N, K);
                    /* bf16 spans 2^-44 .. 2^43 (inside [2^-50, 2^51)); fp16 B 2^-16 .. 2^15
                     * (subnormal fp16 values, and zeros where they round to 0), A 2^-8 .. 2^7 */
                    int bf = cfgs[c].in == DRIFT_BF16;
                    fill(b.A, M * K, cfgs[c].in, ++key, bf ? 40 : 4, 1, 5);
                    fill(b.B, K * N, cfgs[c].in, ++key, bf ? 40 : 12, 1, 7);
                    check_case(&b, M, N, K, cfgs[c].arch, cfgs[c].in, 1, "random");
                    free_bufs(&b);
                }
}

Test(tc_floatb, hopper_int32_sum_that_wraps)
{
    /* H100 bf16: lsb_off = 25. Block 1 (k = 0 .. 15): 1.5 * 1 alone, so c = 1.5 (exponent 0).
     * Block 2 (k = 16 .. 31): 16 products 1.9921875^2 = 3.96875... (exponent 0 + 0, so E = 0,
     * c's exponent too): terms floor(3.9688 * 2^25) = 133169152 each, 16 of them 2130706432,
     * plus c's 1.5 * 2^25 = 50331648: 2181038080 > 2^31 - 1, the sum that wraps in int32 and
     * takes drift_tc_finish_ on the int64 sum. */
    const size_t M = 1, N = 16, K = 32;
    bufs_t b = alloc_bufs(M, N, K);
    for (size_t k = 0; k < K; k++) b.A[k] = k == 0 ? 1.5 : k < 16 ? 0 : 1.9921875;
    for (size_t t = 0; t < K * N; t++) b.B[t] = t < N ? 1.0 : t < 16 * N ? 0.0 : 1.9921875;
    check_case(&b, M, N, K, DRIFT_TC_H100, DRIFT_BF16, 1, "int32 wrap");
    free_bufs(&b);
}

/* fp16 subnormal inputs take the model's exponent, emin_in = -14, not floor(log2|x|): with
 * 2^-16 (subnormal) times 1 the largest product's exponent is -14 + 0, so E = -14 and the
 * second product, -2^-20 (1 + 2^-10)^2 (bits down to 2^-40), is truncated at 2^-39 to
 * -(2^-20 + 2^-29): the result is 2^-16 - 2^-20 - 2^-29. With E = -16 the grid would be
 * 2^-41 and the result 2^-40 lower (an fp32 value: 24 bits from 2^-17). Row 0 has the
 * subnormal in B (even columns), row 1 in A (odd columns). */
Test(tc_floatb, fp16_subnormals_take_the_models_exponent)
{
    const size_t M = 2, N = 9, K = 2;
    bufs_t b = alloc_bufs(M, N, K);
    const double small = 0x1p-16, a2 = 0x1p-6 * (1 + 0x1p-10), b2 = -0x1p-14 * (1 + 0x1p-10);
    for (size_t j = 0; j < N; j++) {
        b.B[0 * N + j] = j % 2 ? 1.0 : small;
        b.B[1 * N + j] = j % 2 ? a2 : b2;
    }
    b.A[0] = 1.0, b.A[1] = a2;
    b.A[2] = small, b.A[3] = b2;
    check_case(&b, M, N, K, DRIFT_TC_H100, DRIFT_FP16, 1, "fp16 subnormals");
    const double want = 0x1p-16 - 0x1p-20 - 0x1p-29;
    cr_assert(b.R[0] == want && b.R[N + 1] == want, "the model: %a %a, expected %a", b.R[0], b.R[N + 1], want);
    free_bufs(&b);
}

Test(tc_floatb, declines_what_it_does_not_take)
{
    const size_t M = 2, N = 20, K = 24;
    const struct {
        const char *what;
        drift_format_t in;
        int where; /* 0: B[5], 1: A[3] */
        double v;
    } bad[] = {
        {"B not a value of bf16", DRIFT_BF16, 0, 1.0 + 0x1p-10},
        {"B not a value of fp16", DRIFT_FP16, 0, 1.0 + 0x1p-12},
        {"B above fp16's range as a float", DRIFT_FP16, 0, 131072.0},
        {"B inf", DRIFT_BF16, 0, INFINITY},
        {"B NaN", DRIFT_FP16, 0, NAN},
        {"B below 2^-50", DRIFT_BF16, 0, 0x1p-60},
        {"B at 2^51", DRIFT_BF16, 0, 0x1p51},
        {"A below 2^-50", DRIFT_BF16, 1, -0x1p-51},
        {"A inf", DRIFT_FP16, 1, -INFINITY},
    };
    for (size_t c = 0; c < sizeof bad / sizeof *bad; c++) {
        bufs_t b = alloc_bufs(M, N, K);
        fill(b.A, M * K, bad[c].in, 100 + (uint32_t)c, 0, 0, 0);
        fill(b.B, K * N, bad[c].in, 200 + (uint32_t)c, 0, 0, 0);
        if (bad[c].where)
            b.A[3] = bad[c].v;
        else
            b.B[5] = bad[c].v;
        for (size_t t = 0; t < K * N; t++) b.Bf[t] = (float)b.B[t];
        if (!bad[c].where) cr_assert_eq(drift_tc_floatb_valid(b.Bf, K * N, bad[c].in), 0, "%s: valid", bad[c].what);
        int done = -1;
        cr_assert_eq(drift_tc_gemm_floatb(b.C, b.A, b.Bf, M, N, K, DRIFT_TC_H100, bad[c].in, DRIFT_FP32, 0, &done), 0);
        cr_assert_eq(done, 0, "%s: taken", bad[c].what);
        free_bufs(&b);
    }
    /* configurations outside tc_fast_block's: fp16 output (RNE), tf32, fp8 */
    bufs_t b = alloc_bufs(M, N, K);
    fill(b.A, M * K, DRIFT_FP16, 1, 0, 0, 0);
    fill(b.B, K * N, DRIFT_FP16, 2, 0, 0, 0);
    for (size_t t = 0; t < K * N; t++) b.Bf[t] = (float)b.B[t];
    int done = -1;
    cr_assert_eq(drift_tc_gemm_floatb(b.C, b.A, b.Bf, M, N, K, DRIFT_TC_H100, DRIFT_FP16, DRIFT_FP16, 0, &done), 0);
    cr_assert_eq(done, 0, "fp16 output taken");
    cr_assert_eq(drift_tc_gemm_floatb(b.C, b.A, b.Bf, M, N, K, DRIFT_TC_A100, DRIFT_TF32, DRIFT_FP32, 0, &done), 0);
    cr_assert_eq(done, 0, "tf32 taken");
    cr_assert_eq(drift_tc_gemm_floatb(b.C, b.A, b.Bf, M, N, K, DRIFT_TC_V100, DRIFT_BF16, DRIFT_FP32, 0, &done),
        DRIFT_EUNSUPPORTED, "V100 has no bf16 path");
    free_bufs(&b);
}

/* The decoder's call: under a split-K kernel (slices of B's rows) and without, B read in place
 * (checked or pre-validated) against the same call without Bf (drift_tc_gemm on doubles). */
Test(tc_floatb, dispatch_reads_b_in_place_with_the_same_bits)
{
    const size_t shapes[][3] = {{1, 192, 576}, {1, 64, 1536}, {3, 40, 100}, {8, 33, 65}};
    const int splits[] = {1, 2, 4};
    const char *orders[] = {"tc:a100", "tc:h100"};
    const drift_format_t ins[] = {DRIFT_BF16, DRIFT_FP16};
    uint32_t key = 1000;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t p = 0; p < sizeof splits / sizeof *splits; p++)
            for (size_t o = 0; o < 2; o++)
                for (size_t f = 0; f < 2; f++) {
                    size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], w = K > N ? K : N;
                    bufs_t b = alloc_bufs(M, N, K);
                    double *sa = malloc(M * K * sizeof(double)), *sc = malloc(2 * M * w * sizeof(double));
                    cr_assert(sa && sc);
                    fill(b.A, M * K, DRIFT_FP64, ++key, 0, 0, 9); /* any values: the dispatch rounds them */
                    fill(b.B, K * N, ins[f], ++key, 0, 0, 9);
                    for (size_t t = 0; t < K * N; t++) b.Bf[t] = (float)b.B[t];
                    drift_order_t ord;
                    cr_assert_eq(drift_order_parse(&ord, orders[o]), 0);
                    drift_recipe_t r = drift_recipe(ins[f], &ord, DRIFT_FP32, DRIFT_BF16);
                    drift_gemm_kernel_t kern;
                    memset(&kern, 0, sizeof kern);
                    kern.family = splits[p] > 1 ? DRIFT_GEMM_SPLITK : DRIFT_GEMM_TILED;
                    kern.splits = splits[p] > 1 ? splits[p] : 0;
                    if (splits[p] == 1) kern.bm = kern.bn = 128, kern.bk = 32;
                    cr_assert_eq(
                        drift_dispatch_kernel_gemm(b.R, b.A, b.B, NULL, M, N, K, &r, &kern, DRIFT_BF16, sa, sc), 0);
                    cr_assert_eq(
                        drift_dispatch_kernel_gemm(b.C, b.A, b.B, b.Bf, M, N, K, &r, &kern, DRIFT_BF16, sa, sc), 0);
                    same_bits(b.C, b.R, M * N, "dispatch, B checked");
                    cr_assert_eq(drift_tc_floatb_valid(b.Bf, K * N, ins[f]), 1);
                    cr_assert_eq(
                        drift_dispatch_kernel_gemm_b(b.C, b.A, b.B, b.Bf, 1, M, N, K, &r, &kern, DRIFT_BF16, sa, sc),
                        0);
                    same_bits(b.C, b.R, M * N, "dispatch, B pre-validated");
                    free(sa), free(sc);
                    free_bufs(&b);
                }
}
