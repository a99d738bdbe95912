/* fuzz/tokenizer_bpe.c — the GGUF tokenizers (tokenizer.h) encoding any bytes. Two small
 * vocabularies built in memory: byte-level BPE holding all 256 characters of GPT-2's alphabet,
 * some merges and special tokens (so every valid UTF-8 text must decode back to itself), and a
 * SentencePiece one with byte tokens. Encoding either returns ids inside the vocabulary, at most
 * cap of them, or DRIFT_ERANGE; nothing reads outside its buffers. The first input byte picks the
 * capacity and the flags. */
#include <stdio.h>

#include "common.h"
#include "drift.h"
#include "tokenizer.h"
#include "tokenizer_impl.h"
#include "unicode_class.h"

static drift_tokenizer_t g_bpe, g_spm;
static int g_ready;

static void build(void)
{
    static char alphabet[256][4], bytes[256][8];
    static const char *tok[256 + 16], *mer[16];
    static int32_t type[256 + 16];
    static float score[256 + 16];
    uint32_t fwd[256];
    int n = 0, inv[DRIFT_TOK_ALPHABET_END];
    drift_tok_alphabet(fwd, inv);
    for (int b = 0; b < 256; b++) {
        alphabet[b][drift_utf8_put(fwd[b], (unsigned char *)alphabet[b])] = 0;
        tok[n] = alphabet[b], type[n++] = DRIFT_TOKEN_NORMAL;
    }
    static const char *const extra[] = {"he", "ll", "hell", "hello",
        "\xC4\xA0"
        "h",
        "\xC4\xA0"
        "hello",
        "<|im_end|>", "<|im_start|>", "<user>"};
    static const char *const merges[] = {"h e", "l l", "he ll", "hell o", "\xC4\xA0 h", "\xC4\xA0h ello", "e l"};
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++)
        tok[n] = extra[i], type[n++] = i >= 6 ? (i == 8 ? DRIFT_TOKEN_USER_DEFINED : DRIFT_TOKEN_CONTROL) : 1;
    for (size_t i = 0; i < sizeof merges / sizeof *merges; i++) mer[i] = merges[i];
    drift_vocab_t v;
    drift_vocab_init(&v);
    v.model = "gpt2";
    v.pre = "smollm";
    v.n_tokens = n;
    v.tokens = tok;
    v.types = type;
    v.n_merges = (int)(sizeof merges / sizeof *merges);
    v.merges = mer;
    char err[256];
    if (drift_tokenizer_build(&g_bpe, &v, err, sizeof err)) abort();

    n = 0;
    tok[n] = "<unk>", type[n++] = DRIFT_TOKEN_UNKNOWN;
    tok[n] = "<s>", type[n++] = DRIFT_TOKEN_CONTROL;
    tok[n] = "</s>", type[n++] = DRIFT_TOKEN_CONTROL;
    for (int b = 0; b < 256; b++) {
        snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        tok[n] = bytes[b], type[n++] = DRIFT_TOKEN_BYTE;
    }
    static const char *const pieces[] = {"\xE2\x96\x81", "a", "b", "ab",
        "\xE2\x96\x81"
        "a",
        "\xC3\xA9", "abab"};
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++) {
        score[n] = -(float)i;
        tok[n] = pieces[i], type[n++] = DRIFT_TOKEN_NORMAL;
    }
    drift_vocab_init(&v);
    v.model = "llama";
    v.n_tokens = n;
    v.tokens = tok;
    v.types = type;
    v.scores = score;
    if (drift_tokenizer_build(&g_spm, &v, err, sizeof err)) abort();
    g_ready = 1;
}

static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t used;
        uint32_t cp = drift_utf8_next(s + i, n - i, &used);
        unsigned char back[4];
        if (cp == DRIFT_UNICODE_REPLACEMENT || (cp >= 0xD800 && cp <= 0xDFFF) || drift_utf8_put(cp, back) != used ||
            memcmp(back, s + i, used))
            return 0; /* invalid, a surrogate or an overlong form: not given back by decode */
        i += used;
    }
    return 1;
}

static void run(const drift_tokenizer_t *t, const char *text, size_t len, int cap, int flags, int round_trip)
{
    static int ids[8192];
    int n = -1;
    int rc = drift_tokenizer_encode_ex(t, text, flags & 1, (flags >> 1) & 1, ids, cap, &n);
    if (rc != 0 && rc != DRIFT_ERANGE) abort();
    if (n < 0 || n > cap) abort();
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= t->vocab_size) abort();
    if (rc || !round_trip || !(flags & 2) || (flags & 1)) return;
    size_t at = 0; /* every byte has a token and special text prints as itself: s comes back */
    for (int i = 0; i < n; i++) {
        size_t pl;
        const char *p = drift_tokenizer_piece(t, -1, ids[i], &pl);
        if (at + pl > len || memcmp(text + at, p, pl)) abort();
        at += pl;
    }
    if (at != len) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_ready) build();
    if (size < 1) return 0;
    char *text = fuzz_string(data + 1, size - 1);
    if (!text) return 0;
    size_t len = strlen(text);
    int cap = data[0] & 0x80 ? 8192 : 1 + (data[0] & 0x1F), flags = (data[0] >> 5) & 3;
    int ok = valid_utf8((const unsigned char *)text, len);
    run(&g_bpe, text, len, cap, flags, ok);
    run(&g_spm, text, len, cap, flags, 0);
    free(text);
    return 0;
}
