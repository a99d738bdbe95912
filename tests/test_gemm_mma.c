/* test_gemm_mma.c — MMA-built GEMM kernels: the tile size changes the bits (hand-derived), the
 * kernels reduce to the tensor-core model where they must, and FP8 promotion against the
 * published figure.
 *
 * Witnesses: hand derivations from the H100 model of tc_model.h (block 16, neab 2 for bf16:
 * terms truncated to a multiple of 2^(E - 25), block result rounded toward zero to fp32),
 * written next to each case; DeepSeek-V3's technical report (arXiv:2412.19437, section 3.3.2)
 * for the FP8 accumulation error. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "exact.h"
#include "gemm_mma.h"
#include "philox.h"
#include "tc_model.h"

static double run(const char *spec, const double *a, const double *b, size_t K, drift_format_t in)
{
    drift_mma_kernel_t k;
    cr_assert_eq(drift_mma_kernel_parse(&k, spec), 0, "%s", spec);
    double v = NAN;
    cr_assert_eq(drift_mma_dot(&v, a, b, K, &k, in, 0, 1), 0, "%s", spec);
    return v;
}

/* K = 32, bf16 on H100; a_0 = 1, a_16 = 2^-24, a_17 = 2^-25, every other a_k = 0; b = 1.
 * Exact: 1 + 3 * 2^-25 = 1 + 0.75 * 2^-23.
 * One chain (tc:h100, mma:h100,32): block 1 gives 1. Block 2 with c = 1: E = 0, grid 2^-25,
 *   both terms exact; 1 + 3 * 2^-25 rounded toward zero to fp32 (grid 2^-23) -> 1.
 * Two K-tiles (mma:h100,16): tile 1 = 1; tile 2 from zero: E = -24, 2^-24 + 2^-25 = 3 * 2^-25
 *   exactly (2 significant bits); then RNE32(1 + 0.75 * 2^-23) -> 1 + 2^-23 (0.25 ulp away,
 *   against 0.75 ulp for 1).
 * Sliced-K with 2 slices of a 32-tile: slice 0 has k 0..15 (1), slice 1 k 16..31 (3 * 2^-25):
 *   the same two partials, RNE-added: 1 + 2^-23. Stream-K with I = 2 iterations of BK = 16 on
 *   one tile: 2 workers cut it in two (1 + 2^-23), 1 worker does not (1). */
Test(gemm_mma, tile_size_changes_the_bits_hand_case)
{
    double a[32] = {0}, b[32];
    for (int k = 0; k < 32; k++) b[k] = 1;
    a[0] = 1;
    a[16] = 0x1p-24;
    a[17] = 0x1p-25;
    cr_assert_eq(run("tc:h100", a, b, 32, DRIFT_BF16), 1.0);
    cr_assert_eq(run("mma:h100,32", a, b, 32, DRIFT_BF16), 1.0);
    cr_assert_eq(run("mma:h100,16", a, b, 32, DRIFT_BF16), 1 + 0x1p-23);
    cr_assert_eq(run("slicedk:h100,32,2", a, b, 32, DRIFT_BF16), 1 + 0x1p-23);
    cr_assert_eq(run("streamk:h100,128,128,16,2", a, b, 32, DRIFT_BF16), 1 + 0x1p-23);
    cr_assert_eq(run("streamk:h100,128,128,16,1", a, b, 32, DRIFT_BF16), 1.0);
}

/* Stream-K cuts a tile's K range where a worker's run ends, so outputs in different tiles
 * follow different orders. 3 tiles x I = 4 iterations = 12, W = 5 workers: runs of
 * ceil(12/5) = 3 iterations: [0,3) [3,6) [6,9) [9,12). Tile 0 (iterations 0..3) is cut after
 * its 3rd iteration; tile 1 (4..7) after its 2nd (global 6); tile 2 (8..11) after its 1st
 * (global 9). With the hand case's terms placed in tile-relative iteration 2 (the cut of tile
 * 1 falls before it, that of tile 0 after it), tile 0 chains them with the 1 in iteration 0
 * (-> 1) and tile 1 adds them as a separate partial (-> 1 + 2^-23). */
Test(gemm_mma, streamk_cut_depends_on_the_tile)
{
    double a[64] = {0}, b[64];
    for (int k = 0; k < 64; k++) b[k] = 1;
    a[0] = 1;
    a[32] = 0x1p-24; /* iteration 2 of BK = 16 */
    a[33] = 0x1p-25;
    drift_mma_kernel_t k;
    cr_assert_eq(drift_mma_kernel_parse(&k, "streamk:h100,1,1,16,5"), 0);
    double v0, v1;
    cr_assert_eq(drift_mma_dot(&v0, a, b, 64, &k, DRIFT_BF16, 0, 3), 0);
    cr_assert_eq(drift_mma_dot(&v1, a, b, 64, &k, DRIFT_BF16, 1, 3), 0);
    cr_assert_eq(v0, 1.0);
    cr_assert_eq(v1, 1 + 0x1p-23);
}

static void fill(double *x, size_t n, uint32_t point, drift_format_t f, int positive)
{
    drift_stream_t s;
    drift_stream_init(&s, 3, drift_fnv1a32("test_gemm_mma"), point, 0);
    for (size_t i = 0; i < n; i++) x[i] = drift_rne(positive ? drift_stream_uniform(&s) : drift_stream_normal(&s), f);
}

/* One K-tile covering all of K is one chain, i.e. the tensor-core model itself; the GEMM
 * equals the per-output dot, whatever the thread count (OpenMP splits rows only). */
Test(gemm_mma, reduces_to_the_model_and_gemm_matches_dot)
{
    enum { M = 5, N = 7, K = 200 };
    double A[M * K], B[K * N], C[M * N], col[K];
    fill(A, M * K, 0, DRIFT_BF16, 0);
    fill(B, K * N, 1, DRIFT_BF16, 0);
    const char *specs[] = {"mma:h100,256", "mma:h100,64", "slicedk:a100,64,4", "streamk:h100,2,4,32,3", "tc:b200"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        drift_mma_kernel_t k;
        cr_assert_eq(drift_mma_kernel_parse(&k, specs[s]), 0);
        cr_assert_eq(drift_mma_gemm(C, A, B, M, N, K, &k, DRIFT_BF16, DRIFT_FP32), 0);
        size_t tn = (N + 3) / 4, tiles = ((M + 1) / 2) * tn;
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                for (size_t t = 0; t < K; t++) col[t] = B[t * N + j];
                double v, m;
                size_t tile = k.family == DRIFT_MMA_STREAMK ? (i / 2) * tn + j / 4 : 0;
                cr_assert_eq(drift_mma_dot(&v, A + i * K, col, K, &k, DRIFT_BF16, tile, tiles), 0);
                cr_assert_eq(C[i * N + j], v, "%s (%zu,%zu)", specs[s], i, j);
                if (s == 0) {
                    cr_assert_eq(drift_tc_dot(&m, A + i * K, col, K, NULL, DRIFT_TC_H100, DRIFT_BF16, DRIFT_FP32), 0);
                    cr_assert_eq(v, m);
                }
            }
    }
}

/* FP8 (e4m3) on H100, K = 4096: full-K accumulation in the tensor core (tc:h100, the model's
 * 14-bit accumulator) against promotion to fp32 every 128 elements (mma:h100,128, DeepSeek-V3).
 * Published (DeepSeek-V3 report, 3.3.2): "the limited accumulation precision in Tensor Cores
 * results in a maximum relative error of nearly 2%" at K = 4096, input distribution not
 * stated. The model, on 16 dot products of U[0,1) inputs (a positive sum, where truncation
 * errors add up), gives a maximum of about 7%; on N(0,1) inputs the normwise error is ~1e-4.
 * The test holds the model to the published order of magnitude (between 0.5% and 10% on the
 * positive data: the same order as "nearly 2%", not a match) and promotion to a 10x
 * improvement at least (the report's motivation). */
Test(gemm_mma, fp8_promotion_against_the_published_figure)
{
    enum { K = 4096, T = 16 };
    double *a = malloc(K * sizeof *a), *b = malloc(K * sizeof *b);
    double full = 0, promoted = 0;
    for (uint32_t t = 0; t < T; t++) {
        fill(a, K, 100 + 2 * t, DRIFT_FP8E4M3, 1);
        fill(b, K, 101 + 2 * t, DRIFT_FP8E4M3, 1);
        double ex;
        cr_assert_eq(drift_exact_dot(&ex, a, b, K, DRIFT_FP64, DRIFT_RNE), 0);
        full = fmax(full, fabs(run("tc:h100", a, b, K, DRIFT_FP8E4M3) - ex) / ex);
        promoted = fmax(promoted, fabs(run("mma:h100,128", a, b, K, DRIFT_FP8E4M3) - ex) / ex);
    }
    free(a);
    free(b);
    cr_assert(full > 0.005 && full < 0.10, "full-K max relative error %g", full);
    cr_assert(promoted * 10 < full, "promoted %g vs full %g", promoted, full);
}

Test(gemm_mma, specs_round_trip_and_refuse_bad_input)
{
    const char *good[] = {"tc:h100", "mma:a100,128", "slicedk:h100,64,4", "streamk:h100,128,128,64,132"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        drift_mma_kernel_t k;
        char buf[DRIFT_MMA_SPEC_MAX];
        cr_assert_eq(drift_mma_kernel_parse(&k, good[i]), 0, "%s", good[i]);
        cr_assert_gt(drift_mma_kernel_print(buf, sizeof buf, &k), 0);
        cr_assert_str_eq(buf, good[i]);
    }
    const char *bad[] = {"", "mma", "mma:h100", "mma:h100,0", "mma:h100,012", "slicedk:h100,64,3",
        "streamk:h100,128,128,64", "tc:h100,1", "mma:h100,64,", "mma:h100,+64", "mma:h100,99999999", "mma:h300,64"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        drift_mma_kernel_t k;
        cr_assert_eq(drift_mma_kernel_parse(&k, bad[i]), DRIFT_EINVAL, "accepted %s", bad[i]);
    }
    /* V100 has no bf16 tensor-core path */
    drift_mma_kernel_t k;
    double a = 1, b = 1, v;
    cr_assert_eq(drift_mma_kernel_parse(&k, "mma:v100,16"), 0);
    cr_assert_eq(drift_mma_dot(&v, &a, &b, 1, &k, DRIFT_BF16, 0, 1), DRIFT_EUNSUPPORTED);
}

/* A split-K plan on tensor cores: splitk:S cuts K into chunks of ceil(K/S) (gemm.h), each from
 * zero, partials added in fp32 in order: exactly mma:ARCH,ceil(K/S). K = 1000, S = 3 -> 334. */
Test(gemm_mma, split_k_plan_on_tensor_cores)
{
    drift_gemm_kernel_t g;
    drift_mma_kernel_t m;
    char buf[DRIFT_MMA_SPEC_MAX];
    cr_assert_eq(drift_gemm_kernel_parse(&g, "splitk:3"), 0);
    cr_assert_eq(drift_mma_from_gemm(&m, &g, DRIFT_TC_H100, 1000), 0);
    drift_mma_kernel_print(buf, sizeof buf, &m);
    cr_assert_str_eq(buf, "mma:h100,334");
    cr_assert_eq(drift_gemm_kernel_parse(&g, "tiled:128,128,32"), 0);
    cr_assert_eq(drift_mma_from_gemm(&m, &g, DRIFT_TC_A100, 1000), 0);
    drift_mma_kernel_print(buf, sizeof buf, &m);
    cr_assert_str_eq(buf, "tc:a100");
    cr_assert_eq(drift_gemm_kernel_parse(&g, "splitk:4:tree"), 0);
    cr_assert_eq(drift_mma_from_gemm(&m, &g, DRIFT_TC_H100, 1000), DRIFT_EUNSUPPORTED);
}
