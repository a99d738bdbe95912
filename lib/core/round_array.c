/* round_array.c — drift_round_array: rounding whole arrays, bit-identical to drift_round.
 *
 * Why: input rounding sits in front of every kernel, and a call per element (with its
 * switch on the mode and its branches on the range) is several times slower than a peer
 * like cpfloat. Here one loop per (mode, output type) does the common case without a
 * branch, so that the compiler vectorises it (an AVX2 clone is picked at run time where
 * the CPU has it); the rare values are then redone by drift_round itself.
 *
 * How (the magnitude-word rounding of format_fast.c, made branch-free): with a = |x| as a
 * 64-bit word, E its exponent field, rounding to precision P drops k = 53 - P low bits of
 * a in f's normal range, and k = 53 - P + (Emin - E) bits in f's subnormal range (the
 * quantum is fixed there). Adding inc and clearing the k bits rounds; a carry out of the
 * fraction bumps the exponent, which is the next binade's first value:
 *   RNE inc = 2^(k-1) - 1 + (bit k of a)   RNA inc = 2^(k-1)   RZ inc = 0
 *   RU  inc = x > 0 ? 2^k - 1 : 0          RD  inc = x < 0 ? 2^k - 1 : 0
 * Bit k is the last kept significand bit while k <= 51, i.e. for E >= Emin - P + 2. Values
 * below that (zeros, the two lowest binades of f's subnormal range, tinier values), inf and
 * NaN are "rare" in the portable loop and take drift_round. Overflows (a rounded word above
 * max_finite's) become +-max_finite, +-inf, or NaN in e4m3, by drift_round's rule, one more
 * select; so does flushing a subnormal result to zero.
 *
 * The AVX2 loop (picked at run time) goes further for RNE, RZ, RU and RD: the word path
 * only in f's normal range (k fixed, no per-value shift), and every finite value below
 * 2^emin rounded in floating point, scaled so that f's smallest subnormal is 1 and rounded
 * to an integer by one vroundpd in the mode; only infinities and NaNs are rare there.
 * Results are stored straight from the registers; a rare value is stored as its own word,
 * flagged, and redone from there (so out may be in). Where the CPU has AVX-512F the same
 * loop runs eight values at a time (RNE, RZ, RU, RD; DRIFT_NO_AVX512=1 stops at AVX2).
 * DRIFT_SR and fp64 go to drift_round for every element (SR needs its per-element random
 * word anyway). */
#include "format.h"
#include "drift.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIGN_MASK 0x8000000000000000ull
#define INF_BITS 0x7ff0000000000000ull
#define CHUNK 256

typedef struct {
    uint64_t kn;      /* 53 - P */
    uint64_t eminb;   /* biased exponent of f's smallest normal binade */
    uint64_t lo, hi;  /* biased exponent range handled here: [Emin - P + 2, 0x7fe] */
    uint64_t maxbits; /* word of max_finite */
    uint64_t sat;     /* all ones when overflow saturates */
    uint64_t minnorm; /* word of 2^emin: below it a result is subnormal */
    uint64_t flush;   /* 1 to flush subnormal results */
    uint64_t ovfword; /* an overflow not to max_finite: inf, or NaN in e4m3 (drift_round's NAN) */
    double up, down;  /* 2^s and 2^-s, s = p - 1 - emin: |x| * 2^s counts smallest subnormals */
} params_t;

static inline uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline double bitsd(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The branch-free step for one value: the rounded word (or x's own word when the value
 * is rare), and an all-ones *rare when it is. Written with masks and signed 64-bit
 * compares (every word here is below 2^63) so that the loops vectorise; mode is a
 * constant in every caller. */
static inline __attribute__((always_inline)) uint64_t step(
    uint64_t u, const params_t q, drift_mode_t mode, uint64_t *rare)
{
    const uint64_t sign = u & SIGN_MASK, a = u ^ sign;
    const int64_t E = (int64_t)(a >> 52);
    const uint64_t in_range = (uint64_t)0 - (uint64_t)((E >= (int64_t)q.lo) & (E <= (int64_t)q.hi));
    int64_t k = (int64_t)q.kn + ((int64_t)q.eminb > E ? (int64_t)q.eminb - E : 0);
    k = k > 51 ? 51 : k; /* only out-of-range values reach past 51; keeps the shift defined */
    const uint64_t mask = ((uint64_t)1 << k) - 1;
    const uint64_t neg = (uint64_t)((int64_t)u >> 63); /* all ones when negative */
    uint64_t inc;
    switch (mode) {
    case DRIFT_RNE: inc = (mask >> 1) + ((a >> k) & 1); break;
    case DRIFT_RNA: inc = (mask >> 1) + 1; break;
    case DRIFT_RU: inc = mask & ~neg; break;
    case DRIFT_RD: inc = mask & neg; break;
    default: inc = 0; break; /* DRIFT_RZ */
    }
    uint64_t r = (a + inc) & ~mask;
    /* overflow: +-max_finite under saturation, RZ, RU below zero and RD above zero, else
     * +-inf (IEEE 754 7.4; drift_round_generic's rule) */
    const uint64_t ovf = (uint64_t)0 - (uint64_t)((int64_t)r > (int64_t)q.maxbits);
    uint64_t to_max;
    switch (mode) {
    case DRIFT_RZ: to_max = ~(uint64_t)0; break;
    case DRIFT_RU: to_max = q.sat | neg; break;
    case DRIFT_RD: to_max = q.sat | ~neg; break;
    default: to_max = q.sat; break;
    }
    const uint64_t ok = in_range;
    r = (ovf & ((to_max & q.maxbits) | (~to_max & q.ovfword))) | (~ovf & r);
    r &= ~((uint64_t)0 - (uint64_t)(q.flush & ((int64_t)r < (int64_t)q.minnorm)));
    *rare = ~ok;
    return (ok & (sign | r)) | (~ok & u);
}

/* One chunk of n <= CHUNK values: the rounded values into outd (doubles) or outf (floats),
 * straight from the registers; a rare value is stored as x's own word (in outd, where the
 * caller reads it back: out may be in) and flagged as bit i % 4 of rm[i / 4]. Returns
 * whether any value is rare. */
static inline void store_word(double *outd, float *outf, size_t i, uint64_t w)
{
    if (outd)
        outd[i] = bitsd(w);
    else
        outf[i] = (float)bitsd(w); /* exact for a rounded value; a rare one is redone */
}

#define CHUNK_LOOP(MODE)                                                \
    for (size_t i = 0; i < n; i++) {                                    \
        uint64_t rare_;                                                 \
        store_word(outd, outf, i, step(dbits(in[i]), q, MODE, &rare_)); \
        rm[i / 4] |= (uint8_t)((rare_ & 1) << (i % 4));                 \
        any |= (int)(rare_ & 1);                                        \
    }

static int chunk_generic(
    double *outd, float *outf, uint8_t *rm, const double *in, size_t n, const params_t *qp, drift_mode_t mode)
{
    const params_t q = *qp;
    int any = 0;
    memset(rm, 0, (n + 3) / 4);
    switch (mode) {
    case DRIFT_RNE: CHUNK_LOOP(DRIFT_RNE) break;
    case DRIFT_RNA: CHUNK_LOOP(DRIFT_RNA) break;
    case DRIFT_RU: CHUNK_LOOP(DRIFT_RU) break;
    case DRIFT_RD: CHUNK_LOOP(DRIFT_RD) break;
    default: CHUNK_LOOP(DRIFT_RZ) break;
    }
    return any;
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define HAVE_AVX2_CLONE 1
#include <immintrin.h>

/* |x| * 2^s rounded to an integer in the mode (one instruction), times 2^-s: both scalings
 * are exact, so this is x rounded to a multiple of f's smallest subnormal. */
__attribute__((target("avx2"), always_inline)) static inline __m256d round_tiny(
    __m256d x, const params_t *q, drift_mode_t mode)
{
    __m256d y = _mm256_mul_pd(x, _mm256_set1_pd(q->up));
    switch (mode) {
    case DRIFT_RNE: y = _mm256_round_pd(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); break;
    case DRIFT_RU: y = _mm256_round_pd(y, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); break;
    case DRIFT_RD: y = _mm256_round_pd(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); break;
    default: y = _mm256_round_pd(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); break;
    }
    return _mm256_mul_pd(y, _mm256_set1_pd(q->down));
}

/* step() on four values with AVX2 intrinsics (GCC does not vectorise the scalar form):
 * the same operations lane by lane, so the same words. Used for RNA; the other modes take
 * step4_fast. */
__attribute__((target("avx2"), always_inline)) static inline __m256i step4_rna(
    __m256i u, const params_t *q, __m256i *rare)
{
    const __m256i one = _mm256_set1_epi64x(1), zero = _mm256_setzero_si256();
    const __m256i sign = _mm256_and_si256(u, _mm256_set1_epi64x((long long)SIGN_MASK));
    const __m256i a = _mm256_xor_si256(u, sign);
    const __m256i E = _mm256_srli_epi64(a, 52);
    const __m256i lo1 = _mm256_set1_epi64x((long long)q->lo - 1), hi1 = _mm256_set1_epi64x((long long)q->hi + 1);
    const __m256i ok = _mm256_and_si256(_mm256_cmpgt_epi64(E, lo1), _mm256_cmpgt_epi64(hi1, E));
    const __m256i eminb = _mm256_set1_epi64x((long long)q->eminb);
    __m256i sub = _mm256_sub_epi64(eminb, E);
    sub = _mm256_and_si256(sub, _mm256_cmpgt_epi64(sub, zero)); /* max(0, eminb - E) */
    __m256i k = _mm256_add_epi64(_mm256_set1_epi64x((long long)q->kn), sub);
    const __m256i k51 = _mm256_set1_epi64x(51);
    k = _mm256_blendv_epi8(k, k51, _mm256_cmpgt_epi64(k, k51));
    const __m256i mask = _mm256_sub_epi64(_mm256_sllv_epi64(one, k), one);
    const __m256i inc = _mm256_add_epi64(_mm256_srli_epi64(mask, 1), one);
    __m256i r = _mm256_andnot_si256(mask, _mm256_add_epi64(a, inc));
    const __m256i maxb = _mm256_set1_epi64x((long long)q->maxbits), sat = _mm256_set1_epi64x((long long)q->sat);
    const __m256i ovf = _mm256_cmpgt_epi64(r, maxb);
    const __m256i ovw = _mm256_blendv_epi8(_mm256_set1_epi64x((long long)q->ovfword), maxb, sat);
    r = _mm256_blendv_epi8(r, ovw, ovf);
    if (q->flush) r = _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)q->minnorm), r), r);
    *rare = _mm256_xor_si256(ok, _mm256_set1_epi64x(-1));
    return _mm256_blendv_epi8(u, _mm256_or_si256(sign, r), ok);
}

/* RNE, RZ, RU, RD on four values. f's normal range takes the word path with the fixed
 * k = 53 - P (no per-value shift); everything below 2^emin (f's subnormal range, zeros,
 * double subnormals) is rounded to a multiple of f's smallest subnormal by round_tiny, the
 * value scaled so that the quantum is 1 and rounded to an integer by one instruction in
 * the mode (exact for |x| * 2^s < 2^(p-1)). Only infinities and NaNs are rare. The words
 * are drift_round's: the same rounding of the same exact values, the same overflow rule. */
__attribute__((target("avx2"), always_inline)) static inline __m256i step4_fast(
    __m256i u, const params_t *q, drift_mode_t mode, __m256i *rare)
{
    const __m256i smask = _mm256_set1_epi64x((long long)SIGN_MASK);
    const __m256i sign = _mm256_and_si256(u, smask);
    const __m256i a = _mm256_xor_si256(u, sign);
    const __m256i mask = _mm256_set1_epi64x((long long)(((uint64_t)1 << q->kn) - 1));
    __m256i inc;
    switch (mode) {
    case DRIFT_RNE:
        inc = _mm256_add_epi64(_mm256_srli_epi64(mask, 1),
            _mm256_and_si256(_mm256_srl_epi64(a, _mm_cvtsi64_si128((long long)q->kn)), _mm256_set1_epi64x(1)));
        break;
    case DRIFT_RU: inc = _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), u), mask); break;
    case DRIFT_RD: inc = _mm256_and_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), u), mask); break;
    default: inc = _mm256_setzero_si256(); break;
    }
    __m256i r = _mm256_andnot_si256(mask, _mm256_add_epi64(a, inc));
    const __m256i minnorm = _mm256_set1_epi64x((long long)q->minnorm);
    const __m256i t = _mm256_andnot_si256(smask, _mm256_castpd_si256(round_tiny(_mm256_castsi256_pd(u), q, mode)));
    r = _mm256_blendv_epi8(r, t, _mm256_cmpgt_epi64(minnorm, a));
    const __m256i maxb = _mm256_set1_epi64x((long long)q->maxbits);
    const __m256i ovf = _mm256_cmpgt_epi64(r, maxb);
    __m256i ovw;
    switch (mode) {
    case DRIFT_RZ: ovw = maxb; break;
    case DRIFT_RU:
    case DRIFT_RD: {
        const __m256i neg = _mm256_cmpgt_epi64(_mm256_setzero_si256(), u);
        __m256i to_max = _mm256_set1_epi64x((long long)q->sat);
        to_max = _mm256_or_si256(to_max, mode == DRIFT_RU ? neg : _mm256_xor_si256(neg, _mm256_set1_epi64x(-1)));
        ovw = _mm256_blendv_epi8(_mm256_set1_epi64x((long long)q->ovfword), maxb, to_max);
        break;
    }
    default: ovw = _mm256_set1_epi64x((long long)(q->sat ? q->maxbits : q->ovfword)); break;
    }
    r = _mm256_blendv_epi8(r, ovw, ovf);
    if (q->flush) r = _mm256_andnot_si256(_mm256_cmpgt_epi64(minnorm, r), r);
    const __m256i ok = _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)INF_BITS), a); /* finite */
    *rare = _mm256_xor_si256(ok, _mm256_set1_epi64x(-1));
    return _mm256_blendv_epi8(u, _mm256_or_si256(sign, r), ok);
}

__attribute__((target("avx2"), always_inline)) static inline __m256i step4(
    __m256i u, const params_t *q, drift_mode_t mode, __m256i *rare)
{
    return mode == DRIFT_RNA ? step4_rna(u, q, rare) : step4_fast(u, q, mode, rare);
}

#define CHUNK_LOOP4(MODE)                                                                    \
    for (; i + 4 <= n; i += 4) {                                                             \
        __m256i rr, v = step4(_mm256_loadu_si256((const __m256i *)(in + i)), qp, MODE, &rr); \
        if (to_float)                                                                        \
            _mm_storeu_ps(outf + i, _mm256_cvtpd_ps(_mm256_castsi256_pd(v)));                \
        else                                                                                 \
            _mm256_storeu_si256((__m256i *)(outd + i), v);                                   \
        int b_ = _mm256_movemask_pd(_mm256_castsi256_pd(rr));                                \
        rm[i / 4] = (uint8_t)b_;                                                             \
        any |= b_;                                                                           \
    }

__attribute__((target("avx2"), always_inline)) static inline int chunk_avx2(double *outd, float *outf, uint8_t *rm,
    const double *in, size_t n, const params_t *qp, drift_mode_t mode, const int to_float)
{
    int any = 0;
    size_t i = 0;
    switch (mode) {
    case DRIFT_RNE: CHUNK_LOOP4(DRIFT_RNE) break;
    case DRIFT_RNA: CHUNK_LOOP4(DRIFT_RNA) break;
    case DRIFT_RU: CHUNK_LOOP4(DRIFT_RU) break;
    case DRIFT_RD: CHUNK_LOOP4(DRIFT_RD) break;
    default: CHUNK_LOOP4(DRIFT_RZ) break;
    }
    if (i < n) /* the tail: i is a multiple of 4 */
        any |=
            chunk_generic(to_float ? NULL : outd + i, to_float ? outf + i : NULL, rm + i / 4, in + i, n - i, qp, mode);
    return any != 0;
}

__attribute__((target("avx2"))) static int chunk_avx2_d(
    double *outd, float *outf, uint8_t *rm, const double *in, size_t n, const params_t *qp, drift_mode_t mode)
{
    return chunk_avx2(outd, outf, rm, in, n, qp, mode, 0);
}

__attribute__((target("avx2"))) static int chunk_avx2_f(
    double *outd, float *outf, uint8_t *rm, const double *in, size_t n, const params_t *qp, drift_mode_t mode)
{
    return chunk_avx2(outd, outf, rm, in, n, qp, mode, 1);
}

/* The AVX-512 kernel: step4_fast on eight values, lane by lane the same operations (the
 * selects as mask moves), so the same words; about twice the AVX2 loop's throughput, which
 * matters where the rounding sits in front of a fast kernel (a 1024^3 GEMM's inputs took
 * 2.4 ms in the AVX2 loop against 17 ms for the multiply-adds). RNA stays with AVX2. */
__attribute__((target("avx512f"), always_inline)) static inline __m512i step8_fast(
    __m512i u, const params_t *q, drift_mode_t mode, __mmask8 *rare)
{
    const __m512i smask = _mm512_set1_epi64((long long)SIGN_MASK), zero = _mm512_setzero_si512();
    const __m512i sign = _mm512_and_si512(u, smask);
    const __m512i a = _mm512_xor_si512(u, sign);
    const __m512i mask = _mm512_set1_epi64((long long)(((uint64_t)1 << q->kn) - 1));
    const __mmask8 neg = _mm512_cmplt_epi64_mask(u, zero);
    __m512i inc;
    switch (mode) {
    case DRIFT_RNE:
        inc = _mm512_add_epi64(_mm512_srli_epi64(mask, 1),
            _mm512_and_si512(_mm512_srl_epi64(a, _mm_cvtsi64_si128((long long)q->kn)), _mm512_set1_epi64(1)));
        break;
    case DRIFT_RU: inc = _mm512_maskz_mov_epi64((__mmask8)~neg, mask); break;
    case DRIFT_RD: inc = _mm512_maskz_mov_epi64(neg, mask); break;
    default: inc = zero; break;
    }
    __m512i r = _mm512_andnot_si512(mask, _mm512_add_epi64(a, inc));
    const __m512i minnorm = _mm512_set1_epi64((long long)q->minnorm);
    __m512d y = _mm512_mul_pd(_mm512_castsi512_pd(u), _mm512_set1_pd(q->up));
    switch (mode) {
    case DRIFT_RNE: y = _mm512_roundscale_pd(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); break;
    case DRIFT_RU: y = _mm512_roundscale_pd(y, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); break;
    case DRIFT_RD: y = _mm512_roundscale_pd(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); break;
    default: y = _mm512_roundscale_pd(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); break;
    }
    const __m512i t = _mm512_andnot_si512(smask, _mm512_castpd_si512(_mm512_mul_pd(y, _mm512_set1_pd(q->down))));
    r = _mm512_mask_mov_epi64(r, _mm512_cmplt_epi64_mask(a, minnorm), t);
    const __m512i maxb = _mm512_set1_epi64((long long)q->maxbits);
    const __mmask8 ovf = _mm512_cmpgt_epi64_mask(r, maxb);
    __m512i ovw;
    switch (mode) {
    case DRIFT_RZ: ovw = maxb; break;
    case DRIFT_RU:
    case DRIFT_RD: {
        const __mmask8 to_max = q->sat ? (__mmask8)0xff : mode == DRIFT_RU ? neg : (__mmask8)~neg;
        ovw = _mm512_mask_mov_epi64(_mm512_set1_epi64((long long)q->ovfword), to_max, maxb);
        break;
    }
    default: ovw = _mm512_set1_epi64((long long)(q->sat ? q->maxbits : q->ovfword)); break;
    }
    r = _mm512_mask_mov_epi64(r, ovf, ovw);
    if (q->flush) r = _mm512_maskz_mov_epi64((__mmask8)~_mm512_cmplt_epi64_mask(r, minnorm), r);
    const __mmask8 ok = _mm512_cmplt_epi64_mask(a, _mm512_set1_epi64((long long)INF_BITS)); /* finite */
    *rare = (__mmask8)~ok;
    return _mm512_mask_mov_epi64(u, ok, _mm512_or_si512(sign, r));
}

/* Each step asks for the line ROUND_PREFETCH values (4 KiB) ahead: a long array comes
 * from memory, and the hardware prefetcher, which stops at every 4 KiB page, left the
 * 2M-value input rounding of a 1024^3 GEMM waiting on it (5.5 ms against 4.0 with this, on
 * the lab's machine). A prefetch past the array's end is harmless: it never faults. */
#define ROUND_PREFETCH 512
#define CHUNK_LOOP8(MODE)                                                                  \
    for (; i + 8 <= n; i += 8) {                                                           \
        __mmask8 rr;                                                                       \
        _mm_prefetch((const char *)(in + i + ROUND_PREFETCH), _MM_HINT_T0);                \
        __m512i v = step8_fast(_mm512_loadu_si512((const void *)(in + i)), qp, MODE, &rr); \
        if (to_float)                                                                      \
            _mm256_storeu_ps(outf + i, _mm512_cvtpd_ps(_mm512_castsi512_pd(v)));           \
        else                                                                               \
            _mm512_storeu_si512((void *)(outd + i), v);                                    \
        rm[i / 4] = (uint8_t)(rr & 0xf), rm[i / 4 + 1] = (uint8_t)(rr >> 4);               \
        any |= rr;                                                                         \
    }

__attribute__((target("avx512f"), always_inline)) static inline int chunk_avx512(double *outd, float *outf, uint8_t *rm,
    const double *in, size_t n, const params_t *qp, drift_mode_t mode, const int to_float)
{
    int any = 0;
    size_t i = 0;
    switch (mode) {
    case DRIFT_RNE: CHUNK_LOOP8(DRIFT_RNE) break;
    case DRIFT_RU: CHUNK_LOOP8(DRIFT_RU) break;
    case DRIFT_RD: CHUNK_LOOP8(DRIFT_RD) break;
    default: CHUNK_LOOP8(DRIFT_RZ) break;
    }
    if (i < n) /* the tail: i is a multiple of 8 */
        any |=
            chunk_generic(to_float ? NULL : outd + i, to_float ? outf + i : NULL, rm + i / 4, in + i, n - i, qp, mode);
    return any != 0;
}

__attribute__((target("avx512f"))) static int chunk_avx512_d(
    double *outd, const double *in, uint8_t *rm, size_t n, const params_t *qp, drift_mode_t mode)
{
    return chunk_avx512(outd, NULL, rm, in, n, qp, mode, 0);
}

__attribute__((target("avx512f"))) static int chunk_avx512_f(
    float *outf, const double *in, uint8_t *rm, size_t n, const params_t *qp, drift_mode_t mode)
{
    return chunk_avx512(NULL, outf, rm, in, n, qp, mode, 1);
}
#endif

/* The SIMD level of the chunk kernels: 0 portable, 1 AVX2, 2 AVX-512F as well.
 * DRIFT_NO_AVX512=1 in the environment stops at AVX2 (as for the GEMM engines), so that
 * the tests can compare both vector kernels with drift_round on one machine. */
static int simd_level(void)
{
    static int level = -1; /* a benign race: every thread computes the same value */
    if (level < 0) {
        int l = 0;
#ifdef HAVE_AVX2_CLONE
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) {
            l = 1;
            const char *env = getenv("DRIFT_NO_AVX512");
            if (__builtin_cpu_supports("avx512f") && !(env && *env && strcmp(env, "0") != 0)) l = 2;
        }
#endif
        level = l;
    }
    return level;
}

static int chunk(
    double *outd, float *outf, uint8_t *rm, const double *in, size_t n, const params_t *q, drift_mode_t mode)
{
#ifdef HAVE_AVX2_CLONE
    const int level = simd_level();
    if (level == 2 && mode != DRIFT_RNA)
        return outd ? chunk_avx512_d(outd, in, rm, n, q, mode) : chunk_avx512_f(outf, in, rm, n, q, mode);
    if (level >= 1)
        return outd ? chunk_avx2_d(outd, NULL, rm, in, n, q, mode) : chunk_avx2_f(NULL, outf, rm, in, n, q, mode);
#endif
    return chunk_generic(outd, outf, rm, in, n, q, mode);
}

/* The whole array in chunks; the rare values of a chunk are redone by drift_round, from
 * x's word left in outd (in may be outd) or from in. */
static void round_chunks(
    double *outd, float *outf, const double *in, size_t n, const params_t *q, const drift_round_array_opts_t *o)
{
    drift_round_opts_t so = {o->mode, o->flush_subnormals, o->saturate};
    uint8_t rm[CHUNK / 4];
    for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
        size_t m = n - c0 < CHUNK ? n - c0 : CHUNK;
        if (!chunk(outd ? outd + c0 : NULL, outf ? outf + c0 : NULL, rm, in + c0, m, q, o->mode)) continue;
        for (size_t g = 0; g < (m + 3) / 4; g++)
            for (unsigned l = 0; rm[g] >> l; l++)
                if (rm[g] >> l & 1) {
                    size_t i = c0 + 4 * g + l;
                    double r = drift_round(outd ? outd[i] : in[i], o->format, &so, 0);
                    store_word(outd, outf, i, dbits(r));
                }
    }
}

int drift_round_array_validate(const drift_round_array_opts_t *o, const char **why)
{
    const char *msg = NULL;
    if (!o)
        msg = "options: NULL (pass a drift_round_array_opts_t)";
    else if ((unsigned)o->format >= DRIFT_NFORMATS)
        msg = "format: unknown (accepted: fp64 fp32 tf32 fp16 bf16 fp8e4m3 fp8e5m2)";
    else if ((unsigned)o->mode >= DRIFT_NMODES)
        msg = "mode: unknown (accepted: rne rz rna ru rd sr)";
    else if (o->mode == DRIFT_SR && !o->sr_bits)
        msg = "sr_bits: NULL with mode sr (give one uniform 32-bit word per element)";
    else if (o->flush_subnormals != 0 && o->flush_subnormals != 1)
        msg = "flush_subnormals: must be 0 or 1";
    else if (o->saturate != 0 && o->saturate != 1)
        msg = "saturate: must be 0 or 1";
    if (why) *why = msg;
    return msg ? DRIFT_EINVAL : DRIFT_OK;
}

static void params_of(params_t *q, const drift_round_array_opts_t *o)
{
    const drift_format_info_t *fi = drift_format_info(o->format);
    q->kn = (uint64_t)(53 - fi->p);
    q->eminb = (uint64_t)(fi->emin + 1023);
    q->lo = (uint64_t)(fi->emin + 1023 - fi->p + 2);
    q->hi = 0x7fe; /* every finite exponent: beyond emax is overflow, handled below */
    q->maxbits = dbits(fi->max_finite);
    q->sat = o->saturate ? ~(uint64_t)0 : 0;
    q->minnorm = q->eminb << 52;
    q->flush = (uint64_t)o->flush_subnormals;
    q->ovfword = fi->has_inf ? INF_BITS : dbits(NAN);
    q->up = ldexp(1.0, fi->p - 1 - fi->emin);
    q->down = ldexp(1.0, fi->emin - fi->p + 1);
}

/* The whole array through the scalar path: fp64 (nothing to gain) and DRIFT_SR. */
#define SCALAR_LOOP(T)                                                                                                 \
    do {                                                                                                               \
        drift_round_opts_t so = {o->mode, o->flush_subnormals, o->saturate};                                           \
        for (size_t i = 0; i < n; i++) out[i] = (T)drift_round(in[i], o->format, &so, o->sr_bits ? o->sr_bits[i] : 0); \
    } while (0)

int drift_round_array(double *out, const double *in, size_t n, const drift_round_array_opts_t *o)
{
    if (drift_round_array_validate(o, NULL) != DRIFT_OK || (n && (!out || !in))) return DRIFT_EINVAL;
    if (o->format == DRIFT_FP64 && !o->flush_subnormals && !o->saturate && o->mode != DRIFT_SR) {
        /* every double is an fp64 value: drift_round gives it back (NaN and inf included) */
        if (out != in) memmove(out, in, n * sizeof *out);
        return DRIFT_OK;
    }
    if (o->format == DRIFT_FP64 || o->mode == DRIFT_SR) {
        SCALAR_LOOP(double);
        return DRIFT_OK;
    }
    params_t q;
    params_of(&q, o);
    round_chunks(out, NULL, in, n, &q, o);
    return DRIFT_OK;
}

int drift_round_array_float(float *out, const double *in, size_t n, const drift_round_array_opts_t *o)
{
    if (drift_round_array_validate(o, NULL) != DRIFT_OK || (n && (!out || !in)) || o->format == DRIFT_FP64)
        return DRIFT_EINVAL;
    if (o->mode == DRIFT_SR) {
        SCALAR_LOOP(float);
        return DRIFT_OK;
    }
    if (o->format == DRIFT_FP32 && !o->flush_subnormals && !o->saturate && o->mode == DRIFT_RNE) {
        /* the IEEE conversion is exactly that: RNE with subnormals and overflow to inf */
        for (size_t i = 0; i < n; i++) out[i] = (float)in[i];
        return DRIFT_OK;
    }
    params_t q;
    params_of(&q, o);
    round_chunks(NULL, out, in, n, &q, o);
    return DRIFT_OK;
}
