/* test_tc_model.c — the tensor-core model against published probes and an independent
 * MPFR emulation of the published model.
 *
 * Sources of the expected values:
 *  [F]  Fasi, Higham, Mikaitis & Pranesh, "Numerical behavior of NVIDIA tensor cores",
 *       PeerJ Comput. Sci. 7:e330 (2021), and its test suite
 *       github.com/north-numerical-computing/tensor-cores-numerical-behavior:
 *       tc_test_numerics-V100.cu (V100) and tc_test_numerics-T4-A100-binary16.cu (A100).
 *       Their probes run one wmma 16x16x16, so K = 16 with zeros after the listed terms.
 *       Each test below names the probe ("A1", "D2", ...: section and item of the suite).
 *  [KM] Khattak & Mikaitis, "Accurate models of NVIDIA tensor cores" (2025) and its models
 *       github.com/north-numerical-computing/MATLAB-tensor-core (V100TC.m, A100TC.m,
 *       H100TC.m, B200TC.m, tools/Generic_BFMA_TC.m): block sizes, neab, min_exp_limit.
 *  [D]  derived by hand from [KM]'s model for H100 (no published probe outputs exist for
 *       it); each derivation is written next to the test.
 * All comparisons are exact: the model is deterministic bit arithmetic. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <limits.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "drift.h"
#include "exact.h"
#include "format.h"
#include "oracle.h"
#include "tc_model.h"
#include "philox.h"

#define V100 DRIFT_TC_V100
#define A100 DRIFT_TC_A100
#define H100 DRIFT_TC_H100
#define B200 DRIFT_TC_B200
#define FP16 DRIFT_FP16
#define FP32 DRIFT_FP32

/* A probe: K = 16 (one wmma 16x16x16 in [F]), the first n terms given, the rest zero. */
static double probe(
    drift_tc_arch_t arch, drift_format_t in, drift_format_t out, const double *a, const double *b, int n, double c)
{
    double A[64] = {0}, B[64] = {0}, r = NAN;
    memcpy(A, a, (size_t)n * sizeof *a);
    memcpy(B, b, (size_t)n * sizeof *b);
    cr_assert_eq(drift_tc_dot(&r, A, B, 16, &c, arch, in, out), 0);
    return r;
}

#define P(arch, out, c, n, ...) probe_ab(arch, FP16, out, c, n, (double[]){__VA_ARGS__})
/* a[0..n) then b[0..n) in one list */
static double probe_ab(drift_tc_arch_t arch, drift_format_t in, drift_format_t out, double c, int n, const double *ab)
{
    return probe(arch, in, out, ab, ab + n, n, c);
}

static const double u24 = 0x1p-24; /* 2^-24: fp16's smallest subnormal and fp32's u */

/* ---- [F] section A: subnormals -------------------------------------------------------- */

Test(tc_probes, A_subnormals)
{
    drift_tc_arch_t archs[] = {V100, A100, H100};
    for (int t = 0; t < 3; t++) {
        drift_tc_arch_t a = archs[t];
        cr_assert_eq(P(a, FP16, 0, 1, u24, 4.0), 0x1p-22);     /* A1 */
        cr_assert_eq(P(a, FP32, 0, 1, u24, 4.0), 0x1p-22);     /* A2 */
        cr_assert_eq(P(a, FP32, 0x1p-149, 0, 0), 0x1p-149);    /* A3 */
        cr_assert_eq(P(a, FP16, 0, 1, 0x1p-14, 0.5), 0x1p-15); /* A4: exact, != 0 */
        cr_assert_eq(P(a, FP16, -0x1p-15, 1, 0x1p-14, 1.0), 0x1p-15);
        cr_assert_eq(P(a, FP32, 0, 1, 0x1p-14, 0.5), 0x1p-15); /* A5 */
        cr_assert_eq(P(a, FP32, -0x1p-15, 1, 0x1p-14, 1.0), 0x1p-15);
    }
}

/* ---- [F] section B: accuracy of the dot products --------------------------------------- */

Test(tc_probes, B_products_exact_and_fp32_accumulation)
{
    const double bo = 1 - 0x1p-11; /* fp16's largest value below 1 */
    drift_tc_arch_t archs[] = {V100, A100, H100};
    for (int t = 0; t < 3; t++) {
        drift_tc_arch_t a = archs[t];
        cr_assert_eq(P(a, FP32, 0, 1, bo, bo), 1 - 0x1p-10 + 0x1p-22); /* B1 */
        cr_assert_eq(P(a, FP32, 0, 4, bo, bo, bo, bo, bo, bo, bo, bo), 4 * (1 - 0x1p-10 + 0x1p-22));
        cr_assert_eq(P(a, FP16, 0, 2, bo, bo, bo, 0x1p-11), 1 - 0x1p-10 + 0x1p-11); /* B2 */
    }
    /* B3 "accumulated in binary32": c = 1 plus four tiny products gives 1. V100 uses
     * 1 * 2^-24, A100 0.5 * 2^-24 (its extra alignment bit would keep 2^-24). */
    cr_assert_eq(P(V100, FP32, 1.0, 4, 1., 1., 1., 1., u24, u24, u24, u24), 1.0);
    cr_assert_eq(P(A100, FP32, 1.0, 4, .5, .5, .5, .5, u24, u24, u24, u24), 1.0);
    /* [D] H100, neab = 2: lsb = 2^(0-23-2) = 2^-25 keeps each 0.5 * 2^-24 = 2^-25, so the
     * A100 probe gives 1 + 4 * 2^-25 = 1 + 2^-23 (exact, so RZ keeps it). */
    cr_assert_eq(P(H100, FP32, 1.0, 4, .5, .5, .5, .5, u24, u24, u24, u24), 1 + 0x1p-23);
}

Test(tc_probes, B_sum_starts_from_largest)
{
    /* B4: c = 2^-24 and three tiny products; the product 1*1 moves through positions 0..3.
     * Alignment to the largest exponent (0) truncates every tiny term, whatever its
     * position: the result is always 1. */
    for (int j = 0; j < 4; j++) {
        double a[4] = {1, 1, 1, 1}, b[4] = {u24, u24, u24, u24};
        b[j] = 1;
        cr_assert_eq(probe(V100, FP16, FP32, a, b, 4, u24), 1.0, "V100 j=%d", j);
        double a2[4] = {.5, .5, .5, .5}, b2[4] = {u24, u24, u24, u24};
        a2[j] = 1, b2[j] = 1;
        cr_assert_eq(probe(A100, FP16, FP32, a2, b2, 4, u24), 1.0, "A100 j=%d", j);
    }
}

/* ---- [F] section C: rounding modes ------------------------------------------------------ */

Test(tc_probes, C_rounding)
{
    drift_tc_arch_t archs[] = {V100, A100, H100};
    for (int t = 0; t < 3; t++) {
        drift_tc_arch_t a = archs[t];
        /* C1, C2: 2 + (2^-23 + 2^-24) truncates to 2 (toward zero), and symmetrically -2 */
        cr_assert_eq(P(a, FP32, 0, 2, 1., 1., 2., 0x1p-23 + u24), 2.0);
        cr_assert_eq(P(a, FP32, 0, 2, 1., 1., -2., -0x1p-23 - u24), -2.0);
        /* C3: fp16 output rounds to nearest: 2^-25 + 2^-26 = 0.75 * 2^-24 -> 2^-24 */
        cr_assert_eq(P(a, FP16, 0, 2, u24, u24, 0.5, 0.25), u24);
    }
}

/* ---- [F] section D: features of the accumulator ----------------------------------------- */

Test(tc_probes, D1_extra_alignment_bits)
{
    /* c = -(1 - 2^-24), one product 1*1. */
    cr_assert_eq(P(V100, FP32, -(1 - u24), 1, 1., 1.), 0x1p-23); /* [F] V100: no extra bit */
    cr_assert_eq(P(A100, FP32, -(1 - u24), 1, 1., 1.), u24);     /* [F] A100 */
    cr_assert_eq(P(H100, FP32, -(1 - u24), 1, 1., 1.), u24);     /* [D] neab = 2 >= 1: c exact */
}

Test(tc_probes, D2_normalisation_in_addition)
{
    /* c = 1 - 2^-24 plus four 1 * 2^-24 -> 1 + 2^-23 (exact
     * 1 + 3 * 2^-24, aligned to c's exponent -1, normalised once, truncated). */
    drift_tc_arch_t archs[] = {V100, A100, H100};
    for (int t = 0; t < 3; t++)
        cr_assert_eq(P(archs[t], FP32, 1 - u24, 4, 1., 1., 1., 1., u24, u24, u24, u24), 1 + 0x1p-23);
    /* V100 with c = 1 plus the same four products -> 1.0. */
    cr_assert_eq(P(V100, FP32, 1.0, 4, 1., 1., 1., 1., u24, u24, u24, u24), 1.0);
}

Test(tc_probes, D3_normalisation_in_subtraction)
{
    /* 1*1 + 1*(-2^-24) + c, c = -1 + 2^-24. V100 truncates c to -(1 - 2^-23) and the tiny
     * product to 0: 2^-23 [F]. A100 keeps both: exactly 0 [F]. H100 likewise 0 [D]. */
    cr_assert_eq(P(V100, FP32, -1 + u24, 2, 1., 1., 1., -u24), 0x1p-23);
    cr_assert_eq(P(A100, FP32, -1 + u24, 2, 1., 1., 1., -u24), 0.0);
    cr_assert_eq(P(H100, FP32, -1 + u24, 2, 1., 1., 1., -u24), 0.0);
}

Test(tc_probes, D4_carry_out_bits)
{
    drift_tc_arch_t archs[] = {V100, A100, H100};
    for (int t = 0; t < 3; t++) {
        drift_tc_arch_t a = archs[t];
        for (int i = 0; i < 4; i++) { /* three 1*1 and one 1*2^-23 at position i */
            double x[4] = {1, 1, 1, 1}, y[4] = {1, 1, 1, 1};
            y[i] = 0x1p-23;
            cr_assert_eq(probe(a, FP16, FP32, x, y, 4, 1 + 0x1p-22 + 0x1p-23), 4 + 0x1p-21);
        }
        cr_assert_eq(P(a, FP32, 1.875, 4, 1., 1., 1., 1., 1., 1.5, 1.75, 1.875), 8.0);
        cr_assert_eq(P(a, FP32, 1 + 0x1p-22 + 0x1p-23, 4, 1., 1., 1., 1., 1., 1., 1., 1.), 5.0);
        cr_assert_eq(P(a, FP32, -1 - 0x1p-22 - 0x1p-23, 4, 1., 1., 1., 1., -1., -1., -1., -1.), -5.0);
    }
}

Test(tc_probes, D5_not_monotonic)
{
    /* V100 [F]: adding the same four products to a larger c gives a smaller result. */
    double r1 = P(V100, FP32, 1 - u24, 4, 1., 1., 1., 1., u24, u24, u24, u24);
    double r2 = P(V100, FP32, 1.0, 4, 1., 1., 1., 1., u24, u24, u24, u24);
    cr_assert(r2 < r1);
    /* A100 [F]: three 0.5 * 2^-24 and one 0.5 * (2^-23 + 2^-24). With c = 1 - 2^-24 the lsb
     * is 2^-25: exact 1 - 2^-24 + 6 * 2^-25 = 1 + 2^-23. With c = 1 the lsb is 2^-24: the
     * 2^-25 terms vanish, 1.5 * 2^-24 truncates to 2^-24, 1 + 2^-24 truncates to 1. [D] */
    const double d = 0x1p-23 + u24;
    r1 = P(A100, FP32, 1 - u24, 4, .5, .5, .5, .5, u24, u24, u24, d);
    r2 = P(A100, FP32, 1.0, 4, .5, .5, .5, .5, u24, u24, u24, d);
    cr_assert_eq(r1, 1 + 0x1p-23);
    cr_assert_eq(r2, 1.0);
}

/* ---- block size, neab and min_exp detection ------------------------------------------- */

typedef struct {
    drift_tc_arch_t arch;
    drift_format_t in;
    int block; /* [KM] */
} tc_block_case_t;

static tc_block_case_t BLOCKS[] = {
    {V100, FP16, 4},
    {A100, FP16, 8},
    {A100, DRIFT_BF16, 8},
    {A100, DRIFT_TF32, 4},
    {H100, FP16, 16},
    {H100, DRIFT_BF16, 16},
    {H100, DRIFT_TF32, 8},
    {H100, DRIFT_FP8E4M3, 32},
    {H100, DRIFT_FP8E5M2, 32},
    {B200, FP16, 16},
    {B200, DRIFT_TF32, 8},
    {B200, DRIFT_FP8E4M3, 32},
};

ParameterizedTestParameters(tc_detect, block_size)
{
    return cr_make_param_array(tc_block_case_t, BLOCKS, sizeof BLOCKS / sizeof BLOCKS[0]);
}

/* [F]'s method, sec. 3: the block size is where truncation stops applying. Terms: 2^16 at 0,
 * -2^16 at 1, and 2^-18 = 2^-9 * 2^-9 at position j (c = 0). In the first block everything
 * aligns to exponent 16, whose lsb 2^(16 - 23 - neab) >= 2^-9 truncates 2^-18 away: 0.
 * From the second block on, the block holds only 2^-18 (and c = 0): exact. */
ParameterizedTest(tc_block_case_t *c, tc_detect, block_size)
{
    int K = 3 * c->block;
    for (int j = 2; j < K; j++) {
        double a[96] = {0}, b[96] = {0}, r;
        a[0] = 256, b[0] = 256, a[1] = -256, b[1] = 256, a[j] = 0x1p-9, b[j] = 0x1p-9;
        cr_assert_eq(drift_tc_dot(&r, a, b, (size_t)K, NULL, c->arch, c->in, FP32), 0);
        cr_assert_eq(r, j < c->block ? 0.0 : 0x1p-18, "%s j=%d: %a", drift_tc_arch_name(c->arch), j, r);
    }
}

Test(tc_detect, neab)
{
    /* [D] one product 2 * 1 (exponent 1) and c = -(1 - 2^-24): exact 1 + 2^-24. The lsb is
     * 2^(1 - 23 - neab): V100 (0) truncates c to -(1 - 2^-22) -> 1 + 2^-22; A100 (1) to
     * -(1 - 2^-23) -> 1 + 2^-23; H100 (2) keeps c: 1 + 2^-24, which fp32 RZ cuts to 1. */
    cr_assert_eq(P(V100, FP32, -(1 - u24), 1, 2., 1.), 1 + 0x1p-22);
    cr_assert_eq(P(A100, FP32, -(1 - u24), 1, 2., 1.), 1 + 0x1p-23);
    cr_assert_eq(P(H100, FP32, -(1 - u24), 1, 2., 1.), 1.0);
}

Test(tc_detect, min_exp_limit)
{
    /* [D] bf16 products 2^-140 (2^-70 * 2^-70) and -2^-160 (2^-80 * 2^-80), c = 0. The
     * alignment exponent is clamped ([KM] min_exp_limit at b12b5a7: -133 in H100TC.m and
     * B200TC.m, -132 in A100TC.m and AdaTC.m), lsb 2^-158 or 2^-156: -2^-160 vanishes and
     * the result is 2^-140. Without a clamp the lsb 2^(-140-24) would keep it, and the exact
     * 2^-140 - 2^-160 would round toward zero at fp32's subnormal quantum 2^-149 (the lab's
     * A100 model before commit b12b5a7). */
    double a[2] = {0x1p-70, -0x1p-80}, b[2] = {0x1p-70, 0x1p-80}, r;
    drift_tc_arch_t archs[] = {A100, DRIFT_TC_ADA, H100, B200, DRIFT_TC_A2, DRIFT_TC_H200, DRIFT_TC_RTXPRO6000};
    for (size_t t = 0; t < sizeof archs / sizeof archs[0]; t++) {
        cr_assert_eq(drift_tc_dot(&r, a, b, 2, NULL, archs[t], DRIFT_BF16, FP32), 0);
        cr_assert_eq(r, 0x1p-140, "%s: %a", drift_tc_arch_name(archs[t]), r);
    }
}

Test(tc_detect, fp16_output_clamps)
{
    /* [D] fp16 -> fp16, c = 0, products 2^-25 (2^-12 * 2^-13: half of fp16's subnormal
     * quantum 2^-24) and a tiny t. The exact sum is just above the tie, so RNE gives 2^-24
     * when t survives the alignment and 0 (the tie to even) when it is truncated away. With
     * E clamped to min_exp the lsb is 2^(min_exp - 23 - neab) ([KM] b12b5a7 fp16-output
     * clamps): V100 -19, neab 0: 2^-42; A100/Ada -20, neab 1: 2^-44; H100/B200 -21,
     * neab 2: 2^-46 (the lab's earlier B200 -15 would give 2^-40).
     *   t = 2^-48 (2^-24 * 2^-24, subnormals): below every lsb: 0 everywhere.
     *   t = 2^-44 (2^-24 * 2^-20): V100 drops it (0), the others keep it (2^-24). */
    double a[2] = {0x1p-12, 0x1p-24}, b1[2] = {0x1p-13, 0x1p-24}, b2[2] = {0x1p-13, 0x1p-20}, r;
    struct {
        drift_tc_arch_t arch;
        double with_2m44;
    } cs[] = {{V100, 0.0}, {A100, 0x1p-24}, {DRIFT_TC_ADA, 0x1p-24}, {H100, 0x1p-24}, {B200, 0x1p-24}};
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
        cr_assert_eq(drift_tc_dot(&r, a, b1, 2, NULL, cs[t].arch, FP16, FP16), 0);
        cr_assert_eq(r, 0.0, "%s t=2^-48: %a", drift_tc_arch_name(cs[t].arch), r);
        cr_assert_eq(drift_tc_dot(&r, a, b2, 2, NULL, cs[t].arch, FP16, FP16), 0);
        cr_assert_eq(r, cs[t].with_2m44, "%s t=2^-44: %a", drift_tc_arch_name(cs[t].arch), r);
    }
    /* fp32 output keeps 2^-48 on every NVIDIA architecture (clamps -132/-133 are far) */
    cr_assert_eq(drift_tc_dot(&r, a, b1, 2, NULL, A100, FP16, FP32), 0);
    cr_assert_eq(r, 0x1p-25 + 0x1p-48);
}

Test(tc_detect, amd_matrix_cores)
{
    /* [D] fp16, fp32 output. (1) products 1, 2^-24, 2^-24 (2^-12 * 2^-12), 0 and c = 0:
     * exactly 1 + 2^-23. MI100 (exact block) and MI300X (aligned, 1 extra bit keeps 2^-24)
     * give it; MI250 adds pairwise in fp32: 1 + 2^-24 is a tie and goes to 1, then
     * 2^-24 + 0, then 1 + 2^-24 again: 1. A100 (1 extra bit, truncation) gives 1 + 2^-23.
     * (2) c = 1, products 2^-24 and 2^-48 (2^-24 * 2^-24, fp16 subnormals): exactly
     * 1 + 2^-24 + 2^-48, just above the tie. MI100 rounds it once: 1 + 2^-23. MI250 flushes
     * the subnormal inputs: 1 + 2^-24, a tie: 1. MI300X aligns the products at 2^-24 (lsb
     * 2^-48, both kept) and then shifts their sum to c's exponent keeping 7 extra bits
     * (lsb 2^-31): 2^-48 is lost (positive, rounding down), 1 + 2^-24 is a tie: 1. A100
     * truncates at c's exponent: 1. */
    double a1[4] = {1, 0x1p-12, 0x1p-12, 0}, b1[4] = {1, 0x1p-12, 0x1p-12, 0};
    double a2[2] = {0x1p-12, 0x1p-24}, b2[2] = {0x1p-12, 0x1p-24}, one = 1.0, r;
    struct {
        drift_tc_arch_t arch;
        double r1, r2;
    } cs[] = {{DRIFT_TC_MI100, 1 + 0x1p-23, 1 + 0x1p-23}, {DRIFT_TC_MI250, 1.0, 1.0},
        {DRIFT_TC_MI300X, 1 + 0x1p-23, 1.0}, {A100, 1 + 0x1p-23, 1.0}};
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
        cr_assert_eq(drift_tc_dot(&r, a1, b1, 4, NULL, cs[t].arch, FP16, FP32), 0);
        cr_assert_eq(r, cs[t].r1, "%s (1): %a", drift_tc_arch_name(cs[t].arch), r);
        cr_assert_eq(drift_tc_dot(&r, a2, b2, 2, &one, cs[t].arch, FP16, FP32), 0);
        cr_assert_eq(r, cs[t].r2, "%s (2): %a", drift_tc_arch_name(cs[t].arch), r);
    }
    /* the negative side of (2): MI300X shifts -(2^-24 + 2^-48) rounding toward -inf, so the
     * lost 2^-48 makes the magnitude one lsb (2^-31) larger: 1 - 2^-24 - 2^-31, which RNE
     * takes to 1 - 2^-24, as the exact sum does (MI100) */
    double m2[2] = {-0x1p-12, -0x1p-24};
    cr_assert_eq(drift_tc_dot(&r, m2, b2, 2, &one, DRIFT_TC_MI300X, FP16, FP32), 0);
    cr_assert_eq(r, 1 - 0x1p-24);
    /* AMD cores have fp32 output only; MI300X fp8 is AMD's FNUZ encoding, not the lab's */
    cr_assert_eq(drift_tc_dot(&r, a2, b2, 2, NULL, DRIFT_TC_MI100, FP16, FP16), DRIFT_EUNSUPPORTED);
    cr_assert_eq(drift_tc_dot(&r, a2, b2, 2, NULL, DRIFT_TC_MI300X, DRIFT_FP8E4M3, FP32), DRIFT_EUNSUPPORTED);
}

Test(tc_detect, subnormal_c_aligns_at_minus_126)
{
    /* [D] [KM] reads c's exponent from its fp32 encoding, so a subnormal c counts as 2^-126.
     * c = 2^-140, one bf16 product -2^-152 (-2^-76 * 2^-76): E = -126, lsb 2^-151 (H100)
     * truncates the product away and c survives. With c's true exponent the product would
     * be kept and RZ would give 2^-140 - 2^-149. */
    double a[1] = {-0x1p-76}, b[1] = {0x1p-76}, c = 0x1p-140, r;
    cr_assert_eq(drift_tc_dot(&r, a, b, 1, &c, H100, DRIFT_BF16, FP32), 0);
    cr_assert_eq(r, 0x1p-140);
}

Test(tc_detect, h100_fp8_accumulator_is_14_bits)
{
    /* [KM] H100TC.m sets neab = -10 for fp8: 13 fraction bits. 1 + 2^-13 survives,
     * 1 + 2^-14 does not (products 2^-7 * 2^-7 = 2^-14 in e4m3; c = 1). B200 keeps it. */
    double a[1] = {0x1p-7}, b[1] = {0x1p-7}, c = 1.0, r;
    cr_assert_eq(drift_tc_dot(&r, a, b, 1, &c, H100, DRIFT_FP8E4M3, FP32), 0);
    cr_assert_eq(r, 1.0);
    cr_assert_eq(drift_tc_dot(&r, a, b, 1, &c, B200, DRIFT_FP8E4M3, FP32), 0);
    cr_assert_eq(r, 1 + 0x1p-14);
    a[0] = 0x1p-6; /* 2^-13: kept by both */
    cr_assert_eq(drift_tc_dot(&r, a, b, 1, &c, H100, DRIFT_FP8E4M3, FP32), 0);
    cr_assert_eq(r, 1 + 0x1p-13);
}

Test(tc_detect, hopper_blackwell_fp8_fp16_output_is_two_fp16_blocks)
{
    /* [D] fp8 -> fp16 on H100/B200 (tc_model.h): products at k = 0, 1 mod 4 form the first
     * fp16 block FMA, k = 2, 3 mod 4 the second, c comes last. Products 1 (k = 0) and
     * 2^-6 * 2^-5 = 2^-11 twice. At k = 1 and 2 each 2^-11 meets 1 in a different block:
     * 1 + 2^-11 is a tie between fp16's 1 and 1 + 2^-10, RNE gives 1, twice: result 1,
     * although the exact sum 1 + 2^-10 is an fp16 number (what fp32 output gives). At
     * k = 1 and 4 both are in the first block: 1 + 2^-10 exactly. c = 1 with the two 2^-11
     * at k = 0 and 2: the blocks give 2^-11 then 2^-10 exactly, + c = 1 + 2^-10; were c the
     * first block's accumulator, 1 + 2^-11 would round to 1 twice. */
    drift_tc_arch_t arch[2] = {H100, B200};
    for (int i = 0; i < 2; i++) {
        double a[5] = {1, 0x1p-6, 0x1p-6, 0, 0}, b[5] = {1, 0x1p-5, 0x1p-5, 0, 0}, r;
        cr_assert_eq(drift_tc_dot(&r, a, b, 5, NULL, arch[i], DRIFT_FP8E4M3, FP16), 0);
        cr_assert_eq(r, 1.0, "%s: %a", drift_tc_arch_name(arch[i]), r);
        cr_assert_eq(drift_tc_dot(&r, a, b, 5, NULL, arch[i], DRIFT_FP8E4M3, FP32), 0);
        cr_assert_eq(r, 1 + 0x1p-10);
        a[2] = 0, a[4] = 0x1p-6, b[4] = 0x1p-5; /* the second small product moves to k = 4 */
        cr_assert_eq(drift_tc_dot(&r, a, b, 5, NULL, arch[i], DRIFT_FP8E4M3, FP16), 0);
        cr_assert_eq(r, 1 + 0x1p-10, "%s: %a", drift_tc_arch_name(arch[i]), r);
        cr_assert_eq(drift_tc_dot(&r, a, b, 5, NULL, arch[i], DRIFT_FP8E5M2, FP16), 0); /* E5M2 alike */
        cr_assert_eq(r, 1 + 0x1p-10);
        double a2[3] = {0x1p-6, 0, 0x1p-6}, b2[3] = {0x1p-5, 0, 0x1p-5}, c = 1.0;
        cr_assert_eq(drift_tc_dot(&r, a2, b2, 3, &c, arch[i], DRIFT_FP8E4M3, FP16), 0);
        cr_assert_eq(r, 1 + 0x1p-10, "%s: %a", drift_tc_arch_name(arch[i]), r);
    }
}

/* ---- tf32 truncation, overflow, special values, errors -------------------------------- */

Test(tc_model, tf32_inputs_are_truncated)
{
    /* 1 + 2^-11 + 2^-12 is an fp32 value; tf32 keeps 10 fraction bits. RNE would give
     * 1 + 2^-10, the hardware truncates to 1 ([F] sec. 5, A100 tf32). */
    double a[1] = {1 + 0x1p-11 + 0x1p-12}, b[1] = {1}, r;
    cr_assert_eq(drift_tc_dot(&r, a, b, 1, NULL, A100, DRIFT_TF32, FP32), 0);
    cr_assert_eq(r, 1.0);
    a[0] = -(1 + 0x1p-11 + 0x1p-12); /* toward zero on the magnitude */
    cr_assert_eq(drift_tc_dot(&r, a, b, 1, NULL, A100, DRIFT_TF32, FP32), 0);
    cr_assert_eq(r, -1.0);
}

Test(tc_model, overflow)
{
    /* [KM]: a result whose exponent field would be all ones is inf, even under RZ. */
    double a[1] = {0x1p100}, b[1] = {0x1p100}, r;
    cr_assert_eq(drift_tc_dot(&r, a, b, 1, NULL, H100, DRIFT_BF16, FP32), 0);
    cr_assert_eq(r, INFINITY);
    double c[2] = {65504.0, 16.0}, one[2] = {1, 1}; /* fp16: 65520 rounds (RNE) to inf */
    cr_assert_eq(drift_tc_dot(&r, c, one, 2, NULL, A100, FP16, FP16), 0);
    cr_assert_eq(r, INFINITY);
}

Test(tc_model, special_values)
{
    double one[2] = {1, 1}, r;
    double x[2] = {NAN, 1};
    cr_assert_eq(drift_tc_dot(&r, x, one, 2, NULL, H100, FP16, FP32), 0);
    cr_assert(isnan(r));
    double y[2] = {INFINITY, 0}, z[2] = {0, 1}; /* inf * 0 */
    cr_assert_eq(drift_tc_dot(&r, y, z, 2, NULL, H100, FP16, FP32), 0);
    cr_assert(isnan(r));
    double w[2] = {INFINITY, -INFINITY};
    cr_assert_eq(drift_tc_dot(&r, w, one, 2, NULL, H100, FP16, FP32), 0);
    cr_assert(isnan(r));
    double v[2] = {INFINITY, 1};
    cr_assert_eq(drift_tc_dot(&r, v, one, 2, NULL, H100, FP16, FP32), 0);
    cr_assert_eq(r, INFINITY);
    double c = -INFINITY;
    cr_assert_eq(drift_tc_dot(&r, one, one, 2, &c, V100, FP16, FP32), 0);
    cr_assert_eq(r, -INFINITY);
}

Test(tc_model, errors)
{
    double a[1] = {1}, r;
    drift_tc_params_t p;
    cr_assert_eq(drift_tc_dot(&r, a, a, 1, NULL, V100, DRIFT_BF16, FP32), DRIFT_EUNSUPPORTED);
    cr_assert_eq(drift_tc_dot(&r, a, a, 1, NULL, A100, DRIFT_FP8E4M3, FP32), DRIFT_EUNSUPPORTED);
    cr_assert_eq(drift_tc_dot(&r, a, a, 1, NULL, H100, FP32, FP32), DRIFT_EUNSUPPORTED);
    cr_assert_eq(drift_tc_dot(&r, a, a, 1, NULL, H100, FP16, DRIFT_BF16), DRIFT_EUNSUPPORTED);
    cr_assert_eq(drift_tc_dot(&r, a, a, 1, NULL, DRIFT_TC_NARCH, FP16, FP32), DRIFT_EINVAL);
    double bad[1] = {1 + 0x1p-20}; /* not an fp16 value */
    cr_assert_eq(drift_tc_dot(&r, bad, a, 1, NULL, H100, FP16, FP32), DRIFT_EINVAL);
    double badtf[1] = {1 + 0x1p-40}; /* tf32 inputs must be fp32 values */
    cr_assert_eq(drift_tc_dot(&r, badtf, a, 1, NULL, H100, DRIFT_TF32, FP32), DRIFT_EINVAL);
    cr_assert_eq(drift_tc_dot(NULL, a, a, 1, NULL, H100, FP16, FP32), DRIFT_EINVAL);
    cr_assert_eq(drift_tc_params(&p, H100, DRIFT_FP8E5M2), 0);
    cr_assert(p.block == 32 && p.neab == -10 && p.min_exp == -133);
    cr_assert_eq(drift_tc_dot(&r, a, a, 0, NULL, H100, FP16, FP32), 0); /* n = 0: the rounded c */
    cr_assert_eq(r, 0.0);
}

/* ---- independent MPFR emulation of [KM]'s model, on random data -------------------------- */

typedef struct {
    int block, neab, min_exp;
    int then_add; /* B200 fp8: products aligned alone, truncated to fp32, then + c (RNE) */
    int via_hmma; /* Hopper/Blackwell fp8 -> fp16: two fp16 blocks (k%4 < 2, then >= 2), + c */
} emu_tc_t;

/* The published parameters at b12b5a7 (tc_model.h), B200 fp8 as fitted to the hardware. */
static emu_tc_t emu_params(drift_tc_arch_t arch, drift_format_t in, drift_format_t out)
{
    int fp8 = in == DRIFT_FP8E4M3 || in == DRIFT_FP8E5M2, h = in == FP16 && out == FP16;
    switch (arch) {
    case V100: return (emu_tc_t){4, 0, h ? -19 : INT_MIN, 0, 0};
    case A100: return (emu_tc_t){in == DRIFT_TF32 ? 4 : 8, 1, h ? -20 : -132, 0, 0};
    case DRIFT_TC_ADA: return (emu_tc_t){fp8 ? 16 : in == DRIFT_TF32 ? 4 : 8, fp8 ? -10 : 1, h ? -20 : -132, 0, 0};
    case H100:
        if (fp8 && out == FP16) return (emu_tc_t){32, 2, -21, 0, 1};
        return (emu_tc_t){fp8 ? 32 : in == DRIFT_TF32 ? 8 : 16, fp8 ? -10 : 2, h ? -21 : -133, 0, 0};
    default:
        if (fp8 && out == FP16) return (emu_tc_t){32, 2, -21, 0, 1};
        return (emu_tc_t){fp8 ? 32 : in == DRIFT_TF32 ? 8 : 16, 2, h ? -21 : -133, fp8, 0};
    }
}

/* x rounded once to (precision p, IEEE emin) in mode r, subnormals included, no overflow
 * handling (callers stay in range). */
static double mp_fmt(mpfr_srcptr x, int p, int emin, mpfr_rnd_t r)
{
    return oracle_round_d(x, p, emin, INT_MAX, r); /* tests/oracle.h */
}

static double emu_trunc_tf32(double x)
{
    mpfr_t t;
    mpfr_init2(t, 64);
    mpfr_set_d(t, x, MPFR_RNDN);
    double r = x == 0 ? x : mp_fmt(t, 11, -126, MPFR_RNDZ);
    mpfr_clear(t);
    return r;
}

/* fp16 (or inf) from the exact value x: RNE, overflow at 65520 (halfway to 2^16). */
static double mp_fp16(mpfr_srcptr x)
{
    if (mpfr_zero_p(x)) return 0.0;
    if (mpfr_cmpabs_ui(x, 65520) >= 0) return mpfr_sgn(x) < 0 ? -INFINITY : INFINITY;
    return mp_fmt(x, 11, -14, MPFR_RNDN);
}

/* Hopper/Blackwell fp8 -> fp16 as the compiler emulates mma.sync.m16n8k32 (tc_model.h): the
 * inputs taken as fp16 (exponents from fp16's emin, -14), the fp16 -> fp16 block FMA (neab 2,
 * clamp -21, RNE) over the products at k % 4 < 2 from 0, then over k % 4 >= 2 onto that,
 * then c added in fp16 (RNE). Written from that description, apart from tc_model.c. */
static double emu_via_hmma(const double *a, const double *b, size_t m, double c)
{
    mpfr_t x, S;
    mpfr_inits2(256, x, S, (mpfr_ptr)0);
    double acc = 0.0;
    for (int half = 0; half < 2 && !isinf(acc); half++) {
        long E = LONG_MIN;
        for (size_t k = 0; k < m; k++) {
            if ((int)(k % 4 >= 2) != half || a[k] == 0 || b[k] == 0) continue;
            long ea = ilogb(a[k]) < -14 ? -14 : ilogb(a[k]), eb = ilogb(b[k]) < -14 ? -14 : ilogb(b[k]);
            if (ea + eb > E) E = ea + eb;
        }
        if (acc != 0 && ilogb(acc) > E) E = ilogb(acc);
        if (E == LONG_MIN) continue; /* nothing at all: acc stays 0 */
        if (E < -21) E = -21;
        mpfr_set_zero(S, 1);
        for (size_t k = 0; k <= m; k++) {
            if (k < m && (int)(k % 4 >= 2) != half) continue;
            mpfr_set_d(x, k < m ? a[k] : acc, MPFR_RNDN);
            if (k < m) mpfr_mul_d(x, x, b[k], MPFR_RNDN);
            mpfr_div_2si(x, x, E - 25, MPFR_RNDN);
            mpfr_trunc(x, x);
            mpfr_add(S, S, x, MPFR_RNDN);
        }
        mpfr_mul_2si(S, S, E - 25, MPFR_RNDN);
        acc = mp_fp16(S);
    }
    double r;
    if (isinf(acc) || isinf(c)) {
        r = acc + c; /* inf + -inf: NaN, as the fp16 addition */
    } else {
        mpfr_set_d(x, acc, MPFR_RNDN);
        mpfr_add_d(x, x, c, MPFR_RNDN); /* exact at 256 bits */
        r = mp_fp16(x);
    }
    mpfr_clears(x, S, (mpfr_ptr)0);
    return r;
}

static double emu_dot(const double *a0, const double *b0, size_t n, double c0, drift_tc_arch_t arch, drift_format_t in,
    drift_format_t out)
{
    emu_tc_t p = emu_params(arch, in, out);
    long emin_in = drift_format_info(in)->emin;
    mpfr_t x, S;
    mpfr_inits2(256, x, S, (mpfr_ptr)0);
    /* c is rounded to the output format in the output mode */
    mpfr_set_d(x, c0, MPFR_RNDN);
    double c = c0 == 0 ? 0.0 : out == FP32 ? mp_fmt(x, 24, -126, MPFR_RNDZ) : mp_fmt(x, 11, -14, MPFR_RNDN);
    if (out == FP16 && fabs(c0) >= 65520.0) c = copysign(INFINITY, c0); /* RNE overflow of fp16 */
    if (isinf(c)) { /* finite products cannot change an infinite accumulator */
        mpfr_clears(x, S, (mpfr_ptr)0);
        return c;
    }
    for (size_t k0 = 0; k0 < n; k0 += (size_t)p.block) {
        size_t m = n - k0 < (size_t)p.block ? n - k0 : (size_t)p.block;
        double a[32], b[32];
        for (size_t k = 0; k < m; k++) {
            a[k] = in == DRIFT_TF32 ? emu_trunc_tf32(a0[k0 + k]) : a0[k0 + k];
            b[k] = in == DRIFT_TF32 ? emu_trunc_tf32(b0[k0 + k]) : b0[k0 + k];
        }
        if (p.via_hmma) {
            c = emu_via_hmma(a, b, m, c);
            continue;
        }
        long E = LONG_MIN;
        for (size_t k = 0; k < m; k++) {
            if (a[k] == 0 || b[k] == 0) continue;
            mpfr_set_d(x, a[k], MPFR_RNDN);
            long ea = (long)mpfr_get_exp(x) - 1;
            mpfr_set_d(x, b[k], MPFR_RNDN);
            long eb = (long)mpfr_get_exp(x) - 1;
            long e = (ea < emin_in ? emin_in : ea) + (eb < emin_in ? emin_in : eb);
            if (e > E) E = e;
        }
        if (c != 0 && !p.then_add) {
            mpfr_set_d(x, c, MPFR_RNDN);
            long e = (long)mpfr_get_exp(x) - 1;
            if (e < -126) e = -126;
            if (e > E) E = e;
        }
        if (E == LONG_MIN) {
            if (!p.then_add || c == 0) c = 0.0; /* then_add: no product, c stays */
            continue;
        }
        if (E < p.min_exp) E = p.min_exp;
        long lsb = E - 23 - p.neab;
        mpfr_set_zero(S, 1);
        for (size_t k = 0; k <= m; k++) {
            if (k < m) {
                mpfr_set_d(x, a[k], MPFR_RNDN);
                mpfr_mul_d(x, x, b[k], MPFR_RNDN);
            } else {
                mpfr_set_d(x, p.then_add ? 0.0 : c, MPFR_RNDN);
            }
            mpfr_div_2si(x, x, lsb, MPFR_RNDN);
            mpfr_trunc(x, x);
            mpfr_add(S, S, x, MPFR_RNDN);
        }
        mpfr_mul_2si(S, S, lsb, MPFR_RNDN);
        if (p.then_add) { /* S truncated to fp32, then S + c rounded once to nearest */
            double P = mpfr_zero_p(S) ? 0.0 : mp_fmt(S, 24, -126, MPFR_RNDZ);
            mpfr_set_d(x, P, MPFR_RNDN);
            mpfr_add_d(x, x, c, MPFR_RNDN); /* exact at 256 bits */
            int h = out == FP16;
            double big = h ? 65520.0 : 0x1.ffffffp127; /* halfway to the next binade: RNE overflows */
            mpfr_abs(S, x, MPFR_RNDN);
            c = mpfr_zero_p(x)            ? 0.0
                : mpfr_cmp_d(S, big) >= 0 ? (mpfr_sgn(x) < 0 ? -INFINITY : INFINITY)
                                          : mp_fmt(x, h ? 11 : 24, h ? -14 : -126, MPFR_RNDN);
        } else if (mpfr_zero_p(S)) {
            c = 0.0;
        } else if (out == FP32) {
            mpfr_abs(x, S, MPFR_RNDN);
            int pe = 24 + (p.neab < 0 ? p.neab : 0);
            c = mpfr_cmp_d(x, 0x1p128) >= 0 ? (mpfr_sgn(S) < 0 ? -INFINITY : INFINITY) : mp_fmt(S, pe, -126, MPFR_RNDZ);
        } else {
            mpfr_abs(x, S, MPFR_RNDN);
            c = mpfr_cmp_d(x, 65520.0) >= 0 ? (mpfr_sgn(S) < 0 ? -INFINITY : INFINITY) : mp_fmt(S, 11, -14, MPFR_RNDN);
        }
    }
    mpfr_clears(x, S, (mpfr_ptr)0);
    return c;
}

typedef struct {
    drift_tc_arch_t arch;
    drift_format_t in, out;
} tc_cfg_case_t;

static tc_cfg_case_t CFGS[] = {
    {V100, FP16, FP32},
    {V100, FP16, FP16},
    {A100, FP16, FP32},
    {A100, DRIFT_BF16, FP32},
    {A100, DRIFT_TF32, FP32},
    {A100, FP16, FP16},
    {H100, FP16, FP32},
    {H100, DRIFT_BF16, FP32},
    {H100, DRIFT_TF32, FP32},
    {H100, DRIFT_FP8E4M3, FP32},
    {H100, DRIFT_FP8E5M2, FP16},
    {B200, FP16, FP16},
    {B200, DRIFT_BF16, FP32},
    {B200, DRIFT_FP8E5M2, FP32},
    {B200, DRIFT_FP8E4M3, FP16},
    {DRIFT_TC_ADA, DRIFT_FP8E4M3, FP32},
    {DRIFT_TC_ADA, DRIFT_FP8E5M2, FP16},
    {DRIFT_TC_ADA, DRIFT_BF16, FP32},
};

/* Inputs spread over 2^-20 .. 2^20 (and many more binades for bf16/tf32, where exponents
 * are cheap), with zeros, signs and subnormals of the input format, so that alignment,
 * truncation, cancellation and normalisation all happen. */
static void fill_in(double *x, size_t n, drift_format_t in, uint32_t point)
{
    drift_stream_t s;
    drift_stream_init(&s, 3, drift_fnv1a32("test_tc_model"), point, in);
    int span = in == DRIFT_BF16 || in == DRIFT_TF32 ? 60 : in == FP16 ? 12 : 6;
    for (size_t t = 0; t < n; t++) {
        double v = drift_stream_normal(&s) * ldexp(1.0, (int)drift_stream_below(&s, (uint32_t)(2 * span + 1)) - span);
        if (drift_stream_below(&s, 10) == 0) v = 0;
        if (in == DRIFT_TF32)
            x[t] = (double)(float)v; /* fp32 values: the model truncates them */
        else
            x[t] = drift_rne(v, in);
        if (isinf(x[t])) x[t] = 0;
    }
}

ParameterizedTestParameters(tc_model, equals_mpfr_emulation)
{
    return cr_make_param_array(tc_cfg_case_t, CFGS, sizeof CFGS / sizeof CFGS[0]);
}

ParameterizedTest(tc_cfg_case_t *cfg, tc_model, equals_mpfr_emulation)
{
    size_t ns[] = {1, 3, 16, 33, 100};
    for (size_t t = 0; t < 5; t++)
        for (uint32_t rep = 0; rep < 40; rep++) {
            size_t n = ns[t];
            double a[100], b[100], cs[100], r;
            fill_in(a, n, cfg->in, 100 * rep + 1);
            fill_in(b, n, cfg->in, 100 * rep + 2);
            fill_in(cs, 1, DRIFT_BF16, 100 * rep + 3);
            double c = rep % 3 == 0 ? 0.0 : cs[0];
            cr_assert_eq(drift_tc_dot(&r, a, b, n, &c, cfg->arch, cfg->in, cfg->out), 0);
            double e = emu_dot(a, b, n, c, cfg->arch, cfg->in, cfg->out);
            cr_assert(memcmp(&r, &e, sizeof r) == 0, "%s %s->%s n=%zu rep=%u: %a, emulation %a",
                drift_tc_arch_name(cfg->arch), drift_format_name(cfg->in), drift_format_name(cfg->out), n, rep, r, e);
        }
}

/* The GEMM entry point gives drift_tc_dot's bits for every output, with C as initial c,
 * whatever the thread count. */
Test(tc_model, gemm_equals_dot)
{
    size_t M = 7, N = 45, K = 77;
    double A[7 * 77], B[77 * 45], C[7 * 45], C0[7 * 45], C4[7 * 45];
    for (size_t c = 0; c < sizeof CFGS / sizeof CFGS[0]; c++) {
        fill_in(A, M * K, CFGS[c].in, 11);
        fill_in(B, K * N, CFGS[c].in, 12);
        fill_in(C0, M * N, DRIFT_FP16, 13);
        memcpy(C, C0, sizeof C);
#ifdef _OPENMP
        omp_set_num_threads(1);
#endif
        cr_assert_eq(drift_tc_gemm(C, A, B, M, N, K, 1, CFGS[c].arch, CFGS[c].in, CFGS[c].out), 0);
        memcpy(C4, C0, sizeof C);
#ifdef _OPENMP
        omp_set_num_threads(4);
#endif
        cr_assert_eq(drift_tc_gemm(C4, A, B, M, N, K, 1, CFGS[c].arch, CFGS[c].in, CFGS[c].out), 0);
        cr_assert_eq(memcmp(C, C4, sizeof C), 0);
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                double col[77], r;
                for (size_t k = 0; k < K; k++) col[k] = B[k * N + j];
                cr_assert_eq(
                    drift_tc_dot(&r, A + i * K, col, K, &C0[i * N + j], CFGS[c].arch, CFGS[c].in, CFGS[c].out), 0);
                cr_assert(memcmp(&r, &C[i * N + j], sizeof r) == 0, "cfg %zu (%zu,%zu): gemm %a dot %a", c, i, j,
                    C[i * N + j], r);
            }
    }
}

Test(tc_model, c_is_rounded_as_the_published_gemm_rounds_it)
{
    /* [KM] GEMM.m rounds C with CPFloat before any block: round 4 (toward zero) for fp32
     * output, round 1 (nearest-even) for fp16. 0x1.0000018p0 lies 0.75 ulp (2^-23) above 1:
     * toward zero 1, nearest 0x1.000002p0 (drift-calc dot --c). */
    double r, zero = 0.0;
    cr_assert_eq(drift_tc_round_c(&r, 0x1.0000018p0, FP32), 0);
    cr_assert_eq(r, 1.0);
    cr_assert_eq(drift_tc_round_c(&r, 0x1.0000018p0, FP16), 0);
    cr_assert_eq(r, 1.0);
    cr_assert_eq(drift_tc_round_c(&r, 1 + 0x1.8p-11, FP16), 0); /* 0.75 fp16 ulp above 1 */
    cr_assert_eq(r, 1 + 0x1p-10);
    cr_assert_eq(drift_tc_round_c(&r, 1.0, DRIFT_BF16), DRIFT_EUNSUPPORTED);
    double c = 0x1.0000018p0;
    cr_assert_eq(drift_tc_dot(&r, &zero, &zero, 1, &c, H100, FP16, FP32), 0);
    cr_assert_eq(r, 1.0); /* the dot product sees the same c */
}

Test(tc_model, mi100_block_is_the_exactly_rounded_sum)
{
    /* [KM] MI100MC.m: each block (4 fp16 or 2 bf16 products) and c summed exactly and
     * rounded once to fp32, nearest-even. Checked block by block against MPFR
     * (drift_exact_dot_mpfr, c as the term c * 1), on inputs spread over many binades so that
     * the fixed-point fast path and its wide-span fallback both run. Tolerance 0. */
    drift_format_t ins[2] = {FP16, DRIFT_BF16};
    for (int f = 0; f < 2; f++)
        for (uint32_t rep = 0; rep < 400; rep++) {
            size_t n = 1 + rep % 9;
            double a[10], b[10], cs[1], r;
            fill_in(a, n, ins[f], 7000 + 3 * rep);
            fill_in(b, n, ins[f], 7001 + 3 * rep);
            fill_in(cs, 1, DRIFT_BF16, 7002 + 3 * rep);
            double c = cs[0] * (rep % 5 == 0 ? 0x1p100 : 1.0); /* some huge c: the wide path */
            cr_assert_eq(drift_tc_dot(&r, a, b, n, &c, DRIFT_TC_MI100, ins[f], FP32), 0);
            int blk = ins[f] == FP16 ? 4 : 2;
            double acc;
            cr_assert_eq(drift_tc_round_c(&acc, c, FP32), 0);
            for (size_t k0 = 0; k0 < n; k0 += (size_t)blk) {
                size_t m = n - k0 < (size_t)blk ? n - k0 : (size_t)blk;
                double x[5], y[5];
                for (size_t k = 0; k < m; k++) x[k] = a[k0 + k], y[k] = b[k0 + k];
                x[m] = acc, y[m] = 1.0;
                cr_assert_eq(drift_exact_dot_mpfr(&acc, x, y, m + 1, FP32, DRIFT_RNE), 0);
                if (acc == 0) acc = 0.0; /* the model's exact zero is +0 */
            }
            cr_assert(r == acc && signbit(r) == signbit(acc), "%s n=%zu rep=%u: %a, MPFR %a", drift_format_name(ins[f]),
                n, rep, r, acc);
        }
}

Test(tc_model, amd_gemm_equals_dot)
{
    /* drift_tc_gemm takes its own paths for the AMD models (MI250: float arithmetic across a
     * row; MI100, MI300X: blocks per output on packed operands): every output must have
     * drift_tc_dot's bits, at 1 and 4 threads, on inputs with subnormals and zeros (fill_in),
     * K not a multiple of any block. Tolerance 0: the same arithmetic. */
    const tc_cfg_case_t amd[] = {{DRIFT_TC_MI100, FP16, FP32}, {DRIFT_TC_MI100, DRIFT_BF16, FP32},
        {DRIFT_TC_MI250, FP16, FP32}, {DRIFT_TC_MI250, DRIFT_BF16, FP32}, {DRIFT_TC_MI300X, FP16, FP32},
        {DRIFT_TC_MI300X, DRIFT_BF16, FP32}, {DRIFT_TC_MI300X, DRIFT_TF32, FP32}};
    size_t M = 5, N = 37, K = 23;
    double A[5 * 23], B[23 * 37], C[5 * 37], C0[5 * 37], C4[5 * 37];
    for (size_t c = 0; c < sizeof amd / sizeof amd[0]; c++) {
        fill_in(A, M * K, amd[c].in, 21);
        fill_in(B, K * N, amd[c].in, 22);
        fill_in(C0, M * N, DRIFT_BF16, 23);
        for (int threads = 1; threads <= 4; threads += 3) {
#ifdef _OPENMP
            omp_set_num_threads(threads);
#endif
            double *out = threads == 1 ? C : C4;
            memcpy(out, C0, sizeof C);
            cr_assert_eq(drift_tc_gemm(out, A, B, M, N, K, 1, amd[c].arch, amd[c].in, amd[c].out), 0);
        }
        cr_assert_eq(memcmp(C, C4, sizeof C), 0, "%s: thread count changed bits", drift_tc_arch_name(amd[c].arch));
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                double col[23], r;
                for (size_t k = 0; k < K; k++) col[k] = B[k * N + j];
                cr_assert_eq(
                    drift_tc_dot(&r, A + i * K, col, K, &C0[i * N + j], amd[c].arch, amd[c].in, amd[c].out), 0);
                cr_assert(memcmp(&r, &C[i * N + j], sizeof r) == 0, "%s %s (%zu,%zu): gemm %a dot %a",
                    drift_tc_arch_name(amd[c].arch), drift_format_name(amd[c].in), i, j, C[i * N + j], r);
            }
    }
}

/* The GEMM engines' SIMD level for the calls that follow: 0 the best this CPU has, 1 no
 * AVX-512 (DRIFT_TC_NO_AVX512), 2 portable C (DRIFT_NO_SIMD as well). */
static void use_simd_level(int lv)
{
    unsetenv("DRIFT_TC_NO_AVX512"), unsetenv("DRIFT_NO_SIMD");
    if (lv >= 1) setenv("DRIFT_TC_NO_AVX512", "1", 1);
    if (lv >= 2) setenv("DRIFT_NO_SIMD", "1", 1);
}

/* The vectorised AMD GEMMs (MI100's TwoSum rows, MI300X's branch-free late-c rows, MI250's
 * float rows; lib/ops/tc_gemm_amd.c, tc_gemm_packed.c) against the scalar block model, the
 * readable reference, output by output through drift_tc_dot: on data of one scale (N(0,1),
 * where the fast paths take every output), on C values large enough that an accumulator
 * overflows to inf inside K (the per-output fallback and the kept inf), with N not a multiple
 * of any vector width, in each of the AVX-512, AVX2 and portable builds of the same C (the
 * library reads DRIFT_TC_NO_AVX512 and DRIFT_NO_SIMD at each call). Tolerance 0. */
static void fill_normal(double *x, size_t n, drift_format_t in, uint32_t point, double scale)
{
    drift_stream_t s;
    drift_stream_init(&s, 5, drift_fnv1a32("test_tc_model/amd"), point, in);
    for (size_t t = 0; t < n; t++) x[t] = drift_rne(drift_stream_normal(&s) * scale, in);
}

Test(tc_model, amd_gemm_fast_paths_equal_the_model)
{
    const tc_cfg_case_t amd[] = {{DRIFT_TC_MI100, FP16, FP32}, {DRIFT_TC_MI100, DRIFT_BF16, FP32},
        {DRIFT_TC_MI250, FP16, FP32}, {DRIFT_TC_MI250, DRIFT_BF16, FP32}, {DRIFT_TC_MI300X, FP16, FP32},
        {DRIFT_TC_MI300X, DRIFT_BF16, FP32}, {DRIFT_TC_MI300X, DRIFT_TF32, FP32}};
    enum { M = 6, N = 53, K = 37 };
    static double A[M * K], B[K * N], C[M * N], C0[M * N];
    for (size_t c = 0; c < sizeof amd / sizeof amd[0]; c++)
        for (int data = 0; data < 2; data++) {
            /* data 1: every third c is +-FLT_MAX, and bf16/tf32 products near 2^104, half an
             * ulp of FLT_MAX, so that some accumulators overflow to inf and stay there; fp16
             * products (below 2^32) beside such a c span more than 53 bits: the fallback */
            double in_scale = data && amd[c].in != FP16 ? 0x1p52 : 1.0;
            fill_normal(A, M * K, amd[c].in, 31 + (uint32_t)data, in_scale);
            fill_normal(B, K * N, amd[c].in, 33 + (uint32_t)data, in_scale);
            fill_normal(C0, M * N, DRIFT_FP32, 35 + (uint32_t)data, 4.0);
            for (size_t t = 0; t < M * N && data; t += 3) C0[t] = copysign(0x1.fffffep127, C0[t]);
            for (int lv = 0; lv < 3; lv++) {
                use_simd_level(lv);
                memcpy(C, C0, sizeof C);
                cr_assert_eq(drift_tc_gemm(C, A, B, M, N, K, 1, amd[c].arch, amd[c].in, amd[c].out), 0);
                size_t ninf = 0;
                for (size_t t = 0; t < M * N; t++) ninf += isinf(C[t]) != 0;
                cr_assert(data == 0 || amd[c].in == FP16 || ninf > 0, "%s %s: no accumulator overflowed",
                    drift_tc_arch_name(amd[c].arch), drift_format_name(amd[c].in));
                for (size_t i = 0; i < M; i++)
                    for (size_t j = 0; j < N; j++) {
                        double col[K], r;
                        for (size_t k = 0; k < K; k++) col[k] = B[k * N + j];
                        cr_assert_eq(
                            drift_tc_dot(&r, A + i * K, col, K, &C0[i * N + j], amd[c].arch, amd[c].in, FP32), 0);
                        cr_assert(memcmp(&r, &C[i * N + j], sizeof r) == 0,
                            "%s %s data %d level %d (%zu,%zu): gemm %a dot %a", drift_tc_arch_name(amd[c].arch),
                            drift_format_name(amd[c].in), data, lv, i, j, C[i * N + j], r);
                    }
            }
            use_simd_level(0);
        }
}

Test(tc_model, mi100_gemm_rounds_a_tie_broken_by_a_tiny_product)
{
    /* Hand derivation: c = 2^10 and the products 2^-14 (half an fp32 ulp of 2^10: a tie) and
     * 2^-48. Their exact sum lies just above the tie, so MI100's one rounding gives
     * 2^10 + 2^-13. The sum spans 59 bits: in double it rounds to the tie itself, and a GEMM
     * that rounded the double sum to fp32 would give 2^10 (ties to even). fp16: a = b =
     * [2^-7, 2^-24]; bf16 (blocks of 2): the same values. Also the mirror image, c = -2^10.
     * The GEMM (1 x 3 outputs, the middle one the case) must give what drift_tc_dot gives. */
    drift_format_t ins[2] = {FP16, DRIFT_BF16};
    for (int f = 0; f < 2; f++)
        for (int sg = -1; sg <= 1; sg += 2) {
            double A[2] = {0x1p-7, sg * 0x1p-24}, B[2 * 3] = {0x1p-7, sg * 0x1p-7, 1.0, 0x1p-24, 0x1p-24, 0.5};
            double C[3] = {0.25, sg * 0x1p10, 3.0}, r;
            cr_assert_eq(drift_tc_gemm(C, A, B, 1, 3, 2, 1, DRIFT_TC_MI100, ins[f], FP32), 0);
            cr_assert_eq(C[1], sg * (0x1p10 + 0x1p-13), "%s sign %d: %a", drift_format_name(ins[f]), sg, C[1]);
            double col[2] = {B[1], B[4]}, c = sg * 0x1p10;
            cr_assert_eq(drift_tc_dot(&r, A, col, 2, &c, DRIFT_TC_MI100, ins[f], FP32), 0);
            cr_assert_eq(r, C[1]);
        }
}

/* The register-tile GEMMs (lib/ops/tc_gemm_tiles.c: MI100's TwoSum tiles, MI250's pairwise float
 * tiles, MI300X's and B200
 * fp8's float tiles) against the scalar block model, output by output through drift_tc_dot.
 * The expected values come from the scalar model (tc_model.c), which is the independent
 * source here: it is the readable transcription of the published models and reproduces the
 * measured hardware outputs bit for bit (tests/test_tc_hw.c for B200 fp8; the MI*MC.m models
 * for the AMD ones); the tiles share none of its code (they regroup the same arithmetic across
 * 4 x 16 outputs in vector lanes, with other intermediate forms). Each data kind aims at an
 * edge of the tiles' arithmetic:
 *   0 N(0,1): the common case (every tile, no fallback);
 *   1 ties: inputs +-{1, 1.5} * 2^k (|k| <= 2) and c near 2^24 (fp32) or 2^11 (fp16) with
 *     an even integer value, so that many sums fall exactly half-way between two outputs
 *     (RNE's ties, MI300X's round-toward--inf shifts of exact integers);
 *   2 inf accumulators: every third c at the output's largest finite value and inputs scaled
 *     up, so that some accumulators overflow inside K and must stay inf;
 *   3 subnormals: a third of the inputs subnormal in the input format, and c subnormal in
 *     the output format (c's exponent clamp at -126, fp16's subnormal results);
 *   4 cancellation: each pair of products along K is x*y and x*(-y), so every block's
 *     products sum to exactly 0 (S == 0 beside c), with c = +-0 alternately, and one row and
 *     one column of zeros (-0: at (2, 5) c and every product are -0; no product at all: the
 *     result is c, +0 for -0);
 *   5 (MI300X bf16, blocks of 8) inf in the float tiles: inputs +-2^50, the edge of the tiles' range, so
 *     that 8 products of 2^100 add 2^103, half an ulp of FLT_MAX, to c = FLT_MAX: a tie that
 *     rounds to inf (even), after which the accumulator must stay inf.
 * M = 9, N = 37 (tails of the 4 x 16 tiles), K = 70 (blocks of 2, 4, 8 and 32 with a short
 * last one; B200's second int32 sum), in the AVX-512, AVX2 and portable builds (the library
 * reads DRIFT_TC_NO_AVX512 and DRIFT_NO_SIMD at each call; without AVX-512, MI100 and MI300X
 * take their row paths in tc_gemm_amd.c and B200 fp8 the tiles' narrower builds), at 1 and 3
 * threads. Tolerance 0. */
static void fill_edge(double *x, size_t n, drift_format_t f, int kind, int is_c, uint32_t point)
{
    drift_stream_t s;
    drift_stream_init(&s, 9, drift_fnv1a32("test_tc_model/tiles"), point, (uint32_t)(kind * 16 + f));
    const drift_format_info_t *fi = drift_format_info(f == DRIFT_TF32 ? DRIFT_FP32 : f);
    for (size_t t = 0; t < n; t++) {
        double v = drift_stream_normal(&s), sg = drift_stream_below(&s, 2) ? -1.0 : 1.0;
        if (kind == 1) {
            v = is_c ? sg * (f == FP32 ? 0x1p24 + 2.0 * drift_stream_below(&s, 64)
                                       : 0x1p11 + 2.0 * drift_stream_below(&s, 64))
                     : sg * (drift_stream_below(&s, 2) ? 1.5 : 1.0) * ldexp(1.0, (int)drift_stream_below(&s, 5) - 2);
        } else if (kind == 2) {
            v = is_c ? (t % 3 == 0 ? sg * fi->max_finite : v)
                     : v * (f == FP16                               ? 8.0
                               : f == DRIFT_BF16 || f == DRIFT_TF32 ? 0x1p52
                                                                    : 4.0);
        } else if (kind == 3) {
            if (drift_stream_below(&s, 3) == 0 || is_c) v = sg * fi->min_normal * drift_stream_uniform(&s);
        } else if (kind == 4 && is_c) {
            v = t % 2 ? -0.0 : 0.0;
        }
        double r = drift_rne(v, f == DRIFT_TF32 ? DRIFT_TF32 : f);
        x[t] = isinf(r) ? sg * fi->max_finite : r;
    }
}

Test(tc_model, tile_gemms_equal_the_model_on_edge_cases)
{
    const tc_cfg_case_t cfg[] = {{DRIFT_TC_MI100, FP16, FP32}, {DRIFT_TC_MI100, DRIFT_BF16, FP32},
        {DRIFT_TC_MI300X, FP16, FP32}, {DRIFT_TC_MI300X, DRIFT_BF16, FP32}, {DRIFT_TC_MI300X, DRIFT_TF32, FP32},
        {B200, DRIFT_FP8E4M3, FP32}, {B200, DRIFT_FP8E4M3, FP16}, {B200, DRIFT_FP8E5M2, FP32},
        {B200, DRIFT_FP8E5M2, FP16}, {DRIFT_TC_MI250, FP16, FP32}, {DRIFT_TC_MI250, DRIFT_BF16, FP32}};
    enum { M = 9, N = 37, K = 70 };
    static double A[M * K], B[K * N], C[M * N], C0[M * N], C1[M * N];
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++)
        for (int kind = 0; kind < 6; kind++) {
            if (kind == 5 && (cfg[c].arch != DRIFT_TC_MI300X || cfg[c].in != DRIFT_BF16)) continue;
            fill_edge(A, M * K, cfg[c].in, kind, 0, 41);
            fill_edge(B, K * N, cfg[c].in, kind, 0, 42);
            fill_edge(C0, M * N, cfg[c].out, kind, 1, 43);
            if (kind == 4) {
                for (size_t i = 0; i < M; i++)
                    for (size_t k = 1; k < K; k += 2) A[i * K + k] = A[i * K + k - 1];
                for (size_t k = 1; k < K; k += 2)
                    for (size_t j = 0; j < N; j++) B[k * N + j] = -B[(k - 1) * N + j];
                for (size_t k = 0; k < K; k++) A[2 * K + k] = 0.0, B[k * N + 5] = -0.0; /* (2,5): c -0, products -0 */
            }
            if (kind == 5) {
                for (size_t t = 0; t < M * K; t++) A[t] = 0x1p50;
                for (size_t t = 0; t < K * N; t++) B[t] = t % N < N / 2 ? 0x1p50 : -0x1p50;
                for (size_t t = 0; t < M * N; t++) C0[t] = t % 3 ? 1.0 : 0x1.fffffep127;
            }
            size_t ninf = 0;
            for (int lv = 0; lv < 3; lv++) {
                use_simd_level(lv);
                for (int threads = 1; threads <= 3; threads += 2) {
#ifdef _OPENMP
                    omp_set_num_threads(threads);
#endif
                    double *out = threads == 1 ? C : C1;
                    memcpy(out, C0, sizeof C);
                    cr_assert_eq(drift_tc_gemm(out, A, B, M, N, K, 1, cfg[c].arch, cfg[c].in, cfg[c].out), 0);
                }
                cr_assert_eq(memcmp(C, C1, sizeof C), 0, "%s %s kind %d level %d: thread count changed bits",
                    drift_tc_arch_name(cfg[c].arch), drift_format_name(cfg[c].in), kind, lv);
                for (size_t i = 0; i < M; i++)
                    for (size_t j = 0; j < N; j++) {
                        double col[K], r;
                        for (size_t k = 0; k < K; k++) col[k] = B[k * N + j];
                        cr_assert_eq(
                            drift_tc_dot(&r, A + i * K, col, K, &C0[i * N + j], cfg[c].arch, cfg[c].in, cfg[c].out), 0);
                        cr_assert(memcmp(&r, &C[i * N + j], sizeof r) == 0,
                            "%s %s->%s kind %d level %d (%zu,%zu): gemm %a, model %a", drift_tc_arch_name(cfg[c].arch),
                            drift_format_name(cfg[c].in), drift_format_name(cfg[c].out), kind, lv, i, j, C[i * N + j],
                            r);
                        ninf += isinf(r) != 0;
                    }
            }
            /* the overflow data must overflow where the format allows it: fp16 output, or the
             * AMD models' fp32 accumulators beside products near 2^100 */
            if (kind == 5 || (kind == 2 && (cfg[c].out == FP16 || (cfg[c].arch != B200 && cfg[c].in != FP16))))
                cr_assert(ninf > 0, "%s %s->%s: no accumulator overflowed", drift_tc_arch_name(cfg[c].arch),
                    drift_format_name(cfg[c].in), drift_format_name(cfg[c].out));
            use_simd_level(0);
        }
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
}

/* The NVIDIA GEMM's fast paths (tc_gemm_packed.c: the fp32-output tile that keeps c as
 * float and finds exponents in 16-bit lanes, the general AVX-512 tile, the AVX2 and
 * portable strips) against the scalar block model, output by output through drift_tc_dot,
 * in each of the AVX-512, AVX2 and portable builds of the same C (DRIFT_TC_NO_AVX512,
 * DRIFT_NO_SIMD). M, N, K are no multiple of 4 rows, 16 lanes or any block. Data:
 *   0: one scale (N(0,1)), a tenth zeros: every tile takes the fast path;
 *   1: exponents over 2^-60 .. 2^60 (bf16, tf32) or fp16's whole range: tiles with an
 *      input outside [2^-50, 2^51) take the general tile, the others the fast one;
 *   2: rows of A zero over whole blocks beside tiny c (fp32 subnormals, normals below
 *      2^-102, -0): the blocks with no product keep c exactly (or +0);
 *   3: products that cancel in pairs (a[k+1] = a[k], b[k+1] = -b[k]): sums exactly 0.
 * Tolerance 0. */
static void fill_nv(double *x, size_t n, drift_format_t in, uint32_t point, int data)
{
    drift_stream_t s;
    drift_stream_init(&s, 7, drift_fnv1a32("test_tc_model/nvidia"), point, in);
    int span = in == FP16 ? 14 : 60;
    for (size_t t = 0; t < n; t++) {
        double v = drift_stream_normal(&s);
        if (data == 1) v *= ldexp(1.0, (int)drift_stream_below(&s, (uint32_t)(2 * span + 1)) - span);
        if (drift_stream_below(&s, 10) == 0) v = 0;
        x[t] = in == DRIFT_TF32 ? (double)(float)v : drift_rne(v, in);
        if (isinf(x[t])) x[t] = 0;
    }
}

Test(tc_model, nvidia_gemm_fast_paths_equal_the_model)
{
    const tc_cfg_case_t nv[] = {{V100, FP16, FP32}, {A100, DRIFT_BF16, FP32}, {A100, FP16, FP32},
        {A100, DRIFT_TF32, FP32}, {H100, DRIFT_BF16, FP32}, {H100, FP16, FP32}, {H100, DRIFT_TF32, FP32},
        {B200, DRIFT_BF16, FP32}, {A100, FP16, FP16}, {H100, FP16, FP16}, {H100, DRIFT_FP8E4M3, FP32}};
    enum { M = 6, N = 37, K = 45 };
    static double A[M * K], B[K * N], C[M * N], C0[M * N];
    for (size_t c = 0; c < sizeof nv / sizeof nv[0]; c++)
        for (int data = 0; data < 4; data++) {
            fill_nv(A, M * K, nv[c].in, 41 + (uint32_t)data, data);
            fill_nv(B, K * N, nv[c].in, 43 + (uint32_t)data, data);
            fill_nv(C0, M * N, nv[c].out, 45 + (uint32_t)data, 0);
            if (data == 2) {
                for (size_t i = 0; i < M; i++) /* row i zero over k in [16 i, 16 i + 20), the last row all */
                    for (size_t k = i + 1 < M ? 16 * i : 0; k < (i + 1 < M ? 16 * i + 20 : K) && k < K; k++)
                        A[i * K + k] = 0;
                const double tiny[5] = {0x1p-140, -0x1.000002p-110, 0x1.fffffcp-103, -0.0, 0x1p-149};
                for (size_t t = 0; t < M * N; t++)
                    if (t % 2) C0[t] = nv[c].out == FP32 ? tiny[t % 5] : (t % 5 == 3 ? -0.0 : 0x1p-24);
            }
            if (data == 3)
                for (size_t i = 0; i < M; i++)
                    for (size_t k = 0; k + 1 < K; k += 2) {
                        A[i * K + k + 1] = A[i * K + k];
                        for (size_t j = 0; j < N && i == 0; j++) B[(k + 1) * N + j] = -B[k * N + j];
                    }
            for (int lv = 0; lv < 3; lv++) {
                use_simd_level(lv);
                memcpy(C, C0, sizeof C);
                cr_assert_eq(drift_tc_gemm(C, A, B, M, N, K, 1, nv[c].arch, nv[c].in, nv[c].out), 0);
                for (size_t i = 0; i < M; i++)
                    for (size_t j = 0; j < N; j++) {
                        double col[K], r;
                        for (size_t k = 0; k < K; k++) col[k] = B[k * N + j];
                        cr_assert_eq(
                            drift_tc_dot(&r, A + i * K, col, K, &C0[i * N + j], nv[c].arch, nv[c].in, nv[c].out), 0);
                        cr_assert(memcmp(&r, &C[i * N + j], sizeof r) == 0,
                            "%s %s->%s data %d level %d (%zu,%zu): gemm %a dot %a", drift_tc_arch_name(nv[c].arch),
                            drift_format_name(nv[c].in), drift_format_name(nv[c].out), data, lv, i, j, C[i * N + j], r);
                    }
            }
            use_simd_level(0);
        }
}

/* Hand derivations for corners of the fp32-output tile (every SIMD level, 1 x 3 GEMMs whose
 * middle output is the case):
 *   - a Hopper block whose aligned sum passes 2^31 (the tile sums products in int32): c =
 *     a = b = 255/128 (bf16 and fp16) over K = 16 = one block. Every exponent is 0, so
 *     E = 0 and the terms are in units of 2^-25: c is 255 * 2^18, each product
 *     65025 * 2^11, and S = 255 * 2^18 + 16 * 65025 * 2^11 = 2197585920 > 2^31 - 1. S is
 *     exact in the model; S * 2^-25 = 65.4931640625 = 67065 / 2^10 has 17 significant
 *     bits, so fp32 keeps it. With c and b negated: -65.4931640625.
 *   - blocks with no nonzero product (a = 0) keep c exactly (S is c's integer significand
 *     times 2^lsb_off, rounded exactly), for c = 2^-140 (an fp32 subnormal) and
 *     c = (1 + 2^-23) 2^-110, and give +0 for c = -0.
 *   - products that cancel (a = [1, 1], b = [1, -1]) with c = 0 give +0; with c = 2^-20
 *     they give c. */
Test(tc_model, nvidia_fast_tile_corners)
{
    const drift_format_t ins[2] = {DRIFT_BF16, FP16};
    for (int lv = 0; lv < 3; lv++) {
        use_simd_level(lv);
        for (int f = 0; f < 2; f++)
            for (int sg = -1; sg <= 1; sg += 2) {
                double A[16], B[16 * 3], C[3] = {1.0, sg * 1.9921875, 0.5};
                for (int k = 0; k < 16; k++) {
                    A[k] = 1.9921875;
                    B[k * 3] = 0.25, B[k * 3 + 1] = sg * 1.9921875, B[k * 3 + 2] = -0.5;
                }
                cr_assert_eq(drift_tc_gemm(C, A, B, 1, 3, 16, 1, H100, ins[f], FP32), 0);
                cr_assert_eq(C[1], sg * 65.4931640625, "%s level %d: %a", drift_format_name(ins[f]), lv, C[1]);
            }
        const double cs[3] = {0x1p-140, 0x1.000002p-110, -0.0};
        for (int t = 0; t < 3; t++) {
            double A[16] = {0}, B[16 * 3], C[3] = {1.0, cs[t], 2.0};
            for (int k = 0; k < 16 * 3; k++) B[k] = 1.5;
            cr_assert_eq(drift_tc_gemm(C, A, B, 1, 3, 16, 1, A100, DRIFT_BF16, FP32), 0);
            double want = cs[t] == 0 ? 0.0 : cs[t];
            cr_assert(memcmp(&C[1], &want, sizeof want) == 0, "level %d: %a, want %a", lv, C[1], want);
        }
        for (int t = 0; t < 2; t++) {
            double A[2] = {1.0, 1.0}, B[2 * 3] = {1.0, 1.0, 2.0, 1.0, -1.0, 2.0}, C[3] = {0.0, t ? 0x1p-20 : 0.0, 0.0};
            cr_assert_eq(drift_tc_gemm(C, A, B, 1, 3, 2, 1, H100, DRIFT_BF16, FP32), 0);
            double want = t ? 0x1p-20 : 0.0;
            cr_assert(memcmp(&C[1], &want, sizeof want) == 0, "level %d: %a, want %a", lv, C[1], want);
        }
    }
    use_simd_level(0);
}

/* drift_tc_gemm's input check (a vectorised pass over each array, the element-by-element
 * check where it fails) rejects what is not a value of the input format: half the smallest
 * subnormal (a power of two whose leading bit is below the quantum: fp16 2^-25, bf16 and
 * fp32 for tf32 2^-134 and 2^-150, e5m2 2^-17, e4m3 2^-10), a bit below the quantum, a
 * value above max_finite, and a double subnormal; and accepts the smallest subnormals and
 * max_finite themselves (the formats' definitions). The bad value sits at index 9 of 16
 * inputs, so the vector pass meets it in its second group of eight. */
Test(tc_model, gemm_input_check_rejects_values_outside_the_format)
{
    const struct {
        drift_format_t in;
        double bad[4], good[2];
    } f[] = {
        {FP16, {0x1p-25, 0x1.0008p0, 65536.0, 0x1p-1070}, {0x1p-24, 65504.0}},
        {DRIFT_BF16, {0x1p-134, 0x1.01p0, 0x1p128, 0x1p-1070}, {0x1p-133, 0x1.fep127}},
        {DRIFT_TF32, {0x1p-150, 0x1.000001p0, 0x1p128, 0x1p-1070}, {0x1p-149, 0x1.fffffep127}},
        {DRIFT_FP8E5M2, {0x1p-17, 0x1.2p0, 65536.0, 0x1p-1070}, {0x1p-16, 57344.0}},
        {DRIFT_FP8E4M3, {0x1p-10, 0x1.1p0, 480.0, 0x1p-1070}, {0x1p-9, 448.0}},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        for (int s = -1; s <= 1; s += 2)
            for (int t = 0; t < 6; t++) {
                double A[16], B[16], C[1] = {0};
                for (int k = 0; k < 16; k++) A[k] = B[k] = 1.0;
                double x = s * (t < 4 ? f[i].bad[t] : f[i].good[t - 4]);
                A[9] = x;
                int want = t < 4 ? DRIFT_EINVAL : 0;
                cr_assert_eq(drift_tc_gemm(C, A, B, 1, 1, 16, 0, H100, f[i].in, FP32), want, "%s %a in A",
                    drift_format_name(f[i].in), x);
                A[9] = 1.0, B[9] = x;
                cr_assert_eq(drift_tc_gemm(C, A, B, 1, 1, 16, 0, H100, f[i].in, FP32), want, "%s %a in B",
                    drift_format_name(f[i].in), x);
            }
}

Test(tc_model, mi250_zero_input_products_are_plus_zero)
{
    /* Hand derivation (tc_block_pairwise): a product with a zero input is +0, not the -0 of
     * 0 * negative, so c = -0 plus blocks of such products gives -0 + +0 = +0; a product of
     * nonzero inputs that flushes (|a * b| < 2^-126) keeps its sign, so c = -0 plus blocks of
     * negative flushed products stays -0. Row 0 of A is zero beside negative B; row 1 of A
     * is 2^-70 beside -2^-70 in column 1 of B (products -2^-140: flushed to -0) and beside
     * the zero column 0. 5 x 19 outputs (tails of the register tiles), K = 8 (a padded
     * block would add +0 products, and -0 + +0 = +0), at each SIMD level. */
    enum { M = 5, N = 19, K = 8 };
    double A[M * K], B[K * N], C[M * N];
    for (size_t t = 0; t < M * K; t++) A[t] = t / K == 0 ? 0.0 : t / K == 1 ? 0x1p-70 : -1.5;
    for (size_t t = 0; t < K * N; t++) B[t] = t % N == 0 ? 0.0 : -0x1p-70;
    drift_format_t ins[2] = {FP16, DRIFT_BF16};
    for (int f = 0; f < 2; f++)
        for (int lv = 0; lv < 3; lv++) {
            use_simd_level(lv);
            double a[M * K], b[K * N];
            for (size_t t = 0; t < M * K; t++) a[t] = drift_rne(A[t], ins[f]);
            for (size_t t = 0; t < K * N; t++) b[t] = drift_rne(B[t], ins[f]);
            for (size_t t = 0; t < M * N; t++) C[t] = -0.0;
            cr_assert_eq(drift_tc_gemm(C, a, b, M, N, K, 1, DRIFT_TC_MI250, ins[f], FP32), 0);
            for (size_t j = 0; j < N; j++) {
                cr_assert(
                    C[j] == 0 && !signbit(C[j]), "%s level %d (0,%zu): %a", drift_format_name(ins[f]), lv, j, C[j]);
                int neg = ins[f] == DRIFT_BF16 && j > 0; /* fp16 has no 2^-70: zero inputs, +0 */
                cr_assert(C[N + j] == 0 && signbit(C[N + j]) == neg, "%s level %d (1,%zu): %a",
                    drift_format_name(ins[f]), lv, j, C[N + j]);
            }
        }
    use_simd_level(0);
}

Test(tc_model, mi100_gemm_rounds_a_tie_broken_by_a_tiny_c)
{
    /* Hand derivation, the mirror of the case above with the tiny term first: c = 2^-100
     * (an fp32 normal), products 1 and 2^-24 (half an fp32 ulp of 1: a tie). The exact sum
     * 1 + 2^-24 + 2^-100 lies just above the tie: MI100's one rounding gives 1 + 2^-23. In
     * double, c + 1 is 1 (c is lost: only u - p == c shows it, u - c == p holds), then the
     * tie rounds to 1 (even). fp16 and bf16 hold a = b = [1, 2^-12]. Also the case above
     * again (c = 2^10, a = b = [2^-7, 2^-24]: 2^10 + 2^-13, where only u - c == p shows the
     * loss). Each sits in columns 1 and 10 of 1 x 11 (both halves of a 16-lane tile row, in
     * lanes that do not share the AVX-512 tile's per-lane check); the other columns have B
     * zero (the result is c); also with every sign flipped. Each SIMD level. */
    drift_format_t ins[2] = {FP16, DRIFT_BF16};
    const double ab[2][2] = {{1.0, 0x1p-12}, {0x1p-7, 0x1p-24}}, c0[2] = {0x1p-100, 0x1p10};
    const double want[2] = {1.0 + 0x1p-23, 0x1p10 + 0x1p-13};
    for (int cs = 0; cs < 2; cs++)
        for (int f = 0; f < 2; f++)
            for (int sg = -1; sg <= 1; sg += 2)
                for (int lv = 0; lv < 3; lv++) {
                    use_simd_level(lv);
                    double A[2] = {ab[cs][0], ab[cs][1]}, B[2 * 11] = {0}, C[11], r;
                    for (int k = 0; k < 2; k++) B[k * 11 + 1] = B[k * 11 + 10] = sg * ab[cs][k];
                    for (int j = 0; j < 11; j++) C[j] = sg * c0[cs];
                    cr_assert_eq(drift_tc_gemm(C, A, B, 1, 11, 2, 1, DRIFT_TC_MI100, ins[f], FP32), 0);
                    for (int j = 0; j < 11; j++) {
                        double w = j == 1 || j == 10 ? sg * want[cs] : sg * c0[cs];
                        cr_assert_eq(C[j], w, "case %d %s sign %d level %d col %d: %a", cs, drift_format_name(ins[f]),
                            sg, lv, j, C[j]);
                    }
                    double col[2] = {B[1], B[12]}, c = sg * c0[cs];
                    cr_assert_eq(drift_tc_dot(&r, A, col, 2, &c, DRIFT_TC_MI100, ins[f], FP32), 0);
                    cr_assert_eq(r, C[1]);
                }
    use_simd_level(0);
}

Test(tc_model, mi100_gemm_keeps_a_tiny_product_beside_a_large_one)
{
    /* Hand derivation: a block whose two products alone span more than 53 bits, beside a c
     * that makes their exact sum a tie broken by the tiny one. bf16 (blocks of 2): products
     * 1 and 2^-60 (a = b = [1, 2^-30]), c = 2^-24 (half an fp32 ulp of 1): the exact sum
     * 1 + 2^-24 + 2^-60 rounds once to 1 + 2^-23; summing the products first in double
     * would lose 2^-60 and round the tie 1 + 2^-24 to 1. fp16 (blocks of 4, K = 4 with two
     * zero products): products 2^30 and 2^-48 (a = b = [2^15, 2^-24, 0, 0]), c = 2^6: 2^30 +
     * 2^7. The AVX-512 tile sums a block's products first only where its inputs' exponent
     * range guarantees that sum is exact; here it must not. Columns 1 and 10 of 1 x 11 (both
     * tile halves), B zero elsewhere (the result is c); also with every sign flipped; each
     * SIMD level; and drift_tc_dot. */
    drift_format_t ins[2] = {FP16, DRIFT_BF16};
    const double ab[2][4] = {{0x1p15, 0x1p-24, 0, 0}, {1.0, 0x1p-30, 0, 0}}, c0[2] = {0x1p6, 0x1p-24};
    const double want[2] = {0x1p30 + 0x1p7, 1.0 + 0x1p-23};
    const size_t Ks[2] = {4, 2};
    for (int f = 0; f < 2; f++)
        for (int sg = -1; sg <= 1; sg += 2)
            for (int lv = 0; lv < 3; lv++) {
                use_simd_level(lv);
                const size_t K = Ks[f];
                double A[4], B[4 * 11] = {0}, C[11], r;
                for (size_t k = 0; k < K; k++) A[k] = ab[f][k], B[k * 11 + 1] = B[k * 11 + 10] = sg * ab[f][k];
                for (int j = 0; j < 11; j++) C[j] = sg * c0[f];
                cr_assert_eq(drift_tc_gemm(C, A, B, 1, 11, K, 1, DRIFT_TC_MI100, ins[f], FP32), 0);
                for (int j = 0; j < 11; j++) {
                    double w = j == 1 || j == 10 ? sg * want[f] : sg * c0[f];
                    cr_assert_eq(C[j], w, "%s sign %d level %d col %d: %a", drift_format_name(ins[f]), sg, lv, j, C[j]);
                }
                double col[4], c = sg * c0[f];
                for (size_t k = 0; k < K; k++) col[k] = B[k * 11 + 1];
                cr_assert_eq(drift_tc_dot(&r, A, col, K, &c, DRIFT_TC_MI100, ins[f], FP32), 0);
                cr_assert_eq(r, C[1]);
            }
    use_simd_level(0);
}

/* The float tiles take inputs of magnitude 0 or [2^-50, 2^50] only (tc_gemm_tiles.c), checked
 * while A and B are packed: inputs at both edges of that range (kept) and one just outside it
 * (2^51 or 2^-51, the packing dropped for the other path) in A, in B's full first panel or
 * in its short last one, after in-range inputs. Every output equals the scalar model's
 * (drift_tc_dot). */
Test(tc_model, tile_gemms_equal_the_model_at_the_range_edges)
{
    enum { M = 5, N = 19, K = 12 };
    static double A[M * K], B[K * N], C[M * N], C0[M * N];
    const drift_format_t ins[2] = {DRIFT_BF16, DRIFT_TF32};
    for (int f = 0; f < 2; f++)
        for (int v = 0; v < 7; v++) {
            for (size_t t = 0; t < M * K; t++) /* bf16 values: 6 fraction bits */
                A[t] = (t % 2 ? -1 : 1) * (1 + (double)(t * 37 % 64) / 64) * ldexp(1, (int)(t * 11 % 9) - 4);
            for (size_t t = 0; t < K * N; t++)
                B[t] = (t % 3 ? 1 : -1) * (1 + (double)(t * 29 % 64) / 64) * ldexp(1, (int)(t * 7 % 9) - 4);
            for (size_t t = 0; t < M * N; t++) C0[t] = (double)(t % 5) - 2;
            B[3 * N + 17] = 0x1p50, B[4 * N + 18] = -0x1p-50, A[(M - 1) * K + 2] = -0x1p50, A[K + 5] = 0x1p-50;
            B[6 * N + 4] = -0x1p50, B[8 * N + 12] = 0x1p-50; /* in B's first (full) panel */
            if (v == 1) B[7 * N + 18] = 0x1p51;
            if (v == 2) B[9 * N + 16] = -0x1p-51;
            if (v == 3) A[(M - 1) * K + K - 1] = 0x1p-51;
            if (v == 4) A[(M - 1) * K + 3] = -0x1p51;
            if (v == 5) B[5 * N + 9] = 0x1p51;
            if (v == 6) B[2 * N + 3] = -0x1p-51;
            memcpy(C, C0, sizeof C);
            cr_assert_eq(drift_tc_gemm(C, A, B, M, N, K, 1, DRIFT_TC_MI300X, ins[f], FP32), 0);
            for (size_t i = 0; i < M; i++)
                for (size_t j = 0; j < N; j++) {
                    double col[K], r;
                    for (size_t k = 0; k < K; k++) col[k] = B[k * N + j];
                    cr_assert_eq(drift_tc_dot(&r, A + i * K, col, K, &C0[i * N + j], DRIFT_TC_MI300X, ins[f], FP32), 0);
                    cr_assert(memcmp(&r, &C[i * N + j], sizeof r) == 0, "%s case %d (%zu,%zu): gemm %a, model %a",
                        drift_format_name(ins[f]), v, i, j, C[i * N + j], r);
                }
        }
}
