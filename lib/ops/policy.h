/* policy.h — which GEMM kernel a library would pick for a shape: the source of batch
 * variance, as a model.
 *
 * vendor-like  (a model of cuBLAS / CUTLASS heuristics, not their code)
 *   1. Tiles, largest first: 128x128, 128x64, 64x128, 64x64 (BK = 32 for all). The number
 *      of output tiles of a candidate is ceil(M/BM) * ceil(N/BN). Take the first candidate
 *      whose tiles fill the device (tiles >= sms); if none does, the one with the most
 *      tiles (the first such in the list).
 *   2. Split-K when the chosen tiling leaves multiprocessors idle (tiles < sms): S = the
 *      largest power of two with S <= sms / tiles, S <= K / DRIFT_POLICY_MIN_SLICE and
 *      S <= DRIFT_POLICY_MAX_SPLIT; split when S >= 2. The kernel is then splitk:S (the
 *      partials are reduced in slice order, like a separate reduction pass).
 *   The outcome depends on M, so the same row of A is reduced in a different order when
 *   the batch grows: that is batch variance. The CUDA backend shows the real library.
 * batch-invariant  (after Thinking Machines' batch_invariant_ops)
 *   One fixed tile, tiled:128,128,32, never split K: every output's order is seq over K
 *   whatever M, N, K, so a row's result cannot depend on the batch. */
#ifndef DRIFT_POLICY_H
#define DRIFT_POLICY_H

#include <stddef.h>

#include "drift.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_POLICY_VENDOR_LIKE = 0, DRIFT_POLICY_BATCH_INVARIANT, DRIFT_NPOLICIES } drift_policy_t;

#define DRIFT_POLICY_MIN_SLICE 256 /* no split-K slice shorter than this many k */
#define DRIFT_POLICY_MAX_SPLIT 16

const char *drift_policy_name(drift_policy_t p);                              /* "vendor-like", "batch-invariant" */
DRIFT_MUST_CHECK int drift_policy_parse(drift_policy_t *p, const char *name); /* 0 or DRIFT_EINVAL */

typedef struct {
    const char *name; /* "h100" */
    int sms;          /* multiprocessors */
} drift_device_t;

/* Known devices: every card of cards.h (v100 80 SMs, a100 108, h100 132 (SXM), b200 148, l40s 142,
 * rtx4090 128, ...), by its name in any case; d->name is the card's canonical name. */
DRIFT_MUST_CHECK int drift_device_lookup(drift_device_t *d, const char *name); /* 0 or DRIFT_EINVAL */

/* The kernel the policy picks for C (M x N) = A (M x K) B. sms >= 1. 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_policy_choose(
    drift_gemm_kernel_t *k, drift_policy_t p, size_t M, size_t N, size_t K, int sms);
/* The same rules with the split-K minimum slice as a parameter (S <= K / min_slice in step 2,
 * min_slice >= 1): the decoder's min_slice (model.h), a library tuned for small K. The one
 * implementation of the policies: drift_policy_choose is min_slice = DRIFT_POLICY_MIN_SLICE.
 * 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_policy_choose_slice(
    drift_gemm_kernel_t *k, drift_policy_t p, size_t M, size_t N, size_t K, int sms, int min_slice);

/* Modelled GPU time of a kernel on the shape, in MAC units of one multiprocessor (a toy
 * roofline, for cost ratios only): waves = ceil(tiles * S / sms) rounds of one tile-slice
 * each, a tile-slice costing BM * BN * ceil(K / S) MACs, plus for S > 1 the reduction
 * pass, charged DRIFT_POLICY_REDUCE_COST MAC units per partial element spread over the
 * device. naive is costed as a 128x128 tiling, tc and tiled by their tile (tc: 128x128). */
#define DRIFT_POLICY_REDUCE_COST 64.0
double drift_policy_cost(const drift_gemm_kernel_t *k, size_t M, size_t N, size_t K, int sms);

/* Whether batch size M of a sweep over M = 1..Mmax belongs to the sample a table shows of it:
 * M <= 16, multiples of 32, 2^k - 1, 2^k, 2^k + 1, Mmax, and the first and last M of every run
 * of batch sizes on one kernel (run_end: M is one of those). The batch-invariance experiments
 * show the same rows, so that their tables join on (format, policy, K, M). */
int drift_policy_sampled_m(size_t M, size_t Mmax, int run_end);

#ifdef __cplusplus
}
#endif

#endif
