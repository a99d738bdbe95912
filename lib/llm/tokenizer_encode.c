/* tokenizer_encode.c — llama.cpp's llama_tokenize for GGUF vocabularies: special tokens cut out
 * first, then byte-level BPE (merge ranks) or SentencePiece (scores) on what remains. See
 * tokenizer.h for the rules; each step cites the llama.cpp function it follows. */
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "tokenizer.h"
#include "tokenizer_impl.h"
#include "unicode_class.h"

typedef struct {
    int *ids;
    int cap, n;
} out_t;

static int push(out_t *o, int id)
{
    if (o->n >= o->cap) return DRIFT_ERANGE;
    o->ids[o->n++] = id;
    return 0;
}

/* ---- special tokens (llama_vocab::impl::tokenizer_st_partition) --------------------------- */
typedef struct {
    size_t off, len; /* raw text: bytes [off, off + len) */
    int tok;         /* >= 0: a special token */
} frag_t;

typedef struct {
    frag_t *f;
    size_t n, cap;
} frags_t;

static int frag_add(frags_t *fs, size_t off, size_t len, int tok)
{
    if (fs->n == fs->cap) {
        size_t nc = fs->cap ? 2 * fs->cap : 16;
        frag_t *nf = realloc(fs->f, nc * sizeof *nf);
        if (!nf) return DRIFT_ENOMEM;
        fs->f = nf, fs->cap = nc;
    }
    fs->f[fs->n++] = (frag_t){off, len, tok};
    return 0;
}

static const char *find(const char *hay, size_t n, const char *needle, size_t m)
{
    if (!m || m > n) return NULL;
    for (const char *p = hay, *end = hay + n - m + 1; p < end; p++) {
        p = memchr(p, needle[0], (size_t)(end - p));
        if (!p) return NULL;
        if (!memcmp(p, needle, m)) return p;
    }
    return NULL;
}

/* Each special token in turn (longest first) is cut out of every raw fragment left. */
static int partition(const drift_tokenizer_t *t, const char *text, size_t len, int parse_special, frags_t *fs)
{
    fs->n = 0;
    if (!len) return 0;
    int rc = frag_add(fs, 0, len, -1);
    frags_t next = {0};
    for (int k = 0; !rc && k < t->n_special; k++) {
        int id = t->special[k];
        if (!parse_special && (t->type[id] == DRIFT_TOKEN_CONTROL || t->type[id] == DRIFT_TOKEN_UNKNOWN))
            continue; /* user-defined tokens are cut out always, as in llama.cpp */
        const char *s = t->pieces[id];
        size_t m = t->piece_len[id];
        next.n = 0;
        for (size_t i = 0; !rc && i < fs->n; i++) {
            frag_t f = fs->f[i];
            if (f.tok >= 0) {
                rc = frag_add(&next, f.off, f.len, f.tok);
                continue;
            }
            size_t at = f.off, end = f.off + f.len;
            const char *p;
            while (!rc && (p = find(text + at, end - at, s, m))) {
                size_t hit = (size_t)(p - text);
                if (hit > at) rc = frag_add(&next, at, hit - at, -1);
                if (!rc) rc = frag_add(&next, 0, 0, id);
                at = hit + m;
            }
            if (!rc && at < end) rc = frag_add(&next, at, end - at, -1);
        }
        frags_t tmp = *fs;
        *fs = next;
        next = tmp;
    }
    free(next.f);
    return rc;
}

/* ---- a heap of bigrams --------------------------------------------------------------------- */
typedef struct {
    int left, right;
    double key;  /* BPE: rank (smallest first); SPM: -score (highest score first) */
    size_t size; /* bytes of both symbols when queued: a changed pair is stale */
} bigram_t;

static int before(const bigram_t *a, const bigram_t *b)
{
    return a->key < b->key || (a->key == b->key && a->left < b->left); /* the leftmost of equals */
}

static void heap_push(bigram_t *h, size_t *n, bigram_t b)
{
    size_t i = (*n)++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!before(&b, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = b;
}

static bigram_t heap_pop(bigram_t *h, size_t *n)
{
    bigram_t top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && before(&h[c + 1], &h[c])) c++;
        if (!before(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

/* Symbols of one word: bytes [start, start + n) of buf, linked in order; n = 0 once merged away. */
typedef struct {
    const unsigned char *buf;
    size_t *start, *n;
    int *prev, *next;
    bigram_t *heap;
    size_t nheap;
} symbols_t;

/* Queue the pair (l, r) when the vocabulary merges it (BPE: a merge rank; SPM: a token). */
static void try_pair(const drift_tokenizer_t *t, symbols_t *s, int l, int r)
{
    if (l < 0 || r < 0) return;
    const unsigned char *p = s->buf + s->start[l];
    double key;
    if (t->kind == DRIFT_TOKENIZER_BPE) {
        int rank = drift_tok_merge_rank(t, p, s->n[l], s->n[r]);
        if (rank < 0) return;
        key = rank;
    } else {
        int id = drift_tok_lookup(t, p, s->n[l] + s->n[r]);
        if (id < 0) return;
        key = -(double)t->scores[id];
    }
    heap_push(s->heap, &s->nheap, (bigram_t){l, r, key, s->n[l] + s->n[r]});
}

/* Merge until no queued pair is left (llm_tokenizer_bpe_session / llm_tokenizer_spm_session). */
static void merge_all(const drift_tokenizer_t *t, symbols_t *s, int nsym)
{
    s->nheap = 0;
    for (int i = 1; i < nsym; i++) try_pair(t, s, i - 1, i);
    while (s->nheap) {
        bigram_t b = heap_pop(s->heap, &s->nheap);
        if (!s->n[b.left] || !s->n[b.right] || s->n[b.left] + s->n[b.right] != b.size) continue;
        s->n[b.left] += s->n[b.right];
        s->n[b.right] = 0;
        s->next[b.left] = s->next[b.right];
        if (s->next[b.right] >= 0) s->prev[s->next[b.right]] = b.left;
        try_pair(t, s, s->prev[b.left], b.left);
        try_pair(t, s, b.left, s->next[b.left]);
    }
}

/* Scratch for words of up to `bytes` bytes; a merge queues at most two pairs, so the heap holds
 * fewer than 3 per byte. */
static int symbols_alloc(symbols_t *s, size_t bytes)
{
    size_t m = bytes ? bytes : 1;
    s->start = malloc(m * sizeof *s->start);
    s->n = malloc(m * sizeof *s->n);
    s->prev = malloc(m * sizeof *s->prev);
    s->next = malloc(m * sizeof *s->next);
    s->heap = malloc(3 * m * sizeof *s->heap);
    return s->start && s->n && s->prev && s->next && s->heap ? 0 : DRIFT_ENOMEM;
}

static void symbols_free(symbols_t *s)
{
    free(s->start);
    free(s->n);
    free(s->prev);
    free(s->next);
    free(s->heap);
}

/* ---- byte-level BPE ------------------------------------------------------------------------ */
static int bpe_word(
    const drift_tokenizer_t *t, symbols_t *s, const unsigned char *w, size_t len, const uint32_t fwd[256], out_t *o)
{
    s->buf = w;
    for (size_t i = 0; i < len; i++) { /* one symbol per byte: one character of the alphabet */
        s->start[i] = i, s->n[i] = 1;
        s->prev[i] = (int)i - 1;
        s->next[i] = i + 1 < len ? (int)i + 1 : -1;
    }
    merge_all(t, s, (int)len);
    int rc = 0;
    for (int i = 0; !rc && i >= 0; i = s->next[i]) {
        int id = drift_tok_lookup(t, w + s->start[i], s->n[i]);
        if (id >= 0) {
            rc = push(o, id);
            continue;
        }
        /* a piece the vocabulary lacks: the tokens of the single bytes of its characters */
        for (size_t j = 0; !rc && j < s->n[i]; j++) {
            unsigned char u[4];
            size_t m = drift_utf8_put(fwd[w[s->start[i] + j]], u);
            for (size_t k = 0; !rc && k < m; k++)
                if (t->byte_token[u[k]] >= 0) rc = push(o, t->byte_token[u[k]]);
        }
    }
    return rc;
}

static int bpe_fragment(const drift_tokenizer_t *t, const char *text, size_t len, out_t *o)
{
    uint32_t fwd[256];
    int inv[DRIFT_TOK_ALPHABET_END];
    drift_tok_alphabet(fwd, inv);
    uint32_t *cps = malloc((len ? len : 1) * sizeof *cps);
    size_t *ends = malloc((len ? len : 1) * sizeof *ends);
    unsigned char *w = NULL;
    symbols_t s = {0};
    int rc = cps && ends ? 0 : DRIFT_ENOMEM;
    size_t ncp = 0;
    for (size_t i = 0; !rc && i < len;) { /* llama.cpp's unicode_cpts_from_utf8 */
        size_t used;
        cps[ncp++] = drift_utf8_next((const unsigned char *)text + i, len - i, &used);
        i += used;
    }
    size_t nw = rc ? 0 : drift_pretok_split(t->pre, cps, ncp, ends), longest = 0;
    for (size_t k = 0, a = 0; k < nw; a = ends[k++])
        if (ends[k] - a > longest) longest = ends[k] - a;
    if (!rc) {
        w = malloc(4 * longest + 1);
        rc = w ? symbols_alloc(&s, 4 * longest) : DRIFT_ENOMEM;
    }
    for (size_t k = 0, a = 0; !rc && k < nw; a = ends[k++]) {
        size_t wl = 0;
        for (size_t i = a; i < ends[k]; i++) wl += drift_utf8_put(cps[i], w + wl);
        rc = bpe_word(t, &s, w, wl, fwd, o);
    }
    symbols_free(&s);
    free(w);
    free(ends);
    free(cps);
    return rc;
}

/* ---- SentencePiece ------------------------------------------------------------------------- */
static int spm_fragment(const drift_tokenizer_t *t, const char *text, size_t len, int prefix, out_t *o)
{
    size_t cap = 3 * (len + 1);
    unsigned char *w = malloc(cap);
    symbols_t s = {0};
    int rc = w ? symbols_alloc(&s, cap) : DRIFT_ENOMEM;
    if (rc) goto done;
    size_t wl = 0;
    for (size_t i = 0; i < len + (size_t)prefix; i++) { /* spaces written as U+2581 */
        char c = prefix ? (i ? text[i - 1] : ' ') : text[i];
        if (c == ' ')
            memcpy(w + wl, "\xE2\x96\x81", 3), wl += 3;
        else
            w[wl++] = (unsigned char)c;
    }
    static const unsigned char lead_len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}; /* unicode_len_utf8 */
    int nsym = 0;
    for (size_t i = 0; i < wl; nsym++) {
        size_t m = lead_len[w[i] >> 4];
        if (m > wl - i) m = wl - i;
        s.start[nsym] = i, s.n[nsym] = m;
        s.prev[nsym] = nsym - 1;
        i += m;
        s.next[nsym] = i < wl ? nsym + 1 : -1;
    }
    s.buf = w;
    merge_all(t, &s, nsym);
    for (int i = 0; !rc && nsym && i >= 0; i = s.next[i]) {
        int id = drift_tok_lookup(t, w + s.start[i], s.n[i]);
        if (id >= 0) {
            rc = push(o, id);
            continue;
        }
        for (size_t j = 0; !rc && j < s.n[i]; j++) { /* byte fallback */
            int b = t->byte_token[w[s.start[i] + j]];
            rc = b >= 0 ? push(o, b) : DRIFT_EINVAL;
        }
    }
done:
    symbols_free(&s);
    free(w);
    return rc;
}

/* ---- llama_vocab::impl::tokenize ----------------------------------------------------------- */
int drift_tok_encode_gguf(
    const drift_tokenizer_t *t, const char *text, int add_special, int parse_special, int *ids, int cap, int *n)
{
    out_t o = {ids, cap, 0};
    frags_t fs = {0};
    int rc = 0;
    if (add_special && t->add_bos) rc = t->bos_id >= 0 ? push(&o, t->bos_id) : DRIFT_EINVAL;
    if (!rc) rc = partition(t, text, strlen(text), parse_special, &fs);
    int prev_special = 1; /* SPM: the first fragment gets the space prefix */
    for (size_t i = 0; !rc && i < fs.n; i++) {
        const frag_t *f = &fs.f[i];
        if (f->tok >= 0) {
            rc = push(&o, f->tok);
            prev_special = 1;
        } else if (t->kind == DRIFT_TOKENIZER_BPE) {
            rc = bpe_fragment(t, text + f->off, f->len, &o);
        } else {
            rc = spm_fragment(t, text + f->off, f->len, t->add_space_prefix && prev_special, &o);
            prev_special = 0;
        }
    }
    if (!rc && add_special && t->add_eos) rc = t->eos_id >= 0 ? push(&o, t->eos_id) : DRIFT_EINVAL;
    free(fs.f);
    *n = o.n;
    return rc;
}
