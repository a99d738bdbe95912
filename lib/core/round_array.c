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
 * below that (zeros, the two lowest binades of f's subnormal range, tinier values), inf,
 * NaN, and results that overflow to NaN (e4m3 without saturation) are "rare" and take
 * drift_round. Other overflows (a rounded word above max_finite's) become +-max_finite or
 * +-inf by the IEEE rule, one more select; so does flushing a subnormal result to zero. DRIFT_SR and fp64 go to
 * drift_round for every element (SR needs its per-element random word anyway). */
#include "format.h"
#include "drift.h"

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
    uint64_t has_inf; /* all ones when f has infinities (e4m3's NaN stays with drift_round) */
    uint64_t minnorm; /* word of 2^emin: below it a result is subnormal */
    uint64_t flush;   /* 1 to flush subnormal results */
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
static inline __attribute__((always_inline)) uint64_t step(uint64_t u, const params_t q, drift_mode_t mode,
                                                           uint64_t *rare)
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
    const uint64_t ok = in_range & (~ovf | to_max | q.has_inf);
    r = (ovf & ((to_max & q.maxbits) | (~to_max & INF_BITS))) | (~ovf & r);
    r &= ~((uint64_t)0 - (uint64_t)(q.flush & ((int64_t)r < (int64_t)q.minnorm)));
    *rare = ~ok;
    return (ok & (sign | r)) | (~ok & u);
}

/* One chunk: words into w[], rare masks into rare[]; returns whether any value is rare. */
#define CHUNK_LOOP(MODE)                                                                \
    for (size_t i = 0; i < n; i++) {                                                    \
        union { double d; uint64_t u; } c = {in[i]}; /* not memcpy: GCC vectorises this */ \
        w[i] = step(c.u, q, MODE, &rare[i]);                                            \
    }
#define CHUNK_BODY                                                                     \
    const params_t q = *qp;                                                            \
    switch (mode) {                                                                    \
    case DRIFT_RNE: CHUNK_LOOP(DRIFT_RNE) break;                                       \
    case DRIFT_RNA: CHUNK_LOOP(DRIFT_RNA) break;                                       \
    case DRIFT_RU: CHUNK_LOOP(DRIFT_RU) break;                                         \
    case DRIFT_RD: CHUNK_LOOP(DRIFT_RD) break;                                         \
    default: CHUNK_LOOP(DRIFT_RZ) break;                                               \
    }                                                                                  \
    uint64_t any = 0;                                                                  \
    for (size_t i = 0; i < n; i++) any |= rare[i];                                     \
    return any != 0;

static int chunk_generic(uint64_t *restrict w, uint64_t *restrict rare, const double *restrict in, size_t n,
                         const params_t *qp, drift_mode_t mode)
{
    CHUNK_BODY
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define HAVE_AVX2_CLONE 1
#include <immintrin.h>

/* step() on four values with AVX2 intrinsics (GCC does not vectorise the scalar form):
 * the same operations lane by lane, so the same words. */
__attribute__((target("avx2"), always_inline)) static inline __m256i step4(__m256i u, const params_t *q,
                                                                            drift_mode_t mode, __m256i *rare)
{
    const __m256i one = _mm256_set1_epi64x(1), zero = _mm256_setzero_si256();
    const __m256i sign = _mm256_and_si256(u, _mm256_set1_epi64x((long long)SIGN_MASK));
    const __m256i a = _mm256_xor_si256(u, sign);
    const __m256i E = _mm256_srli_epi64(a, 52);
    const __m256i lo1 = _mm256_set1_epi64x((long long)q->lo - 1), hi1 = _mm256_set1_epi64x((long long)q->hi + 1);
    const __m256i in_range = _mm256_and_si256(_mm256_cmpgt_epi64(E, lo1), _mm256_cmpgt_epi64(hi1, E));
    const __m256i eminb = _mm256_set1_epi64x((long long)q->eminb);
    __m256i sub = _mm256_sub_epi64(eminb, E);
    sub = _mm256_and_si256(sub, _mm256_cmpgt_epi64(sub, zero)); /* max(0, eminb - E) */
    __m256i k = _mm256_add_epi64(_mm256_set1_epi64x((long long)q->kn), sub);
    const __m256i k51 = _mm256_set1_epi64x(51);
    k = _mm256_blendv_epi8(k, k51, _mm256_cmpgt_epi64(k, k51));
    const __m256i mask = _mm256_sub_epi64(_mm256_sllv_epi64(one, k), one);
    const __m256i neg = _mm256_cmpgt_epi64(zero, u); /* all ones when negative */
    __m256i inc;
    switch (mode) {
    case DRIFT_RNE:
        inc = _mm256_add_epi64(_mm256_srli_epi64(mask, 1), _mm256_and_si256(_mm256_srlv_epi64(a, k), one));
        break;
    case DRIFT_RNA: inc = _mm256_add_epi64(_mm256_srli_epi64(mask, 1), one); break;
    case DRIFT_RU: inc = _mm256_andnot_si256(neg, mask); break;
    case DRIFT_RD: inc = _mm256_and_si256(neg, mask); break;
    default: inc = zero; break;
    }
    __m256i r = _mm256_andnot_si256(mask, _mm256_add_epi64(a, inc));
    const __m256i maxb = _mm256_set1_epi64x((long long)q->maxbits), sat = _mm256_set1_epi64x((long long)q->sat);
    const __m256i ovf = _mm256_cmpgt_epi64(r, maxb);
    __m256i to_max;
    switch (mode) {
    case DRIFT_RZ: to_max = _mm256_set1_epi64x(-1); break;
    case DRIFT_RU: to_max = _mm256_or_si256(sat, neg); break;
    case DRIFT_RD: to_max = _mm256_or_si256(sat, _mm256_xor_si256(neg, _mm256_set1_epi64x(-1))); break;
    default: to_max = sat; break;
    }
    const __m256i fast_ovf = _mm256_or_si256(to_max, _mm256_set1_epi64x((long long)q->has_inf));
    const __m256i ok = _mm256_and_si256(in_range, _mm256_or_si256(_mm256_xor_si256(ovf, _mm256_set1_epi64x(-1)), fast_ovf));
    const __m256i ovw = _mm256_blendv_epi8(_mm256_set1_epi64x((long long)INF_BITS), maxb, to_max);
    r = _mm256_blendv_epi8(r, ovw, ovf);
    if (q->flush) r = _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)q->minnorm), r), r);
    *rare = _mm256_xor_si256(ok, _mm256_set1_epi64x(-1));
    return _mm256_blendv_epi8(u, _mm256_or_si256(sign, r), ok);
}

#define CHUNK_LOOP4(MODE)                                                               \
    for (; i + 4 <= n; i += 4) {                                                        \
        __m256i rr, v = step4(_mm256_loadu_si256((const __m256i *)(in + i)), qp, MODE, &rr); \
        _mm256_storeu_si256((__m256i *)(w + i), v);                                     \
        _mm256_storeu_si256((__m256i *)(rare + i), rr);                                 \
        any = _mm256_or_si256(any, rr);                                                 \
    }

__attribute__((target("avx2"))) static int chunk_avx2(uint64_t *restrict w, uint64_t *restrict rare,
                                                      const double *restrict in, size_t n, const params_t *qp,
                                                      drift_mode_t mode)
{
    __m256i any = _mm256_setzero_si256();
    size_t i = 0;
    switch (mode) {
    case DRIFT_RNE: CHUNK_LOOP4(DRIFT_RNE) break;
    case DRIFT_RNA: CHUNK_LOOP4(DRIFT_RNA) break;
    case DRIFT_RU: CHUNK_LOOP4(DRIFT_RU) break;
    case DRIFT_RD: CHUNK_LOOP4(DRIFT_RD) break;
    default: CHUNK_LOOP4(DRIFT_RZ) break;
    }
    int r = !_mm256_testz_si256(any, any);
    if (i < n) r |= chunk_generic(w + i, rare + i, in + i, n - i, qp, mode); /* the tail */
    return r;
}
#endif

static int chunk(uint64_t *w, uint64_t *rare, const double *in, size_t n, const params_t *q, drift_mode_t mode)
{
#ifdef HAVE_AVX2_CLONE
    static int avx2 = -1; /* a benign race: every thread computes the same value */
    if (avx2 < 0) avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (avx2) return chunk_avx2(w, rare, in, n, q, mode);
#endif
    return chunk_generic(w, rare, in, n, q, mode);
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
    q->has_inf = fi->has_inf ? ~(uint64_t)0 : 0;
    q->minnorm = q->eminb << 52;
    q->flush = (uint64_t)o->flush_subnormals;
}

/* The whole array through the scalar path: fp64 (nothing to gain) and DRIFT_SR. */
#define SCALAR_LOOP(T)                                                                  \
    do {                                                                                \
        drift_round_opts_t so = {o->mode, o->flush_subnormals, o->saturate};            \
        for (size_t i = 0; i < n; i++)                                                  \
            out[i] = (T)drift_round(in[i], o->format, &so, o->sr_bits ? o->sr_bits[i] : 0); \
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
    drift_round_opts_t so = {o->mode, o->flush_subnormals, o->saturate};
    uint64_t w[CHUNK];
    uint64_t rare[CHUNK];
    for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
        size_t m = n - c0 < CHUNK ? n - c0 : CHUNK;
        int any = chunk(w, rare, in + c0, m, &q, o->mode);
        /* in may be out: every in[i] of the chunk has been read into w[] by now */
        memcpy(out + c0, w, m * sizeof *w);
        if (any)
            for (size_t i = 0; i < m; i++)
                if (rare[i]) out[c0 + i] = drift_round(bitsd(w[i]), o->format, &so, 0); /* w[i] is x's word */
    }
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
    drift_round_opts_t so = {o->mode, o->flush_subnormals, o->saturate};
    uint64_t w[CHUNK];
    uint64_t rare[CHUNK];
    for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
        size_t m = n - c0 < CHUNK ? n - c0 : CHUNK;
        int any = chunk(w, rare, in + c0, m, &q, o->mode);
        for (size_t i = 0; i < m; i++) out[c0 + i] = (float)bitsd(w[i]); /* exact: every result is a float */
        if (any)
            for (size_t i = 0; i < m; i++)
                if (rare[i]) out[c0 + i] = (float)drift_round(bitsd(w[i]), o->format, &so, 0);
    }
    return DRIFT_OK;
}
