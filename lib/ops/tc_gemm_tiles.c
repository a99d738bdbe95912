/* tc_gemm_tiles.c — drift_tc_gemm on register tiles of 4 rows x 16 columns for four block
 * FMAs whose scalar model is one output at a time (tc_model.c): the ones that align and
 * truncate the products apart from c (tc_block_late_c for CDNA3 / MI300X, tc_block_then_add
 * for Blackwell fp8) in float and int32 lanes, CDNA1's exact block (tc_block_exact, MI100)
 * in double lanes with exactness checks, and CDNA2's pairwise fp32 sums (tc_block_pairwise,
 * MI250) in float lanes (both further down). Bit-identical to the scalar model
 * (tests/test_tc_model.c compares every output with drift_tc_dot in the AVX-512, AVX2 and
 * portable builds of the same C). The 512-bit vector variables stay in registers only in the
 * AVX-512 build (the others keep them in memory): MI100, MI250 and MI300X come here only with
 * AVX-512 (tc_gemm_amd.c, tc_gemm_packed.c), Blackwell fp8 always (it has no other fast path).
 *
 * Why the float lanes are exact: the caller sends only inputs whose nonzero magnitudes lie in
 * [2^-50, 2^50] (fp16 and fp8 always do; tf32 and bf16 data of one scale do), so a product has
 * at most 22 significant bits and lies in [2^-100, 2^100]: exact in float. Its alignment
 * exponent E (the block's largest ex(a) + ex(b)) is in [-100, 100], so the scale 2^(lsb_off - E)
 * is a normal float, and p * 2^(lsb_off - E) is exact (or below 1 when it underflows, where
 * truncation gives 0 either way). The truncated terms are below 2^(lsb_off + 2) <= 2^27 (a
 * product's unnormalised significand is below 4): int32 sums of 16 of them cannot overflow.
 * The model's clamps (min_exp: none for CDNA3, -133 for Blackwell fp8) lie below every E
 * reached here, so they never act (the caller checks min_exp <= -100).
 *
 * The time goes into the products (per 16 outputs: two integer operations for E, then two
 * multiplies, a conversion and an add), which stay in registers across a block; the
 * per-block finishing (c's exponent, the late shift or the truncation to fp32, the rounding)
 * runs once per block in double lanes, 8 at a time. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "gemm_internal.h"
#include "tc_internal.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define TC_TILE_CLONES 1
#endif

#define TR 4                  /* rows per tile */
#define TW 16                 /* columns per tile: one vector of 16 floats */
#define TC_TILE_EFLOOR (-100) /* every E of an in-range product is at least this */

/* GCC/clang vector extensions (as lib/llm/lmhead.c): the same C compiles to AVX-512 zmm, to
 * pairs of AVX2 ymm or to SSE2 xmm registers in the clones below. */
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8l __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

/* The helpers below are inlined into one function: no vector crosses a call, so the ABI note
 * GCC gives for vector arguments without AVX does not apply. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wunknown-warning-option" /* a clang without -Wpsabi */
#endif
#pragma GCC diagnostic ignored "-Wpsabi"

#define VLOAD(v, p) memcpy(&(v), (p), sizeof(v))
#define VSTORE(p, v) memcpy((p), &(v), sizeof(v))

static inline __attribute__((always_inline)) v8d sel8(v8l m, v8d x, v8d y)
{
    return (v8d)(((v8l)x & m) | ((v8l)y & ~m));
}

/* GCC 12 splits a widening __builtin_convertvector (8 floats or int32 to 8 doubles) into
 * four 256-bit instructions, and a vector max written as a select into three: the AVX-512
 * clone takes the one instruction each from these helpers (isa == 2). The conversions are
 * exact and max is max: every build computes the same values. */
#ifdef TC_TILE_CLONES
#include <immintrin.h>
__attribute__((target("avx512f"))) static inline v8d widen_f_512(v8f x) { return (v8d)_mm512_cvtps_pd((__m256)x); }
__attribute__((target("avx512f"))) static inline v8d widen_i_512(v8i x) { return (v8d)_mm512_cvtepi32_pd((__m256i)x); }
__attribute__((target("avx512f"))) static inline v16i max_i_512(v16i x, v16i y)
{
    return (v16i)_mm512_max_epi32((__m512i)x, (__m512i)y);
}
/* m ? c : r where m: the error bits (ev without its sign bit) are not all 0; *any |= m != 0 */
__attribute__((target("avx512f"))) static inline v8d keep_if_err_512(v8l ev, v8d c, v8d r, int *any)
{
    __mmask8 m = _mm512_test_epi64_mask((__m512i)ev, _mm512_set1_epi64(INT64_MAX));
    *any |= m != 0;
    return (v8d)_mm512_mask_blend_pd(m, (__m512d)r, (__m512d)c);
}
/* (x + M) rounded toward -inf (one vaddpd with embedded rounding) */
__attribute__((target("avx512f"))) static inline v8d add_down_512(v8d x, v8d M)
{
    return (v8d)_mm512_add_round_pd((__m512d)x, (__m512d)M, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
}
/* x * y + z rounded toward -inf (one vfmadd with embedded rounding) */
__attribute__((target("avx512f"))) static inline v8d fma_down_512(v8d x, v8d y, v8d z)
{
    return (v8d)_mm512_fmadd_round_pd((__m512d)x, (__m512d)y, (__m512d)z, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
}
#endif

static inline __attribute__((always_inline)) v8d cvtfd(v8f x, int isa)
{
#ifdef TC_TILE_CLONES
    if (isa == 2) return widen_f_512(x);
#endif
    (void)isa;
    return __builtin_convertvector(x, v8d);
}

static inline __attribute__((always_inline)) v8d cvtid(v8i x, int isa)
{
#ifdef TC_TILE_CLONES
    if (isa == 2) return widen_i_512(x);
#endif
    (void)isa;
    return __builtin_convertvector(x, v8d);
}

static inline __attribute__((always_inline)) v8d absv(v8d x) { return (v8d)((v8l)x & INT64_MAX); }

/* m ? x : y lane by lane (a vector ?: is C++ only) */
static inline __attribute__((always_inline)) v16i seli16(v16i m, v16i x, v16i y) { return (x & m) | (y & ~m); }

static inline __attribute__((always_inline)) v16i maxi16(v16i x, v16i y, int isa)
{
#ifdef TC_TILE_CLONES
    if (isa == 2) return max_i_512(x, y);
#endif
    (void)isa;
    return seli16(x > y, x, y);
}


static inline __attribute__((always_inline)) v8i lo8(v16i x)
{
    return __builtin_shufflevector(x, x, 0, 1, 2, 3, 4, 5, 6, 7);
}
static inline __attribute__((always_inline)) v8i hi8(v16i x)
{
    return __builtin_shufflevector(x, x, 8, 9, 10, 11, 12, 13, 14, 15);
}
static inline __attribute__((always_inline)) v8f lo8f(v16f x)
{
    return __builtin_shufflevector(x, x, 0, 1, 2, 3, 4, 5, 6, 7);
}
static inline __attribute__((always_inline)) v8f hi8f(v16f x)
{
    return __builtin_shufflevector(x, x, 8, 9, 10, 11, 12, 13, 14, 15);
}
static inline __attribute__((always_inline)) v16f cat16f(v8f lo, v8f hi)
{
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* The bits of 2^e (as int64 lanes) for the low or high 8 lanes of eb = e + 1023 in [1, 2046]:
 * each int32 paired with a zero (little-endian), shifted to the exponent field. */
static inline __attribute__((always_inline)) v8l pow2bits_lo(v16i eb)
{
    v16i z = {0};
    return (v8l)__builtin_shufflevector(eb, z, 0, 16, 1, 16, 2, 16, 3, 16, 4, 16, 5, 16, 6, 16, 7, 16) << 52;
}
static inline __attribute__((always_inline)) v8l pow2bits_hi(v16i eb)
{
    v16i z = {0};
    return (v8l)__builtin_shufflevector(eb, z, 8, 16, 9, 16, 10, 16, 11, 16, 12, 16, 13, 16, 14, 16, 15, 16) << 52;
}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "pow2bits_lo/hi pair an int32 with the zero above it: little-endian only"
#endif

/* CDNA3 (tc_block_late_c), 8 outputs, on values rather than integers: P = S * 2^(Ep - lsb_off)
 * the products' truncated sum and c (an fp32 value, or inf). The one with the smaller
 * exponent ("small") is rounded toward -inf to the quantum q of the other's units: 2^(Ec -
 * lsb_off - 7) when that is c (the products gain 7 bits, late), else 2^(Ep - lsb_off); then
 * v = floor_q(small) + big. That is tc_block_late_c's signed integer sum (below 2^41 units of
 * q, exact in double) times its scale. floor_q: x + 1.5 * 2^(52 + log2 q) - the same rounds x
 * to nearest at quantum q (|x| < 2^51 q), then one q less where that went up (AVX-512: the
 * addition rounded down instead). big is a multiple of q. v is rounded once to fp32. No product (Ep = TC_NO_TERM, S = 0,
 * late): v = 0 + c, which is c (+0 for -0), as the model's "return c"; an infinite c is late
 * too and gives inf + finite = inf, which the model keeps. A zero v is +0 (a zero floor_q is
 * +0), as the model's. qb: the bits of q. */
static inline __attribute__((always_inline)) v8d floor_q(v8d x, v8d M, v8d q, int isa)
{
#ifdef TC_TILE_CLONES
    if (isa == 2) { /* x + M rounded down (embedded rounding) is floor_q(x) + M */
        (void)q;
        return add_down_512(x, M) - M;
    }
#endif
    (void)isa;
    v8d r = (x + M) - M;
    return r - sel8(r > x, q, (v8d){0});
}

/* Neither P nor c is chosen by the late mask: the one that is "big" is a multiple of q
 * already (c, late: q is at most c's ulp 2^(Ec - 23), as lsb_off + 7 >= 23; P, not late:
 * q is P's unit), so floor_q of both, added, is floor_q(small) + big; |P|, |c| < 2^51 q. */
static inline __attribute__((always_inline)) v8f late_c8(v8l qb, v8d Sd, v8d ps, v8f c8, int isa)
{
    v8d c = cvtfd(c8, isa);
    v8d M = (v8d)(qb + (((int64_t)52 << 52) | ((int64_t)1 << 51))), q = (v8d)qb;
#ifdef TC_TILE_CLONES
    if (isa == 2) /* Sd * ps + (floor_q(c) + M), exact before its rounding down, is floor_q(P) +
                   * floor_q(c) + M (adding whole units of q commutes with floor_q) */
        return __builtin_convertvector(fma_down_512(Sd, ps, add_down_512(c, M)) - M, v8f);
#endif
    return __builtin_convertvector(floor_q(Sd * ps, M, q, isa) + floor_q(c, M, q, isa), v8f);
}

static inline __attribute__((always_inline)) v16f late_c16(v16i Ep, v16i Ef, v16i S, v16f c, int lsb_off, int isa)
{
    v16i cu = (v16i)c;
    v16i Ec = maxi16((cu >> 23) & 0xff, (v16i){0} + 1, isa) - 127; /* zero and subnormals: -126; inf: 128 */
    v16i late = Ec > Ep;
    v16i qe = seli16(late, Ec - 7, Ep) + (1023 - lsb_off);
    /* P's scale 2^(Ef - lsb_off) in [2^-125, 2^76], a float (Ef: Ep floored; S is 0 below) */
    v16f ps = (v16f)((Ef - lsb_off + 127) << 23);
    return cat16f(late_c8(pow2bits_lo(qe), cvtid(lo8(S), isa), cvtfd(lo8f(ps), isa), lo8f(c), isa),
        late_c8(pow2bits_hi(qe), cvtid(hi8(S), isa), cvtfd(hi8f(ps), isa), hi8f(c), isa));
}

/* Blackwell fp8 (tc_block_then_add), 8 outputs: S = S0 + S1 the truncated products' sum in
 * units of 2^(E - lsb_off) (below 2^32: exact in double), truncated to 24 significant bits
 * (the RNE float, one step toward zero on its bits where it went up in magnitude; never
 * subnormal: |S| >= 1 and E - lsb_off >= -53), scaled back, and added to c with one RNE
 * rounding to the output format. A zero S gives p = +0 and so c (+0 for -0), as the model's
 * "no product" branch; an infinite c stays infinite. */
static inline __attribute__((always_inline)) v8f then_add8(v8f ps, v8i S0, v8i S1, v8f c8, int isa)
{
    v8d Sd = cvtid(S0, isa) + cvtid(S1, isa);
    v8f f = __builtin_convertvector(Sd, v8f);
    v8d fd = cvtfd(f, isa);
    v8i up = __builtin_convertvector(absv(fd) > absv(Sd), v8i); /* -1 where RNE went up */
    f = (v8f)((v8i)f + up);
    v8d p = cvtfd(f, isa) * cvtfd(ps, isa); /* exact */
    v8d x = p + cvtfd(c8, isa);             /* p and c have <= 24 bits: rounding this to
                                                   * double, then to the output, is the
                                                   * correctly rounded sum (tc_block_then_add) */
    return __builtin_convertvector(x, v8f); /* fp32 output: the only one then-add has */
}

static inline __attribute__((always_inline)) v16f then_add16(v16i Ef, v16i S0, v16i S1, v16f c, int lsb_off, int isa)
{
    v16f ps = (v16f)((Ef - lsb_off + 127) << 23); /* 2^(E - lsb_off) in [2^-125, 2^75], a float */
    return cat16f(
        then_add8(lo8f(ps), lo8(S0), lo8(S1), lo8f(c), isa), then_add8(hi8f(ps), hi8(S0), hi8(S1), hi8f(c), isa));
}

typedef struct {
    const float *Ap; /* Mp x K, rows padded to TR with zeros */
    const int32_t *eap;
    const float *Bp; /* panels of TW columns: Bp[(panel * K + k) * TW + l], zero-padded */
    const int32_t *ebp;
    size_t K;
    int blk, lsb_off, then_add;
} tc_tiles_t;

/* One tile: rows i0..i0+TR of the padded A, columns of panel jp; acc (TR x TW floats) holds
 * the rounded c and receives the result. */
/* cblk: 0, or a compile-time block size of late-c (then_add 0) whose full blocks are unrolled
 * (MI300X bf16: 8), the short last block taking the same code with its m. */
static inline __attribute__((always_inline)) void tc_tile_with(
    const tc_tiles_t *t, size_t i0, size_t jp, float *acc, int isa, const int cblk)
{
    const size_t K = t->K, blk = cblk ? (size_t)cblk : (size_t)t->blk;
    const int then_add = cblk ? 0 : t->then_add;
    const float *a = t->Ap + i0 * K, *bp = t->Bp + jp * K * TW;
    const int32_t *ea = t->eap + i0 * K, *ebp = t->ebp + jp * K * TW;
    v16f c[TR];
    for (int r = 0; r < TR; r++) VLOAD(c[r], acc + r * TW);
    for (size_t k0 = 0; k0 < K; k0 += blk) {
        const size_t m = cblk && k0 + blk <= K ? (size_t)cblk : (K - k0 < blk ? K - k0 : blk), m0 = m < 16 ? m : 16;
        v16i E[TR], S0[TR], S1[TR];
        v16f sc[TR];
        for (int r = 0; r < TR; r++) E[r] = (v16i){0} + TC_NO_TERM;
        for (size_t k = k0; k < k0 + m; k++) {
            v16i eb;
            VLOAD(eb, ebp + k * TW);
            for (int r = 0; r < TR; r++) {
                v16i e = eb + ea[r * K + k];
                E[r] = maxi16(e, E[r], isa);
            }
        }
        for (int r = 0; r < TR; r++) {
            v16i Ef = seli16(E[r] > TC_TILE_EFLOOR, E[r], (v16i){0} + TC_TILE_EFLOOR);
            sc[r] = (v16f)((t->lsb_off - Ef + 127) << 23); /* 2^(lsb_off - E), a normal float */
            S0[r] = (v16i){0}, S1[r] = (v16i){0};
        }
        for (size_t k = k0; k < k0 + m0; k++) {
            v16f b;
            VLOAD(b, bp + k * TW);
            for (int r = 0; r < TR; r++) S0[r] += __builtin_convertvector((b * a[r * K + k]) * sc[r], v16i);
        }
        for (size_t k = k0 + m0; k < k0 + m; k++) { /* Blackwell fp8's 32: a second int32 sum */
            v16f b;
            VLOAD(b, bp + k * TW);
            for (int r = 0; r < TR; r++) S1[r] += __builtin_convertvector((b * a[r * K + k]) * sc[r], v16i);
        }
        for (int r = 0; r < TR; r++) {
            v16i Ef = seli16(E[r] > TC_TILE_EFLOOR, E[r], (v16i){0} + TC_TILE_EFLOOR);
            c[r] = then_add ? then_add16(Ef, S0[r], S1[r], c[r], t->lsb_off, isa)
                            : late_c16(E[r], Ef, S0[r] + S1[r], c[r], t->lsb_off, isa);
        }
    }
    for (int r = 0; r < TR; r++) {
        if (!then_add) c[r] += 0.0f; /* a zero is +0 (late_c16) */
        VSTORE(acc + r * TW, c[r]);
    }
}

#ifdef TC_TILE_CLONES
__attribute__((target("avx512f,avx512dq,prefer-vector-width=512"))) static void tc_tile_avx512(
    const tc_tiles_t *t, size_t i0, size_t jp, float *acc)
{
    if (!t->then_add && t->blk == 8)
        tc_tile_with(t, i0, jp, acc, 2, 8);
    else if (!t->then_add && t->blk == 4) /* MI300X tf32 */
        tc_tile_with(t, i0, jp, acc, 2, 4);
    else
        tc_tile_with(t, i0, jp, acc, 2, 0);
}

__attribute__((target("avx2"))) static void tc_tile_avx2(const tc_tiles_t *t, size_t i0, size_t jp, float *acc)
{
    tc_tile_with(t, i0, jp, acc, 1, 0);
}
#endif

static void tc_tile_generic(const tc_tiles_t *t, size_t i0, size_t jp, float *acc)
{
    tc_tile_with(t, i0, jp, acc, 0, 0);
}

/* c rounded to the output format (drift_tc_round_c_): an fp32 value is its own rounding to
 * fp32 in any mode (subnormals kept, as drift_tc_round_c_ keeps them), the common case of C
 * a tile reads, without the call. */
static inline double tc_tile_round_c(double c, const tc_cfg_t *g)
{
    return g->out == DRIFT_FP32 && (double)(float)c == c ? c : drift_tc_round_c_(c, g);
}

/* An input as the hardware takes it: only tf32 changes (tc_model.c truncates fp32 values). */
static inline double tc_tile_prepare(double x, const tc_cfg_t *g)
{
    return g->in == DRIFT_TF32 ? drift_tc_prepare_(x, g) : x;
}

/* ---- CDNA1 (tc_block_exact): c and a block of products summed exactly, rounded once ------
 * On tiles of 4 rows x 16 columns in double lanes: per output, s = c, then s += p_k for the
 * block's products (exact in double: at most 11 x 11 significant bits), each addition an
 * error-free TwoSum whose error's bits are or-ed into a flag. When the flag is 0 every
 * addition was exact, s is the exact sum, and (float)s its one correctly rounded fp32 value
 * (nearest-even, with subnormals; at or above 2^128 - 2^103 it is inf, as tc_block_exact's
 * 2^128 test after rounding); an exact zero sum is +0 (tc_block_exact drops zero terms and
 * returns +0). A flagged output (the terms span more than 53 bits: a tiny product beside a
 * large c, rare on data of one scale; or an inf accumulator, whose TwoSum error is NaN) is
 * recomputed with the scalar block. That is the AVX2 and portable builds' tile; the AVX-512
 * one (below) checks each addition with two compares instead, recomputes its flagged
 * outputs once at the end, and on tiles whose input exponent range allows it sums a block's
 * products before adding them to c. */
typedef struct {
    const double *Ap; /* Mp x K, rows padded to TR with zeros */
    const double *Bp; /* panels of TW columns, zero-padded */
    size_t K;
    const tc_cfg_t *g;
} tc_xtiles_t;

static inline __attribute__((always_inline)) void tc_exact_tile_with(
    const tc_xtiles_t *t, size_t i0, size_t jp, double *acc, int isa)
{
    const size_t K = t->K, blk = (size_t)t->g->p.block;
    const double *a = t->Ap + i0 * K, *bp = t->Bp + jp * K * TW;
    v8d c[TR][2];
    for (int r = 0; r < TR; r++) VLOAD(c[r][0], acc + r * TW), VLOAD(c[r][1], acc + r * TW + 8);
    for (size_t k0 = 0; k0 < K; k0 += blk) {
        const size_t m = K - k0 < blk ? K - k0 : blk;
        v8d s[TR][2];
        v8l ev[TR][2];
        for (int r = 0; r < TR; r++)
            for (int h = 0; h < 2; h++) s[r][h] = c[r][h], ev[r][h] = (v8l){0};
        for (size_t k = k0; k < k0 + m; k++) {
            v8d b[2];
            VLOAD(b[0], bp + k * TW), VLOAD(b[1], bp + k * TW + 8);
            for (int r = 0; r < TR; r++)
                for (int h = 0; h < 2; h++) {
                    v8d p = b[h] * a[r * K + k]; /* exact */
                    v8d u = s[r][h] + p, bb = u - s[r][h];
                    v8d e = (s[r][h] - (u - bb)) + (p - bb); /* TwoSum: u + e == s + p exactly */
                    ev[r][h] |= (v8l)e;
                    s[r][h] = u;
                }
        }
        int any = 0;
        for (int r = 0; r < TR; r++)
            for (int h = 0; h < 2; h++) {
                v8d rr = cvtfd(__builtin_convertvector(s[r][h], v8f), isa) + 0.0; /* one rounding; +0 */
                /* a flagged output (some error bit: a NaN too; -0, exact, not) keeps its c for
                 * the scalar block */
#ifdef TC_TILE_CLONES
                if (isa == 2) {
                    c[r][h] = keep_if_err_512(ev[r][h], c[r][h], rr, &any);
                    continue;
                }
#endif
                v8l bad = (ev[r][h] & INT64_MAX) != 0;
                c[r][h] = sel8(bad, c[r][h], rr);
                int64_t bb[8];
                VSTORE(bb, bad);
                any |= (bb[0] | bb[1] | bb[2] | bb[3] | bb[4] | bb[5] | bb[6] | bb[7]) != 0;
            }
        if (any) { /* rare */
            for (int r = 0; r < TR; r++) {
                double cb[TW];
                int64_t eb[TW];
                v8l b0 = (ev[r][0] & INT64_MAX) != 0, b1 = (ev[r][1] & INT64_MAX) != 0;
                VSTORE(cb, c[r][0]), VSTORE(cb + 8, c[r][1]);
                VSTORE(eb, b0), VSTORE(eb + 8, b1);
                for (int l = 0; l < TW; l++)
                    if (eb[l]) {
                        double col[TC_MAX_BLOCK];
                        for (size_t k = 0; k < m; k++) col[k] = bp[(k0 + k) * TW + (size_t)l];
                        cb[l] = drift_tc_block_(a + r * K + k0, col, m, cb[l], t->g);
                    }
                VLOAD(c[r][0], cb), VLOAD(c[r][1], cb + 8);
            }
        }
    }
    for (int r = 0; r < TR; r++) VSTORE(acc + r * TW, c[r][0]), VSTORE(acc + r * TW + 8, c[r][1]);
}

#ifdef TC_TILE_CLONES
/* The AVX-512 build checks each addition u = s + p with two compares instead of TwoSum's
 * five operations: u is s + p exactly if and only if u - s == p and u - p == s (with |s| >=
 * |p|, say, u - s is exact whatever u is (Dekker's lemma: u is s + p rounded to nearest), so
 * it equals p only if u == s + p; and an exact u gives both). The compares are and-ed into
 * one mask per row, over the whole of K: a lane cleared in row r (an inexact addition in
 * (r, lane) or (r, lane + 8) in some block; an inf accumulator, inf - inf being NaN) has
 * those two outputs recomputed from their c with the scalar blocks at the end (rare), the
 * others never went wrong. */
/* s += (p0, p1), 16 sums of one row, each addition checked exact (the two compares above);
 * a lane whose addition was not exact is cleared in *ok. */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void checked_add_512(
    __m512d s[2], __mmask8 *ok, const __m512d p0, const __m512d p1)
{
    const __m512d u0 = _mm512_add_pd(s[0], p0), u1 = _mm512_add_pd(s[1], p1);
    *ok = _mm512_mask_cmp_pd_mask(*ok, _mm512_sub_pd(u0, s[0]), p0, _CMP_EQ_OQ);
    *ok = _mm512_mask_cmp_pd_mask(*ok, _mm512_sub_pd(u0, p0), s[0], _CMP_EQ_OQ);
    *ok = _mm512_mask_cmp_pd_mask(*ok, _mm512_sub_pd(u1, s[1]), p1, _CMP_EQ_OQ);
    *ok = _mm512_mask_cmp_pd_mask(*ok, _mm512_sub_pd(u1, p1), s[1], _CMP_EQ_OQ);
    s[0] = u0, s[1] = u1;
}

/* one product k added to the tile's 4 x 16 sums, each addition checked */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void exact_add_512(
    __m512d s[TR][2], __mmask8 ok[TR], const double *bk, const double *a, size_t K, size_t k)
{
    const __m512d b0 = _mm512_loadu_pd(bk), b1 = _mm512_loadu_pd(bk + 8);
    for (int r = 0; r < TR; r++) {
        const __m512d ar = _mm512_set1_pd(a[(size_t)r * K + k]);
        const __m512d p0 = _mm512_mul_pd(b0, ar), p1 = _mm512_mul_pd(b1, ar); /* exact */
        checked_add_512(s[r], &ok[r], p0, p1);
    }
}

/* the block's exact sum rounded once to fp32 becomes c. An exact zero sum is +0 in the
 * model; here it stays -0 when all its terms were -0, which changes no later nonzero sum
 * and becomes +0 at the end (the stores below), where the model's result is +0 too. */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void exact_round_512(
    __m512d s[TR][2])
{
    for (int r = 0; r < TR; r++)
        for (int h = 0; h < 2; h++) s[r][h] = _mm512_cvtps_pd(_mm512_cvtpd_ps(s[r][h]));
}

/* A narrow tile (drift_tc_gemm_exact_tiles' precheck: every sum of up to blk of its products
 * is exact in double): the m products of a block summed first, with FMAs (exact: each
 * product is exact and every partial sum representable), then added to the sums with one
 * checked addition. */
__attribute__((target("avx512f,avx512dq"))) static inline __attribute__((always_inline)) void exact_add_block_512(
    __m512d s[TR][2], __mmask8 ok[TR], const double *bk, const double *a, size_t K, size_t k0, const size_t m)
{
    __m512d b[TC_MAX_BLOCK][2];
    for (size_t q = 0; q < m; q++) b[q][0] = _mm512_loadu_pd(bk + q * TW), b[q][1] = _mm512_loadu_pd(bk + q * TW + 8);
    for (int r = 0; r < TR; r++) {
        const double *ar = a + (size_t)r * K + k0;
        __m512d a0 = _mm512_set1_pd(ar[0]);
        __m512d p0 = _mm512_mul_pd(b[0][0], a0), p1 = _mm512_mul_pd(b[0][1], a0);
        for (size_t q = 1; q < m; q++) {
            const __m512d aq = _mm512_set1_pd(ar[q]);
            p0 = _mm512_fmadd_pd(b[q][0], aq, p0), p1 = _mm512_fmadd_pd(b[q][1], aq, p1);
        }
        checked_add_512(s[r], &ok[r], p0, p1);
    }
}

/* The tile for blocks of blk (a constant where inlined: 2 and 4 unroll) */
__attribute__((target("avx512f,avx512dq,prefer-vector-width=512"))) static inline __attribute__((always_inline)) void
exact_tile_512_with(const tc_xtiles_t *t, size_t i0, size_t jp, double *acc, const size_t blk, const int narrow)
{
    const size_t K = t->K;
    const double *a = t->Ap + i0 * K, *bp = t->Bp + jp * K * TW;
    __m512d c[TR][2];
    __mmask8 ok[TR];
    for (int r = 0; r < TR; r++) {
        c[r][0] = _mm512_loadu_pd(acc + r * TW), c[r][1] = _mm512_loadu_pd(acc + r * TW + 8);
        ok[r] = 0xff;
    }
    size_t k0 = 0;
    for (; k0 + blk <= K; k0 += blk) { /* c (in s) plus the block's products, exactly */
        if (narrow)
            exact_add_block_512(c, ok, bp + k0 * TW, a, K, k0, blk);
        else
            for (size_t q = 0; q < blk; q++) exact_add_512(c, ok, bp + (k0 + q) * TW, a, K, k0 + q);
        exact_round_512(c);
    }
    if (k0 < K) { /* a short last block */
        for (size_t k = k0; k < K; k++) exact_add_512(c, ok, bp + k * TW, a, K, k);
        exact_round_512(c);
    }
    double c0[TR * TW];
    memcpy(c0, acc, sizeof c0);
    for (int r = 0; r < TR; r++) /* a zero result is +0 */
        _mm512_storeu_pd(acc + r * TW, _mm512_add_pd(c[r][0], _mm512_setzero_pd())),
            _mm512_storeu_pd(acc + r * TW + 8, _mm512_add_pd(c[r][1], _mm512_setzero_pd()));
    for (int r = 0; r < TR; r++) {
        if (ok[r] == 0xff) continue; /* the common case */
        for (int l = 0; l < TW; l++) {
            if (ok[r] >> (l % 8) & 1) continue;
            double v = c0[r * TW + l];
            for (size_t kb = 0; kb < K; kb += blk) {
                const size_t m = K - kb < blk ? K - kb : blk;
                double col[TC_MAX_BLOCK];
                for (size_t k = 0; k < m; k++) col[k] = bp[(kb + k) * TW + (size_t)l];
                v = drift_tc_block_(a + r * K + kb, col, m, v, t->g);
            }
            acc[r * TW + l] = v;
        }
    }
}

__attribute__((target("avx512f,avx512dq,prefer-vector-width=512"))) static void tc_exact_tile_avx512(
    const tc_xtiles_t *t, size_t i0, size_t jp, double *acc, int narrow)
{
    const size_t blk = (size_t)t->g->p.block;
    if (blk == 2 && narrow)
        exact_tile_512_with(t, i0, jp, acc, 2, 1); /* bf16 */
    else if (blk == 2)
        exact_tile_512_with(t, i0, jp, acc, 2, 0);
    else if (blk == 4 && narrow)
        exact_tile_512_with(t, i0, jp, acc, 4, 1); /* fp16 */
    else if (blk == 4)
        exact_tile_512_with(t, i0, jp, acc, 4, 0);
    else
        exact_tile_512_with(t, i0, jp, acc, blk, 0);
}

__attribute__((target("avx2"))) static void tc_exact_tile_avx2(const tc_xtiles_t *t, size_t i0, size_t jp, double *acc)
{
    tc_exact_tile_with(t, i0, jp, acc, 1);
}
#endif

static void tc_exact_tile_generic(const tc_xtiles_t *t, size_t i0, size_t jp, double *acc)
{
    tc_exact_tile_with(t, i0, jp, acc, 0);
}

int drift_tc_gemm_exact_tiles(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g)
{
    const size_t Mp = (M + TR - 1) / TR * TR, np = (N + TW - 1) / TW;
    double *Ap = calloc(Mp * K, sizeof *Ap), *Bp = calloc(np * K * TW, sizeof *Bp);
    if (!Ap || !Bp) {
        free(Ap), free(Bp);
        return DRIFT_ENOMEM;
    }
    for (size_t t = 0; t < M * K; t++) Ap[t] = tc_tile_prepare(A[t], g);
    for (size_t jp = 0; jp < np; jp++)
        for (size_t k = 0; k < K; k++)
            for (size_t l = 0; l < TW && jp * TW + l < N; l++)
                Bp[(jp * K + k) * TW + l] = tc_tile_prepare(B[k * N + jp * TW + l], g);
    const tc_xtiles_t t = {Ap, Bp, K, g};
    const int simd = drift_tc_simd_level_();
    const size_t ngroups = Mp / TR, ntiles = ngroups * np;
    /* The exponent range (in_exp) of the nonzero inputs of each group of TR rows of A and of
     * each panel of B. A tile's products are multiples of 2^(alo + blo - 2(p - 1)) (the
     * smallest inputs' quanta) below 2^(ahi + bhi + 2) in magnitude, so any sum of up to blk
     * of them is exact in double when (ahi - alo) + (bhi - blo) + 2(p - 1) + 2 +
     * ceil(log2 blk) <= 53: such a tile is narrow (its blocks' products summed unchecked). */
    int *rng = malloc((ngroups + np) * 2 * sizeof *rng);
    if (!rng) {
        free(Ap), free(Bp);
        return DRIFT_ENOMEM;
    }
    for (size_t q = 0; q < ngroups + np; q++) rng[2 * q] = INT32_MAX, rng[2 * q + 1] = INT32_MIN;
    for (size_t i = 0; i < M; i++)
        for (size_t k = 0; k < K; k++)
            if (Ap[i * K + k] != 0) {
                int e = in_exp(Ap[i * K + k], g->emin_in), *q = rng + 2 * (i / TR);
                q[0] = e < q[0] ? e : q[0], q[1] = e > q[1] ? e : q[1];
            }
    for (size_t u = 0; u < np * K * TW; u++)
        if (Bp[u] != 0) {
            int e = in_exp(Bp[u], g->emin_in), *q = rng + 2 * (ngroups + u / (K * TW));
            q[0] = e < q[0] ? e : q[0], q[1] = e > q[1] ? e : q[1];
        }
    int lgblk = 0;
    while ((1 << lgblk) < g->p.block) lgblk++;
    const int budget = 53 - 2 * (drift_format_info(g->in)->p - 1) - 2 - lgblk;
    /* Each tile is independent of the others: any thread count gives the same bits. */
#pragma omp parallel for schedule(dynamic, 1) if (M * N * K >= DRIFT_PAR_MIN_FMAS_GEN)
    for (size_t ti = 0; ti < ntiles; ti++) {
        size_t jp = ti / ngroups, i0 = ti % ngroups * TR;
        double acc[TR * TW];
        for (size_t r = 0; r < TR; r++)
            for (size_t l = 0; l < TW; l++) {
                size_t i = i0 + r, j = jp * TW + l;
                acc[r * TW + l] = i < M && j < N && c_init ? tc_tile_round_c(C[i * N + j], g) : 0.0;
            }
#ifdef TC_TILE_CLONES
        const int *ra = rng + 2 * (i0 / TR), *rb = rng + 2 * (ngroups + jp);
        /* a group or panel of zeros (lo > hi) has only zero products: narrow */
        const int narrow = ra[0] > ra[1] || rb[0] > rb[1] || (ra[1] - ra[0]) + (rb[1] - rb[0]) <= budget;
        (void)narrow; /* the AVX-512 tile's only */
        if (simd == 2)
            tc_exact_tile_avx512(&t, i0, jp, acc, narrow);
        else if (simd == 1)
            tc_exact_tile_avx2(&t, i0, jp, acc);
        else
#endif
            tc_exact_tile_generic(&t, i0, jp, acc);
        for (size_t r = 0; r < TR; r++)
            for (size_t l = 0; l < TW; l++) {
                size_t i = i0 + r, j = jp * TW + l;
                if (i < M && j < N) C[i * N + j] = acc[r * TW + l];
            }
    }
    (void)simd;
    free(Ap), free(Bp), free(rng);
    return DRIFT_OK;
}

/* The setup in one pass: n inputs as the hardware takes them (tc_tile_prepare) to floats
 * (exact: a value of fp16, bf16, tf32 or fp8 in range) and their exponents (in_exp, or
 * TC_NO_TERM for a zero), the range check of every input fused in (branch-free, so that
 * the loop vectorises: an out-of-range input stores 0 and the caller drops the packing).
 * 1 when every input is in range. */
static inline __attribute__((always_inline)) int tc_tile_pack_one(float *dst, int32_t *edst, double x, int emin)
{
    /* in range: zero or |x| in [2^-50, 2^50] (the file comment), on the bits of |x| (integer
     * compares and a select: the loop vectorises; NaN and inf lie above 2^50's bits) */
    uint64_t u, lo, hi;
    const double dlo = 0x1p-50, dhi = 0x1p50;
    memcpy(&u, &x, sizeof u), memcpy(&lo, &dlo, sizeof lo), memcpy(&hi, &dhi, sizeof hi);
    u &= INT64_MAX;
    const int out = u != 0 && u - lo > hi - lo, e = (int)(u >> 52) - 1023;
    dst[0] = (float)(out ? 0.0 : x);
    edst[0] = u != 0 ? (e < emin ? emin : e) : TC_NO_TERM;
    return out;
}

static inline __attribute__((always_inline)) int tc_tile_pack_with(
    float *dst, int32_t *edst, const double *src, size_t n, const tc_cfg_t *g)
{
    const int emin = g->emin_in;
    int bad = 0;
    if (g->in == DRIFT_TF32)
        for (size_t t = 0; t < n; t++) bad |= tc_tile_pack_one(dst + t, edst + t, tc_tile_prepare(src[t], g), emin);
    else
        for (size_t t = 0; t < n; t++) bad |= tc_tile_pack_one(dst + t, edst + t, src[t], emin);
    return !bad;
}

#ifdef TC_TILE_CLONES
/* The same, 8 inputs at a time in intrinsics (GCC leaves the loop above scalar); tf32 and the
 * last n % 8 inputs as above */
__attribute__((target("avx512f,avx512dq,prefer-vector-width=512"))) static int tc_tile_pack_avx512(
    float *dst, int32_t *edst, const double *src, size_t n, const tc_cfg_t *g)
{
    if (g->in == DRIFT_TF32) return tc_tile_pack_with(dst, edst, src, n, g);
    const __m512i abs = _mm512_set1_epi64(INT64_MAX), lo = _mm512_castpd_si512(_mm512_set1_pd(0x1p-50));
    const __m512i span = _mm512_sub_epi64(_mm512_castpd_si512(_mm512_set1_pd(0x1p50)), lo);
    const __m512i emin = _mm512_set1_epi64(g->emin_in), none = _mm512_set1_epi64(TC_NO_TERM);
    __mmask8 bad = 0;
    size_t t = 0;
    for (; t + 8 <= n; t += 8) {
        const __m512d x = _mm512_loadu_pd(src + t);
        const __m512i u = _mm512_and_si512(_mm512_castpd_si512(x), abs);
        const __mmask8 nz = _mm512_test_epi64_mask(u, u),
                       out = nz & _mm512_cmpgt_epu64_mask(_mm512_sub_epi64(u, lo), span);
        bad |= out;
        _mm256_storeu_ps(dst + t, _mm512_cvtpd_ps(_mm512_maskz_mov_pd((__mmask8)~out, x)));
        __m512i e = _mm512_max_epi64(_mm512_sub_epi64(_mm512_srli_epi64(u, 52), _mm512_set1_epi64(1023)), emin);
        e = _mm512_mask_blend_epi64(nz, none, e);
        _mm256_storeu_si256((__m256i *)(edst + t), _mm512_cvtepi64_epi32(e));
    }
    int ok = tc_tile_pack_with(dst + t, edst + t, src + t, n - t, g);
    return ok && bad == 0;
}
#endif

static int tc_tile_pack_generic(float *dst, int32_t *edst, const double *src, size_t n, const tc_cfg_t *g)
{
    return tc_tile_pack_with(dst, edst, src, n, g);
}

/* A (rows padded to TR) and B (panels of TW columns, zero-padded) packed; 0 when some input
 * is out of range. */
static int tc_tile_pack(float *Ap, int32_t *eap, float *Bp, int32_t *ebp, const double *A, const double *B, size_t M,
    size_t N, size_t K, const tc_cfg_t *g)
{
    const size_t Mp = (M + TR - 1) / TR * TR, np = (N + TW - 1) / TW;
    int (*pack)(float *, int32_t *, const double *, size_t, const tc_cfg_t *) = tc_tile_pack_generic;
#ifdef TC_TILE_CLONES
    if (drift_tc_simd_level_() == 2) pack = tc_tile_pack_avx512;
#endif
    int ok = pack(Ap, eap, A, M * K, g);
    for (size_t t = M * K; t < Mp * K; t++) Ap[t] = 0.0f, eap[t] = TC_NO_TERM;
    for (size_t jp = 0; jp < np && ok; jp++) {
        const size_t w = N - jp * TW < TW ? N - jp * TW : TW;
        for (size_t k = 0; k < K; k++) {
            const size_t at = (jp * K + k) * TW;
            ok &= pack(Bp + at, ebp + at, B + k * N + jp * TW, w, g);
            for (size_t l = w; l < TW; l++) Bp[at + l] = 0.0f, ebp[at + l] = TC_NO_TERM;
        }
    }
    return ok;
}

int drift_tc_gemm_tiles(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g, int *done)
{
    *done = 0;
    if (g->p.min_exp > TC_TILE_EFLOOR || g->p.block > 32) return DRIFT_OK; /* the clamp could act */
    if (g->out != DRIFT_FP32) return DRIFT_OK; /* no table row pairs these blocks with fp16 output */
    const size_t Mp = (M + TR - 1) / TR * TR, np = (N + TW - 1) / TW;
    float *Ap = malloc(Mp * K * sizeof *Ap), *Bp = malloc(np * K * TW * sizeof *Bp);
    int32_t *eap = malloc(Mp * K * sizeof *eap), *ebp = malloc(np * K * TW * sizeof *ebp);
    if (!Ap || !Bp || !eap || !ebp) {
        free(Ap), free(Bp), free(eap), free(ebp);
        return DRIFT_ENOMEM;
    }
    if (!tc_tile_pack(Ap, eap, Bp, ebp, A, B, M, N, K, g)) { /* some input out of range: another path */
        free(Ap), free(Bp), free(eap), free(ebp);
        return DRIFT_OK;
    }
    const tc_tiles_t t = {Ap, eap, Bp, ebp, K, g->p.block, g->lsb_off, g->algo == DRIFT_TC_ALIGN_THEN_ADD};
    const int simd = drift_tc_simd_level_();
    const size_t ngroups = Mp / TR, ntiles = ngroups * np;
    /* Each tile is independent of the others: any thread count gives the same bits. */
#pragma omp parallel for schedule(dynamic, 1) if (M * N * K >= DRIFT_PAR_MIN_FMAS_GEN)
    for (size_t ti = 0; ti < ntiles; ti++) {
        size_t jp = ti / ngroups, i0 = ti % ngroups * TR; /* a panel of B stays in cache across its row groups */
        /* the tile's part of C: rows x cols (fewer than TR x TW at the edges), without a bounds
         * test per output (the copies vectorise) */
        const size_t j0 = jp * TW, rows = M - i0 < TR ? M - i0 : TR, cols = N - j0 < TW ? N - j0 : TW;
        float acc[TR * TW] = {0};
        if (c_init)
            for (size_t r = 0; r < rows; r++)
                for (size_t l = 0; l < cols; l++) acc[r * TW + l] = (float)tc_tile_round_c(C[(i0 + r) * N + j0 + l], g);
#ifdef TC_TILE_CLONES
        if (simd == 2)
            tc_tile_avx512(&t, i0, jp, acc);
        else if (simd == 1)
            tc_tile_avx2(&t, i0, jp, acc);
        else
#endif
            tc_tile_generic(&t, i0, jp, acc);
        for (size_t r = 0; r < rows; r++)
            for (size_t l = 0; l < cols; l++) C[(i0 + r) * N + j0 + l] = acc[r * TW + l];
    }
    (void)simd;
    free(Ap), free(Bp), free(eap), free(ebp);
    *done = 1;
    return DRIFT_OK;
}

/* ---- CDNA2 (tc_block_pairwise): pairwise fp32 additions with subnormals flushed ----------
 * drift_tc_gemm_pairwise32's float arithmetic (tc_gemm_packed.c) regrouped on tiles of 4 rows
 * x 16 columns whose accumulators stay in registers across K; the same float operations per
 * output, so the same bits. A float is flushed (ftz: |x| < 2^-126 becomes the zero of its
 * sign) when its exponent field is 0: every value here is a rounded float, so that is
 * exactly |x| < 2^-126. A product is the flushed float product, except that a zero input
 * gives +0 (the model's select; 0 * negative would be -0): the zero of a flushed product
 * keeps the sign bit only under the mask S, set where both inputs are nonzero (the A and B
 * panels carry it as 0x80000000 or 0). K is padded to blocks of 4 with +0 inputs (S = 0),
 * as the model pads. c is flushed once on entry: every later accumulator is a flushed sum.
 * AVX-512 only (intrinsics: a flush is one vptestnmd and one masked vpandd); the AVX2 and
 * portable builds keep drift_tc_gemm_pairwise32's rows. */
typedef struct {
    const float *Ap;    /* Mp x Kp, zero-padded */
    const int32_t *sap; /* 0x80000000 where the A value is nonzero */
    const float *Bp;    /* panels of TW columns: Bp[(panel * Kp + k) * TW + l], zero-padded */
    const int32_t *sbp;
    size_t Kp;
} tc_ptiles_t;

#ifdef TC_TILE_CLONES
/* x flushed: where its exponent field is 0, only its sign bit kept (a masked and) */
__attribute__((target("avx512f"))) static inline __m512 ftz_512(__m512 x)
{
    const __m512i u = _mm512_castps_si512(x);
    __mmask16 tiny = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f800000));
    return _mm512_castsi512_ps(_mm512_mask_and_epi32(u, tiny, u, _mm512_set1_epi32(INT32_MIN)));
}

/* The model's product of a (broadcast) and b: flushed, its zero keeping only the bits of s
 * (the sign where both inputs are nonzero, else +0) */
__attribute__((target("avx512f"))) static inline __m512 prod_512(__m512 b, float a, __m512i s)
{
    const __m512i u = _mm512_castps_si512(_mm512_mul_ps(b, _mm512_set1_ps(a)));
    __mmask16 tiny = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f800000));
    return _mm512_castsi512_ps(_mm512_mask_and_epi32(u, tiny, u, s));
}

__attribute__((target("avx512f,avx512dq,prefer-vector-width=512"))) static void tc_pairwise_tile_avx512(
    const tc_ptiles_t *t, size_t i0, size_t jp, float *acc)
{
    const size_t Kp = t->Kp;
    const float *a = t->Ap + i0 * Kp, *bp = t->Bp + jp * Kp * TW;
    const int32_t *sa = t->sap + i0 * Kp, *sbp = t->sbp + jp * Kp * TW;
    __m512 c[TR];
    for (int r = 0; r < TR; r++) c[r] = ftz_512(_mm512_loadu_ps(acc + r * TW));
    for (size_t k0 = 0; k0 < Kp; k0 += 4) {
        __m512 b[4];
        __m512i sb[4];
        for (int q = 0; q < 4; q++)
            b[q] = _mm512_loadu_ps(bp + (k0 + q) * TW), sb[q] = _mm512_loadu_si512(sbp + (k0 + q) * TW);
        for (int r = 0; r < TR; r++) {
            __m512 p[4];
            for (int q = 0; q < 4; q++) {
                const size_t at = (size_t)r * Kp + k0 + (size_t)q;
                p[q] = prod_512(b[q], a[at], _mm512_and_si512(sb[q], _mm512_set1_epi32(sa[at])));
            }
            __m512 s01 = ftz_512(_mm512_add_ps(p[0], p[1])), s23 = ftz_512(_mm512_add_ps(p[2], p[3]));
            c[r] = ftz_512(_mm512_add_ps(c[r], ftz_512(_mm512_add_ps(s01, s23))));
        }
    }
    for (int r = 0; r < TR; r++) _mm512_storeu_ps(acc + r * TW, c[r]);
}
#endif

int drift_tc_gemm_pairwise_tiles(
    double *C, const double *A, const double *B, size_t M, size_t N, size_t K, int c_init, const tc_cfg_t *g, int *done)
{
    *done = 0;
#ifdef TC_TILE_CLONES
    if (drift_tc_simd_level_() != 2) return DRIFT_OK; /* the 512-bit vectors stay in registers only there */
    const size_t Kp = (K + 3) / 4 * 4, Mp = (M + TR - 1) / TR * TR, np = (N + TW - 1) / TW;
    float *Ap = calloc(Mp * Kp, sizeof *Ap), *Bp = calloc(np * Kp * TW, sizeof *Bp);
    int32_t *sap = calloc(Mp * Kp, sizeof *sap), *sbp = calloc(np * Kp * TW, sizeof *sbp);
    if (!Ap || !Bp || !sap || !sbp) {
        free(Ap), free(Bp), free(sap), free(sbp);
        return DRIFT_ENOMEM;
    }
    const double tiny = pow2i(g->emin_in);
    for (size_t i = 0; i < M; i++)
        for (size_t k = 0; k < K; k++) {
            double x = drift_tc_prepare_(A[i * K + k], g);
            if (fabs(x) < tiny) continue; /* zero, or a subnormal input: +0 */
            Ap[i * Kp + k] = (float)x;    /* exact: a float format */
            sap[i * Kp + k] = INT32_MIN;
        }
    for (size_t jp = 0; jp < np; jp++)
        for (size_t k = 0; k < K; k++)
            for (size_t l = 0; l < TW && jp * TW + l < N; l++) {
                double x = drift_tc_prepare_(B[k * N + jp * TW + l], g);
                if (fabs(x) < tiny) continue;
                Bp[(jp * Kp + k) * TW + l] = (float)x;
                sbp[(jp * Kp + k) * TW + l] = INT32_MIN;
            }
    const tc_ptiles_t t = {Ap, sap, Bp, sbp, Kp};
    const size_t ngroups = Mp / TR, ntiles = ngroups * np;
    /* Each tile is independent of the others: any thread count gives the same bits. */
#pragma omp parallel for schedule(dynamic, 1) if (M * N * K >= DRIFT_PAR_MIN_FMAS_GEN)
    for (size_t ti = 0; ti < ntiles; ti++) {
        size_t jp = ti / ngroups, i0 = ti % ngroups * TR;
        float acc[TR * TW];
        for (size_t r = 0; r < TR; r++)
            for (size_t l = 0; l < TW; l++) {
                size_t i = i0 + r, j = jp * TW + l;
                acc[r * TW + l] = i < M && j < N && c_init ? (float)tc_tile_round_c(C[i * N + j], g) : 0.0f;
            }
        tc_pairwise_tile_avx512(&t, i0, jp, acc);
        for (size_t r = 0; r < TR; r++)
            for (size_t l = 0; l < TW; l++) {
                size_t i = i0 + r, j = jp * TW + l;
                if (i < M && j < N) C[i * N + j] = acc[r * TW + l];
            }
    }
    free(Ap), free(Bp), free(sap), free(sbp);
    *done = 1;
#else
    (void)C, (void)A, (void)B, (void)M, (void)N, (void)K, (void)c_init, (void)g;
#endif
    return DRIFT_OK;
}
