/* gemm.c — the GEMM emulation kernels of gemm.h.
 *
 * Three arithmetic paths, chosen from the options; each is exact-once per step, so each
 * gives the bits of the documented step-by-step emulation:
 *
 *   F32  acc fp32, RNE, inputs of any format but fp64 (every such input is a float).
 *        fma:   acc = fmaf(a, b, acc). IEEE 754 fusedMultiplyAdd rounds the exact a*b + acc
 *               once to binary32, for any float a, b, acc: this is the step by definition,
 *               whatever the input format (fp32 products need 48 bits; fmaf keeps them).
 *        nofma: acc = acc + a*b in float: a*b is rounded once (binary32 multiply), then the
 *               sum is rounded once (binary32 add), which is the step by definition.
 *        The first term: acc = a*b (one binary32 rounding). Partials: float adds.
 *        Valid because FLT_EVAL_METHOD == 0 (checked below) and -ffp-contract=off.
 *        Vectorised across outputs with AVX2/FMA intrinsics when the CPU has them (the
 *        instructions are the IEEE operations above, so the bits do not depend on it).
 *   F64  acc fp64, RNE: acc = fma(a, b, acc) or acc + a*b in double, likewise by definition.
 *   GEN  any other accumulator format or mode (fp16, bf16, tf32 or fp8 accumulators; RZ,
 *        RU, RD, RNA): for inputs other than fp64 the product a*b is exact in double (at most
 *        2 x 24 = 48 bits, magnitude inside double's normal range), and drift_round_sum2
 *        rounds the exact acc + a*b once (TwoSum, round-to-odd at 53 bits, then the final
 *        rounding: Boldo & Melquiond's round-to-odd makes the double rounding innocuous for
 *        targets of at most 51 bits, in every mode). nofma rounds the exact product first.
 *        For fp64 inputs drift_fma / drift_mul are the exact-once operations.
 *
 * Why not "double add, then round to fp32" for narrow inputs? That shortcut is also exact
 * for fp32 RNE accumulation when the product has at most 24 bits (Figueroa: double's 53
 * bits >= 2*24 + 2), but it fails for an fp16 or bf16 accumulator (a 22-bit product can be
 * a tie point of a 11-bit format, and a tiny accumulator then makes double rounding wrong)
 * and for directed modes; the fmaf path above needs no such argument and is faster.
 *
 * Parallelism: OpenMP splits outputs (row panels and column panels), never a sum; each
 * output is computed by one thread in its fixed order, so results do not depend on the
 * thread count. */
#include "gemm.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#include <immintrin.h>
#define DRIFT_X86_DISPATCH 1
#endif

#include "drift.h"
#include "tc_model.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the fp32 path needs float arithmetic evaluated in float (FLT_EVAL_METHOD == 0)"
#endif

/* ---- kernel specs ----------------------------------------------------------------------- */


/* A decimal integer 1..max without sign or leading zero; advances *s. */
static int parse_pos(const char **s, long max, long *out)
{
    const char *p = *s;
    if (*p < '1' || *p > '9') return -1;
    long v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > max) return -1;
        p++;
    }
    *s = p;
    *out = v;
    return 0;
}

int drift_gemm_kernel_parse(drift_gemm_kernel_t *k, const char *spec)
{
    if (!k || !spec) return DRIFT_EINVAL;
    drift_gemm_kernel_t r;
    memset(&r, 0, sizeof r);
    const char *p;
    long v[3];
    if (strcmp(spec, "naive") == 0) {
        r.family = DRIFT_GEMM_NAIVE;
    } else if (strncmp(spec, "tiled:", 6) == 0) {
        p = spec + 6;
        for (int t = 0; t < 3; t++) {
            if (parse_pos(&p, DRIFT_GEMM_TILE_MAX, &v[t])) return DRIFT_EINVAL;
            if (*p != (t < 2 ? ',' : '\0')) return DRIFT_EINVAL;
            p++;
        }
        r.family = DRIFT_GEMM_TILED;
        r.bm = (int)v[0], r.bn = (int)v[1], r.bk = (int)v[2];
    } else if (strncmp(spec, "splitk:", 7) == 0) {
        p = spec + 7;
        if (parse_pos(&p, DRIFT_GEMM_SPLIT_MAX, &v[0])) return DRIFT_EINVAL;
        if (strcmp(p, ":tree") == 0)
            r.tree = 1;
        else if (*p != '\0')
            return DRIFT_EINVAL;
        r.family = DRIFT_GEMM_SPLITK;
        r.splits = (int)v[0];
    } else if (strncmp(spec, "tc:", 3) == 0) {
        int found = 0;
        for (int a = 0; a < DRIFT_TC_NARCH; a++)
            if (strcmp(spec + 3, drift_tc_arch_name((drift_tc_arch_t)a)) == 0) r.arch = (drift_tc_arch_t)a, found = 1;
        if (!found) return DRIFT_EINVAL;
        r.family = DRIFT_GEMM_TC;
    } else {
        return DRIFT_EINVAL;
    }
    *k = r;
    return DRIFT_OK;
}

static int kernel_valid(const drift_gemm_kernel_t *k)
{
    switch (k->family) {
    case DRIFT_GEMM_NAIVE: return 1;
    case DRIFT_GEMM_TILED:
        return k->bm >= 1 && k->bm <= DRIFT_GEMM_TILE_MAX && k->bn >= 1 && k->bn <= DRIFT_GEMM_TILE_MAX &&
               k->bk >= 1 && k->bk <= DRIFT_GEMM_TILE_MAX;
    case DRIFT_GEMM_SPLITK: return k->splits >= 1 && k->splits <= DRIFT_GEMM_SPLIT_MAX && (k->tree == 0 || k->tree == 1);
    case DRIFT_GEMM_TC: return (unsigned)k->arch < DRIFT_TC_NARCH;
    default: return 0;
    }
}

int drift_gemm_kernel_print(char *buf, size_t size, const drift_gemm_kernel_t *k)
{
    if (!buf || !k || !kernel_valid(k)) return DRIFT_EINVAL;
    int n;
    switch (k->family) {
    case DRIFT_GEMM_NAIVE: n = snprintf(buf, size, "naive"); break;
    case DRIFT_GEMM_TILED: n = snprintf(buf, size, "tiled:%d,%d,%d", k->bm, k->bn, k->bk); break;
    case DRIFT_GEMM_SPLITK: n = snprintf(buf, size, "splitk:%d%s", k->splits, k->tree ? ":tree" : ""); break;
    default: n = snprintf(buf, size, "tc:%s", drift_tc_arch_name(k->arch)); break;
    }
    if (n < 0 || (size_t)n >= size) return DRIFT_EINVAL;
    return n;
}

int drift_gemm_kernel_equal(const drift_gemm_kernel_t *a, const drift_gemm_kernel_t *b)
{
    if (a->family != b->family) return 0;
    switch (a->family) {
    case DRIFT_GEMM_TILED: return a->bm == b->bm && a->bn == b->bn && a->bk == b->bk;
    case DRIFT_GEMM_SPLITK: return a->splits == b->splits && a->tree == b->tree;
    case DRIFT_GEMM_TC: return a->arch == b->arch;
    default: return 1;
    }
}

int drift_gemm_kernel_order(drift_order_t *o, const drift_gemm_kernel_t *k)
{
    if (!o || !k || !kernel_valid(k)) return DRIFT_EINVAL;
    memset(o, 0, sizeof *o);
    switch (k->family) {
    case DRIFT_GEMM_SPLITK:
        o->kind = DRIFT_ORDER_SPLITK;
        o->param = k->splits;
        o->tree = k->tree;
        break;
    case DRIFT_GEMM_TC:
        o->kind = DRIFT_ORDER_TC;
        o->arch = k->arch;
        break;
    default: o->kind = DRIFT_ORDER_SEQ; break;
    }
    return DRIFT_OK;
}

drift_gemm_opts_t drift_gemm_opts(drift_format_t in, drift_format_t acc)
{
    drift_gemm_opts_t o;
    o.in = in;
    o.acc.acc = acc;
    o.acc.mode = DRIFT_RNE;
    o.acc.fma = 1;
    o.out = acc;
    o.alpha = 1.0;
    o.beta = 0.0;
    return o;
}

/* Below these sizes a parallel region costs more than it saves (fork, join, and on a busy
 * machine waiting threads that take the core the working thread needs): run on one thread.
 * The results do not depend on it (law 4: every thread count gives the same bits). */
#define DRIFT_PAR_MIN_FMAS ((size_t)1 << 18) /* multiply-adds: 64^3 */
#define DRIFT_PAR_MIN_ELEMS ((size_t)1 << 16) /* elementwise passes */

/* ---- input rounding ----------------------------------------------------------------------- */

/* RNE by integer rounding of the double's bits: the rounded value when x is in f's normal range and
 * does not round past max_finite (*ok = 1), else *ok = 0 (the caller uses drift_rne). The scalar
 * step of the GEN accumulator; arrays go through drift_round_array. */
static inline double rne_fast(double x, int sh, int emin, int emax, double maxf, int *ok)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int e = (int)((u >> 52) & 0x7ff) - 1023;
    uint64_t half = ((uint64_t)1 << (sh - 1)) - 1 + ((u >> sh) & 1);
    u = (u + half) & ~(((uint64_t)1 << sh) - 1);
    double r;
    memcpy(&r, &u, sizeof r);
    *ok = e >= emin && e <= emax && fabs(r) <= maxf;
    return r;
}

/* dst[t] = RNE_f(src[t]) through the library's bulk rounding (bit-identical to drift_rne). */
static void round_span_f_generic(float *dst, const double *src, size_t n, drift_format_t f)
{
    drift_round_array_opts_t o = {f, DRIFT_RNE, 0, 0, NULL};
    (void)drift_round_array_float(dst, src, n, &o); /* cannot fail: f is not fp64 on the float paths */
}
static void round_span_d_generic(double *dst, const double *src, size_t n, drift_format_t f)
{
    drift_round_array_opts_t o = {f, DRIFT_RNE, 0, 0, NULL};
    (void)drift_round_array(dst, src, n, &o);
}
#ifdef DRIFT_X86_DISPATCH /* drift_round_array picks its own AVX2 kernel */
#define round_span_f_avx2 round_span_f_generic
#define round_span_d_avx2 round_span_d_generic
#endif

static int have_avx2_fma(void);

static void round_inputs_f(float *dst, const double *src, size_t n, drift_format_t f)
{
    int simd = have_avx2_fma();
    (void)simd;
#pragma omp parallel for schedule(static) if(n >= DRIFT_PAR_MIN_ELEMS)
    for (size_t t0 = 0; t0 < n; t0 += 4096) {
        size_t m = n - t0 < 4096 ? n - t0 : 4096;
#ifdef DRIFT_X86_DISPATCH
        if (simd) {
            round_span_f_avx2(dst + t0, src + t0, m, f);
            continue;
        }
#endif
        round_span_f_generic(dst + t0, src + t0, m, f);
    }
}

static void round_inputs_d(double *dst, const double *src, size_t n, drift_format_t f)
{
    int simd = have_avx2_fma();
    (void)simd;
#pragma omp parallel for schedule(static) if(n >= DRIFT_PAR_MIN_ELEMS)
    for (size_t t0 = 0; t0 < n; t0 += 4096) {
        size_t m = n - t0 < 4096 ? n - t0 : 4096;
#ifdef DRIFT_X86_DISPATCH
        if (simd) {
            round_span_d_avx2(dst + t0, src + t0, m, f);
            continue;
        }
#endif
        round_span_d_generic(dst + t0, src + t0, m, f);
    }
}

/* ---- the context ---------------------------------------------------------------------- */

enum { PATH_F32, PATH_F64, PATH_GEN };

typedef struct {
    size_t M, N, K;
    int path, fma, exact_prod, tiled;
    drift_format_t accf;
    drift_mode_t mode;
    int fast_rne;           /* PATH_GEN, RNE, exact products: round-to-odd + bit rounding */
    int sh, emin, emax;     /* the accumulator's rounding shift and normal exponents */
    double maxf;
    const float *Af, *Bf;   /* PATH_F32: rounded inputs */
    const double *Ad, *Bd;  /* PATH_F64, PATH_GEN */
    /* PATH_F32 tiled: packed panels */
    int mr, nr;
    size_t mp, np;          /* number of row / column panels */
    float *Ap, *Bp;
} gctx_t;

/* ---- PATH_F32, row-major engine (naive) --------------------------------------------------- */

static void row_f32_generic(float *restrict s, const float *restrict Ai, const float *restrict Bf, size_t N,
                            size_t k0, size_t k1, int fma_on)
{
    if (k0 == k1) {
        for (size_t j = 0; j < N; j++) s[j] = 0.0f;
        return;
    }
    float a = Ai[k0];
    const float *b = Bf + k0 * N;
    for (size_t j = 0; j < N; j++) s[j] = a * b[j];
    for (size_t k = k0 + 1; k < k1; k++) {
        a = Ai[k];
        b = Bf + k * N;
        if (fma_on)
            for (size_t j = 0; j < N; j++) s[j] = fmaf(a, b[j], s[j]);
        else
            for (size_t j = 0; j < N; j++) s[j] = s[j] + a * b[j];
    }
}

#ifdef DRIFT_X86_DISPATCH
__attribute__((target("avx2,fma"))) static void row_f32_avx2(float *restrict s, const float *restrict Ai,
                                                              const float *restrict Bf, size_t N, size_t k0,
                                                              size_t k1, int fma_on)
{
    if (k0 == k1) {
        for (size_t j = 0; j < N; j++) s[j] = 0.0f;
        return;
    }
    /* Strips of 64 outputs stay in registers over the whole k range. */
    size_t j0 = 0;
    for (; j0 + 64 <= N; j0 += 64) {
        __m256 acc[8];
        __m256 a = _mm256_set1_ps(Ai[k0]);
        const float *b = Bf + k0 * N + j0;
        for (int v = 0; v < 8; v++) acc[v] = _mm256_mul_ps(a, _mm256_loadu_ps(b + 8 * v));
        for (size_t k = k0 + 1; k < k1; k++) {
            a = _mm256_set1_ps(Ai[k]);
            b = Bf + k * N + j0;
            if (fma_on)
                for (int v = 0; v < 8; v++) acc[v] = _mm256_fmadd_ps(a, _mm256_loadu_ps(b + 8 * v), acc[v]);
            else
                for (int v = 0; v < 8; v++) acc[v] = _mm256_add_ps(acc[v], _mm256_mul_ps(a, _mm256_loadu_ps(b + 8 * v)));
        }
        for (int v = 0; v < 8; v++) _mm256_storeu_ps(s + j0 + 8 * v, acc[v]);
    }
    if (j0 < N) {
        float a = Ai[k0];
        const float *b = Bf + k0 * N;
        for (size_t j = j0; j < N; j++) s[j] = a * b[j];
        for (size_t k = k0 + 1; k < k1; k++) {
            a = Ai[k];
            b = Bf + k * N;
            if (fma_on)
                for (size_t j = j0; j < N; j++) s[j] = fmaf(a, b[j], s[j]);
            else
                for (size_t j = j0; j < N; j++) s[j] = s[j] + a * b[j];
        }
    }
}
#endif

static int have_avx2_fma(void)
{
#ifdef DRIFT_X86_DISPATCH
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        const char *env = getenv("DRIFT_NO_SIMD"); /* lets the tests compare both code paths */
        if (env && *env && strcmp(env, "0") != 0) cached = 0;
    }
    return cached;
#else
    return 0;
#endif
}

static void rm_chain_f32(const gctx_t *g, float *out, size_t k0, size_t k1)
{
    int simd = have_avx2_fma();
#pragma omp parallel for schedule(static) if(g->M * g->N * (k1 - k0) >= DRIFT_PAR_MIN_FMAS)
    for (size_t i = 0; i < g->M; i++) {
#ifdef DRIFT_X86_DISPATCH
        if (simd) {
            row_f32_avx2(out + i * g->N, g->Af + i * g->K, g->Bf, g->N, k0, k1, g->fma);
            continue;
        }
#endif
        (void)simd;
        row_f32_generic(out + i * g->N, g->Af + i * g->K, g->Bf, g->N, k0, k1, g->fma);
    }
}

/* ---- PATH_F32, tiled engine: packed panels and a register-blocked micro-kernel ------------ */

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

/* Pack A into row panels (K x mr each) and B into column panels (K x nr), zero padded,
 * rounding to the input format on the way (round_span on each contiguous piece: one pass
 * over the inputs, no row-major copy). */
static void round_span_f(float *dst, const double *src, size_t n, drift_format_t f, int simd)
{
#ifdef DRIFT_X86_DISPATCH
    if (simd) {
        round_span_f_avx2(dst, src, n, f);
        return;
    }
#endif
    (void)simd;
    round_span_f_generic(dst, src, n, f);
}

static int pack_f32(gctx_t *g, const double *A, const double *B, drift_format_t in)
{
    int simd = have_avx2_fma();
    g->mr = 4, g->nr = 8;
#ifdef DRIFT_X86_DISPATCH
    if (simd) g->mr = UK_MR, g->nr = UK_NR;
#endif
    size_t M = g->M, N = g->N, K = g->K, mr = (size_t)g->mr, nr = (size_t)g->nr;
    g->mp = (M + mr - 1) / mr;
    g->np = (N + nr - 1) / nr;
    g->Ap = malloc((g->mp * mr * K + 1) * sizeof(float));
    g->Bp = malloc((g->np * nr * K + 1) * sizeof(float));
    if (!g->Ap || !g->Bp) return DRIFT_ENOMEM;
    int fail = 0;
#pragma omp parallel reduction(| : fail) if(g->M * g->N * g->K >= DRIFT_PAR_MIN_FMAS)
    {
        float *row = malloc((K + 1) * sizeof *row);
        if (!row) fail = 1;
#pragma omp for schedule(static)
        for (size_t ip = 0; ip < g->mp; ip++)
            for (size_t r = 0; r < mr && !fail; r++) {
                size_t i = ip * mr + r;
                float *dst = g->Ap + ip * K * mr + r;
                if (i < M) {
                    round_span_f(row, A + i * K, K, in, simd);
                    for (size_t k = 0; k < K; k++) dst[k * mr] = row[k];
                } else {
                    for (size_t k = 0; k < K; k++) dst[k * mr] = 0.0f;
                }
            }
        free(row);
    }
    if (fail) return DRIFT_ENOMEM;
#pragma omp parallel for schedule(static) if(g->M * g->N * g->K >= DRIFT_PAR_MIN_FMAS)
    for (size_t k = 0; k < K; k++)
        for (size_t jp = 0; jp < g->np; jp++) {
            float *dst = g->Bp + (jp * K + k) * nr;
            size_t cn = N - jp * nr < nr ? N - jp * nr : nr;
            round_span_f(dst, B + k * N + jp * nr, cn, in, simd);
            for (size_t c = cn; c < nr; c++) dst[c] = 0.0f;
        }
    return DRIFT_OK;
}

/* tiles: mp x np tiles of mr x nr floats, each tile contiguous. */
static void tiled_chain_f32(const gctx_t *g, float *tiles, size_t k0, size_t k1)
{
    const size_t mr = (size_t)g->mr, nr = (size_t)g->nr, K = g->K, tsz = mr * nr;
    const size_t mp = g->mp, np = g->np;
    int simd = have_avx2_fma() && g->mr == 6 && g->nr == 16;
    (void)simd;
    if (k0 == k1) {
        memset(tiles, 0, mp * np * tsz * sizeof(float));
        return;
    }
#pragma omp parallel if(g->M * g->N * (k1 - k0) >= DRIFT_PAR_MIN_FMAS)
    for (size_t jc = 0; jc < np; jc += TILE_NCP) {
        size_t jn = np - jc < TILE_NCP ? np - jc : TILE_NCP;
        for (size_t kc = k0; kc < k1; kc += TILE_KC) {
            size_t kl = k1 - kc < TILE_KC ? k1 - kc : TILE_KC;
            int start = kc == k0;
#pragma omp for collapse(2) schedule(static)
            for (size_t ip = 0; ip < mp; ip++)
                for (size_t jj = 0; jj < jn; jj++) {
                    size_t jp = jc + jj;
                    const float *ap = g->Ap + (ip * K + kc) * mr, *bp = g->Bp + (jp * K + kc) * nr;
                    float *c = tiles + (ip * np + jp) * tsz;
#ifdef DRIFT_X86_DISPATCH
                    if (simd) {
                        uk_f32_avx2(kl, ap, bp, c, start, g->fma);
                        continue;
                    }
#endif
                    uk_f32_generic(kl, ap, bp, c, g->mr, g->nr, start, g->fma);
                }
        }
    }
}

static void tiles_to_rm(const gctx_t *g, const float *tiles, double *out)
{
    const size_t mr = (size_t)g->mr, nr = (size_t)g->nr, tsz = mr * nr, M = g->M, N = g->N;
#pragma omp parallel for schedule(static) if(g->M * g->N >= DRIFT_PAR_MIN_ELEMS)
    for (size_t ip = 0; ip < g->mp; ip++)
        for (size_t jp = 0; jp < g->np; jp++) {
            const float *t = tiles + (ip * g->np + jp) * tsz;
            for (size_t r = 0; r < mr && ip * mr + r < M; r++)
                for (size_t c = 0; c < nr && jp * nr + c < N; c++) out[(ip * mr + r) * N + jp * nr + c] = t[r * nr + c];
        }
}

/* ---- PATH_F64 and PATH_GEN: row-major engines ------------------------------------------ */

/* fma() compiles to one instruction where the target has FMA (the IEEE operation either
 * way, so the bits do not depend on it); the body is shared by both versions. */
#define ROW_F64_BODY                                                                                            \
    if (k0 == k1) {                                                                                             \
        for (size_t j = 0; j < N; j++) s[j] = 0.0;                                                              \
        return;                                                                                                 \
    }                                                                                                           \
    double a = Ai[k0];                                                                                          \
    const double *b = Bd + k0 * N;                                                                              \
    for (size_t j = 0; j < N; j++) s[j] = a * b[j];                                                             \
    for (size_t k = k0 + 1; k < k1; k++) {                                                                      \
        a = Ai[k];                                                                                              \
        b = Bd + k * N;                                                                                         \
        if (fma_on)                                                                                             \
            for (size_t j = 0; j < N; j++) s[j] = fma(a, b[j], s[j]);                                           \
        else                                                                                                    \
            for (size_t j = 0; j < N; j++) s[j] = s[j] + a * b[j];                                              \
    }

static void row_f64_generic(double *restrict s, const double *restrict Ai, const double *restrict Bd, size_t N,
                            size_t k0, size_t k1, int fma_on)
{
    ROW_F64_BODY
}

#ifdef DRIFT_X86_DISPATCH
__attribute__((target("avx2,fma"))) static void row_f64_avx2(double *restrict s, const double *restrict Ai,
                                                              const double *restrict Bd, size_t N, size_t k0,
                                                              size_t k1, int fma_on)
{
    ROW_F64_BODY
}
#endif

static void row_f64(double *s, const double *Ai, const double *Bd, size_t N, size_t k0, size_t k1, int fma_on)
{
#ifdef DRIFT_X86_DISPATCH
    if (have_avx2_fma()) {
        row_f64_avx2(s, Ai, Bd, N, k0, k1, fma_on);
        return;
    }
#endif
    row_f64_generic(s, Ai, Bd, N, k0, k1, fma_on);
}

/* Round-to-odd at 53 bits of the exact s + p (TwoSum; exact with gradual underflow): the
 * truncation of s + p with its last bit set when inexact. */
static inline double ro_sum(double s, double p)
{
    double x = s + p, bv = x - s, av = x - bv, e = (s - av) + (p - bv);
    if (e == 0 || !isfinite(x)) return x;
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    if ((e < 0) != (x < 0)) u -= 1; /* one step toward zero (x != 0 here) */
    u |= 1;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* RNE to the accumulator of an exact or round-to-odd double: the bit trick in the normal
 * range, drift_round elsewhere (both give the correct rounding of a round-to-odd value,
 * since the accumulator has at most 51 bits: Boldo & Melquiond). */
static inline double gen_rne(const gctx_t *g, double x)
{
    int ok;
    double r = rne_fast(x, g->sh, g->emin, g->emax, g->maxf, &ok);
    return ok ? r : drift_rne(x, g->accf);
}

/* round(a*b) to the accumulator, exactly once. */
static inline double gen_prod(const gctx_t *g, double a, double b)
{
    if (g->fast_rne) return gen_rne(g, a * b); /* a*b exact */
    if (g->exact_prod) {
        drift_round_opts_t o = {g->mode, 0, 0};
        return drift_round(a * b, g->accf, &o, 0);
    }
    return drift_mul(a, b, g->accf, g->mode);
}

static inline double gen_step(const gctx_t *g, double s, double a, double b)
{
    if (g->fast_rne) return gen_rne(g, ro_sum(s, g->fma ? a * b : gen_prod(g, a, b)));
    if (!g->fma) return drift_add(s, gen_prod(g, a, b), g->accf, g->mode);
    if (g->exact_prod) return drift_round_sum2(s, a * b, g->accf, g->mode);
    return drift_fma(a, b, s, g->accf, g->mode);
}

static void row_gen(const gctx_t *g, double *s, const double *Ai, size_t k0, size_t k1)
{
    const size_t N = g->N;
    if (k0 == k1) {
        for (size_t j = 0; j < N; j++) s[j] = 0.0;
        return;
    }
    for (size_t j = 0; j < N; j++) s[j] = gen_prod(g, Ai[k0], g->Bd[k0 * N + j]);
    for (size_t k = k0 + 1; k < k1; k++) {
        double a = Ai[k];
        const double *b = g->Bd + k * N;
        for (size_t j = 0; j < N; j++) s[j] = gen_step(g, s[j], a, b[j]);
    }
}

static void rm_chain_d(const gctx_t *g, double *out, size_t k0, size_t k1)
{
#pragma omp parallel for schedule(static) if(g->M * g->N * (k1 - k0) >= DRIFT_PAR_MIN_FMAS)
    for (size_t i = 0; i < g->M; i++) {
        if (g->path == PATH_F64)
            row_f64(out + i * g->N, g->Ad + i * g->K, g->Bd, g->N, k0, k1, g->fma);
        else
            row_gen(g, out + i * g->N, g->Ad + i * g->K, k0, k1);
    }
}

/* ---- partial sums over a K range, and their combination ------------------------------- */

/* Buffers: PATH_F32 tiled -> float tiles; PATH_F32 naive -> float row-major;
 * otherwise double row-major. */
static size_t buf_elems(const gctx_t *g)
{
    if (g->path == PATH_F32 && g->tiled) return g->mp * g->np * (size_t)g->mr * (size_t)g->nr;
    return g->M * g->N;
}

static size_t buf_bytes(const gctx_t *g)
{
    return buf_elems(g) * (g->path == PATH_F32 ? sizeof(float) : sizeof(double)) + 1;
}

static void partial(const gctx_t *g, void *buf, size_t k0, size_t k1)
{
    if (g->path == PATH_F32) {
        if (g->tiled)
            tiled_chain_f32(g, buf, k0, k1);
        else
            rm_chain_f32(g, buf, k0, k1);
    } else {
        rm_chain_d(g, buf, k0, k1);
    }
}

/* x = round_acc(x + y), elementwise. */
static void combine(const gctx_t *g, void *x, const void *y)
{
    size_t n = buf_elems(g);
    if (g->path == PATH_F32) {
        float *xf = x;
        const float *yf = y;
#pragma omp parallel for schedule(static) if(n >= DRIFT_PAR_MIN_ELEMS)
        for (size_t t = 0; t < n; t++) xf[t] = xf[t] + yf[t];
    } else if (g->path == PATH_F64) {
        double *xd = x;
        const double *yd = y;
#pragma omp parallel for schedule(static) if(n >= DRIFT_PAR_MIN_ELEMS)
        for (size_t t = 0; t < n; t++) xd[t] = xd[t] + yd[t];
    } else {
        double *xd = x;
        const double *yd = y;
#pragma omp parallel for schedule(static) if(n >= DRIFT_PAR_MIN_ELEMS)
        for (size_t t = 0; t < n; t++) xd[t] = drift_add(xd[t], yd[t], g->accf, g->mode);
    }
}

static void buf_to_rm(const gctx_t *g, const void *buf, double *acc)
{
    if (g->path == PATH_F32 && g->tiled) {
        tiles_to_rm(g, buf, acc);
    } else if (g->path == PATH_F32) {
        const float *f = buf;
        for (size_t t = 0; t < g->M * g->N; t++) acc[t] = f[t];
    } else {
        memcpy(acc, buf, g->M * g->N * sizeof(double));
    }
}

/* Pairwise over chunks [lo, hi) of length `chunk`: returns a fresh buffer (NULL: no memory). */
static void *splitk_tree(const gctx_t *g, size_t lo, size_t hi, size_t chunk)
{
    void *x = malloc(buf_bytes(g));
    if (!x) return NULL;
    if (hi - lo == 1) {
        size_t k0 = lo * chunk, k1 = k0 + chunk < g->K ? k0 + chunk : g->K;
        partial(g, x, k0, k1);
        return x;
    }
    size_t m = (hi - lo) / 2;
    void *left = splitk_tree(g, lo, lo + m, chunk);
    void *right = left ? splitk_tree(g, lo + m, hi, chunk) : NULL;
    if (!right) {
        free(left), free(x);
        return NULL;
    }
    combine(g, left, right);
    free(right), free(x);
    return left;
}

/* acc (row-major M x N doubles) = the accumulators of the kernel. */
static int accumulate(const gctx_t *g, const drift_gemm_kernel_t *kern, double *acc)
{
    void *buf = NULL, *tmp = NULL;
    int rc = DRIFT_OK;
    if (kern->family != DRIFT_GEMM_SPLITK || g->K == 0) {
        buf = malloc(buf_bytes(g));
        if (!buf) return DRIFT_ENOMEM;
        partial(g, buf, 0, g->K);
    } else {
        size_t S = (size_t)kern->splits, chunk = (g->K + S - 1) / S, nchunks = (g->K + chunk - 1) / chunk;
        if (kern->tree) {
            buf = splitk_tree(g, 0, nchunks, chunk);
            if (!buf) return DRIFT_ENOMEM;
        } else {
            buf = malloc(buf_bytes(g));
            tmp = nchunks > 1 ? malloc(buf_bytes(g)) : NULL;
            if (!buf || (nchunks > 1 && !tmp)) {
                rc = DRIFT_ENOMEM;
                goto out;
            }
            partial(g, buf, 0, chunk < g->K ? chunk : g->K);
            for (size_t c = 1; c < nchunks; c++) {
                size_t k0 = c * chunk, k1 = k0 + chunk < g->K ? k0 + chunk : g->K;
                partial(g, tmp, k0, k1);
                combine(g, buf, tmp);
            }
        }
    }
    buf_to_rm(g, buf, acc);
out:
    free(buf), free(tmp);
    return rc;
}

/* ---- the entry point --------------------------------------------------------------------- */

int drift_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
               const drift_gemm_kernel_t *kern, const drift_gemm_opts_t *opts)
{
    if (!C || !kern || !opts || (M && K && !A) || (K && N && !B)) return DRIFT_EINVAL;
    if (!kernel_valid(kern)) return DRIFT_EINVAL;
    if ((unsigned)opts->in >= DRIFT_NFORMATS || (unsigned)opts->acc.acc >= DRIFT_NFORMATS ||
        (unsigned)opts->out >= DRIFT_NFORMATS || (unsigned)opts->acc.mode >= DRIFT_NMODES)
        return DRIFT_EINVAL;
    if (opts->acc.mode == DRIFT_SR) return DRIFT_EUNSUPPORTED;
    if (kern->family == DRIFT_GEMM_TC) {
        drift_tc_params_t tp;
        if (opts->acc.acc != DRIFT_FP32 && opts->acc.acc != DRIFT_FP16) return DRIFT_EUNSUPPORTED;
        int rc = drift_tc_params(&tp, kern->arch, opts->in);
        if (rc) return rc;
    }
    if (M == 0 || N == 0) return DRIFT_OK;
    if (M > SIZE_MAX / 8 / N || (K && (M > SIZE_MAX / 8 / K || N > SIZE_MAX / 8 / K))) return DRIFT_ENOMEM;

    gctx_t g;
    memset(&g, 0, sizeof g);
    g.M = M, g.N = N, g.K = K;
    g.fma = opts->acc.fma != 0;
    g.accf = opts->acc.acc;
    g.mode = opts->acc.mode;
    g.exact_prod = opts->in != DRIFT_FP64;
    g.tiled = kern->family == DRIFT_GEMM_TILED || kern->family == DRIFT_GEMM_SPLITK;
    if (g.accf == DRIFT_FP32 && g.mode == DRIFT_RNE && opts->in != DRIFT_FP64)
        g.path = PATH_F32;
    else if (g.accf == DRIFT_FP64 && g.mode == DRIFT_RNE)
        g.path = PATH_F64;
    else
        g.path = PATH_GEN;
    {
        const drift_format_info_t *fi = drift_format_info(g.accf);
        g.fast_rne = g.path == PATH_GEN && g.mode == DRIFT_RNE && g.exact_prod && fi->p <= 51;
        g.sh = 53 - fi->p, g.emin = fi->emin, g.emax = fi->emax, g.maxf = fi->max_finite;
    }

    int rc = DRIFT_OK;
    /* With beta == 0 the accumulators go straight into C: every allocation happens before
     * the first write, so an error still leaves C unchanged. */
    double *acc = opts->beta == 0 ? C : malloc(M * N * sizeof *acc);
    float *Af = NULL, *Bf = NULL;
    double *Ad = NULL, *Bd = NULL;
    if (!acc) return DRIFT_ENOMEM;

    if (kern->family == DRIFT_GEMM_TC) {
        Ad = malloc((M * K + 1) * sizeof *Ad);
        Bd = malloc((K * N + 1) * sizeof *Bd);
        if (!Ad || !Bd) {
            rc = DRIFT_ENOMEM;
            goto out;
        }
        round_inputs_d(Ad, A, M * K, opts->in);
        round_inputs_d(Bd, B, K * N, opts->in);
        rc = drift_tc_gemm(acc, Ad, Bd, M, N, K, 0, kern->arch, opts->in, opts->acc.acc);
        if (rc) goto out;
    } else if (g.path == PATH_F32 && g.tiled) {
        if ((rc = pack_f32(&g, A, B, opts->in)) != DRIFT_OK) goto out;
        rc = accumulate(&g, kern, acc);
        if (rc) goto out;
    } else if (g.path == PATH_F32) {
        Af = malloc((M * K + 1) * sizeof *Af);
        Bf = malloc((K * N + 1) * sizeof *Bf);
        if (!Af || !Bf) {
            rc = DRIFT_ENOMEM;
            goto out;
        }
        round_inputs_f(Af, A, M * K, opts->in);
        round_inputs_f(Bf, B, K * N, opts->in);
        g.Af = Af, g.Bf = Bf;
        rc = accumulate(&g, kern, acc);
        if (rc) goto out;
    } else {
        Ad = malloc((M * K + 1) * sizeof *Ad);
        Bd = malloc((K * N + 1) * sizeof *Bd);
        if (!Ad || !Bd) {
            rc = DRIFT_ENOMEM;
            goto out;
        }
        round_inputs_d(Ad, A, M * K, opts->in);
        round_inputs_d(Bd, B, K * N, opts->in);
        g.Ad = Ad, g.Bd = Bd;
        rc = accumulate(&g, kern, acc);
        if (rc) goto out;
    }

    /* Epilogue: nearest-even in the accumulator format, then to the output format. */
    {
        const double alpha = opts->alpha, beta = opts->beta;
        const drift_format_t af = opts->acc.acc, of = opts->out;
        if (alpha == 1 && beta == 0 && of == af) goto out; /* y = acc exactly, already in C */
#pragma omp parallel for schedule(static) if(M * N >= DRIFT_PAR_MIN_ELEMS)
        for (size_t t = 0; t < M * N; t++) {
            double y;
            if (beta == 0)
                y = alpha == 1 ? acc[t] : drift_mul(alpha, acc[t], af, DRIFT_RNE);
            else
                y = drift_fma(alpha, acc[t], drift_mul(beta, C[t], af, DRIFT_RNE), af, DRIFT_RNE);
            C[t] = of == af ? y : drift_rne(y, of);
        }
    }
out:
    if (acc != C) free(acc);
    free(Af), free(Bf), free(Ad), free(Bd), free(g.Ap), free(g.Bp);
    return rc;
}
