// check_common.h — what every cuda/check_*.cu shares: the skip line, result rows, bitwise
// comparison with the first mismatch, and the closing count (host code only).
//
// Row verdicts: PASS and FAIL (a twin is bit-identical or not; a run-to-run property holds
// or not), FINDING (a measured difference that is data, not a failure: tensor cores against
// their model, cuBLAS against exact), INFO, SKIP (no path on this device). cuda/check.sh
// counts the PASS and FAIL rows of every program for its closing table.
#ifndef DRIFT_CHECK_COMMON_H
#define DRIFT_CHECK_COMMON_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "drift_cuda.h"

static int g_pass = 0, g_fail = 0, g_finding = 0;

static void row(const char *verdict, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%-8s ", verdict);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    if (!strcmp(verdict, "PASS")) g_pass++;
    if (!strcmp(verdict, "FAIL")) g_fail++;
    if (!strcmp(verdict, "FINDING")) g_finding++;
}

// 1 (and the line "NAME: no CUDA device: skipped (reason)") when there is no device.
static int skip_without_device(const char *name)
{
    if (drift_cuda_device_count() > 0) return 0;
    printf("%s: no CUDA device: skipped (%s)\n", name, drift_cuda_message());
    return 1;
}

static int same_bits(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

// Number of i with got[i] != want[i] bitwise (NaN equals NaN); the first in *first.
static size_t mismatches(const double *got, const double *want, size_t n, size_t *first)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!same_bits(got[i], want[i]) && bad++ == 0 && first) *first = i;
    return bad;
}

// The closing line and exit status: 0 all passed, 1 a FAIL.
static int finish(const char *name)
{
    printf("%s: %d passed, %d failed, %d findings\n", name, g_pass, g_fail, g_finding);
    return g_fail ? 1 : 0;
}

#endif
