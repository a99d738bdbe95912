/* gemm_mma.h — GEMM kernels built from tensor-core MMA instructions, where the tile size is a
 * numerical variable.
 *
 * Every kernel computes C = A B (A: M x K, B: K x N, row-major doubles; A and B rounded RNE to
 * `in` first) from the tensor-core block FMA of tc_model.h (the instruction's k-depth, its
 * alignment and truncation, its fp32 result rounded toward zero). What differs is how the
 * results of instructions are combined along K — the part a kernel author chooses:
 *
 *   tc:ARCH                one accumulator fed back into every MMA along all of K (the
 *                          accumulator register is the instruction's C operand): BK-independent,
 *                          the same as gemm.h's tc:ARCH. With fp8 on H100 this is "full-K
 *                          accumulation in the tensor core" (a 14-bit accumulator, tc_model.h).
 *   mma:ARCH,BK            per K-tile of BK elements the MMAs start from zero and chain through
 *                          the tile (drift_tc_dot with c = 0); the tile's result is added to an
 *                          fp32 register accumulator on the CUDA cores (RNE): acc = p_0, then
 *                          acc = RNE32(acc + p_t). This is the DeepSeek-V3 FP8 GEMM with
 *                          promotion every BK = 128 elements, and any kernel that promotes
 *                          per K-tile. BK changes the bits: a tile boundary replaces the
 *                          tensor core's truncation and round-toward-zero by an fp32 RNE add.
 *   slicedk:ARCH,BK,S      sliced-K (CUTLASS): S warps share each K-tile, warp w taking its
 *                          w-th slice of BK/S consecutive elements in every tile and chaining
 *                          its own accumulator through the MMAs over all tiles; at the end the
 *                          S accumulators are reduced in fp32 (RNE) in warp order.
 *   streamk:ARCH,BM,BN,BK,W  stream-K: the T = ceil(M/BM) ceil(N/BN) output tiles' K-iterations
 *                          (I = ceil(K/BK) each, T I in all, tile-major) are dealt to W workers
 *                          in contiguous runs of ceil(T I / W); a worker chains the MMAs of its
 *                          run of one tile from zero, and the partials of a tile (one per
 *                          worker that touched it) are fixed up in a second pass, added in K
 *                          order in fp32 (RNE). Which tile an output lies in decides where its
 *                          K range is cut, so outputs of one GEMM follow different orders.
 *
 * Output: the fp32 accumulator rounded RNE to `out` (fp32: unchanged).
 * Bit-identical whatever the thread count: threads split outputs, never a sum. */
#ifndef DRIFT_GEMM_MMA_H
#define DRIFT_GEMM_MMA_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "gemm.h"
#include "order.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_MMA_TC = 0, DRIFT_MMA_TILE, DRIFT_MMA_SLICEDK, DRIFT_MMA_STREAMK } drift_mma_family_t;

typedef struct {
    drift_mma_family_t family;
    drift_tc_arch_t arch;
    int bm, bn, bk; /* bk: mma, slicedk, streamk; bm, bn: streamk only */
    int slices;     /* slicedk: S, dividing BK */
    int workers;    /* streamk: W */
} drift_mma_kernel_t;

#define DRIFT_MMA_MAX 65536
#define DRIFT_MMA_SPEC_MAX 64

/* mma:ARCH,BK | slicedk:ARCH,BK,S | streamk:ARCH,BM,BN,BK,W | tc:ARCH, ARCH one of the
 * tensor-core architectures of order.h (drift_tc_arch_name); integers 1 .. DRIFT_MMA_MAX, decimal, no sign or leading zeros; S
 * divides BK. 0 or DRIFT_EINVAL. parse(print(k)) == k. */
DRIFT_MUST_CHECK int drift_mma_kernel_parse(drift_mma_kernel_t *k, const char *spec);
int drift_mma_kernel_print(char *buf, size_t size, const drift_mma_kernel_t *k);

/* One output: the dot product of a[0..K) and b[0..K) (values of in) as kernel k computes it
 * for an output lying in output tile `tile` (streamk only; otherwise ignored) of a GEMM with
 * `tiles` output tiles. Result in fp32 (before the output rounding). 0, DRIFT_EINVAL,
 * DRIFT_EUNSUPPORTED (ARCH has no tensor-core path for in). */
DRIFT_MUST_CHECK int drift_mma_dot(double *out, const double *a, const double *b, size_t K, const drift_mma_kernel_t *k,
    drift_format_t in, size_t tile, size_t tiles);

/* C = A B with kernel k: A and B rounded RNE to in, the fp32 result rounded RNE to out.
 * 0, DRIFT_EINVAL, DRIFT_EUNSUPPORTED or DRIFT_ENOMEM; C unchanged on error. */
DRIFT_MUST_CHECK int drift_mma_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_mma_kernel_t *k, drift_format_t in, drift_format_t out);

/* The MMA-built kernel that runs a gemm.h kernel's plan on tensor cores: naive and tiled keep
 * one accumulator along K (tc:ARCH); splitk:S computes each of its chunks of ceil(K/S) from
 * zero and adds the partials in fp32 in order (mma:ARCH,ceil(K/S): the same cut, the same
 * sequential combination). 0, DRIFT_EINVAL, or DRIFT_EUNSUPPORTED (splitk:S:tree, tc). */
DRIFT_MUST_CHECK int drift_mma_from_gemm(
    drift_mma_kernel_t *out, const drift_gemm_kernel_t *k, drift_tc_arch_t arch, size_t K);

#ifdef __cplusplus
}
#endif

#endif
