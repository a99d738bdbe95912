/* tc_model.c — the tensor-core block-FMA model of tc_model.h.
 *
 * Why the arithmetic below is exact: inputs have at most 11 significant bits (fp16, tf32;
 * bf16 8, fp8 4 or 3), so a product has at most 22 and is exact in double; its magnitude
 * is at least 2^-266 (bf16 subnormals squared) and below 2^256, far inside double's normal
 * range. Scaling by the power of two 2^(23 + neab - E) is therefore exact, and truncating
 * the scaled value gives the term's aligned, truncated significand as an integer of
 * magnitude below 2^(25 + neab) <= 2^27 (a product's unnormalised significand is below 4;
 * c's is below 2). At most 33 such integers (32 products and c) sum to less than 2^33, so
 * the block sum S, accumulated in a double in any order, is exact: it is the model's
 * fixed-point accumulator. The result S * 2^(E - 23 - neab) is again exact in double and
 * is rounded once to the output format. */
#include "tc_model.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "exact.h"

#define TC_NO_LIMIT (-100000)
#define TC_NO_TERM (-(1 << 24)) /* exponent of a zero input: never the maximum, no overflow */
#define TC_MAX_BLOCK 32
#define TC_STRIP 128 /* columns per strip in drift_tc_gemm */

typedef struct {
    drift_tc_params_t p;
    drift_tc_algo_t algo;
    int rz;      /* the block result is rounded toward zero (else to nearest-even) */
    int ftz;     /* subnormal inputs and results flushed to zero (CDNA2) */
    drift_format_t in, out;
    int emin_in; /* exponent given to subnormal inputs */
    int lsb_off; /* 23 + neab: fraction bits kept below the alignment exponent */
    int out_p;   /* significant bits of the result */
    int oemin, oemax; /* exponent range of the output format's normal numbers */
} tc_cfg_t;

/* ---- the architecture table --------------------------------------------------------------
 * One row per (family, input class). The published models (MATLAB-tensor-core at b12b5a7)
 * are named in each row; min_exp16 is the clamp for fp16 inputs with fp16 output, which the
 * published models lower (V100TC.m -19, A100TC.m/AdaTC.m/L40STC.m -20, H100TC.m/B200TC.m
 * -21). No measured sample reaches a clamp (tests/test_tc_model.c probes them). */
typedef enum { TC_IN_FP16, TC_IN_BF16, TC_IN_TF32, TC_IN_FP8, TC_IN_N } tc_in_t;

typedef struct {
    const char *family;
    tc_in_t in;
    drift_tc_algo_t algo;
    int block, neab, min_exp, min_exp16;
    drift_mode_t rnd32; /* rounding of the block result for fp32 output (fp16 output: RNE) */
    int fp16_out;       /* 1: fp16 output exists */
} tc_row_t;

#define TC_ROW(fam, in, algo, blk, neab, me, me16, rnd, h) {fam, in, DRIFT_TC_##algo, blk, neab, me, me16, DRIFT_##rnd, h}
static const tc_row_t TC_TABLE[] = {
    /* V100TC.m: fp16 only, 4 products, no extra bit, no clamp (-1024) for fp32 output */
    TC_ROW("volta", TC_IN_FP16, ALIGN_TRUNC, 4, 0, TC_NO_LIMIT, -19, RZ, 1),
    /* A100TC.m (A2TC.m and A30TC.m call it): 8 products, 1 extra bit, clamp -132; tf32 4 */
    TC_ROW("ampere", TC_IN_FP16, ALIGN_TRUNC, 8, 1, -132, -20, RZ, 1),
    TC_ROW("ampere", TC_IN_BF16, ALIGN_TRUNC, 8, 1, -132, -132, RZ, 1),
    TC_ROW("ampere", TC_IN_TF32, ALIGN_TRUNC, 4, 1, -132, -132, RZ, 1),
    /* AdaTC.m, L40STC.m: as Ampere, plus fp8 16 products with a 13-bit accumulator */
    TC_ROW("ada", TC_IN_FP16, ALIGN_TRUNC, 8, 1, -132, -20, RZ, 1),
    TC_ROW("ada", TC_IN_BF16, ALIGN_TRUNC, 8, 1, -132, -132, RZ, 1),
    TC_ROW("ada", TC_IN_TF32, ALIGN_TRUNC, 4, 1, -132, -132, RZ, 1),
    TC_ROW("ada", TC_IN_FP8, ALIGN_TRUNC, 16, -10, -132, -132, RZ, 1),
    /* H100TC.m (H200TC.m calls it): 16 products, 2 extra bits, clamp -133; tf32 8; fp8 32, -10 */
    TC_ROW("hopper", TC_IN_FP16, ALIGN_TRUNC, 16, 2, -133, -21, RZ, 1),
    TC_ROW("hopper", TC_IN_BF16, ALIGN_TRUNC, 16, 2, -133, -133, RZ, 1),
    TC_ROW("hopper", TC_IN_TF32, ALIGN_TRUNC, 8, 2, -133, -133, RZ, 1),
    TC_ROW("hopper", TC_IN_FP8, ALIGN_TRUNC, 32, -10, -133, -133, RZ, 1),
    /* B200TC.m (RTXPRO6000TC.m calls it); fp8 fitted to the measured B200 outputs (header) */
    TC_ROW("blackwell", TC_IN_FP16, ALIGN_TRUNC, 16, 2, -133, -21, RZ, 1),
    TC_ROW("blackwell", TC_IN_BF16, ALIGN_TRUNC, 16, 2, -133, -133, RZ, 1),
    TC_ROW("blackwell", TC_IN_TF32, ALIGN_TRUNC, 8, 2, -133, -133, RZ, 1),
    TC_ROW("blackwell", TC_IN_FP8, ALIGN_THEN_ADD, 32, 2, -133, -133, RNE, 1),
    /* MI100MC.m: exact blocks of 4 (fp16) or 2 (bf16), RNE, fp32 output only */
    TC_ROW("cdna1", TC_IN_FP16, EXACT_BLOCK, 4, 0, TC_NO_LIMIT, TC_NO_LIMIT, RNE, 0),
    TC_ROW("cdna1", TC_IN_BF16, EXACT_BLOCK, 2, 0, TC_NO_LIMIT, TC_NO_LIMIT, RNE, 0),
    /* MI210MC.m (MI250MC.m calls it): pairwise fp32 RNE over 4 products, FTZ */
    TC_ROW("cdna2", TC_IN_FP16, PAIRWISE_FP32, 4, 0, TC_NO_LIMIT, TC_NO_LIMIT, RNE, 0),
    TC_ROW("cdna2", TC_IN_BF16, PAIRWISE_FP32, 4, 0, TC_NO_LIMIT, TC_NO_LIMIT, RNE, 0),
    /* MI300MC.m at b4bf135: 8 products (tf32 4), 1 extra bit, c added late, RNE */
    TC_ROW("cdna3", TC_IN_FP16, ALIGN_LATE_C, 8, 1, TC_NO_LIMIT, TC_NO_LIMIT, RNE, 0),
    TC_ROW("cdna3", TC_IN_BF16, ALIGN_LATE_C, 8, 1, TC_NO_LIMIT, TC_NO_LIMIT, RNE, 0),
    TC_ROW("cdna3", TC_IN_TF32, ALIGN_LATE_C, 4, 1, TC_NO_LIMIT, TC_NO_LIMIT, RNE, 0),
};

/* Which family each architecture is (the published models make the same calls). */
static const char *const TC_FAMILY[DRIFT_TC_NARCH] = {
    [DRIFT_TC_V100] = "volta",      [DRIFT_TC_A100] = "ampere",     [DRIFT_TC_A2] = "ampere",
    [DRIFT_TC_A30] = "ampere",      [DRIFT_TC_ADA] = "ada",         [DRIFT_TC_L40S] = "ada",
    [DRIFT_TC_H100] = "hopper",     [DRIFT_TC_H200] = "hopper",     [DRIFT_TC_B200] = "blackwell",
    [DRIFT_TC_RTXPRO6000] = "blackwell", [DRIFT_TC_MI100] = "cdna1", [DRIFT_TC_MI250] = "cdna2",
    [DRIFT_TC_MI300X] = "cdna3",
};

static const tc_row_t *tc_row(drift_tc_arch_t arch, drift_format_t in)
{
    tc_in_t c = in == DRIFT_FP16 ? TC_IN_FP16
                : in == DRIFT_BF16 ? TC_IN_BF16
                : in == DRIFT_TF32 ? TC_IN_TF32
                : (in == DRIFT_FP8E4M3 || in == DRIFT_FP8E5M2) ? TC_IN_FP8
                                                                : TC_IN_N;
    for (size_t i = 0; i < sizeof TC_TABLE / sizeof TC_TABLE[0]; i++)
        if (TC_TABLE[i].in == c && strcmp(TC_TABLE[i].family, TC_FAMILY[arch]) == 0) return &TC_TABLE[i];
    return NULL;
}

const char *drift_tc_algo_name(drift_tc_algo_t a)
{
    switch (a) {
    case DRIFT_TC_ALIGN_TRUNC: return "align+truncate";
    case DRIFT_TC_ALIGN_THEN_ADD: return "align+truncate, then +c (RNE)";
    case DRIFT_TC_EXACT_BLOCK: return "exact block";
    case DRIFT_TC_PAIRWISE_FP32: return "pairwise fp32, FTZ";
    case DRIFT_TC_ALIGN_LATE_C: return "align+truncate, c late (RD)";
    }
    return "?";
}

int drift_tc_model(drift_tc_model_t *m, drift_tc_arch_t arch, drift_format_t in, drift_format_t out)
{
    if (!m || (unsigned)arch >= DRIFT_TC_NARCH || (unsigned)in >= DRIFT_NFORMATS) return DRIFT_EINVAL;
    const tc_row_t *r = tc_row(arch, in);
    if (!r) return DRIFT_EUNSUPPORTED;
    if (out != DRIFT_FP32 && !(out == DRIFT_FP16 && r->fp16_out)) return DRIFT_EUNSUPPORTED;
    int h = out == DRIFT_FP16;
    *m = (drift_tc_model_t){r->family, r->algo, r->block, r->neab, h && in == DRIFT_FP16 ? r->min_exp16 : r->min_exp,
                            h ? DRIFT_RNE : r->rnd32, r->algo != DRIFT_TC_PAIRWISE_FP32};
    return DRIFT_OK;
}

int drift_tc_params(drift_tc_params_t *p, drift_tc_arch_t arch, drift_format_t in)
{
    if (!p) return DRIFT_EINVAL;
    drift_tc_model_t m;
    int rc = drift_tc_model(&m, arch, in, DRIFT_FP32);
    if (rc) return rc;
    *p = (drift_tc_params_t){m.block, m.neab, m.min_exp};
    return DRIFT_OK;
}

static int tc_config(tc_cfg_t *g, drift_tc_arch_t arch, drift_format_t in, drift_format_t out)
{
    if ((unsigned)arch >= DRIFT_TC_NARCH || (unsigned)in >= DRIFT_NFORMATS) return DRIFT_EINVAL;
    if (out != DRIFT_FP32 && out != DRIFT_FP16) return DRIFT_EUNSUPPORTED;
    drift_tc_model_t m;
    int rc = drift_tc_model(&m, arch, in, out);
    if (rc) return rc;
    g->p = (drift_tc_params_t){m.block, m.neab, m.min_exp};
    g->algo = m.algo;
    g->rz = m.rounding == DRIFT_RZ;
    g->ftz = !m.subnormals;
    g->in = in;
    g->out = out;
    g->emin_in = drift_format_info(in)->emin;
    g->lsb_off = 23 + g->p.neab;
    int pout = drift_format_info(out)->p;
    g->out_p = 24 + g->p.neab < pout ? 24 + g->p.neab : pout;
    g->oemin = drift_format_info(out)->emin;
    g->oemax = drift_format_info(out)->emax;
    return DRIFT_OK;
}

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

/* Round the exact value S / scale (S an integer held exactly, scale a power of two) to the
 * output format at out_p bits, toward zero (g->rz) or to nearest-even, with subnormal
 * results; +0 for S == 0; +-inf at or above 2^(emax + 1), even toward zero. */
static double tc_finish(double S, double scale, const tc_cfg_t *g)
{
    if (S == 0) return 0.0;
    double v = S / scale; /* exact: scale is a power of two and v is a normal double */
    double av = fabs(v), r;
    if (g->out == DRIFT_FP32) {
        if (!(av < 0x1p128)) {
            r = isnan(av) ? av : INFINITY;
        } else {
            int e = dexp(av);
            if (e < -126) e = -126; /* subnormal fp32 results: quantum 2^-149 */
            double q = pow2i(e - (g->out_p - 1));
            r = (g->rz ? trunc(av / q) : nearbyint(av / q)) * q; /* av / q < 2^24: exact */
            if (!(r < 0x1p128)) r = INFINITY;
        }
    } else {
        r = drift_rne(av, DRIFT_FP16); /* one rounding of an exact value; overflow gives inf */
    }
    return signbit(v) ? -r : r;
}

/* Align-and-truncate (NVIDIA, step 3 of the header): the exact integer S, in units of
 * 2^(E - lsb_off), of c (when with_c) and the products truncated at E; *scale receives
 * 2^(lsb_off - E). Returns 0 when there is no term at all (every product zero, c too). */
static int tc_align(double *S_out, double *scale_out, const double *a, const double *b, size_t n, double c, int with_c,
                    const tc_cfg_t *g)
{
    int E = TC_NO_TERM;
    for (size_t k = 0; k < n; k++)
        if (a[k] != 0 && b[k] != 0) {
            int e = in_exp(a[k], g->emin_in) + in_exp(b[k], g->emin_in);
            if (e > E) E = e;
        }
    if (with_c && c != 0 && c_exp(c) > E) E = c_exp(c);
    if (E == TC_NO_TERM) return 0;
    if (E < g->p.min_exp) E = g->p.min_exp;
    double scale = pow2i(g->lsb_off - E);
    double S = with_c ? trunc(c * scale) : 0.0;
    for (size_t k = 0; k < n; k++) S += trunc((a[k] * b[k]) * scale);
    *S_out = S;
    *scale_out = scale;
    return 1;
}

/* B200 fp8 (DRIFT_TC_ALIGN_THEN_ADD): the products alone aligned and truncated, normalised
 * and truncated to fp32, then one RNE addition of c in the output format. */
static double tc_block_then_add(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g)
{
    double S, scale;
    if (!tc_align(&S, &scale, a, b, n, 0.0, 0, g) || S == 0) return c == 0 ? 0.0 : c;
    tc_cfg_t f = *g;
    f.out = DRIFT_FP32, f.out_p = 24, f.rz = 1;
    double p = tc_finish(S, scale, &f);
    return drift_add(p, c, g->out, DRIFT_RNE); /* correctly rounded; inf + finite is inf */
}

/* CDNA1 (DRIFT_TC_EXACT_BLOCK): c and the products summed exactly, rounded once. */
static double tc_block_exact(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g)
{
    drift_xacc_t x;
    drift_xacc_init(&x);
    drift_xacc_add(&x, c);
    for (size_t k = 0; k < n; k++) drift_xacc_add_prod(&x, a[k], b[k]);
    double r = drift_xacc_round(&x, g->out, g->rz ? DRIFT_RZ : DRIFT_RNE);
    return r == 0 ? 0.0 : r; /* MI100MC.m's zero is +0 */
}

/* Flush to zero below the smallest normal fp32, keeping the sign (MI210MC.m multiplies by
 * the comparison). */
static inline double tc_ftz32(double x) { return fabs(x) < 0x1p-126 ? copysign(0.0, x) : x; }

/* CDNA2 (DRIFT_TC_PAIRWISE_FP32): subnormal inputs flushed (both factors of their product),
 * products rounded to fp32 and flushed, then recursive halving ((p0 + p1) + (p2 + p3)) and
 * c + that, each an fp32 RNE addition flushed to zero. n is the block (the last block is
 * padded with zero products, as the published GEMM pads). */
static double tc_pairwise(const double *p, size_t n)
{
    if (n == 1) return p[0];
    size_t h = n / 2;
    return tc_ftz32(drift_add(tc_pairwise(p, h), tc_pairwise(p + h, n - h), DRIFT_FP32, DRIFT_RNE));
}

static double tc_block_pairwise(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g)
{
    double p[TC_MAX_BLOCK];
    size_t blk = (size_t)g->p.block;
    double tiny = pow2i(g->emin_in);
    for (size_t k = 0; k < blk; k++) {
        double x = k < n ? a[k] : 0.0, y = k < n ? b[k] : 0.0;
        if (fabs(x) < tiny || fabs(y) < tiny) x = 0.0, y = 0.0;
        p[k] = tc_ftz32(drift_rne(x * y, DRIFT_FP32)); /* x * y exact in double */
    }
    return tc_ftz32(drift_add(tc_ftz32(c), tc_pairwise(p, blk), DRIFT_FP32, DRIFT_RNE));
}

/* m shifted right by s with round-toward-minus-infinity of the signed value (neg): the
 * magnitude goes up by one when bits are lost from a negative value. */
static inline uint64_t tc_shift_rd(uint64_t m, int s, int neg)
{
    uint64_t q = s >= 64 ? 0 : m >> s;
    int lost = s >= 64 ? m != 0 : (m & (((uint64_t)1 << s) - 1)) != 0;
    return q + (uint64_t)(lost && neg);
}

/* CDNA3 (DRIFT_TC_ALIGN_LATE_C): the products aligned and truncated (c left out), the sum
 * S_p in units of 2^(E_p - 23 - neab); c as its 24-bit significand in units of
 * 2^(E_c - 23 - neab), E_c = max(floor(log2|c|), -126) (-126 for c = 0). The one with the
 * smaller exponent is shifted to the other's, rounding toward -inf; when that is the
 * products' sum, both first gain 7 bits (MI300MC.m: AddTwoNonNormSums with eab 7 and 0).
 * The signed sum is then rounded once to fp32 (RNE). */
static double tc_block_late_c(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g)
{
    double S, scale;
    if (!tc_align(&S, &scale, a, b, n, 0.0, 0, g)) return c == 0 ? 0.0 : c; /* no product */
    int Ep = g->lsb_off - dexp(scale), Ec = c != 0 ? c_exp(c) : -126;
    int cneg = c < 0, pneg = S < 0;
    uint64_t mp = (uint64_t)fabs(S), mc = (uint64_t)(fabs(c) * pow2i(g->lsb_off - Ec)); /* exact, < 2^25 */
    int E = Ep > Ec ? Ep : Ec, extra = 0;
    if (Ep < E) {
        extra = 7;
        mp = tc_shift_rd(mp << 7, E - Ep, pneg);
        mc <<= 7;
    } else if (Ec < E) {
        mc = tc_shift_rd(mc, E - Ec, cneg);
    }
    double sum = (pneg ? -(double)mp : (double)mp) + (cneg ? -(double)mc : (double)mc); /* exact: < 2^40 */
    if (sum == 0) return 0.0;
    return drift_rne(sum * pow2i(E - g->lsb_off - extra), g->out); /* exact product, one rounding */
}

/* One block FMA: c + sum_{k<n} a[k]*b[k], c a value of the output format (or +-inf). */
static double tc_block(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g)
{
    if (!isfinite(c)) return c; /* products are finite here: inf + finite stays inf */
    switch (g->algo) {
    case DRIFT_TC_ALIGN_THEN_ADD: return tc_block_then_add(a, b, n, c, g);
    case DRIFT_TC_EXACT_BLOCK: return tc_block_exact(a, b, n, c, g);
    case DRIFT_TC_PAIRWISE_FP32: return tc_block_pairwise(a, b, n, c, g);
    case DRIFT_TC_ALIGN_LATE_C: return tc_block_late_c(a, b, n, c, g);
    case DRIFT_TC_ALIGN_TRUNC: break;
    }
    double S, scale;
    if (!tc_align(&S, &scale, a, b, n, c, 1, g)) return 0.0;
    return tc_finish(S, scale, g);
}

/* c rounded to the output format: toward zero for fp32, nearest-even for fp16 (GEMM.m). */
static double tc_round_c_fmt(double c, drift_format_t out)
{
    drift_round_opts_t o = {out == DRIFT_FP32 ? DRIFT_RZ : DRIFT_RNE, 0, 0};
    return drift_round(c, out, &o, 0);
}

static double tc_round_c(double c, const tc_cfg_t *g) { return tc_round_c_fmt(c, g->out); }

int drift_tc_round_c(double *out, double c, drift_format_t out_fmt)
{
    if (!out) return DRIFT_EINVAL;
    if (out_fmt != DRIFT_FP32 && out_fmt != DRIFT_FP16) return DRIFT_EUNSUPPORTED;
    *out = tc_round_c_fmt(c, out_fmt);
    return DRIFT_OK;
}

/* Is x an acceptable input: a value of `in`, or for tf32 a value of fp32 (NaN and inf pass). */
static int tc_valid_input(double x, const tc_cfg_t *g)
{
    if (isnan(x)) return 1;
    drift_format_t f = g->in == DRIFT_TF32 ? DRIFT_FP32 : g->in;
    return drift_rne(x, f) == x;
}

static double tc_prepare(double x, const tc_cfg_t *g)
{
    if (g->in != DRIFT_TF32 || !isfinite(x)) return x;
    drift_round_opts_t rz = {DRIFT_RZ, 0, 0};
    return drift_round(x, DRIFT_TF32, &rz, 0); /* the hardware keeps the top 10 fraction bits */
}

/* Special values over the whole dot product; 1 (and *res) when the result is one. */
static int tc_special(double *res, const double *a, size_t sa, const double *b, size_t sb, size_t n, double c)
{
    int nan = isnan(c), pinf = c == INFINITY, ninf = c == -INFINITY;
    for (size_t k = 0; k < n; k++) {
        double x = a[k * sa], y = b[k * sb];
        if (isnan(x) || isnan(y)) {
            nan = 1;
        } else if (isinf(x) || isinf(y)) {
            if (x == 0 || y == 0)
                nan = 1;
            else if ((signbit(x) != 0) != (signbit(y) != 0))
                ninf = 1;
            else
                pinf = 1;
        }
    }
    if (nan || (pinf && ninf)) *res = NAN;
    else if (pinf) *res = INFINITY;
    else if (ninf) *res = -INFINITY;
    else return 0;
    return 1;
}

/* The dot product with strides (sa, sb): shared by drift_tc_dot and the GEMM fallback. */
static double tc_dot_strided(const double *a, size_t sa, const double *b, size_t sb, size_t n, double c0,
                             const tc_cfg_t *g)
{
    double sp;
    if (tc_special(&sp, a, sa, b, sb, n, c0)) return sp;
    double ab[TC_MAX_BLOCK], bb[TC_MAX_BLOCK];
    double acc = c0;
    size_t blk = (size_t)g->p.block;
    for (size_t k0 = 0; k0 < n; k0 += blk) {
        size_t m = n - k0 < blk ? n - k0 : blk;
        for (size_t k = 0; k < m; k++) {
            ab[k] = tc_prepare(a[(k0 + k) * sa], g);
            bb[k] = tc_prepare(b[(k0 + k) * sb], g);
        }
        acc = tc_block(ab, bb, m, acc, g);
    }
    return acc;
}

int drift_tc_dot(double *out, const double *a, const double *b, size_t n, const double *c, drift_tc_arch_t arch,
                 drift_format_t in, drift_format_t out_fmt)
{
    if (!out || (n && (!a || !b))) return DRIFT_EINVAL;
    tc_cfg_t g;
    int rc = tc_config(&g, arch, in, out_fmt);
    if (rc) return rc;
    for (size_t k = 0; k < n; k++)
        if (!tc_valid_input(a[k], &g) || !tc_valid_input(b[k], &g)) return DRIFT_EINVAL;
    double c0 = c ? tc_round_c(*c, &g) : 0.0;
    *out = tc_dot_strided(a, 1, b, 1, n, c0, &g);
    return DRIFT_OK;
}

/* ---- the GEMM: one row of outputs at a time, vectorised across the row ---------------- */

/* Workspace of one row of a strip. */
typedef struct {
    int *E;
    double *scale, *S, *inf;
} tc_row_ws_t;

#define TC_ROWS 4 /* rows of A processed together, sharing the loads of B */

/* Truncation toward zero of |x| < 2^31 through int32 (cvttpd2dq, which vectorises where
 * trunc() does not): every aligned term is below 2^(25 + neab) <= 2^27 (file comment). */
static inline double trunc31(double x) { return (double)(int32_t)x; }

/* The common case of tc_finish for v = S / scale in the normal range of the output:
 * round by integer arithmetic on the bits (toward zero: clear the low bits; nearest-even:
 * add half an ulp minus one plus the kept lsb, then clear). Returns 0 when v is outside
 * [2^emin, 2^(emax+1)) or rounds up to 2^(emax+1): tc_finish handles those. */
static inline int tc_finish_fast(double *r, double v, int rz, int sh, int emin, int emax)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    int e = (int)((u >> 52) & 0x7ff) - 1023;
    uint64_t low = ((uint64_t)1 << sh) - 1;
    if (!rz) u += (low >> 1) + ((u >> sh) & 1);
    u &= ~low;
    int e2 = (int)((u >> 52) & 0x7ff) - 1023;
    memcpy(r, &u, sizeof u);
    return e >= emin && e2 <= emax;
}

/* R rows (R <= TC_ROWS) of one strip: outputs [0, N) of each, B and its exponents with
 * leading dimension ld. cc[r][j] holds the running accumulator of output j of row r. Per
 * block, pass 1 finds each output's alignment exponent E, pass 2 sums its truncated aligned
 * terms into S. The arithmetic per output is exactly tc_block's (same E, same scale, same
 * exact S, same rounding), so the result is the scalar model's, bit for bit; `chunk` (the
 * AVX2 version below) may do passes 1 and 2 for outputs [0, n8) in registers, with the same
 * arithmetic, and returns n8. */
typedef struct {
    int R;
    double *cc[TC_ROWS];
    const double *A[TC_ROWS];
    const int *ea[TC_ROWS];
    tc_row_ws_t w[TC_ROWS];
} tc_rows_t;

typedef size_t (*tc_chunk_fn)(tc_rows_t *rs, const float *Bb, const int *eb, size_t N, size_t ld, size_t k0, size_t k1,
                              const tc_cfg_t *g);

static inline __attribute__((always_inline)) void tc_rows_with(tc_rows_t *rs, const float *Bb, const int *eb, size_t N,
                                                                size_t ld, size_t K, const tc_cfg_t *g, tc_chunk_fn chunk)
{
    const size_t blk = (size_t)g->p.block;
    const int lsb_off = g->lsb_off, min_exp = g->p.min_exp;
    const int rz = g->rz, sh = 53 - g->out_p;
    const int oemin = drift_format_info(g->out)->emin, oemax = drift_format_info(g->out)->emax;
    for (size_t k0 = 0; k0 < K; k0 += blk) {
        size_t k1 = K - k0 < blk ? K : k0 + blk;
        int any_inf[TC_ROWS];
        for (int r = 0; r < rs->R; r++) {
            double *restrict cc = rs->cc[r], *restrict inf = rs->w[r].inf;
            int *restrict E = rs->w[r].E;
            /* An accumulator that overflowed to inf stays inf (products are finite): set
             * it aside so that the int32 truncations never see it. */
            any_inf[r] = 0;
            for (size_t j = 0; j < N; j++) {
                int f = isinf(cc[j]) != 0;
                inf[j] = f ? cc[j] : 0.0;
                cc[j] = f ? 0.0 : cc[j];
                any_inf[r] |= f;
            }
            for (size_t j = 0; j < N; j++) E[j] = cc[j] != 0 ? c_exp(cc[j]) : TC_NO_TERM;
        }
        size_t j0 = chunk ? chunk(rs, Bb, eb, N, ld, k0, k1, g) : 0;
        for (int r = 0; r < rs->R; r++) {
            double *restrict cc = rs->cc[r], *restrict scale = rs->w[r].scale, *restrict S = rs->w[r].S;
            int *restrict E = rs->w[r].E;
            const double *Ai = rs->A[r];
            const int *eai = rs->ea[r];
            for (size_t k = k0; k < k1; k++) {
                int ea = eai[k];
                if (ea == TC_NO_TERM) continue;
                const int *restrict ebk = eb + k * ld;
                for (size_t j = j0; j < N; j++) {
                    int e = ea + ebk[j];
                    E[j] = e > E[j] ? e : E[j];
                }
            }
            for (size_t j = j0; j < N; j++) {
                int e = E[j];
                e = e < min_exp ? min_exp : e;
                e = e < -900 ? 0 : e; /* no term at all: S will be 0 whatever the scale */
                E[j] = e;
                scale[j] = pow2i(lsb_off - e);
            }
            for (size_t j = j0; j < N; j++) S[j] = trunc31(cc[j] * scale[j]);
            for (size_t k = k0; k < k1; k++) {
                double a = Ai[k];
                if (a == 0) continue;
                const float *restrict bk = Bb + k * ld;
                for (size_t j = j0; j < N; j++) S[j] += trunc31((a * (double)bk[j]) * scale[j]);
            }
            int nslow = 0;
            for (size_t j = 0; j < N; j++) {
                double v = S[j] * pow2i(E[j] - lsb_off), out; /* exact: S is an integer below 2^33 */
                int ok = tc_finish_fast(&out, v, rz, sh, oemin, oemax); /* S == 0 is not ok: +0 below */
                cc[j] = out;
                E[j] = !ok;
                nslow += !ok;
            }
            if (nslow)
                for (size_t j = 0; j < N; j++)
                    if (E[j]) cc[j] = tc_finish(S[j], scale[j], g);
            if (any_inf[r]) {
                const double *inf = rs->w[r].inf;
                for (size_t j = 0; j < N; j++) cc[j] = inf[j] != 0 ? inf[j] : cc[j];
            }
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#include <immintrin.h>
#define TC_AVX2 1

/* Passes 1 and 2 for outputs [0, n8) of R rows, eight outputs at a time, E and S in
 * registers across the block and each load of B shared by the rows: the same integer max,
 * the same power-of-two scale, the same int32 truncations and exact double sums as the
 * portable loops. A zero input needs no branch: its exponent TC_NO_TERM never wins the max
 * (and cannot overflow), and its product truncates to 0. */
__attribute__((target("avx2"))) static size_t tc_chunk_avx2(tc_rows_t *rs, const float *Bb, const int *eb, size_t N,
                                                             size_t ld, size_t k0, size_t k1, const tc_cfg_t *g)
{
    const size_t n8 = N & ~(size_t)7;
    const int R = rs->R;
    const __m256i vmin = _mm256_set1_epi32(g->p.min_exp), vlow = _mm256_set1_epi32(-900);
    const __m256i voff = _mm256_set1_epi32(g->lsb_off + 1023);
    for (size_t j = 0; j < n8; j += 8) {
        __m256i Ev[TC_ROWS];
        __m256d sc[TC_ROWS][2], S[TC_ROWS][2];
        for (int r = 0; r < R; r++) Ev[r] = _mm256_loadu_si256((const __m256i *)(rs->w[r].E + j));
        for (size_t k = k0; k < k1; k++) {
            __m256i e = _mm256_loadu_si256((const __m256i *)(eb + k * ld + j));
            for (int r = 0; r < R; r++)
                Ev[r] = _mm256_max_epi32(Ev[r], _mm256_add_epi32(_mm256_set1_epi32(rs->ea[r][k]), e));
        }
        for (int r = 0; r < R; r++) {
            __m256i E = _mm256_max_epi32(Ev[r], vmin);
            E = _mm256_andnot_si256(_mm256_cmpgt_epi32(vlow, E), E); /* no term: 0 */
            _mm256_storeu_si256((__m256i *)(rs->w[r].E + j), E);
            __m256i bexp = _mm256_sub_epi32(voff, E); /* biased exponent of 2^(lsb_off - E) */
            sc[r][0] = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(bexp)), 52));
            sc[r][1] = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(bexp, 1)), 52));
            _mm256_storeu_pd(rs->w[r].scale + j, sc[r][0]);
            _mm256_storeu_pd(rs->w[r].scale + j + 4, sc[r][1]);
            const double *cc = rs->cc[r] + j;
            S[r][0] = _mm256_cvtepi32_pd(_mm256_cvttpd_epi32(_mm256_mul_pd(_mm256_loadu_pd(cc), sc[r][0])));
            S[r][1] = _mm256_cvtepi32_pd(_mm256_cvttpd_epi32(_mm256_mul_pd(_mm256_loadu_pd(cc + 4), sc[r][1])));
        }
        for (size_t k = k0; k < k1; k++) {
            __m256 bf = _mm256_loadu_ps(Bb + k * ld + j);
            __m256d b0 = _mm256_cvtps_pd(_mm256_castps256_ps128(bf)), b1 = _mm256_cvtps_pd(_mm256_extractf128_ps(bf, 1));
            for (int r = 0; r < R; r++) {
                __m256d av = _mm256_set1_pd(rs->A[r][k]);
                __m256d t0 = _mm256_mul_pd(_mm256_mul_pd(av, b0), sc[r][0]);
                __m256d t1 = _mm256_mul_pd(_mm256_mul_pd(av, b1), sc[r][1]);
                S[r][0] = _mm256_add_pd(S[r][0], _mm256_cvtepi32_pd(_mm256_cvttpd_epi32(t0)));
                S[r][1] = _mm256_add_pd(S[r][1], _mm256_cvtepi32_pd(_mm256_cvttpd_epi32(t1)));
            }
        }
        for (int r = 0; r < R; r++) {
            _mm256_storeu_pd(rs->w[r].S + j, S[r][0]);
            _mm256_storeu_pd(rs->w[r].S + j + 4, S[r][1]);
        }
    }
    return n8;
}
/* The same passes with AVX-512: sixteen outputs per step, and the aligned terms summed as
 * exact int64 (vcvttpd2qq truncates toward zero like trunc31; the sums are the same
 * integers, converted back exactly since they stay below 2^33). */
__attribute__((target("avx512f,avx512dq"))) static size_t tc_chunk_avx512(tc_rows_t *rs, const float *Bb, const int *eb,
                                                                           size_t N, size_t ld, size_t k0, size_t k1,
                                                                           const tc_cfg_t *g)
{
    const size_t n16 = N & ~(size_t)15;
    const int R = rs->R;
    const __m512i vmin = _mm512_set1_epi32(g->p.min_exp), voff = _mm512_set1_epi32(g->lsb_off + 1023);
    const __m512i zero = _mm512_setzero_si512();
    for (size_t j = 0; j < n16; j += 16) {
        __m512i Ev[TC_ROWS], S[TC_ROWS][2];
        __m512d sc[TC_ROWS][2];
        for (int r = 0; r < R; r++) Ev[r] = _mm512_loadu_si512((const void *)(rs->w[r].E + j));
        for (size_t k = k0; k < k1; k++) {
            __m512i e = _mm512_loadu_si512((const void *)(eb + k * ld + j));
            for (int r = 0; r < R; r++) Ev[r] = _mm512_max_epi32(Ev[r], _mm512_add_epi32(_mm512_set1_epi32(rs->ea[r][k]), e));
        }
        for (int r = 0; r < R; r++) {
            __m512i E = _mm512_max_epi32(Ev[r], vmin);
            E = _mm512_mask_mov_epi32(E, _mm512_cmplt_epi32_mask(E, _mm512_set1_epi32(-900)), zero); /* no term: 0 */
            _mm512_storeu_si512((void *)(rs->w[r].E + j), E);
            __m512i bexp = _mm512_sub_epi32(voff, E);
            sc[r][0] = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(bexp)), 52));
            sc[r][1] = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(bexp, 1)), 52));
            _mm512_storeu_pd(rs->w[r].scale + j, sc[r][0]);
            _mm512_storeu_pd(rs->w[r].scale + j + 8, sc[r][1]);
            const double *cc = rs->cc[r] + j;
            S[r][0] = _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_loadu_pd(cc), sc[r][0]));
            S[r][1] = _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_loadu_pd(cc + 8), sc[r][1]));
        }
        for (size_t k = k0; k < k1; k++) {
            __m512 bf = _mm512_loadu_ps(Bb + k * ld + j);
            __m512d b0 = _mm512_cvtps_pd(_mm512_castps512_ps256(bf));
            __m512d b1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(bf), 1)));
            for (int r = 0; r < R; r++) {
                __m512d av = _mm512_set1_pd(rs->A[r][k]);
                S[r][0] = _mm512_add_epi64(S[r][0], _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_mul_pd(av, b0), sc[r][0])));
                S[r][1] = _mm512_add_epi64(S[r][1], _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_mul_pd(av, b1), sc[r][1])));
            }
        }
        for (int r = 0; r < R; r++) {
            _mm512_storeu_pd(rs->w[r].S + j, _mm512_cvtepi64_pd(S[r][0]));
            _mm512_storeu_pd(rs->w[r].S + j + 8, _mm512_cvtepi64_pd(S[r][1]));
        }
    }
    return n16;
}

/* ---- the fused AVX-512 tile: 4 rows x 16 outputs over the whole of K ------------------
 *
 * The operands are packed once per GEMM: A in groups of TC_ROWS rows, interleaved by k
 * (Ap[(g*K + k)*4 + r], exponents likewise), B in chunks of 16 columns, each k a row of 16
 * floats and 16 exponents (Bp[(c*K + k)*16 + l]); padding rows and columns are the value 0
 * with the exponent TC_NO_TERM, so every tile is a full 4 x 16 and needs no tail code (the
 * padded outputs are computed and never stored). Per block the tile does what
 * tc_rows_with does per output, with every running value in registers: E = the max of the
 * accumulator's exponent and of ea + eb (integer max), scale = 2^(lsb_off - E) built from
 * its bits, S = the int64 sum of the truncated aligned terms (vcvttpd2qq truncates toward
 * zero like trunc(): every term is exact in double, see the file comment, and below 2^27,
 * at most 33 of them, so |S| < 2^33 and int64 holds it with 30 bits to spare), then the
 * rounding of tc_finish_fast on the bits, with tc_finish itself for the rare lanes outside
 * the fast case. An accumulator that overflowed to inf is set aside (as 0) for the block
 * and kept, as tc_block keeps it. So every output gets tc_block's arithmetic, bit for bit,
 * and the tile never depends on its neighbours: any thread count gives the same bits. */
#define TC_LANES 16

__attribute__((target("avx512f,avx512dq"))) static inline __m512i tc_cexp512(__m512d c0lo, __m512d c0hi)
{
    /* The exponent of a finite c: max(floor(log2|c|), -126), TC_NO_TERM for c == 0 (c is
     * an fp32 or fp16 value, a normal double or zero). */
    const __m512i m = _mm512_set1_epi64(0x7ff), b = _mm512_set1_epi64(1023 - 126);
    __m512i elo = _mm512_max_epi64(_mm512_and_si512(_mm512_srli_epi64(_mm512_castpd_si512(c0lo), 52), m), b);
    __m512i ehi = _mm512_max_epi64(_mm512_and_si512(_mm512_srli_epi64(_mm512_castpd_si512(c0hi), 52), m), b);
    __m512i e = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(elo)), _mm512_cvtepi64_epi32(ehi), 1);
    e = _mm512_sub_epi32(e, _mm512_set1_epi32(1023));
    __mmask16 nz = (__mmask16)(_mm512_cmp_pd_mask(c0lo, _mm512_setzero_pd(), _CMP_NEQ_UQ) |
                               ((unsigned)_mm512_cmp_pd_mask(c0hi, _mm512_setzero_pd(), _CMP_NEQ_UQ) << 8));
    return _mm512_mask_mov_epi32(_mm512_set1_epi32(TC_NO_TERM), nz, e);
}

/* The rounding of one half (8 outputs) of a row: S and E as in tc_rows_with; c the
 * accumulator before the block (kept where it is not finite). */
__attribute__((target("avx512f,avx512dq"))) static inline __m512d tc_finish512(__m512i S, __m256i E, __m512d c,
                                                                               const tc_cfg_t *g)
{
    const int rz = g->rz, sh = 53 - g->out_p, oemin = g->oemin, oemax = g->oemax;
    const __m512i m = _mm512_set1_epi64(0x7ff), low = _mm512_set1_epi64((int64_t)(((uint64_t)1 << sh) - 1));
    __m512i p2 = _mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm256_add_epi32(E, _mm256_set1_epi32(1023 - g->lsb_off))), 52);
    __m512d v = _mm512_mul_pd(_mm512_cvtepi64_pd(S), _mm512_castsi512_pd(p2)); /* exact (tc_rows_with) */
    __m512i u = _mm512_castpd_si512(v);
    __mmask8 ok = _mm512_cmp_epi64_mask(_mm512_and_si512(_mm512_srli_epi64(u, 52), m), _mm512_set1_epi64(oemin + 1023),
                                        _MM_CMPINT_NLT);
    if (!rz)
        u = _mm512_add_epi64(u, _mm512_add_epi64(_mm512_srli_epi64(low, 1),
                                                 _mm512_and_si512(_mm512_srli_epi64(u, (unsigned)sh), _mm512_set1_epi64(1))));
    u = _mm512_andnot_si512(low, u);
    ok &= _mm512_cmp_epi64_mask(_mm512_and_si512(_mm512_srli_epi64(u, 52), m), _mm512_set1_epi64(oemax + 1023), _MM_CMPINT_LE);
    __mmask8 fin = _mm512_cmp_pd_mask(_mm512_abs_pd(c), _mm512_set1_pd(INFINITY), _CMP_LT_OQ);
    __mmask8 slow = (__mmask8)(~ok & fin & _mm512_cmp_epi64_mask(S, _mm512_setzero_si512(), _MM_CMPINT_NE));
    __m512d r = _mm512_maskz_mov_pd(ok, _mm512_castsi512_pd(u)); /* S == 0 gives +0 */
    if (slow) { /* rare: subnormal, overflowing or out-of-range results */
        int64_t s[8];
        double rr[8];
        int32_t e[8];
        _mm512_storeu_si512((void *)s, S);
        _mm256_storeu_si256((__m256i *)e, E);
        _mm512_storeu_pd(rr, r);
        for (int l = 0; l < 8; l++)
            if (slow >> l & 1) rr[l] = tc_finish((double)s[l], pow2i(g->lsb_off - e[l]), g);
        r = _mm512_loadu_pd(rr);
    }
    return _mm512_mask_mov_pd(c, fin, r);
}

/* The accumulator of one row (16 outputs), finite entries only (inf set aside as 0). */
__attribute__((target("avx512f,avx512dq"))) static inline void tc_load_c512(__m512d *c0, __m512d *c1, const double *crow,
                                                                           __mmask8 m0, __mmask8 m1)
{
    const __m512d vinf = _mm512_set1_pd(INFINITY);
    __m512d x0 = _mm512_maskz_loadu_pd(m0, crow), x1 = _mm512_maskz_loadu_pd(m1, crow + 8);
    *c0 = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(_mm512_abs_pd(x0), vinf, _CMP_LT_OQ), x0);
    *c1 = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(_mm512_abs_pd(x1), vinf, _CMP_LT_OQ), x1);
}

/* One tile. f32 selects how pass 2 forms the aligned terms; both give the same integers:
 *   f32 == 0: in double, t = trunc((a*b)*scale) as int64 (exact, file comment);
 *   f32 == 1: in float, 16 lanes at a time, for GEMMs whose every nonzero input x has
 *     2^-50 <= |x| < 2^51 (tc_gemm_avx512 checks). Then a*b has at most 22 significant
 *     bits (11 x 11) and lies in [2^-100, 2^102): exact in float. Any block with a nonzero
 *     product has E >= its exponent >= -100 (ex(x) >= floor(log2|x|) >= -50) and
 *     E <= 127 (a product's exponent is below 102, c's at most 127), so the float scale
 *     2^(lsb_off - max(E, -100)) is a normal float (lsb_off is 13 ... 25); max(E, -100)
 *     changes nothing when a product is nonzero, and a zero product is 0 whatever the
 *     scale. (a*b)*scale is then the exact aligned term when it is at least 2^-126; below
 *     that it is below 1, and whatever rounding float's subnormals do it stays below 1, so
 *     it truncates to 0 as the exact term does. cvttps2dq truncates toward zero, as trunc.
 *     The sum in int32: each truncated term is an integer below 2^(lsb_off + 2) (a
 *     product's unnormalised significand is below 4), so at most 2^(lsb_off + 2) - 1,
 *     and a block of `block` of them stays within INT32_MAX when
 *     block * (2^(lsb_off + 2) - 1) <= INT32_MAX, which tc_gemm_avx512 checks too
 *     (H100 fp16/bf16: 16 * (2^27 - 1) = 2^31 - 16; it excludes B200 fp8, 32 x 2^27).
 *     c's term (below 2^(lsb_off + 1)) is formed in double and int64 as in the f32 == 0
 *     case and added after widening, so S is the same integer below 2^33. */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void
tc_tile_avx512_with(double *const *crow, __mmask16 cm, const float *Ap, const int *eap, const float *Bp, const int *ebp,
                    size_t K, const tc_cfg_t *g, const int f32)
{
    const size_t blk = (size_t)g->p.block;
    const __m512i vmin = _mm512_set1_epi32(g->p.min_exp), voff = _mm512_set1_epi32(g->lsb_off + 1023);
    const __m512i voff32 = _mm512_set1_epi32(g->lsb_off + 127), vlo32 = _mm512_set1_epi32(-100);
    const __mmask8 m0 = (__mmask8)cm, m1 = (__mmask8)(cm >> 8);
    for (size_t k0 = 0; k0 < K; k0 += blk) {
        const size_t k1 = K - k0 < blk ? K : k0 + blk;
        __m512i Ev[TC_ROWS], S[TC_ROWS][2], S32[TC_ROWS];
        __m512d sc[TC_ROWS][2];
        __m512 sc32[TC_ROWS];
#pragma GCC unroll 4
        for (int r = 0; r < TC_ROWS; r++) {
            __m512d c0, c1;
            tc_load_c512(&c0, &c1, crow[r], m0, m1);
            Ev[r] = tc_cexp512(c0, c1);
        }
        for (size_t k = k0; k < k1; k++) {
            __m512i e = _mm512_loadu_si512((const void *)(ebp + k * TC_LANES));
#pragma GCC unroll 4
            for (int r = 0; r < TC_ROWS; r++)
                Ev[r] = _mm512_max_epi32(Ev[r], _mm512_add_epi32(_mm512_set1_epi32(eap[k * TC_ROWS + r]), e));
        }
        __m512i Es[TC_ROWS];
#pragma GCC unroll 4
        for (int r = 0; r < TC_ROWS; r++) {
            __m512i E = _mm512_max_epi32(Ev[r], vmin);
            E = _mm512_mask_mov_epi32(E, _mm512_cmplt_epi32_mask(E, _mm512_set1_epi32(-900)), _mm512_setzero_si512());
            Es[r] = E;
            __m512i bexp = _mm512_sub_epi32(voff, E);
            sc[r][0] = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(bexp)), 52));
            sc[r][1] = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(bexp, 1)), 52));
            __m512d c0, c1;
            tc_load_c512(&c0, &c1, crow[r], m0, m1);
            S[r][0] = _mm512_cvttpd_epi64(_mm512_mul_pd(c0, sc[r][0]));
            S[r][1] = _mm512_cvttpd_epi64(_mm512_mul_pd(c1, sc[r][1]));
            if (f32) {
                sc32[r] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(voff32, _mm512_max_epi32(E, vlo32)), 23));
                S32[r] = _mm512_setzero_si512();
            }
        }
        if (f32) {
            for (size_t k = k0; k < k1; k++) {
                __m512 bf = _mm512_loadu_ps(Bp + k * TC_LANES);
#pragma GCC unroll 4
                for (int r = 0; r < TC_ROWS; r++) {
                    __m512 av = _mm512_set1_ps(Ap[k * TC_ROWS + r]);
                    S32[r] = _mm512_add_epi32(S32[r], _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(av, bf), sc32[r])));
                }
            }
#pragma GCC unroll 4
            for (int r = 0; r < TC_ROWS; r++) {
                S[r][0] = _mm512_add_epi64(S[r][0], _mm512_cvtepi32_epi64(_mm512_castsi512_si256(S32[r])));
                S[r][1] = _mm512_add_epi64(S[r][1], _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(S32[r], 1)));
            }
        } else {
            for (size_t k = k0; k < k1; k++) {
                __m512 bf = _mm512_loadu_ps(Bp + k * TC_LANES);
                __m512d b0 = _mm512_cvtps_pd(_mm512_castps512_ps256(bf));
                __m512d b1 = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(bf), 1)));
#pragma GCC unroll 4
                for (int r = 0; r < TC_ROWS; r++) {
                    __m512d av = _mm512_set1_pd((double)Ap[k * TC_ROWS + r]);
                    S[r][0] = _mm512_add_epi64(S[r][0], _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_mul_pd(av, b0), sc[r][0])));
                    S[r][1] = _mm512_add_epi64(S[r][1], _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_mul_pd(av, b1), sc[r][1])));
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < TC_ROWS; r++) {
            __m512d c0 = _mm512_maskz_loadu_pd(m0, crow[r]), c1 = _mm512_maskz_loadu_pd(m1, crow[r] + 8);
            c0 = tc_finish512(S[r][0], _mm512_castsi512_si256(Es[r]), c0, g);
            c1 = tc_finish512(S[r][1], _mm512_extracti64x4_epi64(Es[r], 1), c1, g);
            _mm512_mask_storeu_pd(crow[r], m0, c0);
            _mm512_mask_storeu_pd(crow[r] + 8, m1, c1);
        }
    }
}

__attribute__((target("avx512f,avx512dq"))) static void tc_tile_avx512(double *const *crow, __mmask16 cm, const float *Ap,
                                                                        const int *eap, const float *Bp, const int *ebp,
                                                                        size_t K, const tc_cfg_t *g, int f32)
{
    if (f32)
        tc_tile_avx512_with(crow, cm, Ap, eap, Bp, ebp, K, g, 1);
    else
        tc_tile_avx512_with(crow, cm, Ap, eap, Bp, ebp, K, g, 0);
}

/* The per-block loops of tc_rows_with compiled for AVX2 (same operations, wider). */
__attribute__((target("avx2"))) static void tc_rows_avx2(tc_rows_t *rs, const float *Bb, const int *eb, size_t N,
                                                          size_t ld, size_t K, const tc_cfg_t *g, tc_chunk_fn chunk)
{
    tc_rows_with(rs, Bb, eb, N, ld, K, g, chunk);
}
#endif

static void tc_rows_generic(tc_rows_t *rs, const float *Bb, const int *eb, size_t N, size_t ld, size_t K,
                            const tc_cfg_t *g, tc_chunk_fn chunk)
{
    tc_rows_with(rs, Bb, eb, N, ld, K, g, chunk);
}

static int tc_have_avx2(void)
{
#ifdef TC_AVX2
    __builtin_cpu_init();
    const char *env = getenv("DRIFT_NO_SIMD"); /* lets the tests compare both code paths */
    if (env && *env && strcmp(env, "0") != 0) return 0;
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

static int tc_have_avx512(void)
{
#ifdef TC_AVX2
    if (!tc_have_avx2()) return 0;
    const char *env = getenv("DRIFT_TC_NO_AVX512"); /* lets a test reach the strip path below */
    if (env && *env && strcmp(env, "0") != 0) return 0;
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#else
    return 0;
#endif
}

#ifdef TC_AVX2
/* The GEMM on the fused AVX-512 tile (see tc_tile_avx512): inputs known finite, C already
 * holds c (rounded) or 0. Packs A and B with their exponents once, then runs one tile per
 * (chunk of 16 columns, group of 4 rows); the tiles are independent, so the result does not
 * depend on the thread count. */
static int tc_gemm_avx512(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init,
                          const tc_cfg_t *g)
{
    const size_t ngroups = (M + TC_ROWS - 1) / TC_ROWS, nchunks = (N + TC_LANES - 1) / TC_LANES;
    float *Ap = malloc(ngroups * K * TC_ROWS * sizeof *Ap);
    int *eap = malloc(ngroups * K * TC_ROWS * sizeof *eap);
    float *Bp = malloc(nchunks * K * TC_LANES * sizeof *Bp);
    int *ebp = malloc(nchunks * K * TC_LANES * sizeof *ebp);
    if (!Ap || !eap || !Bp || !ebp) {
        free(Ap), free(eap), free(Bp), free(ebp);
        return DRIFT_ENOMEM;
    }
    const int emin = g->emin_in;
    int wide = 0; /* some nonzero input outside [2^-50, 2^51): no f32 pass 2 (tc_tile_avx512_with) */
#pragma omp parallel
    {
#pragma omp for schedule(static) nowait reduction(| : wide)
        for (size_t gi = 0; gi < ngroups; gi++)
            for (size_t k = 0; k < K; k++)
                for (size_t r = 0; r < TC_ROWS; r++) {
                    size_t i = gi * TC_ROWS + r, t = (gi * K + k) * TC_ROWS + r;
                    double a = i < M ? tc_prepare(A[i * K + k], g) : 0.0;
                    Ap[t] = (float)a; /* exact, as for B */
                    eap[t] = a != 0 ? in_exp(a, emin) : TC_NO_TERM;
                    wide |= a != 0 && (dexp(a) < -50 || dexp(a) > 50);
                }
#pragma omp for schedule(static) nowait reduction(| : wide)
        for (size_t ch = 0; ch < nchunks; ch++)
            for (size_t k = 0; k < K; k++)
                for (size_t l = 0; l < TC_LANES; l++) {
                    size_t j = ch * TC_LANES + l, t = (ch * K + k) * TC_LANES + l;
                    double b = j < N ? tc_prepare(B[k * N + j], g) : 0.0;
                    Bp[t] = (float)b; /* exact: every input format is a float format */
                    ebp[t] = b != 0 ? in_exp(b, emin) : TC_NO_TERM;
                    wide |= b != 0 && (dexp(b) < -50 || dexp(b) > 50);
                }
#pragma omp for schedule(static)
        for (size_t t = 0; t < M * N; t++) C[t] = c_init ? tc_round_c(C[t], g) : 0.0;
        /* (the barrier above also completes the reductions of `wide`) */
        const int64_t tmax = ((int64_t)1 << (g->lsb_off + 2)) - 1;
        const int f32 = !wide && (int64_t)g->p.block * tmax <= INT32_MAX;
        double dummy[TC_ROWS][TC_LANES];
        /* chunks outer: a chunk of B (K x 16) stays in cache while the groups of A pass */
#pragma omp for collapse(2) schedule(static)
        for (size_t ch = 0; ch < nchunks; ch++)
            for (size_t gi = 0; gi < ngroups; gi++) {
                double *crow[TC_ROWS];
                size_t j0 = ch * TC_LANES, nj = N - j0 < TC_LANES ? N - j0 : TC_LANES;
                for (size_t r = 0; r < TC_ROWS; r++) {
                    size_t i = gi * TC_ROWS + r;
                    crow[r] = i < M ? C + i * N + j0 : dummy[r];
                    if (i >= M) memset(dummy[r], 0, sizeof dummy[r]);
                }
                __mmask16 cm = (__mmask16)(nj >= TC_LANES ? 0xffffu : (1u << nj) - 1);
                tc_tile_avx512(crow, cm, Ap + gi * K * TC_ROWS, eap + gi * K * TC_ROWS, Bp + ch * K * TC_LANES,
                               ebp + ch * K * TC_LANES, K, g, f32);
            }
    }
    free(Ap), free(eap), free(Bp), free(ebp);
    return DRIFT_OK;
}
#endif

int drift_tc_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init,
                  drift_tc_arch_t arch, drift_format_t in, drift_format_t out_fmt)
{
    if (!C || (M && N && K && (!A || !B))) return DRIFT_EINVAL;
    tc_cfg_t g;
    int rc = tc_config(&g, arch, in, out_fmt);
    if (rc) return rc;
    if (M == 0 || N == 0) return DRIFT_OK;
    if (M > SIZE_MAX / N) return DRIFT_ENOMEM;
    if (K == 0) { /* no products: each output is its (rounded) c */
        for (size_t t = 0; t < M * N; t++) C[t] = c_init ? tc_round_c(C[t], &g) : 0.0;
        return DRIFT_OK;
    }
    if (M > SIZE_MAX / K || N > SIZE_MAX / K) return DRIFT_ENOMEM;
    int finite = 1;
    for (size_t t = 0; t < M * K; t++) {
        if (!tc_valid_input(A[t], &g)) return DRIFT_EINVAL;
        finite &= isfinite(A[t]) != 0;
    }
    for (size_t t = 0; t < K * N; t++) {
        if (!tc_valid_input(B[t], &g)) return DRIFT_EINVAL;
        finite &= isfinite(B[t]) != 0;
    }
    for (size_t t = 0; t < M * N && c_init; t++) finite &= isfinite(tc_round_c(C[t], &g)) != 0;
    if (!finite || g.algo != DRIFT_TC_ALIGN_TRUNC) {
        /* The scalar model per output: special values (rare), and the architectures whose
         * block is not one alignment of every term (B200 fp8, AMD), which the packed paths
         * below do not compute. Each output is independent: any thread count, same bits. */
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                double c0 = c_init ? tc_round_c(C[i * N + j], &g) : 0.0;
                C[i * N + j] = tc_dot_strided(A + i * K, 1, B + j, N, K, c0, &g);
            }
        return DRIFT_OK;
    }
#ifdef TC_AVX2
    if (tc_have_avx512()) return tc_gemm_avx512(C, A, B, M, N, K, c_init, &g);
#endif
    /* B is held as floats (every tensor-core input format is a float format: exact) and
     * processed in strips of TC_STRIP columns, so that a strip of B and of its exponents
     * stays in cache while every row of A passes over it. */
    double *Ab = malloc(M * K * sizeof *Ab);
    float *Bb = malloc(K * N * sizeof *Bb);
    int *ea = malloc(M * K * sizeof *ea), *eb = malloc(K * N * sizeof *eb);
    if (!Ab || !Bb || !ea || !eb) {
        free(Ab), free(Bb), free(ea), free(eb);
        return DRIFT_ENOMEM;
    }
    for (size_t t = 0; t < M * K; t++) {
        Ab[t] = tc_prepare(A[t], &g);
        ea[t] = Ab[t] != 0 ? in_exp(Ab[t], g.emin_in) : TC_NO_TERM;
    }
    for (size_t t = 0; t < K * N; t++) {
        double b = tc_prepare(B[t], &g);
        Bb[t] = (float)b;
        eb[t] = b != 0 ? in_exp(b, g.emin_in) : TC_NO_TERM;
    }
    for (size_t t = 0; t < M * N; t++) C[t] = c_init ? tc_round_c(C[t], &g) : 0.0; /* after the allocations */
    const size_t nstrips = (N + TC_STRIP - 1) / TC_STRIP, ngroups = (M + TC_ROWS - 1) / TC_ROWS;
    tc_chunk_fn chunk = NULL;
#ifdef TC_AVX2
    if (tc_have_avx2()) chunk = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") ? tc_chunk_avx512 : tc_chunk_avx2;
#endif
    int fail = 0;
#pragma omp parallel reduction(| : fail)
    {
        tc_rows_t rs;
        double *buf = malloc(TC_ROWS * 3 * TC_STRIP * sizeof(double));
        int *ebuf = malloc(TC_ROWS * TC_STRIP * sizeof(int));
        if (!buf || !ebuf) fail = 1;
        for (int r = 0; r < TC_ROWS && !fail; r++) {
            rs.w[r].E = ebuf + r * TC_STRIP;
            rs.w[r].scale = buf + (3 * r) * TC_STRIP;
            rs.w[r].S = buf + (3 * r + 1) * TC_STRIP;
            rs.w[r].inf = buf + (3 * r + 2) * TC_STRIP;
        }
#pragma omp for collapse(2) schedule(static)
        for (size_t sb = 0; sb < nstrips; sb++)
            for (size_t gi = 0; gi < ngroups; gi++) {
                if (fail) continue;
                size_t j0 = sb * TC_STRIP, nj = N - j0 < TC_STRIP ? N - j0 : TC_STRIP, i0 = gi * TC_ROWS;
                rs.R = M - i0 < TC_ROWS ? (int)(M - i0) : TC_ROWS;
                for (int r = 0; r < rs.R; r++) {
                    rs.cc[r] = C + (i0 + (size_t)r) * N + j0;
                    rs.A[r] = Ab + (i0 + (size_t)r) * K;
                    rs.ea[r] = ea + (i0 + (size_t)r) * K;
                }
#ifdef TC_AVX2
                if (chunk) {
                    tc_rows_avx2(&rs, Bb + j0, eb + j0, nj, N, K, &g, chunk);
                    continue;
                }
#endif
                tc_rows_generic(&rs, Bb + j0, eb + j0, nj, N, K, &g, chunk);
            }
        free(buf), free(ebuf);
    }
    free(Ab), free(Bb), free(ea), free(eb);
    return fail ? DRIFT_ENOMEM : DRIFT_OK;
}
