/* tc_model.c — the tensor-core block-FMA model of tc_model.h, one output at a time: the
 * architecture table, one function per kind of block (tc_block), the dot product, and
 * drift_tc_gemm's validation. This file is the model; tc_gemm_packed.c computes the same
 * arithmetic for whole GEMMs (AVX-512/AVX2, packed operands), bit for bit.
 *
 * Why the NVIDIA arithmetic below is exact: inputs have at most 11 significant bits (fp16, tf32;
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
#include "par_sizes.h"
#include "tc_internal.h"

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

#define TC_ROW(fam, in, algo, blk, neab, me, me16, rnd, h)            \
    {                                                                 \
        fam, in, DRIFT_TC_##algo, blk, neab, me, me16, DRIFT_##rnd, h \
    }
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

/* Rows that replace the one above for fp16 output: fp8 on Hopper and Blackwell with fp16
 * output is emulated with the fp16 path (tc_block_via_hmma below), whose block FMA is the
 * fp16 row's (16 products, 2 extra bits, clamp -21, RNE); block 32 is the instruction's K. */
static const tc_row_t TC_TABLE_FP16_OUT[] = {
    TC_ROW("hopper", TC_IN_FP8, FP8_VIA_HMMA, 32, 2, -21, -21, RNE, 1),
    TC_ROW("blackwell", TC_IN_FP8, FP8_VIA_HMMA, 32, 2, -21, -21, RNE, 1),
};

/* Which family each architecture is (the published models make the same calls). */
static const char *const TC_FAMILY[DRIFT_TC_NARCH] = {
    [DRIFT_TC_V100] = "volta",
    [DRIFT_TC_A100] = "ampere",
    [DRIFT_TC_A2] = "ampere",
    [DRIFT_TC_A30] = "ampere",
    [DRIFT_TC_ADA] = "ada",
    [DRIFT_TC_L40S] = "ada",
    [DRIFT_TC_H100] = "hopper",
    [DRIFT_TC_H200] = "hopper",
    [DRIFT_TC_B200] = "blackwell",
    [DRIFT_TC_RTXPRO6000] = "blackwell",
    [DRIFT_TC_MI100] = "cdna1",
    [DRIFT_TC_MI250] = "cdna2",
    [DRIFT_TC_MI300X] = "cdna3",
};

static const tc_row_t *tc_row(drift_tc_arch_t arch, drift_format_t in, drift_format_t out)
{
    tc_in_t c = in == DRIFT_FP16                               ? TC_IN_FP16
                : in == DRIFT_BF16                             ? TC_IN_BF16
                : in == DRIFT_TF32                             ? TC_IN_TF32
                : (in == DRIFT_FP8E4M3 || in == DRIFT_FP8E5M2) ? TC_IN_FP8
                                                               : TC_IN_N;
    for (size_t i = 0; out == DRIFT_FP16 && i < sizeof TC_TABLE_FP16_OUT / sizeof TC_TABLE_FP16_OUT[0]; i++)
        if (TC_TABLE_FP16_OUT[i].in == c && strcmp(TC_TABLE_FP16_OUT[i].family, TC_FAMILY[arch]) == 0)
            return &TC_TABLE_FP16_OUT[i];
    for (size_t i = 0; i < sizeof TC_TABLE / sizeof TC_TABLE[0]; i++)
        if (TC_TABLE[i].in == c && strcmp(TC_TABLE[i].family, TC_FAMILY[arch]) == 0) return &TC_TABLE[i];
    return NULL;
}

const char *drift_tc_algo_name(drift_tc_algo_t a)
{
    switch (a) { /* no commas: tc_conformance writes the name as one CSV field */
    case DRIFT_TC_ALIGN_TRUNC: return "align+truncate";
    case DRIFT_TC_ALIGN_THEN_ADD: return "align+truncate then +c (RNE)";
    case DRIFT_TC_EXACT_BLOCK: return "exact block";
    case DRIFT_TC_PAIRWISE_FP32: return "pairwise fp32 FTZ";
    case DRIFT_TC_ALIGN_LATE_C: return "align+truncate c late (RD)";
    case DRIFT_TC_FP8_VIA_HMMA: return "two fp16 blocks (k%4<2 then k%4>=2) then +c (RNE)";
    }
    return "?";
}

int drift_tc_model(drift_tc_model_t *m, drift_tc_arch_t arch, drift_format_t in, drift_format_t out)
{
    if (!m || (unsigned)arch >= DRIFT_TC_NARCH || (unsigned)in >= DRIFT_NFORMATS) return DRIFT_EINVAL;
    const tc_row_t *r = tc_row(arch, in, out);
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
    g->in = in;
    g->out = out;
    g->emin_in = drift_format_info(in)->emin;
    g->lsb_off = 23 + g->p.neab;
    int pout = drift_format_info(out)->p;
    g->out_p = 24 + g->p.neab < pout ? 24 + g->p.neab : pout;
    g->oemin = drift_format_info(out)->emin;
    g->oemax = drift_format_info(out)->emax;
    g->valid_in = drift_format_info(in == DRIFT_TF32 ? DRIFT_FP32 : in);
    return DRIFT_OK;
}

int drift_tc_config_(tc_cfg_t *g, drift_tc_arch_t arch, drift_format_t in, drift_format_t out)
{
    return tc_config(g, arch, in, out);
}

/* Round the exact value S / scale (S an integer held exactly, scale a power of two) to the
 * output format at out_p bits, toward zero (g->rz) or to nearest-even, with subnormal
 * results; +0 for S == 0; +-inf at or above 2^(emax + 1), even toward zero. */
double drift_tc_finish_(double S, double scale, const tc_cfg_t *g)
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
    double p = drift_tc_finish_(S, scale, &f);
    /* p and c have at most 24 significant bits: their sum rounded to double and then to fp32
     * (or fp16) is the correctly rounded sum, since 53 >= 2 * 24 + 2 (double rounding is
     * innocuous for +); inf + finite is inf. */
    return g->out == DRIFT_FP32 ? (double)(float)(p + c) : drift_rne(p + c, DRIFT_FP16);
}

/* x * 2^e as (an integer, e) with |integer| < 2^53: x a nonzero finite double. */
static inline int64_t tc_int_of(double x, int *e)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int64_t m = (int64_t)((u & (((uint64_t)1 << 52) - 1)) | ((uint64_t)1 << 52)); /* x is normal */
    *e = (int)((u >> 52) & 0x7ff) - 1075;
    return (u >> 63) ? -m : m;
}

/* CDNA1 (DRIFT_TC_EXACT_BLOCK): c and the products summed exactly, rounded once. The
 * common case is a fixed-point sum in __int128: every term is an integer of at most 53
 * bits times 2^e; when the terms' span (largest top bit minus smallest e) stays below 120
 * bits, their sum is exact in 128 bits and is rounded to the output's precision by integer
 * arithmetic (nearest-even, with fp32's or fp16's subnormal quantum). Wider spans (a tiny
 * product beside a huge c) take the exact accumulator, which gives the same value. */
static double tc_block_exact(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g)
{
    int64_t mi[TC_MAX_BLOCK + 1];
    int ei[TC_MAX_BLOCK + 1], nt = 0, lo = INT_MAX, hi = INT_MIN;
    for (size_t k = 0; k <= n; k++) {
        double t = k < n ? a[k] * b[k] : c; /* products of <= 11-bit significands: exact */
        if (t == 0) continue;
        mi[nt] = tc_int_of(t, &ei[nt]);
        if (ei[nt] < lo) lo = ei[nt];
        if (ei[nt] + 53 > hi) hi = ei[nt] + 53; /* the integers have 53 bits */
        nt++;
    }
    if (nt == 0) return 0.0;
    if (hi - lo < 120) {
        /* two's complement sum modulo 2^128 (unsigned: no overflow, no signed shifts); the
         * true sum is below 2^126 in magnitude, so bit 127 is its sign */
        unsigned __int128 U = 0;
        for (int t = 0; t < nt; t++) {
            unsigned __int128 m = (unsigned __int128)(uint64_t)(mi[t] < 0 ? -mi[t] : mi[t]) << (ei[t] - lo);
            U = mi[t] < 0 ? U - m : U + m;
        }
        if (U == 0) return 0.0;
        int neg = (int)(U >> 127);
        unsigned __int128 u = neg ? -U : U;
        uint64_t uh = (uint64_t)(u >> 64), ul = (uint64_t)u;
        int top = uh ? 127 - __builtin_clzll(uh) : 63 - __builtin_clzll(ul);
        const drift_format_info_t *fo = drift_format_info(g->out);
        /* the result's lsb exponent: p bits below the top bit, never below the subnormal quantum */
        int lsb = top + lo - (fo->p - 1), qmin = fo->emin - (fo->p - 1);
        if (lsb < qmin) lsb = qmin;
        int sh = lsb - lo;
        if (sh < 0) sh = 0, lsb = lo; /* fewer than p bits: the sum is exact as it is */
        unsigned __int128 q = sh > 0 ? u >> sh : u;
        if (sh > 0) {
            unsigned __int128 rem = u - (q << sh), half = (unsigned __int128)1 << (sh - 1);
            if (rem > half || (rem == half && (q & 1))) q++; /* nearest, ties to even */
        }
        double r = ldexp((double)q, lsb); /* q <= 2^p: exact; overflow gives inf */
        if (!(r < ldexp(1.0, fo->emax + 1))) r = INFINITY;
        return neg ? -r : r;
    }
    drift_xacc_t x;
    drift_xacc_init(&x);
    drift_xacc_add(&x, c);
    for (size_t k = 0; k < n; k++) drift_xacc_add_prod(&x, a[k], b[k]);
    double r = drift_xacc_round(&x, g->out, DRIFT_RNE);
    return r == 0 ? 0.0 : r; /* MI100MC.m's zero is +0 */
}

/* Flush to zero below the smallest normal fp32, keeping the sign (MI210MC.m multiplies by
 * the comparison). */
static inline double tc_ftz32(double x) { return fabs(x) < 0x1p-126 ? copysign(0.0, x) : x; }

/* The fp32 RNE sum of two fp32 values: rounded to double, then to float, which is the
 * correctly rounded sum since 53 >= 2 * 24 + 2 (double rounding is innocuous for +). */
static inline double tc_add32(double x, double y) { return (double)(float)(x + y); }

/* CDNA2 (DRIFT_TC_PAIRWISE_FP32): subnormal inputs flushed (both factors of their product),
 * products rounded to fp32 and flushed, then recursive halving ((p0 + p1) + (p2 + p3)) and
 * c + that, each an fp32 RNE addition flushed to zero. n is the block (the last block is
 * padded with zero products, as the published GEMM pads). */
static double tc_pairwise(const double *p, size_t n)
{
    if (n == 1) return p[0];
    size_t h = n / 2;
    return tc_ftz32(tc_add32(tc_pairwise(p, h), tc_pairwise(p + h, n - h)));
}

static double tc_block_pairwise(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g)
{
    double p[TC_MAX_BLOCK];
    size_t blk = (size_t)g->p.block;
    double tiny = pow2i(g->emin_in);
    for (size_t k = 0; k < blk; k++) {
        double x = k < n ? a[k] : 0.0, y = k < n ? b[k] : 0.0;
        if (fabs(x) < tiny || fabs(y) < tiny) x = 0.0, y = 0.0;
        p[k] = tc_ftz32((double)(float)(x * y)); /* x * y exact in double: one rounding */
    }
    return tc_ftz32(tc_add32(tc_ftz32(c), tc_pairwise(p, blk)));
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
    double v = sum * pow2i(E - g->lsb_off - extra);                        /* exact */
    return g->out == DRIFT_FP32 ? (double)(float)v : drift_rne(v, g->out); /* one rounding */
}

/* Hopper/Blackwell fp8 with fp16 output (DRIFT_TC_FP8_VIA_HMMA, tc_model.h): mma.sync
 * m16n8k32 emulated by the compiler with two fp16 block FMAs (HMMA.16816), the first over
 * the products at k = 0, 1 mod 4 from a zero accumulator, the second over k = 2, 3 mod 4
 * onto the first's fp16 result, then c added by one fp16 addition (RNE). Fitted to the
 * measured H100, H200 and B200 outputs (all 30000 E4M3 and E5M2 samples); c as the first
 * block's accumulator misses 37-39% of them, c added between the blocks 32-33%, the two
 * halves swapped 25-31% (docs/tensor_cores.md has the counts). The HMMAs
 * see the inputs as fp16, so a subnormal E4M3 input is a normal number there: exponents
 * take fp16's minimum. n < 32 (a short last block) keeps each product's position. */
static double tc_block_via_hmma(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g)
{
    tc_cfg_t h = *g;
    h.emin_in = drift_format_info(DRIFT_FP16)->emin;
    double acc = 0.0;
    for (size_t half = 0; half < 2 && isfinite(acc); half++) { /* inf + finite products: inf */
        double x[TC_MAX_BLOCK / 2], y[TC_MAX_BLOCK / 2], S, scale;
        size_t m = 0;
        for (size_t k = 0; k < n; k++)
            if ((k & 3) / 2 == half) x[m] = a[k], y[m] = b[k], m++;
        acc = tc_align(&S, &scale, x, y, m, acc, 1, &h) ? drift_tc_finish_(S, scale, &h) : 0.0;
    }
    /* acc and c are fp16 values (or inf): their sum is exact in double (at most 41
     * significant bits) and rounded once; inf + -inf is NaN as in the fp16 addition */
    return drift_rne(acc + c, DRIFT_FP16);
}

/* One block FMA: c + sum_{k<n} a[k]*b[k], c a value of the output format (or +-inf). */
static double tc_block(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g)
{
    /* CDNA2 adds in fp32 whatever c is (MI210MC.m: inf + -inf is NaN there) */
    if (g->algo == DRIFT_TC_PAIRWISE_FP32) return tc_block_pairwise(a, b, n, c, g);
    /* so does the fp8 -> fp16 emulation: c is added last by an fp16 addition */
    if (g->algo == DRIFT_TC_FP8_VIA_HMMA) return tc_block_via_hmma(a, b, n, c, g);
    if (!isfinite(c)) return c; /* products are finite here: inf + finite stays inf */
    switch (g->algo) {
    case DRIFT_TC_ALIGN_THEN_ADD: return tc_block_then_add(a, b, n, c, g);
    case DRIFT_TC_EXACT_BLOCK: return tc_block_exact(a, b, n, c, g);
    case DRIFT_TC_ALIGN_LATE_C: return tc_block_late_c(a, b, n, c, g);
    case DRIFT_TC_PAIRWISE_FP32: /* handled above */
    case DRIFT_TC_FP8_VIA_HMMA:
    case DRIFT_TC_ALIGN_TRUNC: break;
    }
    double S, scale;
    if (!tc_align(&S, &scale, a, b, n, c, 1, g)) return 0.0;
    return drift_tc_finish_(S, scale, g);
}

double drift_tc_block_(const double *a, const double *b, size_t n, double c, const tc_cfg_t *g)
{
    return tc_block(a, b, n, c, g);
}

/* c rounded to the output format: toward zero for fp32, nearest-even for fp16 (GEMM.m). */
static double tc_round_c_fmt(double c, drift_format_t out)
{
    drift_round_opts_t o = {out == DRIFT_FP32 ? DRIFT_RZ : DRIFT_RNE, 0, 0};
    return drift_round(c, out, &o, 0);
}

double drift_tc_round_c_(double c, const tc_cfg_t *g) { return tc_round_c_fmt(c, g->out); }

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
    if (isfinite(x)) return tc_representable(x, g->valid_in); /* drift_rne(x, f) == x, unrounded */
    drift_format_t f = g->in == DRIFT_TF32 ? DRIFT_FP32 : g->in;
    return drift_rne(x, f) == x;
}

double drift_tc_prepare_(double x, const tc_cfg_t *g)
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
    if (nan || (pinf && ninf))
        *res = NAN;
    else if (pinf)
        *res = INFINITY;
    else if (ninf)
        *res = -INFINITY;
    else
        return 0;
    return 1;
}

/* The dot product with strides (sa, sb): shared by drift_tc_dot and the GEMM fallback. */
static double tc_dot_strided(
    const double *a, size_t sa, const double *b, size_t sb, size_t n, double c0, const tc_cfg_t *g)
{
    double sp;
    if (tc_special(&sp, a, sa, b, sb, n, c0)) return sp;
    double ab[TC_MAX_BLOCK], bb[TC_MAX_BLOCK];
    double acc = c0;
    size_t blk = (size_t)g->p.block;
    for (size_t k0 = 0; k0 < n; k0 += blk) {
        size_t m = n - k0 < blk ? n - k0 : blk;
        for (size_t k = 0; k < m; k++) {
            ab[k] = drift_tc_prepare_(a[(k0 + k) * sa], g);
            bb[k] = drift_tc_prepare_(b[(k0 + k) * sb], g);
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
    double c0 = c ? drift_tc_round_c_(*c, &g) : 0.0;
    *out = tc_dot_strided(a, 1, b, 1, n, c0, &g);
    return DRIFT_OK;
}

/* The GEMM with tc_block per output, for the blocks that no fast path computes (fp8 -> fp16 on
 * Hopper and Blackwell, FP8_VIA_HMMA; a B200 fp8 configuration tc_gemm_tiles.c would refuse,
 * none at present). Inputs are finite:
 * they are prepared once, B transposed so that each column is contiguous. Each output is
 * independent of the others: any thread count gives the same bits. */
static int tc_gemm_blocks(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g)
{
    double *Ap = malloc(M * K * sizeof *Ap), *Bt = malloc(N * K * sizeof *Bt);
    if (!Ap || !Bt) {
        free(Ap), free(Bt);
        return DRIFT_ENOMEM;
    }
    for (size_t t = 0; t < M * K; t++) Ap[t] = drift_tc_prepare_(A[t], g);
    for (size_t k = 0; k < K; k++)
        for (size_t j = 0; j < N; j++) Bt[j * K + k] = drift_tc_prepare_(B[k * N + j], g);
    const size_t blk = (size_t)g->p.block;
#pragma omp parallel for schedule(dynamic, 1) if (M * N * K >= DRIFT_PAR_MIN_FMAS_GEN)
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double acc = c_init ? drift_tc_round_c_(C[i * N + j], g) : 0.0;
            for (size_t k0 = 0; k0 < K; k0 += blk)
                acc = tc_block(Ap + i * K + k0, Bt + j * K + k0, K - k0 < blk ? K - k0 : blk, acc, g);
            C[i * N + j] = acc;
        }
    free(Ap), free(Bt);
    return DRIFT_OK;
}

/* ---- the GEMM: validation, then the scalar model or the packed paths ---------------------- */

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
        for (size_t t = 0; t < M * N; t++) C[t] = c_init ? drift_tc_round_c_(C[t], &g) : 0.0;
        return DRIFT_OK;
    }
    if (M > SIZE_MAX / K || N > SIZE_MAX / K) return DRIFT_ENOMEM;
    int finite = 1;
    if (!drift_tc_finite_values_(A, M * K, &g) || !drift_tc_finite_values_(B, K * N, &g)) { /* else all valid */
        for (size_t t = 0; t < M * K; t++) {
            if (!tc_valid_input(A[t], &g)) return DRIFT_EINVAL;
            finite &= isfinite(A[t]) != 0;
        }
        for (size_t t = 0; t < K * N; t++) {
            if (!tc_valid_input(B[t], &g)) return DRIFT_EINVAL;
            finite &= isfinite(B[t]) != 0;
        }
    }
    for (size_t t = 0; t < M * N && c_init; t++) finite &= isfinite(drift_tc_round_c_(C[t], &g)) != 0;
    if (!finite) { /* rare: the scalar model per output handles every special case */
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                double c0 = c_init ? drift_tc_round_c_(C[i * N + j], &g) : 0.0;
                C[i * N + j] = tc_dot_strided(A + i * K, 1, B + j, N, K, c0, &g);
            }
        return DRIFT_OK;
    }
    if (g.algo == DRIFT_TC_PAIRWISE_FP32) return drift_tc_gemm_pairwise32(C, A, B, M, N, K, c_init, &g);
    if (g.algo == DRIFT_TC_EXACT_BLOCK || g.algo == DRIFT_TC_ALIGN_LATE_C)
        return drift_tc_gemm_amd_rows(C, A, B, M, N, K, c_init, &g);
    if (g.algo == DRIFT_TC_ALIGN_THEN_ADD) { /* Blackwell fp8: its inputs always fit the float tiles */
        int done;
        rc = drift_tc_gemm_tiles(C, A, B, M, N, K, c_init, &g, &done);
        if (rc || done) return rc;
    }
    if (g.algo != DRIFT_TC_ALIGN_TRUNC) return tc_gemm_blocks(C, A, B, M, N, K, c_init, &g);
    return drift_tc_gemm_packed(C, A, B, M, N, K, c_init, &g);
}
