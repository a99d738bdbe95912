/* llamacpp_forward.c — llama.cpp's CPU forward pass of a llama model, op for op.
 *
 * The graph (src/models/llama.cpp, llama_model_llama::graph, with build_norm, build_qkv,
 * build_attn and build_ffn of src/llama-graph.cpp), for each token row:
 *   x = get_rows(token_embd, token)                       dequantized (Q8_0: q*d, exact)
 *   per layer:
 *     h  = rms_norm(x, eps) * attn_norm                   ggml fuses RMS_NORM + MUL; same bits
 *     q, k, v = Wq h, Wk h, Wv h                          mul_mat: h quantized once per matrix
 *                                                         type (q8_1 / q8_0), one vec_dot per
 *                                                         output (Q4_1 and Q8_0 at n = 1 take no
 *                                                         llamafile / tiled / repack path on AVX2)
 *     q, k = rope_ext(q, k, pos)                          NORMAL mode, theta cache per position
 *     K, V cache[pos] = fp16(k), fp16(v)                  set_rows f32 -> f16, nearest even
 *     a  = flash_attn_ext(q, K, V, causal mask, 1/sqrt(head))
 *     x  = Wo a + x                                       ggml_add(attn_out, inpSA)
 *     h  = rms_norm(x) * ffn_norm
 *     x  = Wdown swiglu(Wgate h, Wup h) + x
 *   last token only (inp_out_ids): logits = Woutput (rms_norm(x) * output_norm)
 * The LM head (Q8_0) over one row is vec_dot_q8_0_q8_0 per vocabulary entry; a batch of two
 * or more output rows would go to llamafile's tinyBLAS instead, which this twin does not
 * model (only the last token has an output here, as in llama.cpp's default).
 *
 * Flash attention: ggml takes the one_chunk path when the chunk has fewer than 64 queries
 * (GGML_FA_TILE_Q) and, for a single query, the KV view (n_kv: the used cells padded to 256,
 * at most n_ctx) is shorter than 512 cells; a chunk of 64 or more queries takes the tiled path
 * (ggml_compute_forward_flash_attn_ext_tiled); both are twinned. A single query over a KV view
 * of 512 or more cells (a position at or beyond 256 with n_ctx >= 512) takes the split-KV path:
 * the KV range cut into n_threads chunks, each run as one_chunk into partials (M, S, VKQ), then
 * ggml_flash_attn_ext_reduce_partials (drift_ggml_flash_attn_split_row, checked against ggml at
 * 1, 2, 5 and 8 threads by tools/peers/ggml_twin_check.c). With one thread (the witness's
 * setting) there is one chunk and the reduction gives back that chunk's result exactly
 * (M_new = M, scale_old = expf(-inf) = 0, scale_new = expf(0) = 1). This is the only place in
 * this graph where llama.cpp's result depends on its thread count (mul_mat outputs are one
 * vec_dot each, the other ops are row-wise, the tiled attention's rows are independent), so
 * drift_llamacpp_set_threads only tells the twin which split to follow. */
#include "llamacpp_forward.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "ggml_cpu.h"
#include "why.h"

#define MAX_LAYERS 256
#define LLAMACPP_UBATCH 512 /* llama.cpp's default n_ubatch (the witness's): one graph per ubatch */

typedef struct {
    const void *data;
    uint32_t type; /* DRIFT_GGML_Q4_1 or DRIFT_GGML_Q8_0 */
    int64_t k, m;  /* ne[0] (input), ne[1] (output) */
} mat_t;

typedef struct {
    const float *attn_norm, *ffn_norm;
    mat_t wq, wk, wv, wo, gate, up, down;
} layer_t;

struct drift_llamacpp {
    int n_layer, dim, hidden, n_head, n_head_kv, head, n_vocab, n_ctx, n_past;
    drift_llamacpp_isa_t isa;
    int n_threads; /* llama.cpp's n_threads being twinned (the split-KV chunking) */
    float eps, freq_base;
    const void *embd;
    uint32_t embd_type;
    const float *out_norm;
    mat_t out;
    layer_t layer[MAX_LAYERS];
    uint16_t *kcache, *vcache; /* [layer][cell][n_head_kv * head] */
    /* scratch, sized for one token row; a chunk is processed row by row except attention */
    float *x, *h, *q, *k, *v, *att, *tmp, *g, *u, *cache;
    void *qa; /* quantized activation of one row */
    int *kv_idx;
};

static int want_f32_vec(const float **out, const drift_gguf_t *g, const char *name, int64_t n, char *err, size_t errsz)
{
    const drift_gguf_tensor_t *t = drift_gguf_tensor(g, name);
    if (!t) {
        return drift_why(err, errsz, DRIFT_EINVAL, "tensor %s: expected present, found absent", name);
    }
    if (t->type != DRIFT_GGML_F32) {
        return drift_why(
            err, errsz, DRIFT_EUNSUPPORTED, "tensor %s: expected type f32, found type id %u", name, t->type);
    }
    if ((int64_t)t->ne[0] != n || t->ne[1] != 1) {
        return drift_why(err, errsz, DRIFT_EINVAL, "tensor %s: expected shape [%lld], found [%llu, %llu]", name,
            (long long)n, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1]);
    }
    *out = (const float *)t->data;
    return 0;
}

static int want_mat(mat_t *m, const drift_gguf_t *g, const char *name, int64_t k, int64_t rows, char *err, size_t errsz)
{
    const drift_gguf_tensor_t *t = drift_gguf_tensor(g, name);
    if (!t) {
        return drift_why(err, errsz, DRIFT_EINVAL, "tensor %s: expected present, found absent", name);
    }
    if (t->type != DRIFT_GGML_Q4_1 && t->type != DRIFT_GGML_Q8_0) {
        return drift_why(
            err, errsz, DRIFT_EUNSUPPORTED, "tensor %s: expected type q4_1 or q8_0, found type id %u", name, t->type);
    }
    if ((int64_t)t->ne[0] != k || (int64_t)t->ne[1] != rows || t->ne[2] != 1) {
        return drift_why(err, errsz, DRIFT_EINVAL, "tensor %s: expected shape [%lld, %lld], found [%llu, %llu, %llu]",
            name, (long long)k, (long long)rows, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
            (unsigned long long)t->ne[2]);
    }
    m->data = t->data;
    m->type = t->type;
    m->k = k;
    m->m = rows;
    return 0;
}

static int get_int(int *out, const drift_gguf_t *g, const char *arch, const char *key, char *err, size_t errsz)
{
    char full[128];
    snprintf(full, sizeof full, "%s.%s", arch, key);
    uint64_t v;
    int rc = drift_gguf_get_u64(g, full, &v, err, errsz);
    if (rc) {
        return rc;
    }
    if (v < 1 || v > (1u << 24)) {
        return drift_why(err, errsz, DRIFT_EINVAL, "%s: expected 1 .. 2^24, found %llu", full, (unsigned long long)v);
    }
    *out = (int)v;
    return 0;
}

void drift_llamacpp_free(drift_llamacpp_t *e)
{
    if (!e) {
        return;
    }
    free(e->kcache);
    free(e->vcache);
    free(e->x);
    free(e->h);
    free(e->q);
    free(e->k);
    free(e->v);
    free(e->att);
    free(e->tmp);
    free(e->g);
    free(e->u);
    free(e->cache);
    free(e->qa);
    free(e->kv_idx);
    free(e);
}

int drift_llamacpp_create(drift_llamacpp_t **out, const drift_gguf_t *g, int n_ctx, char *err, size_t errsz)
{
    *out = NULL;
    if (n_ctx < 1 || n_ctx > (1 << 20)) {
        return drift_why(err, errsz, DRIFT_EINVAL, "n_ctx: expected 1 .. 2^20, found %d", n_ctx);
    }
    drift_gguf_str_t archs;
    int rc = drift_gguf_get_str(g, "general.architecture", &archs, err, errsz);
    if (rc) {
        return rc;
    }
    if (archs.len != 5 || memcmp(archs.s, "llama", 5) != 0) {
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED, "general.architecture: expected llama, found %.*s",
            (int)(archs.len > 40 ? 40 : archs.len), archs.s);
    }
    const char *arch = "llama";
    drift_llamacpp_t *e = calloc(1, sizeof *e);
    if (!e) {
        return drift_why(err, errsz, DRIFT_ENOMEM, "llamacpp: out of memory");
    }
    e->n_ctx = n_ctx;
    e->n_threads = 1;
    if ((rc = get_int(&e->n_layer, g, arch, "block_count", err, errsz)) ||
        (rc = get_int(&e->dim, g, arch, "embedding_length", err, errsz)) ||
        (rc = get_int(&e->hidden, g, arch, "feed_forward_length", err, errsz)) ||
        (rc = get_int(&e->n_head, g, arch, "attention.head_count", err, errsz)) ||
        (rc = get_int(&e->n_head_kv, g, arch, "attention.head_count_kv", err, errsz))) {
        drift_llamacpp_free(e);
        return rc;
    }
    double eps, fb;
    if ((rc = drift_gguf_get_f64(g, "llama.attention.layer_norm_rms_epsilon", &eps, err, errsz)) ||
        (rc = drift_gguf_get_f64(g, "llama.rope.freq_base", &fb, err, errsz))) {
        drift_llamacpp_free(e);
        return rc;
    }
    e->eps = (float)eps;      /* stored as f32: exact */
    e->freq_base = (float)fb; /* idem */
    if (e->n_layer > MAX_LAYERS || e->dim % e->n_head || e->n_head % e->n_head_kv) {
        drift_llamacpp_free(e);
        return drift_why(err, errsz, DRIFT_EINVAL,
            "llama hparams: expected <= %d layers, heads dividing the width and "
            "kv heads dividing the heads, found %d layers, width %d, %d heads, %d kv heads",
            MAX_LAYERS, e->n_layer, e->dim, e->n_head, e->n_head_kv);
    }
    e->head = e->dim / e->n_head;
    uint64_t rot;
    if (drift_gguf_find(g, "llama.rope.dimension_count") &&
        (drift_gguf_get_u64(g, "llama.rope.dimension_count", &rot, err, errsz) || rot != (uint64_t)e->head)) {
        drift_llamacpp_free(e);
        return drift_why(
            err, errsz, DRIFT_EUNSUPPORTED, "llama.rope.dimension_count: expected the head size %d", e->head);
    }
    if (drift_gguf_find(g, "llama.rope.scaling.type") || drift_gguf_find(g, "llama.attention.scale")) {
        drift_llamacpp_free(e);
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED, "llama: rope scaling / attention scale keys are not modelled");
    }
    if (e->head % 32 || e->head > 256 || e->dim % 32 || e->hidden % 32) {
        drift_llamacpp_free(e);
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
            "llama: expected head <= 256 and widths multiples of 32, found "
            "head %d, width %d, hidden %d",
            e->head, e->dim, e->hidden);
    }
    const drift_gguf_tensor_t *te = drift_gguf_tensor(g, "token_embd.weight");
    if (!te || (int64_t)te->ne[0] != e->dim || te->ne[1] < 1 || te->ne[1] > (1u << 24)) {
        drift_llamacpp_free(e);
        return drift_why(err, errsz, DRIFT_EINVAL, "tensor token_embd.weight: expected [%d, n_vocab]", e->dim);
    }
    if (te->type != DRIFT_GGML_Q8_0 && te->type != DRIFT_GGML_F32) {
        drift_llamacpp_free(e);
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
            "tensor token_embd.weight: expected type q8_0 or f32, found type id %u", te->type);
    }
    e->n_vocab = (int)te->ne[1];
    e->embd = te->data;
    e->embd_type = te->type;
    const char *out_name = drift_gguf_tensor(g, "output.weight") ? "output.weight" : "token_embd.weight";
    if ((rc = want_f32_vec(&e->out_norm, g, "output_norm.weight", e->dim, err, errsz)) ||
        (rc = want_mat(&e->out, g, out_name, e->dim, e->n_vocab, err, errsz))) {
        drift_llamacpp_free(e);
        return rc;
    }
    const int kvw = e->n_head_kv * e->head;
    for (int l = 0; l < e->n_layer; l++) {
        layer_t *L = &e->layer[l];
        char n[96];
#define NAME(s) (snprintf(n, sizeof n, "blk.%d." s, l), n)
        if ((rc = want_f32_vec(&L->attn_norm, g, NAME("attn_norm.weight"), e->dim, err, errsz)) ||
            (rc = want_f32_vec(&L->ffn_norm, g, NAME("ffn_norm.weight"), e->dim, err, errsz)) ||
            (rc = want_mat(&L->wq, g, NAME("attn_q.weight"), e->dim, e->dim, err, errsz)) ||
            (rc = want_mat(&L->wk, g, NAME("attn_k.weight"), e->dim, kvw, err, errsz)) ||
            (rc = want_mat(&L->wv, g, NAME("attn_v.weight"), e->dim, kvw, err, errsz)) ||
            (rc = want_mat(&L->wo, g, NAME("attn_output.weight"), e->dim, e->dim, err, errsz)) ||
            (rc = want_mat(&L->gate, g, NAME("ffn_gate.weight"), e->dim, e->hidden, err, errsz)) ||
            (rc = want_mat(&L->up, g, NAME("ffn_up.weight"), e->dim, e->hidden, err, errsz)) ||
            (rc = want_mat(&L->down, g, NAME("ffn_down.weight"), e->hidden, e->dim, err, errsz))) {
            drift_llamacpp_free(e);
            return rc;
        }
        if (drift_gguf_tensor(g, NAME("attn_q.bias")) || drift_gguf_tensor(g, NAME("attn_qkv.weight"))) {
            drift_llamacpp_free(e);
            return drift_why(err, errsz, DRIFT_EUNSUPPORTED, "blk.%d: biases and fused qkv are not modelled", l);
        }
#undef NAME
    }
    const size_t cells = (size_t)e->n_layer * (size_t)n_ctx * (size_t)kvw;
    const size_t wmax = (size_t)(e->hidden > e->dim ? e->hidden : e->dim);
    e->kcache = malloc(cells * sizeof(uint16_t));
    e->vcache = malloc(cells * sizeof(uint16_t));
    e->x = malloc((size_t)n_ctx * (size_t)e->dim * sizeof(float));
    e->h = malloc((size_t)n_ctx * (size_t)e->dim * sizeof(float));
    e->q = malloc((size_t)n_ctx * (size_t)e->dim * sizeof(float));
    e->att = malloc((size_t)n_ctx * (size_t)e->dim * sizeof(float));
    e->k = malloc((size_t)kvw * sizeof(float));
    e->v = malloc((size_t)kvw * sizeof(float));
    e->tmp = malloc(wmax * sizeof(float));
    e->g = malloc((size_t)e->hidden * sizeof(float));
    e->u = malloc((size_t)e->hidden * sizeof(float));
    e->cache = malloc((size_t)e->head * sizeof(float));
    e->qa = malloc(wmax / 32 * sizeof(drift_ggml_q8_1_t));
    e->kv_idx = malloc((size_t)n_ctx * sizeof(int));
    if (!e->kcache || !e->vcache || !e->x || !e->h || !e->q || !e->att || !e->k || !e->v || !e->tmp || !e->g || !e->u ||
        !e->cache || !e->qa || !e->kv_idx) {
        drift_llamacpp_free(e);
        return drift_why(err, errsz, DRIFT_ENOMEM, "llamacpp: out of memory for a cache of %d positions", n_ctx);
    }
    *out = e;
    return 0;
}

int drift_llamacpp_n_vocab(const drift_llamacpp_t *e) { return e->n_vocab; }
void drift_llamacpp_reset(drift_llamacpp_t *e) { e->n_past = 0; }

int drift_llamacpp_set_threads(drift_llamacpp_t *e, int n_threads)
{
    if (n_threads < 1 || n_threads > 512) {
        return DRIFT_EINVAL;
    }
    e->n_threads = n_threads;
    return 0;
}

int drift_llamacpp_set_isa(drift_llamacpp_t *e, drift_llamacpp_isa_t isa)
{
    if (isa != DRIFT_LLAMACPP_AVX2 && isa != DRIFT_LLAMACPP_AVX512) {
        return DRIFT_EINVAL;
    }
    e->isa = isa;
    return 0;
}

/* ggml_compute_forward_mul_mat (ggml-cpu.c) for one activation row: src1 converted with the
 * vec_dot_type's from_float, then ggml_compute_forward_mul_mat_one_chunk's vec_dot per
 * output row (each output is one call, so the chunking and thread split do not change it). */
static void matvec(float *y, const mat_t *w, const float *x, void *qa)
{
    const size_t nb = (size_t)w->k / DRIFT_GGML_QK;
    if (w->type == DRIFT_GGML_Q4_1) {
        drift_ggml_quantize_row_q8_1((drift_ggml_q8_1_t *)qa, x, (size_t)w->k);
        const drift_ggml_q4_1_t *r = (const drift_ggml_q4_1_t *)w->data;
        for (int64_t i = 0; i < w->m; i++) {
            y[i] = drift_ggml_vec_dot_q4_1_q8_1((size_t)w->k, r + (size_t)i * nb, (const drift_ggml_q8_1_t *)qa);
        }
    } else {
        drift_ggml_quantize_row_q8_0((drift_ggml_q8_0_t *)qa, x, (size_t)w->k);
        const drift_ggml_q8_0_t *r = (const drift_ggml_q8_0_t *)w->data;
        for (int64_t i = 0; i < w->m; i++) {
            y[i] = drift_ggml_vec_dot_q8_0_q8_0((size_t)w->k, r + (size_t)i * nb, (const drift_ggml_q8_0_t *)qa);
        }
    }
}

/* ggml_compute_forward_get_rows (ops.cpp) with dequantize_row_q8_0 (ggml-quants.c):
 * y = q * d, a product of an int8 and an fp16 value, exact in fp32. */
static void embed_row(float *y, const drift_llamacpp_t *e, int tok)
{
    if (e->embd_type == DRIFT_GGML_F32) {
        memcpy(y, (const float *)e->embd + (size_t)tok * (size_t)e->dim, (size_t)e->dim * sizeof(float));
        return;
    }
    const drift_ggml_q8_0_t *r = (const drift_ggml_q8_0_t *)e->embd + (size_t)tok * (size_t)(e->dim / 32);
    for (int b = 0; b < e->dim / 32; b++) {
        const float d = drift_ggml_fp16_to_fp32(r[b].d);
        for (int j = 0; j < 32; j++) {
            y[32 * b + j] = (float)r[b].qs[j] * d;
        }
    }
}

int drift_llamacpp_step(drift_llamacpp_t *e, float *logits, int pos, const int *tokens, int ntok)
{
    if (ntok < 1 || pos != e->n_past || pos + ntok > e->n_ctx) {
        return DRIFT_EINVAL;
    }
    for (int t = 0; t < ntok; t++) {
        if (tokens[t] < 0 || tokens[t] >= e->n_vocab) {
            return DRIFT_EINVAL;
        }
    }
    if (ntok > LLAMACPP_UBATCH) { /* llama_decode splits a batch into ubatches of n_ubatch tokens */
        for (int off = 0; off < ntok; off += LLAMACPP_UBATCH) {
            const int n = ntok - off < LLAMACPP_UBATCH ? ntok - off : LLAMACPP_UBATCH;
            const int rc = drift_llamacpp_step(e, logits, pos + off, tokens + off, n);
            if (rc) {
                return rc;
            }
        }
        return 0;
    }
    const int D = e->dim, H = e->head, kvw = e->n_head_kv * H, grp = e->n_head / e->n_head_kv;
    /* the KV view of this ubatch (llama_kv_cache::get_n_kv): used cells padded to 256, at most
     * the cache; one query over 512 cells or more takes the split-KV attention path */
    const int pad = ((pos + ntok + 255) / 256) * 256;
    const int n_kv = pad < e->n_ctx ? pad : e->n_ctx;
    const int split = ntok == 1 && n_kv >= 512;
    const float kq_scale = 1.0f / sqrtf((float)H);
    for (int t = 0; t < ntok; t++) {
        embed_row(e->x + (size_t)t * D, e, tokens[t]);
    }
    for (int l = 0; l < e->n_layer; l++) {
        const layer_t *L = &e->layer[l];
        uint16_t *kc = e->kcache + (size_t)l * (size_t)e->n_ctx * (size_t)kvw;
        uint16_t *vc = e->vcache + (size_t)l * (size_t)e->n_ctx * (size_t)kvw;
        for (int t = 0; t < ntok; t++) {
            float *x = e->x + (size_t)t * D, *q = e->q + (size_t)t * D;
            drift_ggml_rms_norm_mul(e->h, x, L->attn_norm, (size_t)D, e->eps);
            matvec(e->tmp, &L->wq, e->h, e->qa);
            matvec(e->k, &L->wk, e->h, e->qa);
            matvec(e->v, &L->wv, e->h, e->qa);
            drift_ggml_rope_cache(e->cache, pos + t, H, e->freq_base);
            for (int hd = 0; hd < e->n_head; hd++) {
                drift_ggml_rope_norm(q + hd * H, e->tmp + hd * H, e->cache, H);
            }
            for (int hd = 0; hd < e->n_head_kv; hd++) {
                drift_ggml_rope_norm(e->tmp + hd * H, e->k + hd * H, e->cache, H);
            }
            /* ggml_set_rows into the f16 cache: ggml_cpu_fp32_to_fp16, nearest even */
            drift_ggml_fp32_to_fp16_row(kc + (size_t)(pos + t) * kvw, e->tmp, (size_t)kvw);
            drift_ggml_fp32_to_fp16_row(vc + (size_t)(pos + t) * kvw, e->v, (size_t)kvw);
        }
        for (int t = 0; t < ntok; t++) {
            const int n_keys = pos + t + 1; /* the causal mask admits cells 0 .. pos+t */
            for (int c = 0; c < n_keys; c++) {
                e->kv_idx[c] = c;
            }
            for (int hd = 0; hd < e->n_head; hd++) {
                const int hk = hd / grp;
                float *o = e->att + (size_t)t * D + hd * H;
                const float *qr = e->q + (size_t)t * D + hd * H;
                const uint16_t *kh = kc + hk * H, *vh = vc + hk * H;
                if (split) {
                    (e->isa == DRIFT_LLAMACPP_AVX512 ? drift_ggml_flash_attn_split_row512
                                                     : drift_ggml_flash_attn_split_row)(
                        o, qr, kh, vh, (size_t)kvw, (size_t)H, (size_t)n_keys, (size_t)n_kv, e->n_threads, kq_scale);
                } else if (ntok >= 64) { /* GGML_FA_TILE_Q queries or more: the tiled path */
                    (e->isa == DRIFT_LLAMACPP_AVX512 ? drift_ggml_flash_attn_tiled_row512
                                                     : drift_ggml_flash_attn_tiled_row)(
                        o, qr, kh, vh, (size_t)kvw, (size_t)H, (size_t)n_keys, kq_scale);
                } else {
                    (e->isa == DRIFT_LLAMACPP_AVX512 ? drift_ggml_flash_attn_row512 : drift_ggml_flash_attn_row)(
                        o, qr, kh, vh, (size_t)kvw, (size_t)H, e->kv_idx, (size_t)n_keys, kq_scale);
                }
            }
        }
        for (int t = 0; t < ntok; t++) {
            float *x = e->x + (size_t)t * D;
            if (l == e->n_layer - 1 && t != ntok - 1) {
                continue; /* inp_out_ids: after the last layer's attention only output rows go on */
            }
            matvec(e->tmp, &L->wo, e->att + (size_t)t * D, e->qa);
            for (int i = 0; i < D; i++) {
                x[i] = e->tmp[i] + x[i]; /* ggml_add(attn_out, inpSA) */
            }
            drift_ggml_rms_norm_mul(e->h, x, L->ffn_norm, (size_t)D, e->eps);
            matvec(e->g, &L->gate, e->h, e->qa);
            matvec(e->u, &L->up, e->h, e->qa);
            (e->isa == DRIFT_LLAMACPP_AVX512 ? drift_ggml_swiglu512 : drift_ggml_swiglu)(
                e->g, e->g, e->u, (size_t)e->hidden);
            matvec(e->tmp, &L->down, e->g, e->qa);
            for (int i = 0; i < D; i++) {
                x[i] = e->tmp[i] + x[i]; /* ggml_add(ffn_out, ffn_inp) */
            }
        }
    }
    const float *xl = e->x + (size_t)(ntok - 1) * D;
    drift_ggml_rms_norm_mul(e->h, xl, e->out_norm, (size_t)D, e->eps);
    matvec(logits, &e->out, e->h, e->qa);
    e->n_past = pos + ntok;
    return 0;
}
