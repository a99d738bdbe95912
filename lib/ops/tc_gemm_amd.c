/* tc_gemm_amd.c — drift_tc_gemm for the AMD block FMAs whose scalar model is one output at a
 * time (tc_model.c: tc_block_exact for CDNA1 / MI100, tc_block_late_c for CDNA3 / MI300X).
 * With AVX-512, MI100, and MI300X on data of one scale (every nonzero input in [2^-50, 2^50]),
 * run on the register tiles of tc_gemm_tiles.c. Otherwise (AVX2 or portable builds, where
 * the tiles' 512-bit vector variables would live in memory, or MI300X on wider data) they run
 * here: each block reorganised across the outputs of a row so that the compiler vectorises
 * it (AVX-512, AVX2 or SSE2 clones of the same C). Both are bit-identical to the scalar model
 * (tests/test_tc_model.c, amd_gemm_equals_dot, amd_gemm_fast_paths_equal_the_model and
 * tile_gemms_equal_the_model_on_edge_cases compare every output with drift_tc_dot). Inputs
 * are finite here (drift_tc_gemm sends special values to the scalar model); an accumulator
 * that overflows to inf inside K is handled per output. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "gemm_internal.h"
#include "tc_internal.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define TC_AMD_CLONES 1
#endif

/* Per-row workspace: one entry per output of the row. */
typedef struct {
    double *s, *scale;
    int *E, *err;
} tc_amd_ws_t;

/* cond ? x : y on the bits: a ternary on doubles may become a branch, and a conversion that
 * could trap (-ftrapping-math) on one side of it keeps the loop from vectorising. */
static inline double tc_sel(int cond, double x, double y)
{
    uint64_t xb, yb, m = (uint64_t)0 - (uint64_t)(cond != 0);
    memcpy(&xb, &x, sizeof xb);
    memcpy(&yb, &y, sizeof yb);
    xb = (xb & m) | (yb & ~m);
    memcpy(&x, &xb, sizeof x);
    return x;
}

/* ---- CDNA1: c and a block of products summed exactly, rounded once to fp32 --------------
 * Per output: s = c, then s += p_k for the block's products (exact in double: at most 11 x 11
 * significant bits), each addition an error-free TwoSum. When every rounding error is 0, s
 * is the exact sum, and (float)s is its one correctly rounded fp32 value (nearest-even, with
 * subnormals; at or above 2^128 - 2^103 it is inf, as tc_block_exact's 2^128 test after
 * rounding); an exact zero sum is +0 (tc_block_exact drops zero terms and returns +0). An
 * output with a nonzero error (the terms span more than 53 bits: a tiny product beside a
 * large c, rare on data of one scale) or a non-finite value is flagged and recomputed with
 * the scalar block. An inf accumulator (an fp32 overflow in an earlier block) makes the
 * TwoSum error NaN, so it is flagged too. The loops run over the outputs innermost, so that
 * they vectorise; selects are written as arithmetic (x + 0.0 turns -0 into +0) for the same
 * reason. */
static inline __attribute__((always_inline)) int tc_exact_block_row(
    tc_amd_ws_t *w, double *restrict acc, const double *restrict a, const double *restrict Bk, size_t N, size_t m)
{
    double *restrict s = w->s;
    int *restrict err = w->err;
    for (size_t j = 0; j < N; j++) s[j] = acc[j], err[j] = 0;
    for (size_t k = 0; k < m; k++) {
        const double ak = a[k], *restrict b = Bk + k * N;
#pragma omp simd
        for (size_t j = 0; j < N; j++) {
            double p = ak * b[j]; /* exact */
            double t = s[j] + p, bb = t - s[j];
            double e = (s[j] - (t - bb)) + (p - bb); /* TwoSum: t + e == s + p exactly */
            err[j] |= e != 0;                        /* NaN (from inf) counts as an error too */
            s[j] = t;
        }
    }
    int any = 0;
    for (size_t j = 0; j < N; j++) {
        /* + 0.0: an exact zero sum is +0; a flagged output keeps its c for the fallback */
        acc[j] = tc_sel(err[j], acc[j], (double)(float)s[j] + 0.0);
        any |= err[j];
    }
    return any;
}

/* ---- CDNA3: products aligned and truncated, then c added late ----------------------------
 * tc_block_late_c per output, branch-free: Ep = the largest product exponent (ea + eb, a zero
 * input's TC_NO_TERM never wins), S = the sum of trunc(p * 2^(lsb_off - Ep)) (exact in double,
 * as in tc_align); c's 24-bit significand mc in units of 2^(Ec - lsb_off); the operand with
 * the smaller exponent is shifted by s = |Ec - Ep| rounding toward -inf (trunc of X * 2^-s,
 * plus one when bits were lost from a negative value), the products first gaining 7 bits
 * when they are that operand; the signed sum (below 2^40, exact) times 2^(E - lsb_off -
 * extra) is exact, and (float) rounds it once to nearest-even. No product: c (0 as +0); a
 * non-finite c stays as it is. c is an fp32 value (or inf): its exponent is read from its
 * float bits. */
static inline __attribute__((always_inline)) void tc_late_c_block_row(tc_amd_ws_t *w, double *restrict acc,
    const double *restrict a, const int *restrict ea, const double *restrict Bk, const int *restrict ebk, size_t N,
    size_t m, int lsb_off)
{
    double *restrict scale = w->scale;
    int *restrict Ep = w->E, *restrict S = w->err; /* S: an int32 sum, below 2^29 */
    for (size_t j = 0; j < N; j++) Ep[j] = TC_NO_TERM, S[j] = 0;
    for (size_t k = 0; k < m; k++) {
        const int eak = ea[k], *restrict e = ebk + k * N;
#pragma omp simd
        for (size_t j = 0; j < N; j++) Ep[j] = eak + e[j] > Ep[j] ? eak + e[j] : Ep[j];
    }
    for (size_t j = 0; j < N; j++) scale[j] = pow2i(lsb_off - (Ep[j] > -900 ? Ep[j] : 0));
    for (size_t k = 0; k < m; k++) {
        const double ak = a[k], *restrict b = Bk + k * N;
        /* trunc through int32 (cvttpd2dq vectorises, trunc() does not): every aligned term
         * is below 2^(lsb_off + 2) = 2^26 (a product's significand is below 4), so the sum
         * of a block's 8 stays below 2^29, in int32 */
#pragma omp simd
        for (size_t j = 0; j < N; j++) S[j] += (int32_t)((ak * b[j]) * scale[j]);
    }
    for (size_t j = 0; j < N; j++) {
        int has = Ep[j] > -900; /* some nonzero product (their exponents are above -300) */
        int ep = has ? Ep[j] : 0;
        double c0 = acc[j];
        float cf = (float)c0; /* exact: c is an fp32 value or inf */
        uint32_t cu;
        memcpy(&cu, &cf, sizeof cu);
        int cfin = ((cu >> 23) & 0xff) != 0xff;
        double c = tc_sel(cfin, c0, 0.0);   /* an inf c is kept below; computing with 0 instead
                                           * keeps every conversion to an integer in range */
        cu &= (uint32_t)0 - (uint32_t)cfin; /* the bits of (float)c */
        int ce = (int)((cu >> 23) & 0xff) - 127;
        int Ec = ce < -126 ? -126 : ce; /* zero and subnormals: -126 */
        double Sj = (double)S[j], mc = fabs(c) * pow2i(lsb_off - Ec), mp = fabs(Sj);
        /* signs and tests from the bits (an ordered comparison of doubles would keep the
         * loop from vectorising under -ftrapping-math); a zero's sign does not matter here:
         * its magnitude is 0 and a zero sum becomes +0 below */
        uint64_t su;
        memcpy(&su, &Sj, sizeof su);
        int pneg = (int)(su >> 63), cneg = (int)(cu >> 31);
        int d = Ec - ep, late = d > 0; /* late: the products are the smaller operand */
        double mp7 = mp * 128.0, mc7 = mc * 128.0;
        double X = tc_sel(late, mp7, mc), Y = tc_sel(late, mc7, mp);
        int xneg = late ? pneg : cneg, yneg = late ? cneg : pneg;
        int sh = late ? d : -d;
        sh = sh > 200 ? 200 : sh;      /* X < 2^40: any shift beyond 40 leaves 0 (and a lost bit) */
        double y = X * pow2i(-sh);     /* exact: X < 2^40 has at most 40 bits, y >= 2^-200 or 0 */
        double q = (double)(int64_t)y; /* trunc */
        uint64_t yb, qb;
        memcpy(&yb, &y, sizeof yb);
        memcpy(&qb, &q, sizeof qb);
        q += tc_sel((yb != qb) & xneg, 1.0, 0.0); /* toward -inf: bits lost from a negative value */
        double sum = tc_sel(xneg, -q, q) + tc_sel(yneg, -Y, Y);
        int E = late ? Ec : ep, extra = late ? 7 : 0;
        double v = sum * pow2i(E - lsb_off - extra);
        double r = (double)(float)v + 0.0; /* one rounding; a zero sum is +0 */
        r = tc_sel(has, r, c + 0.0);
        acc[j] = tc_sel(cfin, r, c0);
    }
}

/* One row of either model over the whole of K; acc holds the row's c (rounded) and receives
 * the result. */
typedef struct {
    const tc_cfg_t *g;
    const double *Bd; /* K x N, prepared */
    const int *eb;    /* K x N exponents (CDNA3) */
    size_t N, K;
} tc_amd_t;

static inline __attribute__((always_inline)) void tc_amd_row_with(
    const tc_amd_t *t, double *acc, const double *a, const int *ea, tc_amd_ws_t *w)
{
    const size_t blk = (size_t)t->g->p.block, N = t->N, K = t->K;
    for (size_t k0 = 0; k0 < K; k0 += blk) {
        size_t m = K - k0 < blk ? K - k0 : blk;
        const double *Bk = t->Bd + k0 * N;
        if (t->g->algo == DRIFT_TC_ALIGN_LATE_C) {
            tc_late_c_block_row(w, acc, a + k0, ea + k0, Bk, t->eb + k0 * N, N, m, t->g->lsb_off);
            continue;
        }
        if (tc_exact_block_row(w, acc, a + k0, Bk, N, m)) /* rare: the scalar block for the flagged outputs */
            for (size_t j = 0; j < N; j++)
                if (w->err[j]) {
                    double col[TC_MAX_BLOCK];
                    for (size_t k = 0; k < m; k++) col[k] = Bk[k * N + j];
                    acc[j] = drift_tc_block_(a + k0, col, m, acc[j], t->g);
                }
    }
}

#ifdef TC_AMD_CLONES
__attribute__((target("avx512f,avx512dq"))) static void tc_amd_row_avx512(
    const tc_amd_t *t, double *acc, const double *a, const int *ea, tc_amd_ws_t *w)
{
    tc_amd_row_with(t, acc, a, ea, w);
}

__attribute__((target("avx2"))) static void tc_amd_row_avx2(
    const tc_amd_t *t, double *acc, const double *a, const int *ea, tc_amd_ws_t *w)
{
    tc_amd_row_with(t, acc, a, ea, w);
}
#endif

static void tc_amd_row_generic(const tc_amd_t *t, double *acc, const double *a, const int *ea, tc_amd_ws_t *w)
{
    tc_amd_row_with(t, acc, a, ea, w);
}

int drift_tc_gemm_amd_rows(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g)
{
    if (drift_tc_simd_level_() == 2) { /* the register tiles (tc_gemm_tiles.c) */
        if (g->algo == DRIFT_TC_EXACT_BLOCK) return drift_tc_gemm_exact_tiles(C, A, B, M, N, K, c_init, g);
        int done, rc = drift_tc_gemm_tiles(C, A, B, M, N, K, c_init, g, &done); /* CDNA3, data of one scale */
        if (rc || done) return rc;
    }
    double *Ad = malloc(M * K * sizeof *Ad), *Bd = malloc(K * N * sizeof *Bd);
    int *ea = malloc(M * K * sizeof *ea), *eb = malloc(K * N * sizeof *eb);
    if (!Ad || !Bd || !ea || !eb) {
        free(Ad), free(Bd), free(ea), free(eb);
        return DRIFT_ENOMEM;
    }
    for (size_t t = 0; t < M * K; t++) {
        Ad[t] = drift_tc_prepare_(A[t], g);
        ea[t] = Ad[t] != 0 ? in_exp(Ad[t], g->emin_in) : TC_NO_TERM;
    }
    for (size_t t = 0; t < K * N; t++) {
        Bd[t] = drift_tc_prepare_(B[t], g);
        eb[t] = Bd[t] != 0 ? in_exp(Bd[t], g->emin_in) : TC_NO_TERM;
    }
    for (size_t t = 0; t < M * N; t++) C[t] = c_init ? drift_tc_round_c_(C[t], g) : 0.0;
    const int simd = drift_tc_simd_level_();
    const tc_amd_t t = {g, Bd, eb, N, K};
    int fail = 0;
#pragma omp parallel reduction(| : fail) if (M * N * K >= DRIFT_PAR_MIN_FMAS_GEN)
    {
        double *dw = malloc(2 * N * sizeof *dw);
        int *iw = malloc(2 * N * sizeof *iw);
        tc_amd_ws_t w = {dw, dw + N, iw, iw + N};
        if (!dw || !iw) fail = 1;
#pragma omp for schedule(static)
        for (size_t i = 0; i < M; i++) {
            if (!dw || !iw) continue; /* DRIFT_ENOMEM below */
#ifdef TC_AMD_CLONES
            if (simd == 2) {
                tc_amd_row_avx512(&t, C + i * N, Ad + i * K, ea + i * K, &w);
                continue;
            }
            if (simd == 1) {
                tc_amd_row_avx2(&t, C + i * N, Ad + i * K, ea + i * K, &w);
                continue;
            }
#endif
            tc_amd_row_generic(&t, C + i * N, Ad + i * K, ea + i * K, &w);
        }
        free(dw), free(iw);
    }
    (void)simd;
    free(Ad), free(Bd), free(ea), free(eb);
    return fail ? DRIFT_ENOMEM : DRIFT_OK;
}
