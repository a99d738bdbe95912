/* test_checkpoint.c — the llama2.c loader: the shipped file's header (its README is the
 * source), a round trip of a generated tiny checkpoint, and refusals of truncated, oversized
 * and malformed files with a message naming what was expected and what was found. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "drift.h"

#define CKPT DRIFT_SOURCE_DIR "/models/stories260K.bin"

/* models/README.md: dim 64, hidden_dim 172, n_layers 5, n_heads 8, n_kv_heads 4, vocab_size
 * 512 (shared classifier), seq_len 512; 1,056,540 bytes. */
Test(checkpoint, shipped_header_matches_its_readme)
{
    drift_checkpoint_t ck;
    char err[DRIFT_LLM_ERR_MAX];
    cr_assert_eq(drift_checkpoint_read(&ck, CKPT, err, sizeof err), 0, "%s", err);
    const drift_llm_config_t *c = &ck.cfg;
    cr_assert(c->dim == 64 && c->hidden_dim == 172 && c->n_layers == 5 && c->n_heads == 8 && c->n_kv_heads == 4 &&
              c->vocab_size == 512 && c->seq_len == 512 && c->shared_classifier);
    cr_assert_eq(28 + 4 * ck.nfloats, 1056540u);
    cr_assert_eq(ck.wcls, ck.token_embedding);
    drift_checkpoint_free(&ck);
}

static drift_llm_config_t tiny(int shared) { return (drift_llm_config_t){16, 24, 2, 4, 2, 37, 12, shared, 0, 0}; }

Test(checkpoint, synthetic_round_trip_and_determinism)
{
    for (int shared = 0; shared < 2; shared++) {
        drift_llm_config_t c = tiny(shared);
        drift_checkpoint_t a, b, r;
        char err[DRIFT_LLM_ERR_MAX], path[] = "/tmp/drift_ckpt_XXXXXX";
        int fd = mkstemp(path);
        cr_assert(fd >= 0);
        close(fd);
        cr_assert_eq(drift_checkpoint_synth(&a, &c, 42, err, sizeof err), 0, "%s", err);
        cr_assert_eq(drift_checkpoint_synth(&b, &c, 42, err, sizeof err), 0, "%s", err);
        cr_assert_eq(memcmp(a.data, b.data, a.nfloats * sizeof(float)), 0, "same seed, same model");
        cr_assert_eq(drift_checkpoint_write(&a, path, err, sizeof err), 0, "%s", err);
        cr_assert_eq(drift_checkpoint_read(&r, path, err, sizeof err), 0, "%s", err);
        cr_assert_eq(memcmp(&r.cfg, &a.cfg, sizeof r.cfg), 0);
        cr_assert_eq(r.nfloats, a.nfloats);
        cr_assert_eq(memcmp(r.data, a.data, a.nfloats * sizeof(float)), 0);
        cr_assert_eq(r.wcls == r.token_embedding, shared);
        drift_checkpoint_free(&a), drift_checkpoint_free(&b), drift_checkpoint_free(&r);
        remove(path);
    }
}

/* A 32-layer synthetic model (sizes the real one lacks) builds. */
Test(checkpoint, synthetic_32_layers)
{
    drift_llm_config_t c = {32, 48, 32, 4, 4, 64, 16, 1, 0, 0};
    drift_checkpoint_t a;
    char err[DRIFT_LLM_ERR_MAX];
    cr_assert_eq(drift_checkpoint_synth(&a, &c, 1, err, sizeof err), 0, "%s", err);
    drift_checkpoint_free(&a);
}

/* ---- refusals: each case edits the header or the length of a valid tiny image ----------- */
typedef struct {
    int field; /* header int to replace (-1: none) */
    int value;
    long size_delta; /* bytes added (or cut) at the end */
    char expect[96]; /* a piece of the message */
} bad_case_t;

static bad_case_t BAD[] = {
    {-1, 0, -4, "truncated"}, {-1, 0, -1, "truncated"}, {-1, 0, 4, "oversized"},
    {0, -64, 0, "dim must be a positive integer, found -64"}, {0, 0, 0, "dim must be a positive integer, found 0"},
    {1, -5, 0, "hidden_dim must be a positive integer, found -5"},
    {2, 0, 0, "n_layers must be a positive integer, found 0"},
    {3, 3, 0, "n_heads must divide dim, found dim 16 and n_heads 3"}, {3, 16, 0, "head size dim/n_heads must be even"},
    {4, 3, 0, "n_kv_heads must divide n_heads, found n_heads 4 and n_kv_heads 3"},
    {4, 8, 0, "n_kv_heads must divide n_heads"}, {5, 0, 0, "vocab_size| must be at least 2, found 0"},
    {5, -1, 0, "vocab_size| must be at least 2, found 1"}, {6, -1, 0, "seq_len must be a positive integer, found -1"},
    {5, 38, 0, "truncated: the header"},   /* the header lies: one more token than stored */
    {6, 13, 0, "truncated"},               /* a longer freq_cis table than stored */
    {1, 2000000000, 0, "imply more than"}, /* sizes that cannot fit */
};

ParameterizedTestParameters(checkpoint, refuses_bad_files)
{
    return cr_make_param_array(bad_case_t, BAD, sizeof BAD / sizeof BAD[0]);
}

ParameterizedTest(bad_case_t *t, checkpoint, refuses_bad_files)
{
    drift_llm_config_t c = tiny(1);
    drift_checkpoint_t a, r;
    char err[DRIFT_LLM_ERR_MAX] = "";
    cr_assert_eq(drift_checkpoint_synth(&a, &c, 3, err, sizeof err), 0);
    size_t size = 28 + 4 * a.nfloats;
    unsigned char *img = calloc(size + 64, 1);
    int32_t h[7] = {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len};
    if (t->field >= 0) h[t->field] = t->value;
    memcpy(img, h, 28);
    memcpy(img + 28, a.data, 4 * a.nfloats);
    int rc = drift_checkpoint_parse(&r, img, (size_t)((long)size + t->size_delta), err, sizeof err);
    cr_assert_eq(rc, DRIFT_EINVAL, "accepted a bad file (%s)", t->expect);
    cr_assert(strstr(err, t->expect), "message '%s' lacks '%s'", err, t->expect);
    cr_assert_null(r.data);
    free(img);
    drift_checkpoint_free(&a);
}

Test(checkpoint, short_and_missing_files)
{
    drift_checkpoint_t r;
    char err[DRIFT_LLM_ERR_MAX];
    cr_assert_eq(drift_checkpoint_parse(&r, "abc", 3, err, sizeof err), DRIFT_EINVAL);
    cr_assert(strstr(err, "expected a header of 28 bytes, found 3 bytes"), "%s", err);
    cr_assert_eq(drift_checkpoint_read(&r, "/nonexistent/x.bin", err, sizeof err), DRIFT_EIO);
    cr_assert(strstr(err, "/nonexistent/x.bin"), "%s", err);
}

/* A tokenizer written here (five pieces plus byte pieces) reads back, decodes and merges. */
Test(checkpoint, tokenizer_round_trip)
{
    char path[] = "/tmp/drift_tok_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *fp = fdopen(fd, "wb");
    enum { V = 264 };
    int32_t maxlen = 8;
    fwrite(&maxlen, 4, 1, fp);
    for (int i = 0; i < V; i++) {
        char piece[16];
        float score = 0;
        if (i == 0)
            strcpy(piece, "<unk>");
        else if (i == 1)
            strcpy(piece, "<s>");
        else if (i == 2)
            strcpy(piece, "</s>");
        else if (i < 259)
            snprintf(piece, sizeof piece, "<0x%02X>", i - 3);
        else if (i == 259)
            strcpy(piece, " "), score = -3;
        else if (i == 260)
            strcpy(piece, " h"), score = -1;
        else if (i == 261)
            strcpy(piece, " hi"), score = -2;
        else
            strcpy(piece, i == 262 ? "h" : "i"), score = -5;
        int32_t len = (int32_t)strlen(piece);
        fwrite(&score, 4, 1, fp), fwrite(&len, 4, 1, fp), fwrite(piece, 1, (size_t)len, fp);
    }
    fclose(fp);
    drift_tokenizer_t t;
    char err[DRIFT_LLM_ERR_MAX];
    cr_assert_eq(drift_tokenizer_read(&t, path, V, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(drift_tokenizer_decode(&t, 5, 261), " hi");
    cr_assert_str_eq(drift_tokenizer_decode(&t, 1, 261), "hi", "the space after BOS is dropped");
    cr_assert_str_eq(drift_tokenizer_decode(&t, 5, 3 + 'A'), "A", "byte pieces decode to the byte");
    int ids[16], n;
    /* " " + "h" + "i"; merges: " h" (-1) first, then " hi" (-2) */
    cr_assert_eq(drift_tokenizer_encode(&t, "hi", 1, ids, 16, &n), 0);
    cr_assert_eq(n, 2);
    cr_assert(ids[0] == 1 && ids[1] == 261, "%d %d", ids[0], ids[1]);
    drift_tokenizer_free(&t);
    cr_assert_eq(
        drift_tokenizer_read(&t, path, V + 1, err, sizeof err), DRIFT_EINVAL, "a vocabulary too large is truncated");
    cr_assert(strstr(err, "expected 265 tokens, found 264"), "%s", err);
    cr_assert_eq(drift_tokenizer_read(&t, path, V - 1, err, sizeof err), DRIFT_EINVAL);
    cr_assert(strstr(err, "oversized"), "%s", err);
    remove(path);
}

/* The header's max_token_length sizes encode()'s merge buffer: -1 once parsed, and then
 * encode() asked malloc for 2 * (size_t)-1 + 2 = 0 bytes and merged into them (found by
 * fuzz/checkpoint.c). Such a header is refused when read; from memory the same. */
Test(checkpoint, tokenizer_header_length_out_of_range)
{
    for (int k = 0; k < 3; k++) {
        const int32_t bad[3] = {-1, 0, DRIFT_TOKEN_LENGTH_MAX + 1};
        unsigned char bytes[4 + 8 + 1];
        memcpy(bytes, &bad[k], 4);
        const float score = 0;
        const int32_t len = 1;
        memcpy(bytes + 4, &score, 4), memcpy(bytes + 8, &len, 4), bytes[12] = 'a';
        char path[] = "/tmp/drift_tok_XXXXXX";
        int fd = mkstemp(path);
        cr_assert(fd >= 0);
        cr_assert_eq(write(fd, bytes, sizeof bytes), (ssize_t)sizeof bytes);
        close(fd);
        drift_tokenizer_t t;
        char err[DRIFT_LLM_ERR_MAX];
        cr_assert_eq(drift_tokenizer_read(&t, path, 1, err, sizeof err), DRIFT_EINVAL, "max_token_length %d", bad[k]);
        cr_assert(strstr(err, "max_token_length") && strstr(err, path), "%s", err);
        cr_assert_eq(drift_tokenizer_parse(&t, bytes, sizeof bytes, "mem", 1, err, sizeof err), DRIFT_EINVAL);
        remove(path);
    }
}
