/* gguf.c — the GGUF reader (gguf.h): one pass over the bytes with a bounded cursor, every
 * count checked against the bytes left before anything is allocated, then the checks that
 * need the whole picture (unique names, alignment, tensors inside the data and apart).
 *
 * Why the minimum sizes below make a count check sound: a key-value pair takes at least
 * KV_MIN_BYTES (key length 8, a non-empty key 1, value type 4, the smallest value 1) and a
 * tensor info TI_MIN_BYTES (name length 8, n_dims 4, one ne 8, type 4, offset 8), so a count
 * times its minimum above the bytes left cannot be true, and what is allocated is bounded by a
 * small multiple of the file's size. */
#include "gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drift.h"
#include "why.h"

#define KV_MIN_BYTES 14
#define TI_MIN_BYTES 32
#define QUOTE_MAX 40 /* bytes of a file's string shown in a message */

typedef struct {
    const uint8_t *p;
    size_t size, pos;
    char *err;
    size_t errsize;
    char where[224]; /* the item being read, e.g. "kv[3] 'general.name'"; empty for the header */
} reader;

static size_t left(const reader *r) { return r->size - r->pos; }

/* A string from the file as it may appear in a one-line message: printable ASCII kept, every
 * other byte as \xNN, quotes and backslashes escaped, cut at QUOTE_MAX bytes with "...". */
static void quote(char *out, size_t outsize, const char *s, uint64_t len)
{
    size_t o = 0;
    uint64_t n = len < QUOTE_MAX ? len : QUOTE_MAX;
    for (uint64_t i = 0; i < n && o + 5 < outsize; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\'' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c >= 0x20 && c < 0x7f) {
            out[o++] = (char)c;
        } else {
            o += (size_t)snprintf(out + o, outsize - o, "\\x%02x", c);
        }
    }
    if (len > n && o + 4 <= outsize) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o < outsize ? o : outsize - 1] = 0;
}

static void set_where(reader *r, const char *item, uint64_t index, const drift_gguf_str_t *name)
{
    if (!name) {
        snprintf(r->where, sizeof r->where, "%s[%llu]", item, (unsigned long long)index);
        return;
    }
    char q[4 * QUOTE_MAX + 8];
    quote(q, sizeof q, name->s, name->len);
    snprintf(r->where, sizeof r->where, "%s[%llu] '%s'", item, (unsigned long long)index, q);
}

static int fail(reader *r, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(reader *r, const char *field, const char *fmt, ...)
{
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->where[0]) return drift_why(r->err, r->errsize, DRIFT_EINVAL, "%s: %s: %s", r->where, field, msg);
    return drift_why(r->err, r->errsize, DRIFT_EINVAL, "%s: %s", field, msg);
}

static int need(reader *r, size_t n, const char *field)
{
    if (left(r) >= n) return 0;
    return fail(r, field, "expected %zu bytes, found %zu bytes left (truncated)", n, left(r));
}

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t le64(const uint8_t *b) { return (uint64_t)le32(b) | (uint64_t)le32(b + 4) << 32; }

static int rd_u32(reader *r, uint32_t *v, const char *field)
{
    int rc = need(r, 4, field);
    if (rc) return rc;
    *v = le32(r->p + r->pos);
    r->pos += 4;
    return 0;
}

static int rd_u64(reader *r, uint64_t *v, const char *field)
{
    int rc = need(r, 8, field);
    if (rc) return rc;
    *v = le64(r->p + r->pos);
    r->pos += 8;
    return 0;
}

/* A gguf string; field names it ("key", "name", "value[3]"). */
static int rd_str(reader *r, drift_gguf_str_t *s, const char *field)
{
    char f[96];
    snprintf(f, sizeof f, "%s length", field);
    uint64_t len;
    int rc = rd_u64(r, &len, f);
    if (rc) return rc;
    if (len > left(r))
        return fail(r, f, "expected at most %zu (the bytes left), found %llu", left(r), (unsigned long long)len);
    s->s = (const char *)(r->p + r->pos);
    s->len = len;
    r->pos += (size_t)len;
    return 0;
}

/* Bytes of one value of a scalar type; 0 for string, array and unknown types. */
static size_t scalar_bytes(uint32_t t)
{
    switch (t) {
    case DRIFT_GGUF_U8:
    case DRIFT_GGUF_I8:
    case DRIFT_GGUF_BOOL: return 1;
    case DRIFT_GGUF_U16:
    case DRIFT_GGUF_I16: return 2;
    case DRIFT_GGUF_U32:
    case DRIFT_GGUF_I32:
    case DRIFT_GGUF_F32: return 4;
    case DRIFT_GGUF_U64:
    case DRIFT_GGUF_I64:
    case DRIFT_GGUF_F64: return 8;
    default: return 0;
    }
}

/* The fewest bytes one element of type t can take (a string: its length; an array: its element
 * type and count). */
static size_t min_bytes(uint32_t t)
{
    if (t == DRIFT_GGUF_STRING) return 8;
    if (t == DRIFT_GGUF_ARRAY) return 12;
    return scalar_bytes(t);
}

static int is_unsigned(uint32_t t)
{
    return t == DRIFT_GGUF_U8 || t == DRIFT_GGUF_U16 || t == DRIFT_GGUF_U32 || t == DRIFT_GGUF_U64;
}

static int is_signed(uint32_t t)
{
    return t == DRIFT_GGUF_I8 || t == DRIFT_GGUF_I16 || t == DRIFT_GGUF_I32 || t == DRIFT_GGUF_I64;
}

/* The scalar of type t at b, widened as drift_gguf_kv_t holds it. */
static void widen(drift_gguf_kv_t *kv, uint32_t t, const uint8_t *b)
{
    switch (t) {
    case DRIFT_GGUF_U8:
    case DRIFT_GGUF_BOOL: kv->v.u = b[0]; break;
    case DRIFT_GGUF_I8: kv->v.i = (int8_t)b[0]; break;
    case DRIFT_GGUF_U16: kv->v.u = (uint16_t)(b[0] | b[1] << 8); break;
    case DRIFT_GGUF_I16: kv->v.i = (int16_t)(uint16_t)(b[0] | b[1] << 8); break;
    case DRIFT_GGUF_U32: kv->v.u = le32(b); break;
    case DRIFT_GGUF_I32: kv->v.i = (int32_t)le32(b); break;
    case DRIFT_GGUF_U64: kv->v.u = le64(b); break;
    case DRIFT_GGUF_I64: kv->v.i = (int64_t)le64(b); break;
    case DRIFT_GGUF_F32: {
        uint32_t u = le32(b);
        float f;
        memcpy(&f, &u, sizeof f);
        kv->v.f = f;
        break;
    }
    case DRIFT_GGUF_F64: {
        uint64_t u = le64(b);
        memcpy(&kv->v.f, &u, sizeof kv->v.f);
        break;
    }
    default: break;
    }
}

static int check_type(reader *r, uint32_t t, const char *field)
{
    if (t < DRIFT_GGUF_NTYPES) return 0;
    return fail(r, field, "expected a value type 0..%d, found %u", DRIFT_GGUF_NTYPES - 1, t);
}

/* The value of type t at the cursor (its type tag already read). kv receives it at the top
 * level; nested array elements pass NULL and are only checked. */
static int rd_value(reader *r, uint32_t t, drift_gguf_kv_t *kv, int depth, const char *field)
{
    char f[96];
    int rc;
    if (t == DRIFT_GGUF_STRING) {
        drift_gguf_str_t s;
        if ((rc = rd_str(r, &s, field))) return rc;
        if (kv) kv->str = s;
        return 0;
    }
    if (t != DRIFT_GGUF_ARRAY) {
        size_t n = scalar_bytes(t);
        if ((rc = need(r, n, field))) return rc;
        const uint8_t *b = r->p + r->pos;
        if (t == DRIFT_GGUF_BOOL && b[0] > 1) return fail(r, field, "expected a bool 0 or 1, found %u", b[0]);
        if (kv) widen(kv, t, b);
        r->pos += n;
        return 0;
    }
    uint32_t et;
    uint64_t count;
    snprintf(f, sizeof f, "%s element type", field);
    if ((rc = rd_u32(r, &et, f)) || (rc = check_type(r, et, f))) return rc;
    if (et == DRIFT_GGUF_ARRAY && depth + 1 >= DRIFT_GGUF_MAX_NEST)
        return fail(r, f, "expected arrays nested at most %d deep, found deeper", DRIFT_GGUF_MAX_NEST);
    snprintf(f, sizeof f, "%s count", field);
    if ((rc = rd_u64(r, &count, f))) return rc;
    size_t least = min_bytes(et);
    if (count > left(r) / least)
        return fail(r, f,
            "expected at most %zu elements of %s in the %zu bytes left (%zu bytes each at least), found %llu",
            left(r) / least, drift_gguf_type_name((drift_gguf_type_t)et), left(r), least, (unsigned long long)count);
    if (kv) {
        kv->elem_type = (drift_gguf_type_t)et;
        kv->count = count;
        kv->data = r->p + r->pos;
    }
    if (et == DRIFT_GGUF_STRING) {
        drift_gguf_str_t *strs = NULL;
        if (kv && count) {
            strs = malloc((size_t)count * sizeof *strs);
            if (!strs)
                return drift_why(r->err, r->errsize, DRIFT_ENOMEM, "%s: out of memory for %llu strings", r->where,
                    (unsigned long long)count);
            kv->strs = strs;
        }
        for (uint64_t i = 0; i < count; i++) {
            /* the common case inline (a tokenizer's 49152 pieces): the field is named on failure only */
            if (left(r) >= 8) {
                uint64_t len = le64(r->p + r->pos);
                if (len <= left(r) - 8) {
                    if (strs) strs[i] = (drift_gguf_str_t){(const char *)(r->p + r->pos + 8), len};
                    r->pos += 8 + (size_t)len;
                    continue;
                }
            }
            snprintf(f, sizeof f, "%s[%llu]", field, (unsigned long long)i);
            drift_gguf_str_t s;
            if ((rc = rd_str(r, &s, f))) return rc;
        }
        return 0;
    }
    if (et == DRIFT_GGUF_ARRAY) {
        for (uint64_t i = 0; i < count; i++) {
            snprintf(f, sizeof f, "%s[%llu]", field, (unsigned long long)i);
            if ((rc = rd_value(r, DRIFT_GGUF_ARRAY, NULL, depth + 1, f))) return rc;
        }
        return 0;
    }
    size_t n = (size_t)count * least; /* count <= left / least: no overflow */
    if (et == DRIFT_GGUF_BOOL) {
        const uint8_t *b = r->p + r->pos;
        for (size_t i = 0; i < n; i++)
            if (b[i] > 1) {
                snprintf(f, sizeof f, "%s[%zu]", field, i);
                return fail(r, f, "expected a bool 0 or 1, found %u", b[i]);
            }
    }
    r->pos += n;
    return 0;
}

static int str_cmp(const drift_gguf_str_t *a, const drift_gguf_str_t *b)
{
    size_t n = a->len < b->len ? (size_t)a->len : (size_t)b->len;
    int c = n ? memcmp(a->s, b->s, n) : 0;
    if (c) return c;
    return (a->len > b->len) - (a->len < b->len);
}

/* Orders for qsort: by name, ties by position in the array (so that the order, and the
 * duplicate a message names, is the same on every libc). */
static int kv_by_key(const void *x, const void *y)
{
    const drift_gguf_kv_t *a = *(const drift_gguf_kv_t *const *)x, *b = *(const drift_gguf_kv_t *const *)y;
    int c = str_cmp(&a->key, &b->key);
    return c ? c : (a > b) - (a < b);
}

static int tensor_by_name(const void *x, const void *y)
{
    const drift_gguf_tensor_t *a = *(const drift_gguf_tensor_t *const *)x, *b = *(const drift_gguf_tensor_t *const *)y;
    int c = str_cmp(&a->name, &b->name);
    return c ? c : (a > b) - (a < b);
}

static int tensor_by_offset(const void *x, const void *y)
{
    const drift_gguf_tensor_t *a = *(const drift_gguf_tensor_t *const *)x, *b = *(const drift_gguf_tensor_t *const *)y;
    if (a->offset != b->offset) return (a->offset > b->offset) - (a->offset < b->offset);
    return (a > b) - (a < b);
}

static int rd_kvs(reader *r, drift_gguf_t *g)
{
    int rc;
    for (uint64_t i = 0; i < g->n_kv; i++) {
        drift_gguf_kv_t *kv = &g->kv[i];
        set_where(r, "kv", i, NULL);
        if ((rc = rd_str(r, &kv->key, "key"))) return rc;
        if (!kv->key.len) return fail(r, "key", "expected a non-empty key, found length 0");
        set_where(r, "kv", i, &kv->key);
        uint32_t t;
        if ((rc = rd_u32(r, &t, "value type")) || (rc = check_type(r, t, "value type"))) return rc;
        kv->type = (drift_gguf_type_t)t;
        if ((rc = rd_value(r, t, kv, 0, "value"))) return rc;
    }
    if (!g->n_kv) return 0;
    g->kv_by_key = malloc((size_t)g->n_kv * sizeof *g->kv_by_key);
    if (!g->kv_by_key)
        return drift_why(r->err, r->errsize, DRIFT_ENOMEM, "out of memory for %llu keys", (unsigned long long)g->n_kv);
    for (uint64_t i = 0; i < g->n_kv; i++) g->kv_by_key[i] = &g->kv[i];
    qsort(g->kv_by_key, (size_t)g->n_kv, sizeof *g->kv_by_key, kv_by_key);
    for (uint64_t i = 1; i < g->n_kv; i++) {
        const drift_gguf_kv_t *a = g->kv_by_key[i - 1], *b = g->kv_by_key[i];
        if (str_cmp(&a->key, &b->key)) continue;
        set_where(r, "kv", (uint64_t)(b - g->kv), &b->key);
        return fail(r, "key", "expected unique keys, found the key of kv[%zu] again", (size_t)(a - g->kv));
    }
    return 0;
}

static int rd_alignment(reader *r, drift_gguf_t *g)
{
    g->alignment = DRIFT_GGUF_DEFAULT_ALIGNMENT;
    const drift_gguf_kv_t *kv = drift_gguf_find(g, "general.alignment");
    if (!kv) return 0;
    set_where(r, "kv", (uint64_t)(kv - g->kv), &kv->key);
    if (kv->type != DRIFT_GGUF_U32)
        return fail(r, "value type", "expected u32, found %s", drift_gguf_type_name(kv->type));
    if (!kv->v.u || (kv->v.u & (kv->v.u - 1)))
        return fail(r, "value", "expected a power of two, found %llu", (unsigned long long)kv->v.u);
    g->alignment = (size_t)kv->v.u;
    return 0;
}

static int rd_tensor_info(reader *r, drift_gguf_tensor_t *t, uint64_t i)
{
    int rc;
    char f[32];
    set_where(r, "tensor", i, NULL);
    if ((rc = rd_str(r, &t->name, "name"))) return rc;
    set_where(r, "tensor", i, &t->name);
    if ((rc = rd_u32(r, &t->n_dims, "n_dims"))) return rc;
    if (t->n_dims < 1 || t->n_dims > DRIFT_GGUF_MAX_DIMS)
        return fail(r, "n_dims", "expected 1..%d, found %u", DRIFT_GGUF_MAX_DIMS, t->n_dims);
    uint64_t nel = 1;
    for (uint32_t j = 0; j < DRIFT_GGUF_MAX_DIMS; j++) {
        t->ne[j] = 1;
        if (j >= t->n_dims) continue;
        snprintf(f, sizeof f, "ne[%u]", j);
        if ((rc = rd_u64(r, &t->ne[j], f))) return rc;
        if (!t->ne[j]) return fail(r, f, "expected at least 1, found 0");
        if (nel > (uint64_t)INT64_MAX / t->ne[j])
            return fail(r, f,
                "expected a total of at most 2^63-1 elements (ggml counts in int64), found %llu after %llu",
                (unsigned long long)t->ne[j], (unsigned long long)nel);
        nel *= t->ne[j];
    }
    if ((rc = rd_u32(r, &t->type, "type"))) return rc;
    if (!drift_ggml_type_known(t->type))
        return fail(r, "type",
            "expected a known ggml type (f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 q2_K..q8_K), found %u", t->type);
    size_t row;
    rc = drift_ggml_row_bytes(&row, t->type, t->ne[0]);
    if (rc == DRIFT_EINVAL)
        return fail(r, "ne[0]", "expected a multiple of %zu (the %s block), found %llu",
            drift_ggml_block_elems(t->type), drift_ggml_type_name(t->type), (unsigned long long)t->ne[0]);
    uint64_t rows = nel / t->ne[0];
    if (rc || rows > SIZE_MAX / row)
        return fail(r, "ne", "expected a size in bytes that fits in size_t, found %llu rows of %llu %s",
            (unsigned long long)rows, (unsigned long long)t->ne[0], drift_ggml_type_name(t->type));
    t->nbytes = row * (size_t)rows;
    return rd_u64(r, &t->offset, "offset");
}

/* Names unique, offsets aligned, every tensor inside the data section, no two overlapping. */
static int check_tensors(reader *r, drift_gguf_t *g)
{
    uint64_t n = g->n_tensors;
    g->tensor_by_name = malloc((size_t)n * sizeof *g->tensor_by_name);
    const drift_gguf_tensor_t **by_off = malloc((size_t)n * sizeof *by_off);
    if (!g->tensor_by_name || !by_off) {
        free(by_off);
        return drift_why(r->err, r->errsize, DRIFT_ENOMEM, "out of memory for %llu tensors", (unsigned long long)n);
    }
    for (uint64_t i = 0; i < n; i++) g->tensor_by_name[i] = by_off[i] = &g->tensors[i];
    qsort(g->tensor_by_name, (size_t)n, sizeof *by_off, tensor_by_name);
    int rc = 0;
    for (uint64_t i = 1; i < n && !rc; i++) {
        const drift_gguf_tensor_t *a = g->tensor_by_name[i - 1], *b = g->tensor_by_name[i];
        if (str_cmp(&a->name, &b->name)) continue;
        set_where(r, "tensor", (uint64_t)(b - g->tensors), &b->name);
        rc = fail(r, "name", "expected unique names, found the name of tensor[%zu] again", (size_t)(a - g->tensors));
    }
    size_t data = g->size - g->data_offset;
    for (uint64_t i = 0; i < n && !rc; i++) {
        drift_gguf_tensor_t *t = &g->tensors[i];
        if (t->offset % g->alignment || t->offset > data || t->nbytes > data - t->offset)
            set_where(r, "tensor", i, &t->name);
        if (t->offset % g->alignment)
            rc = fail(r, "offset", "expected a multiple of the alignment %zu, found %llu", g->alignment,
                (unsigned long long)t->offset);
        else if (t->offset > data || t->nbytes > data - t->offset)
            rc = fail(r, "offset",
                "expected offset + %zu bytes within the %zu bytes of the data section (file offset %zu), found offset %llu",
                t->nbytes, data, g->data_offset, (unsigned long long)t->offset);
        else
            t->data = g->base + g->data_offset + t->offset;
    }
    if (!rc) qsort(by_off, (size_t)n, sizeof *by_off, tensor_by_offset);
    for (uint64_t i = 1; i < n && !rc; i++) {
        const drift_gguf_tensor_t *a = by_off[i - 1], *b = by_off[i];
        if (b->offset >= a->offset + a->nbytes) continue; /* both inside the data: no overflow */
        set_where(r, "tensor", (uint64_t)(b - g->tensors), &b->name);
        rc = fail(r, "offset", "expected no overlap with tensor[%zu] at [%llu, %llu), found offset %llu",
            (size_t)(a - g->tensors), (unsigned long long)a->offset, (unsigned long long)(a->offset + a->nbytes),
            (unsigned long long)b->offset);
    }
    free(by_off);
    return rc;
}

static int parse(reader *r, drift_gguf_t *g)
{
    int rc;
    if ((rc = need(r, 4, "magic"))) return rc;
    if (memcmp(r->p, "GGUF", 4)) {
        char q[4 * 4 + 8];
        quote(q, sizeof q, (const char *)r->p, 4);
        return fail(r, "magic", "expected 'GGUF', found '%s'", q);
    }
    r->pos = 4;
    if ((rc = rd_u32(r, &g->version, "version"))) return rc;
    if (g->version != 2 && g->version != 3) {
        const char *why = g->version == 1                        ? " (GGUF v1, with 32-bit counts, is not read)"
                          : g->version && !(g->version & 0xffff) ? " (a big-endian file?)"
                                                                 : "";
        return fail(r, "version", "expected 2 or 3, found %u%s", g->version, why);
    }
    if ((rc = rd_u64(r, &g->n_tensors, "n_tensors")) || (rc = rd_u64(r, &g->n_kv, "n_kv"))) return rc;
    size_t rest = left(r);
    if (g->n_tensors > rest / TI_MIN_BYTES)
        return fail(r, "n_tensors",
            "expected at most %zu tensor infos in the %zu bytes left (%d bytes each at least), found %llu",
            rest / TI_MIN_BYTES, rest, TI_MIN_BYTES, (unsigned long long)g->n_tensors);
    rest -= (size_t)g->n_tensors * TI_MIN_BYTES;
    if (g->n_kv > rest / KV_MIN_BYTES)
        return fail(r, "n_kv",
            "expected at most %zu key-value pairs in the %zu bytes left (%d bytes each at least, after %d for each of "
            "%llu tensor infos), found %llu",
            rest / KV_MIN_BYTES, left(r), KV_MIN_BYTES, TI_MIN_BYTES, (unsigned long long)g->n_tensors,
            (unsigned long long)g->n_kv);
    if (g->n_kv && !(g->kv = calloc((size_t)g->n_kv, sizeof *g->kv)))
        return drift_why(r->err, r->errsize, DRIFT_ENOMEM, "out of memory for %llu keys", (unsigned long long)g->n_kv);
    if (g->n_tensors && !(g->tensors = calloc((size_t)g->n_tensors, sizeof *g->tensors)))
        return drift_why(
            r->err, r->errsize, DRIFT_ENOMEM, "out of memory for %llu tensors", (unsigned long long)g->n_tensors);
    if ((rc = rd_kvs(r, g))) return rc;
    r->where[0] = 0;
    if ((rc = rd_alignment(r, g))) return rc;
    for (uint64_t i = 0; i < g->n_tensors; i++)
        if ((rc = rd_tensor_info(r, &g->tensors[i], i))) return rc;
    r->where[0] = 0;
    size_t start = r->pos + (g->alignment - r->pos % g->alignment) % g->alignment;
    if (start > r->size || start < r->pos) {
        if (g->n_tensors)
            return fail(r, "data section",
                "expected to start at byte %zu (tensor infos end at %zu, aligned to %zu), found a file of %zu bytes",
                start, r->pos, g->alignment, r->size);
        start = r->size;
    }
    g->data_offset = start;
    return g->n_tensors ? check_tensors(r, g) : 0;
}

int drift_gguf_parse(drift_gguf_t *g, const void *bytes, size_t size, char *err, size_t errsz)
{
    if (err && errsz) err[0] = 0;
    if (!g) return drift_why(err, errsz, DRIFT_EINVAL, "no gguf");
    memset(g, 0, sizeof *g);
    if (!bytes && size) return drift_why(err, errsz, DRIFT_EINVAL, "no data");
    static const uint8_t none[1];
    reader r = {bytes ? bytes : none, size, 0, err, errsz, ""};
    g->base = r.p;
    g->size = size;
    int rc = parse(&r, g);
    if (rc) drift_gguf_close(g);
    return rc;
}

int drift_gguf_open(drift_gguf_t *g, const char *path, char *err, size_t errsz)
{
    if (err && errsz) err[0] = 0;
    if (!g) return drift_why(err, errsz, DRIFT_EINVAL, "no gguf");
    memset(g, 0, sizeof *g);
    if (!path) return drift_why(err, errsz, DRIFT_EINVAL, "no gguf path");
    /* O_NONBLOCK: opening a FIFO without a writer returns at once; fstat then refuses it */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return drift_why(err, errsz, DRIFT_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return drift_why(err, errsz, DRIFT_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        const char *kind = S_ISDIR(st.st_mode)                          ? "a directory"
                           : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                           : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                           : S_ISSOCK(st.st_mode)                       ? "a socket"
                                                                        : "not a regular file";
        return drift_why(err, errsz, DRIFT_EIO, "%s: expected a regular file, found %s", path, kind);
    }
#if SIZE_MAX < UINT64_MAX
    if ((uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return drift_why(err, errsz, DRIFT_ENOMEM, "%s: %lld bytes cannot be mapped", path, (long long)st.st_size);
    }
#endif
    size_t size = (size_t)st.st_size;
    void *map = NULL;
    if (size) {
        map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int e = errno;
            close(fd);
            return drift_why(err, errsz, DRIFT_EIO, "%s: cannot map %zu bytes: %s", path, size, strerror(e));
        }
    }
    close(fd);
    char inner[512];
    int rc = drift_gguf_parse(g, map, size, inner, sizeof inner);
    if (rc) {
        if (map) munmap(map, size);
        return drift_why(err, errsz, rc, "%s: %s", path, inner);
    }
    g->map = map;
    g->map_size = size;
    return 0;
}

void drift_gguf_close(drift_gguf_t *g)
{
    if (!g) return;
    for (uint64_t i = 0; g->kv && i < g->n_kv; i++) free(g->kv[i].strs);
    free(g->kv);
    free(g->tensors);
    free(g->kv_by_key);
    free(g->tensor_by_name);
    if (g->map) munmap(g->map, g->map_size);
    memset(g, 0, sizeof *g);
}

/* ---- lookups and getters ---------------------------------------------------------------- */

/* bsearch comparators: a name against an entry of the sorted index (names are unique: the
 * reader refuses a file that repeats one). */
static int name_vs_kv(const void *name, const void *kv)
{
    return str_cmp(name, &(*(const drift_gguf_kv_t *const *)kv)->key);
}

static int name_vs_tensor(const void *name, const void *t)
{
    return str_cmp(name, &(*(const drift_gguf_tensor_t *const *)t)->name);
}

const drift_gguf_kv_t *drift_gguf_find(const drift_gguf_t *g, const char *key)
{
    if (!g || !key || !g->kv_by_key) return NULL;
    const drift_gguf_str_t name = {key, strlen(key)};
    const drift_gguf_kv_t *const *hit = bsearch(&name, g->kv_by_key, (size_t)g->n_kv, sizeof *hit, name_vs_kv);
    return hit ? *hit : NULL;
}

const drift_gguf_tensor_t *drift_gguf_tensor(const drift_gguf_t *g, const char *name)
{
    if (!g || !name || !g->tensor_by_name) return NULL;
    const drift_gguf_str_t n = {name, strlen(name)};
    const drift_gguf_tensor_t *const *hit =
        bsearch(&n, g->tensor_by_name, (size_t)g->n_tensors, sizeof *hit, name_vs_tensor);
    return hit ? *hit : NULL;
}

/* A getter's key as a message shows it (escaped like the file's strings: one line). */
typedef struct {
    char s[4 * QUOTE_MAX + 8];
} shown_key;

static shown_key show(const char *key)
{
    shown_key k;
    if (key)
        quote(k.s, sizeof k.s, key, strlen(key));
    else
        snprintf(k.s, sizeof k.s, "(null)");
    return k;
}

/* The kv for a getter, or an error naming the key, the type wanted and the type found. */
static const drift_gguf_kv_t *get(
    const drift_gguf_t *g, const char *key, const char *want, int *rc, char *err, size_t errsz)
{
    const drift_gguf_kv_t *kv = drift_gguf_find(g, key);
    if (!kv) *rc = drift_why(err, errsz, DRIFT_EINVAL, "%s: expected %s, found no such key", show(key).s, want);
    return kv;
}

static int wrong_type(const drift_gguf_kv_t *kv, const char *key, const char *want, char *err, size_t errsz)
{
    if (kv->type == DRIFT_GGUF_ARRAY)
        return drift_why(err, errsz, DRIFT_EINVAL, "%s: expected %s, found an array of %s", show(key).s, want,
            drift_gguf_type_name(kv->elem_type));
    return drift_why(
        err, errsz, DRIFT_EINVAL, "%s: expected %s, found %s", show(key).s, want, drift_gguf_type_name(kv->type));
}

int drift_gguf_get_u64(const drift_gguf_t *g, const char *key, uint64_t *out, char *err, size_t errsz)
{
    int rc = 0;
    const char *want = "an unsigned integer";
    const drift_gguf_kv_t *kv = get(g, key, want, &rc, err, errsz);
    if (!kv) return rc;
    if (is_unsigned(kv->type))
        *out = kv->v.u;
    else if (is_signed(kv->type) && kv->v.i >= 0)
        *out = (uint64_t)kv->v.i;
    else if (is_signed(kv->type))
        return drift_why(
            err, errsz, DRIFT_EINVAL, "%s: expected %s, found %lld", show(key).s, want, (long long)kv->v.i);
    else
        return wrong_type(kv, key, want, err, errsz);
    return 0;
}

int drift_gguf_get_f64(const drift_gguf_t *g, const char *key, double *out, char *err, size_t errsz)
{
    int rc = 0;
    const char *want = "f32 or f64";
    const drift_gguf_kv_t *kv = get(g, key, want, &rc, err, errsz);
    if (!kv) return rc;
    if (kv->type != DRIFT_GGUF_F32 && kv->type != DRIFT_GGUF_F64) return wrong_type(kv, key, want, err, errsz);
    *out = kv->v.f;
    return 0;
}

int drift_gguf_get_str(const drift_gguf_t *g, const char *key, drift_gguf_str_t *out, char *err, size_t errsz)
{
    int rc = 0;
    const char *want = "a string";
    const drift_gguf_kv_t *kv = get(g, key, want, &rc, err, errsz);
    if (!kv) return rc;
    if (kv->type != DRIFT_GGUF_STRING) return wrong_type(kv, key, want, err, errsz);
    *out = kv->str;
    return 0;
}

int drift_gguf_get_bool(const drift_gguf_t *g, const char *key, int *out, char *err, size_t errsz)
{
    int rc = 0;
    const char *want = "a bool";
    const drift_gguf_kv_t *kv = get(g, key, want, &rc, err, errsz);
    if (!kv) return rc;
    if (kv->type != DRIFT_GGUF_BOOL) return wrong_type(kv, key, want, err, errsz);
    *out = (int)kv->v.u;
    return 0;
}

int drift_gguf_array_str(const drift_gguf_kv_t *kv, uint64_t i, drift_gguf_str_t *out)
{
    if (!kv || kv->type != DRIFT_GGUF_ARRAY || kv->elem_type != DRIFT_GGUF_STRING || i >= kv->count || !kv->strs)
        return DRIFT_EINVAL;
    *out = kv->strs[i];
    return 0;
}

/* Element i of a scalar array, widened into a kv's value. */
static int element(const drift_gguf_kv_t *kv, uint64_t i, drift_gguf_kv_t *v)
{
    if (!kv || kv->type != DRIFT_GGUF_ARRAY || i >= kv->count) return DRIFT_EINVAL;
    size_t n = scalar_bytes(kv->elem_type);
    if (!n) return DRIFT_EINVAL;
    widen(v, kv->elem_type, kv->data + (size_t)i * n);
    return 0;
}

int drift_gguf_array_f64(const drift_gguf_kv_t *kv, uint64_t i, double *out)
{
    drift_gguf_kv_t v = {.type = DRIFT_GGUF_U8};
    if (!kv || kv->elem_type == DRIFT_GGUF_BOOL || element(kv, i, &v)) return DRIFT_EINVAL;
    if (is_unsigned(kv->elem_type))
        *out = (double)v.v.u;
    else if (is_signed(kv->elem_type))
        *out = (double)v.v.i;
    else
        *out = v.v.f;
    return 0;
}

int drift_gguf_array_i64(const drift_gguf_kv_t *kv, uint64_t i, int64_t *out)
{
    drift_gguf_kv_t v = {.type = DRIFT_GGUF_U8};
    if (!kv || kv->elem_type == DRIFT_GGUF_F32 || kv->elem_type == DRIFT_GGUF_F64 || element(kv, i, &v))
        return DRIFT_EINVAL;
    if (is_signed(kv->elem_type))
        *out = v.v.i;
    else if (v.v.u > (uint64_t)INT64_MAX)
        return DRIFT_ERANGE;
    else
        *out = (int64_t)v.v.u;
    return 0;
}

const char *drift_gguf_type_name(drift_gguf_type_t t)
{
    static const char *names[DRIFT_GGUF_NTYPES] = {
        "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
    return (unsigned)t < DRIFT_GGUF_NTYPES ? names[t] : "?";
}
