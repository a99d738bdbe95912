/* tc_gemm_floatb.c — drift_tc_gemm_floatb (tc_model.h): the tensor-core model with B held as
 * floats in its own row-major layout (the decoder's weights, kept so for the fp32 paths), for
 * the NVIDIA fp32-output configurations. drift_tc_gemm packs B (doubles to floats, exponents,
 * a validity pass) at every call; a weight matrix read once per decoded token then costs
 * several times its product. Here B is read where it lies: each load of 16 floats gives the
 * values and, in a register, their exponents and their validity, so B is never copied.
 *
 * The arithmetic is tc_gemm_packed.c's tc_fast_block (fp32 output rounded toward zero at 24
 * bits, c kept as float across K, min_exp <= -100, every nonzero input in [2^-50, 2^51)),
 * whose file comment says why it is tc_block's, bit for bit. Two changes, both exact:
 *   - pass 1 (the alignment exponent E) runs in float lanes: an input's exponent is
 *     vgetexpps (floor(log2|x|), exact small integers; -inf for 0), a product's the float
 *     sum of its inputs' (exact; -inf when either is 0), E the float max with c's vgetexpps
 *     (as tc_fast_block), converted to int32 once (exact; -inf gives INT_MIN). For a block
 *     with a nonzero product this is the integer max tc_fast_block takes, whose 16-bit lanes
 *     only differ on blocks without one (E < -100 in both: c is kept). Under the f32
 *     conditions no input is subnormal, so floor(log2|x|) is the model's ex(x).
 *   - the conditions are checked on the loads themselves: A's before the tiles (it is
 *     small), B's in pass 1 of the tiles of the first group of rows, through running
 *     maxima, minima and ORs of the bits. When a condition fails (an input that is not a
 *     value of `in`, not finite, or outside [2^-50, 2^51)) the result is dropped and the
 *     caller runs drift_tc_gemm, which handles every case: so the answer is always the
 *     model's, whatever the weights.
 * Layout: groups of R rows (4, and the M mod 4 rest as 1, 2 or 3) times tiles of 16 V outputs
 * (4 x 16, 3 x 16, 2 x 32, 1 x 64: the decoder's M = 1 reads 64 consecutive floats of a row of
 * B per k), in strips of 1024 columns; within a strip the blocks along K are outer and the
 * tiles inner, c kept in C between blocks (an fp32 value in a double: exact), so that a
 * block's rows of B are read straight along, as the hardware prefetchers follow, and stay in
 * cache while the other groups pass. Each output still takes its blocks in order; strips and
 * groups are independent, so OpenMP's thread count changes nothing.
 * Without AVX-512 (drift_tc_simd_level_() == 1) an AVX2 build of the same layout and
 * arithmetic on 8 lanes takes the same cases (its section below says what it does otherwise,
 * exactly). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "gemm_internal.h"
#include "tc_internal.h"
#include "tc_model.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#include <cpuid.h>
#include <immintrin.h>
#define TCB_AVX512 1

#define TCB_ROWS 4     /* rows of a full group */
#define TCB_STRIP 1024 /* columns of a strip: its block of B's rows stays in cache for the groups */

/* Running checks of B's loads (the bits u of 16 floats at a time):
 *   amax = max |u|           finite and below 2^51 when < 178 << 23 (inf and NaN are above);
 *   amin = min (|u| - 1)     every nonzero |x| >= 2^-50 when >= (77 << 23) - 1 (0 wraps to
 *                            the maximum, so zeros never count);
 *   orr  = OR of u           bf16: a value of bf16 when its low 16 bits are 0 (same exponent
 *                            range as fp32, subnormals included);
 *   bad                      fp16: the lanes whose float -> fp16 -> float round trip (RNE,
 *                            exact for a value of fp16) changed it, NaN included.
 * (tf32 is not taken: every load would need the truncation of drift_tc_prepare_.) */
typedef struct {
    __m512i amax, amin, orr;
    __mmask16 bad;
} tcb_check_t;

#define TCB_HI_BITS (178u << 23) /* 2^51 */
#define TCB_LO_BITS (77u << 23)  /* 2^-50 */

/* What a tile knows of its configuration. */
typedef struct {
    int lsb_off, chk, fp16;
    const tc_cfg_t *g;
} tcb_cfg_t;

/* The running checks of one block, in registers (tcb_check_t's fields). */
typedef struct {
    __m512i amax, amin, orr;
    __mmask16 bad;
} tcb_run_t;

__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void tcb_check(
    tcb_run_t *ck, __m512 b, const int fp16)
{
    __m512i u = _mm512_castps_si512(b), ua = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    ck->amax = _mm512_max_epu32(ck->amax, ua);
    if (fp16) {
        __m512 rt = _mm512_cvtph_ps(_mm512_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        ck->bad |= _mm512_cmp_ps_mask(rt, b, _CMP_NEQ_UQ);
    } else {
        ck->amin = _mm512_min_epu32(ck->amin, _mm512_sub_epi32(ua, _mm512_set1_epi32(1)));
        ck->orr = _mm512_or_si512(ck->orr, u);
    }
}

/* Pass 1 for one k: E[q] = max(E[q], ea + ex(b)) over the tile (R x V), with B's checks
 * (MODE: 0 bf16, 1 bf16 checked, 2 fp16 checked, 3 fp16). ex is the model's exponent,
 * max(floor(log2|x|), emin_in): fp16's subnormals (normal floats below 2^-14) take -14, as
 * in tc_block; bf16 needs no clamp (every nonzero input >= 2^-50 > 2^-126). */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void tcb_pass1(__m512 *E,
    const float *bk, const float *ae, const __mmask16 *cm, tcb_run_t *ck, const int R, const int V, const int MODE,
    const int FULL)
{
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
        /* masked lanes: +0, whose products are dropped */
        __m512 b = FULL ? _mm512_loadu_ps(bk + 16 * v) : _mm512_maskz_loadu_ps(cm[v], bk + 16 * v);
        if (MODE == 1 || MODE == 2) tcb_check(ck, b, MODE == 2);
        __m512 ge = _mm512_getexp_ps(b);
        if (MODE >= 2) /* fp16: the model's ex, max(floor(log2|x|), -14); a zero keeps -inf */
            ge = _mm512_mask_max_ps(
                ge, _mm512_cmp_ps_mask(ge, _mm512_set1_ps(-INFINITY), _CMP_NEQ_OQ), ge, _mm512_set1_ps(-14.0f));
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
            E[r * V + v] = _mm512_max_ps(E[r * V + v], _mm512_add_ps(_mm512_set1_ps(ae[r]), ge));
    }
}

/* One block of n products for the tile's R x V accumulators c (in and out): tc_fast_block's
 * arithmetic with pass 1 in float (file comment). Ap/Ae: the group's values and exponents,
 * R per k; B: the block's first row of the tile, rows ldb apart. MODE: 0 no check of B, 1 the
 * bf16 checks, 2 the fp16 ones, into ck (registers across the block). Pass 1's maximum is
 * taken over even and odd k apart, then of both (a max is exact in any order). */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void tcb_block(__m512 *c,
    const float *Ap, const float *Ae, const float *B, size_t ldb, const __mmask16 *cm, const size_t n,
    const tcb_cfg_t *t, tcb_run_t *ck, const int R, const int V, const int MODE, const int FULL)
{
    const __m512i vlo = _mm512_set1_epi32(-100), voff = _mm512_set1_epi32(t->lsb_off + 127);
    const __m512i vpow = _mm512_set1_epi32(254 << 23);
    __m512 E0[TCB_ROWS * 4], E1[TCB_ROWS * 4];
#pragma GCC unroll 16
    for (int q = 0; q < R * V; q++) E0[q] = E1[q] = _mm512_set1_ps(-INFINITY);
    const float *bk = B;
    size_t k = 0;
    for (; k + 1 < n; k += 2, bk += 2 * ldb) {
        tcb_pass1(E0, bk, Ae + k * (size_t)R, cm, ck, R, V, MODE, FULL);
        tcb_pass1(E1, bk + ldb, Ae + (k + 1) * (size_t)R, cm, ck, R, V, MODE, FULL);
    }
    if (k < n) tcb_pass1(E0, bk, Ae + k * (size_t)R, cm, ck, R, V, MODE, FULL);
    __m512i E[TCB_ROWS * 4], Sp[TCB_ROWS * 4], Sc[TCB_ROWS * 4];
    __m512 sc[TCB_ROWS * 4];
#pragma GCC unroll 16
    for (int q = 0; q < R * V; q++) {
        E[q] = _mm512_cvtps_epi32(_mm512_max_ps(_mm512_max_ps(E0[q], E1[q]), _mm512_getexp_ps(c[q])));
        __m512i Ec = _mm512_max_epi32(E[q], vlo);
        sc[q] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(voff, Ec), 23));
        Sc[q] = _mm512_cvttps_epi32(_mm512_mul_ps(c[q], sc[q]));
        Sp[q] = _mm512_setzero_si512();
    }
    bk = B;
#pragma GCC unroll 2
    for (k = 0; k < n; k++, bk += ldb) {
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) {
            __m512 b = FULL ? _mm512_loadu_ps(bk + 16 * v) : _mm512_maskz_loadu_ps(cm[v], bk + 16 * v);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                __m512 av = _mm512_set1_ps(Ap[k * (size_t)R + r]);
                const int q = r * V + v;
                Sp[q] = _mm512_add_epi32(Sp[q], _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(av, b), sc[q])));
            }
        }
    }
#pragma GCC unroll 16
    for (int q = 0; q < R * V; q++) {
        __m512i S = _mm512_add_epi32(Sp[q], Sc[q]);
        __m512 pw = _mm512_castsi512_ps(_mm512_sub_epi32(vpow, _mm512_castps_si512(sc[q]))); /* 2^(E - lsb_off) */
        __m512 res = _mm512_mul_ps(_mm512_cvt_roundepi32_ps(S, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), pw);
        if (t->chk) { /* the int32 sum wrapped: same signs in, another out (tc_fast_block) */
            __mmask16 ovf = _mm512_movepi32_mask(_mm512_ternarylogic_epi32(S, Sp[q], Sc[q], 0x18));
            if (ovf) {
                int32_t sp[16], sq[16], e[16];
                float rr[16];
                _mm512_storeu_si512((void *)sp, Sp[q]);
                _mm512_storeu_si512((void *)sq, Sc[q]);
                _mm512_storeu_si512((void *)e, E[q]);
                _mm512_storeu_ps(rr, res);
                for (int l = 0; l < 16; l++)
                    if (ovf >> l & 1)
                        rr[l] =
                            (float)drift_tc_finish_((double)((int64_t)sp[l] + sq[l]), pow2i(t->lsb_off - e[l]), t->g);
                res = _mm512_loadu_ps(rr);
            }
        }
        c[q] =
            _mm512_mask_add_ps(res, _mm512_cmplt_epi32_mask(E[q], vlo), c[q], _mm512_setzero_ps()); /* no product: c */
    }
}

/* The accumulators of an R x V tile from C (fp32 values held as doubles: exact both ways). */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void tcb_load_c(
    __m512 *c, double *const *crow, size_t j, const __mmask16 *cm, const int R, const int V)
{
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) {
            const double *p = crow[r] + j + 16 * v;
            __m256 lo = _mm512_cvtpd_ps(_mm512_maskz_loadu_pd((__mmask8)cm[v], p));
            __m256 hi = _mm512_cvtpd_ps(_mm512_maskz_loadu_pd((__mmask8)(cm[v] >> 8), p + 8));
            c[r * V + v] = _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
        }
}

__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void tcb_store_c(
    double *const *crow, size_t j, const __m512 *c, const __mmask16 *cm, const int R, const int V)
{
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) {
            const __m512 x = c[r * V + v];
            double *p = crow[r] + j + 16 * v;
            _mm512_mask_storeu_pd(p, (__mmask8)cm[v], _mm512_cvtps_pd(_mm512_castps512_ps256(x)));
            _mm512_mask_storeu_pd(p + 8, (__mmask8)(cm[v] >> 8), _mm512_cvtps_pd(_mm512_extractf32x8_ps(x, 1)));
        }
}

/* One strip: R rows (crow, at the strip's first column, C holding 0 or the blocks so far) x ns
 * columns of B from B (rows ldb apart), blocks of blk along K outer (BLK: the same as a
 * constant, 0 when none of those compiled) and tiles of 16 V columns inner, so that the
 * block's rows of B are read straight along, as the hardware prefetchers follow, and stay in
 * cache for the next group of rows. Each output still takes its blocks in order, c through C. */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void tcb_strip_with(
    double *const *crow, size_t ns, const float *Ap, const float *Ae, const float *B, size_t ldb, size_t K, size_t blk,
    const tcb_cfg_t *t, tcb_check_t *ckp, const int R, const int V, const int MODE, const size_t BLK)
{
    tcb_run_t ck = {ckp->amax, ckp->amin, ckp->orr, ckp->bad};
    const __mmask16 full[4] = {0xffff, 0xffff, 0xffff, 0xffff};
    for (size_t k0 = 0; k0 < K; k0 += blk) {
        const size_t n = K - k0 < blk ? K - k0 : blk;
        const float *a = Ap + k0 * (size_t)R, *e = Ae + k0 * (size_t)R, *bb = B + k0 * ldb;
        size_t j = 0;
        for (; j + 16 * (size_t)V <= ns; j += 16 * (size_t)V) {
            __m512 c[TCB_ROWS * 4];
            tcb_load_c(c, crow, j, full, R, V);
            if (BLK && n == BLK)
                tcb_block(c, a, e, bb + j, ldb, full, BLK, t, &ck, R, V, MODE, 1);
            else
                tcb_block(c, a, e, bb + j, ldb, full, n, t, &ck, R, V, MODE, 1);
            tcb_store_c(crow, j, c, full, R, V);
        }
        if (j < ns) { /* the last columns: masked loads and stores (masked lanes are +0) */
            __mmask16 cm[4];
            for (int v = 0; v < V; v++) {
                size_t l = ns - j > (size_t)(16 * v) ? ns - j - (size_t)(16 * v) : 0;
                cm[v] = (__mmask16)(l >= 16 ? 0xffffu : (1u << l) - 1);
            }
            __m512 c[TCB_ROWS * 4];
            tcb_load_c(c, crow, j, cm, R, V);
            tcb_block(c, a, e, bb + j, ldb, cm, n, t, &ck, R, V, MODE, 0);
            tcb_store_c(crow, j, c, cm, R, V);
        }
    }
    if (MODE == 1 || MODE == 2) ckp->amax = ck.amax, ckp->amin = ck.amin, ckp->orr = ck.orr, ckp->bad = ck.bad;
}

/* The instantiations: (R, V) of the groups, MODE, the NVIDIA fp16/bf16 blocks. */
#define TCB_TILE(R, V, MODE)                                                                                  \
    __attribute__((target("avx512f,avx512dq"))) static void tcb_strip_##R##_##V##_##MODE(double *const *crow, \
        size_t ns, const float *Ap, const float *Ae, const float *B, size_t ldb, size_t K, size_t blk,        \
        const tcb_cfg_t *t, tcb_check_t *ck)                                                                  \
    {                                                                                                         \
        if (blk == 8)                                                                                         \
            tcb_strip_with(crow, ns, Ap, Ae, B, ldb, K, blk, t, ck, R, V, MODE, 8);                           \
        else if (blk == 16)                                                                                   \
            tcb_strip_with(crow, ns, Ap, Ae, B, ldb, K, blk, t, ck, R, V, MODE, 16);                          \
        else                                                                                                  \
            tcb_strip_with(crow, ns, Ap, Ae, B, ldb, K, blk, t, ck, R, V, MODE, 0);                           \
    }
#define TCB_TILES(R, V) TCB_TILE(R, V, 0) TCB_TILE(R, V, 1) TCB_TILE(R, V, 2) TCB_TILE(R, V, 3)
TCB_TILES(4, 1)
TCB_TILES(3, 1)
TCB_TILES(2, 2)
TCB_TILES(1, 4)

typedef void (*tcb_strip_fn)(double *const *, size_t, const float *, const float *, const float *, size_t, size_t,
    size_t, const tcb_cfg_t *, tcb_check_t *);

/* [R - 1][MODE] */
static const tcb_strip_fn TCB_FN[TCB_ROWS][4] = {
    {tcb_strip_1_4_0, tcb_strip_1_4_1, tcb_strip_1_4_2, tcb_strip_1_4_3},
    {tcb_strip_2_2_0, tcb_strip_2_2_1, tcb_strip_2_2_2, tcb_strip_2_2_3},
    {tcb_strip_3_1_0, tcb_strip_3_1_1, tcb_strip_3_1_2, tcb_strip_3_1_3},
    {tcb_strip_4_1_0, tcb_strip_4_1_1, tcb_strip_4_1_2, tcb_strip_4_1_3},
};

__attribute__((target("avx512f,avx512dq"))) static void tcb_check_init(tcb_check_t *ck)
{
    ck->amax = _mm512_setzero_si512();
    ck->amin = _mm512_set1_epi32(-1);
    ck->orr = _mm512_setzero_si512();
    ck->bad = 0;
}

/* 1 when every load checked satisfies the conditions (tcb_check_t). */
__attribute__((target("avx512f,avx512dq"))) static int tcb_check_ok(const tcb_check_t *ck, const tcb_cfg_t *t)
{
    if (_mm512_reduce_max_epu32(ck->amax) >= TCB_HI_BITS) return 0;
    if (t->fp16) return ck->bad == 0;
    if (_mm512_reduce_min_epu32(ck->amin) < TCB_LO_BITS - 1) return 0;
    return (_mm512_reduce_or_epi32(ck->orr) & 0xffff) == 0;
}

/* The kernel's constants for g: lsb_off, whether a block's integer sum can pass INT32_MAX
 * (then the wide path), fp16 or not. */
static tcb_cfg_t tcb_cfg(const tc_cfg_t *g)
{
    const tcb_cfg_t t = {g->lsb_off,
        (int64_t)g->p.block * (((int64_t)1 << (g->lsb_off + 2)) - 1) + ((int64_t)1 << (g->lsb_off + 1)) - 1 > INT32_MAX,
        g->in == DRIFT_FP16, g};
    return t;
}

/* A packed for the kernels: R rows interleaved per k, in groups of TCB_ROWS then the M mod
 * TCB_ROWS rest; Ap the floats (exact: values of a float format), Ae the model's exponent
 * ex(a) of each (-inf for 0) or, with pow2, 2^ex(a) (0 for 0), as the AVX2 pass 1 wants it.
 * DRIFT_OK with *Ap = NULL when an input lies outside [2^-50, 2^51) (the exact path's), and
 * DRIFT_ENOMEM; the caller frees both. */
static int tcb_pack_a(float **Ap_out, float **Ae_out, const double *A, size_t M, size_t K, int emin_in, int pow2)
{
    float *Ap = malloc(M * K * sizeof *Ap), *Ae = malloc(M * K * sizeof *Ae);
    *Ap_out = *Ae_out = NULL;
    if (!Ap || !Ae) {
        free(Ap), free(Ae);
        return DRIFT_ENOMEM;
    }
    const size_t ngroups = (M + TCB_ROWS - 1) / TCB_ROWS;
    int wide = 0;
    for (size_t gi = 0; gi < ngroups; gi++) {
        const size_t i0 = gi * TCB_ROWS, R = M - i0 < TCB_ROWS ? M - i0 : TCB_ROWS;
        for (size_t r = 0; r < R; r++)
            for (size_t k = 0; k < K; k++) {
                double a = A[(i0 + r) * K + k];
                size_t at = i0 * K + k * R + r;
                Ap[at] = (float)a;
                if (pow2)
                    Ae[at] = a != 0 ? (float)pow2i(in_exp(a, emin_in)) : 0.0f;
                else
                    Ae[at] = a != 0 ? (float)in_exp(a, emin_in) : -INFINITY; /* the model's ex (pass 1) */
                wide |= a != 0 && (dexp(a) < -50 || dexp(a) > 50);
            }
    }
    if (wide) {
        free(Ap), free(Ae);
        return DRIFT_OK;
    }
    *Ap_out = Ap, *Ae_out = Ae;
    return DRIFT_OK;
}

/* The rows of one tile's output (R rows of ns columns from (i0, j0) of C, ldc N), set to 0:
 * c = 0 before the first block. */
static void tcb_rows_zero(double **crow, double *C, size_t N, size_t i0, size_t R, size_t j0, size_t ns)
{
    for (size_t r = 0; r < R; r++) {
        crow[r] = C + (i0 + r) * N + j0;
        memset(crow[r], 0, ns * sizeof(double));
    }
}

/* ---- the same on AVX2 (8 lanes; F16C for the fp16 check) ---------------------------------
 * the AVX-512 level's layout (tcb_gemm below drives both) and tc_fast_block's arithmetic,
 * with what AVX2 lacks done another exact way:
 *   - pass 1 in powers of two: an input's 2^ex(x) is its float with the fraction and sign
 *     cleared (+0 for 0), a product's 2^(ex(a) + ex(b)) the float product of its inputs'
 *     (exact: -100 <= ex(a) + ex(b) <= 100 under the conditions; +0 when either is 0, so
 *     zeros need no lane of their own), 2^E their float max with c's (c is 0 or a normal
 *     fp32: results are >= 2^-125), whose bits are (E + 127) << 23 (0 when no term). No
 *     vgetexpps, and the scale's bits follow from E's by one integer subtraction;
 *   - ex(x) is the model's, max(floor(log2|x|), emin_in): fp16's subnormals (as floats,
 *     normal numbers below 2^-14) take -14, as in tc_block. The clamp is a max on the bits
 *     and a vpsignd that keeps 0 at 0; bf16 needs none (emin_in = -126, every nonzero input
 *     >= 2^-50);
 *   - S to float toward zero without embedded rounding: vcvtdq2ps rounds to nearest, and
 *     where that went away from zero (S - trunc(f) has the other sign than S; f = 2^31, whose
 *     truncation wraps to INT_MIN, still gives a negative difference for S > 0) the float
 *     one below in magnitude, bits - 1, is S truncated to 24 bits;
 *   - masked loads and stores are vmaskmov (masked lanes load +0, as the AVX-512 path's). */
#define TCB2_EXP_BITS 0x7f800000 /* sign and fraction cleared: 2^floor(log2|x|) for a normal x */
#define TCB2_E_MIN (27 << 23)    /* the bits of 2^-100: E < -100 is no product (c is kept) */

/* tcb_check_t's running checks, in 8 lanes; bad: lanes of failed fp16 round trips (all ones). */
typedef struct {
    __m256i amax, amin, orr, bad;
} tcb2_check_t;

__attribute__((target("avx2,f16c"))) static inline __attribute__((always_inline)) void tcb2_check(
    tcb2_check_t *ck, __m256 b, const int fp16)
{
    __m256i u = _mm256_castps_si256(b), ua = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    ck->amax = _mm256_max_epu32(ck->amax, ua);
    if (fp16) {
        __m256 rt = _mm256_cvtph_ps(_mm256_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT));
        ck->bad = _mm256_or_si256(ck->bad, _mm256_castps_si256(_mm256_cmp_ps(rt, b, _CMP_NEQ_UQ)));
    } else {
        ck->amin = _mm256_min_epu32(ck->amin, _mm256_sub_epi32(ua, _mm256_set1_epi32(1)));
        ck->orr = _mm256_or_si256(ck->orr, u);
    }
}

__attribute__((target("avx2,f16c"))) static inline __attribute__((always_inline)) __m256 tcb2_load(
    const float *p, __m256i m, const int FULL)
{
    return FULL ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}

/* Pass 1 for one k: P[q] = max(P[q], 2^ex(a) 2^ex(b)) over the tile (R x V), with B's checks
 * (CHK; FP16: the fp16 check and clamp). */
__attribute__((target("avx2,f16c"))) static inline __attribute__((always_inline)) void tcb2_pass1(__m256 *P,
    const float *bk, const float *ap, const __m256i *cm, tcb2_check_t *ck, const int R, const int V, const int CHK,
    const int FP16, const int FULL)
{
#pragma GCC unroll 8
    for (int v = 0; v < V; v++) {
        __m256 b = tcb2_load(bk + 8 * v, cm[v], FULL);
        if (CHK) tcb2_check(ck, b, FP16);
        __m256i pb = _mm256_and_si256(_mm256_castps_si256(b), _mm256_set1_epi32(TCB2_EXP_BITS));
        if (FP16) /* 2^max(e, -14), 0 kept */
            pb = _mm256_sign_epi32(_mm256_max_epi32(pb, _mm256_set1_epi32(113 << 23)), pb);
        const __m256 pf = _mm256_castsi256_ps(pb);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
            P[r * V + v] = _mm256_max_ps(P[r * V + v], _mm256_mul_ps(_mm256_set1_ps(ap[r]), pf));
    }
}

/* tcb_block on 8 lanes: Ap the group's values, Ae their 2^ex (0 for 0), R per k. */
__attribute__((target("avx2,f16c"))) static inline __attribute__((always_inline)) void tcb2_block(__m256 *c,
    const float *Ap, const float *Ae, const float *B, size_t ldb, const __m256i *cm, const size_t n, const tcb_cfg_t *t,
    tcb2_check_t *ck, const int R, const int V, const int CHK, const int FP16, const int FULL)
{
    const __m256i vlo = _mm256_set1_epi32(TCB2_E_MIN); /* voff: (lsb_off + 254) << 23, which wraps in int32 */
    const __m256i voff = _mm256_add_epi32(_mm256_set1_epi32((t->lsb_off + 127) << 23), _mm256_set1_epi32(127 << 23));
    const __m256i vpow = _mm256_set1_epi32(254 << 23), vexp = _mm256_set1_epi32(TCB2_EXP_BITS);
    __m256 P0[TCB_ROWS * 8], P1[TCB_ROWS * 8];
#pragma GCC unroll 16
    for (int q = 0; q < R * V; q++) P0[q] = P1[q] = _mm256_setzero_ps();
    const float *bk = B;
    size_t k = 0;
    for (; k + 1 < n; k += 2, bk += 2 * ldb) {
        tcb2_pass1(P0, bk, Ae + k * (size_t)R, cm, ck, R, V, CHK, FP16, FULL);
        tcb2_pass1(P1, bk + ldb, Ae + (k + 1) * (size_t)R, cm, ck, R, V, CHK, FP16, FULL);
    }
    if (k < n) tcb2_pass1(P0, bk, Ae + k * (size_t)R, cm, ck, R, V, CHK, FP16, FULL);
    __m256i Eb[TCB_ROWS * 8], Sp[TCB_ROWS * 8], Sc[TCB_ROWS * 8];
    __m256 sc[TCB_ROWS * 8];
#pragma GCC unroll 16
    for (int q = 0; q < R * V; q++) {
        __m256 cp = _mm256_and_ps(c[q], _mm256_castsi256_ps(vexp));                  /* 2^floor(log2|c|), 0 for 0 */
        Eb[q] = _mm256_castps_si256(_mm256_max_ps(_mm256_max_ps(P0[q], P1[q]), cp)); /* (E + 127) << 23 */
        /* 2^(lsb_off - max(E, -100)): biased lsb_off + 127 - max(E, -100) */
        sc[q] = _mm256_castsi256_ps(_mm256_sub_epi32(voff, _mm256_max_epi32(Eb[q], vlo)));
        Sc[q] = _mm256_cvttps_epi32(_mm256_mul_ps(c[q], sc[q]));
        Sp[q] = _mm256_setzero_si256();
    }
    bk = B;
#pragma GCC unroll 2
    for (k = 0; k < n; k++, bk += ldb) {
#pragma GCC unroll 8
        for (int v = 0; v < V; v++) {
            __m256 b = tcb2_load(bk + 8 * v, cm[v], FULL);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                __m256 av = _mm256_set1_ps(Ap[k * (size_t)R + r]);
                const int q = r * V + v;
                Sp[q] = _mm256_add_epi32(Sp[q], _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_mul_ps(av, b), sc[q])));
            }
        }
    }
#pragma GCC unroll 16
    for (int q = 0; q < R * V; q++) {
        __m256i S = _mm256_add_epi32(Sp[q], Sc[q]);
        __m256 pw = _mm256_castsi256_ps(_mm256_sub_epi32(vpow, _mm256_castps_si256(sc[q]))); /* 2^(E - lsb_off) */
        __m256 f = _mm256_cvtepi32_ps(S);                                                    /* nearest-even */
        __m256i away = _mm256_srai_epi32(_mm256_sign_epi32(S, _mm256_sub_epi32(S, _mm256_cvttps_epi32(f))), 31);
        __m256 res = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(f), away)), pw);
        if (t->chk) { /* the int32 sum wrapped: same signs in, another out */
            int ovf = _mm256_movemask_ps(
                _mm256_castsi256_ps(_mm256_and_si256(_mm256_xor_si256(S, Sp[q]), _mm256_xor_si256(S, Sc[q]))));
            if (ovf) {
                int32_t sp[8], sq[8], e[8];
                float rr[8];
                _mm256_storeu_si256((__m256i *)sp, Sp[q]);
                _mm256_storeu_si256((__m256i *)sq, Sc[q]);
                _mm256_storeu_si256((__m256i *)e, Eb[q]);
                _mm256_storeu_ps(rr, res);
                for (int l = 0; l < 8; l++)
                    if (ovf >> l & 1)
                        rr[l] = (float)drift_tc_finish_(
                            (double)((int64_t)sp[l] + sq[l]), pow2i(t->lsb_off - ((e[l] >> 23) - 127)), t->g);
                res = _mm256_loadu_ps(rr);
            }
        }
        __m256 none = _mm256_castsi256_ps(_mm256_cmpgt_epi32(vlo, Eb[q])); /* no product: c (+0 for -0) */
        c[q] = _mm256_blendv_ps(res, _mm256_add_ps(c[q], _mm256_setzero_ps()), none);
    }
}

/* The 64-bit lane masks of the 8 float lanes of m, for C's doubles. */
__attribute__((target("avx2,f16c"))) static inline __attribute__((always_inline)) __m256i tcb2_m64(__m256i m, int hi)
{
    return _mm256_cvtepi32_epi64(hi ? _mm256_extracti128_si256(m, 1) : _mm256_castsi256_si128(m));
}

__attribute__((target("avx2,f16c"))) static inline __attribute__((always_inline)) void tcb2_load_c(
    __m256 *c, double *const *crow, size_t j, const __m256i *cm, const int R, const int V, const int FULL)
{
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int v = 0; v < V; v++) {
            const double *p = crow[r] + j + 8 * v;
            __m256d lo = FULL ? _mm256_loadu_pd(p) : _mm256_maskload_pd(p, tcb2_m64(cm[v], 0));
            __m256d hi = FULL ? _mm256_loadu_pd(p + 4) : _mm256_maskload_pd(p + 4, tcb2_m64(cm[v], 1));
            c[r * V + v] = _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo)); /* fp32 values: exact */
        }
}

__attribute__((target("avx2,f16c"))) static inline __attribute__((always_inline)) void tcb2_store_c(
    double *const *crow, size_t j, const __m256 *c, const __m256i *cm, const int R, const int V, const int FULL)
{
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int v = 0; v < V; v++) {
            const __m256 x = c[r * V + v];
            double *p = crow[r] + j + 8 * v;
            __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x)), hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
            if (FULL) {
                _mm256_storeu_pd(p, lo);
                _mm256_storeu_pd(p + 4, hi);
            } else {
                _mm256_maskstore_pd(p, tcb2_m64(cm[v], 0), lo);
                _mm256_maskstore_pd(p + 4, tcb2_m64(cm[v], 1), hi);
            }
        }
}

/* tcb_strip_with on 8 lanes: tiles of 8 V columns. */
__attribute__((target("avx2,f16c"))) static inline __attribute__((always_inline)) void tcb2_strip_with(
    double *const *crow, size_t ns, const float *Ap, const float *Ae, const float *B, size_t ldb, size_t K, size_t blk,
    const tcb_cfg_t *t, tcb2_check_t *ckp, const int R, const int V, const int CHK, const int FP16, const size_t BLK)
{
    tcb2_check_t ck = *ckp;
    __m256i full[8];
    for (int v = 0; v < 8; v++) full[v] = _mm256_set1_epi32(-1);
    for (size_t k0 = 0; k0 < K; k0 += blk) {
        const size_t n = K - k0 < blk ? K - k0 : blk;
        const float *a = Ap + k0 * (size_t)R, *e = Ae + k0 * (size_t)R, *bb = B + k0 * ldb;
        size_t j = 0;
        for (; j + 8 * (size_t)V <= ns; j += 8 * (size_t)V) {
            __m256 c[TCB_ROWS * 8];
            tcb2_load_c(c, crow, j, full, R, V, 1);
            if (BLK && n == BLK)
                tcb2_block(c, a, e, bb + j, ldb, full, BLK, t, &ck, R, V, CHK, FP16, 1);
            else
                tcb2_block(c, a, e, bb + j, ldb, full, n, t, &ck, R, V, CHK, FP16, 1);
            tcb2_store_c(crow, j, c, full, R, V, 1);
        }
        if (j < ns) { /* the last columns: masked loads and stores (masked lanes are +0) */
            __m256i cm[8];
            const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            for (int v = 0; v < V; v++) {
                size_t l = ns - j > (size_t)(8 * v) ? ns - j - (size_t)(8 * v) : 0;
                cm[v] = _mm256_cmpgt_epi32(_mm256_set1_epi32(l >= 8 ? 8 : (int)l), lane);
            }
            __m256 c[TCB_ROWS * 8];
            tcb2_load_c(c, crow, j, cm, R, V, 0);
            tcb2_block(c, a, e, bb + j, ldb, cm, n, t, &ck, R, V, CHK, FP16, 0);
            tcb2_store_c(crow, j, c, cm, R, V, 0);
        }
    }
    if (CHK) *ckp = ck;
}

/* The instantiations: (R, V) of the groups, CHK, FP16, the NVIDIA fp16/bf16 blocks. */
#define TCB2_TILE(R, V, CHK, FP16)                                                                           \
    __attribute__((target("avx2,f16c"))) static void tcb2_strip_##R##_##V##_##CHK##FP16(double *const *crow, \
        size_t ns, const float *Ap, const float *Ae, const float *B, size_t ldb, size_t K, size_t blk,       \
        const tcb_cfg_t *t, tcb2_check_t *ck)                                                                \
    {                                                                                                        \
        if (blk == 8)                                                                                        \
            tcb2_strip_with(crow, ns, Ap, Ae, B, ldb, K, blk, t, ck, R, V, CHK, FP16, 8);                    \
        else if (blk == 16)                                                                                  \
            tcb2_strip_with(crow, ns, Ap, Ae, B, ldb, K, blk, t, ck, R, V, CHK, FP16, 16);                   \
        else                                                                                                 \
            tcb2_strip_with(crow, ns, Ap, Ae, B, ldb, K, blk, t, ck, R, V, CHK, FP16, 0);                    \
    }
#define TCB2_TILES(R, V) TCB2_TILE(R, V, 0, 0) TCB2_TILE(R, V, 0, 1) TCB2_TILE(R, V, 1, 0) TCB2_TILE(R, V, 1, 1)
TCB2_TILES(4, 1)
TCB2_TILES(3, 1)
TCB2_TILES(2, 2)
TCB2_TILES(1, 4)

typedef void (*tcb2_strip_fn)(double *const *, size_t, const float *, const float *, const float *, size_t, size_t,
    size_t, const tcb_cfg_t *, tcb2_check_t *);

/* [R - 1][CHK][FP16] */
#define TCB2_ROW(R, V)                                           \
    {                                                            \
        {tcb2_strip_##R##_##V##_00, tcb2_strip_##R##_##V##_01},  \
        {                                                        \
            tcb2_strip_##R##_##V##_10, tcb2_strip_##R##_##V##_11 \
        }                                                        \
    }
static const tcb2_strip_fn TCB2_FN[TCB_ROWS][2][2] = {TCB2_ROW(1, 4), TCB2_ROW(2, 2), TCB2_ROW(3, 1), TCB2_ROW(4, 1)};

__attribute__((target("avx2,f16c"))) static void tcb2_check_init(tcb2_check_t *ck)
{
    ck->amax = _mm256_setzero_si256();
    ck->amin = _mm256_set1_epi32(-1);
    ck->orr = _mm256_setzero_si256();
    ck->bad = _mm256_setzero_si256();
}

/* 1 when every load checked satisfies the conditions (tcb_check_t). */
__attribute__((target("avx2,f16c"))) static int tcb2_check_ok(const tcb2_check_t *ck, const tcb_cfg_t *t)
{
    uint32_t amax[8], amin[8], orr[8], bad[8];
    _mm256_storeu_si256((__m256i *)amax, ck->amax);
    _mm256_storeu_si256((__m256i *)amin, ck->amin);
    _mm256_storeu_si256((__m256i *)orr, ck->orr);
    _mm256_storeu_si256((__m256i *)bad, ck->bad);
    uint32_t hi = 0, lo = UINT32_MAX, o = 0, b = 0;
    for (int l = 0; l < 8; l++) {
        hi = amax[l] > hi ? amax[l] : hi;
        lo = amin[l] < lo ? amin[l] : lo;
        o |= orr[l], b |= bad[l];
    }
    if (hi >= TCB_HI_BITS) return 0;
    if (t->fp16) return b == 0;
    if (lo < TCB_LO_BITS - 1) return 0;
    return (o & 0xffff) == 0;
}

/* ---- the GEMM, on either level --------------------------------------------------------------
 * A packed (floats and their exponents as the level's pass 1 wants them, R rows interleaved per
 * k, groups of 4 then the M mod 4 rest), then the tiles, column strips outer so that a strip of
 * B stays in cache while the groups pass; the first group's tiles check B. A level is its
 * running check and its tile kernels; the driver is one. */
typedef struct {
    int pow2; /* Ae holds 2^ex(a) (AVX2) rather than ex(a) (AVX-512) */
    void (*check_init)(void *ck);
    int (*check_ok)(const void *ck, const tcb_cfg_t *t);
    /* one tile of R rows and ns columns at crow; check: this tile checks the loads of B */
    void (*tile)(double *const *crow, size_t ns, size_t R, int check, const float *Ap, const float *Ae, const float *B,
        size_t ldb, size_t K, size_t blk, const tcb_cfg_t *t, void *ck);
} tcb_level_t;

__attribute__((target("avx512f,avx512dq"))) static void tcb_init_512(void *ck) { tcb_check_init(ck); }
__attribute__((target("avx512f,avx512dq"))) static int tcb_ok_512(const void *ck, const tcb_cfg_t *t)
{
    return tcb_check_ok(ck, t);
}
static void tcb_tile_512(double *const *crow, size_t ns, size_t R, int check, const float *Ap, const float *Ae,
    const float *B, size_t ldb, size_t K, size_t blk, const tcb_cfg_t *t, void *ck)
{
    const int mode = check ? (t->fp16 ? 2 : 1) : (t->fp16 ? 3 : 0);
    TCB_FN[R - 1][mode](crow, ns, Ap, Ae, B, ldb, K, blk, t, ck);
}
__attribute__((target("avx2,f16c"))) static void tcb_init_256(void *ck) { tcb2_check_init(ck); }
__attribute__((target("avx2,f16c"))) static int tcb_ok_256(const void *ck, const tcb_cfg_t *t)
{
    return tcb2_check_ok(ck, t);
}
static void tcb_tile_256(double *const *crow, size_t ns, size_t R, int check, const float *Ap, const float *Ae,
    const float *B, size_t ldb, size_t K, size_t blk, const tcb_cfg_t *t, void *ck)
{
    TCB2_FN[R - 1][check][t->fp16](crow, ns, Ap, Ae, B, ldb, K, blk, t, ck);
}
static const tcb_level_t TCB_512 = {0, tcb_init_512, tcb_ok_512, tcb_tile_512};
static const tcb_level_t TCB_256 = {1, tcb_init_256, tcb_ok_256, tcb_tile_256};

static int tcb_gemm(const tcb_level_t *lv, double *C, const double *A, const float *Bf, size_t M, size_t N, size_t K,
    const tc_cfg_t *g, int b_valid, int *done)
{
    const tcb_cfg_t t = tcb_cfg(g);
    float *Ap, *Ae;
    int rc = tcb_pack_a(&Ap, &Ae, A, M, K, g->emin_in, lv->pow2);
    if (rc != DRIFT_OK || !Ap) return rc; /* no memory, or an input outside the fast path: *done stays 0 */
    const size_t ngroups = (M + TCB_ROWS - 1) / TCB_ROWS, nstrips = (N + TCB_STRIP - 1) / TCB_STRIP;
    const size_t blk = (size_t)g->p.block;
    int bad = 0;
#pragma omp parallel reduction(| : bad) if (M * N * K >= DRIFT_PAR_MIN_FMAS_GEN)
    {
        union {
            tcb_check_t v512;
            tcb2_check_t v256;
        } ck;
        lv->check_init(&ck);
#pragma omp for collapse(2) schedule(static)
        for (size_t st = 0; st < nstrips; st++)
            for (size_t gi = 0; gi < ngroups; gi++) {
                const size_t j0 = st * TCB_STRIP, i0 = gi * TCB_ROWS, R = M - i0 < TCB_ROWS ? M - i0 : TCB_ROWS;
                const size_t ns = N - j0 < TCB_STRIP ? N - j0 : TCB_STRIP;
                double *crow[TCB_ROWS];
                tcb_rows_zero(crow, C, N, i0, R, j0, ns);
                lv->tile(crow, ns, R, gi == 0 && !b_valid, Ap + i0 * K, Ae + i0 * K, Bf + j0, N, K, blk, &t, &ck);
            }
        bad |= !lv->check_ok(&ck, &t);
    }
    free(Ap), free(Ae);
    *done = !bad;
    return DRIFT_OK;
}

/* AVX2 and F16C (every AVX2 CPU so far has F16C; the fp16 check needs it). */
/* F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does not know "f16c" */
static int tcb2_have(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

int drift_tc_gemm_floatb(double *C, const double *A, const float *Bf, size_t M, size_t N, size_t K,
    drift_tc_arch_t arch, drift_format_t in, drift_format_t out_fmt, int b_valid, int *done)
{
    if (!done) return DRIFT_EINVAL;
    *done = 0;
    if (!C || (M && N && K && (!A || !Bf))) return DRIFT_EINVAL;
    tc_cfg_t g;
    int rc = drift_tc_config_(&g, arch, in, out_fmt);
    if (rc) return rc;
    if (M == 0 || N == 0 || K == 0) return DRIFT_OK; /* drift_tc_gemm's own cases */
    if (M > SIZE_MAX / N || M > SIZE_MAX / K || N > SIZE_MAX / K) return DRIFT_OK;
#ifdef TCB_AVX512
    /* tc_fast_block's conditions on the configuration (tc_gemm_packed.c) */
    const int64_t tmax = ((int64_t)1 << (g.lsb_off + 2)) - 1;
    if (g.algo != DRIFT_TC_ALIGN_TRUNC || g.out != DRIFT_FP32 || !g.rz || g.out_p != 24 || g.p.min_exp > -100 ||
        (int64_t)g.p.block * tmax > INT32_MAX)
        return DRIFT_OK;
    if (in != DRIFT_BF16 && in != DRIFT_FP16) return DRIFT_OK; /* tf32 would truncate every load */
    const int simd = drift_tc_simd_level_();                   /* 2: AVX-512 F and DQ, not disabled; 1: AVX2 */
    if (simd < 1 || (simd == 1 && !tcb2_have())) return DRIFT_OK;
    const char *env = getenv("DRIFT_TC_NO_FLOATB"); /* lets the tests and the bench reach drift_tc_gemm */
    if (env && *env && strcmp(env, "0") != 0) return DRIFT_OK;
    if (!drift_tc_finite_values_(A, M * K, &g)) return DRIFT_OK; /* A's special values: drift_tc_gemm */
    return tcb_gemm(simd == 1 ? &TCB_256 : &TCB_512, C, A, Bf, M, N, K, &g, b_valid, done);
#else
    return DRIFT_OK;
#endif
}

#ifdef TCB_AVX512
__attribute__((target("avx512f,avx512dq"))) static int tcb_valid(const float *Bf, size_t n, int fp16)
{
    const tcb_cfg_t t = {0, 0, fp16, NULL};
    tcb_check_t ck;
    tcb_check_init(&ck);
    tcb_run_t r = {ck.amax, ck.amin, ck.orr, ck.bad};
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 m = (__mmask16)(n - i >= 16 ? 0xffffu : (1u << (n - i)) - 1);
        tcb_check(&r, _mm512_maskz_loadu_ps(m, Bf + i), fp16); /* masked lanes: +0, which passes */
    }
    ck.amax = r.amax, ck.amin = r.amin, ck.orr = r.orr, ck.bad = r.bad;
    return tcb_check_ok(&ck, &t);
}

__attribute__((target("avx2,f16c"))) static int tcb2_valid(const float *Bf, size_t n, int fp16)
{
    const tcb_cfg_t t = {0, 0, fp16, NULL};
    tcb2_check_t ck;
    tcb2_check_init(&ck);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) tcb2_check(&ck, _mm256_loadu_ps(Bf + i), fp16);
    if (i < n) /* masked lanes: +0, which passes */
        tcb2_check(&ck, _mm256_maskload_ps(Bf + i, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - i)), lane)), fp16);
    return tcb2_check_ok(&ck, &t);
}
#endif

int drift_tc_floatb_valid(const float *Bf, size_t n, drift_format_t in)
{
    if (!Bf || (in != DRIFT_BF16 && in != DRIFT_FP16)) return 0;
#ifdef TCB_AVX512
    const int simd = drift_tc_simd_level_();
    if (simd == 2) return tcb_valid(Bf, n, in == DRIFT_FP16);
    if (simd == 1 && tcb2_have()) return tcb2_valid(Bf, n, in == DRIFT_FP16);
    return 0;
#else
    (void)n;
    return 0;
#endif
}
