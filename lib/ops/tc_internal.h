/* tc_internal.h — what the scalar tensor-core model (tc_model.c) and its packed GEMM
 * (tc_gemm_packed.c) share: the configuration of one (architecture, input, output) and the
 * exact helpers both compute with. Internal to lib/ops/tc_*.c; callers use tc_model.h. */
#ifndef DRIFT_TC_INTERNAL_H
#define DRIFT_TC_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "drift.h"
#include "format.h"
#include "tc_model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_NO_LIMIT (-100000)
#define TC_NO_TERM (-(1 << 24)) /* exponent of a zero input: never the maximum, no overflow */
#define TC_MAX_BLOCK 32

typedef struct {
    drift_tc_params_t p;
    drift_tc_algo_t algo;
    int rz; /* the block result is rounded toward zero (else to nearest-even) */
    drift_format_t in, out;
    int emin_in;                         /* exponent given to subnormal inputs */
    int lsb_off;                         /* 23 + neab: fraction bits kept below the alignment exponent */
    int out_p;                           /* significant bits of the result */
    int oemin, oemax;                    /* exponent range of the output format's normal numbers */
    const drift_format_info_t *valid_in; /* the format inputs must be values of (fp32 for tf32) */
} tc_cfg_t;

/* Unbiased exponent of a nonzero normal double (every value the model meets is one). */
static inline int dexp(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (int)((u >> 52) & 0x7ff) - 1023;
}

/* 2^e for -1022 <= e <= 1023, built from its bits (exact, vectorisable). */
static inline double pow2i(int e)
{
    uint64_t u = (uint64_t)(e + 1023) << 52;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline int in_exp(double x, int emin)
{
    int e = dexp(x);
    return e < emin ? emin : e;
}

static inline int c_exp(double c)
{
    int e = dexp(c);
    return e < -126 ? -126 : e;
}

/* Whether the finite double x is a value of the format fi: zero, or |x| <= max_finite with
 * no bits below the quantum 2^(max(e, emin) - p + 1) of its binade e (a double subnormal
 * is below every such quantum). For finite x the same answer as drift_rne(x, f) == x,
 * without the rounding: drift_tc_gemm checks every input with it. */
static inline int tc_representable(double x, const drift_format_info_t *fi)
{
    if (x == 0) return 1;
    if (!(fabs(x) <= fi->max_finite)) return 0;
    int e = dexp(x);
    int drop = (e < fi->emin ? fi->emin : e) - (fi->p - 1) - (e - 52); /* bits that must be 0 */
    if (drop > 52) return 0;                                           /* the leading bit itself is below the quantum */
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (u & (((uint64_t)1 << drop) - 1)) == 0;
}

/* The configuration of (arch, in, out) (tc_model.c): DRIFT_EINVAL, DRIFT_EUNSUPPORTED as
 * drift_tc_model. */
DRIFT_MUST_CHECK int drift_tc_config_(tc_cfg_t *g, drift_tc_arch_t arch, drift_format_t in, drift_format_t out);
/* Round the exact value S / scale to the output format (tc_model.c). */
double drift_tc_finish_(double S, double scale, const tc_cfg_t *g);
/* c rounded to the output format as drift_tc_round_c (tc_model.c). */
double drift_tc_round_c_(double c, const tc_cfg_t *g);
/* An input as the hardware takes it (tf32: truncated from fp32), tc_model.c. */
double drift_tc_prepare_(double x, const tc_cfg_t *g);
/* One block FMA of the scalar model, c + sum_{k<n} a[k]*b[k] (tc_model.c's tc_block): the
 * fast GEMM paths fall back on it for the outputs they do not handle. */
double drift_tc_block_(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g);
/* Which vector clones the fast paths may run: 2 AVX-512 (F, DQ), 1 AVX2, 0 neither (or
 * DRIFT_NO_SIMD set, which lets the tests compare the code paths), tc_gemm_packed.c. */
int drift_tc_simd_level_(void);

/* 1 when every x[t] is a finite value of the input format (g->valid_in): the common case
 * of drift_tc_gemm's input check in one branch-free, vectorised pass (tc_gemm_packed.c);
 * 0 sends the caller to the element-by-element check (tc_valid_input). */
int drift_tc_finite_values_(const double *x, size_t n, const tc_cfg_t *g);

/* The GEMM on packed operands (tc_gemm_packed.c) for DRIFT_TC_ALIGN_TRUNC configurations
 * whose inputs and C are all finite and already validated: bit-identical to drift_tc_dot
 * per output, any thread count. DRIFT_OK or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_tc_gemm_packed(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g);

/* The same for DRIFT_TC_PAIRWISE_FP32 (CDNA2): tc_model.c's tc_block_pairwise in float
 * arithmetic, vectorised across the outputs of a row (tc_gemm_packed.c). */
DRIFT_MUST_CHECK int drift_tc_gemm_pairwise32(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g);

/* The same for DRIFT_TC_EXACT_BLOCK (CDNA1) and DRIFT_TC_ALIGN_LATE_C (CDNA3): their scalar
 * blocks vectorised across the outputs of a row (tc_gemm_amd.c). */
DRIFT_MUST_CHECK int drift_tc_gemm_amd_rows(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g);

/* The same for DRIFT_TC_ALIGN_LATE_C (CDNA3) and DRIFT_TC_ALIGN_THEN_ADD (Blackwell fp8) on
 * register tiles in float lanes (tc_gemm_tiles.c), when every nonzero input lies in
 * [2^-50, 2^50] (always for fp16 and fp8) and min_exp <= -100: then *done = 1. Otherwise
 * *done = 0, C untouched, and the caller takes another path. DRIFT_OK or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_tc_gemm_tiles(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    int c_init, const tc_cfg_t *g, int *done);

/* The same for DRIFT_TC_EXACT_BLOCK (CDNA1) on register tiles in double lanes, TwoSum-checked
 * (tc_gemm_tiles.c); inputs finite and validated. DRIFT_OK or DRIFT_ENOMEM. Both tile GEMMs
 * give the model's bits in every build, but only the AVX-512 one keeps their 512-bit vectors
 * in registers: drift_tc_gemm_amd_rows takes them only there (Blackwell fp8, which has no
 * row path, takes them in every build: still faster than its scalar blocks). */
DRIFT_MUST_CHECK int drift_tc_gemm_exact_tiles(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g);

/* The same for DRIFT_TC_PAIRWISE_FP32 (CDNA2) on register tiles of 4 x 16 floats
 * (tc_gemm_tiles.c), only in the AVX-512 build (*done = 1); otherwise *done = 0, C untouched,
 * and drift_tc_gemm_pairwise32 takes its rows. DRIFT_OK or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_tc_gemm_pairwise_tiles(double *C, const double *A, const double *B, size_t M, size_t N,
    size_t K, int c_init, const tc_cfg_t *g, int *done);

#ifdef __cplusplus
}
#endif

#endif
