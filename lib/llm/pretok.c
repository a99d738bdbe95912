/* pretok.c — the gpt-2 and smollm pre-tokenizers (see pretok.h). */
#include "pretok.h"

#include <string.h>

#include "drift.h"
#include "unicode_class.h"
#include "why.h"

static const struct {
    const char *name;
    drift_pretok_t pre;
} k_names[] = {{"gpt-2", DRIFT_PRETOK_GPT2}, {"smollm", DRIFT_PRETOK_SMOLLM}};

int drift_pretok_from_name(drift_pretok_t *out, const char *name, size_t len, char *err, size_t errsz)
{
    for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; i++)
        if (name && strlen(k_names[i].name) == len && !memcmp(k_names[i].name, name, len)) {
            *out = k_names[i].pre;
            return 0;
        }
    *out = DRIFT_PRETOK_NONE;
    return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
        "tokenizer.ggml.pre: unsupported pre-tokenizer '%.*s' (accepted: gpt-2, smollm)", (int)(len > 64 ? 64 : len),
        name ? name : "");
}

/* The class of cps[pos], or -1 past the end of the run (llama.cpp's empty flags there). */
static int cls(const uint32_t *cps, size_t pos, size_t end)
{
    return pos < end ? (int)drift_unicode_class(cps[pos]) : -1;
}
static int is_letter(int c) { return c >= 0 && (c & DRIFT_UC_CATEGORY) == DRIFT_UC_LETTER; }
static int is_number(int c) { return c >= 0 && (c & DRIFT_UC_CATEGORY) == DRIFT_UC_NUMBER; }
static int is_space(int c) { return c >= 0 && (c & DRIFT_UC_WHITESPACE); }
static int is_other(int c) { return c >= 0 && !is_space(c) && !is_letter(c) && !is_number(c); }

/* gpt-2 over cps[a..b), appending word ends; returns the new count. */
static size_t split_gpt2(const uint32_t *cps, size_t a, size_t b, size_t *ends, size_t k)
{
    size_t pos = a;
    while (pos < b) {
        uint32_t cp = cps[pos];
        if (cp == '\'' && pos + 1 < b) { /* 's|'t|'re|'ve|'m|'ll|'d */
            uint32_t c1 = cps[pos + 1];
            if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') {
                ends[k++] = pos += 2;
                continue;
            }
            if (pos + 2 < b) {
                uint32_t c2 = cps[pos + 2];
                if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) {
                    ends[k++] = pos += 3;
                    continue;
                }
            }
        }
        int f = cp == ' ' ? cls(cps, pos + 1, b) : cls(cps, pos, b);
        int (*run)(int) = is_letter(f) ? is_letter : is_number(f) ? is_number : is_other(f) ? is_other : NULL;
        if (run) { /* ' ?\p{L}+' | ' ?\p{N}+' | ' ?[^\s\p{L}\p{N}]+' */
            pos += cp == ' ';
            while (run(cls(cps, pos, b))) pos++;
            ends[k++] = pos;
            continue;
        }
        size_t nws = 0;
        while (is_space(cls(cps, pos + nws, b))) nws++;
        if (nws > 1 && pos + nws < b) { /* \s+(?!\S): leave the last space to the next word */
            ends[k++] = pos += nws - 1;
            continue;
        }
        ends[k++] = pos += nws ? nws : 1; /* \s+, or a codepoint nothing matched */
    }
    return k;
}

size_t drift_pretok_split(drift_pretok_t pre, const uint32_t *cps, size_t n, size_t *ends)
{
    if (pre != DRIFT_PRETOK_SMOLLM) return split_gpt2(cps, 0, n, ends, 0);
    size_t k = 0, a = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_number((int)drift_unicode_class(cps[i]))) continue;
        k = split_gpt2(cps, a, i, ends, k);
        ends[k++] = i + 1;
        a = i + 1;
    }
    return split_gpt2(cps, a, n, ends, k);
}
