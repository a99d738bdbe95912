/* llamacpp_forward.h — the forward pass of a llama-architecture GGUF model as llama.cpp's CPU
 * backend computes it (AVX2 build, GGML_NATIVE=OFF: AVX2 + FMA + F16C), bit for bit: weights
 * kept quantized and activations quantized the way ggml-cpu does (q8_1 for Q4_1 matrices, q8_0
 * for Q8_0 ones), flash attention (what llama.cpp's default `auto` resolves to on the CPU) over
 * an fp16 KV cache, the kernels of lib/ops/ggml_cpu.h in the order of llama.cpp's graph
 * (src/models/llama.cpp, src/llama-graph.cpp).
 *
 * One sequence. A step takes a chunk of ntok tokens at positions pos .. pos+ntok-1 — what one
 * llama_decode call of a batch with those tokens computes — appends their K and V to the
 * cache and returns the logits after the last token (llama.cpp's default: only the last token
 * of a batch has an output; a chunk of more than 512 tokens is computed as llama.cpp's default
 * n_ubatch = 512 splits it, one graph per 512 tokens). Steps must follow each other: pos of a step is the number of
 * tokens already decoded (0 after create). Greedy decoding with llama.cpp: step(prompt, n,
 * pos 0), then step(&next, 1, pos n), step(&next, 1, pos n+1), ...
 *
 * Supported (anything else is refused at create with one line naming the tensor or key):
 * matrices Q4_1 or Q8_0, token embedding Q8_0 or F32 (tied as the LM head when output.weight
 * is absent), norms F32, head size a multiple of 32 and at most 256, no biases, no rope
 * scaling. What is twinned exactly and what is not: see llamacpp_forward.c. */
#ifndef DRIFT_LLAMACPP_FORWARD_H
#define DRIFT_LLAMACPP_FORWARD_H

#include <stddef.h>

#include "drift.h"
#include "gguf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct drift_llamacpp drift_llamacpp_t;

/* A model over the tensors of g (which must outlive it: weights are read in place) with a KV
 * cache of n_ctx positions (llama.cpp's witness uses 512). 0, DRIFT_EINVAL (a missing key or
 * tensor, a shape that does not fit; err says which), DRIFT_EUNSUPPORTED (a type or
 * architecture this twin does not model), DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_llamacpp_create(
    drift_llamacpp_t **out, const drift_gguf_t *g, int n_ctx, char *err, size_t errsz);
void drift_llamacpp_free(drift_llamacpp_t *e);

int drift_llamacpp_n_vocab(const drift_llamacpp_t *e);

/* Decode tokens[0 .. ntok) at positions pos .. pos+ntok-1; logits (n_vocab floats) after the
 * last one. 0, or DRIFT_EINVAL (pos not the number of tokens decoded so far, ntok < 1,
 * pos + ntok > n_ctx, a token id out of range). */
DRIFT_MUST_CHECK int drift_llamacpp_step(drift_llamacpp_t *e, float *logits, int pos, const int *tokens, int ntok);

/* Which build of ggml-cpu to twin: the AVX2 one (default; GGML_NATIVE=OFF with AVX2 + FMA +
 * F16C) or the AVX-512 one (GGML_AVX512 + VBMI + VNNI + BF16; the kernels that differ are listed
 * in ggml_cpu.h). 0, or DRIFT_EINVAL. Both are held against records of the matching build. */
typedef enum { DRIFT_LLAMACPP_AVX2 = 0, DRIFT_LLAMACPP_AVX512 = 1 } drift_llamacpp_isa_t;
DRIFT_MUST_CHECK int drift_llamacpp_set_isa(drift_llamacpp_t *e, drift_llamacpp_isa_t isa);

/* The n_threads of the llama.cpp run to twin (default 1, the witness's). It changes one thing
 * in llama.cpp's result: the split-KV attention of a single token whose KV view reaches 512
 * cells (positions >= 256 with n_ctx >= 512), cut into n_threads chunks. The twin itself always
 * computes on the calling thread. 0, or DRIFT_EINVAL (outside 1 .. 512). */
DRIFT_MUST_CHECK int drift_llamacpp_set_threads(drift_llamacpp_t *e, int n_threads);

/* Forget the cache (a fresh context, as the witness uses per prompt). */
void drift_llamacpp_reset(drift_llamacpp_t *e);

#ifdef __cplusplus
}
#endif

#endif
