/* model.h — a Llama-architecture decoder (llama2.c's model) whose every reduction is a lab
 * computation: one numerics configuration describes a whole run.
 *
 * Forward pass of one token at position pos (as llama2.c's run.c):
 *   x = emb[token]
 *   per layer l:  xb = rmsnorm(x, rms_att[l]);  q,k,v = Wq xb, Wk xb, Wv xb;  RoPE(q, k, pos)
 *                 (pairs (2i, 2i+1) of each head rotated by pos * 10000^(-2i/head));
 *                 cache k, v;  per head h (kv head h / (n_heads / n_kv_heads)):
 *                 a_t = softmax_t(q . k_t / sqrt(head)) over t = 0 .. pos;  o = sum_t a_t v_t;
 *                 x = x + Wo o;  xb = rmsnorm(x, rms_ffn[l]);
 *                 x = x + W2 (silu(W1 xb) * (W3 xb)),  silu(v) = v / (1 + exp(-v))
 *   logits = Wcls rmsnorm(x, rms_final),  rmsnorm(x, w)_i = w_i * x_i / sqrt(mean(x^2) + 1e-5).
 *
 * Numerics (drift_numerics_t):
 *   - each of the five matmul groups (QKV, attention output, MLP up = W1 and W3, MLP down =
 *     W2, LM head) has a recipe IN/ORDER/ACC/OUT (drift_model_recipe_parse): inputs (activations
 *     and weights) rounded RNE to IN, ORDER `seq` (fma chains; which kernel, tiled or
 *     split-K, is chosen per GEMM shape by the kernel policy) or `tc:ARCH` (the tensor-core
 *     block-FMA model of tc_model.h; under the vendor-like policy a split-K choice runs the
 *     model on each K slice and adds the slices in ACC, RNE, in slice order), the result
 *     stored in OUT. Every GEMM goes through the recipe dispatcher
 *     (drift_dispatch_kernel_gemm_b, dispatch.h), which alone knows the tensor-core case.
 *   - weights are first rounded to `weights` (LayerCast: bf16 weights, fp32 compute).
 *   - the residual stream, norms, RoPE, SiLU and softmax are computed in fp32 (as GPU
 *     kernels do) and stored in `act`; RMSNorm's sum of squares is a drift_dot in
 *     `norm_order` with an fp32 accumulator.
 *   - attention is lib/ops/attention (attention.h): the kernel `attn` (standard, flash:Br,Bc,
 *     splitkv:N[,Bc], splitkv:size=S[,Bc]) over a KV cache per (slot, layer) stored in `kv`
 *     (a float format, int8:token or int8:head); q, K, V and P rounded to the QKV recipe's
 *     output format, dot products seq with an fp32 accumulator (fma), softmax in fp32 with
 *     expf, the output stored in `act`. `attn_auto_splits` = 1 turns splitkv:N into what
 *     flash-decoding libraries launch: N chosen per step by FlashAttention-2's
 *     num_splits_heuristic from the number of sequences in the batch x heads per rank, the
 *     `sms` multiprocessors and the key tiles (so N, and the order, depend on the batch).
 *   - kernel policy (policy.h) with `sms` multiprocessors and the split-K minimum slice
 *     `min_slice`: DRIFT_POLICY_MIN_SLICE (256) reproduces drift_policy_choose exactly, but
 *     then no GEMM of stories260K (K <= 172) ever splits, so the vendor-like policy is batch
 *     invariant on it; a smaller min_slice (16: a library tuned for small K) lets the model's
 *     GEMMs split when tiles are few, so the order depends on the batch rows M.
 *   - tensor parallelism: tp = P ranks. Column-parallel Wq, Wk, Wv (by heads; P must divide
 *     n_kv_heads), W1, W3 (hidden split in P chunks of ceil(hidden/P)) and the LM head (vocab
 *     split likewise): each rank's kernel is chosen on its own N. Row-parallel Wo and W2:
 *     rank r multiplies its K slice into an ACC partial, and the P partials are all-reduced
 *     in ACC (RNE), then rounded to OUT. Orders: rank (p0 + p1) + p2 ...; tree (pairwise over
 *     ranks); ring: the flattened M x N buffer is cut into P chunks of ceil(MN/P), and chunk c
 *     is reduced starting at rank c+1: ((p[c+1] + p[c+2]) + ...) + p[c] (indices mod P), as a
 *     ring reduce-scatter does — so under ring an element's order depends on M too.
 *   - exact = 1: the exact-as-possible reference. Everything in fp64 on the fp32 weights:
 *     every matmul, norm and attention dot product and the softmax sum is correctly rounded
 *     to fp64 (drift_exact_dot / drift_exact_sum, the superaccumulator of exact.h); the
 *     elementwise functions (exp, sqrt, pow, sin, cos, division) are glibc fp64 (within 1
 *     ulp). Each operation thus errs by at most about 2^-52 relative, and a whole forward
 *     pass of stories260K stays within ~1e-13 relative of the real-number result — at least
 *     eight orders of magnitude below fp32 effects. tp, policy and formats are ignored.
 *
 * Batching (continuous batching, as a serving engine): a step is one forward pass over M
 * rows drawn from several sequences, each living in a KV-cache slot: a sequence contributes
 * ntok consecutive tokens (its prompt when it joins, one token per step when decoding).
 * Every GEMM sees all M rows at once, so under the vendor-like policy the kernel (and the
 * order) each row gets depends on its companions; under batch-invariant it cannot. */
#ifndef DRIFT_MODEL_H
#define DRIFT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "attention.h"
#include "checkpoint.h"
#include "format.h"
#include "order.h"
#include "policy.h"
#include "recipe.h"
#include "sampler.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DRIFT_OP_QKV = 0,
    DRIFT_OP_ATTN_OUT,
    DRIFT_OP_MLP_UP,
    DRIFT_OP_MLP_DOWN,
    DRIFT_OP_LMHEAD,
    DRIFT_NOPS
} drift_op_t;

/* A matmul group's recipe (recipe.h) in the decoder's short grammar: "IN/ORDER/ACC/OUT" with
 * ORDER seq or tc:ARCH, e.g. fp32/seq/fp32/fp32, bf16/tc:h100/fp32/bf16, where ARCH may be a card
 * of cards.h (tc:rtx4090 is tc:ada, and is printed so); "IN/ORDER/ACC" means
 * OUT = ACC; a bare format "bf16" means bf16/seq/fp32/bf16 (fp32 for fp64: fp64/seq/fp64/fp64).
 * Accumulation is nearest-even with fma. Printed by drift_recipe_print. 0 or DRIFT_EINVAL;
 * DRIFT_EUNSUPPORTED for a tc input the arch lacks or a tc ACC other than fp32/fp16. */
DRIFT_MUST_CHECK int drift_model_recipe_parse(drift_recipe_t *r, const char *spec);

typedef enum {
    DRIFT_ALLREDUCE_RING = 0,
    DRIFT_ALLREDUCE_TREE,
    DRIFT_ALLREDUCE_RANK,
    DRIFT_NALLREDUCE
} drift_allreduce_t;
const char *drift_allreduce_name(drift_allreduce_t a);
DRIFT_MUST_CHECK int drift_allreduce_parse(drift_allreduce_t *a, const char *name);

/* Y[e] = the all-reduce of the P partials part[r * MN + e] (each a value of acc), every
 * addition in acc (RNE), the result rounded to out: rank ((p0 + p1) + p2 ...), tree (pairwise
 * over ranks), or ring (the buffer of MNv >= MN elements cut into P chunks of ceil(MNv/P);
 * chunk c reduced from rank c+1: ((p[c+1] + p[c+2]) + ...) + p[c], ranks mod P). 0 or
 * DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_allreduce(double *Y, const double *part, size_t MN, size_t MNv, int P, drift_allreduce_t how,
    drift_format_t acc, drift_format_t out);

#define DRIFT_TP_MAX 64

/* Which engine computes the forward pass. The lab's decoder follows every field below;
 * llamacpp-cpu is llama.cpp's CPU backend bit for bit (llamacpp_forward.h: a GGUF model's
 * stored Q4_1/Q8_0 weights with activations quantized as ggml does, fp16 KV cache, flash
 * attention; each sequence decoded alone, as its own llama_decode calls), and ignores them. */
typedef enum {
    DRIFT_ENGINE_LAB = 0,
    DRIFT_ENGINE_LLAMACPP_CPU,
    DRIFT_ENGINE_LLAMACPP_CPU_AVX512,
    DRIFT_NENGINES
} drift_engine_t;

typedef struct {
    int exact;                     /* 1: the fp64 exact reference (see above) */
    drift_engine_t engine;         /* DRIFT_ENGINE_LAB */
    drift_recipe_t mm[DRIFT_NOPS]; /* seq or tc:ARCH orders */
    drift_format_t weights;        /* storage format of the weights (default fp32) */
    drift_format_t act;            /* residual stream and elementwise results (fp32) */
    drift_policy_t policy;
    int sms;                     /* multiprocessors the policy fills (132: h100) */
    int min_slice;               /* split-K minimum slice (DRIFT_POLICY_MIN_SLICE) */
    drift_order_t norm_order;    /* RMSNorm sum of squares (seq) */
    drift_attn_kernel_t attn;    /* attention kernel (standard) */
    int attn_auto_splits;        /* 1: splitkv's N picked per step from the batch (see above) */
    drift_kv_format_t kv;        /* KV-cache storage (fp32) */
    int tp;                      /* tensor-parallel ranks (1) */
    drift_allreduce_t allreduce; /* ring */
} drift_numerics_t;

/* fp32 everywhere, seq orders, vendor-like policy on an h100 (132 SMs), min slice 256, tp 1. */
drift_numerics_t drift_numerics_fp32(void);
/* The exact reference. */
drift_numerics_t drift_numerics_exact(void);
/* Set all five matmul recipes at once. */
void drift_numerics_set_mm(drift_numerics_t *nx, const drift_recipe_t *r);
/* A whole-model recipe: "llamacpp-cpu" (the engine; its AVX2 build) or "llamacpp-cpu-avx512"
 * (the same source built with AVX-512), or a matmul recipe for all five groups
 * (drift_model_recipe_parse). 0, DRIFT_EINVAL or DRIFT_EUNSUPPORTED. */
DRIFT_MUST_CHECK int drift_numerics_set_recipe(drift_numerics_t *nx, const char *spec);
/* Validate against a model configuration: 0 or DRIFT_EINVAL / DRIFT_EUNSUPPORTED with the
 * reason (option-like names: "tp", "min-slice", ...) in err. */
DRIFT_MUST_CHECK int drift_numerics_check(
    const drift_numerics_t *nx, const drift_llm_config_t *c, char *err, size_t errsz);
/* Attention kernel spec: attention.h's grammar, plus splitkv:auto[,Bc] (N per step from the
 * batch, attn_auto_splits = 1). 0 or DRIFT_EINVAL with the reason in err. */
DRIFT_MUST_CHECK int drift_numerics_set_attention(drift_numerics_t *nx, const char *spec, char *err, size_t errsz);
/* The kernel's spec as drift_numerics_set_attention reads it. */
int drift_numerics_attention_print(char *buf, size_t size, const drift_numerics_t *nx);
/* FlashAttention-2's num_splits_heuristic (flash_api.cpp): 1 when the blocks fill 80 % of
 * the sms; else the smallest split count whose wave efficiency is within 85 % of the best,
 * at most min(128, sms, key tiles), counts that give the same tiles per split skipped. */
int drift_attn_auto_splits(long blocks, int sms, long key_tiles);
/* One-line description, e.g. "qkv=bf16/tc:h100/fp32/bf16 ... policy=vendor-like tp=2 ring". */
int drift_numerics_print(char *buf, size_t size, const drift_numerics_t *nx);

typedef struct drift_model drift_model_t;

/* Trace hook (layer_drift): called after each sub-block with the residual stream (or the
 * normed input), M rows of dim values each, in row order of the step. */
typedef enum {
    DRIFT_BLOCK_ATTN_NORM = 0,
    DRIFT_BLOCK_ATTN,
    DRIFT_BLOCK_MLP_NORM,
    DRIFT_BLOCK_MLP,
    DRIFT_BLOCK_FINAL_NORM
} drift_block_t;
typedef void (*drift_trace_fn)(void *ctx, int layer, drift_block_t block, const double *x, size_t M, size_t dim);

/* A model over a checkpoint (not copied: ck must outlive the model) with nslots KV-cache
 * slots. 0, or DRIFT_EINVAL / DRIFT_EUNSUPPORTED / DRIFT_ENOMEM with the reason in err. */
DRIFT_MUST_CHECK int drift_model_create(
    drift_model_t **m, const drift_checkpoint_t *ck, const drift_numerics_t *nx, int nslots, char *err, size_t errsz);
void drift_model_free(drift_model_t *m);
const drift_llm_config_t *drift_model_config(const drift_model_t *m);
void drift_model_set_trace(drift_model_t *m, drift_trace_fn fn, void *ctx);

/* The batch the kernels are chosen for (serving-engine shapes without computing the
 * companions): the next steps' rows are the first rows of a batch of `rows` rows from `nseq`
 * sequences (0, 0: the step's own). The kernel policy, the ring all-reduce's chunks, the LM
 * head's rows and splitkv:auto's count then follow that batch; each computed row gets exactly
 * the bits it would get inside the full batch (its results depend only on its own inputs and
 * on those choices; tests/test_model.c holds it against drift_generate with companions).
 * rows must be >= the step's M and nseq >= its sequences (DRIFT_EINVAL at the step otherwise). */
void drift_model_set_shape(drift_model_t *m, size_t rows, int nseq);
/* The choices a step makes for a batch of `rows` rows from `nseq` sequences whose first
 * sequence attends over kv_len keys: split counts of every GEMM (per op and rank), the ring
 * chunk sizes, the attention split count; written to plan (at most cap values). Two steps
 * with equal plans compute the first sequence's rows identically. The count, or
 * DRIFT_EINVAL when cap is too small, DRIFT_EUNSUPPORTED under llamacpp-cpu. */
DRIFT_MUST_CHECK int drift_model_plan(const drift_model_t *m, size_t rows, int nseq, int kv_len, long *plan, int cap);

/* One sequence's share of a step: ntok tokens at positions pos .. pos+ntok-1 of slot. The
 * slot's cache must hold positions 0 .. pos-1 (from earlier steps); a cache holding more is
 * cut back to pos (a sequence restarted or resumed from an earlier step). */
typedef struct {
    int slot, pos, ntok;
    const int *tokens;
} drift_seq_step_t;

/* One forward pass over all rows of the nseq sequences (M = sum ntok, pos + ntok <= seq_len).
 * logits: nseq x vocab, the logits after each sequence's last token. 0 or DRIFT_EINVAL /
 * DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_model_step(drift_model_t *m, double *logits, const drift_seq_step_t *seqs, int nseq);

/* ---- decoding ------------------------------------------------------------------------- */

typedef struct {
    int batch;      /* 1: alone; B: with B-1 companions */
    uint64_t seed;  /* companions' prompts and lengths: stream (seed, "model.companions", 0, 0) */
    int max_prompt; /* companions' prompt lengths uniform in 1 .. max_prompt (default 32) */
    int max_gen;    /* companions' generation lengths uniform in 1 .. max_gen (default 64) */
} drift_batching_t;

/* Per generated token: the token, its logit, the runner-up and its logit; the full logits
 * when keep_logits. */
/* The top two of each step's logits come from metrics.h's drift_top2 (first index wins
 * ties, as run.c's argmax). */
typedef struct {
    int n; /* tokens generated */
    int *token, *top2;
    double *top1_logit, *top2_logit;
    double *logits; /* n x vocab when kept, else NULL */
    int *rows;      /* M of each step (the shapes the kernels saw), n + 1 entries */
} drift_gen_t;

/* Decode one request: prompt (nprompt >= 1 ids; the request's KV slot is 0), then up to
 * ntokens tokens; stops early after generating BOS (id 1) when stop_at_bos, as run.c. The
 * request runs in a batch of bt->batch (bt NULL: alone) with random companions that join
 * with their prompts (prefilled in the step they join), decode greedily and leave after
 * their length, their slot then taken by a new companion: continuous batching. The model
 * needs nslots >= batch. smp: a greedy or sorted-cdf sampler (sampler.h; NULL: greedy), drawn
 * with drift_sample; another kind is DRIFT_EINVAL. Free out with drift_gen_free. */
DRIFT_MUST_CHECK int drift_generate(drift_gen_t *out, drift_model_t *m, const int *prompt, int nprompt, int ntokens,
    int stop_at_bos, const drift_sampler_t *smp, const drift_batching_t *bt, int keep_logits);
void drift_gen_free(drift_gen_t *g);

/* The rows M of each of nsteps steps that drift_generate's request (prompt of nprompt tokens)
 * shares with its companions under bt, computed without running the model (the companions'
 * schedule depends only on their random lengths). 0 or DRIFT_EINVAL / DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_batch_rows(
    int *rows, int nsteps, int nprompt, const drift_batching_t *bt, int vocab, int seq_len);

/* Teacher-forced logits of a fixed sequence run alone in slot 0: logits (n x vocab) after
 * each of tokens[0 .. n-1]. With an exact model this gives the exact logits of every prefix. */
DRIFT_MUST_CHECK int drift_model_score(drift_model_t *m, double *logits, const int *tokens, int n);

/* Beam search: slot dst's cache becomes the first len positions of slot src's (every layer;
 * int8 codes and scales with them), so that a sequence forked from src at position len can
 * go on in dst. dst == src cuts the cache back to len. 0, DRIFT_EINVAL (a slot out of range,
 * len above src's cache) or DRIFT_EUNSUPPORTED (llamacpp-cpu: an engine's context is not
 * copied). */
DRIFT_MUST_CHECK int drift_model_copy_slot(drift_model_t *m, int dst, int src, int len);

#ifdef __cplusplus
}
#endif

#endif
