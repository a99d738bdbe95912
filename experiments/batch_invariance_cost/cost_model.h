/* cost_model.h — a roofline with bytes as well as FLOPs, and the multiprocessors a kernel
 * actually occupies: modelled GPU time of a GEMM kernel, for cost ratios.
 *
 * Why: a FLOP-only roofline charges a batch-1 product (a matrix-vector product) as if compute
 * bound, when reading B dominates: at M = 1 the time is bytes / bandwidth, and a kernel that
 * leaves multiprocessors idle pays only as far as the busy ones cannot pull the bytes.
 *
 * For C (M x N) = A (M x K) B with tile BM x BN (tiled; naive and tc as 128 x 128) and S K-splits
 * (splitk:S, else 1): units = ceil(M/BM) ceil(N/BN) S tile-slices, active = min(units, sms),
 * waves = ceil(units / sms).
 *   compute = waves * 2 BM' BN ceil(K/S) / (peak / sms),  BM' = min(BM, 16 ceil(M/16)): a tile
 *             pays for its rows in 16-row MMA steps (mma.sync m16n8k16), not for empty ones
 *   bytes   = ceil(N/BN) M K b_in + ceil(M/BM) K N b_in      (A once per column of tiles, B
 *             once per row of tiles) + S M N 4 (partials or output, fp32)
 *             + for S > 1 the reduction pass: S M N 4 read + M N 4 written
 *   memory  = bytes / min(hbm, active * sm_bw)
 *   time    = max(compute, memory)
 * peak = the dense tensor-core rate for the input format when tensor_cores (bf16/fp16, tf32),
 * else the fp32 FMA rate. Device figures are the vendors' published dense peaks; sm_bw, the
 * bandwidth one multiprocessor can pull, is an assumption (4x its fair share hbm / sms), not a
 * measurement. The model ignores caches, launch latency and occupancy limits. */
#ifndef DRIFT_COST_MODEL_H
#define DRIFT_COST_MODEL_H

#include <stddef.h>

#include "drift.h"
#include "format.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *name;
    int sms;
    double tc16;  /* dense bf16/fp16 tensor-core FLOP/s */
    double tc32;  /* dense tf32 tensor-core FLOP/s (0: none) */
    double fp32;  /* fp32 FMA FLOP/s (CUDA cores) */
    double hbm;   /* bytes/s */
    double sm_bw; /* bytes/s one multiprocessor can pull (assumed) */
} drift_device_perf_t;

/* v100 (SXM2), a100 (SXM 80GB), h100 (SXM), b200. 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_device_perf(drift_device_perf_t *d, const char *name);

typedef struct {
    double time, compute, memory; /* seconds */
    double bytes, flops;          /* bytes moved, FLOPs issued (padded) */
    int active, memory_bound;
} drift_cost_t;

/* 0 or DRIFT_EINVAL (bad kernel, zero sizes, no tensor-core rate for that input). */
DRIFT_MUST_CHECK int drift_cost_gemm(drift_cost_t *out, const drift_gemm_kernel_t *k, size_t M, size_t N, size_t K,
    drift_format_t in, int tensor_cores, const drift_device_perf_t *d);

#ifdef __cplusplus
}
#endif

#endif
