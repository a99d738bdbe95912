/* tokenizer.c — llama2.c tokenizers, and the entry points every kind shares (see tokenizer.h). */
#include "tokenizer.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "file_read.h"
#include "tokenizer_impl.h"
#include "why.h"

static int32_t le32(const unsigned char *b)
{
    return (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
}

static const drift_tokenizer_t *g_sort_tok; /* qsort has no context argument in C11 */
static int cmp_piece(const void *a, const void *b)
{
    return strcmp(g_sort_tok->pieces[*(const int *)a], g_sort_tok->pieces[*(const int *)b]);
}

int drift_tokenizer_read(drift_tokenizer_t *t, const char *path, int vocab_size, char *err, size_t errsz)
{
    if (!t || !path || vocab_size <= 0) return drift_why(err, errsz, DRIFT_EINVAL, "no tokenizer path or vocabulary");
    memset(t, 0, sizeof *t);
    size_t size = 0;
    int rc;
    /* a tokenizer.bin is a few hundred kB; a vocabulary of 2^24 pieces of a few bytes fits in 1 GiB */
    unsigned char *buf = drift_file_read(path, (size_t)1 << 30, "tokenizer", &size, err, errsz, &rc);
    if (!buf) return rc;
    rc = drift_tokenizer_parse(t, buf, size, path, vocab_size, err, errsz);
    free(buf);
    return rc;
}

int drift_tokenizer_parse(
    drift_tokenizer_t *t, const void *bytes, size_t size, const char *path, int vocab_size, char *err, size_t errsz)
{
    if (!t || (!bytes && size) || vocab_size <= 0)
        return drift_why(err, errsz, DRIFT_EINVAL, "no tokenizer data or vocabulary");
    if (!path) path = "tokenizer";
    memset(t, 0, sizeof *t);
    const unsigned char *buf = bytes;
    int rc;
    t->vocab_size = vocab_size;
    t->pieces = calloc((size_t)vocab_size, sizeof *t->pieces);
    t->scores = calloc((size_t)vocab_size, sizeof *t->scores);
    t->sorted = calloc((size_t)vocab_size, sizeof *t->sorted);
    if (!t->pieces || !t->scores || !t->sorted) {
        rc = drift_why(err, errsz, DRIFT_ENOMEM, "out of memory for the tokenizer");
        goto bad;
    }
    size_t at = 4;
    if (size < 4) {
        rc =
            drift_why(err, errsz, DRIFT_EINVAL, "%s: truncated: expected a 4-byte header, found %zu bytes", path, size);
        goto bad;
    }
    t->max_token_length = le32(buf);
    /* encode() sizes its merge buffer from this header field: a negative or huge value would
     * wrap that size (found by fuzz/checkpoint.c). llama2.c's tokenizers hold a few dozen. */
    if (t->max_token_length < 1 || t->max_token_length > DRIFT_TOKEN_LENGTH_MAX) {
        rc = drift_why(err, errsz, DRIFT_EINVAL, "%s: header: max_token_length %d is out of range (accepted: 1..%d)",
            path, t->max_token_length, DRIFT_TOKEN_LENGTH_MAX);
        goto bad;
    }
    for (int i = 0; i < vocab_size; i++) {
        if (size - at < 8) {
            rc =
                drift_why(err, errsz, DRIFT_EINVAL, "%s: truncated: expected %d tokens, found %d", path, vocab_size, i);
            goto bad;
        }
        memcpy(&t->scores[i], buf + at, 4);
        int32_t len = le32(buf + at + 4);
        at += 8;
        if (len < 0 || (size_t)len > size - at) {
            rc = drift_why(err, errsz, DRIFT_EINVAL, "%s: token %d: length %d does not fit the %zu bytes left", path, i,
                len, size - at);
            goto bad;
        }
        t->pieces[i] = malloc((size_t)len + 1);
        if (!t->pieces[i]) {
            rc = drift_why(err, errsz, DRIFT_ENOMEM, "out of memory for the tokenizer");
            goto bad;
        }
        memcpy(t->pieces[i], buf + at, (size_t)len);
        t->pieces[i][len] = 0;
        at += (size_t)len;
    }
    if (at != size) {
        rc = drift_why(err, errsz, DRIFT_EINVAL,
            "%s: oversized: %d tokens end at byte %zu, the file has %zu (wrong vocabulary?)", path, vocab_size, at,
            size);
        goto bad;
    }
    for (int i = 0; i < vocab_size; i++) t->sorted[i] = i;
    g_sort_tok = t;
    qsort(t->sorted, (size_t)vocab_size, sizeof *t->sorted, cmp_piece);
    return 0;
bad:
    drift_tokenizer_free(t);
    return rc;
}

void drift_tokenizer_free(drift_tokenizer_t *t)
{
    if (!t) return;
    if (t->kind != DRIFT_TOKENIZER_LLAMA2C) {
        drift_tok_free_gguf(t);
        return;
    }
    if (t->pieces)
        for (int i = 0; i < t->vocab_size; i++) free(t->pieces[i]);
    free(t->pieces);
    free(t->scores);
    free(t->sorted);
    memset(t, 0, sizeof *t);
}

/* llama2.c's decode, with the length (a byte piece <0x00> is one byte). */
static const char *llama2c_piece(const drift_tokenizer_t *t, int prev, int tok, size_t *len)
{
    static char bytes[256][2];
    const char *p = t->pieces[tok];
    if (prev == 1 && p[0] == ' ') p++;
    unsigned v;
    if (strlen(p) == 6 && sscanf(p, "<0x%02X>", &v) == 1) {
        bytes[v & 255][0] = (char)v;
        *len = 1;
        return bytes[v & 255];
    }
    *len = strlen(p);
    return p;
}

const char *drift_tokenizer_piece(const drift_tokenizer_t *t, int prev, int tok, size_t *len)
{
    size_t dummy;
    if (!len) len = &dummy;
    *len = 0;
    if (!t || tok < 0 || tok >= t->vocab_size) return "";
    if (t->kind == DRIFT_TOKENIZER_LLAMA2C) return llama2c_piece(t, prev, tok, len);
    *len = t->text_len[tok];
    return t->text[tok];
}

const char *drift_tokenizer_decode(const drift_tokenizer_t *t, int prev, int tok)
{
    return drift_tokenizer_piece(t, prev, tok, NULL);
}

static int lookup(const drift_tokenizer_t *t, const char *s)
{
    int lo = 0, hi = t->vocab_size - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(s, t->pieces[t->sorted[mid]]);
        if (!c) return t->sorted[mid];
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

int drift_tokenizer_is_eog(const drift_tokenizer_t *t, int tok)
{
    if (!t || tok < 0 || tok >= t->vocab_size) return 0;
    if (t->kind == DRIFT_TOKENIZER_LLAMA2C) return tok == 1 || tok == 2;
    return t->eog[tok];
}

int drift_tokenizer_encode_ex(
    const drift_tokenizer_t *t, const char *text, int add_special, int parse_special, int *ids, int cap, int *n)
{
    if (!t || !text || !ids || !n || cap < 1) return DRIFT_EINVAL;
    if (t->kind == DRIFT_TOKENIZER_LLAMA2C) return drift_tokenizer_encode(t, text, add_special, ids, cap, n);
    return drift_tok_encode_gguf(t, text, add_special, parse_special, ids, cap, n);
}

int drift_tokenizer_encode(const drift_tokenizer_t *t, const char *text, int bos, int *ids, int cap, int *n)
{
    if (!t || !text || !ids || !n || cap < 1) return DRIFT_EINVAL;
    if (t->kind != DRIFT_TOKENIZER_LLAMA2C) return drift_tok_encode_gguf(t, text, bos, 0, ids, cap, n);
    int k = 0;
    if (bos) ids[k++] = 1;
    char buf[64];
    if (text[0]) {
        int sp = lookup(t, " ");
        if (sp >= 0) {
            if (k >= cap) return DRIFT_ERANGE;
            ids[k++] = sp;
        }
    }
    for (const unsigned char *c = (const unsigned char *)text; *c;) {
        size_t len = 1;
        while (len < 4 && (c[len] & 0xC0) == 0x80) len++;
        memcpy(buf, c, len);
        buf[len] = 0;
        int id = lookup(t, buf);
        if (id >= 0) {
            if (k >= cap) return DRIFT_ERANGE;
            ids[k++] = id;
        } else {
            for (size_t i = 0; i < len; i++) { /* byte fallback: <0x00> is token 3 */
                if (k >= cap) return DRIFT_ERANGE;
                if ((int)c[i] + 3 >= t->vocab_size) return DRIFT_EINVAL;
                ids[k++] = (int)c[i] + 3;
            }
        }
        c += len;
    }
    char *merged = malloc((size_t)t->max_token_length * 2 + 2);
    if (!merged) return DRIFT_ENOMEM;
    int first = bos ? 1 : 0;
    for (;;) {
        float best = -1e10f;
        int best_id = -1, best_i = -1;
        for (int i = first; i + 1 < k; i++) {
            size_t la = strlen(t->pieces[ids[i]]), lb = strlen(t->pieces[ids[i + 1]]);
            if (la + lb > (size_t)t->max_token_length * 2) continue;
            memcpy(merged, t->pieces[ids[i]], la);
            memcpy(merged + la, t->pieces[ids[i + 1]], lb + 1);
            int id = lookup(t, merged);
            if (id >= 0 && t->scores[id] > best) best = t->scores[id], best_id = id, best_i = i;
        }
        if (best_i < 0) break;
        ids[best_i] = best_id;
        memmove(ids + best_i + 1, ids + best_i + 2, (size_t)(k - best_i - 2) * sizeof *ids);
        k--;
    }
    free(merged);
    *n = k;
    return 0;
}
