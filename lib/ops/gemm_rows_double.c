/* gemm_rows_double.c — the row-major engine of the F64 and GEN paths (gemm_internal.h):
 * every output's chain in the seq order over a k range, held in doubles.
 *
 * F64 is plain double arithmetic (each operation is the step by definition). GEN emulates
 * a narrower or directed accumulator: each step is the exact acc + a*b (or acc +
 * round(a*b)) rounded once to the accumulator, through the cheapest exact-once route the
 * options allow (round-to-odd + bit rounding for RNE with exact products, the library's
 * drift_round_sum2 / drift_fma / drift_add otherwise). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gemm_internal.h"

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

/* fma() compiles to one instruction where the target has FMA (the IEEE operation either
 * way, so the bits do not depend on it); the body is shared by both versions. */
#define ROW_F64_BODY                                                  \
    if (k0 == k1) {                                                   \
        for (size_t j = 0; j < N; j++) s[j] = 0.0;                    \
        return;                                                       \
    }                                                                 \
    double a = Ai[k0];                                                \
    const double *b = Bd + k0 * N;                                    \
    for (size_t j = 0; j < N; j++) s[j] = a * b[j];                   \
    for (size_t k = k0 + 1; k < k1; k++) {                            \
        a = Ai[k];                                                    \
        b = Bd + k * N;                                               \
        if (fma_on)                                                   \
            for (size_t j = 0; j < N; j++) s[j] = fma(a, b[j], s[j]); \
        else                                                          \
            for (size_t j = 0; j < N; j++) s[j] = s[j] + a * b[j];    \
    }

static void row_f64_generic(double *restrict s, const double *restrict Ai, const double *restrict Bd, size_t N,
    size_t k0, size_t k1, int fma_on)
{
    ROW_F64_BODY
}

#ifdef DRIFT_X86_DISPATCH
__attribute__((target("avx2,fma"))) static void row_f64_avx2(double *restrict s, const double *restrict Ai,
    const double *restrict Bd, size_t N, size_t k0, size_t k1, int fma_on)
{
    ROW_F64_BODY
}
#endif

static void row_f64(double *s, const double *Ai, const double *Bd, size_t N, size_t k0, size_t k1, int fma_on)
{
#ifdef DRIFT_X86_DISPATCH
    if (drift_gemm_simd() != DRIFT_GEMM_SIMD_NONE) {
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
static inline double gen_rne(const drift_gemm_ctx_t *g, double x)
{
    int ok;
    double r = rne_fast(x, g->sh, g->emin, g->emax, g->maxf, &ok);
    return ok ? r : drift_rne(x, g->accf);
}

/* round(a*b) to the accumulator, exactly once. */
static inline double gen_prod(const drift_gemm_ctx_t *g, double a, double b)
{
    if (g->fast_rne) return gen_rne(g, a * b); /* a*b exact */
    if (g->exact_prod) {
        drift_round_opts_t o = {g->mode, 0, 0};
        return drift_round(a * b, g->accf, &o, 0);
    }
    return drift_mul(a, b, g->accf, g->mode);
}

static inline double gen_step(const drift_gemm_ctx_t *g, double s, double a, double b)
{
    if (g->fast_rne) return gen_rne(g, ro_sum(s, g->fma ? a * b : gen_prod(g, a, b)));
    if (!g->fma) return drift_add(s, gen_prod(g, a, b), g->accf, g->mode);
    if (g->exact_prod) return drift_round_sum2(s, a * b, g->accf, g->mode);
    return drift_fma(a, b, s, g->accf, g->mode);
}

static void row_gen(const drift_gemm_ctx_t *g, double *s, const double *Ai, size_t k0, size_t k1)
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

void drift_gemm_rows_double(const drift_gemm_ctx_t *g, double *out, size_t k0, size_t k1)
{
#pragma omp parallel for schedule(dynamic, 1) if (DRIFT_GEMM_PAR_FMAS(g->path, g->M * g->N * (k1 - k0)))
    for (size_t i = 0; i < g->M; i++) {
        if (g->path == DRIFT_GEMM_PATH_F64)
            row_f64(out + i * g->N, g->Ad + i * g->K, g->Bd, g->N, k0, k1, g->fma);
        else
            row_gen(g, out + i * g->N, g->Ad + i * g->K, k0, k1);
    }
}
