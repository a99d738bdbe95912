/* gguf.h — GGUF files (versions 2 and 3): header, metadata, tensor infos, tensors by name.
 *
 * Layout (little-endian): magic "GGUF", uint32 version, uint64 n_tensors, uint64 n_kv; then
 * n_kv pairs (gguf string key, uint32 value type, value); then n_tensors infos (string name,
 * uint32 n_dims, n_dims x uint64 ne, uint32 ggml type, uint64 offset); then padding to the
 * alignment (metadata `general.alignment`, default 32, a power of two); then the tensor data,
 * each tensor at data_start + offset, offset a multiple of the alignment. A gguf string is a
 * uint64 length and that many bytes (no NUL). Value types: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32,
 * 5 i32, 6 f32, 7 bool, 8 string, 9 array (uint32 element type, uint64 count, elements;
 * arrays of arrays allowed), 10 u64, 11 i64, 12 f64.
 *
 * Bounded and validated: every count, length, offset and dimension is checked against the
 * bytes that remain before it is used (a header that lies is refused with one line naming the
 * field, what was expected and what was found: DRIFT_EINVAL), tensor types must be known
 * (ggml_quant.h), each tensor's bytes must lie inside the file and not overlap another's,
 * names and keys are unique. The file is mapped, never copied: strings and tensor data point
 * into the mapping. Unreadable files give DRIFT_EIO.
 *
 * What the reader requires beyond the layout (each refusal names its field): keys non-empty;
 * a bool byte 0 or 1; arrays nested at most DRIFT_GGUF_MAX_NEST deep; `general.alignment`, when
 * present, a u32 power of two; 1 <= n_dims <= 4, every ne >= 1 and their product at most
 * 2^63 - 1 (ggml's int64 element count); ne[0] a multiple of the type's block; the data section
 * starting at the first multiple of the alignment after the tensor infos (a file without
 * tensors may end before it: data_offset is then the file size); every tensor offset a
 * multiple of the alignment. Tensors may lie in any order and with gaps between them (llama.cpp
 * writes them packed, in info order; the reader does not insist). Errors from drift_gguf_parse
 * read `FIELD: expected ..., found ...` (FIELD like `tensor[3] 'blk.0.attn_q.weight': ne[0]`,
 * strings from the file escaped and cut short so the line stays one line); drift_gguf_open
 * puts `PATH: ` in front. */
#ifndef DRIFT_GGUF_H
#define DRIFT_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "ggml_quant.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DRIFT_GGUF_MAX_DIMS 4
#define DRIFT_GGUF_MAX_NEST 16 /* arrays of arrays: deepest nesting accepted (no real file nests) */
#define DRIFT_GGUF_DEFAULT_ALIGNMENT 32

typedef enum {
    DRIFT_GGUF_U8 = 0,
    DRIFT_GGUF_I8,
    DRIFT_GGUF_U16,
    DRIFT_GGUF_I16,
    DRIFT_GGUF_U32,
    DRIFT_GGUF_I32,
    DRIFT_GGUF_F32,
    DRIFT_GGUF_BOOL,
    DRIFT_GGUF_STRING,
    DRIFT_GGUF_ARRAY,
    DRIFT_GGUF_U64,
    DRIFT_GGUF_I64,
    DRIFT_GGUF_F64,
    DRIFT_GGUF_NTYPES
} drift_gguf_type_t;

/* A string inside the mapping: len bytes at s, not NUL-terminated. */
typedef struct {
    const char *s;
    uint64_t len;
} drift_gguf_str_t;

typedef struct {
    drift_gguf_str_t key;
    drift_gguf_type_t type;
    /* scalars: the value, widened: u8/u16/u32/u64 and bool (0 or 1) in u, i8..i64 in i,
     * f32/f64 in f (exact) */
    union {
        uint64_t u;
        int64_t i;
        double f;
    } v;
    drift_gguf_str_t str;        /* DRIFT_GGUF_STRING */
    drift_gguf_type_t elem_type; /* DRIFT_GGUF_ARRAY: element type */
    uint64_t count;              /* DRIFT_GGUF_ARRAY: number of elements */
    const uint8_t *data;         /* DRIFT_GGUF_ARRAY: first element's bytes in the mapping */
    drift_gguf_str_t *strs;      /* DRIFT_GGUF_ARRAY of strings: every element, indexed at parse */
} drift_gguf_kv_t;

typedef struct {
    drift_gguf_str_t name;
    uint32_t n_dims;
    uint64_t ne[DRIFT_GGUF_MAX_DIMS]; /* ne[0] is the contiguous (row) dimension; unused dims 1 */
    uint32_t type;                    /* drift_ggml_type_t */
    uint64_t offset;                  /* from the start of the data section */
    const void *data;                 /* in the mapping */
    size_t nbytes;
} drift_gguf_tensor_t;

typedef struct {
    uint32_t version;
    uint64_t n_kv, n_tensors;
    drift_gguf_kv_t *kv;
    drift_gguf_tensor_t *tensors;
    size_t alignment;
    size_t data_offset; /* start of the data section in the file */
    const uint8_t *base;
    size_t size;
    void *map; /* non-NULL when drift_gguf_open mapped the file */
    size_t map_size;
    /* lookup indexes built at parse (private): kv and tensors sorted by name */
    const drift_gguf_kv_t **kv_by_key;
    const drift_gguf_tensor_t **tensor_by_name;
} drift_gguf_t;

/* Map (PROT_READ, MAP_PRIVATE) and parse a regular file; on error *g is zeroed and err holds
 * one line: DRIFT_EIO (cannot open, not a regular file: a directory, FIFO or device is refused
 * without reading it), DRIFT_EINVAL (the bytes are not a valid GGUF file), DRIFT_ENOMEM. The
 * file must not be truncated by someone else while mapped (SIGBUS, as for any mapping). */
DRIFT_MUST_CHECK int drift_gguf_open(drift_gguf_t *g, const char *path, char *err, size_t errsz);
/* Parse bytes already in memory (they must outlive g; tests and the fuzz target use it). */
DRIFT_MUST_CHECK int drift_gguf_parse(drift_gguf_t *g, const void *bytes, size_t size, char *err, size_t errsz);
/* Frees the indexes, unmaps what open mapped and zeroes *g; a zeroed g is fine. */
void drift_gguf_close(drift_gguf_t *g);

/* Lookups by exact name (O(log n); NULL when absent). */
const drift_gguf_kv_t *drift_gguf_find(const drift_gguf_t *g, const char *key);
const drift_gguf_tensor_t *drift_gguf_tensor(const drift_gguf_t *g, const char *name);

/* Typed getters: 0, DRIFT_EINVAL (absent, or of another type; err names the key, the type
 * expected and the type found). An integer getter accepts any integer type whose value fits. */
DRIFT_MUST_CHECK int drift_gguf_get_u64(const drift_gguf_t *g, const char *key, uint64_t *out, char *err, size_t errsz);
DRIFT_MUST_CHECK int drift_gguf_get_f64(
    const drift_gguf_t *g, const char *key, double *out, char *err, size_t errsz); /* f32 or f64 */
DRIFT_MUST_CHECK int drift_gguf_get_str(
    const drift_gguf_t *g, const char *key, drift_gguf_str_t *out, char *err, size_t errsz);
DRIFT_MUST_CHECK int drift_gguf_get_bool(
    const drift_gguf_t *g, const char *key, int *out, char *err, size_t errsz); /* 0 or 1 */
/* An array element, O(1): 0, or DRIFT_EINVAL (kv NULL, not an array of that kind, i >= count).
 * _str: an array of strings. _f64: an array of f32, f64 or any integer type (an integer above
 * 2^53 is rounded to nearest). _i64: an array of any integer type or bool; DRIFT_ERANGE for a
 * u64 above INT64_MAX. Arrays of arrays have no element getter (their bytes are at data). */
DRIFT_MUST_CHECK int drift_gguf_array_str(const drift_gguf_kv_t *kv, uint64_t i, drift_gguf_str_t *out);
DRIFT_MUST_CHECK int drift_gguf_array_f64(const drift_gguf_kv_t *kv, uint64_t i, double *out);
DRIFT_MUST_CHECK int drift_gguf_array_i64(const drift_gguf_kv_t *kv, uint64_t i, int64_t *out);

/* "u8" "i8" "u16" "i16" "u32" "i32" "f32" "bool" "string" "array" "u64" "i64" "f64"; "?" else. */
const char *drift_gguf_type_name(drift_gguf_type_t t);

#ifdef __cplusplus
}
#endif

#endif
