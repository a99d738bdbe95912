/* tc_hw_data.h — reads the tensor-core outputs measured on real GPUs (tests/tc_hw/, see its
 * README.md for provenance, licence and the byte layout) and runs them through the lab's
 * tensor-core model. Shared by tests/test_tc_hw.c (every 5th sample: 1000 of each
 * configuration's 5000, spread over the whole file) and tests/long_tc_hw.c (all 5000).
 *
 * The data ship as one xz-compressed stream (tests/tc_hw/tc_hw.bin.xz, 2.2 MB: the inputs of
 * the eight GPUs are largely the same draws, which one stream compresses together); the
 * reader decompresses it through `xz -dc` (xz-utils, in deps/debian.txt). */
#ifndef DRIFT_TESTS_TC_HW_DATA_H
#define DRIFT_TESTS_TC_HW_DATA_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "order.h"
#include "tc_model.h"

#define TC_HW_FILE DRIFT_SOURCE_DIR "/tests/tc_hw/tc_hw.bin.xz"
#define TC_HW_MAXK 32
#define TC_HW_NCFG 64 /* (GPU, format, output) configurations: 48 in the data */

/* Which lab architecture reproduces which GPU (the published models name the same pairs:
 * A2TC.m and A30TC.m call A100TC.m, H200TC.m calls H100TC.m). */
static const struct {
    const char *gpu, *order;
} TC_HW_ARCH[] = {
    {"V100", "tc:v100"}, {"A100", "tc:a100"}, {"A2", "tc:a2"},     {"Ada", "tc:ada"},
    {"L40S", "tc:l40s"}, {"H100", "tc:h100"}, {"H200", "tc:h200"}, {"B200", "tc:b200"},
};

/* Configurations the data measure but no model reproduces: fp8 inputs with fp16 output on
 * Hopper and Blackwell. Their results differ from one rounding of the exact sum by up to ten
 * fp16 ulps, so the hardware rounds to fp16 inside the K = 32 product (an fp16 accumulator
 * over sub-blocks) in a way the published models do not describe (B200TC.m turns fp16 output
 * for fp8 into fp32; the authors validate fp16 output only for fp16 inputs). They are
 * counted and reported, never required. */
static inline int tc_hw_unmodelled(const char *gpu, drift_format_t in, drift_format_t out)
{
    int fp8 = in == DRIFT_FP8E4M3 || in == DRIFT_FP8E5M2;
    int hopper_blackwell = !strcmp(gpu, "H100") || !strcmp(gpu, "H200") || !strcmp(gpu, "B200");
    return fp8 && out == DRIFT_FP16 && hopper_blackwell;
}

typedef struct {
    char gpu[16], fmt[16];
    drift_format_t in, out;
    long samples, mismatches;
    int unmodelled;
    double first_got, first_want; /* the first mismatch, for the message */
    long first_index;
} tc_hw_count_t;

static inline uint32_t tc_hw_le(const unsigned char *p, int w)
{
    uint32_t v = 0;
    for (int i = w - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static inline double tc_hw_f32(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* One input value from its bits in the file's encoding (README.md). */
static inline double tc_hw_input(uint32_t bits, drift_format_t in)
{
    if (in == DRIFT_TF32) return tc_hw_f32(bits); /* stored as the fp32 pattern */
    return drift_decode(bits, in);
}

static inline int tc_hw_same(double x, double y)
{
    return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y));
}

static inline tc_hw_count_t *tc_hw_slot(tc_hw_count_t *cnt, int *ncnt, const char *gpu, const char *fmt,
                                        drift_format_t in, drift_format_t out)
{
    for (int i = 0; i < *ncnt; i++)
        if (!strcmp(cnt[i].gpu, gpu) && !strcmp(cnt[i].fmt, fmt) && cnt[i].out == out) return &cnt[i];
    cr_assert(*ncnt < TC_HW_NCFG, "too many configurations");
    tc_hw_count_t *c = &cnt[(*ncnt)++];
    memset(c, 0, sizeof *c);
    snprintf(c->gpu, sizeof c->gpu, "%s", gpu);
    snprintf(c->fmt, sizeof c->fmt, "%s", fmt);
    c->in = in, c->out = out, c->first_index = -1;
    c->unmodelled = tc_hw_unmodelled(gpu, in, out);
    return c;
}

/* Runs every stride-th sample of every configuration through drift_tc_dot; fills cnt
 * (one entry per GPU x format x output) and returns their number. */
static inline int tc_hw_run(tc_hw_count_t *cnt, long stride)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "xz -dc '%s'", TC_HW_FILE);
    FILE *fp = popen(cmd, "r");
    cr_assert(fp, "cannot run: %s", cmd);
    int ncnt = 0;
    char line[256];
    while (fgets(line, sizeof line, fp)) {
        char gpu[16], fmt[16], outs[16], cmode[16];
        int ver, K;
        long N;
        cr_assert_eq(sscanf(line, "drift-tc-hw %d %15s %15s %d %ld %15s %15s", &ver, gpu, fmt, &K, &N, outs, cmode), 7,
                     "malformed section header: %s", line);
        cr_assert(ver == 1 && K > 0 && K <= TC_HW_MAXK && N > 0, "bad header: %s", line);
        drift_format_t in;
        const char *fname = !strcmp(fmt, "E4M3") ? "fp8e4m3" : !strcmp(fmt, "E5M2") ? "fp8e5m2" : fmt;
        cr_assert_eq(drift_format_parse(&in, fname), 0, "unknown format %s", fmt);
        drift_order_t o = {0};
        for (size_t i = 0; i < sizeof TC_HW_ARCH / sizeof TC_HW_ARCH[0]; i++)
            if (!strcmp(gpu, TC_HW_ARCH[i].gpu)) cr_assert_eq(drift_order_parse(&o, TC_HW_ARCH[i].order), 0, "%s", gpu);
        cr_assert_eq(o.kind, DRIFT_ORDER_TC, "no architecture for GPU %s", gpu);
        int has16 = !strcmp(outs, "fp32+fp16"), c0 = !strcmp(cmode, "c0fp32");
        int w = in == DRIFT_TF32 ? 4 : drift_format_info(in)->bits / 8;
        size_t rec = (size_t)(2 * K * w + 8 + (has16 ? 2 : 0));
        tc_hw_count_t *c32 = tc_hw_slot(cnt, &ncnt, gpu, fmt, in, DRIFT_FP32);
        tc_hw_count_t *c16 = has16 ? tc_hw_slot(cnt, &ncnt, gpu, fmt, in, DRIFT_FP16) : NULL;
        unsigned char buf[2 * TC_HW_MAXK * 4 + 10];
        for (long s = 0; s < N; s++) {
            cr_assert_eq(fread(buf, 1, rec, fp), rec, "%s %s: truncated at sample %ld", gpu, fmt, s);
            if (s % stride) continue;
            double a[TC_HW_MAXK], b[TC_HW_MAXK];
            for (int k = 0; k < K; k++) {
                a[k] = tc_hw_input(tc_hw_le(buf + k * w, w), in);
                b[k] = tc_hw_input(tc_hw_le(buf + (K + k) * w, w), in);
            }
            const unsigned char *t = buf + 2 * K * w;
            double c = tc_hw_f32(tc_hw_le(t, 4)), want32 = tc_hw_f32(tc_hw_le(t + 4, 4));
            double got, c32v = c0 ? 0.0 : c;
            cr_assert_eq(drift_tc_dot(&got, a, b, (size_t)K, &c32v, o.arch, in, DRIFT_FP32), 0, "%s %s", gpu, fmt);
            c32->samples++;
            if (!tc_hw_same(got, want32) && c32->mismatches++ == 0)
                c32->first_index = s, c32->first_got = got, c32->first_want = want32;
            if (!c16) continue;
            double want16 = drift_decode(tc_hw_le(t + 8, 2), DRIFT_FP16);
            cr_assert_eq(drift_tc_dot(&got, a, b, (size_t)K, &c, o.arch, in, DRIFT_FP16), 0, "%s %s fp16", gpu, fmt);
            c16->samples++;
            if (!tc_hw_same(got, want16) && c16->mismatches++ == 0)
                c16->first_index = s, c16->first_got = got, c16->first_want = want16;
        }
    }
    cr_assert_eq(pclose(fp), 0, "xz -dc failed on %s", TC_HW_FILE);
    return ncnt;
}

/* The counts as a table on stdout, then one failure per configuration that a model claims
 * and does not reproduce bit for bit. */
static inline void tc_hw_check(const tc_hw_count_t *cnt, int ncnt, long min_samples)
{
    printf("%-5s %-5s %-5s %8s %10s\n", "GPU", "input", "out", "samples", "mismatches");
    for (int i = 0; i < ncnt; i++)
        printf("%-5s %-5s %-5s %8ld %10ld%s\n", cnt[i].gpu, cnt[i].fmt, drift_format_name(cnt[i].out), cnt[i].samples,
               cnt[i].mismatches, cnt[i].unmodelled ? "  (no model: reported, not required)" : "");
    fflush(stdout);
    cr_assert_eq(ncnt, 48, "expected 48 (GPU, format, output) configurations, read %d", ncnt);
    for (int i = 0; i < ncnt; i++) {
        const tc_hw_count_t *c = &cnt[i];
        cr_expect_geq(c->samples, min_samples, "%s %s -> %s: %ld samples", c->gpu, c->fmt, drift_format_name(c->out),
                      c->samples);
        if (c->unmodelled) continue;
        cr_expect_eq(c->mismatches, 0, "%s %s -> %s: %ld of %ld differ (first: sample %ld, model %a, GPU %a)", c->gpu,
                     c->fmt, drift_format_name(c->out), c->mismatches, c->samples, c->first_index, c->first_got,
                     c->first_want);
    }
}

#endif
