/* tc_hw.h — the tensor-core outputs measured on real GPUs (V100, A100, A2, Ada, L40S, H100,
 * H200, B200: Khattak & Mikaitis's validation data, tests/tc_hw/README.md for provenance,
 * licence and the byte layout), read and run through the lab's tensor-core model
 * (tc_model.h). The one reader: tests/test_tc_hw.c, tests/long_tc_hw.c and
 * experiments/tc_conformance/main.c all call drift_tc_hw_run.
 *
 * The file is either the shipped xz stream (a name ending in ".xz", decompressed through the
 * `xz -dc` program, xz-utils in deps/debian.txt) or the same stream uncompressed (any other
 * name; `xz -dk tests/tc_hw/tc_hw.bin.xz` makes it): 32 sections, each an ASCII header line
 * `drift-tc-hw 1 GPU FORMAT K N OUTPUTS CMODE` and N fixed-size little-endian records. */
#ifndef DRIFT_TC_HW_H
#define DRIFT_TC_HW_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "order.h"

#define DRIFT_TC_HW_MAXK 32   /* products per sample, at most */
#define DRIFT_TC_HW_MAXCFG 64 /* (GPU, format, output) configurations: 48 in the shipped data */

/* One (GPU, input format, output format) configuration and its count. */
typedef struct {
    char gpu[16], fmt[16];  /* as the file names them: "H100", "fp16", "E4M3" */
    drift_format_t in, out; /* out: DRIFT_FP32 or DRIFT_FP16 */
    drift_tc_arch_t arch;   /* the lab architecture that models this GPU */
    int K;                  /* products per sample */
    int c0;                 /* 1: measured with c = 0 (H100/H200 fp8, fp32 output: WGMMA) */
    int unmodelled;         /* drift_tc_hw_unmodelled: counted, never claimed */
    long samples, mismatches;
    long first_index; /* the first mismatching sample (-1: none), with model and GPU values */
    double first_got, first_want;
} drift_tc_hw_count_t;

/* The shipped file, tests/tc_hw/tc_hw.bin.xz under the source tree the library was built from. */
const char *drift_tc_hw_default_path(void);

/* Which lab architecture reproduces which GPU of the data (the published models name the
 * same pairs: A2TC.m calls A100TC.m, H200TC.m calls H100TC.m). 0, or DRIFT_EINVAL for a GPU
 * the data do not hold. */
DRIFT_MUST_CHECK int drift_tc_hw_arch(drift_tc_arch_t *arch, const char *gpu);

/* 1 for a configuration the data measure and no model reproduces; none is left (0 for
 * every configuration). The last six, fp8 inputs with fp16 output on H100, H200 and B200,
 * are modelled since 30 November 2026 (DRIFT_TC_FP8_VIA_HMMA, tc_model.h): the measured
 * mma.sync is emulated there with two fp16 block FMAs and an fp16 addition of c. Kept so
 * that the tests and tc_conformance report a configuration left out, should one come. */
int drift_tc_hw_unmodelled(const char *gpu, drift_format_t in, drift_format_t out);

/* Reads the file at path (NULL: the default) and runs every stride-th sample (stride >= 1) of
 * every configuration through drift_tc_dot with the GPU's architecture, comparing bit for bit
 * (NaN equals NaN, zeros by sign). Fills cnt[0..n) in file order and returns n >= 0; or
 * DRIFT_EIO (cannot open, not decompressible, truncated, empty), DRIFT_EINVAL (malformed
 * header, unknown GPU or format, stride < 1, a quote in an xz path), DRIFT_ERANGE (more than
 * maxcnt configurations) with a one-line reason in err (may be NULL). */
DRIFT_MUST_CHECK int drift_tc_hw_run(
    drift_tc_hw_count_t *cnt, int maxcnt, const char *path, long stride, char *err, size_t errsz);

#endif
