/* checkpoint.h — the lab's one model type: a Llama-architecture checkpoint read from a
 * llama2.c `.bin` or a GGUF file (checkpoint_gguf.c), validated, written (llama2.c format) or
 * generated synthetically. The tokenizer (`tokenizer.bin`, GGUF vocabularies) is tokenizer.h.
 *
 * Every tensor is held as fp32 values in llama2.c's order below. A GGUF checkpoint also keeps
 * the mapped file (`gguf`): its tensors in the types they are stored in (Q4_1, Q8_0, ...), for
 * recipes that compute on the stored blocks as an engine does. The fp32 tensors are the values
 * ggml's own dequantization gives (ggml_quant.h: exact for most types; for the types with a
 * min, such as Q4_1, one fp32 rounding of d*q + m, as ggml computes it).
 *
 * Checkpoint format (llama2.c, run.c): a header of seven little-endian int32
 *   dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
 * (vocab_size < 0 means the classifier is a separate tensor; |vocab_size| is the vocabulary),
 * then fp32 tensors in this order, each row-major with the output index first (W[out][in]):
 *   token_embedding [vocab][dim]           rms_att [L][dim]
 *   wq [L][dim][dim]   wk [L][kv_dim][dim]   wv [L][kv_dim][dim]   wo [L][dim][dim]
 *   rms_ffn [L][dim]   w1 [L][hidden][dim]   w2 [L][dim][hidden]   w3 [L][hidden][dim]
 *   rms_final [dim]    freq_cis_real [seq_len][head/2]   freq_cis_imag [seq_len][head/2]
 *   wcls [vocab][dim]  (only when vocab_size < 0; otherwise wcls = token_embedding)
 * with head = dim / n_heads and kv_dim = n_kv_heads * head. The freq_cis tables are not
 * used (RoPE is computed, as run.c does) but are kept so that a written file is a valid
 * llama2.c checkpoint.
 *
 * Validation refuses, with DRIFT_EINVAL and a message naming the expected and the found
 * value: a file shorter than the header, a non-positive dim / hidden_dim / n_layers /
 * n_heads / n_kv_heads / seq_len, |vocab_size| < 2, n_heads not dividing dim, an odd head size
 * (RoPE rotates pairs), n_kv_heads not dividing n_heads, sizes whose product overflows or
 * exceeds DRIFT_CKPT_MAX_FLOATS, and a file whose length differs from what the header
 * implies (truncated or oversized). Unreadable files give DRIFT_EIO. */
#ifndef DRIFT_CHECKPOINT_H
#define DRIFT_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "gguf.h"
#include "tokenizer.h" /* a checkpoint comes with its tokenizer: one include gives both */

#ifdef __cplusplus
extern "C" {
#endif

#define DRIFT_CKPT_MAX_FLOATS ((size_t)1 << 34) /* 64 GiB of fp32: anything larger is a lie */
#define DRIFT_LLM_ERR_MAX 256

typedef struct {
    int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
    int shared_classifier; /* 1: wcls is token_embedding (header vocab_size > 0) */
    double rope_theta;     /* RoPE base; 0 means llama2.c's 10000 */
    double rms_eps;        /* RMSNorm epsilon; 0 means llama2.c's 1e-5 */
} drift_llm_config_t;

/* The RoPE base and RMSNorm epsilon of a configuration (its defaults where unset). */
double drift_llm_rope_theta(const drift_llm_config_t *c);
double drift_llm_rms_eps(const drift_llm_config_t *c);

typedef struct {
    drift_llm_config_t cfg;
    float *data; /* one allocation holding every tensor below */
    size_t nfloats;
    float *token_embedding, *rms_att, *wq, *wk, *wv, *wo, *rms_ffn, *w1, *w2, *w3, *rms_final;
    float *freq_real, *freq_imag;
    float *wcls;
    drift_gguf_t *gguf; /* the mapped GGUF file (NULL for llama2.c checkpoints) */
} drift_checkpoint_t;

/* Context length a GGUF model gets in the lab: the file's, capped here (the KV cache of every
 * slot is allocated for it; experiments run prompts plus at most a few hundred tokens). */
#define DRIFT_GGUF_CTX_MAX 1024

/* A checkpoint from a parsed GGUF file (architecture `llama`; any other is refused with one
 * line naming it), which ck then owns (g from malloc: drift_checkpoint_free closes and frees it, also on error). The
 * configuration comes from the metadata, the fp32 tensors from dequantizing the stored ones;
 * every tensor's name, type and shape are checked. 0, DRIFT_EINVAL / DRIFT_EUNSUPPORTED /
 * DRIFT_ENOMEM with the reason in err. */
DRIFT_MUST_CHECK int drift_checkpoint_from_gguf(drift_checkpoint_t *ck, drift_gguf_t *g, char *err, size_t errsz);

/* Check a configuration (the header rules above, vocab_size already made positive) and
 * compute the number of fp32 values after the header into *nfloats (may be NULL). 0 or
 * DRIFT_EINVAL with the reason in err (err may be NULL). */
DRIFT_MUST_CHECK int drift_llm_config_check(const drift_llm_config_t *c, size_t *nfloats, char *err, size_t errsz);

/* Read a checkpoint file: GGUF when it starts with the magic "GGUF", llama2.c otherwise. On
 * error *ck is zeroed and err says what was expected and found. */
DRIFT_MUST_CHECK int drift_checkpoint_read(drift_checkpoint_t *ck, const char *path, char *err, size_t errsz);
/* The same from a memory image of a file (tests use it to corrupt headers cheaply). */
DRIFT_MUST_CHECK int drift_checkpoint_parse(
    drift_checkpoint_t *ck, const void *bytes, size_t size, char *err, size_t errsz);
/* Write ck in llama2.c's format (to path.tmp, then renamed). 0, DRIFT_EINVAL or DRIFT_EIO. */
DRIFT_MUST_CHECK int drift_checkpoint_write(const drift_checkpoint_t *ck, const char *path, char *err, size_t errsz);
/* A synthetic model: weights N(0, 1/fan_in) rounded to fp32, norm weights 1 + N(0, 0.1^2),
 * from the Philox stream (seed, "checkpoint.synth", 0, 0); freq tables as llama2.c exports
 * them. Deterministic for a seed. 0, DRIFT_EINVAL (bad config) or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_checkpoint_synth(
    drift_checkpoint_t *ck, const drift_llm_config_t *cfg, uint64_t seed, char *err, size_t errsz);
void drift_checkpoint_free(drift_checkpoint_t *ck);
/* Point ck's tensor pointers into ck->data (nfloats values, in the order above). */
void drift_checkpoint_map_tensors(drift_checkpoint_t *ck);

#ifdef __cplusplus
}
#endif

#endif
