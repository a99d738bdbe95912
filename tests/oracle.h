/* oracle.h — the tests' MPFR oracle for the lab's formats: one copy of the IEEE emulation that
 * test_order, test_gemm, test_tc_model and test_format share, with its own table of format
 * parameters written from the published definitions, not from lib/core:
 *   fp64, fp32, fp16: IEEE 754-2019 Table 3.5 (binary64/32/16: p = 53/24/11, emax = 1023/127/15,
 *                     emin = 1 - emax);
 *   bf16:             Google's bfloat16 (binary32's exponent range, p = 8);
 *   tf32:             NVIDIA A100 whitepaper (binary32's exponent range, 10 fraction bits, p = 11);
 *   fp8e4m3/e5m2:     OCP 8-bit Floating Point Specification (OFP8) rev 1.0, table 1 (E4M3:
 *                     p = 4, emin = -6, emax = 8, no infinities, max 448; E5M2: p = 3,
 *                     emin = -14, emax = 15, with infinities).
 *
 * The rounding is MPFR's documented IEEE emulation (MPFR manual, "Exceptions"): round to p
 * bits in the wide default range, then mpfr_check_range and mpfr_subnormalize in the narrow
 * one, which use the ternary value so that nothing is rounded twice. MPFR's exponent of x in
 * [2^k, 2^(k+1)) is k + 1, so the smallest subnormal 2^(emin - p + 1) has MPFR exponent
 * emin - p + 2, and a finite value below 2^(emax + 1) has MPFR exponent <= emax + 1.
 * Header-only (static inline) like support.h: each test file gets its own copy. */
#ifndef DRIFT_TEST_ORACLE_H
#define DRIFT_TEST_ORACLE_H

#include <limits.h>
#include <mpfr.h>

#include "format.h"

typedef struct {
    drift_format_t f;
    const char *name;
    int p, emin, emax;
    int has_inf;
} oracle_fmt_t;

static const oracle_fmt_t ORACLE_FORMATS[] = {
    {DRIFT_FP64, "fp64", 53, -1022, 1023, 1},
    {DRIFT_FP32, "fp32", 24, -126, 127, 1},
    {DRIFT_TF32, "tf32", 11, -126, 127, 1},
    {DRIFT_FP16, "fp16", 11, -14, 15, 1},
    {DRIFT_BF16, "bf16", 8, -126, 127, 1},
    {DRIFT_FP8E4M3, "fp8e4m3", 4, -6, 8, 0},
    {DRIFT_FP8E5M2, "fp8e5m2", 3, -14, 15, 1},
};

/* The oracle's parameters of format f (NULL for an unknown format). */
static inline const oracle_fmt_t *oracle_fmt(drift_format_t f)
{
    for (size_t i = 0; i < sizeof ORACLE_FORMATS / sizeof ORACLE_FORMATS[0]; i++)
        if (ORACLE_FORMATS[i].f == f) return &ORACLE_FORMATS[i];
    return NULL;
}

/* y (its precision set to p) = x rounded once to p bits in mode r, with the subnormals below
 * 2^emin; with emax != INT_MAX, a result at or beyond 2^(emax + 1) overflows as MPFR does (inf,
 * or the largest value of the range for the modes toward it). The caller's exponent range is
 * restored. Returns the ternary value. */
static inline int oracle_round_to(mpfr_t y, mpfr_srcptr x, int p, int emin, int emax, mpfr_rnd_t r)
{
    mpfr_exp_t emin0 = mpfr_get_emin(), emax0 = mpfr_get_emax();
    mpfr_set_prec(y, p);
    int t = mpfr_set(y, x, r); /* rounded to p bits in the wide range */
    mpfr_set_emin(emin - p + 2);
    if (emax != INT_MAX) mpfr_set_emax(emax + 1);
    t = mpfr_check_range(y, t, r);
    t = mpfr_subnormalize(y, t, r);
    mpfr_set_emin(emin0);
    mpfr_set_emax(emax0);
    return t;
}

/* The same, as a double (exact: p <= 53 and the result lies in the double range). */
static inline double oracle_round_d(mpfr_srcptr x, int p, int emin, int emax, mpfr_rnd_t r)
{
    mpfr_t y;
    mpfr_init2(y, p);
    oracle_round_to(y, x, p, emin, emax, r);
    double d = mpfr_get_d(y, MPFR_RNDN);
    mpfr_clear(y);
    return d;
}

/* x rounded once to format f in mode r, with f's subnormals and overflow (meaningful for the
 * formats with infinities; fp8e4m3 saturates and has its own rule). */
static inline double oracle_round_fmt(mpfr_srcptr x, drift_format_t f, mpfr_rnd_t r)
{
    const oracle_fmt_t *o = oracle_fmt(f);
    return oracle_round_d(x, o->p, o->emin, o->emax, r);
}

#endif
