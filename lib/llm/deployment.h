/* deployment.h — everything a serving stack decides about how one model is computed, as one
 * value: the card, the weights as loaded, the compute formats, the GEMM kernel policy, the
 * attention kernel, the KV cache, the batch the request shares, chunked prefill, prefix
 * caching, tensor parallelism and the sampler. Two deployments that differ in one field are one
 * knob of the troubleshooting checklist; the deployments experiment measures each.
 *
 * Spec (drift_deployment_parse): an optional preset, then KEY=VALUE fields that change it,
 * comma-separated, e.g. "vllm-like,card=rtx4090" or "hf-eager,kv=fp8e4m3"; "@FILE" reads the
 * same fields from a small file (one per line, '#' comments). Without a preset the fields
 * change `hf-eager` on an h100. Fields:
 *   card=NAME        a GPU of cards.h (its tensor-core model and SM count), or cpu (the
 *                    llama.cpp engines only)
 *   engine=E         lab (the lab's decoder, model.h) | llamacpp-cpu | llamacpp-cpu-avx512
 *                    (llama.cpp's CPU backend bit for bit: stored weights, q8 activations,
 *                    fp16 KV cache, its own flash attention; every other field but the
 *                    batch must then be its default)
 *   weights=W        as loaded: fp32 (the stored values as ggml dequantizes them, into fp32:
 *                    a Q4_1 file's weights kept), bf16 or fp16 (those rounded once, RNE)
 *   compute=F        matmul inputs: bf16, fp16, tf32 (the card's tensor-core model, fp32
 *                    accumulation, output stored in F; tf32: fp32), fp32 (fp32 FMA chains,
 *                    as CUDA-core kernels), or a full recipe IN/ORDER/ACC/OUT (model.h)
 *   act=F            residual stream and elementwise results: fp32, bf16, fp16
 *   gemm=P           vendor-like (split-K chosen from the card's SM count) | batch-invariant
 *   attention=K      standard | flash[:Br,Bc] | splitkv:auto (the split count chosen per step
 *                    from the batch, FlashAttention-2's heuristic with the card's SMs) |
 *                    any kernel of attention.h
 *   kv=F             KV-cache storage: a float format, int8:token, int8:head
 *   batch=B          alone (1) | static:B (B requests start together) | continuous:B (B
 *                    slots; the other B-1 hold random companions that join with their
 *                    prompts and leave after their lengths)
 *   padded=yes|no    static batches: every prompt padded to the longest (the rows grow)
 *   prefill-chunk=C  prompts prefilled C tokens a step (0: the whole prompt in one step)
 *   prefix-cache=on|off  the shared prefix's KV (whole blocks of 16 tokens) computed once,
 *                    in the batch of an earlier request, and reused
 *   tp=P, allreduce=ring|tree|rank   tensor-parallel ranks and the all-reduce order
 *   draft=0          speculative decoding's draft length (only 0 here: the speculative
 *                    experiment measures drafts)
 *   sampler=greedy | greedy-ties:EPS   text at temperature 0; with ties, a top-1 that beats the
 *                    top-2 by less than EPS logits counts as a tie, given to the lower token id
 *                    (the tie-breaker of a deterministic-inference setup; every engine)
 * Presets (docs/deployments.md says what each models and what it does not, with sources):
 *   hf-eager       transformers-like eager run: h100, bf16 weights, compute and act, the
 *                  vendor-like policy, standard attention, bf16 KV cache, alone
 *   vllm-like      a vLLM-like GPU server: h100, bf16, vendor-like, splitkv:auto,
 *                  bf16 KV cache, continuous:64, chunked prefill 256, prefix caching on
 *   llamacpp-cpu, llamacpp-cpu-avx512   llama.cpp's CPU backend (its AVX2 / AVX-512 build)
 *   lab-fp32       the lab's fp32 decoder, batch-invariant, alone (a CPU reference run) */
#ifndef DRIFT_DEPLOYMENT_H
#define DRIFT_DEPLOYMENT_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "cards.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_BATCH_ALONE = 0, DRIFT_BATCH_STATIC, DRIFT_BATCH_CONTINUOUS } drift_batch_kind_t;

#define DRIFT_DEPLOY_SPEC_MAX 512
#define DRIFT_DEPLOY_PREFIX_BLOCK 16 /* prefix caching shares whole KV blocks of this many tokens */

typedef struct {
    char preset[32];     /* the preset it started from */
    drift_card_t card;   /* card.name "cpu" for the llama.cpp engines */
    int on_cpu;          /* card=cpu */
    char compute[48];    /* the compute field as given: bf16, fp32, or a recipe */
    drift_numerics_t nx; /* engine, recipes, weights, act, policy + sms, attention, kv, tp */
    drift_batch_kind_t batch_kind;
    int batch; /* requests in the batch, this one included (1 alone) */
    int padded;
    int prefill_chunk; /* 0: the whole prompt in one step */
    int prefix_cache;
    int draft;               /* 0 */
    drift_sampler_t sampler; /* greedy or greedy-ties:EPS (sampler.h): deployments decode at T = 0 */
} drift_deployment_t;

/* Parse spec (above) into d. 0, or DRIFT_EINVAL / DRIFT_EUNSUPPORTED / DRIFT_EIO (an
 * unreadable @FILE) with one line naming the field and the accepted values in err; d is then
 * untouched. */
DRIFT_MUST_CHECK int drift_deployment_parse(drift_deployment_t *d, const char *spec, char *err, size_t errsz);
/* "hf-eager, vllm-like, ..." into buf. */
void drift_deployment_preset_names(char *buf, size_t size);
/* Every field, canonical ("card=a100 engine=lab weights=bf16 compute=bf16 ..."): parsing it
 * gives d back. The length, or DRIFT_EINVAL when it does not fit. */
int drift_deployment_print(char *buf, size_t size, const drift_deployment_t *d);
/* The fields in which a and b differ, space-separated ("card", "batch kv"), "" for none. */
int drift_deployment_diff(char *buf, size_t size, const drift_deployment_t *a, const drift_deployment_t *b);

/* One request decoded greedily under d: prompt (np tokens, of which the first `prefix` are
 * the prefix shared with other requests, 0 for none), then ntokens tokens. The request runs
 * alone in slot 0 of m (created with d->nx and one slot); its companions are not computed:
 * each step's kernels, split counts and all-reduce chunks are chosen for the whole batch's
 * shape (drift_model_set_shape), which gives the request's rows the bits they get inside it.
 * The batch's schedule — companions' prompt and generation lengths, the steps of a chunked
 * prefill, the batch that computed a cached prefix — is drawn from the Philox stream
 * (seed, "deploy.batch", 0, 0): two seeds are two runs whose other requests differ. The
 * llama.cpp engines decode the request alone, whatever the batch. Free out with
 * drift_gen_free; out->rows holds each step's batch rows. 0 or DRIFT_EINVAL / DRIFT_ENOMEM /
 * the model's error. */
DRIFT_MUST_CHECK int drift_deploy_generate(drift_gen_t *out, drift_model_t *m, const drift_deployment_t *d,
    const int *prompt, int np, int prefix, int ntokens, uint64_t seed, int keep_logits);

/* The row counts M in 1 .. maxM at which the vendor-like policy picks other GEMM kernels for
 * the model c's GEMMs at tp = 1 (Wq, Wk/Wv, Wo, W1/W3, W2, LM head) on sms_a than on
 * sms_b multiprocessors (split-K from min_slice): how many, the first and the last (-1: none);
 * drift_model_choose_kernel's error code when it refuses the arguments (sms or min_slice < 1).
 * What a card pair changes in the lab (cards differ in their SM count and tensor-core model). */
int drift_model_kernels_differ(
    const drift_llm_config_t *c, int sms_a, int sms_b, int min_slice, int maxM, int *first, int *last);

#ifdef __cplusplus
}
#endif

#endif
