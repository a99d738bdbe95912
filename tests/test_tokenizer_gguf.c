/* test_tokenizer_gguf.c — a vocabulary read from a GGUF file's tokenizer.ggml.* metadata
 * (drift_tokenizer_from_gguf): a small file written here (tests/gguf_build.h) tokenizes as the
 * same vocabulary does in memory (ids derived by hand in test_tokenizer_bpe.c and
 * test_tokenizer_spm.c, and llama.cpp's there too), and every lie is refused with one line that
 * names the key, what was expected and what was found. */
#include <criterion/criterion.h>
#include <string.h>

#include "drift.h"
#include "gguf.h"
#include "gguf_build.h"
#include "tokenizer.h"

static const char *const k_tokens[] = {"<|end|>", "a", "b", "c", "ab", "bc", "abc", "\xC4\xA0",
    "\xC4\xA0"
    "a",
    "\xC4\xA0"
    "ab",
    "1", "\xC4\x8A", "!"};
enum { NTOK = 13 };
static const int32_t k_types[NTOK] = {3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const char *const k_merges[] = {"a b", "b c", "\xC4\xA0 a", "ab c",
    "\xC4\xA0"
    "a b"};

typedef enum {
    VALID,
    NO_MODEL,
    MODEL_BERT,
    NO_PRE,
    PRE_QWEN2,
    TOKENS_U32,
    NO_TOKENS,
    TYPES_SHORT,
    TYPES_STRINGS,
    NO_MERGES,
    BOS_OUTSIDE,
    ADD_BOS_U32,
    SCORES_STRINGS,
    NCASES
} lie_t;

static const struct {
    lie_t lie;
    int rc;
    const char *says[3]; /* what the message must hold */
} k_lies[] = {
    {NO_MODEL, DRIFT_EINVAL, {"tokenizer.ggml.model", "missing"}},
    {MODEL_BERT, DRIFT_EUNSUPPORTED, {"tokenizer.ggml.model", "'bert'", "accepted: gpt2, llama"}},
    {NO_PRE, DRIFT_EUNSUPPORTED, {"tokenizer.ggml.pre", "missing", "accepted: gpt-2, smollm"}},
    {PRE_QWEN2, DRIFT_EUNSUPPORTED, {"tokenizer.ggml.pre", "'qwen2'", "accepted: gpt-2, smollm"}},
    {TOKENS_U32, DRIFT_EINVAL, {"tokenizer.ggml.tokens", "expected an array of string", "found u32"}},
    {NO_TOKENS, DRIFT_EINVAL, {"tokenizer.ggml.tokens", "missing"}},
    {TYPES_SHORT, DRIFT_EINVAL, {"tokenizer.ggml.token_type", "at least 13", "found 2"}},
    {TYPES_STRINGS, DRIFT_EINVAL, {"tokenizer.ggml.token_type", "array of i32", "found array of string"}},
    {NO_MERGES, DRIFT_EINVAL, {"tokenizer.ggml.merges", "missing"}},
    {BOS_OUTSIDE, DRIFT_EINVAL, {"tokenizer.ggml.bos_token_id", "below 13", "found 99"}},
    {ADD_BOS_U32, DRIFT_EINVAL, {"tokenizer.ggml.add_bos_token", "bool", "u32"}},
    {SCORES_STRINGS, DRIFT_EINVAL, {"tokenizer.ggml.scores", "array of f32", "found array of string"}},
};

/* The small BPE vocabulary as a GGUF file, with one lie. */
static uint8_t *bpe_file(lie_t lie, size_t *size)
{
    gguf_build_t b;
    gb_init(&b);
    gb_kv_str(&b, "general.architecture", "llama");
    if (lie != NO_MODEL) gb_kv_str(&b, "tokenizer.ggml.model", lie == MODEL_BERT ? "bert" : "gpt2");
    if (lie != NO_PRE) gb_kv_str(&b, "tokenizer.ggml.pre", lie == PRE_QWEN2 ? "qwen2" : "gpt-2");
    if (lie == TOKENS_U32)
        gb_kv_u32(&b, "tokenizer.ggml.tokens", 13);
    else if (lie != NO_TOKENS)
        gb_kv_str_array(&b, "tokenizer.ggml.tokens", k_tokens, NTOK);
    if (lie == TYPES_STRINGS)
        gb_kv_str_array(&b, "tokenizer.ggml.token_type", k_tokens, NTOK);
    else
        gb_kv_array(&b, "tokenizer.ggml.token_type", DRIFT_GGUF_I32, lie == TYPES_SHORT ? 2 : NTOK, k_types,
            (lie == TYPES_SHORT ? 2 : NTOK) * sizeof(int32_t));
    if (lie == SCORES_STRINGS) gb_kv_str_array(&b, "tokenizer.ggml.scores", k_tokens, NTOK);
    if (lie != NO_MERGES) gb_kv_str_array(&b, "tokenizer.ggml.merges", k_merges, 5);
    gb_kv_u32(&b, "tokenizer.ggml.bos_token_id", lie == BOS_OUTSIDE ? 99 : 0);
    if (lie == ADD_BOS_U32)
        gb_kv_u32(&b, "tokenizer.ggml.add_bos_token", 1);
    else
        gb_kv_bool(&b, "tokenizer.ggml.add_bos_token", 1);
    uint8_t *file = gb_finish(&b, size);
    gb_free(&b);
    return file;
}

Test(tokenizer_gguf, bpe_file_reads_as_in_memory)
{
    size_t size;
    uint8_t *file = bpe_file(VALID, &size);
    drift_gguf_t g;
    drift_tokenizer_t t;
    char err[256];
    cr_assert_eq(drift_gguf_parse(&g, file, size, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_tokenizer_from_gguf(&t, &g, err, sizeof err), 0, "%s", err);
    drift_gguf_close(&g);
    free(file); /* the tokenizer keeps copies */
    int ids[8], n;
    /* " ab" is Ġ ab (test_tokenizer_bpe.c); add_bos_token puts bos_token_id 0 first */
    cr_assert_eq(drift_tokenizer_encode_ex(&t, " ab", 1, 1, ids, 8, &n), 0);
    cr_assert(n == 3 && ids[0] == 0 && ids[1] == 7 && ids[2] == 4, "n %d", n);
    cr_assert_eq(t.add_bos, 1);
    cr_assert_eq(t.eos_id, 11, "no eos_token_id: llama.cpp's BPE default 11");
    drift_tokenizer_free(&t);
}

Test(tokenizer_gguf, lies_are_refused)
{
    for (size_t c = 0; c < sizeof k_lies / sizeof k_lies[0]; c++) {
        size_t size;
        uint8_t *file = bpe_file(k_lies[c].lie, &size);
        drift_gguf_t g;
        drift_tokenizer_t t;
        char err[256];
        cr_assert_eq(drift_gguf_parse(&g, file, size, err, sizeof err), 0, "%s", err);
        int rc = drift_tokenizer_from_gguf(&t, &g, err, sizeof err);
        cr_assert_eq(rc, k_lies[c].rc, "lie %d: rc %d (%s)", k_lies[c].lie, rc, err);
        cr_assert(!strchr(err, '\n'), "one line: %s", err);
        for (int k = 0; k < 3 && k_lies[c].says[k]; k++)
            cr_assert(strstr(err, k_lies[c].says[k]), "lie %d: '%s' lacks '%s'", k_lies[c].lie, err, k_lies[c].says[k]);
        drift_gguf_close(&g);
        free(file);
    }
}

/* SentencePiece from a file: scores as f32, add_space_prefix read, the byte tokens found */
Test(tokenizer_gguf, spm_file)
{
    static const char *const tok[] = {"<unk>", "<s>", "</s>", "<0x64>", "\xE2\x96\x81", "a",
        "\xE2\x96\x81"
        "a"};
    static const float score[] = {0, 0, 0, 0, -1.0f, -2.0f, -2.0f};
    static const int32_t type[] = {2, 3, 3, 6, 1, 1, 1};
    gguf_build_t b;
    gb_init(&b);
    gb_kv_str(&b, "tokenizer.ggml.model", "llama");
    gb_kv_str_array(&b, "tokenizer.ggml.tokens", tok, 7);
    gb_kv_array(&b, "tokenizer.ggml.scores", DRIFT_GGUF_F32, 7, score, sizeof score);
    gb_kv_array(&b, "tokenizer.ggml.token_type", DRIFT_GGUF_I32, 7, type, sizeof type);
    gb_kv_bool(&b, "tokenizer.ggml.add_space_prefix", 1);
    size_t size;
    uint8_t *file = gb_finish(&b, &size);
    gb_free(&b);
    drift_gguf_t g;
    drift_tokenizer_t t;
    char err[256];
    cr_assert_eq(drift_gguf_parse(&g, file, size, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_tokenizer_from_gguf(&t, &g, err, sizeof err), 0, "%s", err);
    int ids[8], n;
    /* BOS (SPM default 1, add_bos default on), then "▁a" merged; "d" is no piece: its byte token */
    cr_assert_eq(drift_tokenizer_encode_ex(&t, "ad", 1, 1, ids, 8, &n), 0);
    cr_assert(n == 3 && ids[0] == 1 && ids[1] == 6 && ids[2] == 3, "n %d", n);
    cr_assert_eq(drift_tokenizer_encode_ex(&t, "e", 0, 1, ids, 8, &n), DRIFT_EINVAL, "e has no byte token");
    drift_tokenizer_free(&t);
    drift_gguf_close(&g);
    free(file);
}
