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
 * dropped), so the micro-kernel never branches on an edge.
 *
 * Where the time goes (1024^3, bf16 inputs, one thread, AVX-512, bench_gemm): the
 * micro-kernel runs at OpenBLAS's kernel speed (about 150 GFLOP/s, the two FMA ports'
 * peak); the rest is the data the emulation's API makes it move, twice OpenBLAS's bytes
 * (double inputs and outputs against floats): the inputs rounded and packed (3.5 ms), the
 * result widened to doubles (about 1 ms), against OpenBLAS's 0.6 ms of packing. Hence the
 * packing is done in long spans with prefetching, the panels' block is kept between calls,
 * and each finished tile goes to C from L1. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "gemm_internal.h"

/* Cache blocking, measured on the lab's CPU (48 KiB L1d, 2 MiB L2 a core; 1024^3, one
 * thread, bench_gemm): the chain loop keeps one A panel (KC x 12 floats: 48 KiB at
 * KC = 1024) hot while TILE_NCP B panels (KC x 32 floats each, 512 KiB in all) stay in L2,
 * and a tile's accumulators are stored and reloaded once per k-block. With KC = 256 and
 * 16 panels a 1024^3 GEMM moved its 4 MiB of tiles in and out of memory 4 times and the
 * chain took 1.02-1.09x OpenBLAS's sgemm; with KC = 1024 and 4 panels 0.93-0.99x. */
#define TILE_KC 1024 /* k-block */
#define TILE_NCP 4   /* column panels per block */
#define PACK_KB 16   /* rows of B rounded together, then copied to every panel */

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
__attribute__((target("avx2,fma"))) static void uk_f32_avx2(
    size_t kl, const float *restrict ap, const float *restrict bp, float *restrict c, int start, int fma_on)
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
 * scalar kernel. The tile is read from c (unless start) and written to cout (c, or scratch
 * for a finished tile that goes straight to the output). */
/* The A panel (KC x 12 floats, 48 KiB) and the B panel (KC x 32) both come from L2 at
 * KC = 1024: each step asks for the lines UK512_PF steps ahead into L1 (the hardware
 * prefetchers alone left the 1024^3 chain at 1.02x OpenBLAS; 8, 16, 32 steps ahead gave
 * 0.93, 0.92, 0.88x). A prefetch never faults, so reading past a panel's end is harmless. */
#define UK512_PF 32
#define UK512_PREFETCH(a, b)                                                       \
    (_mm_prefetch((const char *)((b) + UK512_PF * UK512_NR), _MM_HINT_T0),         \
        _mm_prefetch((const char *)((b) + UK512_PF * UK512_NR + 16), _MM_HINT_T0), \
        _mm_prefetch((const char *)((a) + UK512_PF * UK512_MR), _MM_HINT_T0))
#define UK512_MR 12
#define UK512_NR 32
#define UK512_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
__attribute__((target("avx512f"))) static void uk_f32_avx512(
    size_t kl, const float *restrict ap, const float *restrict bp, const float *c, float *cout, int start, int fma_on)
{
#define DECL(r) __m512 s##r##a, s##r##b;
    UK512_ROWS(DECL)
#undef DECL
    size_t k = 0;
    if (start) {
        __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
#define START(r)                                                        \
    {                                                                   \
        __m512 x = _mm512_set1_ps(ap[r]);                               \
        s##r##a = _mm512_mul_ps(x, b0), s##r##b = _mm512_mul_ps(x, b1); \
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
            UK512_PREFETCH(a, b);
            __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#define STEP(r)                                                                               \
    {                                                                                         \
        __m512 x = _mm512_set1_ps(a[r]);                                                      \
        s##r##a = _mm512_fmadd_ps(x, b0, s##r##a), s##r##b = _mm512_fmadd_ps(x, b1, s##r##b); \
    }
            UK512_ROWS(STEP)
#undef STEP
        }
    } else {
        for (; k < kl; k++) {
            const float *a = ap + k * UK512_MR, *b = bp + k * UK512_NR;
            UK512_PREFETCH(a, b);
            __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#define STEP(r)                                                 \
    {                                                           \
        __m512 x = _mm512_set1_ps(a[r]);                        \
        s##r##a = _mm512_add_ps(s##r##a, _mm512_mul_ps(x, b0)); \
        s##r##b = _mm512_add_ps(s##r##b, _mm512_mul_ps(x, b1)); \
    }
            UK512_ROWS(STEP)
#undef STEP
        }
    }
#define STORE(r) _mm512_storeu_ps(cout + 32 * r, s##r##a), _mm512_storeu_ps(cout + 32 * r + 16, s##r##b);
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
    int rc = drift_round_array_float(dst, src, n, &o); /* cannot fail: f is not fp64 on the F32 path */
    (void)rc;
}

/* The packed panels live in one block, kept between calls (as OpenBLAS keeps its buffers):
 * fresh memory for the 8 MiB of panels of a 1024^3 GEMM costs 2048 page faults, each
 * zeroing a page, about a tenth of the whole call. One block is cached for the process
 * (an atomic exchange, so concurrent calls each get their own) up to PANELS_KEEP bytes;
 * it starts on a cache line, so that no 64-byte load of B straddles two. Its capacity is
 * stored in the line before it. */
#define PANELS_KEEP ((size_t)64 << 20)
#define PANELS_LINE 64
static _Atomic(float *) panels_cache;

static size_t panels_cap(const float *p)
{
    size_t cap;
    memcpy(&cap, (const char *)p - PANELS_LINE, sizeof cap);
    return cap;
}

static void panels_free(float *p)
{
    if (p) free((char *)p - PANELS_LINE);
}

static float *panels_take(size_t n)
{
    float *p = atomic_exchange(&panels_cache, NULL);
    if (p && panels_cap(p) >= n) return p;
    panels_free(p);
    size_t bytes = (n * sizeof(float) + PANELS_LINE - 1) / PANELS_LINE * PANELS_LINE;
    char *b = aligned_alloc(PANELS_LINE, PANELS_LINE + bytes);
    if (!b) return NULL;
    memcpy(b, &n, sizeof n);
    return (float *)(b + PANELS_LINE);
}

void drift_gemm_pack_release(drift_gemm_ctx_t *g)
{
    float *p = g->Ap;
    g->Ap = g->Bp = NULL;
    if (!p) return;
    if (panels_cap(p) * sizeof(float) > PANELS_KEEP) {
        panels_free(p);
        return;
    }
    panels_free(atomic_exchange(&panels_cache, p));
}

#ifdef DRIFT_X86_DISPATCH
/* dst[k * mr + r] = scr[r * K + k] for r < rows, 0 for rows <= r < mr (mr <= 16): an A
 * panel interleaved k-major from its rounded rows, 16 k at a time by a 16 x 16 transpose
 * in registers (unpack, then two rounds of 128-bit lane shuffles; rows past `rows` are
 * zero), each k's mr floats one masked store. The scalar loop it replaces moved one float
 * per load and store, a quarter of the packing time of a 1024^3 GEMM. */
__attribute__((target("avx512f"))) static void interleave_avx512(
    float *dst, const float *scr, size_t K, size_t rows, size_t mr)
{
    const __mmask16 keep = (__mmask16)((1u << mr) - 1);
    size_t k = 0;
    for (; k + 16 <= K; k += 16) {
        __m512 r[16], t[16];
        for (size_t i = 0; i < 16; i++) r[i] = i < rows ? _mm512_loadu_ps(scr + i * K + k) : _mm512_setzero_ps();
        for (int i = 0; i < 16; i += 2)
            t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
        for (int i = 0; i < 16; i += 4) {
            r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
            r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
            r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
            r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
        }
        for (int h = 0; h < 16; h += 8)
            for (int i = 0; i < 4; i++) {
                t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
                t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
            }
        for (int i = 0; i < 8; i++) {
            r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
            r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
        }
        for (int i = 0; i < 16; i++) _mm512_mask_storeu_ps(dst + (k + i) * mr, keep, r[i]);
    }
    for (; k < K; k++)
        for (size_t i = 0; i < mr; i++) dst[k * mr + i] = i < rows ? scr[i * K + k] : 0.0f;
}

/* One k-row piece of a B panel: 32 floats, two loads and two stores. */
__attribute__((target("avx512f"))) static void copy32_avx512(float *dst, const float *src)
{
    _mm512_storeu_ps(dst, _mm512_loadu_ps(src));
    _mm512_storeu_ps(dst + 16, _mm512_loadu_ps(src + 16));
}
#endif

int drift_gemm_pack_f32(drift_gemm_ctx_t *g, const double *A, const double *B, drift_format_t in)
{
    const drift_gemm_simd_t simd = drift_gemm_simd();
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
    const size_t na = (g->mp * mr * K + 15) / 16 * 16; /* B's panels start on a cache line */
    g->Ap = panels_take(na + g->np * nr * K + 1);
    if (!g->Ap) return DRIFT_ENOMEM;
    g->Bp = g->Ap + na;
    /* The bulk rounding runs over long spans (whole rows, one call each: its fixed cost per
     * call was a quarter of a 1024^3 GEMM when it was called per panel piece), into a
     * scratch block that stays in L1/L2, and each packed panel is then written in order.
     * A: a panel's mr rows are rounded, then interleaved k-major. B: PACK_KB rows at a time
     * are rounded, then each column panel receives one contiguous PACK_KB x nr block.
     * (Writing one k row at a time into all panels touched np lines K * nr floats apart, a
     * power of two: they fall in one L1/L2 set and evict each other, which cost 4 ms of a
     * 1024^3 GEMM.) */
    int fail = 0;
    const size_t kb = PACK_KB;
    const size_t scratch = (mr * K > kb * N ? mr * K : kb * N) + 1;
#pragma omp parallel reduction(| : fail) if ((g->M + g->N) * g->K >= DRIFT_PAR_MIN_ELEMS_FAST)
    {
        float *scr = malloc(scratch * sizeof *scr);
        if (!scr) fail = 1;
#pragma omp for schedule(dynamic, 1)
        for (size_t ip = 0; ip < g->mp; ip++) {
            if (fail) continue;
            float *dst = g->Ap + ip * K * mr;
            size_t rows = M - ip * mr < mr ? M - ip * mr : mr;
            for (size_t r = 0; r < rows; r++) round_span_f(scr + r * K, A + (ip * mr + r) * K, K, in);
#ifdef DRIFT_X86_DISPATCH
            if (simd == DRIFT_GEMM_SIMD_AVX512) {
                interleave_avx512(dst, scr, K, rows, mr);
                continue;
            }
#endif
            for (size_t k = 0; k < K; k++)
                for (size_t r = 0; r < mr; r++) dst[k * mr + r] = r < rows ? scr[r * K + k] : 0.0f;
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t k0 = 0; k0 < K; k0 += kb) {
            if (fail) continue;
            size_t kn = K - k0 < kb ? K - k0 : kb;
            round_span_f(scr, B + k0 * N, kn * N, in);
            for (size_t jp = 0; jp < g->np; jp++) {
                float *dst = g->Bp + (jp * K + k0) * nr;
                size_t cn = N - jp * nr < nr ? N - jp * nr : nr;
                for (size_t kk = 0; kk < kn; kk++, dst += nr) {
#ifdef DRIFT_X86_DISPATCH
                    if (simd == DRIFT_GEMM_SIMD_AVX512 && nr == 32 && cn == 32) {
                        copy32_avx512(dst, scr + kk * N + jp * nr);
                        continue;
                    }
#endif
                    memcpy(dst, scr + kk * N + jp * nr, cn * sizeof *dst);
                    for (size_t c = cn; c < nr; c++) dst[c] = 0.0f;
                }
            }
        }
        free(scr);
    }
    if (fail) return DRIFT_ENOMEM;
    return DRIFT_OK;
}

/* One finished tile t (mr x nr floats, in L1 right after the micro-kernel stored it) into
 * the row-major doubles out at (i0, j0): rows and columns past M and N are padding. */
static void tile_to_rm(const drift_gemm_ctx_t *g, const float *t, double *out, size_t i0, size_t j0)
{
    const size_t mr = (size_t)g->mr, nr = (size_t)g->nr, N = g->N;
    const size_t rows = g->M - i0 < mr ? g->M - i0 : mr, cols = N - j0 < nr ? N - j0 : nr;
    for (size_t r = 0; r < rows; r++) {
        double *o = out + (i0 + r) * N + j0;
        const float *tr = t + r * nr;
        for (size_t c = 0; c < cols; c++) o[c] = tr[c];
    }
}

#ifdef DRIFT_X86_DISPATCH
/* The same for a full 12 x 32 tile of the AVX-512 kernel: each float widened exactly. */
__attribute__((target("avx512f"))) static void tile_to_rm_avx512(const float *t, double *out, size_t N)
{
    for (size_t r = 0; r < UK512_MR; r++, t += UK512_NR, out += N) {
        _mm512_storeu_pd(out, _mm512_cvtps_pd(_mm256_loadu_ps(t)));
        _mm512_storeu_pd(out + 8, _mm512_cvtps_pd(_mm256_loadu_ps(t + 8)));
        _mm512_storeu_pd(out + 16, _mm512_cvtps_pd(_mm256_loadu_ps(t + 16)));
        _mm512_storeu_pd(out + 24, _mm512_cvtps_pd(_mm256_loadu_ps(t + 24)));
    }
}
#endif

/* tiles: mp x np tiles of mr x nr floats, each tile contiguous. With out, the chains run
 * over all of [k0, k1) and each tile goes to out (row-major M x N doubles) as soon as its
 * last k-block is done, while it is still in L1: no second pass over the tiles. */
static void tiled_chain(const drift_gemm_ctx_t *g, float *tiles, size_t k0, size_t k1, double *out)
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
#pragma omp parallel if (g->M * g->N * (k1 - k0) >= DRIFT_PAR_MIN_FMAS_FAST)
    for (size_t jc = 0; jc < np; jc += TILE_NCP) {
        size_t jn = np - jc < TILE_NCP ? np - jc : TILE_NCP;
        for (size_t kc = k0; kc < k1; kc += TILE_KC) {
            size_t kl = k1 - kc < TILE_KC ? k1 - kc : TILE_KC;
            int start = kc == k0, last = kc + kl == k1;
#pragma omp for collapse(2) schedule(dynamic, 1)
            for (size_t ip = 0; ip < mp; ip++)
                for (size_t jj = 0; jj < jn; jj++) {
                    size_t jp = jc + jj;
                    const float *ap = g->Ap + (ip * K + kc) * mr, *bp = g->Bp + (jp * K + kc) * nr;
                    float *c = tiles + (ip * np + jp) * tsz;
                    int done = 0;
#ifdef DRIFT_X86_DISPATCH
                    if (simd == DRIFT_GEMM_SIMD_AVX512 && g->mr == UK512_MR && g->nr == UK512_NR) {
                        if (out && last && (ip + 1) * mr <= g->M && (jp + 1) * nr <= g->N) {
                            /* the finished tile goes to L1 scratch, not back to tiles */
                            float t[UK512_MR * UK512_NR];
                            uk_f32_avx512(kl, ap, bp, c, t, start, g->fma);
                            tile_to_rm_avx512(t, out + ip * mr * g->N + jp * nr, g->N);
                            continue;
                        }
                        uk_f32_avx512(kl, ap, bp, c, c, start, g->fma);
                        done = 1;
                    } else if (simd != DRIFT_GEMM_SIMD_NONE && g->mr == UK_MR && g->nr == UK_NR) {
                        uk_f32_avx2(kl, ap, bp, c, start, g->fma);
                        done = 1;
                    }
#endif
                    if (!done) uk_f32_generic(kl, ap, bp, c, g->mr, g->nr, start, g->fma);
                    if (out && last) tile_to_rm(g, c, out, ip * mr, jp * nr);
                }
        }
    }
}

void drift_gemm_tiled_chain_f32(const drift_gemm_ctx_t *g, float *tiles, size_t k0, size_t k1)
{
    tiled_chain(g, tiles, k0, k1, NULL);
}

void drift_gemm_tiled_f32_to_rm(const drift_gemm_ctx_t *g, float *tiles, double *out)
{
    if (g->K == 0) { /* no k-block: every accumulator is +0 (gemm.h) */
        memset(out, 0, g->M * g->N * sizeof *out);
        return;
    }
    tiled_chain(g, tiles, 0, g->K, out);
}

void drift_gemm_tiles_to_rm(const drift_gemm_ctx_t *g, const float *tiles, double *out)
{
    const size_t mr = (size_t)g->mr, nr = (size_t)g->nr, tsz = mr * nr, M = g->M, N = g->N;
#pragma omp parallel for schedule(dynamic, 1) if (g->M * g->N >= DRIFT_PAR_MIN_ELEMS_FAST)
    for (size_t ip = 0; ip < g->mp; ip++)
        for (size_t jp = 0; jp < g->np; jp++) {
            const float *t = tiles + (ip * g->np + jp) * tsz;
            for (size_t r = 0; r < mr && ip * mr + r < M; r++)
                for (size_t c = 0; c < nr && jp * nr + c < N; c++) out[(ip * mr + r) * N + jp * nr + c] = t[r * nr + c];
        }
}
