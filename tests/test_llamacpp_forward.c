/* test_llamacpp_forward.c — drift_llamacpp_create / step on tiny synthetic GGUF models
 * (tests/gguf_build.h): what create refuses, with one line naming the key or tensor, and the
 * step's contract (positions in order, bounds, reset). The numbers of the forward pass have
 * llama.cpp's own record as their witness, in test_llamacpp_twin.c; these cases are about the
 * interface. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "drift.h"
#include "gguf_build.h"
#include "llamacpp_forward.h"

enum { DIM = 64, HID = 96, VOCAB = 8 };

typedef struct {
    const char *arch;
    const char *skip;     /* a tensor left out */
    uint32_t matrix_type; /* type of attn_q */
} tiny_opts;

static void put_q(gguf_build_t *b, const char *name, uint32_t type, uint64_t k, uint64_t m, uint32_t seed)
{
    const size_t nb = (size_t)(k / 32) * (size_t)m;
    const size_t bs = type == DRIFT_GGML_Q8_0 ? 34 : type == DRIFT_GGML_Q4_1 ? 20 : 2 * 32;
    uint8_t *p = malloc(nb * bs);
    cr_assert(p);
    for (size_t i = 0; i < nb * bs; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (uint8_t)(seed >> 24);
    }
    if (type != DRIFT_GGML_F16) {
        for (size_t i = 0; i < nb; i++) { /* scales (and the q4_1 min): small positive / negative fp16 */
            p[i * bs] = 0x00;
            p[i * bs + 1] = 0x24; /* 2^-6 */
            if (type == DRIFT_GGML_Q4_1) {
                p[i * bs + 2] = 0x00;
                p[i * bs + 3] = 0xa8; /* -2^-5 */
            }
        }
    }
    gb_tensor(b, name, type, 2, (uint64_t[]){k, m}, p, nb * bs);
    free(p);
}

static uint8_t *tiny_model(size_t *size, tiny_opts o)
{
    gguf_build_t b;
    gb_init(&b);
    gb_kv_str(&b, "general.architecture", o.arch ? o.arch : "llama");
    gb_kv_u32(&b, "llama.block_count", 1);
    gb_kv_u32(&b, "llama.embedding_length", DIM);
    gb_kv_u32(&b, "llama.feed_forward_length", HID);
    gb_kv_u32(&b, "llama.attention.head_count", 2);
    gb_kv_u32(&b, "llama.attention.head_count_kv", 1);
    gb_kv_f32(&b, "llama.rope.freq_base", 10000.0f);
    gb_kv_f32(&b, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    float ones[HID];
    for (int i = 0; i < HID; i++) {
        ones[i] = 1.0f;
    }
    const char *norms[3] = {"output_norm.weight", "blk.0.attn_norm.weight", "blk.0.ffn_norm.weight"};
    for (int i = 0; i < 3; i++) {
        if (!o.skip || strcmp(o.skip, norms[i])) {
            gb_tensor(&b, norms[i], DRIFT_GGML_F32, 1, (uint64_t[]){DIM}, ones, DIM * 4);
        }
    }
    struct {
        const char *name;
        uint64_t k, m;
    } mats[] = {{"token_embd.weight", DIM, VOCAB}, {"blk.0.attn_q.weight", DIM, DIM},
        {"blk.0.attn_k.weight", DIM, DIM / 2}, {"blk.0.attn_v.weight", DIM, DIM / 2},
        {"blk.0.attn_output.weight", DIM, DIM}, {"blk.0.ffn_gate.weight", DIM, HID}, {"blk.0.ffn_up.weight", DIM, HID},
        {"blk.0.ffn_down.weight", HID, DIM}};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) {
        if (o.skip && !strcmp(o.skip, mats[i].name)) {
            continue;
        }
        uint32_t t = i == 0 ? DRIFT_GGML_Q8_0 : DRIFT_GGML_Q4_1;
        if (i == 1 && o.matrix_type) {
            t = o.matrix_type;
        }
        put_q(&b, mats[i].name, t, mats[i].k, mats[i].m, (uint32_t)(17 + i));
    }
    uint8_t *file = gb_finish(&b, size);
    gb_free(&b);
    return file;
}

static int create_ctx(
    drift_llamacpp_t **e, drift_gguf_t *g, uint8_t **file, tiny_opts o, int n_ctx, char *err, size_t errsz)
{
    size_t size;
    *file = tiny_model(&size, o);
    cr_assert_eq(drift_gguf_parse(g, *file, size, err, errsz), 0, "%s", err);
    return drift_llamacpp_create(e, g, n_ctx, err, errsz);
}

static int create_from(drift_llamacpp_t **e, drift_gguf_t *g, uint8_t **file, tiny_opts o, char *err, size_t errsz)
{
    return create_ctx(e, g, file, o, 32, err, errsz);
}

typedef struct {
    tiny_opts o;
    int code;
    const char *needle; /* the message names this */
} refusal;

Test(llamacpp_forward, refusals_name_the_key_or_tensor)
{
    const refusal cases[] = {
        {{"gpt2", NULL, 0}, DRIFT_EUNSUPPORTED, "general.architecture"},
        {{NULL, "blk.0.ffn_down.weight", 0}, DRIFT_EINVAL, "blk.0.ffn_down.weight"},
        {{NULL, "blk.0.ffn_norm.weight", 0}, DRIFT_EINVAL, "blk.0.ffn_norm.weight"},
        {{NULL, NULL, DRIFT_GGML_F16}, DRIFT_EUNSUPPORTED, "blk.0.attn_q.weight"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[256] = "";
        drift_gguf_t g;
        uint8_t *file;
        drift_llamacpp_t *e = (drift_llamacpp_t *)1;
        const int rc = create_from(&e, &g, &file, cases[i].o, err, sizeof err);
        cr_expect_eq(rc, cases[i].code, "case %zu: code %d, err %s", i, rc, err);
        cr_expect(strstr(err, cases[i].needle) != NULL, "case %zu: '%s' does not name %s", i, err, cases[i].needle);
        cr_expect(strchr(err, '\n') == NULL, "one line");
        cr_expect_null(e);
        drift_gguf_close(&g);
        free(file);
    }
}

Test(llamacpp_forward, step_contract)
{
    char err[256];
    drift_gguf_t g;
    uint8_t *file;
    drift_llamacpp_t *e;
    cr_assert_eq(create_from(&e, &g, &file, (tiny_opts){0}, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_llamacpp_n_vocab(e), VOCAB);
    float a[VOCAB], b[VOCAB];
    const int toks[3] = {1, 5, 2};
    cr_expect_eq(drift_llamacpp_step(e, a, 1, toks, 3), DRIFT_EINVAL, "pos must be the tokens decoded so far (0)");
    cr_expect_eq(drift_llamacpp_step(e, a, 0, toks, 0), DRIFT_EINVAL, "empty chunk");
    cr_expect_eq(drift_llamacpp_step(e, a, 0, (const int[]){VOCAB}, 1), DRIFT_EINVAL, "token out of range");
    cr_expect_eq(drift_llamacpp_step(e, a, 0, toks, 33), DRIFT_EINVAL, "beyond n_ctx");
    cr_assert_eq(drift_llamacpp_step(e, a, 0, toks, 3), 0);
    cr_assert_eq(drift_llamacpp_step(e, a, 3, toks, 1), 0);
    for (int i = 0; i < VOCAB; i++) {
        cr_expect(isfinite(a[i]));
    }
    /* reset: a fresh context decodes the same bits again (nothing leaks between sequences) */
    drift_llamacpp_reset(e);
    cr_assert_eq(drift_llamacpp_step(e, b, 0, toks, 3), 0);
    cr_assert_eq(drift_llamacpp_step(e, b, 3, toks, 1), 0);
    cr_expect_eq(memcmp(a, b, sizeof a), 0);
    drift_llamacpp_free(e);
    drift_gguf_close(&g);
    free(file);
}

/* A chunk of more than 512 tokens is what llama_decode makes of it with n_ubatch 512: the same
 * bits as a step of 512 followed by a step of the rest. */
Test(llamacpp_forward, long_chunk_is_split_into_ubatches_of_512)
{
    char err[256];
    drift_gguf_t g;
    uint8_t *file;
    drift_llamacpp_t *e;
    cr_assert_eq(create_ctx(&e, &g, &file, (tiny_opts){0}, 700, err, sizeof err), 0, "%s", err);
    static int toks[600];
    for (int i = 0; i < 600; i++) {
        toks[i] = (i * 5 + 3) % VOCAB;
    }
    float a[VOCAB], b[VOCAB];
    cr_assert_eq(drift_llamacpp_step(e, a, 0, toks, 600), 0);
    drift_llamacpp_reset(e);
    cr_assert_eq(drift_llamacpp_step(e, b, 0, toks, 512), 0);
    cr_assert_eq(drift_llamacpp_step(e, b, 512, toks + 512, 88), 0);
    cr_expect_eq(memcmp(a, b, sizeof a), 0);
    drift_llamacpp_free(e);
    drift_gguf_close(&g);
    free(file);
}
