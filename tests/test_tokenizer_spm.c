/* test_tokenizer_spm.c — the SentencePiece tokenizer of GGUF vocabularies (`tokenizer.ggml.model`
 * llama) on a vocabulary built here: no SPM model ships with the lab. The rules are llama.cpp's
 * llm_tokenizer_spm_session (tokenizer.h); every expected id below is derived by hand from them,
 * the derivation written beside the case, and llama.cpp's llama-tokenize gives the same ids on
 * this vocabulary written as a GGUF file (tests/data/tokenizer_vocabs.py says how; all cases but
 * the empty text and the vocabulary without byte tokens, where llama.cpp throws). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "drift.h"
#include "tokenizer.h"

/* ids 0..2 <unk> <s> </s>; 3..258 the byte tokens <0x00>..<0xFF> (id = 3 + byte); then pieces */
enum { UNK = 0, BOS = 1, EOS = 2, SP = 259, A, B, C, AB, BC, SP_A, SP_AB, ABC, SP_B, E_ACUTE, X, Y, XY, YX, NTOK };
#define U2581 "\xE2\x96\x81"
static const struct {
    const char *piece;
    float score;
} k_pieces[NTOK - SP] = {{U2581, -1.0f}, {"a", -2.0f}, {"b", -3.0f}, {"c", -4.0f}, {"ab", -1.0f}, {"bc", -0.5f},
    {U2581 "a", -2.0f}, {U2581 "ab", -1.5f}, {"abc", -0.1f}, {U2581 "b", -3.0f}, {"\xC3\xA9", -2.0f}, {"x", -9.0f},
    {"y", -9.0f}, {"xy", -1.0f}, {"yx", -1.0f}};

static char g_bytes[256][8];
static const char *g_tokens[NTOK];
static float g_scores[NTOK];
static int32_t g_types[NTOK];

/* with_bytes = 0 leaves the byte tokens out (their ids keep other pieces then) */
static void spm(drift_tokenizer_t *t, int add_space_prefix, int with_bytes)
{
    int n = 0;
    memset(g_scores, 0, sizeof g_scores);
    g_tokens[n] = "<unk>", g_types[n++] = DRIFT_TOKEN_UNKNOWN;
    g_tokens[n] = "<s>", g_types[n++] = DRIFT_TOKEN_CONTROL;
    g_tokens[n] = "</s>", g_types[n++] = DRIFT_TOKEN_CONTROL;
    for (int b = 0; with_bytes && b < 256; b++) {
        snprintf(g_bytes[b], sizeof g_bytes[b], "<0x%02X>", b);
        g_tokens[n] = g_bytes[b], g_types[n++] = DRIFT_TOKEN_BYTE;
    }
    for (int i = 0; i < NTOK - SP; i++) {
        g_tokens[n] = k_pieces[i].piece, g_scores[n] = k_pieces[i].score;
        g_types[n++] = DRIFT_TOKEN_NORMAL;
    }
    drift_vocab_t v;
    drift_vocab_init(&v);
    v.model = "llama";
    v.n_tokens = n;
    v.tokens = g_tokens;
    v.scores = g_scores;
    v.types = g_types;
    v.add_space_prefix = add_space_prefix;
    char err[256];
    cr_assert_eq(drift_tokenizer_build(t, &v, err, sizeof err), 0, "%s", err);
}

typedef struct {
    const char *text;
    int add_special, parse_special, space_prefix;
    int n;
    int ids[8];
} spm_case_t;

static const spm_case_t k_cases[] = {
    /* "▁abc": pairs ▁a -2, ab -1, bc -0.5; bc first; then a+bc = abc -0.1; ▁+abc is no token;
     * the queued ab and ▁a are stale -> ▁ abc */
    {"abc", 0, 1, 1, 2, {SP, ABC}},
    /* "▁ab": ab -1 before ▁a -2; then ▁+ab = ▁ab -1.5 -> ▁ab */
    {"ab", 0, 1, 1, 1, {SP_AB}},
    /* the same with BOS: SPM's add_bos defaults to on */
    {"ab", 1, 1, 1, 2, {BOS, SP_AB}},
    /* "▁b" is a token */
    {"b", 0, 1, 1, 1, {SP_B}},
    /* "▁a▁b": ▁a -2 first, then ▁b -3; ▁a+▁ is no token -> ▁a ▁b */
    {"a b", 0, 1, 1, 2, {SP_A, SP_B}},
    /* d is no piece: its byte 0x64 -> 3 + 0x64 */
    {"d", 0, 1, 1, 2, {SP, 3 + 0x64}},
    /* é is a piece of its own; ▁é is none */
    {"\xC3\xA9", 0, 1, 1, 2, {SP, E_ACUTE}},
    /* ü (C3 BC) is none: both its bytes */
    {"\xC3\xBC", 0, 1, 1, 3, {SP, 3 + 0xC3, 3 + 0xBC}},
    /* parsed </s> is cut out; each fragment after a special token gets the space again */
    {"a</s>b", 0, 1, 1, 3, {SP_A, EOS, SP_B}},
    /* not parsed: ▁a, then the bytes of < / s > */
    {"a</s>", 0, 0, 1, 5, {SP_A, 3 + '<', 3 + '/', 3 + 's', 3 + '>'}},
    /* add_space_prefix off: "ab" merges to ab */
    {"ab", 0, 1, 0, 1, {AB}},
    /* "  " with the prefix is ▁▁▁ and ▁▁ is no token */
    {"  ", 0, 1, 1, 3, {SP, SP, SP}},
    /* "▁xyx": xy and yx score alike; the left pair goes first, then xy+x is no token */
    {"xyx", 0, 1, 1, 3, {SP, XY, X}},
    /* the empty text: nothing (BOS only with add_special) */
    {"", 0, 1, 1, 0, {0}},
    {"", 1, 1, 1, 1, {BOS}},
};

Test(tokenizer_spm, hand_cases)
{
    drift_tokenizer_t with_prefix, without;
    spm(&with_prefix, 1, 1);
    spm(&without, 0, 1);
    for (size_t c = 0; c < sizeof k_cases / sizeof k_cases[0]; c++) {
        const spm_case_t *k = &k_cases[c];
        int ids[16], n = -1;
        cr_assert_eq(drift_tokenizer_encode_ex(k->space_prefix ? &with_prefix : &without, k->text, k->add_special,
                         k->parse_special, ids, 16, &n),
            0, "case %zu", c);
        cr_assert_eq(n, k->n, "case %zu '%s': %d ids, expected %d", c, k->text, n, k->n);
        for (int i = 0; i < n; i++)
            cr_assert_eq(ids[i], k->ids[i], "case %zu '%s': id %d is %d", c, k->text, i, ids[i]);
    }
    drift_tokenizer_free(&without);
    drift_tokenizer_free(&with_prefix);
}

Test(tokenizer_spm, decode_and_ends)
{
    drift_tokenizer_t t;
    spm(&t, 1, 1);
    cr_assert_str_eq(drift_tokenizer_decode(&t, BOS, SP_AB), " ab", "U+2581 decodes to a space");
    cr_assert_str_eq(drift_tokenizer_decode(&t, 0, 3 + 'd'), "d", "a byte token is its byte");
    size_t len;
    const char *p = drift_tokenizer_piece(&t, 0, 3, &len);
    cr_assert(len == 1 && p[0] == 0, "<0x00> is one NUL byte");
    cr_assert_str_eq(drift_tokenizer_decode(&t, 0, BOS), "<s>");
    cr_assert_eq(drift_tokenizer_is_eog(&t, EOS), 1, "EOS (llama.cpp's SPM default id 2)");
    cr_assert_eq(drift_tokenizer_is_eog(&t, BOS), 0);
    cr_assert_eq(t.unk_id, UNK);
    int ids[2], n;
    cr_assert_eq(drift_tokenizer_encode_ex(&t, "abc", 1, 1, ids, 2, &n), DRIFT_ERANGE, "BOS + 2 ids in 2");
    drift_tokenizer_free(&t);
}

Test(tokenizer_spm, no_byte_tokens)
{
    drift_tokenizer_t t;
    spm(&t, 1, 0);
    int ids[8], n;
    /* without byte tokens the ids shift: ▁ab is 3 + (SP_AB - SP) */
    cr_assert_eq(drift_tokenizer_encode_ex(&t, "ab", 0, 1, ids, 8, &n), 0);
    cr_assert(n == 1 && ids[0] == 3 + (SP_AB - SP));
    cr_assert_eq(
        drift_tokenizer_encode_ex(&t, "d", 0, 1, ids, 8, &n), DRIFT_EINVAL, "d has no piece and no byte token");
    drift_tokenizer_free(&t);
}
