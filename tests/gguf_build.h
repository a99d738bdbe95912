/* gguf_build.h — a small GGUF writer for tests: synthesize tiny models and files that lie.
 *
 *     gguf_build_t b;
 *     gb_init(&b);                                   version 3, alignment 32
 *     gb_kv_u32(&b, "llama.block_count", 2);
 *     gb_kv_str_array(&b, "tokenizer.ggml.tokens", pieces, n);
 *     gb_tensor(&b, "token_embd.weight", DRIFT_GGML_F32, 2, (uint64_t[]){8, 16}, bytes, 8 * 16 * 4);
 *     size_t size; uint8_t *file = gb_finish(&b, &size);   (malloc'd; free it)   or gb_write(&b, path)
 *     gb_free(&b);
 *
 * The layout is gguf.h's: header, the key-value pairs, the tensor infos, zero padding to
 * `alignment`, the data (each gb_tensor placed at the next multiple of `alignment`). Nothing is
 * checked: to write a lie, set the fields (version, the counts through n_kv_lie/n_tensors_lie,
 * alignment; 0 pads nothing) or append raw bytes to the sections with gb_put_* and count them yourself
 * (b.n_kv++). `gb_alignment` sets the key and the padding together; a bare `alignment` pads
 * without saying so. Allocation failure aborts (tests only). Header-only and static so that
 * any test (and any tool that synthesizes a model) can include it. */
#ifndef DRIFT_TESTS_GGUF_BUILD_H
#define DRIFT_TESTS_GGUF_BUILD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"

typedef struct {
    uint8_t *p;
    size_t len, cap;
} gb_buf;

typedef struct {
    uint32_t version;
    uint32_t alignment;       /* padding before the data section and before each gb_tensor */
    uint64_t n_kv, n_tensors; /* counted by the gb_kv_* and gb_tensor* calls */
    int lie_counts;           /* 1: write n_kv_lie and n_tensors_lie instead */
    uint64_t n_kv_lie, n_tensors_lie;
    gb_buf kv, ti, data; /* the three sections */
} gguf_build_t;

static inline void gb_init(gguf_build_t *b)
{
    memset(b, 0, sizeof *b);
    b->version = 3;
    b->alignment = DRIFT_GGUF_DEFAULT_ALIGNMENT;
}

static inline void gb_free(gguf_build_t *b)
{
    free(b->kv.p);
    free(b->ti.p);
    free(b->data.p);
    memset(b, 0, sizeof *b);
}

static inline void gb_put(gb_buf *s, const void *bytes, size_t n)
{
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->len + n) cap *= 2;
        uint8_t *p = realloc(s->p, cap);
        if (!p) abort();
        s->p = p;
        s->cap = cap;
    }
    if (n) memcpy(s->p + s->len, bytes, n);
    s->len += n;
}

static inline void gb_put_u8(gb_buf *s, uint8_t v) { gb_put(s, &v, 1); }

static inline void gb_put_le(gb_buf *s, uint64_t v, int bytes)
{
    uint8_t b[8];
    for (int i = 0; i < bytes; i++) b[i] = (uint8_t)(v >> (8 * i));
    gb_put(s, b, (size_t)bytes);
}

static inline void gb_put_u32(gb_buf *s, uint32_t v) { gb_put_le(s, v, 4); }

static inline void gb_put_u64(gb_buf *s, uint64_t v) { gb_put_le(s, v, 8); }

static inline void gb_put_zeros(gb_buf *s, size_t n)
{
    for (size_t i = 0; i < n; i++) gb_put_u8(s, 0);
}

/* A gguf string: its length, then its bytes (no NUL). */
static inline void gb_put_strn(gb_buf *s, const char *str, size_t n)
{
    gb_put_u64(s, n);
    gb_put(s, str, n);
}

static inline void gb_put_str(gb_buf *s, const char *str) { gb_put_strn(s, str, strlen(str)); }

/* A key and its value type; the value follows (gb_put_* on b->kv). Counts the pair. */
static inline void gb_key(gguf_build_t *b, const char *key, uint32_t type)
{
    gb_put_str(&b->kv, key);
    gb_put_u32(&b->kv, type);
    b->n_kv++;
}

static inline void gb_kv_u8(gguf_build_t *b, const char *k, uint8_t v)
{
    gb_key(b, k, DRIFT_GGUF_U8), gb_put_le(&b->kv, v, 1);
}
static inline void gb_kv_i8(gguf_build_t *b, const char *k, int8_t v)
{
    gb_key(b, k, DRIFT_GGUF_I8), gb_put_le(&b->kv, (uint8_t)v, 1);
}
static inline void gb_kv_u16(gguf_build_t *b, const char *k, uint16_t v)
{
    gb_key(b, k, DRIFT_GGUF_U16), gb_put_le(&b->kv, v, 2);
}
static inline void gb_kv_i16(gguf_build_t *b, const char *k, int16_t v)
{
    gb_key(b, k, DRIFT_GGUF_I16), gb_put_le(&b->kv, (uint16_t)v, 2);
}
static inline void gb_kv_u32(gguf_build_t *b, const char *k, uint32_t v)
{
    gb_key(b, k, DRIFT_GGUF_U32), gb_put_le(&b->kv, v, 4);
}
static inline void gb_kv_i32(gguf_build_t *b, const char *k, int32_t v)
{
    gb_key(b, k, DRIFT_GGUF_I32), gb_put_le(&b->kv, (uint32_t)v, 4);
}
static inline void gb_kv_u64(gguf_build_t *b, const char *k, uint64_t v)
{
    gb_key(b, k, DRIFT_GGUF_U64), gb_put_le(&b->kv, v, 8);
}
static inline void gb_kv_i64(gguf_build_t *b, const char *k, int64_t v)
{
    gb_key(b, k, DRIFT_GGUF_I64), gb_put_le(&b->kv, (uint64_t)v, 8);
}
static inline void gb_kv_bool(gguf_build_t *b, const char *k, int v)
{
    gb_key(b, k, DRIFT_GGUF_BOOL), gb_put_le(&b->kv, v ? 1 : 0, 1);
}

static inline void gb_kv_f32(gguf_build_t *b, const char *k, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    gb_key(b, k, DRIFT_GGUF_F32);
    gb_put_le(&b->kv, u, 4);
}

static inline void gb_kv_f64(gguf_build_t *b, const char *k, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    gb_key(b, k, DRIFT_GGUF_F64);
    gb_put_le(&b->kv, u, 8);
}

static inline void gb_kv_str(gguf_build_t *b, const char *k, const char *v)
{
    gb_key(b, k, DRIFT_GGUF_STRING);
    gb_put_str(&b->kv, v);
}

/* An array of count scalars of elem_type, given packed little-endian at elems (count times
 * the type's size: 1 for u8/i8/bool, 2, 4 or 8). */
static inline void gb_kv_array(
    gguf_build_t *b, const char *k, uint32_t elem_type, uint64_t count, const void *elems, size_t nbytes)
{
    gb_key(b, k, DRIFT_GGUF_ARRAY);
    gb_put_u32(&b->kv, elem_type);
    gb_put_u64(&b->kv, count);
    gb_put(&b->kv, elems, nbytes);
}

static inline void gb_kv_str_array(gguf_build_t *b, const char *k, const char *const *strs, uint64_t count)
{
    gb_key(b, k, DRIFT_GGUF_ARRAY);
    gb_put_u32(&b->kv, DRIFT_GGUF_STRING);
    gb_put_u64(&b->kv, count);
    for (uint64_t i = 0; i < count; i++) gb_put_str(&b->kv, strs[i]);
}

/* A tensor info only (any values: lies included); the data is the caller's business. */
static inline void gb_tensor_info(
    gguf_build_t *b, const char *name, uint32_t type, uint32_t n_dims, const uint64_t *ne, uint64_t offset)
{
    gb_put_str(&b->ti, name);
    gb_put_u32(&b->ti, n_dims);
    for (uint32_t j = 0; j < n_dims; j++) gb_put_u64(&b->ti, ne[j]);
    gb_put_u32(&b->ti, type);
    gb_put_u64(&b->ti, offset);
    b->n_tensors++;
}

/* A tensor whose nbytes bytes are appended to the data at the next multiple of the alignment
 * (bytes NULL: zeros). Returns its offset in the data section. */
static inline size_t gb_pad(size_t len, uint32_t alignment)
{
    return alignment ? (alignment - len % alignment) % alignment : 0;
}

static inline uint64_t gb_tensor(gguf_build_t *b, const char *name, uint32_t type, uint32_t n_dims, const uint64_t *ne,
    const void *bytes, size_t nbytes)
{
    gb_put_zeros(&b->data, gb_pad(b->data.len, b->alignment));
    uint64_t off = b->data.len;
    if (bytes)
        gb_put(&b->data, bytes, nbytes);
    else
        gb_put_zeros(&b->data, nbytes);
    gb_tensor_info(b, name, type, n_dims, ne, off);
    return off;
}

/* general.alignment = a (u32) and the padding that goes with it. */
static inline void gb_alignment(gguf_build_t *b, uint32_t a)
{
    gb_kv_u32(b, "general.alignment", a);
    b->alignment = a;
}

/* The whole file in a malloc'd buffer, its length in *size. */
static inline uint8_t *gb_finish(const gguf_build_t *b, size_t *size)
{
    gb_buf f = {0};
    gb_put(&f, "GGUF", 4);
    gb_put_u32(&f, b->version);
    gb_put_u64(&f, b->lie_counts ? b->n_tensors_lie : b->n_tensors);
    gb_put_u64(&f, b->lie_counts ? b->n_kv_lie : b->n_kv);
    gb_put(&f, b->kv.p, b->kv.len);
    gb_put(&f, b->ti.p, b->ti.len);
    gb_put_zeros(&f, gb_pad(f.len, b->alignment));
    gb_put(&f, b->data.p, b->data.len);
    *size = f.len;
    return f.p;
}

/* Write the file: 0, or -1 when it cannot be written. */
static inline int gb_write(const gguf_build_t *b, const char *path)
{
    size_t size;
    uint8_t *img = gb_finish(b, &size);
    FILE *fp = fopen(path, "wb");
    int ok = fp && fwrite(img, 1, size, fp) == size;
    if (fp && fclose(fp)) ok = 0;
    free(img);
    return ok ? 0 : -1;
}

#endif
