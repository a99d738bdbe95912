/* long_round_array.c — exhaustive: every fp32 bit pattern (as a double) rounded by
 * drift_round_array and drift_round_array_float to fp16, bf16, fp8e4m3 and fp8e5m2 in every
 * non-sr mode, with and without flushing and saturation, must equal the scalar drift_round
 * bit for bit (NaN as NaN). The scalar path is itself held against MPFR over the same
 * patterns by long_format.c (fp16, bf16) and test_format.c. Label "long".
 *
 * Cost: 2^32 patterns x 4 formats x 5 modes x 4 option sets, the scalar rounder dominates
 * (the generic one for fp8): roughly an hour on 2 cores. Split into 4 formats x 8 slices
 * (Criterion runs them in parallel with --jobs), OpenMP inside each slice.
 * DRIFT_LONG_STRIDE=N tests every Nth block of patterns only (a quick look). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#define OMP(x) _Pragma(#x)
#else
#define OMP(x)
#endif

#include "drift.h"
#include "format.h"
#include "support.h"

typedef struct {
    drift_format_t f;
    int slice;
} slice_t;

#define NSLICES 8
#define BLOCK 4096
static slice_t SLICES[4 * NSLICES];

ParameterizedTestParameters(exhaustive, round_array)
{
    drift_format_t fs[4] = {DRIFT_FP16, DRIFT_BF16, DRIFT_FP8E4M3, DRIFT_FP8E5M2};
    for (int i = 0; i < 4; i++)
        for (int s = 0; s < NSLICES; s++) SLICES[i * NSLICES + s] = (slice_t){fs[i], s};
    return cr_make_param_array(slice_t, SLICES, 4 * NSLICES);
}

ParameterizedTest(slice_t *p, exhaustive, round_array)
{
    const char *st = getenv("DRIFT_LONG_STRIDE");
    uint64_t stride = st ? strtoull(st, NULL, 10) : 1;
    if (stride < 1) stride = 1;
    const uint64_t per = ((uint64_t)1 << 32) / NSLICES / BLOCK; /* blocks per slice */
    const uint64_t first = (uint64_t)p->slice * per;
    long bad = 0;
    OMP(omp parallel for schedule(dynamic, 16) reduction(+ : bad))
    for (uint64_t b = first; b < first + per; b += stride) {
        double x[BLOCK], y[BLOCK];
        float yf[BLOCK];
        for (int i = 0; i < BLOCK; i++) {
            uint32_t w = (uint32_t)(b * BLOCK + (uint64_t)i);
            float v;
            memcpy(&v, &w, sizeof v);
            x[i] = v;
        }
        for (int m = 0; m < DRIFT_SR; m++)
            for (int opt = 0; opt < 4; opt++) {
                drift_round_array_opts_t o = {p->f, (drift_mode_t)m, opt & 1, opt >> 1, NULL};
                drift_round_opts_t so = {(drift_mode_t)m, opt & 1, opt >> 1};
                drift_round_array(y, x, BLOCK, &o);
                drift_round_array_float(yf, x, BLOCK, &o);
                for (int i = 0; i < BLOCK; i++) {
                    double want = drift_round(x[i], p->f, &so, 0);
                    if (!same(y[i], want) || !same((double)yf[i], want)) {
                        if (bad < 5)
                            fprintf(stderr, "%s %s opt %d: x = %a gives %a / %a, scalar %a\n", drift_format_name(p->f),
                                drift_mode_name((drift_mode_t)m), opt, x[i], y[i], (double)yf[i], want);
                        bad++;
                    }
                }
            }
    }
    cr_assert_eq(bad, 0, "%ld mismatches", bad);
}
