/* tc_hw_data.h — the measured tensor-core outputs (tests/tc_hw/, README.md there) through the
 * lab's model, for tests/test_tc_hw.c (every 5th sample: 1000 of each configuration's 5000,
 * spread over the whole file) and tests/long_tc_hw.c (all 5000). The reader is the library's
 * (experiments/tc_conformance/tc_hw.h, the one tc_conformance uses); this header only states what
 * the tests require of its counts. */
#ifndef DRIFT_TESTS_TC_HW_DATA_H
#define DRIFT_TESTS_TC_HW_DATA_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "format.h"
#include "tc_hw.h"

#define TC_HW_FILE DRIFT_SOURCE_DIR "/tests/tc_hw/tc_hw.bin.xz"

/* Runs every stride-th sample of the shipped file; returns the number of configurations. */
static inline int tc_hw_run(drift_tc_hw_count_t *cnt, long stride)
{
    char why[512] = "";
    int n = drift_tc_hw_run(cnt, DRIFT_TC_HW_MAXCFG, TC_HW_FILE, stride, why, sizeof why);
    cr_assert_geq(n, 0, "%s", why);
    return n;
}

/* The counts as a table on stdout, then one failure per configuration that a model claims
 * and does not reproduce bit for bit (tolerance 0: the model is meant to be the hardware's
 * arithmetic, not an approximation of it). */
static inline void tc_hw_check(const drift_tc_hw_count_t *cnt, int ncnt, long min_samples)
{
    printf("%-5s %-5s %-5s %8s %10s\n", "GPU", "input", "out", "samples", "mismatches");
    for (int i = 0; i < ncnt; i++)
        printf("%-5s %-5s %-5s %8ld %10ld%s\n", cnt[i].gpu, cnt[i].fmt, drift_format_name(cnt[i].out), cnt[i].samples,
            cnt[i].mismatches, cnt[i].unmodelled ? "  (no model: reported, not required)" : "");
    fflush(stdout);
    cr_assert_eq(ncnt, 48, "expected 48 (GPU, format, output) configurations, read %d", ncnt);
    int unmodelled = 0;
    for (int i = 0; i < ncnt; i++) {
        const drift_tc_hw_count_t *c = &cnt[i];
        cr_expect_geq(
            c->samples, min_samples, "%s %s -> %s: %ld samples", c->gpu, c->fmt, drift_format_name(c->out), c->samples);
        if (c->unmodelled) {
            unmodelled++;
            continue;
        }
        cr_expect_eq(c->mismatches, 0, "%s %s -> %s: %ld of %ld differ (first: sample %ld, model %a, GPU %a)", c->gpu,
            c->fmt, drift_format_name(c->out), c->mismatches, c->samples, c->first_index, c->first_got, c->first_want);
    }
    /* every configuration is modelled: fp8 -> fp16 on H100, H200, B200 (E4M3 and E5M2), the
     * last six, since DRIFT_TC_FP8_VIA_HMMA (tc_model.h); all 48 must reproduce bit for bit */
    cr_expect_eq(unmodelled, 0, "configurations without a model: %d", unmodelled);
}

#endif
