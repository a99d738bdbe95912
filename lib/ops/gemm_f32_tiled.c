/* gemm_f32_tiled.c — the tiled kernel on the F32 path (gemm_internal.h): packed panels and
 * a register-blocked micro-kernel.
 *
 * Why it is bit-identical to the naive kernel: a micro-kernel holds an mr x nr tile of
 * outputs in registers and runs k forward; each output keeps one accumulator that every
 * K-block continues (the first block starts it as a*b), so blocking moves data, never an
 * addition. Split-K calls this on each chunk's k range (gemm_splitk.c).
 *
 * Layout: A in row panels of mr rows (K x mr each, k-major), B in column panels of nr
 * columns (K x nr each), zero padded at the edges (padded outputs are computed and
 * dropped), so the micro-kernel never branches on an edge. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "gemm_internal.h"

#define TILE_KC 256 /* k-block: an A panel (KC x MR) stays in L1, a B block in L2 */
#define TILE_NCP 16 /* column panels per block */

/* c (mr x nr tile, row-major) continues the chains of its outputs over kl steps (start: the
 * first step starts the chain as a*b). ap: kl x mr packed, bp: kl x nr packed. */
static void uk_f32_generic(size_t kl, const float *restrict ap, const float *restrict bp, float *restrict c, int mr,
                           int nr, int start, int fma_on)
{
    size_t k = 0;
    if (start) {
        for (int r = 0; r < mr; r++)
            for (int j = 0; j < nr; j++) c[r * nr + j] = ap[r] * bp[j];
        k = 1;
    }
    for (; k < kl; k++) {
        const float *a = ap + k * (size_t)mr, *b = bp + k * (size_t)nr;
        for (int r = 0; r < mr; r++)
            for (int j = 0; j < nr; j++) {
                float *s = &c[r * nr + j];
                *s = fma_on ? fmaf(a[r], b[j], *s) : *s + a[r] * b[j];
            }
    }
}

#ifdef DRIFT_X86_DISPATCH
#define UK_MR 6
#define UK_NR 16
__attribute__((target("avx2,fma"))) static void uk_f32_avx2(size_t kl, const float *restrict ap,
                                                             const float *restrict bp, float *restrict c,
                                                             int start, int fma_on)
{
    __m256 s00, s01, s10, s11, s20, s21, s30, s31, s40, s41, s50, s51;
    size_t k = 0;
    if (start) {
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8), a;
        a = _mm256_set1_ps(ap[0]), s00 = _mm256_mul_ps(a, b0), s01 = _mm256_mul_ps(a, b1);
        a = _mm256_set1_ps(ap[1]), s10 = _mm256_mul_ps(a, b0), s11 = _mm256_mul_ps(a, b1);
        a = _mm256_set1_ps(ap[2]), s20 = _mm256_mul_ps(a, b0), s21 = _mm256_mul_ps(a, b1);
        a = _mm256_set1_ps(ap[3]), s30 = _mm256_mul_ps(a, b0), s31 = _mm256_mul_ps(a, b1);
        a = _mm256_set1_ps(ap[4]), s40 = _mm256_mul_ps(a, b0), s41 = _mm256_mul_ps(a, b1);
        a = _mm256_set1_ps(ap[5]), s50 = _mm256_mul_ps(a, b0), s51 = _mm256_mul_ps(a, b1);
        k = 1;
    } else {
        s00 = _mm256_loadu_ps(c + 0), s01 = _mm256_loadu_ps(c + 8);
        s10 = _mm256_loadu_ps(c + 16), s11 = _mm256_loadu_ps(c + 24);
        s20 = _mm256_loadu_ps(c + 32), s21 = _mm256_loadu_ps(c + 40);
        s30 = _mm256_loadu_ps(c + 48), s31 = _mm256_loadu_ps(c + 56);
        s40 = _mm256_loadu_ps(c + 64), s41 = _mm256_loadu_ps(c + 72);
        s50 = _mm256_loadu_ps(c + 80), s51 = _mm256_loadu_ps(c + 88);
    }
    if (fma_on) {
        for (; k < kl; k++) {
            const float *a = ap + k * UK_MR, *b = bp + k * UK_NR;
            __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), x;
            x = _mm256_set1_ps(a[0]), s00 = _mm256_fmadd_ps(x, b0, s00), s01 = _mm256_fmadd_ps(x, b1, s01);
            x = _mm256_set1_ps(a[1]), s10 = _mm256_fmadd_ps(x, b0, s10), s11 = _mm256_fmadd_ps(x, b1, s11);
            x = _mm256_set1_ps(a[2]), s20 = _mm256_fmadd_ps(x, b0, s20), s21 = _mm256_fmadd_ps(x, b1, s21);
            x = _mm256_set1_ps(a[3]), s30 = _mm256_fmadd_ps(x, b0, s30), s31 = _mm256_fmadd_ps(x, b1, s31);
            x = _mm256_set1_ps(a[4]), s40 = _mm256_fmadd_ps(x, b0, s40), s41 = _mm256_fmadd_ps(x, b1, s41);
            x = _mm256_set1_ps(a[5]), s50 = _mm256_fmadd_ps(x, b0, s50), s51 = _mm256_fmadd_ps(x, b1, s51);
        }
    } else {
#define NOFMA(s, x, b) s = _mm256_add_ps(s, _mm256_mul_ps(x, b))
        for (; k < kl; k++) {
            const float *a = ap + k * UK_MR, *b = bp + k * UK_NR;
            __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), x;
            x = _mm256_set1_ps(a[0]), NOFMA(s00, x, b0), NOFMA(s01, x, b1);
            x = _mm256_set1_ps(a[1]), NOFMA(s10, x, b0), NOFMA(s11, x, b1);
            x = _mm256_set1_ps(a[2]), NOFMA(s20, x, b0), NOFMA(s21, x, b1);
            x = _mm256_set1_ps(a[3]), NOFMA(s30, x, b0), NOFMA(s31, x, b1);
            x = _mm256_set1_ps(a[4]), NOFMA(s40, x, b0), NOFMA(s41, x, b1);
            x = _mm256_set1_ps(a[5]), NOFMA(s50, x, b0), NOFMA(s51, x, b1);
        }
#undef NOFMA
    }
    _mm256_storeu_ps(c + 0, s00), _mm256_storeu_ps(c + 8, s01);
    _mm256_storeu_ps(c + 16, s10), _mm256_storeu_ps(c + 24, s11);
    _mm256_storeu_ps(c + 32, s20), _mm256_storeu_ps(c + 40, s21);
    _mm256_storeu_ps(c + 48, s30), _mm256_storeu_ps(c + 56, s31);
    _mm256_storeu_ps(c + 64, s40), _mm256_storeu_ps(c + 72, s41);
    _mm256_storeu_ps(c + 80, s50), _mm256_storeu_ps(c + 88, s51);
}
#endif

#ifdef DRIFT_X86_DISPATCH
/* The AVX-512 micro-kernel: a 12 x 32 tile in 24 zmm accumulators (of 32), so that two
 * B vectors and one broadcast feed 24 independent FMAs per k, enough to hide the FMA
 * latency on two ports; the tile is twice the AVX2 one in both loads per FMA and FMAs per
 * instruction. Each output is still one chain over k, in order: the bits are those of the
 * scalar kernel. */
#define UK512_MR 12
#define UK512_NR 32
#define UK512_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
__attribute__((target("avx512f"))) static void uk_f32_avx512(size_t kl, const float *restrict ap,
                                                               const float *restrict bp, float *restrict c,
                                                               int start, int fma_on)
{
#define DECL(r) __m512 s##r##a, s##r##b;
    UK512_ROWS(DECL)
#undef DECL
    size_t k = 0;
    if (start) {
        __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
#define START(r)                                                                                                \
    {                                                                                                           \
        __m512 x = _mm512_set1_ps(ap[r]);                                                                       \
        s##r##a = _mm512_mul_ps(x, b0), s##r##b = _mm512_mul_ps(x, b1);                                         \
    }
        UK512_ROWS(START)
#undef START
        k = 1;
    } else {
#define LOAD(r) s##r##a = _mm512_loadu_ps(c + 32 * r), s##r##b = _mm512_loadu_ps(c + 32 * r + 16);
        UK512_ROWS(LOAD)
#undef LOAD
    }
    if (fma_on) {
        for (; k < kl; k++) {
            const float *a = ap + k * UK512_MR, *b = bp + k * UK512_NR;
            __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#define STEP(r)                                                                                                 \
    {                                                                                                           \
        __m512 x = _mm512_set1_ps(a[r]);                                                                        \
        s##r##a = _mm512_fmadd_ps(x, b0, s##r##a), s##r##b = _mm512_fmadd_ps(x, b1, s##r##b);                   \
    }
            UK512_ROWS(STEP)
#undef STEP
        }
    } else {
        for (; k < kl; k++) {
            const float *a = ap + k * UK512_MR, *b = bp + k * UK512_NR;
            __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#define STEP(r)                                                                                                 \
    {                                                                                                           \
        __m512 x = _mm512_set1_ps(a[r]);                                                                        \
        s##r##a = _mm512_add_ps(s##r##a, _mm512_mul_ps(x, b0));                                                 \
        s##r##b = _mm512_add_ps(s##r##b, _mm512_mul_ps(x, b1));                                                 \
    }
            UK512_ROWS(STEP)
#undef STEP
        }
    }
#define STORE(r) _mm512_storeu_ps(c + 32 * r, s##r##a), _mm512_storeu_ps(c + 32 * r + 16, s##r##b);
    UK512_ROWS(STORE)
#undef STORE
}
#undef UK512_ROWS
#endif


/* Pack A into row panels (K x mr each) and B into column panels (K x nr), zero padded,
 * rounding to the input format on the way (drift_round_array_float on each contiguous
 * piece: one pass over the inputs, no row-major copy). */
static void round_span_f(float *dst, const double *src, size_t n, drift_format_t f)
{
    drift_round_array_opts_t o = {f, DRIFT_RNE, 0, 0, NULL};
    (void)drift_round_array_float(dst, src, n, &o); /* cannot fail: f is not fp64 on the F32 path */
}

int drift_gemm_pack_f32(drift_gemm_ctx_t *g, const double *A, const double *B, drift_format_t in)
{
    drift_gemm_simd_t simd = drift_gemm_simd();
    (void)simd;
    g->mr = 4, g->nr = 8;
#ifdef DRIFT_X86_DISPATCH
    if (simd == DRIFT_GEMM_SIMD_AVX512)
        g->mr = UK512_MR, g->nr = UK512_NR;
    else if (simd == DRIFT_GEMM_SIMD_AVX2)
        g->mr = UK_MR, g->nr = UK_NR;
#endif
    size_t M = g->M, N = g->N, K = g->K, mr = (size_t)g->mr, nr = (size_t)g->nr;
    g->mp = (M + mr - 1) / mr;
    g->np = (N + nr - 1) / nr;
    g->Ap = malloc((g->mp * mr * K + 1) * sizeof(float));
    g->Bp = malloc((g->np * nr * K + 1) * sizeof(float));
    if (!g->Ap || !g->Bp) return DRIFT_ENOMEM;
    /* Each row of A and of B is rounded whole into a scratch row and then scattered into its
     * panels: the bulk rounding runs over long spans (one call per row, not one per panel
     * piece of nr values, whose fixed cost was a quarter of a 1024^3 GEMM). */
    int fail = 0;
    size_t span = K > N ? K : N;
#pragma omp parallel reduction(| : fail) if((g->M + g->N) * g->K >= DRIFT_PAR_MIN_ELEMS_FAST)
    {
        float *row = malloc((span + 1) * sizeof *row);
        if (!row) fail = 1;
#pragma omp for schedule(dynamic, 1)
        for (size_t ip = 0; ip < g->mp; ip++)
            for (size_t r = 0; r < mr && !fail; r++) {
                size_t i = ip * mr + r;
                float *dst = g->Ap + ip * K * mr + r;
                if (i < M) {
                    round_span_f(row, A + i * K, K, in);
                    for (size_t k = 0; k < K; k++) dst[k * mr] = row[k];
                } else {
                    for (size_t k = 0; k < K; k++) dst[k * mr] = 0.0f;
                }
            }
#pragma omp for schedule(dynamic, 16)
        for (size_t k = 0; k < K; k++) {
            if (fail) continue;
            round_span_f(row, B + k * N, N, in);
            for (size_t jp = 0; jp < g->np; jp++) {
                float *dst = g->Bp + (jp * K + k) * nr;
                size_t cn = N - jp * nr < nr ? N - jp * nr : nr;
                memcpy(dst, row + jp * nr, cn * sizeof *dst);
                for (size_t c = cn; c < nr; c++) dst[c] = 0.0f;
            }
        }
        free(row);
    }
    if (fail) return DRIFT_ENOMEM;
    return DRIFT_OK;
}

/* tiles: mp x np tiles of mr x nr floats, each tile contiguous. */
void drift_gemm_tiled_chain_f32(const drift_gemm_ctx_t *g, float *tiles, size_t k0, size_t k1)
{
    const size_t mr = (size_t)g->mr, nr = (size_t)g->nr, K = g->K, tsz = mr * nr;
    const size_t mp = g->mp, np = g->np;
    /* The micro-kernel that fits the tile drift_gemm_pack_f32 chose. */
    drift_gemm_simd_t simd = drift_gemm_simd();
    (void)simd;
    if (k0 == k1) {
        memset(tiles, 0, mp * np * tsz * sizeof(float));
        return;
    }
#pragma omp parallel if(g->M * g->N * (k1 - k0) >= DRIFT_PAR_MIN_FMAS_FAST)
    for (size_t jc = 0; jc < np; jc += TILE_NCP) {
        size_t jn = np - jc < TILE_NCP ? np - jc : TILE_NCP;
        for (size_t kc = k0; kc < k1; kc += TILE_KC) {
            size_t kl = k1 - kc < TILE_KC ? k1 - kc : TILE_KC;
            int start = kc == k0;
#pragma omp for collapse(2) schedule(dynamic, 1)
            for (size_t ip = 0; ip < mp; ip++)
                for (size_t jj = 0; jj < jn; jj++) {
                    size_t jp = jc + jj;
                    const float *ap = g->Ap + (ip * K + kc) * mr, *bp = g->Bp + (jp * K + kc) * nr;
                    float *c = tiles + (ip * np + jp) * tsz;
#ifdef DRIFT_X86_DISPATCH
                    if (simd == DRIFT_GEMM_SIMD_AVX512 && g->mr == UK512_MR && g->nr == UK512_NR) {
                        uk_f32_avx512(kl, ap, bp, c, start, g->fma);
                        continue;
                    }
                    if (simd != DRIFT_GEMM_SIMD_NONE && g->mr == UK_MR && g->nr == UK_NR) {
                        uk_f32_avx2(kl, ap, bp, c, start, g->fma);
                        continue;
                    }
#endif
                    uk_f32_generic(kl, ap, bp, c, g->mr, g->nr, start, g->fma);
                }
        }
    }
}

void drift_gemm_tiles_to_rm(const drift_gemm_ctx_t *g, const float *tiles, double *out)
{
    const size_t mr = (size_t)g->mr, nr = (size_t)g->nr, tsz = mr * nr, M = g->M, N = g->N;
#pragma omp parallel for schedule(dynamic, 1) if(g->M * g->N >= DRIFT_PAR_MIN_ELEMS_FAST)
    for (size_t ip = 0; ip < g->mp; ip++)
        for (size_t jp = 0; jp < g->np; jp++) {
            const float *t = tiles + (ip * g->np + jp) * tsz;
            for (size_t r = 0; r < mr && ip * mr + r < M; r++)
                for (size_t c = 0; c < nr && jp * nr + c < N; c++) out[(ip * mr + r) * N + jp * nr + c] = t[r * nr + c];
        }
}

