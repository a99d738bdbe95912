/* gemm_internal.h — what the pieces of the GEMM emulation (lib/ops/gemm*.c) share: the
 * context of one call, the arithmetic path it takes, and the engines that compute the
 * accumulators over a K range. Internal to lib/ops/gemm*.c; callers use gemm.h.
 *
 * Three arithmetic paths, chosen from the options; each is exact-once per step, so each
 * gives the bits of the documented step-by-step emulation (gemm.h):
 *
 *   F32  acc fp32, RNE, inputs of any format but fp64 (every such input is a float).
 *        fma:   acc = fmaf(a, b, acc). IEEE 754 fusedMultiplyAdd rounds the exact a*b + acc
 *               once to binary32, for any float a, b, acc: this is the step by definition,
 *               whatever the input format (fp32 products need 48 bits; fmaf keeps them).
 *        nofma: acc = acc + a*b in float: a*b is rounded once (binary32 multiply), then the
 *               sum is rounded once (binary32 add), which is the step by definition.
 *        The first term: acc = a*b (one binary32 rounding). Partials: float adds.
 *        Valid because FLT_EVAL_METHOD == 0 (checked in gemm.c) and -ffp-contract=off.
 *        Vectorised across outputs with AVX2/FMA or AVX-512 intrinsics when the CPU has
 *        them (the instructions are the IEEE operations above, with the default MXCSR: no
 *        flush to zero; so the bits do not depend on it).
 *        Engines: gemm_f32_rows.c (naive), gemm_f32_tiled.c (tiled and split-K).
 *   F64  acc fp64, RNE: acc = fma(a, b, acc) or acc + a*b in double, likewise by definition.
 *   GEN  any other accumulator format or mode (fp16, bf16, tf32 or fp8 accumulators; RZ,
 *        RU, RD, RNA): for inputs other than fp64 the product a*b is exact in double (at most
 *        2 x 24 = 48 bits, magnitude inside double's normal range), and drift_round_sum2
 *        rounds the exact acc + a*b once (TwoSum, round-to-odd at 53 bits, then the final
 *        rounding: Boldo & Melquiond's round-to-odd makes the double rounding innocuous for
 *        targets of at most 51 bits, in every mode). nofma rounds the exact product first.
 *        For fp64 inputs drift_fma / drift_mul are the exact-once operations.
 *        F64 and GEN share the double row-major engine (gemm_rows_double.c).
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
#ifndef DRIFT_GEMM_INTERNAL_H
#define DRIFT_GEMM_INTERNAL_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "gemm.h"
#include "par_sizes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The x86 SIMD engines are compiled with per-function target attributes and picked at run
 * time (drift_gemm_simd), so one binary runs on every x86-64 and is fast where it can be. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define DRIFT_X86_DISPATCH 1
#include <immintrin.h>
#endif

/* Whether fmas multiply-adds of path are worth a parallel region. */
#define DRIFT_GEMM_PAR_FMAS(path, fmas) \
    ((fmas) >= ((path) == DRIFT_GEMM_PATH_GEN ? DRIFT_PAR_MIN_FMAS_GEN : DRIFT_PAR_MIN_FMAS_FAST))

typedef enum { DRIFT_GEMM_PATH_F32, DRIFT_GEMM_PATH_F64, DRIFT_GEMM_PATH_GEN } drift_gemm_path_t;

/* The SIMD level the engines may use: none, AVX2 + FMA, or AVX-512F as well (only the
 * tiled F32 micro-kernel has an AVX-512 version; the other engines use AVX2 there). */
typedef enum { DRIFT_GEMM_SIMD_NONE = 0, DRIFT_GEMM_SIMD_AVX2, DRIFT_GEMM_SIMD_AVX512 } drift_gemm_simd_t;

typedef struct {
    size_t M, N, K;
    drift_gemm_path_t path;
    int fma, exact_prod, tiled;
    drift_format_t accf;
    drift_mode_t mode;
    int fast_rne;       /* PATH_GEN, RNE, exact products: round-to-odd + bit rounding */
    int sh, emin, emax; /* the accumulator's rounding shift and normal exponents */
    double maxf;
    const float *Af, *Bf;  /* PATH_F32 naive: rounded inputs, row-major */
    const double *Ad, *Bd; /* PATH_F64, PATH_GEN: rounded inputs, row-major */
    /* PATH_F32 tiled: packed panels (gemm_f32_tiled.c) */
    int mr, nr;    /* the micro-kernel's tile: mr rows x nr columns */
    size_t mp, np; /* number of row / column panels */
    float *Ap, *Bp;
} drift_gemm_ctx_t;

/* gemm_kernel_spec.c: 1 when k is a kernel drift_gemm accepts. */
int drift_gemm_kernel_valid(const drift_gemm_kernel_t *k);

/* gemm.c: the SIMD level of this CPU (cached). DRIFT_NO_SIMD=1 in the environment forces
 * none and DRIFT_NO_AVX512=1 at most AVX2, so that every code path can be compared with
 * the scalar one on one machine. */
drift_gemm_simd_t drift_gemm_simd(void);

/* gemm_input_round.c: RNE of the inputs to the input format, in parallel chunks. Exactly
 * one of dd (double copy) and df (float copy, for the F32 path) is non-NULL. */
void drift_gemm_round_inputs(double *dd, float *df, const double *src, size_t n, drift_format_t f);

/* gemm_f32_tiled.c: packs A and B into zero-padded panels for the tile of this CPU,
 * rounding on the way (0 or DRIFT_ENOMEM; the caller gives g->Ap and g->Bp back with
 * drift_gemm_pack_release, never free);
 * then partial accumulators of the k range [k0, k1) into tiles (mp x np tiles of mr x nr
 * floats, each contiguous), and the tiles back to row-major doubles. */
DRIFT_MUST_CHECK int drift_gemm_pack_f32(drift_gemm_ctx_t *g, const double *A, const double *B, drift_format_t in);
/* Gives g->Ap and g->Bp (one block) back: kept for the next call, or freed. NULL is fine. */
void drift_gemm_pack_release(drift_gemm_ctx_t *g);
void drift_gemm_tiled_chain_f32(const drift_gemm_ctx_t *g, float *tiles, size_t k0, size_t k1);
void drift_gemm_tiles_to_rm(const drift_gemm_ctx_t *g, const float *tiles, double *out);
/* The whole of K into out (row-major M x N doubles) at once: the chain above with each tile
 * written to out as soon as its last k-block is done (tiles: the same buffer, scratch). */
void drift_gemm_tiled_f32_to_rm(const drift_gemm_ctx_t *g, float *tiles, double *out);

/* gemm_f32_rows.c: partial accumulators over [k0, k1) of every output, row-major floats. */
void drift_gemm_rows_f32(const drift_gemm_ctx_t *g, float *out, size_t k0, size_t k1);

/* gemm_rows_double.c: the same for PATH_F64 and PATH_GEN, row-major doubles. */
void drift_gemm_rows_double(const drift_gemm_ctx_t *g, double *out, size_t k0, size_t k1);

/* gemm_splitk.c: acc (row-major M x N doubles) = the accumulators of the kernel: one
 * partial over all of K, or split-K partials combined seq or pairwise. */
DRIFT_MUST_CHECK int drift_gemm_accumulate(const drift_gemm_ctx_t *g, const drift_gemm_kernel_t *kern, double *acc);

#ifdef __cplusplus
}
#endif

#endif
