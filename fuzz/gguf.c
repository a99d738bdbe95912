/* fuzz/gguf.c — the GGUF reader (gguf.h) on any bytes. A file either parses into tensors that
 * lie inside the bytes, aligned, apart, and as large as their type and shape say, with every
 * getter answering on every key and every string array element readable — or is refused with
 * a one-line message and *g zeroed. Seeds (tests/fuzz/gguf/) come from llama.cpp's own writer
 * (tests/fuzz/gguf_seeds.py). */
#include "common.h"
#include "drift.h"
#include "gguf.h"

static volatile unsigned sink; /* the bytes read are used, so no read is optimized away */

static int inside(const drift_gguf_t *g, const void *p, uint64_t n)
{
    const uint8_t *b = p;
    return b >= g->base && b <= g->base + g->size && n <= (uint64_t)(g->base + g->size - b);
}

static void read_str(const drift_gguf_t *g, drift_gguf_str_t s)
{
    if (!inside(g, s.s, s.len)) abort();
    for (uint64_t i = 0; i < s.len; i++) sink += (unsigned char)s.s[i];
}

/* A C string copy of a name from the file, or NULL when it holds a NUL (no C lookup finds it). */
static char *c_name(drift_gguf_str_t s)
{
    if (s.len > 4096 || memchr(s.s, 0, (size_t)s.len)) return NULL;
    char *c = malloc((size_t)s.len + 1);
    if (!c) abort();
    memcpy(c, s.s, (size_t)s.len);
    c[s.len] = 0;
    return c;
}

static void check_getter(int rc, const char *err)
{
    if (rc != DRIFT_OK && (rc != DRIFT_EINVAL || !err[0] || strchr(err, '\n'))) abort();
}

static void check_kv(const drift_gguf_t *g, const drift_gguf_kv_t *kv)
{
    read_str(g, kv->key);
    char *key = c_name(kv->key), err[512];
    if (key) {
        if (drift_gguf_find(g, key) != kv) abort(); /* keys are unique */
        uint64_t u;
        double f;
        drift_gguf_str_t s;
        int b;
        check_getter(drift_gguf_get_u64(g, key, &u, err, sizeof err), err);
        check_getter(drift_gguf_get_f64(g, key, &f, err, sizeof err), err);
        if (drift_gguf_get_str(g, key, &s, err, sizeof err) == DRIFT_OK)
            read_str(g, s);
        else
            check_getter(DRIFT_EINVAL, err);
        check_getter(drift_gguf_get_bool(g, key, &b, err, sizeof err), err);
        free(key);
    }
    if (kv->type != DRIFT_GGUF_ARRAY) return;
    if (kv->count && !inside(g, kv->data, 1)) abort();
    for (uint64_t i = 0; i <= kv->count; i++) {
        drift_gguf_str_t s;
        double f;
        int64_t v;
        int rs = drift_gguf_array_str(kv, i, &s), rf = drift_gguf_array_f64(kv, i, &f),
            ri = drift_gguf_array_i64(kv, i, &v);
        if (i == kv->count && (rs != DRIFT_EINVAL || rf != DRIFT_EINVAL || ri != DRIFT_EINVAL))
            abort(); /* past the end */
        if (i == kv->count) break;
        if ((rs == DRIFT_OK) != (kv->elem_type == DRIFT_GGUF_STRING)) abort();
        if (rs == DRIFT_OK) read_str(g, s);
        if (rf == DRIFT_OK) sink += (unsigned)(f == f);
        if (ri == DRIFT_OK) sink += (unsigned)v;
        if (kv->elem_type != DRIFT_GGUF_STRING && i >= 64) i = kv->count - 1; /* numbers: the first 64 and the last */
    }
}

static void check_tensor(const drift_gguf_t *g, const drift_gguf_tensor_t *t)
{
    read_str(g, t->name);
    if (t->n_dims < 1 || t->n_dims > DRIFT_GGUF_MAX_DIMS || !drift_ggml_type_known(t->type) || !t->ne[0]) abort();
    size_t row, n = 1;
    if (drift_ggml_row_bytes(&row, t->type, t->ne[0])) abort();
    for (int j = 1; j < DRIFT_GGUF_MAX_DIMS; j++) {
        if (!t->ne[j] || (j >= (int)t->n_dims && t->ne[j] != 1)) abort();
        if (__builtin_mul_overflow(n, t->ne[j], &n)) abort();
    }
    if (__builtin_mul_overflow(row, n, &n) || n != t->nbytes) abort();
    if (t->offset % g->alignment || (const uint8_t *)t->data != g->base + g->data_offset + t->offset) abort();
    if (!inside(g, t->data, t->nbytes)) abort();
    const uint8_t *d = t->data;
    sink += d[0] + d[t->nbytes - 1];
    char *name = c_name(t->name);
    if (name && drift_gguf_tensor(g, name) != t) abort(); /* names are unique */
    free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    drift_gguf_t g;
    char err[512];
    if (drift_gguf_parse(&g, data, size, err, sizeof err) != DRIFT_OK) {
        if (!err[0] || strchr(err, '\n')) abort(); /* a refusal always says why, on one line */
        if (g.kv || g.tensors || g.size) abort();
        return 0;
    }
    if (g.alignment == 0 || (g.alignment & (g.alignment - 1)) || g.data_offset > g.size) abort();
    if (g.n_tensors && g.data_offset % g.alignment) abort();
    for (uint64_t i = 0; i < g.n_kv; i++) check_kv(&g, &g.kv[i]);
    for (uint64_t i = 0; i < g.n_tensors; i++) check_tensor(&g, &g.tensors[i]);
    for (uint64_t i = 0; i < g.n_tensors && i < 256; i++) /* no two overlap (the first 256: quadratic) */
        for (uint64_t j = i + 1; j < g.n_tensors && j < 256; j++) {
            const drift_gguf_tensor_t *a = &g.tensors[i], *b = &g.tensors[j];
            if (a->offset < b->offset + b->nbytes && b->offset < a->offset + a->nbytes) abort();
        }
    drift_gguf_close(&g);
    return 0;
}
