/* test_gemm.c — every GEMM kernel family against an independent step-by-step emulation.
 *
 * The emulation below is written from gemm.h's documented semantics only: inputs rounded
 * with MPFR, each product and sum formed exactly in MPFR, and every step rounded to the
 * accumulator format with MPFR's IEEE emulation idiom (exponent range + mpfr_subnormalize).
 * The tensor-core family is emulated from the published model (Khattak & Mikaitis 2025,
 * Generic_BFMA_TC.m) with MPFR truncation, independently of tc_model.c's double tricks.
 * Every comparison is bit-for-bit: the kernels claim exact-once arithmetic, so there is no
 * tolerance to justify. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "drift.h"
#include "format.h"
#include "gemm.h"
#include "oracle.h"
#include "philox.h"

/* ---- MPFR emulation of the formats ---------------------------------------------------- */

/* x (exact, any precision) rounded once to format f in MPFR mode r, with f's subnormals and
 * overflow (formats with infinities only). */
static double mp_round(mpfr_srcptr x, drift_format_t f, mpfr_rnd_t r)
{
    return oracle_round_fmt(x, f, r); /* tests/oracle.h */
}

static mpfr_rnd_t mp_mode(drift_mode_t m)
{
    switch (m) {
    case DRIFT_RZ: return MPFR_RNDZ;
    case DRIFT_RU: return MPFR_RNDU;
    case DRIFT_RD: return MPFR_RNDD;
    default: return MPFR_RNDN;
    }
}

/* A scratch of exact MPFR numbers: products of doubles need 106 bits; sums of a double and
 * a product over the exponent spans used here need far fewer than 4096. */
#define EXACT_PREC 4096

static double emu_round_d(double x, drift_format_t f, drift_mode_t m)
{
    mpfr_t t;
    mpfr_init2(t, 64);
    mpfr_set_d(t, x, MPFR_RNDN);
    double r = mp_round(t, f, mp_mode(m));
    mpfr_clear(t);
    return r;
}

/* round(a*b) and round(s + a*b) / round(s + round(a*b)) in the accumulator. */
static double emu_prod(double a, double b, drift_format_t f, drift_mode_t m)
{
    mpfr_t p;
    mpfr_init2(p, 128);
    cr_assert_eq(mpfr_mul_d(p, (mpfr_set_d(p, a, MPFR_RNDN), p), b, MPFR_RNDN), 0, "product not exact");
    double r = mp_round(p, f, mp_mode(m));
    mpfr_clear(p);
    return r;
}

static double emu_add(double x, double y, drift_format_t f, drift_mode_t m)
{
    mpfr_t s;
    mpfr_init2(s, EXACT_PREC);
    mpfr_set_d(s, x, MPFR_RNDN);
    cr_assert_eq(mpfr_add_d(s, s, y, MPFR_RNDN), 0, "sum not exact");
    double r = mp_round(s, f, mp_mode(m));
    mpfr_clear(s);
    return r;
}

static double emu_fma(double a, double b, double s, drift_format_t f, drift_mode_t m)
{
    mpfr_t p, t;
    mpfr_init2(p, 128);
    mpfr_init2(t, EXACT_PREC);
    mpfr_set_d(p, a, MPFR_RNDN);
    cr_assert_eq(mpfr_mul_d(p, p, b, MPFR_RNDN), 0, "product not exact");
    mpfr_set_d(t, s, MPFR_RNDN);
    cr_assert_eq(mpfr_add(t, t, p, MPFR_RNDN), 0, "sum not exact");
    double r = mp_round(t, f, mp_mode(m));
    mpfr_clear(p);
    mpfr_clear(t);
    return r;
}

typedef struct {
    drift_format_t acc;
    drift_mode_t mode;
    int fma;
} emu_acc_t;

/* seq chain over k in [k0, k1) of a[k] * b[k * sb]. */
static double emu_chain(const double *a, const double *b, size_t sb, size_t k0, size_t k1, const emu_acc_t *e)
{
    if (k0 == k1) return 0.0;
    double s = emu_prod(a[k0], b[k0 * sb], e->acc, e->mode);
    for (size_t k = k0 + 1; k < k1; k++)
        s = e->fma ? emu_fma(a[k], b[k * sb], s, e->acc, e->mode)
                   : emu_add(s, emu_prod(a[k], b[k * sb], e->acc, e->mode), e->acc, e->mode);
    return s;
}

static double emu_pairwise(const double *p, size_t n, const emu_acc_t *e)
{
    if (n == 1) return p[0];
    size_t m = n / 2;
    return emu_add(emu_pairwise(p, m, e), emu_pairwise(p + m, n - m, e), e->acc, e->mode);
}

/* ---- MPFR emulation of the tensor-core model ------------------------------------------- */

typedef struct {
    int block, neab, min_exp;
} emu_tc_t;

/* Published parameters (tc_model.h's table, from the MATLAB models at b12b5a7): clamps
 * -132 (Ampere, Ada) and -133 (Hopper, Blackwell), lowered for fp16 -> fp16 to -19 (V100),
 * -20 (Ampere, Ada) and -21 (Hopper, Blackwell). B200 fp8 adds c after the products
 * (tc_model.h), which this emulation does not do: the cases below use tc:ada for fp8. */
static emu_tc_t emu_tc_params(drift_tc_arch_t arch, drift_format_t in, drift_format_t out)
{
    int fp8 = in == DRIFT_FP8E4M3 || in == DRIFT_FP8E5M2, h = in == DRIFT_FP16 && out == DRIFT_FP16;
    switch (arch) {
    case DRIFT_TC_V100: return (emu_tc_t){4, 0, h ? -19 : -100000};
    case DRIFT_TC_A100: return (emu_tc_t){in == DRIFT_TF32 ? 4 : 8, 1, h ? -20 : -132};
    case DRIFT_TC_ADA: return (emu_tc_t){fp8 ? 16 : in == DRIFT_TF32 ? 4 : 8, fp8 ? -10 : 1, h ? -20 : -132};
    case DRIFT_TC_H100: return (emu_tc_t){fp8 ? 32 : in == DRIFT_TF32 ? 8 : 16, fp8 ? -10 : 2, h ? -21 : -133};
    default: return (emu_tc_t){in == DRIFT_TF32 ? 8 : 16, 2, h ? -21 : -133};
    }
}

static long mp_floor_log2(mpfr_srcptr x) { return (long)mpfr_get_exp(x) - 1; }

/* One block: c + sum a[k] b[k sb], k < n, all in MPFR. */
static double emu_tc_block(
    const double *a, const double *b, size_t sb, size_t n, double c, emu_tc_t p, drift_format_t in, drift_format_t out)
{
    long emin_in = drift_format_info(in)->emin;
    mpfr_t x, y, S;
    mpfr_inits2(256, x, y, S, (mpfr_ptr)0);
    long E = LONG_MIN;
    for (size_t k = 0; k < n; k++) {
        if (a[k] == 0 || b[k * sb] == 0) continue;
        mpfr_set_d(x, a[k], MPFR_RNDN);
        mpfr_set_d(y, b[k * sb], MPFR_RNDN);
        long ea = mp_floor_log2(x), eb = mp_floor_log2(y);
        long e = (ea < emin_in ? emin_in : ea) + (eb < emin_in ? emin_in : eb);
        if (e > E) E = e;
    }
    if (c != 0) {
        mpfr_set_d(x, c, MPFR_RNDN);
        long e = mp_floor_log2(x);
        if (e < -126) e = -126;
        if (e > E) E = e;
    }
    double r = 0.0;
    if (E != LONG_MIN) {
        if (E < p.min_exp) E = p.min_exp;
        long lsb = E - 23 - p.neab;
        mpfr_set_zero(S, 1);
        for (size_t k = 0; k <= n; k++) {
            if (k < n) {
                mpfr_set_d(x, a[k], MPFR_RNDN);
                mpfr_mul_d(x, x, b[k * sb], MPFR_RNDN); /* exact at 256 bits */
            } else {
                mpfr_set_d(x, c, MPFR_RNDN);
            }
            mpfr_div_2si(x, x, lsb, MPFR_RNDN);
            mpfr_trunc(x, x);             /* toward zero: sign-magnitude truncation */
            mpfr_add(S, S, x, MPFR_RNDN); /* exact: small integers */
        }
        mpfr_mul_2si(S, S, lsb, MPFR_RNDN);
        if (!mpfr_zero_p(S)) {
            if (out == DRIFT_FP32) {
                mpfr_abs(x, S, MPFR_RNDN);
                if (mpfr_cmp_d(x, 0x1p128) >= 0) {
                    r = mpfr_sgn(S) < 0 ? -INFINITY : INFINITY;
                } else {
                    /* toward zero, at 24 + min(neab, 0) bits, fp32 subnormals */
                    int pe = 24 + (p.neab < 0 ? p.neab : 0);
                    mpfr_exp_t emin = mpfr_get_emin();
                    mpfr_set_emin(-126 - pe + 2);
                    mpfr_t z;
                    mpfr_init2(z, pe);
                    int t = mpfr_set(z, S, MPFR_RNDZ);
                    t = mpfr_check_range(z, t, MPFR_RNDZ);
                    mpfr_subnormalize(z, t, MPFR_RNDZ);
                    r = mpfr_get_d(z, MPFR_RNDN);
                    mpfr_clear(z);
                    mpfr_set_emin(emin);
                }
            } else {
                r = mp_round(S, DRIFT_FP16, MPFR_RNDN);
            }
        }
    }
    mpfr_clears(x, y, S, (mpfr_ptr)0);
    return r;
}

static double emu_tc_dot(
    const double *a, const double *b, size_t sb, size_t n, drift_tc_arch_t arch, drift_format_t in, drift_format_t out)
{
    emu_tc_t p = emu_tc_params(arch, in, out);
    double c = 0.0;
    for (size_t k0 = 0; k0 < n; k0 += (size_t)p.block) {
        size_t m = n - k0 < (size_t)p.block ? n - k0 : (size_t)p.block;
        c = emu_tc_block(a + k0, b + k0 * sb, sb, m, c, p, in, out);
    }
    return c;
}

/* ---- the emulated GEMM ------------------------------------------------------------------- */

static void emu_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K, const char *kspec,
    const drift_gemm_opts_t *o)
{
    drift_gemm_kernel_t kern;
    cr_assert_eq(drift_gemm_kernel_parse(&kern, kspec), 0);
    double *Ar = malloc((M * K + 1) * sizeof *Ar), *Br = malloc((K * N + 1) * sizeof *Br);
    for (size_t t = 0; t < M * K; t++) Ar[t] = emu_round_d(A[t], o->in, DRIFT_RNE);
    for (size_t t = 0; t < K * N; t++) Br[t] = emu_round_d(B[t], o->in, DRIFT_RNE);
    emu_acc_t e = {o->acc.acc, o->acc.mode, o->acc.fma};
    double part[4096];
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            const double *a = Ar + i * K, *b = Br + j;
            double acc;
            switch (kern.family) {
            case DRIFT_GEMM_SPLITK: {
                size_t S = (size_t)kern.splits, chunk = (K + S - 1) / S, n = 0;
                if (K == 0) {
                    acc = 0.0;
                    break;
                }
                for (size_t k0 = 0; k0 < K; k0 += chunk)
                    part[n++] = emu_chain(a, b, N, k0, k0 + chunk < K ? k0 + chunk : K, &e);
                if (kern.tree) {
                    acc = emu_pairwise(part, n, &e);
                } else {
                    acc = part[0];
                    for (size_t t = 1; t < n; t++) acc = emu_add(acc, part[t], e.acc, e.mode);
                }
                break;
            }
            case DRIFT_GEMM_TC: acc = emu_tc_dot(a, b, N, K, kern.arch, o->in, o->acc.acc); break;
            default: acc = emu_chain(a, b, N, 0, K, &e); break;
            }
            double y;
            if (o->beta == 0) {
                y = emu_prod(o->alpha, acc, o->acc.acc, DRIFT_RNE);
            } else {
                double t = emu_prod(o->beta, C[i * N + j], o->acc.acc, DRIFT_RNE);
                y = emu_fma(o->alpha, acc, t, o->acc.acc, DRIFT_RNE);
            }
            C[i * N + j] = emu_round_d(y, o->out, DRIFT_RNE);
        }
    free(Ar), free(Br);
}

/* Inputs: normal values spread over 2^-6 .. 2^6, some exact zeros, Philox-driven. */
static void fill(double *x, size_t n, uint32_t point)
{
    drift_stream_t s;
    drift_stream_init(&s, 7, drift_fnv1a32("test_gemm"), point, 0);
    for (size_t t = 0; t < n; t++) {
        double v = drift_stream_normal(&s);
        int e = (int)drift_stream_below(&s, 13) - 6;
        x[t] = drift_stream_below(&s, 16) == 0 ? 0.0 : ldexp(v, e);
    }
}

static int same_bits(double x, double y) { return memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y)); }

typedef struct {
    char kernel[32]; /* an array, not a pointer: Criterion re-executes the binary per test (ASLR) */
    drift_format_t in, acc, out;
    drift_mode_t mode;
    int fma;
    size_t M, N, K;
    double alpha, beta;
} gemm_case_t;

#define FP32 DRIFT_FP32
#define CASE(k, in, acc, mode, fma, M, N, K)          \
    {                                                 \
        k, in, acc, acc, mode, fma, M, N, K, 1.0, 0.0 \
    }

static gemm_case_t CASES[] = {
    /* F32 path (fp32 RNE accumulation), every input format, fma and nofma */
    CASE("naive", DRIFT_BF16, FP32, DRIFT_RNE, 1, 5, 37, 70),
    CASE("naive", DRIFT_FP16, FP32, DRIFT_RNE, 0, 4, 70, 33),
    CASE("naive", DRIFT_FP32, FP32, DRIFT_RNE, 1, 3, 65, 90),
    CASE("naive", DRIFT_FP8E4M3, FP32, DRIFT_RNE, 1, 3, 17, 64),
    CASE("tiled:64,64,16", DRIFT_BF16, FP32, DRIFT_RNE, 1, 13, 35, 300), /* K crosses a k-block */
    CASE("tiled:128,128,32", DRIFT_FP16, FP32, DRIFT_RNE, 0, 7, 19, 270),
    CASE("tiled:1,1,1", DRIFT_TF32, FP32, DRIFT_RNE, 1, 6, 16, 40),
    CASE("tiled:32,32,8", DRIFT_FP32, FP32, DRIFT_RNE, 1, 11, 33, 257),
    CASE("tiled:32,32,8", DRIFT_FP32, FP32, DRIFT_RNE, 0, 2, 3, 1),
    CASE("splitk:4", DRIFT_BF16, FP32, DRIFT_RNE, 1, 5, 21, 301),
    CASE("splitk:3:tree", DRIFT_FP16, FP32, DRIFT_RNE, 1, 4, 18, 100),
    CASE("splitk:7", DRIFT_BF16, FP32, DRIFT_RNE, 0, 3, 5, 5), /* S > K: five chunks of 1 */
    CASE("splitk:64:tree", DRIFT_FP32, FP32, DRIFT_RNE, 1, 3, 17, 300),
    CASE("splitk:5:tree", DRIFT_TF32, FP32, DRIFT_RNE, 1, 2, 9, 23), /* ceil(23/5)=5: 5 chunks, last 3 */
    CASE("splitk:1", DRIFT_BF16, FP32, DRIFT_RNE, 1, 3, 7, 50),
    CASE("naive", DRIFT_BF16, FP32, DRIFT_RNE, 1, 3, 7, 0), /* K = 0: acc = +0 */
    CASE("splitk:4", DRIFT_BF16, FP32, DRIFT_RNE, 1, 3, 7, 0),
    /* F64 path */
    CASE("naive", DRIFT_FP64, DRIFT_FP64, DRIFT_RNE, 1, 3, 9, 40),
    CASE("splitk:3", DRIFT_FP64, DRIFT_FP64, DRIFT_RNE, 0, 3, 9, 40),
    CASE("tiled:16,16,16", DRIFT_BF16, DRIFT_FP64, DRIFT_RNE, 1, 3, 9, 40),
    /* GEN path: narrow accumulators, directed modes, fp64 inputs into fp32 */
    CASE("naive", DRIFT_FP16, DRIFT_FP16, DRIFT_RNE, 1, 3, 11, 60),
    CASE("tiled:8,8,8", DRIFT_BF16, DRIFT_BF16, DRIFT_RNE, 0, 3, 11, 60),
    CASE("splitk:4:tree", DRIFT_BF16, DRIFT_BF16, DRIFT_RNE, 1, 3, 11, 60),
    CASE("naive", DRIFT_BF16, FP32, DRIFT_RZ, 1, 3, 11, 60),
    CASE("splitk:2", DRIFT_FP16, DRIFT_FP16, DRIFT_RZ, 0, 3, 11, 60),
    CASE("naive", DRIFT_FP16, FP32, DRIFT_RU, 1, 3, 11, 60),
    CASE("naive", DRIFT_FP64, FP32, DRIFT_RNE, 1, 2, 5, 30),
    CASE("tiled:8,8,8", DRIFT_FP32, DRIFT_TF32, DRIFT_RNE, 1, 2, 5, 30),
    /* tensor-core model */
    CASE("tc:h100", DRIFT_BF16, FP32, DRIFT_RNE, 1, 3, 10, 70),
    CASE("tc:a100", DRIFT_TF32, FP32, DRIFT_RNE, 1, 3, 10, 37),
    CASE("tc:v100", DRIFT_FP16, DRIFT_FP16, DRIFT_RNE, 1, 3, 10, 37),
    CASE("tc:ada", DRIFT_FP8E5M2, FP32, DRIFT_RNE, 1, 3, 10, 100),
    CASE("tc:h100", DRIFT_FP8E4M3, FP32, DRIFT_RNE, 1, 3, 10, 100),
    CASE("tc:b200", DRIFT_FP16, DRIFT_FP16, DRIFT_RNE, 1, 3, 10, 50),
    /* epilogue: alpha, beta and an output format narrower than the accumulator */
    {"tiled:64,64,16", DRIFT_BF16, FP32, DRIFT_BF16, DRIFT_RNE, 1, 5, 9, 40, 0.5, 2.0},
    {"splitk:2", DRIFT_FP16, FP32, DRIFT_FP16, DRIFT_RNE, 1, 5, 9, 40, -3.0, 0.0},
    {"naive", DRIFT_FP16, DRIFT_FP16, DRIFT_FP16, DRIFT_RNE, 0, 5, 9, 40, 1.0, -1.5},
    {"tc:h100", DRIFT_FP16, FP32, FP32, DRIFT_RNE, 1, 5, 9, 40, 1.25, 0.75},
};

ParameterizedTestParameters(gemm, equals_emulation)
{
    return cr_make_param_array(gemm_case_t, CASES, sizeof CASES / sizeof CASES[0]);
}

static void run_case(const gemm_case_t *c)
{
    size_t M = c->M, N = c->N, K = c->K;
    double *A = malloc((M * K + 1) * sizeof *A), *B = malloc((K * N + 1) * sizeof *B);
    double *C = malloc(M * N * sizeof *C), *E = malloc(M * N * sizeof *E);
    fill(A, M * K, 1);
    fill(B, K * N, 2);
    fill(C, M * N, 3);
    for (size_t t = 0; t < M * N; t++) C[t] = drift_rne(C[t], c->out);
    memcpy(E, C, M * N * sizeof *C);
    drift_gemm_kernel_t kern;
    cr_assert_eq(drift_gemm_kernel_parse(&kern, c->kernel), 0, "%s", c->kernel);
    drift_gemm_opts_t o = drift_gemm_opts(c->in, c->acc);
    o.acc.mode = c->mode, o.acc.fma = c->fma, o.out = c->out, o.alpha = c->alpha, o.beta = c->beta;
    cr_assert_eq(drift_gemm(C, A, B, M, N, K, &kern, &o), 0, "%s", c->kernel);
    emu_gemm(E, A, B, M, N, K, c->kernel, &o);
    for (size_t t = 0; t < M * N; t++)
        cr_assert(same_bits(C[t], E[t]), "%s in=%s acc=%s mode=%s fma=%d: C[%zu][%zu] = %a, emulation %a", c->kernel,
            drift_format_name(c->in), drift_format_name(c->acc), drift_mode_name(c->mode), c->fma, t / N, t % N, C[t],
            E[t]);
    free(A), free(B), free(C), free(E);
}

ParameterizedTest(gemm_case_t *c, gemm, equals_emulation) { run_case(c); }

/* Criterion runs each test in its own process, so this one can switch the SIMD paths off
 * before the first call and prove that the portable code gives the same bits. */
ParameterizedTestParameters(gemm, portable_path_equals_emulation)
{
    return cr_make_param_array(gemm_case_t, CASES, sizeof CASES / sizeof CASES[0]);
}

ParameterizedTest(gemm_case_t *c, gemm, portable_path_equals_emulation)
{
    setenv("DRIFT_NO_SIMD", "1", 1);
    run_case(c);
}

/* Likewise the AVX2 micro-kernels on a CPU that would otherwise take the AVX-512 one (a
 * different tile, 6 x 16 instead of 12 x 32; on other CPUs this repeats a path above). */
ParameterizedTestParameters(gemm, avx2_path_equals_emulation)
{
    return cr_make_param_array(gemm_case_t, CASES, sizeof CASES / sizeof CASES[0]);
}

ParameterizedTest(gemm_case_t *c, gemm, avx2_path_equals_emulation)
{
    setenv("DRIFT_NO_AVX512", "1", 1);
    run_case(c);
}

#ifdef _OPENMP
/* Every kernel of kernels[0..nk) at 1 and 4 threads on one bf16 product, for both
 * accumulators: identical bits; with naive_first, kernels[1] must also give kernels[0]'s. */
static void same_bits_at_1_and_4_threads(const char *const *kernels, size_t nk, size_t M, size_t N, size_t K,
    const drift_format_t accs[2], uint32_t seed, int naive_first)
{
    double *A = malloc(M * K * sizeof *A), *B = malloc(K * N * sizeof *B);
    double *C1 = malloc(M * N * sizeof *C1), *C4 = malloc(M * N * sizeof *C4), *Cn = malloc(M * N * sizeof *Cn);
    fill(A, M * K, seed);
    fill(B, K * N, seed + 1);
    for (size_t a = 0; a < 2; a++)
        for (size_t t = 0; t < nk; t++) {
            drift_gemm_kernel_t k;
            cr_assert_eq(drift_gemm_kernel_parse(&k, kernels[t]), 0);
            drift_gemm_opts_t o = drift_gemm_opts(DRIFT_BF16, accs[a]);
            omp_set_num_threads(1);
            cr_assert_eq(drift_gemm(C1, A, B, M, N, K, &k, &o), 0);
            omp_set_num_threads(4);
            cr_assert_eq(drift_gemm(C4, A, B, M, N, K, &k, &o), 0);
            cr_assert_eq(memcmp(C1, C4, M * N * sizeof *C1), 0, "%s acc %s", kernels[t], drift_format_name(accs[a]));
            if (naive_first && t == 0) memcpy(Cn, C1, M * N * sizeof *Cn);
            if (naive_first && t == 1)
                cr_assert_eq(
                    memcmp(C1, Cn, M * N * sizeof *C1), 0, "tiled != naive, acc %s", drift_format_name(accs[a]));
        }
    free(A), free(B), free(C1), free(C4), free(Cn);
}
#endif

/* Independent of the thread count (law 4): 1 thread and 4 threads, identical bits. */
Test(gemm, thread_count_does_not_change_bits)
{
#ifdef _OPENMP
    const char *kernels[] = {"naive", "tiled:64,64,16", "splitk:8", "splitk:6:tree", "tc:h100"};
    const drift_format_t accs[2] = {DRIFT_FP32, DRIFT_FP16};
    same_bits_at_1_and_4_threads(kernels, sizeof kernels / sizeof kernels[0], 37, 131, 600, accs, 11, 0);
#else
    cr_skip_test("built without OpenMP");
#endif
}

/* The same above the sizes at which the fast (fp32, fp64) engines go parallel
 * (gemm_internal.h: 2^24 multiply-adds, 2^19 values rounded or packed): 1 and 4 threads
 * give the same bits, and the tiled kernel the naive one's. */
Test(gemm, thread_count_does_not_change_bits_above_the_parallel_sizes)
{
#ifdef _OPENMP
    const char *kernels[] = {"naive", "tiled:128,128,32", "splitk:3", "splitk:5:tree"};
    const drift_format_t accs[2] = {DRIFT_FP32, DRIFT_FP64};
    /* 262 x 270 x 1030: 7.3e7 multiply-adds, (M + N) K = 5.5e5 values */
    same_bits_at_1_and_4_threads(kernels, sizeof kernels / sizeof kernels[0], 262, 270, 1030, accs, 31, 1);
#else
    cr_skip_test("built without OpenMP");
#endif
}

/* tiled and naive follow the same order (gemm.h): identical bits on a larger shape too. */
Test(gemm, tiled_equals_naive)
{
    size_t M = 50, N = 70, K = 1100;
    double *A = malloc(M * K * sizeof *A), *B = malloc(K * N * sizeof *B);
    double *C1 = malloc(M * N * sizeof *C1), *C2 = malloc(M * N * sizeof *C2);
    fill(A, M * K, 21);
    fill(B, K * N, 22);
    drift_gemm_kernel_t kn, kt;
    cr_assert_eq(drift_gemm_kernel_parse(&kn, "naive"), 0);
    cr_assert_eq(drift_gemm_kernel_parse(&kt, "tiled:128,128,32"), 0);
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_FP16, DRIFT_FP32);
    cr_assert_eq(drift_gemm(C1, A, B, M, N, K, &kn, &o), 0);
    cr_assert_eq(drift_gemm(C2, A, B, M, N, K, &kt, &o), 0);
    cr_assert_eq(memcmp(C1, C2, M * N * sizeof *C1), 0);
    free(A), free(B), free(C1), free(C2);
}

/* Split-K is not seq: on data chosen to expose it, splitk:2 differs from naive, so this
 * test fails if split-K were silently computed as seq. Row a = [2^-24 x 8, 1, 2^-24 x 8, 1],
 * b = 1, fp32 accumulation (hand derivation below). */
Test(gemm, splitk_differs_from_seq_where_it_should)
{
    double a[18], b[18];
    for (int k = 0; k < 18; k++) a[k] = 0x1p-24, b[k] = 1.0;
    a[8] = 1.0, a[17] = 1.0;
    drift_gemm_kernel_t kn, ks;
    cr_assert_eq(drift_gemm_kernel_parse(&kn, "naive"), 0);
    cr_assert_eq(drift_gemm_kernel_parse(&ks, "splitk:2"), 0);
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_FP32, DRIFT_FP32);
    double c1, c2;
    cr_assert_eq(drift_gemm(&c1, a, b, 1, 1, 18, &kn, &o), 0);
    cr_assert_eq(drift_gemm(&c2, a, b, 1, 1, 18, &ks, &o), 0);
    /* seq: eight 2^-24 sum exactly to 2^-21; + 1 = 1 + 2^-21 (exact, ulp 2^-23). Each of
     * the next eight 2^-24 is half an ulp of 1 + 2^-21, a tie, and 1 + 2^-21 is even, so it
     * stays. + 1 = 2 + 2^-21, a multiple of the ulp 2^-22 at 2: exact.
     * splitk:2: chunks [0, 9) and [9, 18) are each 2^-21 + 1 = 1 + 2^-21 (exact); their sum
     * 2 + 2^-20 is exact. */
    cr_assert_eq(c1, 2 + 0x1p-21);
    cr_assert_eq(c2, 2 + 0x1p-20);
}

/* ---- kernel specs --------------------------------------------------------------------- */

Test(gemm_spec, round_trip)
{
    const char *good[] = {"naive", "tiled:64,64,16", "tiled:1,1,1", "tiled:4096,4096,4096", "splitk:1", "splitk:4",
        "splitk:4:tree", "splitk:65536", "tc:v100", "tc:a100", "tc:h100", "tc:b200"};
    for (size_t t = 0; t < sizeof good / sizeof good[0]; t++) {
        drift_gemm_kernel_t k, k2;
        char buf[DRIFT_GEMM_KERNEL_SPEC_MAX];
        cr_assert_eq(drift_gemm_kernel_parse(&k, good[t]), 0, "%s", good[t]);
        cr_assert_eq(drift_gemm_kernel_print(buf, sizeof buf, &k), (int)strlen(good[t]));
        cr_assert_str_eq(buf, good[t]);
        cr_assert_eq(drift_gemm_kernel_parse(&k2, buf), 0);
        cr_assert(drift_gemm_kernel_equal(&k, &k2));
    }
}

Test(gemm_spec, rejects_malformed)
{
    const char *bad[] = {"", "naive ", "Naive", "tiled", "tiled:", "tiled:1,1", "tiled:0,1,1", "tiled:1,1,1,",
        "tiled:01,2,3", "tiled:1,2,3x", "tiled:4097,1,1", "tiled:-1,2,3", "splitk", "splitk:", "splitk:0", "splitk:+4",
        "splitk:4:", "splitk:4:tre", "splitk:65537", "splitk:4:tree:", "tc", "tc:", "tc:h300", "tc:H100", "seq"};
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        drift_gemm_kernel_t k;
        cr_assert_eq(drift_gemm_kernel_parse(&k, bad[t]), DRIFT_EINVAL, "accepted '%s'", bad[t]);
    }
}

Test(gemm_spec, print_needs_room)
{
    drift_gemm_kernel_t k;
    char buf[6];
    cr_assert_eq(drift_gemm_kernel_parse(&k, "splitk:4:tree"), 0);
    cr_assert_eq(drift_gemm_kernel_print(buf, sizeof buf, &k), DRIFT_EINVAL);
}

Test(gemm_spec, orders)
{
    drift_gemm_kernel_t k;
    drift_order_t o;
    cr_assert_eq(drift_gemm_kernel_parse(&k, "tiled:64,64,16"), 0);
    cr_assert_eq(drift_gemm_kernel_order(&o, &k), 0);
    cr_assert_eq(o.kind, DRIFT_ORDER_SEQ);
    cr_assert_eq(drift_gemm_kernel_parse(&k, "splitk:8:tree"), 0);
    cr_assert_eq(drift_gemm_kernel_order(&o, &k), 0);
    cr_assert(o.kind == DRIFT_ORDER_SPLITK && o.param == 8 && o.tree == 1);
    cr_assert_eq(drift_gemm_kernel_parse(&k, "tc:a100"), 0);
    cr_assert_eq(drift_gemm_kernel_order(&o, &k), 0);
    cr_assert(o.kind == DRIFT_ORDER_TC && o.arch == DRIFT_TC_A100);
}

Test(gemm, bad_arguments)
{
    double A[4] = {1, 2, 3, 4}, C[4] = {9, 9, 9, 9};
    drift_gemm_kernel_t k;
    cr_assert_eq(drift_gemm_kernel_parse(&k, "naive"), 0);
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_BF16, DRIFT_FP32);
    cr_assert_eq(drift_gemm(NULL, A, A, 2, 2, 2, &k, &o), DRIFT_EINVAL);
    cr_assert_eq(drift_gemm(C, NULL, A, 2, 2, 2, &k, &o), DRIFT_EINVAL);
    o.acc.mode = DRIFT_SR;
    cr_assert_eq(drift_gemm(C, A, A, 2, 2, 2, &k, &o), DRIFT_EUNSUPPORTED);
    o = drift_gemm_opts(DRIFT_FP32, DRIFT_FP32);
    cr_assert_eq(drift_gemm_kernel_parse(&k, "tc:h100"), 0); /* fp32 inputs: no tensor-core path */
    cr_assert_eq(drift_gemm(C, A, A, 2, 2, 2, &k, &o), DRIFT_EUNSUPPORTED);
    o = drift_gemm_opts(DRIFT_BF16, DRIFT_BF16); /* tc output must be fp32 or fp16 */
    cr_assert_eq(drift_gemm(C, A, A, 2, 2, 2, &k, &o), DRIFT_EUNSUPPORTED);
    for (int t = 0; t < 4; t++) cr_assert_eq(C[t], 9.0, "C changed on error");
}

/* The trap that "add in double, then round" falls into (and the reason gemm.c's GEN path
 * uses round-to-odd): bf16 accumulation of a tiny negative first term and a product that is
 * exactly a bf16 midpoint. p = (7/4)(37/64) = 259/256 = 1 + 3*2^-8 lies halfway between the
 * bf16 neighbours 1 + 2^-7 and 1 + 2^-6; s = -2^-100. The exact s + p is just below the
 * midpoint, so RNE gives 1 + 2^-7. Rounding s + p to double first lands on the midpoint
 * itself, whose tie goes to the even 1 + 2^-6: wrong. */
Test(gemm, no_double_rounding_in_narrow_accumulators)
{
    double a[2] = {-0x1p-50, 1.75}, b[2] = {0x1p-50, 37.0 / 64.0}, c;
    drift_gemm_kernel_t k;
    cr_assert_eq(drift_gemm_kernel_parse(&k, "naive"), 0);
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_BF16, DRIFT_BF16);
    cr_assert_eq(drift_gemm(&c, a, b, 1, 1, 2, &k, &o), 0);
    cr_assert_eq(c, 1 + 0x1p-7, "got %a", c);
}

/* The tiled engine's blocking (gemm_f32_tiled.c: k-blocks of 1024, finished tiles written
 * straight to C, edge tiles padded) moves data, never an addition: on a shape with two
 * k-block boundaries and ragged edges in M and N (not multiples of the 12 x 32 or 6 x 16
 * tiles), fma and nofma, tiled gives the naive kernel's bits (naive is held against MPFR
 * above). */
Test(gemm, tiled_equals_naive_across_k_blocks_and_edges)
{
    size_t M = 25, N = 67, K = 2100;
    double *A = malloc(M * K * sizeof *A), *B = malloc(K * N * sizeof *B);
    double *C1 = malloc(M * N * sizeof *C1), *C2 = malloc(M * N * sizeof *C2);
    fill(A, M * K, 41);
    fill(B, K * N, 42);
    drift_gemm_kernel_t kn, kt;
    cr_assert_eq(drift_gemm_kernel_parse(&kn, "naive"), 0);
    cr_assert_eq(drift_gemm_kernel_parse(&kt, "tiled:128,128,32"), 0);
    for (int fma = 0; fma < 2; fma++) {
        drift_gemm_opts_t o = drift_gemm_opts(DRIFT_BF16, DRIFT_FP32);
        o.acc.fma = fma;
        cr_assert_eq(drift_gemm(C1, A, B, M, N, K, &kn, &o), 0);
        cr_assert_eq(drift_gemm(C2, A, B, M, N, K, &kt, &o), 0);
        cr_assert_eq(memcmp(C1, C2, M * N * sizeof *C1), 0, "fma %d", fma);
    }
    free(A), free(B), free(C1), free(C2);
}

/* The packed panels' block is kept from one call to the next (gemm_f32_tiled.c): a call
 * after a larger one gets a block full of the old panels, and its padding (rows past M,
 * columns past N) must be rewritten, not inherited. Shapes large, small, ragged, in that
 * order in one process; each tiled result equals naive's. */
Test(gemm, tiled_reusing_panels_of_another_shape)
{
    const size_t shapes[4][3] = {{40, 70, 300}, {5, 7, 9}, {13, 33, 120}, {26, 65, 64}};
    drift_gemm_kernel_t kn, kt;
    cr_assert_eq(drift_gemm_kernel_parse(&kn, "naive"), 0);
    cr_assert_eq(drift_gemm_kernel_parse(&kt, "tiled:128,128,32"), 0);
    drift_gemm_opts_t o = drift_gemm_opts(DRIFT_BF16, DRIFT_FP32);
    for (int s = 0; s < 4; s++) {
        size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        double *A = malloc(M * K * sizeof *A), *B = malloc(K * N * sizeof *B);
        double *C1 = malloc(M * N * sizeof *C1), *C2 = malloc(M * N * sizeof *C2);
        fill(A, M * K, 50 + (uint32_t)s);
        fill(B, K * N, 60 + (uint32_t)s);
        cr_assert_eq(drift_gemm(C1, A, B, M, N, K, &kn, &o), 0);
        cr_assert_eq(drift_gemm(C2, A, B, M, N, K, &kt, &o), 0);
        cr_assert_eq(memcmp(C1, C2, M * N * sizeof *C1), 0, "shape %d", s);
        free(A), free(B), free(C1), free(C2);
    }
}
