/* gemm.c — drift_gemm (gemm.h): checks the call, picks the arithmetic path and the engine,
 * and applies the epilogue. The pieces live beside it, one concept each:
 *
 *   gemm_internal.h     the paths (why each is exact), the context the pieces share
 *   gemm_kernel_spec.c  kernel specs: parse, print, the order of each kernel
 *   gemm_input_round.c  A and B rounded to the input format
 *   gemm_f32_rows.c     F32 naive engine (row-major)
 *   gemm_f32_tiled.c    F32 tiled engine (packed panels, register-blocked micro-kernel)
 *   gemm_rows_double.c  F64 and GEN engine (row-major doubles)
 *   gemm_splitk.c       partials over K ranges and their split-K combination */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "gemm_internal.h"
#include "tc_model.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the fp32 path needs float arithmetic evaluated in float (FLT_EVAL_METHOD == 0)"
#endif

drift_gemm_simd_t drift_gemm_simd(void)
{
#ifdef DRIFT_X86_DISPATCH
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        cached = !avx2                               ? DRIFT_GEMM_SIMD_NONE
                 : __builtin_cpu_supports("avx512f") ? DRIFT_GEMM_SIMD_AVX512
                                                     : DRIFT_GEMM_SIMD_AVX2;
        /* These let the tests compare every code path with the scalar one. */
        const char *env = getenv("DRIFT_NO_AVX512");
        if (env && *env && strcmp(env, "0") != 0 && cached == DRIFT_GEMM_SIMD_AVX512) cached = DRIFT_GEMM_SIMD_AVX2;
        env = getenv("DRIFT_NO_SIMD");
        if (env && *env && strcmp(env, "0") != 0) cached = DRIFT_GEMM_SIMD_NONE;
    }
    return (drift_gemm_simd_t)cached;
#else
    return DRIFT_GEMM_SIMD_NONE;
#endif
}

int drift_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_gemm_kernel_t *kern, const drift_gemm_opts_t *opts)
{
    if (!C || !kern || !opts || (M && K && !A) || (K && N && !B)) return DRIFT_EINVAL;
    if (!drift_gemm_kernel_valid(kern)) return DRIFT_EINVAL;
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

    drift_gemm_ctx_t g;
    memset(&g, 0, sizeof g);
    g.M = M, g.N = N, g.K = K;
    g.fma = opts->acc.fma != 0;
    g.accf = opts->acc.acc;
    g.mode = opts->acc.mode;
    g.exact_prod = opts->in != DRIFT_FP64;
    g.tiled = kern->family == DRIFT_GEMM_TILED || kern->family == DRIFT_GEMM_SPLITK;
    if (g.accf == DRIFT_FP32 && g.mode == DRIFT_RNE && opts->in != DRIFT_FP64)
        g.path = DRIFT_GEMM_PATH_F32;
    else if (g.accf == DRIFT_FP64 && g.mode == DRIFT_RNE)
        g.path = DRIFT_GEMM_PATH_F64;
    else
        g.path = DRIFT_GEMM_PATH_GEN;
    {
        const drift_format_info_t *fi = drift_format_info(g.accf);
        g.fast_rne = g.path == DRIFT_GEMM_PATH_GEN && g.mode == DRIFT_RNE && g.exact_prod && fi->p <= 51;
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
        drift_gemm_round_inputs(Ad, NULL, A, M * K, opts->in);
        drift_gemm_round_inputs(Bd, NULL, B, K * N, opts->in);
        rc = drift_tc_gemm(acc, Ad, Bd, M, N, K, 0, kern->arch, opts->in, opts->acc.acc);
        if (rc) goto out;
    } else if (g.path == DRIFT_GEMM_PATH_F32 && g.tiled) {
        if ((rc = drift_gemm_pack_f32(&g, A, B, opts->in)) != DRIFT_OK) goto out;
        rc = drift_gemm_accumulate(&g, kern, acc);
        if (rc) goto out;
    } else if (g.path == DRIFT_GEMM_PATH_F32) {
        Af = malloc((M * K + 1) * sizeof *Af);
        Bf = malloc((K * N + 1) * sizeof *Bf);
        if (!Af || !Bf) {
            rc = DRIFT_ENOMEM;
            goto out;
        }
        drift_gemm_round_inputs(NULL, Af, A, M * K, opts->in);
        drift_gemm_round_inputs(NULL, Bf, B, K * N, opts->in);
        g.Af = Af, g.Bf = Bf;
        rc = drift_gemm_accumulate(&g, kern, acc);
        if (rc) goto out;
    } else {
        Ad = malloc((M * K + 1) * sizeof *Ad);
        Bd = malloc((K * N + 1) * sizeof *Bd);
        if (!Ad || !Bd) {
            rc = DRIFT_ENOMEM;
            goto out;
        }
        drift_gemm_round_inputs(Ad, NULL, A, M * K, opts->in);
        drift_gemm_round_inputs(Bd, NULL, B, K * N, opts->in);
        g.Ad = Ad, g.Bd = Bd;
        rc = drift_gemm_accumulate(&g, kern, acc);
        if (rc) goto out;
    }

    /* Epilogue: nearest-even in the accumulator format, then to the output format. */
    {
        const double alpha = opts->alpha, beta = opts->beta;
        const drift_format_t af = opts->acc.acc, of = opts->out;
        if (alpha == 1 && beta == 0 && of == af) goto out; /* y = acc exactly, already in C */
#pragma omp parallel for schedule(dynamic, DRIFT_PAR_CHUNK_ELEMS) if (M * N >= DRIFT_PAR_MIN_ELEMS)
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
    free(Af), free(Bf), free(Ad), free(Bd);
    drift_gemm_pack_release(&g);
    return rc;
}
