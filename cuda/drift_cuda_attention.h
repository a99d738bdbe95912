/* drift_cuda_attention.h — attention on the GPU, the bit-exact twin of drift_attention
 * (lib/ops/attention.h) for the recipes its float path computes.
 *
 * out = drift_attention(out, q, nq, q_pos, kv, key_mask, o) for options with:
 *   kernel   standard (softmax variant safe, normalise_after 0), flash:Br,Bc, splitkv:N[,Bc],
 *            splitkv:size=S[,Bc];
 *   qk, pv   order seq, accumulator fp32 rne with fma; qk.in and pv.in any format but fp64;
 *            pv.in and (standard) qk.out fp32, bf16 or fp16 (the roundings done on the
 *            device); pv.out any format (rounded on the host, as the CPU does);
 *   softmax  accumulator fp32 rne (fma or not for l * alpha + r), sum order seq, exp expf;
 *   cache    any storage (the host loads what the kernel loads: kv->k, kv->v rounded to
 *            qk.in, pv.in).
 * Everything else the CPU accepts is DRIFT_EUNSUPPORTED here (reason in drift_cuda_message()).
 *
 * How it stays bit-exact: every step is the float path of attention.c (one fp32 operation
 * rounded to nearest, fmaf where it uses fmaf, the same order over keys and head_dim); the
 * exponential and logarithm are the correctly rounded fp32 ones, decided on the device as
 * softmax.cu decides them (CUDA's double exp / log, error <= 1 ulp, accepted when y +- 2
 * ulp(double) round alike). A call in which some row could not be decided so is recomputed
 * by drift_attention itself on the host (*host_calls counts them; the chance per exp is
 * about 2^-27).
 *
 * Kernel versions (cuda/attention.cu, llm.c dev/cuda layout): 1 = one thread per (query,
 * head) row, scratch in global memory; the only one so far. Br (flash) only sets the thread
 * block size (clamped to 1..256), as it only groups rows on the CPU. */
#ifndef DRIFT_CUDA_ATTENTION_H
#define DRIFT_CUDA_ATTENTION_H

#include <stddef.h>

#include "drift.h"
#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DRIFT_CUDA_ATTENTION_KERNELS 1

/* Plain C, no device (cuda/args.c): the CPU's verdict first, with the CPU's own message
 * (drift_attn_validate, then drift_attention's checks of the cache, buffers and causal
 * positions), then the subset above (DRIFT_EUNSUPPORTED). The message is in
 * drift_cuda_message(). */
DRIFT_MUST_CHECK int drift_cuda_check_attention(const double *out, const double *q, size_t nq, size_t q_pos,
    const drift_kv_cache_t *kv, const unsigned char *key_mask, const drift_attn_opts_t *o);

/* The entry point (cuda/attention.cu): host pointers, drift_attention's arguments. version
 * 0 = the default; host_calls may be NULL. */
DRIFT_MUST_CHECK int drift_cuda_attention(double *out, const double *q, size_t nq, size_t q_pos,
    const drift_kv_cache_t *kv, const unsigned char *key_mask, const drift_attn_opts_t *o, int version,
    size_t *host_calls);

#ifdef __cplusplus
}
#endif

#endif
