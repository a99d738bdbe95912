/* tc_probe.c — the probe table of tc_probe.h. Values are written as exact binary constants;
 * u = 2^-24 (fp16's smallest subnormal and fp32's unit roundoff). */
#include "tc_probe.h"

#include <string.h>

#include "drift.h"
#include "tc_model.h"

#define U 0x1p-24
#define H DRIFT_FP16
#define S DRIFT_FP32

static const drift_tc_probe_t PROBES[] = {
    {"A2", "subnormal inputs kept (not flushed)", "2^-24 * 4, c = 0", H, S, 1, {U}, {4}, 0},
    {"B3", "accumulation width: 1 + four 2^-25", "c = 1, four 0.5 * 2^-24", H, S, 4, {.5, .5, .5, .5}, {U, U, U, U}, 1},
    {"C1", "rounding of fp32 output (RZ or RNE)", "1*2 + 1*(2^-23 + 2^-24)", H, S, 2, {1, 1}, {2, 0x1p-23 + U}, 0},
    {"C3", "rounding of fp16 output", "2^-24 * 0.5 + 2^-24 * 0.25 (0.75 of fp16's quantum)", H, H, 2, {U, U}, {.5, .25},
        0},
    {"D1", "extra alignment bits (neab >= 1)", "c = -(1 - 2^-24), 1*1", H, S, 1, {1}, {1}, -(1 - U)},
    {"D1b", "extra alignment bits (neab: 0, 1 or 2)", "c = -(1 - 2^-24), 2*1", H, S, 1, {2}, {1}, -(1 - U)},
    {"D2", "one normalisation after the addition", "c = 1 - 2^-24, four 1 * 2^-24", H, S, 4, {1, 1, 1, 1}, {U, U, U, U},
        1 - U},
    {"D3", "normalisation in a subtraction", "c = -1 + 2^-24, 1*1 + 1*(-2^-24)", H, S, 2, {1, 1}, {1, -U}, -1 + U},
    {"D4", "carry-out bits (no overflow of the block sum)", "c = 1.875, 1*1 + 1*1.5 + 1*1.75 + 1*1.875", H, S, 4,
        {1, 1, 1, 1}, {1, 1.5, 1.75, 1.875}, 1.875},
    {"D5a", "monotonicity (with D5b: larger c, smaller result)", "c = 1 - 2^-24, three 0.5*2^-24, 0.5*(2^-23 + 2^-24)",
        H, S, 4, {.5, .5, .5, .5}, {U, U, U, 0x1p-23 + U}, 1 - U},
    {"D5b", "monotonicity (with D5a)", "c = 1, the same products", H, S, 4, {.5, .5, .5, .5}, {U, U, U, 0x1p-23 + U},
        1},
    {"clamp32", "alignment-exponent clamp, fp32 output (bf16)", "2^-70*2^-70 + (-2^-80)*2^-80", DRIFT_BF16, S, 2,
        {0x1p-70, -0x1p-80}, {0x1p-70, 0x1p-80}, 0},
    {"clamp16", "alignment-exponent clamp, fp16 -> fp16", "2^-12*2^-13 + 2^-24*2^-20", H, H, 2, {0x1p-12, U},
        {0x1p-13, 0x1p-20}, 0},
    {"subc", "a subnormal c aligns at 2^-126 (bf16)", "c = 2^-140, -2^-76 * 2^-76", DRIFT_BF16, S, 1, {-0x1p-76},
        {0x1p-76}, 0x1p-140},
    {"amd1", "exact or pairwise-fp32 block", "1*1 + 2^-12*2^-12 + 2^-12*2^-12 + 0*0", H, S, 4, {1, 0x1p-12, 0x1p-12, 0},
        {1, 0x1p-12, 0x1p-12, 0}, 0},
    {"amd2", "late c and subnormal products", "c = 1, 2^-12*2^-12 + 2^-24*2^-24", H, S, 2, {0x1p-12, U}, {0x1p-12, U},
        1},
    {"fp8acc", "fp8 accumulator width (E4M3)", "c = 1, 2^-7 * 2^-7", DRIFT_FP8E4M3, S, 1, {0x1p-7}, {0x1p-7}, 1},
};

int drift_tc_probes(const drift_tc_probe_t **table)
{
    *table = PROBES;
    return (int)(sizeof PROBES / sizeof PROBES[0]);
}

int drift_tc_probe_run(double *out, const drift_tc_probe_t *p, drift_tc_arch_t arch)
{
    double c = p->c;
    return drift_tc_dot(out, p->a, p->b, (size_t)p->n, &c, arch, p->in, p->out);
}

int drift_tc_probe_block(int *block, drift_tc_arch_t arch, drift_format_t in)
{
    enum { K = 64 };
    for (int j = 2; j < K; j++) {
        double a[K] = {0}, b[K] = {0}, r;
        a[0] = 256, b[0] = 256, a[1] = -256, b[1] = 256, a[j] = 0x1p-9, b[j] = 0x1p-9;
        int rc = drift_tc_dot(&r, a, b, K, NULL, arch, in, DRIFT_FP32);
        if (rc) return rc;
        if (r == 0x1p-18) return *block = j, 0;
    }
    return DRIFT_ERANGE;
}
