/* test_tokenizer_bpe.c — the byte-level BPE tokenizer (tokenizer.h) and its pre-tokenizers
 * (pretok.h).
 *
 * Witnesses: SmolLM2's ids come from llama.cpp itself: tests/data/smollm2_tokens.tsv was written
 * by drift-llama-witness --tokenize (llama_tokenize with add_special=false, parse_special=true)
 * from tests/data/smollm2_strings.txt; a few parse_special=false cases below were printed by
 * llama.cpp's `llama-tokenize -m MODEL -p TEXT --ids --no-bos --no-parse-special` (same build,
 * commit 0c1e570). The pre-tokenizer splits and the small in-memory vocabulary's ids are derived
 * by hand from the rules in pretok.h / tokenizer.h; each derivation is written beside its case
 * (llama-tokenize agrees on the small vocabulary written as a GGUF file by
 * tests/data/tokenizer_vocabs.py: every case but the empty text).
 * The real-model tests skip with a message when models/SmolLM2-135M-Instruct.Q4_1.gguf is absent
 * (./lab models get smollm2-135m fetches it). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "gguf.h"
#include "pretok.h"
#include "tokenizer.h"
#include "unicode_class.h"

#define SMOLLM2 DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
#define RECORD DRIFT_SOURCE_DIR "/tests/data/smollm2_tokens.tsv"

/* ---- pre-tokenizers on hand cases ---------------------------------------------------------- */
typedef struct {
    drift_pretok_t pre;
    const char *text;
    const char *words[8]; /* NULL-terminated */
} split_case_t;

static const split_case_t k_splits[] = {
    /* ' ?\p{L}+': a space joins the letters after it */
    {DRIFT_PRETOK_GPT2, "Hello world", {"Hello", " world"}},
    /* 't is one of the contractions */
    {DRIFT_PRETOK_GPT2, "don't", {"don", "'t"}},
    /* two spaces before a word: \s+(?!\S) takes the first, the second joins the word */
    {DRIFT_PRETOK_GPT2, "I'm  here", {"I", "'m", " ", " here"}},
    /* whitespace at the end of the text is one word */
    {DRIFT_PRETOK_GPT2, "a   ", {"a", "   "}},
    /* newlines: a run of two before a letter leaves its last one; that one is \s+ alone (only ' '
     * joins a word) */
    {DRIFT_PRETOK_GPT2, "x\n\ny", {"x", "\n", "\n", "y"}},
    /* gpt-2 keeps digit runs: ' ?\p{N}+' */
    {DRIFT_PRETOK_GPT2, "123 456", {"123", " 456"}},
    /* ' ?[^\s\p{L}\p{N}]+' */
    {DRIFT_PRETOK_GPT2, "hello!!! ok", {"hello", "!!!", " ok"}},
    {DRIFT_PRETOK_GPT2, " !?", {" !?"}},
    /* contractions are lower-case only: 'S is punctuation then a letter */
    {DRIFT_PRETOK_GPT2, "'S", {"'", "S"}},
    /* é (Ll) and 你好 (Lo) are letters; 😀 (So) is neither */
    {DRIFT_PRETOK_GPT2, "caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD", {"caf\xC3\xA9", " \xE4\xBD\xA0\xE5\xA5\xBD"}},
    {DRIFT_PRETOK_GPT2,
        "a\xF0\x9F\x98\x80"
        "b",
        {"a", "\xF0\x9F\x98\x80", "b"}},
    /* smollm: every \p{N} codepoint alone, first; then gpt-2 inside the runs between */
    {DRIFT_PRETOK_SMOLLM, "x1y22", {"x", "1", "y", "2", "2"}},
    {DRIFT_PRETOK_SMOLLM, " 123 abc", {" ", "1", "2", "3", " abc"}},
    /* the two spaces end their run (the digit is cut out first), so they stay one word */
    {DRIFT_PRETOK_SMOLLM, "a  1", {"a", "  ", "1"}},
    {DRIFT_PRETOK_SMOLLM, "3.14", {"3", ".", "1", "4"}},
    /* Arabic-Indic digits (Nd), a vulgar fraction (No) and Roman numerals (Nl) are numbers too */
    {DRIFT_PRETOK_SMOLLM, "\xD9\xA3\xD9\xA4", {"\xD9\xA3", "\xD9\xA4"}},
    {DRIFT_PRETOK_SMOLLM, "\xC2\xBDx", {"\xC2\xBD", "x"}},
    {DRIFT_PRETOK_SMOLLM, "\xE2\x85\xAB\xE2\x85\xAB", {"\xE2\x85\xAB", "\xE2\x85\xAB"}},
    {DRIFT_PRETOK_SMOLLM, "don't 42", {"don", "'t", " ", "4", "2"}},
};

Test(pretok, hand_splits)
{
    for (size_t c = 0; c < sizeof k_splits / sizeof k_splits[0]; c++) {
        const split_case_t *k = &k_splits[c];
        uint32_t cps[64];
        size_t ends[64], n = 0, len = strlen(k->text);
        for (size_t i = 0, used; i < len; i += used)
            cps[n++] = drift_utf8_next((const unsigned char *)k->text + i, len - i, &used);
        size_t nw = drift_pretok_split(k->pre, cps, n, ends), want = 0;
        while (k->words[want]) want++;
        cr_assert_eq(nw, want, "case %zu '%s': %zu words, expected %zu", c, k->text, nw, want);
        for (size_t w = 0, a = 0; w < nw; a = ends[w++]) {
            unsigned char buf[256];
            size_t bl = 0;
            for (size_t i = a; i < ends[w]; i++) bl += drift_utf8_put(cps[i], buf + bl);
            cr_assert(bl == strlen(k->words[w]) && !memcmp(buf, k->words[w], bl),
                "case %zu '%s': word %zu is '%.*s', expected '%s'", c, k->text, w, (int)bl, buf, k->words[w]);
        }
    }
}

Test(pretok, names)
{
    drift_pretok_t p;
    char err[256];
    cr_assert_eq(drift_pretok_from_name(&p, "smollm", 6, err, sizeof err), 0);
    cr_assert_eq(p, DRIFT_PRETOK_SMOLLM);
    cr_assert_eq(drift_pretok_from_name(&p, "gpt-2", 5, err, sizeof err), 0);
    cr_assert_eq(p, DRIFT_PRETOK_GPT2);
    cr_assert_eq(drift_pretok_from_name(&p, "llama3", 6, err, sizeof err), DRIFT_EUNSUPPORTED);
    cr_assert(strstr(err, "'llama3'") && strstr(err, "gpt-2, smollm"), "%s", err);
}

/* Unicode classes at a few codepoints whose category is in UnicodeData.txt 15.1 */
Test(pretok, unicode_classes)
{
    cr_assert_eq(drift_unicode_class('a'), DRIFT_UC_LETTER);
    cr_assert_eq(drift_unicode_class('7'), DRIFT_UC_NUMBER);
    cr_assert_eq(drift_unicode_class(' '), DRIFT_UC_SEPARATOR | DRIFT_UC_WHITESPACE);
    cr_assert_eq(drift_unicode_class('\n'), DRIFT_UC_CONTROL | DRIFT_UC_WHITESPACE);
    cr_assert_eq(drift_unicode_class(0x1C), DRIFT_UC_CONTROL, "U+001C is not White_Space (str.isspace says it is)");
    cr_assert_eq(drift_unicode_class(0x3000), DRIFT_UC_SEPARATOR | DRIFT_UC_WHITESPACE);
    cr_assert_eq(
        drift_unicode_class(0x2FFC), DRIFT_UC_SYMBOL, "U+2FFC IDEOGRAPHIC DESCRIPTION CHARACTER (new in 15.1)");
    cr_assert_eq(drift_unicode_class(0x31350), DRIFT_UC_LETTER, "CJK Extension H (new in 15.0)");
    cr_assert_eq(drift_unicode_class(0x0897), DRIFT_UC_UNDEFINED, "U+0897 is assigned only in 16.0");
    cr_assert_eq(drift_unicode_class(0x10FFFF), DRIFT_UC_UNDEFINED);
    cr_assert_eq(drift_unicode_class(0x110000), DRIFT_UC_UNDEFINED);
}

/* ---- a small byte-level vocabulary built in memory ---------------------------------------- */
/* Pieces are in GPT-2's alphabet: 'Ġ' (U+0120) is a space, 'Ċ' (U+010A) a newline. */
static const char *const k_tokens[] = {"<|end|>", "a", "b", "c", "ab", "bc", "abc", "\xC4\xA0",
    "\xC4\xA0"
    "a",
    "\xC4\xA0"
    "ab",
    "1", "\xC4\x8A", "!"};
static const int32_t k_types[] = {DRIFT_TOKEN_CONTROL, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
/* ranks 0..4 */
static const char *const k_merges[] = {"a b", "b c", "\xC4\xA0 a", "ab c",
    "\xC4\xA0"
    "a b"};

static void small_bpe(drift_tokenizer_t *t, const char *pre)
{
    drift_vocab_t v;
    drift_vocab_init(&v);
    v.model = "gpt2";
    v.pre = pre;
    v.n_tokens = sizeof k_tokens / sizeof k_tokens[0];
    v.tokens = k_tokens;
    v.types = k_types;
    v.n_merges = sizeof k_merges / sizeof k_merges[0];
    v.merges = k_merges;
    char err[256];
    cr_assert_eq(drift_tokenizer_build(t, &v, err, sizeof err), 0, "%s", err);
}

typedef struct {
    const char *text;
    int parse_special;
    int n;
    int ids[8];
} enc_case_t;

static const enc_case_t k_small[] = {
    /* a,b,c: (a,b) rank 0 first, then (ab,c) rank 3 -> abc */
    {"abc", 1, 1, {6}},
    /* b,c,a: (b,c) rank 1; (c,a) no merge -> bc a */
    {"bca", 1, 2, {5, 1}},
    /* Ġ,a,b: (a,b) rank 0 beats (Ġ,a) rank 2; then (Ġ,ab) is no merge, so "Ġab" (token 9) is never
     * reached although it is in the vocabulary: Ġ ab */
    {" ab", 1, 2, {7, 4}},
    {" a", 1, 1, {8}},
    /* the control token is cut out first: "a!" is the words a, ! */
    {"a!<|end|>b", 1, 4, {1, 12, 0, 2}},
    /* not parsed: the words a, !<|, end, |>b; pieces without a token and without a token for their
     * single bytes (<, |, e, n, d, >) are dropped, as llama.cpp does */
    {"a!<|end|>b", 0, 3, {1, 12, 2}},
    {"\n", 1, 1, {11}},
    /* gpt-2: a letter run, then a digit run */
    {"a1", 1, 2, {1, 10}},
    /* one word a,b,c,a,b,c: both (a,b) merge (rank 0, left first), then both (ab,c) */
    {"abcabc", 1, 2, {6, 6}},
    {"", 1, 0, {0}},
};

Test(tokenizer_bpe, small_vocabulary)
{
    drift_tokenizer_t t;
    small_bpe(&t, "gpt-2");
    for (size_t c = 0; c < sizeof k_small / sizeof k_small[0]; c++) {
        int ids[16], n = -1;
        cr_assert_eq(drift_tokenizer_encode_ex(&t, k_small[c].text, 0, k_small[c].parse_special, ids, 16, &n), 0);
        cr_assert_eq(n, k_small[c].n, "'%s': %d ids, expected %d", k_small[c].text, n, k_small[c].n);
        for (int i = 0; i < n; i++) cr_assert_eq(ids[i], k_small[c].ids[i], "'%s': id %d", k_small[c].text, i);
    }
    int ids[1], n;
    cr_assert_eq(drift_tokenizer_encode_ex(&t, "abcabc", 0, 1, ids, 1, &n), DRIFT_ERANGE, "two ids do not fit one");
    cr_assert_str_eq(drift_tokenizer_decode(&t, 0, 7), " ");
    cr_assert_str_eq(drift_tokenizer_decode(&t, 0, 11), "\n");
    cr_assert_str_eq(drift_tokenizer_decode(&t, 0, 0), "<|end|>", "special tokens print as their text");
    cr_assert_str_eq(drift_tokenizer_decode(&t, 0, 99), "", "an id out of range");
    cr_assert_eq(drift_tokenizer_is_eog(&t, 0), 1, "<|end|> ends a turn (llama.cpp's list)");
    cr_assert_eq(drift_tokenizer_is_eog(&t, 1), 0);
    cr_assert_eq(t.bos_id, 11, "llama.cpp's BPE default BOS id 11 (inside this vocabulary)");
    cr_assert_eq(t.add_bos, 0);
    drift_tokenizer_free(&t);
}

Test(tokenizer_bpe, refusals)
{
    drift_tokenizer_t t;
    drift_vocab_t v;
    char err[256];
    drift_vocab_init(&v);
    v.model = "gpt2";
    v.pre = "llama3";
    v.n_tokens = 3;
    v.tokens = k_tokens;
    cr_assert_eq(drift_tokenizer_build(&t, &v, err, sizeof err), DRIFT_EUNSUPPORTED);
    cr_assert(strstr(err, "tokenizer.ggml.pre") && strstr(err, "'llama3'") && strstr(err, "accepted: gpt-2, smollm"),
        "%s", err);
    v.pre = NULL;
    v.model = "bert";
    cr_assert_eq(drift_tokenizer_build(&t, &v, err, sizeof err), DRIFT_EUNSUPPORTED);
    cr_assert(strstr(err, "'bert'") && strstr(err, "gpt2, llama"), "%s", err);
    v.model = "gpt2";
    const char *dup[] = {"a", "b", "a"};
    v.tokens = dup;
    cr_assert_eq(drift_tokenizer_build(&t, &v, err, sizeof err), DRIFT_EINVAL);
    cr_assert(strstr(err, "token 2") && strstr(err, "token 0"), "%s", err);
    const char *bad_merge[] = {"ab"};
    v.tokens = k_tokens;
    v.merges = bad_merge;
    v.n_merges = 1;
    cr_assert_eq(drift_tokenizer_build(&t, &v, err, sizeof err), DRIFT_EINVAL);
    cr_assert(strstr(err, "tokenizer.ggml.merges") && strstr(err, "merge 0"), "%s", err);
    v.n_merges = 0;
    v.bos_id = 3;
    cr_assert_eq(drift_tokenizer_build(&t, &v, err, sizeof err), DRIFT_EINVAL);
    cr_assert(strstr(err, "bos_token_id") && strstr(err, "below 3"), "%s", err);
}

/* ---- SmolLM2 against llama.cpp's record ---------------------------------------------------- */
static int load_smollm2(drift_gguf_t *g, drift_tokenizer_t *t)
{
    FILE *fp = fopen(SMOLLM2, "rb");
    if (!fp) return 0;
    fclose(fp);
    char err[256];
    cr_assert_eq(drift_gguf_open(g, SMOLLM2, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_tokenizer_from_gguf(t, g, err, sizeof err), 0, "%s", err);
    return 1;
}

/* The record's escapes: \n \t \r \\ \xHH. */
static size_t unescape(char *dst, const char *src)
{
    size_t o = 0;
    for (size_t i = 0; src[i]; i++) {
        if (src[i] != '\\') {
            dst[o++] = src[i];
            continue;
        }
        char c = src[++i];
        if (c == 'n')
            dst[o++] = '\n';
        else if (c == 't')
            dst[o++] = '\t';
        else if (c == 'r')
            dst[o++] = '\r';
        else if (c == '\\')
            dst[o++] = '\\';
        else {
            cr_assert_eq(c, 'x', "record: unknown escape \\%c", c);
            unsigned v;
            cr_assert_eq(sscanf(src + i + 1, "%2x", &v), 1);
            dst[o++] = (char)v;
            i += 2;
        }
    }
    dst[o] = 0;
    return o;
}

/* Strict UTF-8 (no overlong form, no surrogate, at most U+10FFFF): only such text decodes back. */
static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!k || i + k > n) return 0;
        uint32_t cp = k == 1 ? c : c & (0xFF >> (k + 1));
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[i + j] & 0x3F);
        }
        static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += k;
    }
    return 1;
}

Test(tokenizer_bpe, smollm2_matches_llama_cpp, .timeout = 60)
{
    drift_gguf_t g;
    drift_tokenizer_t t;
    if (!load_smollm2(&g, &t)) cr_skip_test("skipped: %s is absent (./lab models get smollm2-135m)", SMOLLM2);
    FILE *fp = fopen(RECORD, "r");
    cr_assert(fp, "cannot open %s", RECORD);
    static char line[1 << 16], text[1 << 16], back[1 << 16];
    static int ids[8192];
    int strings = 0, round_trips = 0;
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#' || !strncmp(line, "text\t", 5)) continue;
        line[strcspn(line, "\n")] = 0;
        char *tab = strchr(line, '\t');
        cr_assert(tab, "record line without a tab: %s", line);
        *tab = 0;
        char *p = tab + 1;
        long want_n = strtol(p, &p, 10);
        size_t len = unescape(text, line);
        int n = -1;
        cr_assert_eq(drift_tokenizer_encode_ex(&t, text, 0, 1, ids, 8192, &n), 0, "'%s'", line);
        cr_assert_eq(n, want_n, "'%s': %d ids, llama.cpp has %ld", line, n, want_n);
        for (int i = 0; i < n; i++) {
            long want = strtol(p, &p, 10);
            cr_assert_eq(ids[i], want, "'%s': id %d is %d, llama.cpp has %ld", line, i, ids[i], want);
        }
        strings++;
        if (!valid_utf8((const unsigned char *)text, len)) continue; /* bad bytes became U+FFFD */
        size_t bl = 0;
        for (int i = 0; i < n; i++) {
            size_t pl;
            const char *piece = drift_tokenizer_piece(&t, i ? ids[i - 1] : -1, ids[i], &pl);
            memcpy(back + bl, piece, pl);
            bl += pl;
        }
        cr_assert(bl == len && !memcmp(back, text, len), "'%s': decode(encode(s)) is '%.*s'", line, (int)bl, back);
        round_trips++;
    }
    fclose(fp);
    cr_assert_geq(strings, 40, "the record holds %d strings", strings);
    cr_assert_geq(round_trips, 40, "%d strings decoded back", round_trips);
    drift_tokenizer_free(&t);
    drift_gguf_close(&g);
}

/* The vocabulary as llama.cpp reports it (llm_load_print_meta / the GGUF metadata) */
Test(tokenizer_bpe, smollm2_vocabulary)
{
    drift_gguf_t g;
    drift_tokenizer_t t;
    if (!load_smollm2(&g, &t)) cr_skip_test("skipped: %s is absent (./lab models get smollm2-135m)", SMOLLM2);
    drift_gguf_close(&g); /* the tokenizer keeps copies */
    cr_assert_eq(t.kind, DRIFT_TOKENIZER_BPE);
    cr_assert_eq(t.pre, DRIFT_PRETOK_SMOLLM);
    cr_assert_eq(t.vocab_size, 49152);
    cr_assert_eq(t.n_merges, 48900);
    cr_assert_eq(t.bos_id, 1);
    cr_assert_eq(t.eos_id, 2);
    cr_assert_eq(t.add_bos, 0);
    cr_assert_eq(t.n_special, 17, "ids 0..16 are control tokens");
    /* llama.cpp's EOG set for this file: <|endoftext|> 0, <|im_end|> 2 (also EOS) and <reponame> 4,
     * found as a FIM repo token by its text */
    for (int id = 0; id < 49152; id++)
        cr_assert_eq(drift_tokenizer_is_eog(&t, id), id == 0 || id == 2 || id == 4, "is_eog(%d)", id);
    cr_assert_str_eq(drift_tokenizer_decode(&t, 0, 1), "<|im_start|>");
    cr_assert_str_eq(drift_tokenizer_decode(&t, 0, 216), " ");
    /* without parse_special the ChatML markers are text (llama-tokenize --no-parse-special) */
    static const struct {
        const char *text;
        int n, ids[12];
    } plain[] = {{"<|im_start|>user", 8, {44, 108, 306, 79, 3738, 108, 46, 4093}},
        {"a<|endoftext|>b", 9, {81, 44, 108, 486, 1714, 2692, 108, 46, 82}}, {"<reponame>x", 4, {44, 10368, 46, 104}}};
    for (size_t c = 0; c < sizeof plain / sizeof plain[0]; c++) {
        int ids[16], n;
        cr_assert_eq(drift_tokenizer_encode_ex(&t, plain[c].text, 0, 0, ids, 16, &n), 0);
        cr_assert_eq(n, plain[c].n, "'%s'", plain[c].text);
        for (int i = 0; i < n; i++) cr_assert_eq(ids[i], plain[c].ids[i], "'%s' id %d", plain[c].text, i);
    }
    /* encode(bos = 1) is add_special: this vocabulary asks for no BOS */
    int ids[4], n;
    cr_assert_eq(drift_tokenizer_encode(&t, "Hello world", 1, ids, 4, &n), 0);
    cr_assert(n == 2 && ids[0] == 19556 && ids[1] == 905);
    cr_assert_eq(drift_tokenizer_encode(&t, "Hello world", 1, ids, 1, &n), DRIFT_ERANGE);
    drift_tokenizer_free(&t);
}
