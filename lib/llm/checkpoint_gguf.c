/* checkpoint_gguf.c — a GGUF file as the lab's checkpoint (see checkpoint.h).
 *
 * Architecture `llama` (Llama 2/3, SmolLM2, TinyLlama shapes): the configuration from
 * llama.* metadata, the tensors by llama.cpp's names (token_embd, blk.N.attn_norm, attn_q,
 * attn_k, attn_v, attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down, output_norm, and output
 * when the classifier is not tied). A GGUF tensor's ne[0] is its contiguous dimension, so a
 * matrix of ne {in, out} is W[out][in], llama2.c's layout. ffn_gate is llama2.c's w1 (the one
 * SiLU is applied to), ffn_up is w3, ffn_down is w2. */
#include "checkpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "why.h"

static int get_int(const drift_gguf_t *g, const char *key, int *out, int required, int dflt, char *err, size_t errsz)
{
    if (!drift_gguf_find(g, key)) {
        if (required) return drift_why(err, errsz, DRIFT_EINVAL, "metadata: %s is missing", key);
        *out = dflt;
        return 0;
    }
    uint64_t v;
    int rc = drift_gguf_get_u64(g, key, &v, err, errsz);
    if (rc) return rc;
    if (v < 1 || v > (1u << 30))
        return drift_why(
            err, errsz, DRIFT_EINVAL, "metadata: %s must be in 1 .. 2^30, found %llu", key, (unsigned long long)v);
    *out = (int)v;
    return 0;
}

static int get_real(const drift_gguf_t *g, const char *key, double *out, double dflt, char *err, size_t errsz)
{
    if (!drift_gguf_find(g, key)) return *out = dflt, 0;
    int rc = drift_gguf_get_f64(g, key, out, err, errsz);
    if (rc) return rc;
    if (!(*out > 0) || *out > 1e30)
        return drift_why(err, errsz, DRIFT_EINVAL, "metadata: %s must be a positive number, found %g", key, *out);
    return 0;
}

/* The tensor `name`, of shape ne0 x ne1 (ne1 = 1 for a vector), dequantized into dst. */
static int load(
    const drift_gguf_t *g, const char *name, uint64_t ne0, uint64_t ne1, float *dst, char *err, size_t errsz)
{
    const drift_gguf_tensor_t *t = drift_gguf_tensor(g, name);
    if (!t) return drift_why(err, errsz, DRIFT_EINVAL, "tensor %s is missing", name);
    uint64_t rest = 1;
    for (uint32_t i = 2; i < t->n_dims; i++) rest *= t->ne[i];
    uint64_t got1 = t->n_dims >= 2 ? t->ne[1] : 1;
    if (t->ne[0] != ne0 || got1 != ne1 || rest != 1)
        return drift_why(err, errsz, DRIFT_EINVAL, "tensor %s: expected shape {%llu, %llu}, found {%llu, %llu}%s", name,
            (unsigned long long)ne0, (unsigned long long)ne1, (unsigned long long)t->ne[0], (unsigned long long)got1,
            rest != 1 ? " and more dimensions" : "");
    if (drift_ggml_dequantize(dst, t->data, t->type, (size_t)(ne0 * ne1)))
        return drift_why(
            err, errsz, DRIFT_EINVAL, "tensor %s: type %s cannot be dequantized", name, drift_ggml_type_name(t->type));
    return 0;
}

static int from_gguf(drift_checkpoint_t *ck, const drift_gguf_t *g, char *err, size_t errsz)
{
    drift_gguf_str_t arch;
    int rc = drift_gguf_get_str(g, "general.architecture", &arch, err, errsz);
    if (rc) return rc;
    if (arch.len != 5 || memcmp(arch.s, "llama", 5))
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED, "architecture '%.*s' is not supported (accepted: llama)",
            (int)(arch.len > 40 ? 40 : arch.len), arch.s);
    drift_llm_config_t c;
    memset(&c, 0, sizeof c);
    int ctx = 0, rot = 0;
    if ((rc = get_int(g, "llama.embedding_length", &c.dim, 1, 0, err, errsz)) ||
        (rc = get_int(g, "llama.feed_forward_length", &c.hidden_dim, 1, 0, err, errsz)) ||
        (rc = get_int(g, "llama.block_count", &c.n_layers, 1, 0, err, errsz)) ||
        (rc = get_int(g, "llama.attention.head_count", &c.n_heads, 1, 0, err, errsz)) ||
        (rc = get_int(g, "llama.attention.head_count_kv", &c.n_kv_heads, 0, c.n_heads, err, errsz)) ||
        (rc = get_int(g, "llama.context_length", &ctx, 1, 0, err, errsz)) ||
        (rc = get_real(g, "llama.rope.freq_base", &c.rope_theta, 10000.0, err, errsz)) ||
        (rc = get_real(g, "llama.attention.layer_norm_rms_epsilon", &c.rms_eps, 1e-5, err, errsz)))
        return rc;
    const drift_gguf_tensor_t *emb = drift_gguf_tensor(g, "token_embd.weight");
    if (!emb || emb->n_dims != 2)
        return drift_why(err, errsz, DRIFT_EINVAL, "tensor token_embd.weight is missing or not a matrix");
    if (emb->ne[1] < 2 || emb->ne[1] > (1u << 30))
        return drift_why(err, errsz, DRIFT_EINVAL, "tensor token_embd.weight: vocabulary of %llu rows",
            (unsigned long long)emb->ne[1]);
    c.vocab_size = (int)emb->ne[1];
    c.seq_len = ctx < DRIFT_GGUF_CTX_MAX ? ctx : DRIFT_GGUF_CTX_MAX;
    c.shared_classifier = drift_gguf_tensor(g, "output.weight") == NULL;
    if ((rc = drift_llm_config_check(&c, NULL, err, errsz))) return rc;
    int head = c.dim / c.n_heads;
    if ((rc = get_int(g, "llama.rope.dimension_count", &rot, 0, head, err, errsz))) return rc;
    if (rot != head) /* partial rotary embeddings are another architecture */
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
            "metadata: llama.rope.dimension_count %d differs from the head size %d", rot, head);
    const drift_gguf_kv_t *scaling = drift_gguf_find(g, "llama.rope.scaling.type");
    if (scaling && !(scaling->type == DRIFT_GGUF_STRING && scaling->str.len == 4 && !memcmp(scaling->str.s, "none", 4)))
        return drift_why(
            err, errsz, DRIFT_EUNSUPPORTED, "metadata: RoPE scaling (llama.rope.scaling.type) is not modelled");
    size_t n;
    if ((rc = drift_llm_config_check(&c, &n, err, errsz))) return rc;
    ck->data = calloc(n, sizeof(float));
    if (!ck->data) return drift_why(err, errsz, DRIFT_ENOMEM, "out of memory for %zu fp32 values", n);
    ck->nfloats = n;
    ck->cfg = c;
    drift_checkpoint_map_tensors(ck);
    uint64_t d = (uint64_t)c.dim, h = (uint64_t)c.hidden_dim, kv = (uint64_t)c.n_kv_heads * (uint64_t)head;
    if ((rc = load(g, "token_embd.weight", d, (uint64_t)c.vocab_size, ck->token_embedding, err, errsz))) return rc;
    if ((rc = load(g, "output_norm.weight", d, 1, ck->rms_final, err, errsz))) return rc;
    if (!c.shared_classifier && (rc = load(g, "output.weight", d, (uint64_t)c.vocab_size, ck->wcls, err, errsz)))
        return rc;
    for (int l = 0; l < c.n_layers; l++) {
        size_t L = (size_t)l;
        struct {
            const char *name;
            uint64_t ne0, ne1;
            float *dst;
        } t[] = {{"attn_norm", d, 1, ck->rms_att + L * d}, {"attn_q", d, d, ck->wq + L * d * d},
            {"attn_k", d, kv, ck->wk + L * kv * d}, {"attn_v", d, kv, ck->wv + L * kv * d},
            {"attn_output", d, d, ck->wo + L * d * d}, {"ffn_norm", d, 1, ck->rms_ffn + L * d},
            {"ffn_gate", d, h, ck->w1 + L * h * d}, {"ffn_down", h, d, ck->w2 + L * d * h},
            {"ffn_up", d, h, ck->w3 + L * h * d}};
        for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
            char name[64];
            snprintf(name, sizeof name, "blk.%d.%s.weight", l, t[i].name);
            if ((rc = load(g, name, t[i].ne0, t[i].ne1, t[i].dst, err, errsz))) return rc;
        }
    }
    return 0;
}

int drift_checkpoint_from_gguf(drift_checkpoint_t *ck, drift_gguf_t *g, char *err, size_t errsz)
{
    if (!ck || !g) return drift_why(err, errsz, DRIFT_EINVAL, "no GGUF file");
    memset(ck, 0, sizeof *ck);
    ck->gguf = g;
    int rc = from_gguf(ck, g, err, errsz);
    if (rc) drift_checkpoint_free(ck);
    return rc;
}
