/* tc_gemm_packed.c — drift_tc_gemm's fast paths: the same block-FMA arithmetic as the scalar
 * model (tc_model.c, tc_block's DRIFT_TC_ALIGN_TRUNC case), reorganised for throughput and
 * bit-identical to it (tests/test_tc_model.c compares every output with drift_tc_dot):
 *   - fused AVX-512 tiles, 4 rows x 16 outputs over the whole of K, on A packed once and B
 *     packed a chunk of 16 columns at a time: for fp32 output (every NVIDIA fp16, bf16 and
 *     tf32 configuration) tc_tile_fast, which keeps c in a register as float; otherwise
 *     tc_tile_avx512;
 *   - without the tiles (no AVX-512, or DRIFT_TC_NO_AVX512): strips of 128 columns, 4 rows at
 *     a time, with AVX2 or AVX-512 chunks of the per-block passes, or portable loops;
 *   - the input check of drift_tc_gemm over whole arrays (drift_tc_finite_values_);
 *   - CDNA2 (MI250): the pairwise fp32 block in float arithmetic across a row (AVX-512,
 *     AVX2 or SSE2 builds of the same C).
 * Only finite inputs reach here (drift_tc_gemm sends special values and B200 fp8 to the
 * scalar model, MI100 and MI300X to tc_gemm_amd.c). Why each shortcut is exact is said where
 * it is taken; the arithmetic argument is tc_model.c's file comment. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "drift.h"
#include "gemm_internal.h"
#include "tc_internal.h"

#define TC_STRIP 128 /* columns per strip */

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

/* The common case of drift_tc_finish_ for v = S / scale in the normal range of the output:
 * round by integer arithmetic on the bits (toward zero: clear the low bits; nearest-even:
 * add half an ulp minus one plus the kept lsb, then clear). Returns 0 when v is outside
 * [2^emin, 2^(emax+1)) or rounds up to 2^(emax+1): drift_tc_finish_ handles those. */
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

typedef size_t (*tc_chunk_fn)(
    tc_rows_t *rs, const float *Bb, const int *eb, size_t N, size_t ld, size_t k0, size_t k1, const tc_cfg_t *g);

static inline __attribute__((always_inline)) void tc_rows_with(
    tc_rows_t *rs, const float *Bb, const int *eb, size_t N, size_t ld, size_t K, const tc_cfg_t *g, tc_chunk_fn chunk)
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
                double v = S[j] * pow2i(E[j] - lsb_off), out;           /* exact: S is an integer below 2^33 */
                int ok = tc_finish_fast(&out, v, rz, sh, oemin, oemax); /* S == 0 is not ok: +0 below */
                cc[j] = out;
                E[j] = !ok;
                nslow += !ok;
            }
            if (nslow)
                for (size_t j = 0; j < N; j++)
                    if (E[j]) cc[j] = drift_tc_finish_(S[j], scale[j], g);
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
__attribute__((target("avx2"))) static size_t tc_chunk_avx2(
    tc_rows_t *rs, const float *Bb, const int *eb, size_t N, size_t ld, size_t k0, size_t k1, const tc_cfg_t *g)
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
            sc[r][1] =
                _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(bexp, 1)), 52));
            _mm256_storeu_pd(rs->w[r].scale + j, sc[r][0]);
            _mm256_storeu_pd(rs->w[r].scale + j + 4, sc[r][1]);
            const double *cc = rs->cc[r] + j;
            S[r][0] = _mm256_cvtepi32_pd(_mm256_cvttpd_epi32(_mm256_mul_pd(_mm256_loadu_pd(cc), sc[r][0])));
            S[r][1] = _mm256_cvtepi32_pd(_mm256_cvttpd_epi32(_mm256_mul_pd(_mm256_loadu_pd(cc + 4), sc[r][1])));
        }
        for (size_t k = k0; k < k1; k++) {
            __m256 bf = _mm256_loadu_ps(Bb + k * ld + j);
            __m256d b0 = _mm256_cvtps_pd(_mm256_castps256_ps128(bf)),
                    b1 = _mm256_cvtps_pd(_mm256_extractf128_ps(bf, 1));
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
__attribute__((target("avx512f,avx512dq"))) static size_t tc_chunk_avx512(
    tc_rows_t *rs, const float *Bb, const int *eb, size_t N, size_t ld, size_t k0, size_t k1, const tc_cfg_t *g)
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
            for (int r = 0; r < R; r++)
                Ev[r] = _mm512_max_epi32(Ev[r], _mm512_add_epi32(_mm512_set1_epi32(rs->ea[r][k]), e));
        }
        for (int r = 0; r < R; r++) {
            __m512i E = _mm512_max_epi32(Ev[r], vmin);
            E = _mm512_mask_mov_epi32(E, _mm512_cmplt_epi32_mask(E, _mm512_set1_epi32(-900)), zero); /* no term: 0 */
            _mm512_storeu_si512((void *)(rs->w[r].E + j), E);
            __m512i bexp = _mm512_sub_epi32(voff, E);
            sc[r][0] = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(bexp)), 52));
            sc[r][1] =
                _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(bexp, 1)), 52));
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
                S[r][0] =
                    _mm512_add_epi64(S[r][0], _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_mul_pd(av, b0), sc[r][0])));
                S[r][1] =
                    _mm512_add_epi64(S[r][1], _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_mul_pd(av, b1), sc[r][1])));
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
 * rounding of tc_finish_fast on the bits, with drift_tc_finish_ itself for the rare lanes outside
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
__attribute__((target("avx512f,avx512dq"))) static inline __m512d tc_finish512(
    __m512i S, __m256i E, __m512d c, const tc_cfg_t *g)
{
    const int rz = g->rz, sh = 53 - g->out_p, oemin = g->oemin, oemax = g->oemax;
    const __m512i m = _mm512_set1_epi64(0x7ff), low = _mm512_set1_epi64((int64_t)(((uint64_t)1 << sh) - 1));
    __m512i p2 =
        _mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm256_add_epi32(E, _mm256_set1_epi32(1023 - g->lsb_off))), 52);
    __m512d v = _mm512_mul_pd(_mm512_cvtepi64_pd(S), _mm512_castsi512_pd(p2)); /* exact (tc_rows_with) */
    __m512i u = _mm512_castpd_si512(v);
    __mmask8 ok = _mm512_cmp_epi64_mask(
        _mm512_and_si512(_mm512_srli_epi64(u, 52), m), _mm512_set1_epi64(oemin + 1023), _MM_CMPINT_NLT);
    if (!rz)
        u = _mm512_add_epi64(u, _mm512_add_epi64(_mm512_srli_epi64(low, 1),
                                    _mm512_and_si512(_mm512_srli_epi64(u, (unsigned)sh), _mm512_set1_epi64(1))));
    u = _mm512_andnot_si512(low, u);
    ok &= _mm512_cmp_epi64_mask(
        _mm512_and_si512(_mm512_srli_epi64(u, 52), m), _mm512_set1_epi64(oemax + 1023), _MM_CMPINT_LE);
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
            if (slow >> l & 1) rr[l] = drift_tc_finish_((double)s[l], pow2i(g->lsb_off - e[l]), g);
        r = _mm512_loadu_pd(rr);
    }
    return _mm512_mask_mov_pd(c, fin, r);
}

/* The accumulator of one row (16 outputs), finite entries only (inf set aside as 0). */
__attribute__((target("avx512f,avx512dq"))) static inline void tc_load_c512(
    __m512d *c0, __m512d *c1, const double *crow, __mmask8 m0, __mmask8 m1)
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
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void tc_tile_avx512_with(
    double *const *crow, __mmask16 cm, const float *Ap, const int *eap, const float *Bp, const int *ebp, size_t K,
    const tc_cfg_t *g, const int f32)
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
            sc[r][1] =
                _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(bexp, 1)), 52));
            __m512d c0, c1;
            tc_load_c512(&c0, &c1, crow[r], m0, m1);
            S[r][0] = _mm512_cvttpd_epi64(_mm512_mul_pd(c0, sc[r][0]));
            S[r][1] = _mm512_cvttpd_epi64(_mm512_mul_pd(c1, sc[r][1]));
            if (f32) {
                sc32[r] =
                    _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(voff32, _mm512_max_epi32(E, vlo32)), 23));
                S32[r] = _mm512_setzero_si512();
            }
        }
        if (f32) {
            for (size_t k = k0; k < k1; k++) {
                __m512 bf = _mm512_loadu_ps(Bp + k * TC_LANES);
#pragma GCC unroll 4
                for (int r = 0; r < TC_ROWS; r++) {
                    __m512 av = _mm512_set1_ps(Ap[k * TC_ROWS + r]);
                    S32[r] =
                        _mm512_add_epi32(S32[r], _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(av, bf), sc32[r])));
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
                    S[r][0] =
                        _mm512_add_epi64(S[r][0], _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_mul_pd(av, b0), sc[r][0])));
                    S[r][1] =
                        _mm512_add_epi64(S[r][1], _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_mul_pd(av, b1), sc[r][1])));
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

__attribute__((target("avx512f,avx512dq"))) static void tc_tile_avx512(double *const *crow, __mmask16 cm,
    const float *Ap, const int *eap, const float *Bp, const int *ebp, size_t K, const tc_cfg_t *g, int f32)
{
    if (f32)
        tc_tile_avx512_with(crow, cm, Ap, eap, Bp, ebp, K, g, 1);
    else
        tc_tile_avx512_with(crow, cm, Ap, eap, Bp, ebp, K, g, 0);
}

/* ---- the fused AVX-512 tile for fp32 output (RZ): c kept as float across K --------------
 *
 * The same block arithmetic as tc_tile_avx512_with's f32 case, with fewer operations per
 * block, for GEMMs with fp32 output rounded toward zero at 24 bits (every NVIDIA fp16, bf16
 * and tf32 configuration), min_exp <= -100 and the f32 conditions (tc_gemm_avx512 checks):
 *   - c stays in a register as float for the whole of K (it is an fp32 value: exact), and
 *     is stored once at the end;
 *   - pass 1 runs in 16-bit lanes, two rows per register: the low word of lane l holds
 *     row r's running max, the high word row r+1's. Exponents are clamped at TC_NO_TERM16
 *     when packed: a sum with a zero input stays below -16000 (never above a real
 *     product's sum, which is >= -100 under the f32 conditions), two of them -32768, so
 *     no 16-bit sum wraps. c's exponent joins after unpacking: vgetexpps gives
 *     floor(log2|c|) (-inf for 0, which converts to INT_MIN, never the max). For a
 *     subnormal c it gives less than the model's -126; that never matters, see next.
 *   - E < -100 means the block has no nonzero product (f32 conditions): tc_block then
 *     returns c exactly (S = c's significand times 2^lsb_off, an integer: lsb_off >= 23),
 *     or +0 when c is 0 (also -0). So those lanes keep c + 0 (which is +0 for -0), and
 *     E >= -100 elsewhere, above the clamp min_exp, so no clamp is needed;
 *   - with E >= -100 the scale 2^(lsb_off - E) is a normal float, and c's term c * scale
 *     is exact or below 1 (truncated to 0 either way), as the products' terms (the f32
 *     comment above);
 *   - the products' terms are summed in int32 (block * tmax <= INT32_MAX, checked), c's
 *     term (below 2^(lsb_off + 1)) added last; where block * tmax + c's bound exceeds
 *     INT32_MAX (Hopper/Blackwell 16-blocks) a wrapped sum is detected and those lanes are
 *     finished with the int64 sum by drift_tc_finish_;
 *   - the rounding: S (an integer, |S| < 2^31) converted to float toward zero is S
 *     truncated to 24 bits; times 2^(E - lsb_off) (a normal float: -125 <= E - lsb_off
 *     <= 104) it is exact, a normal fp32 (>= 2^-125), unless it reaches 2^128, where the
 *     nearest-even multiplication gives inf as the model does ("+-inf at or above
 *     2^(emax+1), even toward zero"); S == 0 gives +0. That is drift_tc_finish_ with
 *     out_p = 24 and RZ;
 *   - no output overflows: E <= 127 (products are below 2^102, c below 2^128); with E = 127
 *     every product's term is below 2^(102 + lsb_off - 127) <= 1 and truncates to 0, so
 *     the result is c; with E <= 126, |c| < 2^127 and the products sum to less than
 *     32 * 2^102, so |S| 2^(E - lsb_off) < 2^128 (truncation only shrinks). The
 *     multiplication's overflow to inf above is therefore never reached, and c stays
 *     finite across K. */
#define TC_NO_TERM16 (-16384)

/* One exponent as the 16-bit pass 1 takes it (TC_NO_TERM clamped). */
static inline uint32_t tc_e16(int e) { return (uint32_t)(uint16_t)(int16_t)(e < TC_NO_TERM16 ? TC_NO_TERM16 : e); }

/* One block of n products for the tile's 4 rows (c[] in and out); n a constant where the
 * caller can make it one, so that the two k loops unroll. */
__attribute__((target("avx512f,avx512dq,avx512bw"))) static inline __attribute__((always_inline)) void tc_fast_block(
    __m512 *c, const float *Ap, const uint32_t *ea2, const float *Bp, const uint32_t *eb2, const size_t n,
    const tc_cfg_t *g, int chk)
{
    const int lsb_off = g->lsb_off;
    const __m512i vlo = _mm512_set1_epi32(-100), voff = _mm512_set1_epi32(lsb_off + 127);
    const __m512i vpow = _mm512_set1_epi32(254 << 23), none = _mm512_set1_epi32((int)0x80008000u);
    __m512i P0 = none, P1 = none;
#pragma GCC unroll 16
    for (size_t k = 0; k < n; k++) {
        __m512i e = _mm512_loadu_si512((const void *)(eb2 + k * TC_LANES));
        P0 = _mm512_max_epi16(P0, _mm512_add_epi16(_mm512_set1_epi32((int)ea2[2 * k]), e));
        P1 = _mm512_max_epi16(P1, _mm512_add_epi16(_mm512_set1_epi32((int)ea2[2 * k + 1]), e));
    }
    __m512i E[TC_ROWS], Sp[TC_ROWS], Sc[TC_ROWS];
    __m512 sc[TC_ROWS];
    E[0] = _mm512_srai_epi32(_mm512_slli_epi32(P0, 16), 16), E[1] = _mm512_srai_epi32(P0, 16);
    E[2] = _mm512_srai_epi32(_mm512_slli_epi32(P1, 16), 16), E[3] = _mm512_srai_epi32(P1, 16);
#pragma GCC unroll 4
    for (int r = 0; r < TC_ROWS; r++) {
        E[r] = _mm512_max_epi32(E[r], _mm512_cvtps_epi32(_mm512_getexp_ps(c[r])));
        __m512i Ec = _mm512_max_epi32(E[r], vlo);
        sc[r] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(voff, Ec), 23));
        Sc[r] = _mm512_cvttps_epi32(_mm512_mul_ps(c[r], sc[r]));
        Sp[r] = _mm512_setzero_si512();
    }
#pragma GCC unroll 16
    for (size_t k = 0; k < n; k++) {
        __m512 bf = _mm512_loadu_ps(Bp + k * TC_LANES);
#pragma GCC unroll 4
        for (int r = 0; r < TC_ROWS; r++) {
            __m512 av = _mm512_set1_ps(Ap[k * TC_ROWS + r]);
            Sp[r] = _mm512_add_epi32(Sp[r], _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(av, bf), sc[r])));
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < TC_ROWS; r++) {
        __m512i S = _mm512_add_epi32(Sp[r], Sc[r]);
        /* 2^(E - lsb_off) = 1 / sc: the biased exponents sum to 254 */
        __m512 pw = _mm512_castsi512_ps(_mm512_sub_epi32(vpow, _mm512_castps_si512(sc[r])));
        __m512 res = _mm512_mul_ps(_mm512_cvt_roundepi32_ps(S, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), pw);
        if (chk) { /* the int32 sum wrapped: same signs in, another out */
            __mmask16 ovf = _mm512_movepi32_mask(_mm512_ternarylogic_epi32(S, Sp[r], Sc[r], 0x18));
            if (ovf) {
                int32_t sp[TC_LANES], sq[TC_LANES], e[TC_LANES];
                float rr[TC_LANES];
                _mm512_storeu_si512((void *)sp, Sp[r]);
                _mm512_storeu_si512((void *)sq, Sc[r]);
                _mm512_storeu_si512((void *)e, E[r]);
                _mm512_storeu_ps(rr, res);
                for (int l = 0; l < TC_LANES; l++)
                    if (ovf >> l & 1)
                        rr[l] = (float)drift_tc_finish_((double)((int64_t)sp[l] + sq[l]), pow2i(lsb_off - e[l]), g);
                res = _mm512_loadu_ps(rr);
            }
        }
        c[r] =
            _mm512_mask_add_ps(res, _mm512_cmplt_epi32_mask(E[r], vlo), c[r], _mm512_setzero_ps()); /* no product: c */
    }
}

/* The tile: c loaded once, the blocks along K (BLK: the block size as a constant, 0 when
 * it is none of those compiled), c stored once. */
__attribute__((target("avx512f,avx512dq,avx512bw"))) static inline __attribute__((always_inline)) void
tc_tile_fast_with(double *const *crow, __mmask16 cm, const float *Ap, const uint32_t *ea2, const float *Bp,
    const uint32_t *eb2, size_t K, const tc_cfg_t *g, int chk, const size_t BLK)
{
    const size_t blk = (size_t)g->p.block;
    const __mmask8 m0 = (__mmask8)cm, m1 = (__mmask8)(cm >> 8);
    __m512 c[TC_ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < TC_ROWS; r++) {
        __m256 lo = _mm512_cvtpd_ps(_mm512_maskz_loadu_pd(m0, crow[r]));
        __m256 hi = _mm512_cvtpd_ps(_mm512_maskz_loadu_pd(m1, crow[r] + 8));
        c[r] = _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1); /* fp32 values: exact */
    }
    for (size_t k0 = 0; k0 < K; k0 += blk) {
        const size_t n = K - k0 < blk ? K - k0 : blk;
        if (BLK && n == BLK)
            tc_fast_block(c, Ap + k0 * TC_ROWS, ea2 + 2 * k0, Bp + k0 * TC_LANES, eb2 + k0 * TC_LANES, BLK, g, chk);
        else
            tc_fast_block(c, Ap + k0 * TC_ROWS, ea2 + 2 * k0, Bp + k0 * TC_LANES, eb2 + k0 * TC_LANES, n, g, chk);
    }
#pragma GCC unroll 4
    for (int r = 0; r < TC_ROWS; r++) {
        _mm512_mask_storeu_pd(crow[r], m0, _mm512_cvtps_pd(_mm512_castps512_ps256(c[r])));
        _mm512_mask_storeu_pd(crow[r] + 8, m1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(c[r], 1)));
    }
}

__attribute__((target("avx512f,avx512dq,avx512bw"))) static void tc_tile_fast(double *const *crow, __mmask16 cm,
    const float *Ap, const uint32_t *ea2, const float *Bp, const uint32_t *eb2, size_t K, const tc_cfg_t *g, int chk)
{
    switch (g->p.block) { /* the NVIDIA blocks of fp16, bf16 and tf32 */
    case 4: tc_tile_fast_with(crow, cm, Ap, ea2, Bp, eb2, K, g, chk, 4); break;
    case 8: tc_tile_fast_with(crow, cm, Ap, ea2, Bp, eb2, K, g, chk, 8); break;
    case 16: tc_tile_fast_with(crow, cm, Ap, ea2, Bp, eb2, K, g, chk, 16); break;
    default: tc_tile_fast_with(crow, cm, Ap, ea2, Bp, eb2, K, g, chk, 0); break;
    }
}

/* The per-block loops of tc_rows_with compiled for AVX2 (same operations, wider). */
__attribute__((target("avx2"))) static void tc_rows_avx2(
    tc_rows_t *rs, const float *Bb, const int *eb, size_t N, size_t ld, size_t K, const tc_cfg_t *g, tc_chunk_fn chunk)
{
    tc_rows_with(rs, Bb, eb, N, ld, K, g, chunk);
}
#endif

static void tc_rows_generic(
    tc_rows_t *rs, const float *Bb, const int *eb, size_t N, size_t ld, size_t K, const tc_cfg_t *g, tc_chunk_fn chunk)
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

int drift_tc_simd_level_(void) { return tc_have_avx2() ? (tc_have_avx512() ? 2 : 1) : 0; }

/* ---- the input check: tc_representable over an array, branch-free ------------------------
 * x (bits u, biased exponent e) is a finite value of a format of precision p when it is
 * zero, or |x| <= max_finite and its low 53 - p + max(0, emin + 1023 - e) bits are zero
 * (the bits below the quantum; tc_representable), a count of at most 52 (more: the leading
 * bit itself is below the quantum, as for half the smallest subnormal; double subnormals
 * too); inf and NaN fail |x| <= max_finite. */
static inline __attribute__((always_inline)) int tc_finite_values_with(
    const double *x, size_t n, int p, int emin, double maxf)
{
    uint64_t bad = 0;
    for (size_t t = 0; t < n; t++) {
        uint64_t u;
        memcpy(&u, &x[t], sizeof u);
        int64_t extra = (int64_t)emin + 1023 - (int64_t)((u >> 52) & 0x7ff);
        uint64_t drop = (uint64_t)(53 - p) + (uint64_t)(extra < 0 ? 0 : extra);
        uint64_t low = drop >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << drop) - 1;
        uint64_t ok = (u << 1) == 0 || (drop <= 52 && fabs(x[t]) <= maxf && (u & low) == 0);
        bad |= ok ^ 1;
    }
    return bad == 0;
}

#ifdef TC_AVX2
/* The same eight at a time; the tail loads zeros, which pass. */
__attribute__((target("avx512f,avx512dq"))) static int tc_finite_values_avx512(
    const double *x, size_t n, int p, int emin, double maxf)
{
    const __m512i m = _mm512_set1_epi64(0x7ff), one = _mm512_set1_epi64(1), nosign = _mm512_set1_epi64(INT64_MAX);
    const __m512i ebase = _mm512_set1_epi64((int64_t)emin + 1023), d0 = _mm512_set1_epi64(53 - p);
    const __m512d vmax = _mm512_set1_pd(maxf);
    __mmask8 bad = 0;
    for (size_t t = 0; t < n; t += 8) {
        __mmask8 in = n - t >= 8 ? 0xff : (__mmask8)((1u << (n - t)) - 1);
        __m512i u = _mm512_maskz_loadu_epi64(in, x + t);
        __m512i e = _mm512_and_si512(_mm512_srli_epi64(u, 52), m);
        __m512i drop = _mm512_add_epi64(d0, _mm512_max_epi64(_mm512_sub_epi64(ebase, e), _mm512_setzero_si512()));
        __m512i low = _mm512_sub_epi64(_mm512_sllv_epi64(one, drop), one);
        __mmask8 zero = _mm512_testn_epi64_mask(u, nosign);
        __mmask8 fits = _mm512_testn_epi64_mask(u, low) & _mm512_cmple_epu64_mask(drop, _mm512_set1_epi64(52)) &
                        _mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_castsi512_pd(u)), vmax, _CMP_LE_OQ);
        bad |= (__mmask8) ~(zero | fits);
    }
    return bad == 0;
}
#endif

int drift_tc_finite_values_(const double *x, size_t n, const tc_cfg_t *g)
{
    const drift_format_info_t *fi = g->valid_in;
#ifdef TC_AVX2
    if (tc_have_avx512()) return tc_finite_values_avx512(x, n, fi->p, fi->emin, fi->max_finite);
#endif
    return tc_finite_values_with(x, n, fi->p, fi->emin, fi->max_finite);
}

#ifdef TC_AVX2
/* ---- packing, sixteen inputs at a time ------------------------------------------------------
 * What tc_gemm_avx512's scalar loops computed per input, on the fp32 bits of 16 inputs (every
 * input format is a float format, so (float)x is exact): tf32 inputs truncated to their
 * top 10 fraction bits (drift_tc_prepare_: RZ to tf32 is clearing the low 13 bits of the
 * fp32 encoding, subnormals included, since tf32 has fp32's exponent range); the exponent
 * in_exp = max(biased - 127, emin_in) (a float subnormal has biased 0, below every emin),
 * TC_NO_TERM for +-0; `wide` when a nonzero input has an exponent below -50 or above 50
 * (a float subnormal: -127). */
typedef struct {
    __m512 v;  /* the inputs as floats */
    __m512i e; /* their exponents (TC_NO_TERM for 0) */
    __mmask16 wide;
} tc_pack16_t;

__attribute__((target("avx512f,avx512dq,avx512bw"))) static inline tc_pack16_t tc_pack16(
    const double *x, __mmask16 in, int tf32, int emin)
{
    tc_pack16_t p;
    __m512d lo = _mm512_maskz_loadu_pd((__mmask8)in, x), hi = _mm512_maskz_loadu_pd((__mmask8)(in >> 8), x + 8);
    __m512i u =
        _mm512_castps_si512(_mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1));
    if (tf32) u = _mm512_and_si512(u, _mm512_set1_epi32(~0x1fff));
    __mmask16 nz = _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x7fffffff));
    __m512i eb =
        _mm512_sub_epi32(_mm512_and_si512(_mm512_srli_epi32(u, 23), _mm512_set1_epi32(0xff)), _mm512_set1_epi32(127));
    p.wide =
        nz & (_mm512_cmplt_epi32_mask(eb, _mm512_set1_epi32(-50)) | _mm512_cmpgt_epi32_mask(eb, _mm512_set1_epi32(50)));
    p.e = _mm512_mask_mov_epi32(_mm512_set1_epi32(TC_NO_TERM), nz, _mm512_max_epi32(eb, _mm512_set1_epi32(emin)));
    p.v = _mm512_castsi512_ps(u);
    return p;
}

/* The 16-bit form of tc_tile_fast's exponents (tc_e16) for 16 of them. */
__attribute__((target("avx512f,avx512dq,avx512bw"))) static inline __m512i tc_e16v(__m512i e)
{
    return _mm512_and_si512(_mm512_max_epi32(e, _mm512_set1_epi32(TC_NO_TERM16)), _mm512_set1_epi32(0xffff));
}

/* B's chunk ch (columns 16 ch ...): Bp[k*16 + l] and its exponents (ebp, and eb2 when
 * given); 1 when an input is wide. */
__attribute__((target("avx512f,avx512dq,avx512bw"))) static int tc_pack_b(
    float *Bp, int *ebp, uint32_t *eb2, const double *B, size_t N, size_t K, size_t ch, const tc_cfg_t *g)
{
    const size_t j0 = ch * TC_LANES, nj = N - j0 < TC_LANES ? N - j0 : TC_LANES;
    const __mmask16 in = (__mmask16)(nj >= TC_LANES ? 0xffffu : (1u << nj) - 1);
    const int tf32 = g->in == DRIFT_TF32;
    __mmask16 wide = 0;
    for (size_t k = 0; k < K; k++) {
        size_t t = k * TC_LANES;
        tc_pack16_t p = tc_pack16(B + k * N + j0, in, tf32, g->emin_in);
        _mm512_storeu_ps(Bp + t, p.v);
        _mm512_storeu_si512((void *)(ebp + t), p.e);
        if (eb2) {
            __m512i w = tc_e16v(p.e);
            _mm512_storeu_si512((void *)(eb2 + t), _mm512_or_si512(w, _mm512_slli_epi32(w, 16)));
        }
        wide |= p.wide;
    }
    return wide != 0;
}

/* A's group gi, sixteen k at a time down each of its rows, then interleaved to
 * Ap[(gi*K + k)*4 + r] (eap likewise) and the pairs ea2[(gi*K + k)*2 + {0, 1}]. */
__attribute__((target("avx512f,avx512dq,avx512bw"))) static int tc_pack_a(
    float *Ap, int *eap, uint32_t *ea2, const double *A, size_t M, size_t K, size_t gi, const tc_cfg_t *g)
{
    const int tf32 = g->in == DRIFT_TF32;
    __mmask16 wide = 0;
    /* interleaving: r0 r1 pairs (words of the dwords), then the pairs of pairs */
    const __m512i lo2 = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi2 = _mm512_add_epi32(lo2, _mm512_set1_epi32(8));
    const __m512i lo4 = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), hi4 = _mm512_add_epi64(lo4, _mm512_set1_epi64(4));
    for (size_t k0 = 0; k0 < K; k0 += 16) {
        const size_t nk = K - k0 < 16 ? K - k0 : 16;
        const __mmask16 in = (__mmask16)(nk >= 16 ? 0xffffu : (1u << nk) - 1);
        __m512i v[TC_ROWS], e[TC_ROWS];
        for (size_t r = 0; r < TC_ROWS; r++) {
            size_t i = gi * TC_ROWS + r;
            tc_pack16_t p = tc_pack16(A + (i < M ? i : 0) * K + k0, i < M ? in : 0, tf32, g->emin_in);
            v[r] = _mm512_castps_si512(p.v), e[r] = p.e, wide |= p.wide;
        }
        /* x01 = (r0, r1) for k0..k0+7 as dwords, then k0+8..; x23 likewise; then 64-bit pairs */
        float *ap = Ap + (gi * K + k0) * TC_ROWS;
        __m512i x01l = _mm512_permutex2var_epi32(v[0], lo2, v[1]), x01h = _mm512_permutex2var_epi32(v[0], hi2, v[1]);
        __m512i x23l = _mm512_permutex2var_epi32(v[2], lo2, v[3]), x23h = _mm512_permutex2var_epi32(v[2], hi2, v[3]);
        __m512i q[4] = {_mm512_permutex2var_epi64(x01l, lo4, x23l), _mm512_permutex2var_epi64(x01l, hi4, x23l),
            _mm512_permutex2var_epi64(x01h, lo4, x23h), _mm512_permutex2var_epi64(x01h, hi4, x23h)};
        for (int h = 0; h < 4; h++) { /* 4 k per register */
            __mmask16 st = (__mmask16)(nk >= (size_t)(4 * h + 4) ? 0xffffu
                                       : nk > (size_t)(4 * h)    ? (1u << 4 * (nk - 4 * h)) - 1
                                                                 : 0);
            _mm512_mask_storeu_ps(ap + 16 * h, st, _mm512_castsi512_ps(q[h]));
        }
        if (eap) {
            int *ep = eap + (gi * K + k0) * TC_ROWS;
            __m512i y01l = _mm512_permutex2var_epi32(e[0], lo2, e[1]),
                    y01h = _mm512_permutex2var_epi32(e[0], hi2, e[1]);
            __m512i y23l = _mm512_permutex2var_epi32(e[2], lo2, e[3]),
                    y23h = _mm512_permutex2var_epi32(e[2], hi2, e[3]);
            __m512i y[4] = {_mm512_permutex2var_epi64(y01l, lo4, y23l), _mm512_permutex2var_epi64(y01l, hi4, y23l),
                _mm512_permutex2var_epi64(y01h, lo4, y23h), _mm512_permutex2var_epi64(y01h, hi4, y23h)};
            for (int h = 0; h < 4; h++) {
                __mmask16 st = (__mmask16)(nk >= (size_t)(4 * h + 4) ? 0xffffu
                                           : nk > (size_t)(4 * h)    ? (1u << 4 * (nk - 4 * h)) - 1
                                                                     : 0);
                _mm512_mask_storeu_epi32(ep + 16 * h, st, y[h]);
            }
        }
        if (ea2) {
            uint32_t *ep = ea2 + (gi * K + k0) * 2;
            __m512i p01 = _mm512_or_si512(tc_e16v(e[0]), _mm512_slli_epi32(tc_e16v(e[1]), 16));
            __m512i p23 = _mm512_or_si512(tc_e16v(e[2]), _mm512_slli_epi32(tc_e16v(e[3]), 16));
            __mmask16 s0 = (__mmask16)(nk >= 8 ? 0xffffu : (1u << 2 * nk) - 1);
            __mmask16 s1 = (__mmask16)(nk >= 16 ? 0xffffu : nk > 8 ? (1u << 2 * (nk - 8)) - 1 : 0);
            _mm512_mask_storeu_epi32(ep, s0, _mm512_permutex2var_epi32(p01, lo2, p23));
            _mm512_mask_storeu_epi32(ep + 16, s1, _mm512_permutex2var_epi32(p01, hi2, p23));
        }
    }
    return wide != 0;
}

/* The GEMM on the fused AVX-512 tiles (tc_tile_fast where its conditions hold, else
 * tc_tile_avx512): inputs known finite, C already holds c (rounded) or 0. Packs A and B
 * with their exponents once (also as 16-bit pairs for tc_tile_fast), then runs one tile per
 * (chunk of 16 columns, group of 4 rows); the tiles are independent, so the result does not
 * depend on the thread count. */
static int tc_gemm_avx512(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g)
{
    const size_t ngroups = (M + TC_ROWS - 1) / TC_ROWS, nchunks = (N + TC_LANES - 1) / TC_LANES;
    const int bw = __builtin_cpu_supports("avx512bw");
    /* tc_tile_fast's conditions apart from the data's (f32 below) */
    const int fast_cfg = g->out == DRIFT_FP32 && g->rz && g->out_p == 24 && g->p.min_exp <= -100 && bw;
    const int64_t tmax = ((int64_t)1 << (g->lsb_off + 2)) - 1, cmax = ((int64_t)1 << (g->lsb_off + 1)) - 1;
    const int f32_cfg = (int64_t)g->p.block * tmax <= INT32_MAX, chk = (int64_t)g->p.block * tmax + cmax > INT32_MAX;
#ifdef _OPENMP
    const size_t nthr = (size_t)omp_get_max_threads();
#else
    const size_t nthr = 1;
#endif
    /* A packed whole (every chunk of B passes over it); B a chunk at a time into each
     * thread's buffer (ws: K x 16 floats, int exponents and their 16-bit pairs, and room for
     * a group's int exponents when tc_tile_avx512 needs them beside tc_tile_fast's) */
    const size_t wsn = K * (3 * TC_LANES + TC_ROWS);
    float *Ap = malloc(ngroups * K * TC_ROWS * sizeof *Ap);
    int *eap = fast_cfg ? NULL : malloc(ngroups * K * TC_ROWS * sizeof *eap);
    uint32_t *ea2 = fast_cfg ? malloc(ngroups * K * 2 * sizeof *ea2) : NULL;
    unsigned char *wa = malloc(ngroups);
    uint32_t *ws = malloc(nthr * wsn * sizeof *ws);
    if (!Ap || (fast_cfg ? !ea2 : !eap) || !wa || !ws) {
        free(Ap), free(eap), free(ea2), free(wa), free(ws);
        return DRIFT_ENOMEM;
    }
    const int emin = g->emin_in, tf32 = g->in == DRIFT_TF32;
#pragma omp parallel if (M * N * K >= DRIFT_PAR_MIN_FMAS_GEN)
    {
        /* `wide`: some nonzero input outside [2^-50, 2^51), per group of A and chunk of B:
         * the tiles it touches take tc_tile_avx512's double pass 2 */
#pragma omp for schedule(static)
        for (size_t gi = 0; gi < ngroups; gi++) {
            if (bw) {
                wa[gi] = (unsigned char)tc_pack_a(Ap, eap, ea2, A, M, K, gi, g);
                continue;
            }
            int wide = 0; /* the same per input (drift_tc_prepare_ changes only tf32 inputs) */
            for (size_t k = 0; k < K; k++)
                for (size_t r = 0; r < TC_ROWS; r++) {
                    size_t i = gi * TC_ROWS + r, t = (gi * K + k) * TC_ROWS + r;
                    double a = i < M ? A[i * K + k] : 0.0;
                    if (tf32) a = drift_tc_prepare_(a, g);
                    Ap[t] = (float)a; /* exact, as for B */
                    eap[t] = a != 0 ? in_exp(a, emin) : TC_NO_TERM;
                    wide |= a != 0 && (dexp(a) < -50 || dexp(a) > 50);
                }
            wa[gi] = (unsigned char)wide;
        }
#pragma omp for schedule(static)
        for (size_t t = 0; t < M * N; t++) C[t] = c_init ? drift_tc_round_c_(C[t], g) : 0.0;
#ifdef _OPENMP
        uint32_t *w = ws + (size_t)omp_get_thread_num() * wsn;
#else
        uint32_t *w = ws;
#endif
        float *Bc = (float *)w;
        int *ebc = (int *)(w + K * TC_LANES), *eac = (int *)(w + 3 * K * TC_LANES);
        uint32_t *eb2c = w + 2 * K * TC_LANES;
        size_t cur = SIZE_MAX;
        int wb = 0;
        double dummy[TC_ROWS][TC_LANES];
        /* chunks outer: a chunk of B (K x 16) stays in cache while the groups of A pass */
#pragma omp for collapse(2) schedule(static)
        for (size_t ch = 0; ch < nchunks; ch++)
            for (size_t gi = 0; gi < ngroups; gi++) {
                size_t j0 = ch * TC_LANES, nj = N - j0 < TC_LANES ? N - j0 : TC_LANES;
                if (ch != cur) { /* this thread's next chunk of B */
                    cur = ch;
                    if (bw) {
                        wb = tc_pack_b(Bc, ebc, fast_cfg ? eb2c : NULL, B, N, K, ch, g);
                    } else {
                        wb = 0;
                        for (size_t k = 0; k < K; k++)
                            for (size_t l = 0; l < TC_LANES; l++) {
                                double b = l < nj ? B[k * N + j0 + l] : 0.0;
                                if (tf32) b = drift_tc_prepare_(b, g);
                                Bc[k * TC_LANES + l] = (float)b; /* exact: every input format is a float format */
                                ebc[k * TC_LANES + l] = b != 0 ? in_exp(b, emin) : TC_NO_TERM;
                                wb |= b != 0 && (dexp(b) < -50 || dexp(b) > 50);
                            }
                    }
                }
                double *crow[TC_ROWS];
                for (size_t r = 0; r < TC_ROWS; r++) {
                    size_t i = gi * TC_ROWS + r;
                    crow[r] = i < M ? C + i * N + j0 : dummy[r];
                    if (i >= M) memset(dummy[r], 0, sizeof dummy[r]);
                }
                __mmask16 cm = (__mmask16)(nj >= TC_LANES ? 0xffffu : (1u << nj) - 1);
                const float *Ag = Ap + gi * K * TC_ROWS;
                const int f32 = f32_cfg && !wa[gi] && !wb;
                if (fast_cfg && f32) {
                    tc_tile_fast(crow, cm, Ag, ea2 + gi * K * 2, Bc, eb2c, K, g, chk);
                    continue;
                }
                const int *eag = eap ? eap + gi * K * TC_ROWS : eac;
                if (!eap) /* rare (inputs of very different scales): the int exponents of this group */
                    for (size_t t = 0; t < K * TC_ROWS; t++) eac[t] = Ag[t] != 0 ? in_exp(Ag[t], emin) : TC_NO_TERM;
                tc_tile_avx512(crow, cm, Ag, eag, Bc, ebc, K, g, f32);
            }
    }
    free(Ap), free(eap), free(ea2), free(wa), free(ws);
    return DRIFT_OK;
}
#endif

int drift_tc_gemm_packed(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g_)
{
    const tc_cfg_t g = *g_;
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
        Ab[t] = drift_tc_prepare_(A[t], &g);
        ea[t] = Ab[t] != 0 ? in_exp(Ab[t], g.emin_in) : TC_NO_TERM;
    }
    for (size_t t = 0; t < K * N; t++) {
        double b = drift_tc_prepare_(B[t], &g);
        Bb[t] = (float)b;
        eb[t] = b != 0 ? in_exp(b, g.emin_in) : TC_NO_TERM;
    }
    for (size_t t = 0; t < M * N; t++) C[t] = c_init ? drift_tc_round_c_(C[t], &g) : 0.0; /* after the allocations */
    const size_t nstrips = (N + TC_STRIP - 1) / TC_STRIP, ngroups = (M + TC_ROWS - 1) / TC_ROWS;
    tc_chunk_fn chunk = NULL;
#ifdef TC_AVX2
    if (tc_have_avx2())
        chunk =
            __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") ? tc_chunk_avx512 : tc_chunk_avx2;
#endif
    int fail = 0;
#pragma omp parallel reduction(| : fail) if (M * N * K >= DRIFT_PAR_MIN_FMAS_GEN)
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

/* ---- CDNA2: pairwise fp32 additions, vectorised across a row ------------------------------
 * tc_block_pairwise per output, in float: a float product of two fp16/bf16 values is their
 * exact product rounded once to fp32 (RNE, subnormals, overflow to inf), as (float)(a*b) in
 * double; a float sum of two floats is the correctly rounded sum, as (float)(x + y) in
 * double (double rounding is innocuous there, 53 >= 2 * 24 + 2). Inputs below the format's
 * smallest normal are zeroed with their partner: their product is +0 (a select, since a
 * zeroed factor times a negative one would give -0); products and sums below 2^-126 are
 * flushed keeping their sign (a product that underflows to -0 in float stays -0, as in
 * double). The blocks of 4 along K
 * are padded with +0 products, as the scalar model pads. */
static inline float tc_ftz32f(float x) { return fabsf(x) < 0x1p-126f ? copysignf(0.0f, x) : x; }

static inline float tc_prod32f(float a, float b) { return a == 0.0f || b == 0.0f ? 0.0f : tc_ftz32f(a * b); }

/* One row: acc holds the row's c (as float) and receives the result. */
static inline __attribute__((always_inline)) void tc_pairwise_row_with(
    float *restrict acc, const float *restrict Ai, const float *restrict Bf, size_t N, size_t Kp)
{
    for (size_t k0 = 0; k0 < Kp; k0 += 4) {
        const float a0 = Ai[k0], a1 = Ai[k0 + 1], a2 = Ai[k0 + 2], a3 = Ai[k0 + 3];
        const float *b0 = Bf + k0 * N, *b1 = b0 + N, *b2 = b1 + N, *b3 = b2 + N;
#pragma omp simd
        for (size_t j = 0; j < N; j++) {
            float p0 = tc_prod32f(a0, b0[j]), p1 = tc_prod32f(a1, b1[j]);
            float p2 = tc_prod32f(a2, b2[j]), p3 = tc_prod32f(a3, b3[j]);
            float s = tc_ftz32f(tc_ftz32f(p0 + p1) + tc_ftz32f(p2 + p3));
            acc[j] = tc_ftz32f(tc_ftz32f(acc[j]) + s);
        }
    }
}

/* The same C compiled for wider vectors (same float operations, so the same bits). */
#ifdef TC_AVX2
__attribute__((target("avx512f,avx512dq"))) static void tc_pairwise_row_avx512(
    float *acc, const float *Ai, const float *Bf, size_t N, size_t Kp)
{
    tc_pairwise_row_with(acc, Ai, Bf, N, Kp);
}

__attribute__((target("avx2"))) static void tc_pairwise_row_avx2(
    float *acc, const float *Ai, const float *Bf, size_t N, size_t Kp)
{
    tc_pairwise_row_with(acc, Ai, Bf, N, Kp);
}
#endif

static void tc_pairwise_row_generic(float *acc, const float *Ai, const float *Bf, size_t N, size_t Kp)
{
    tc_pairwise_row_with(acc, Ai, Bf, N, Kp);
}

int drift_tc_gemm_pairwise32(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g)
{
    int done = 0, rc = drift_tc_gemm_pairwise_tiles(C, A, B, M, N, K, c_init, g, &done);
    if (rc != DRIFT_OK || done) return rc; /* AVX-512: the register tiles */
    const size_t blk = (size_t)g->p.block; /* 4 */
    const size_t Kp = (K + blk - 1) / blk * blk;
    float *Af = malloc(M * Kp * sizeof *Af), *Bf = malloc(Kp * N * sizeof *Bf);
    if (!Af || !Bf) {
        free(Af), free(Bf);
        return DRIFT_ENOMEM;
    }
    const double tiny = pow2i(g->emin_in);
    for (size_t i = 0; i < M; i++)
        for (size_t k = 0; k < Kp; k++) {
            double a = k < K ? drift_tc_prepare_(A[i * K + k], g) : 0.0;
            Af[i * Kp + k] = fabs(a) < tiny ? 0.0f : (float)a; /* exact: a float format */
        }
    for (size_t k = 0; k < Kp; k++)
        for (size_t j = 0; j < N; j++) {
            double b = k < K ? drift_tc_prepare_(B[k * N + j], g) : 0.0;
            Bf[k * N + j] = fabs(b) < tiny ? 0.0f : (float)b;
        }
    const int simd = drift_tc_simd_level_();
    int fail = 0;
#pragma omp parallel reduction(| : fail) if (M * N * K >= DRIFT_PAR_MIN_FMAS_GEN)
    {
        float *acc = malloc(N * sizeof *acc);
        if (!acc) fail = 1;
#pragma omp for schedule(static)
        for (size_t i = 0; i < M; i++) {
            if (!acc) continue; /* DRIFT_ENOMEM below */
            for (size_t j = 0; j < N; j++) acc[j] = c_init ? (float)drift_tc_round_c_(C[i * N + j], g) : 0.0f;
#ifdef TC_AVX2
            if (simd == 2)
                tc_pairwise_row_avx512(acc, Af + i * Kp, Bf, N, Kp);
            else if (simd == 1)
                tc_pairwise_row_avx2(acc, Af + i * Kp, Bf, N, Kp);
            else
#endif
                tc_pairwise_row_generic(acc, Af + i * Kp, Bf, N, Kp);
            for (size_t j = 0; j < N; j++) C[i * N + j] = acc[j];
        }
        free(acc);
    }
    (void)simd;
    free(Af), free(Bf);
    return fail ? DRIFT_ENOMEM : DRIFT_OK;
}
