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
 * groups are independent, so OpenMP's thread count changes nothing. */
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
#include <immintrin.h>
#define TCB_AVX512 1

#define TCB_ROWS 4  /* rows of a full group */
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

__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void
tcb_check(tcb_run_t *ck, __m512 b, const int fp16)
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
 * (MODE). */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void
tcb_pass1(__m512 *E, const float *bk, const float *ae, const __mmask16 *cm, tcb_run_t *ck, const int R, const int V,
          const int MODE, const int FULL)
{
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
        /* masked lanes: +0, whose products are dropped */
        __m512 b = FULL ? _mm512_loadu_ps(bk + 16 * v) : _mm512_maskz_loadu_ps(cm[v], bk + 16 * v);
        if (MODE) tcb_check(ck, b, MODE == 2);
        __m512 ge = _mm512_getexp_ps(b);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) E[r * V + v] = _mm512_max_ps(E[r * V + v], _mm512_add_ps(_mm512_set1_ps(ae[r]), ge));
    }
}

/* One block of n products for the tile's R x V accumulators c (in and out): tc_fast_block's
 * arithmetic with pass 1 in float (file comment). Ap/Ae: the group's values and exponents,
 * R per k; B: the block's first row of the tile, rows ldb apart. MODE: 0 no check of B, 1 the
 * bf16 checks, 2 the fp16 ones, into ck (registers across the block). Pass 1's maximum is
 * taken over even and odd k apart, then of both (a max is exact in any order). */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void
tcb_block(__m512 *c, const float *Ap, const float *Ae, const float *B, size_t ldb, const __mmask16 *cm, const size_t n,
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
                        rr[l] = (float)drift_tc_finish_((double)((int64_t)sp[l] + sq[l]), pow2i(t->lsb_off - e[l]), t->g);
                res = _mm512_loadu_ps(rr);
            }
        }
        c[q] = _mm512_mask_add_ps(res, _mm512_cmplt_epi32_mask(E[q], vlo), c[q], _mm512_setzero_ps()); /* no product: c */
    }
}

/* The accumulators of an R x V tile from C (fp32 values held as doubles: exact both ways). */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void
tcb_load_c(__m512 *c, double *const *crow, size_t j, const __mmask16 *cm, const int R, const int V)
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

__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void
tcb_store_c(double *const *crow, size_t j, const __m512 *c, const __mmask16 *cm, const int R, const int V)
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
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void
tcb_strip_with(double *const *crow, size_t ns, const float *Ap, const float *Ae, const float *B, size_t ldb, size_t K,
               size_t blk, const tcb_cfg_t *t, tcb_check_t *ckp, const int R, const int V, const int MODE,
               const size_t BLK)
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
    if (MODE) ckp->amax = ck.amax, ckp->amin = ck.amin, ckp->orr = ck.orr, ckp->bad = ck.bad;
}

/* The instantiations: (R, V) of the groups, MODE, the NVIDIA fp16/bf16 blocks. */
#define TCB_TILE(R, V, MODE)                                                                                             \
    __attribute__((target("avx512f,avx512dq"))) static void tcb_strip_##R##_##V##_##MODE(                               \
        double *const *crow, size_t ns, const float *Ap, const float *Ae, const float *B, size_t ldb, size_t K,       \
        size_t blk, const tcb_cfg_t *t, tcb_check_t *ck)                                                               \
    {                                                                                                                  \
        if (blk == 8)                                                                                                  \
            tcb_strip_with(crow, ns, Ap, Ae, B, ldb, K, blk, t, ck, R, V, MODE, 8);                                    \
        else if (blk == 16)                                                                                            \
            tcb_strip_with(crow, ns, Ap, Ae, B, ldb, K, blk, t, ck, R, V, MODE, 16);                                   \
        else                                                                                                           \
            tcb_strip_with(crow, ns, Ap, Ae, B, ldb, K, blk, t, ck, R, V, MODE, 0);                                    \
    }
#define TCB_TILES(R, V) TCB_TILE(R, V, 0) TCB_TILE(R, V, 1) TCB_TILE(R, V, 2)
TCB_TILES(4, 1)
TCB_TILES(3, 1)
TCB_TILES(2, 2)
TCB_TILES(1, 4)

typedef void (*tcb_strip_fn)(double *const *, size_t, const float *, const float *, const float *, size_t, size_t,
                             size_t, const tcb_cfg_t *, tcb_check_t *);

/* [R - 1][MODE] */
static const tcb_strip_fn TCB_FN[TCB_ROWS][3] = {
    {tcb_strip_1_4_0, tcb_strip_1_4_1, tcb_strip_1_4_2},
    {tcb_strip_2_2_0, tcb_strip_2_2_1, tcb_strip_2_2_2},
    {tcb_strip_3_1_0, tcb_strip_3_1_1, tcb_strip_3_1_2},
    {tcb_strip_4_1_0, tcb_strip_4_1_1, tcb_strip_4_1_2},
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

/* The GEMM: A packed (floats and float exponents, R rows interleaved per k, groups of 4 then
 * the M mod 4 rest), then the tiles, column tiles outer so that a tile of B stays in cache
 * while the groups pass; the first group's tiles check B. */
static int tcb_gemm(double *C, const double *A, const float *Bf, size_t M, size_t N, size_t K, const tc_cfg_t *g,
                    int b_valid, int *done)
{
    const tcb_cfg_t t = {g->lsb_off, (int64_t)g->p.block * (((int64_t)1 << (g->lsb_off + 2)) - 1) +
                                             ((int64_t)1 << (g->lsb_off + 1)) - 1 > INT32_MAX,
                         g->in == DRIFT_FP16, g};
    float *Ap = malloc(M * K * sizeof *Ap), *Ae = malloc(M * K * sizeof *Ae);
    if (!Ap || !Ae) {
        free(Ap), free(Ae);
        return DRIFT_ENOMEM;
    }
    const size_t nfull = M / TCB_ROWS, ngroups = nfull + (M % TCB_ROWS != 0);
    int wide = 0;
    for (size_t gi = 0; gi < ngroups; gi++) {
        const size_t i0 = gi * TCB_ROWS, R = M - i0 < TCB_ROWS ? M - i0 : TCB_ROWS;
        for (size_t r = 0; r < R; r++)
            for (size_t k = 0; k < K; k++) {
                double a = A[(i0 + r) * K + k];
                size_t at = i0 * K + k * R + r;
                Ap[at] = (float)a; /* exact: a value of a float format */
                Ae[at] = a != 0 ? (float)dexp(a) : -INFINITY;
                wide |= a != 0 && (dexp(a) < -50 || dexp(a) > 50);
            }
    }
    if (wide) {
        free(Ap), free(Ae);
        return DRIFT_OK; /* *done stays 0 */
    }
    const size_t nstrips = (N + TCB_STRIP - 1) / TCB_STRIP, blk = (size_t)g->p.block;
    int bad = 0;
#pragma omp parallel reduction(| : bad) if(M * N * K >= DRIFT_PAR_MIN_FMAS_GEN)
    {
        tcb_check_t ck;
        tcb_check_init(&ck);
#pragma omp for collapse(2) schedule(static)
        for (size_t st = 0; st < nstrips; st++)
            for (size_t gi = 0; gi < ngroups; gi++) {
                const size_t j0 = st * TCB_STRIP, i0 = gi * TCB_ROWS, R = M - i0 < TCB_ROWS ? M - i0 : TCB_ROWS;
                const size_t ns = N - j0 < TCB_STRIP ? N - j0 : TCB_STRIP;
                double *crow[TCB_ROWS];
                for (size_t r = 0; r < R; r++) {
                    crow[r] = C + (i0 + r) * N + j0;
                    memset(crow[r], 0, ns * sizeof(double)); /* c = 0 before the first block */
                }
                const int mode = gi == 0 && !b_valid ? (t.fp16 ? 2 : 1) : 0; /* the first group checks B */
                TCB_FN[R - 1][mode](crow, ns, Ap + i0 * K, Ae + i0 * K, Bf + j0, N, K, blk, &t, &ck);
            }
        bad |= !tcb_check_ok(&ck, &t);
    }
    free(Ap), free(Ae);
    *done = !bad;
    return DRIFT_OK;
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
    if (drift_tc_simd_level_() < 2) return DRIFT_OK; /* AVX-512 F and DQ, not disabled */
    const char *env = getenv("DRIFT_TC_NO_FLOATB"); /* lets the tests and the bench reach the old path */
    if (env && *env && strcmp(env, "0") != 0) return DRIFT_OK;
    if (!drift_tc_finite_values_(A, M * K, &g)) return DRIFT_OK; /* A's special values: drift_tc_gemm */
    return tcb_gemm(C, A, Bf, M, N, K, &g, b_valid, done);
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
#endif

int drift_tc_floatb_valid(const float *Bf, size_t n, drift_format_t in)
{
    if (!Bf || (in != DRIFT_BF16 && in != DRIFT_FP16)) return 0;
#ifdef TCB_AVX512
    if (drift_tc_simd_level_() < 2) return 0;
    return tcb_valid(Bf, n, in == DRIFT_FP16);
#else
    (void)n;
    return 0;
#endif
}
