/* tokenizer_vocab.c — a GGUF-style vocabulary made ready to encode: pieces copied, the bytes each
 * token stands for, what it decodes to, the special and end-of-generation tokens, and two hash
 * tables (pieces by bytes, merges by pair) so that building SmolLM2's 49152 tokens and 48900
 * merges takes milliseconds. See tokenizer.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "tokenizer.h"
#include "tokenizer_impl.h"
#include "unicode_class.h"
#include "why.h"

void drift_vocab_init(drift_vocab_t *v)
{
    memset(v, 0, sizeof *v);
    v->bos_id = v->eos_id = v->eot_id = v->unk_id = v->pad_id = DRIFT_TOKENIZER_DEFAULT;
    v->fim_ids[0] = v->fim_ids[1] = v->fim_ids[2] = DRIFT_TOKENIZER_DEFAULT;
    v->add_bos = v->add_eos = v->add_space_prefix = DRIFT_TOKENIZER_DEFAULT;
}

/* ---- GPT-2's byte alphabet --------------------------------------------------------------
 * Bytes 0x21..0x7E, 0xA1..0xAC, 0xAE..0xFF stand for themselves; the other 68, in order, for
 * U+0100..U+0143 (so a space is U+0120 'Ġ'). */
void drift_tok_alphabet(uint32_t fwd[256], int inv[DRIFT_TOK_ALPHABET_END])
{
    for (int i = 0; i < DRIFT_TOK_ALPHABET_END; i++) inv[i] = -1;
    int n = 0;
    for (int b = 0; b < 256; b++) {
        int self = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        fwd[b] = self ? (uint32_t)b : (uint32_t)(256 + n++);
        inv[fwd[b]] = b;
    }
}

/* The bytes a byte-level piece stands for, into out (at most n bytes). *whole = 0 when some
 * character is outside the alphabet (it is copied as its UTF-8: no input maps to it). */
static size_t unmap(const int inv[DRIFT_TOK_ALPHABET_END], const char *s, size_t n, char *out, int *whole)
{
    size_t k = 0;
    *whole = 1;
    for (size_t i = 0; i < n;) {
        size_t used;
        uint32_t cp = drift_utf8_next((const unsigned char *)s + i, n - i, &used);
        if (cp < DRIFT_TOK_ALPHABET_END && inv[cp] >= 0) {
            out[k++] = (char)inv[cp];
        } else {
            *whole = 0;
            memcpy(out + k, s + i, used);
            k += used;
        }
        i += used;
    }
    return k;
}

/* ---- hash tables: open addressing, slots hold index + 1 -------------------------------- */
static uint64_t hash_bytes(const unsigned char *s, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull; /* FNV-1a */
    return h ^ (h >> 29);
}
#define HASH_SEED 0xcbf29ce484222325ull

static uint32_t *slots_new(size_t n, uint32_t *mask)
{
    size_t size = 16;
    while (size < 2 * n) size *= 2;
    *mask = (uint32_t)(size - 1);
    return calloc(size, sizeof(uint32_t));
}

int drift_tok_lookup(const drift_tokenizer_t *t, const unsigned char *s, size_t len)
{
    if (!t->piece_slot) return -1;
    for (uint32_t i = (uint32_t)hash_bytes(s, len, HASH_SEED) & t->piece_mask;; i = (i + 1) & t->piece_mask) {
        uint32_t e = t->piece_slot[i];
        if (!e) return -1;
        int id = (int)e - 1;
        if (t->key_len[id] == len && !memcmp(t->key[id], s, len)) return id;
    }
}

static uint64_t hash_merge(const unsigned char *s, size_t left, size_t right)
{
    return hash_bytes(s, left + right, HASH_SEED ^ (left * 0x9E3779B97F4A7C15ull));
}

int drift_tok_merge_rank(const drift_tokenizer_t *t, const unsigned char *s, size_t left, size_t right)
{
    if (!t->merge_slot) return -1;
    for (uint32_t i = (uint32_t)hash_merge(s, left, right) & t->merge_mask;; i = (i + 1) & t->merge_mask) {
        uint32_t e = t->merge_slot[i];
        if (!e) return -1;
        int r = (int)e - 1;
        if (t->merge_left[r] == left && t->merge_right[r] == right && !memcmp(t->merge[r], s, left + right)) return r;
    }
}

/* ---- the texts llama.cpp treats by name ---------------------------------------------------- */
/* Tokens that end generation (llama_vocab::impl::load, special_eog_ids) */
static const char *const k_eog_texts[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
    "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81"
    "of\xE2\x96\x81"
    "sentence\xEF\xBD\x9C>",
    "[e~[",
    /* FIM pad, repo and separator tokens found by their text end generation too */
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
    "<reponame>", "<|file_sep|>"};
/* Tokens made control tokens by their text though the file says otherwise (FIM begin/hole/end) */
static const char *const k_control_texts[] = {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>",
    "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>", "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>",
    "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>", "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>",
    "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>",
    "<\xEF\xBD\x9C"
    "fim\xE2\x96\x81"
    "begin\xEF\xBD\x9C>",
    "<\xEF\xBD\x9C"
    "fim\xE2\x96\x81"
    "hole\xEF\xBD\x9C>",
    "<\xEF\xBD\x9C"
    "fim\xE2\x96\x81"
    "end\xEF\xBD\x9C>"};

static int named(const char *const *list, size_t n, const char *s, size_t len)
{
    if (len < 3 || len > 40 || !strchr("<[_\xE2", s[0])) return 0; /* every listed text starts so */
    for (size_t i = 0; i < n; i++)
        if (strlen(list[i]) == len && !memcmp(list[i], s, len)) return 1;
    return 0;
}

/* ---- build ----------------------------------------------------------------------------- */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The special tokens, longest text first; equal lengths by id (llama.cpp's std::sort leaves
 * those in no stated order). keys is scratch for n entries. */
static void order_special(drift_tokenizer_t *t, uint64_t *keys)
{
    for (int k = 0; k < t->n_special; k++)
        keys[k] = (uint64_t)(UINT32_MAX - t->piece_len[t->special[k]]) << 32 | (uint32_t)t->special[k];
    qsort(keys, (size_t)t->n_special, sizeof *keys, cmp_u64);
    for (int k = 0; k < t->n_special; k++) t->special[k] = (int)(keys[k] & UINT32_MAX);
}

static int resolve_id(int given, int dflt, int n, const char *key, int *out, char *err, size_t errsz)
{
    if (given == DRIFT_TOKENIZER_DEFAULT) {
        *out = dflt < n ? dflt : -1; /* llama.cpp disables a default outside the vocabulary */
        return 0;
    }
    if (given < -1 || given >= n)
        return drift_why(err, errsz, DRIFT_EINVAL, "%s: expected a token id below %d, found %d", key, n, given);
    *out = given;
    return 0;
}

static int flag(int given, int dflt) { return given == DRIFT_TOKENIZER_DEFAULT ? dflt : given != 0; }

static size_t slen(const size_t *lens, const char *const *s, int i) { return lens ? lens[i] : strlen(s[i]); }

int drift_tokenizer_build(drift_tokenizer_t *t, const drift_vocab_t *v, char *err, size_t errsz)
{
    if (!t) return drift_why(err, errsz, DRIFT_EINVAL, "no tokenizer");
    memset(t, 0, sizeof *t);
    if (!v || !v->model) return drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.model: missing");
    int spm = !strcmp(v->model, "llama"), bpe = !strcmp(v->model, "gpt2");
    if (!spm && !bpe)
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
            "tokenizer.ggml.model: unsupported tokenizer '%.64s' (accepted: gpt2, llama)", v->model);
    int n = v->n_tokens;
    if (n < 1 || !v->tokens)
        return drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.tokens: expected at least one token, found %d", n);
    if (n >= (1 << 30)) return drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.tokens: %d tokens is too many", n);
    if (bpe && (v->n_merges < 0 || (v->n_merges && !v->merges)))
        return drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.merges: expected an array, found %d", v->n_merges);
    t->kind = spm ? DRIFT_TOKENIZER_SPM : DRIFT_TOKENIZER_BPE;
    t->pre = DRIFT_PRETOK_NONE;
    int rc;
    if (bpe) {
        const char *pre = v->pre ? v->pre : "gpt-2";
        if ((rc = drift_pretok_from_name(&t->pre, pre, strlen(pre), err, errsz))) return rc;
    }
    t->vocab_size = n;
    int nm = bpe ? v->n_merges : 0;

    /* one arena: pieces, the bytes they stand for, what they decode to (each at most the piece
     * plus "[EMPTY_n]" and a NUL), then the merges */
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        size_t l = slen(v->token_len, v->tokens, i);
        if (l > UINT32_MAX / 2 || total > SIZE_MAX / 4 - l - 32)
            return drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.tokens: token %d is %zu bytes long", i, l);
        total += 3 * (l + 24);
    }
    for (int i = 0; i < nm; i++) {
        size_t l = slen(v->merge_len, v->merges, i);
        if (l > UINT32_MAX / 2 || total > SIZE_MAX / 4 - l - 2)
            return drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.merges: merge %d is %zu bytes long", i, l);
        total += l + 1;
    }
    t->arena = malloc(total ? total : 1);
    t->pieces = calloc((size_t)n, sizeof *t->pieces);
    t->piece_len = calloc((size_t)n, sizeof *t->piece_len);
    t->scores = calloc((size_t)n, sizeof *t->scores);
    t->type = calloc((size_t)n, 1);
    t->eog = calloc((size_t)n, 1);
    t->text = calloc((size_t)n, sizeof *t->text);
    t->text_len = calloc((size_t)n, sizeof *t->text_len);
    t->key = calloc((size_t)n, sizeof *t->key);
    t->key_len = calloc((size_t)n, sizeof *t->key_len);
    t->special = calloc((size_t)n, sizeof *t->special);
    t->piece_slot = slots_new((size_t)n, &t->piece_mask);
    if (nm) {
        t->merge = calloc((size_t)nm, sizeof *t->merge);
        t->merge_left = calloc((size_t)nm, sizeof *t->merge_left);
        t->merge_right = calloc((size_t)nm, sizeof *t->merge_right);
        t->merge_slot = slots_new((size_t)nm, &t->merge_mask);
    }
    if (!t->arena || !t->pieces || !t->piece_len || !t->scores || !t->type || !t->eog || !t->text || !t->text_len ||
        !t->key || !t->key_len || !t->special || !t->piece_slot ||
        (nm && (!t->merge || !t->merge_left || !t->merge_right || !t->merge_slot))) {
        rc = drift_why(err, errsz, DRIFT_ENOMEM, "out of memory for a vocabulary of %d tokens", n);
        goto bad;
    }
    uint32_t fwd[256];
    int inv[DRIFT_TOK_ALPHABET_END];
    drift_tok_alphabet(fwd, inv);
    char *at = t->arena;
    for (int i = 0; i < n; i++) {
        size_t l = slen(v->token_len, v->tokens, i);
        char *p = at;
        if (l)
            memcpy(p, v->tokens[i], l);
        else
            l = (size_t)sprintf(p, "[EMPTY_%d]", i); /* llama.cpp names an empty token so */
        p[l] = 0;
        at += l + 1;
        t->pieces[i] = p;
        t->piece_len[i] = (uint32_t)l;
        if ((int)l > t->max_token_length) t->max_token_length = (int)l;
        t->scores[i] = v->scores ? v->scores[i] : 0.0f;
        int ty = v->types ? v->types[i] : DRIFT_TOKEN_NORMAL;
        t->type[i] = (unsigned char)(ty >= DRIFT_TOKEN_NORMAL && ty <= DRIFT_TOKEN_BYTE ? ty : DRIFT_TOKEN_UNDEFINED);
        if (named(k_eog_texts, sizeof k_eog_texts / sizeof *k_eog_texts, p, l)) t->eog[i] = 1;
        if (t->eog[i] || named(k_control_texts, sizeof k_control_texts / sizeof *k_control_texts, p, l))
            t->type[i] = DRIFT_TOKEN_CONTROL; /* llama.cpp overrides a control-looking token's type */

        /* the bytes it stands for (what encoding looks up) */
        int whole = 1;
        char *key = at;
        size_t kl = l;
        if (bpe)
            kl = unmap(inv, p, l, key, &whole);
        else
            memcpy(key, p, l);
        key[kl] = 0;
        at += kl + 1;
        t->key[i] = whole ? key : NULL;
        t->key_len[i] = whole ? (uint32_t)kl : UINT32_MAX;

        /* what it decodes to (llama.cpp's token_to_piece with special = true) */
        char *txt = at;
        size_t tl = 0;
        unsigned hex;
        switch (t->type[i]) {
        case DRIFT_TOKEN_CONTROL:
        case DRIFT_TOKEN_UNKNOWN:
        case DRIFT_TOKEN_USER_DEFINED:
            memcpy(txt, p, l);
            tl = l;
            break;
        case DRIFT_TOKEN_NORMAL:
            if (bpe) {
                tl = unmap(inv, p, l, txt, &whole);
            } else {
                for (size_t j = 0; j < l; j++) {
                    if (j + 2 < l && !memcmp(p + j, "\xE2\x96\x81", 3)) {
                        txt[tl++] = ' ';
                        j += 2;
                    } else {
                        txt[tl++] = p[j];
                    }
                }
            }
            break;
        case DRIFT_TOKEN_BYTE:
            if (l == 6 && sscanf(p, "<0x%2x>", &hex) == 1) txt[tl++] = (char)hex;
            break;
        default: /* unused and undefined tokens print nothing */ break;
        }
        txt[tl] = 0;
        at += tl + 1;
        t->text[i] = txt;
        t->text_len[i] = (uint32_t)tl;

        if (t->key[i]) {
            int dup = drift_tok_lookup(t, (const unsigned char *)t->key[i], t->key_len[i]);
            if (dup >= 0) {
                rc = drift_why(
                    err, errsz, DRIFT_EINVAL, "tokenizer.ggml.tokens: token %d '%.32s' repeats token %d", i, p, dup);
                goto bad;
            }
            uint32_t s = (uint32_t)hash_bytes((const unsigned char *)key, kl, HASH_SEED) & t->piece_mask;
            while (t->piece_slot[s]) s = (s + 1) & t->piece_mask;
            t->piece_slot[s] = (uint32_t)i + 1;
        }
    }

    /* merges: "left right", split at the first space after the first byte (llama.cpp); both
     * halves as bytes. A half outside the alphabet can never meet a word's bytes: skipped. */
    for (int r = 0; r < nm; r++) {
        const char *m = v->merges[r];
        size_t l = slen(v->merge_len, v->merges, r), sp = 1;
        while (sp < l && m[sp] != ' ') sp++;
        if (sp >= l) {
            rc = drift_why(
                err, errsz, DRIFT_EINVAL, "tokenizer.ggml.merges: merge %d '%.32s' is not two pieces", r, l ? m : "");
            goto bad;
        }
        int w1, w2;
        char *p = at;
        size_t a = unmap(inv, m, sp, p, &w1);
        size_t b = unmap(inv, m + sp + 1, l - sp - 1, p + a, &w2);
        t->merge[r] = p;
        t->merge_left[r] = (uint32_t)a;
        t->merge_right[r] = (uint32_t)b;
        at += a + b + 1;
        if (!w1 || !w2 || !b || drift_tok_merge_rank(t, (const unsigned char *)p, a, b) >= 0)
            continue; /* the first of equal merges keeps its rank, as llama.cpp's emplace does */
        uint32_t s = (uint32_t)hash_merge((const unsigned char *)p, a, b) & t->merge_mask;
        while (t->merge_slot[s]) s = (s + 1) & t->merge_mask;
        t->merge_slot[s] = (uint32_t)r + 1;
    }
    t->n_merges = nm;

    /* byte fallback tokens */
    for (int b = 0; b < 256; b++) t->byte_token[b] = -1;
    for (int i = 0; i < n; i++) {
        unsigned hex;
        if (bpe && t->piece_len[i] == 1) t->byte_token[(unsigned char)t->pieces[i][0]] = i;
        char want[8];
        if (spm && t->piece_len[i] == 6 && sscanf(t->pieces[i], "<0x%2X>", &hex) == 1 &&
            snprintf(want, sizeof want, "<0x%02X>", hex) == 6 && !strcmp(want, t->pieces[i]))
            t->byte_token[hex] = i; /* llama.cpp looks up upper-case hex only */
    }
    if (spm)
        for (int b = 0; b < 256; b++)
            if (t->byte_token[b] < 0) { /* llama.cpp's second choice: the byte as a one-byte piece */
                unsigned char c = (unsigned char)b;
                t->byte_token[b] = drift_tok_lookup(t, &c, 1);
            }

    /* special tokens, longest text first */
    for (int i = 0; i < n; i++)
        if (t->type[i] == DRIFT_TOKEN_CONTROL || t->type[i] == DRIFT_TOKEN_USER_DEFINED ||
            t->type[i] == DRIFT_TOKEN_UNKNOWN)
            t->special[t->n_special++] = i;
    uint64_t *keys = malloc((size_t)(t->n_special ? t->n_special : 1) * sizeof *keys);
    if (!keys) {
        rc = drift_why(err, errsz, DRIFT_ENOMEM, "out of memory for a vocabulary of %d tokens", n);
        goto bad;
    }
    order_special(t, keys);
    free(keys);

    /* ids and flags */
    if ((rc = resolve_id(v->bos_id, spm ? 1 : 11, n, "tokenizer.ggml.bos_token_id", &t->bos_id, err, errsz)) ||
        (rc = resolve_id(v->eos_id, spm ? 2 : 11, n, "tokenizer.ggml.eos_token_id", &t->eos_id, err, errsz)) ||
        (rc = resolve_id(v->eot_id, -1, n, "tokenizer.ggml.eot_token_id", &t->eot_id, err, errsz)) ||
        (rc = resolve_id(v->unk_id, spm ? 0 : -1, n, "tokenizer.ggml.unknown_token_id", &t->unk_id, err, errsz)) ||
        (rc = resolve_id(v->pad_id, -1, n, "tokenizer.ggml.padding_token_id", &t->pad_id, err, errsz)))
        goto bad;
    static const char *const fim_keys[3] = {
        "tokenizer.ggml.fim_pad_token_id", "tokenizer.ggml.fim_rep_token_id", "tokenizer.ggml.fim_sep_token_id"};
    for (int k = 0; k < 3; k++) {
        int id = -1;
        if ((rc = resolve_id(v->fim_ids[k], -1, n, fim_keys[k], &id, err, errsz))) goto bad;
        if (id >= 0) t->eog[id] = 1;
    }
    if (t->eos_id >= 0) t->eog[t->eos_id] = 1;
    if (t->eot_id >= 0) t->eog[t->eot_id] = 1;
    t->add_bos = flag(v->add_bos, spm);
    t->add_eos = flag(v->add_eos, 0);
    t->add_space_prefix = flag(v->add_space_prefix, spm);
    return 0;
bad:
    drift_tok_free_gguf(t);
    return rc;
}

void drift_tok_free_gguf(drift_tokenizer_t *t)
{
    free(t->arena);
    free(t->pieces);
    free(t->piece_len);
    free(t->scores);
    free(t->type);
    free(t->eog);
    free(t->text);
    free(t->text_len);
    free(t->key);
    free(t->key_len);
    free(t->special);
    free(t->piece_slot);
    free(t->merge);
    free(t->merge_left);
    free(t->merge_right);
    free(t->merge_slot);
    memset(t, 0, sizeof *t);
}
