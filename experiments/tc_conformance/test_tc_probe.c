/* test_tc_probe.c — the shared probe table (experiments/tc_conformance/tc_probe.h, printed by tc_conformance)
 * against values derived independently of the model's code:
 *  [F]  Fasi, Higham, Mikaitis & Pranesh, PeerJ CS 7:e330 (2021) and their suite's published
 *       V100/A100 outputs (the same probes as tests/test_tc_model.c, which also cites them);
 *  [KM] Khattak & Mikaitis's models at b12b5a7 (block sizes, neab, clamps);
 *  [D]  derived by hand from [KM], the derivation next to the case (u = 2^-24).
 * Tolerance 0: every probe is deterministic bit arithmetic. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "drift.h"
#include "tc_model.h"
#include "tc_probe.h"

#define U 0x1p-24

typedef struct {
    char probe[16]; /* by value: Criterion copies parameters into its worker, pointers would dangle */
    drift_tc_arch_t arch;
    double want;
} probe_case_t;

static probe_case_t CASES[] = {
    {"A2", DRIFT_TC_V100, 0x1p-22}, {"A2", DRIFT_TC_A100, 0x1p-22}, {"A2", DRIFT_TC_H100, 0x1p-22}, /* [F] A2 */
    {"A2", DRIFT_TC_MI100, 0x1p-22},    /* [D] exact block */
    {"A2", DRIFT_TC_MI250, 0.0},        /* [D] MI210MC.m flushes subnormal inputs */
    {"B3", DRIFT_TC_A100, 1.0},         /* [F] B3: lsb 2^-24 at c's exponent drops 2^-25 */
    {"B3", DRIFT_TC_V100, 1.0},         /* [D] lsb 2^-23: dropped too */
    {"B3", DRIFT_TC_H100, 1 + 0x1p-23}, /* [D] neab 2: lsb 2^-25 keeps all four */
    {"C1", DRIFT_TC_V100, 2.0}, {"C1", DRIFT_TC_A100, 2.0}, {"C1", DRIFT_TC_H100, 2.0}, /* [F] C1: RZ */
    {"C1", DRIFT_TC_MI100, 2 + 0x1p-22}, /* [D] 2 + 0.75 ulp, one RNE rounding */
    {"C3", DRIFT_TC_V100, U}, {"C3", DRIFT_TC_A100, U}, {"C3", DRIFT_TC_H100, U},       /* [F] C3: RNE */
    {"D1", DRIFT_TC_V100, 0x1p-23}, {"D1", DRIFT_TC_A100, U}, {"D1", DRIFT_TC_H100, U}, /* [F] D1, [D] H100 */
    /* [D] exact 1 + 2^-24 at exponent 1: lsb 2^(-22-neab) cuts c to -(1 - 2^-22), -(1 - 2^-23) or keeps it */
    {"D1b", DRIFT_TC_V100, 1 + 0x1p-22}, {"D1b", DRIFT_TC_A100, 1 + 0x1p-23}, {"D1b", DRIFT_TC_H100, 1.0},
    {"D2", DRIFT_TC_V100, 1 + 0x1p-23}, {"D2", DRIFT_TC_A100, 1 + 0x1p-23},
    {"D2", DRIFT_TC_H100, 1 + 0x1p-23},                                                     /* [F] */
    {"D3", DRIFT_TC_V100, 0x1p-23}, {"D3", DRIFT_TC_A100, 0.0}, {"D3", DRIFT_TC_H100, 0.0}, /* [F] D3, [D] H100 */
    {"D4", DRIFT_TC_V100, 8.0}, {"D4", DRIFT_TC_A100, 8.0}, {"D4", DRIFT_TC_H100, 8.0},     /* [F] D4 */
    /* [F]/[D] D5 on A100: c = 1 - u keeps lsb 2^-25 (1 + 2^-23); c = 1 drops the 2^-25 terms (1) */
    {"D5a", DRIFT_TC_A100, 1 + 0x1p-23}, {"D5b", DRIFT_TC_A100, 1.0},
    /* [D] clamp -132/-133 drops -2^-160 */
    {"clamp32", DRIFT_TC_A100, 0x1p-140}, {"clamp32", DRIFT_TC_ADA, 0x1p-140}, {"clamp32", DRIFT_TC_H100, 0x1p-140},
    {"clamp32", DRIFT_TC_B200, 0x1p-140},
    /* [D] fp16 -> fp16: 2^-25 + 2^-44 rounds up to 2^-24 unless the clamp (V100 -19, neab 0: lsb 2^-42) drops 2^-44 */
    {"clamp16", DRIFT_TC_V100, 0.0}, {"clamp16", DRIFT_TC_A100, U}, {"clamp16", DRIFT_TC_ADA, U},
    {"clamp16", DRIFT_TC_H100, U}, {"clamp16", DRIFT_TC_B200, U},
    {"subc", DRIFT_TC_H100, 0x1p-140}, /* [D] E = -126, lsb 2^-151 drops -2^-152 */
    /* [D] exact 1 + 2^-23; MI250 rounds 1 + 2^-24 (a tie) to 1 twice */
    {"amd1", DRIFT_TC_MI100, 1 + 0x1p-23}, {"amd1", DRIFT_TC_MI250, 1.0}, {"amd1", DRIFT_TC_MI300X, 1 + 0x1p-23},
    {"amd1", DRIFT_TC_A100, 1 + 0x1p-23},
    /* [D] 1 + 2^-24 + 2^-48: MI100 rounds up; MI250 flushes 2^-48 (tie to 1); MI300X loses 2^-48 shifting; A100 truncates */
    {"amd2", DRIFT_TC_MI100, 1 + 0x1p-23}, {"amd2", DRIFT_TC_MI250, 1.0}, {"amd2", DRIFT_TC_MI300X, 1.0},
    {"amd2", DRIFT_TC_A100, 1.0}, {"fp8acc", DRIFT_TC_H100, 1.0},
    {"fp8acc", DRIFT_TC_B200, 1 + 0x1p-14}, /* [KM] neab -10 (13 bits) vs 2 */
};

ParameterizedTestParameters(tc_probe, table_values)
{
    return cr_make_param_array(probe_case_t, CASES, sizeof CASES / sizeof CASES[0]);
}

ParameterizedTest(probe_case_t *c, tc_probe, table_values)
{
    const drift_tc_probe_t *t;
    int n = drift_tc_probes(&t), found = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(t[i].name, c->probe)) continue;
        double r;
        cr_assert_eq(drift_tc_probe_run(&r, &t[i], c->arch), 0);
        cr_assert_eq(r, c->want, "%s on %s: %a, expected %a", c->probe, drift_tc_arch_name(c->arch), r, c->want);
        found = 1;
    }
    cr_assert(found, "no probe %s in the table", c->probe);
}

Test(tc_probe, unsupported_is_an_error_not_a_value)
{
    const drift_tc_probe_t *t;
    int n = drift_tc_probes(&t);
    double r;
    for (int i = 0; i < n; i++)
        if (t[i].in == DRIFT_BF16) cr_assert_eq(drift_tc_probe_run(&r, &t[i], DRIFT_TC_V100), DRIFT_EUNSUPPORTED);
    int b;
    cr_assert_eq(drift_tc_probe_block(&b, DRIFT_TC_V100, DRIFT_BF16), DRIFT_EUNSUPPORTED);
}

typedef struct {
    drift_tc_arch_t arch;
    drift_format_t in;
    int block; /* [KM] */
} block_case_t;

static block_case_t BLOCKS[] = {
    {DRIFT_TC_V100, DRIFT_FP16, 4}, {DRIFT_TC_A100, DRIFT_FP16, 8}, {DRIFT_TC_A100, DRIFT_BF16, 8},
    {DRIFT_TC_A100, DRIFT_TF32, 4}, {DRIFT_TC_ADA, DRIFT_FP8E4M3, 16}, {DRIFT_TC_H100, DRIFT_FP16, 16},
    {DRIFT_TC_H100, DRIFT_TF32, 8}, {DRIFT_TC_H100, DRIFT_FP8E5M2, 32}, {DRIFT_TC_B200, DRIFT_FP16, 16},
    {DRIFT_TC_B200, DRIFT_FP8E4M3, 32}, {DRIFT_TC_MI300X, DRIFT_FP16, 8},
    {DRIFT_TC_MI100, DRIFT_FP16, 2}, /* [D] exact block: nothing truncated, the test sees no block */
    {DRIFT_TC_MI250, DRIFT_FP16, 2}, /* [D] 2^16 - 2^16 = 0 exactly in fp32, then + 2^-18 */
};

ParameterizedTestParameters(tc_probe, block_size)
{
    return cr_make_param_array(block_case_t, BLOCKS, sizeof BLOCKS / sizeof BLOCKS[0]);
}

ParameterizedTest(block_case_t *c, tc_probe, block_size)
{
    int b = 0;
    cr_assert_eq(drift_tc_probe_block(&b, c->arch, c->in), 0);
    cr_assert_eq(b, c->block, "%s %s: %d", drift_tc_arch_name(c->arch), drift_format_name(c->in), b);
}
