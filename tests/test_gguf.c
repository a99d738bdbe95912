/* test_gguf.c — the GGUF reader (gguf.h): a file written by tests/gguf_build.h round-trips
 * every value type and a tensor of every ggml type; files written by llama.cpp's own Python
 * writer (the fuzz seeds, tests/fuzz/gguf_seeds.py) read as that writer says; files that lie
 * in any header field, and every cut of a valid file, are refused with one line naming the
 * field; open() refuses what is not a regular file without hanging; the real SmolLM2 file
 * (when present) has the header the `gguf` Python package reads in it. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drift.h"
#include "gguf.h"
#include "gguf_build.h"
#include "philox.h"

#define ERR 512
#define SMOL DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
#define SEEDS DRIFT_SOURCE_DIR "/tests/fuzz/gguf/"

/* Elements and bytes per block of each type, from the structs and static_asserts of ggml's
 * ggml-common.h (llama.cpp, vendored by llama-cpp-python 0.3.36), ggml_half = 2 bytes:
 * e.g. block_q4_K = 2 ggml_half + K_SCALE_SIZE 12 + QK_K/2 = 4 + 12 + 128 = 144. */
static const struct {
    uint32_t type;
    uint64_t block;
    size_t bytes;
} TYPES[] = {
    {DRIFT_GGML_F32, 1, 4},
    {DRIFT_GGML_F16, 1, 2},
    {DRIFT_GGML_BF16, 1, 2},
    {DRIFT_GGML_Q4_0, 32, 18},
    {DRIFT_GGML_Q4_1, 32, 20},
    {DRIFT_GGML_Q5_0, 32, 22},
    {DRIFT_GGML_Q5_1, 32, 24},
    {DRIFT_GGML_Q8_0, 32, 34},
    {DRIFT_GGML_Q8_1, 32, 36},
    {DRIFT_GGML_Q2_K, 256, 84},
    {DRIFT_GGML_Q3_K, 256, 110},
    {DRIFT_GGML_Q4_K, 256, 144},
    {DRIFT_GGML_Q5_K, 256, 176},
    {DRIFT_GGML_Q6_K, 256, 210},
    {DRIFT_GGML_Q8_K, 256, 292},
};
#define NTYPES (sizeof TYPES / sizeof TYPES[0])

/* Tensor k of the round-trip file: TYPES[k], 1 + k % 4 dimensions of {2 blocks, 3, 1, 2}. */
static uint32_t tensor_dims(size_t k, uint64_t ne[4])
{
    uint64_t shape[4] = {2 * TYPES[k].block, 3, 1, 2};
    uint32_t n = 1 + (uint32_t)(k % 4);
    for (uint32_t j = 0; j < 4; j++) ne[j] = j < n ? shape[j] : 1;
    return n;
}

static size_t tensor_bytes(size_t k)
{
    uint64_t ne[4];
    tensor_dims(k, ne);
    return (size_t)(ne[0] / TYPES[k].block * TYPES[k].bytes * ne[1] * ne[2] * ne[3]);
}

/* The bytes of tensor k: a Philox stream, so that a misplaced tensor cannot match. */
static void tensor_fill(uint8_t *p, size_t n, size_t k)
{
    drift_stream_t s;
    drift_stream_init(&s, 42, drift_fnv1a32("test_gguf.tensor"), (uint32_t)k, 0);
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)drift_stream_u32(&s);
}

static const char *const STRS[] = {"a", "", "<|im_start|>", "line\nbreak"};

/* Every value type: scalars at their extremes, a string with a newline, arrays of every
 * element type, an empty array, arrays of arrays (of u16 and of strings, and three deep). */
static void add_every_kv(gguf_build_t *b)
{
    gb_kv_u8(b, "u8", 200);
    gb_kv_i8(b, "i8", -100);
    gb_kv_u16(b, "u16", 60000);
    gb_kv_i16(b, "i16", -30000);
    gb_kv_u32(b, "u32", 4000000000u);
    gb_kv_i32(b, "i32", -2000000000);
    gb_kv_f32(b, "f32", 0.1f);
    gb_kv_bool(b, "bool", 1);
    gb_kv_str(b, "str", "line\nbreak");
    gb_kv_u64(b, "u64", UINT64_MAX);
    gb_kv_i64(b, "i64", INT64_MIN);
    gb_kv_f64(b, "f64", -0.1);
    gb_kv_str(b, "str.empty", "");
    gb_kv_array(b, "arr.u8", DRIFT_GGUF_U8, 2, (uint8_t[]){0, 255}, 2);
    gb_kv_array(b, "arr.i8", DRIFT_GGUF_I8, 2, (uint8_t[]){0x80, 0x7f}, 2);
    gb_kv_array(b, "arr.u16", DRIFT_GGUF_U16, 2, (uint8_t[]){1, 0, 0xff, 0xff}, 4);
    gb_kv_array(b, "arr.i16", DRIFT_GGUF_I16, 2, (uint8_t[]){0, 0x80, 5, 0}, 4);
    gb_kv_array(b, "arr.u32", DRIFT_GGUF_U32, 1, (uint8_t[]){0xff, 0xff, 0xff, 0xff}, 4);
    gb_kv_array(b, "arr.i32", DRIFT_GGUF_I32, 2, (uint8_t[]){0xfe, 0xff, 0xff, 0xff, 3, 0, 0, 0}, 8); /* -2, 3 */
    gb_kv_array(b, "arr.f32", DRIFT_GGUF_F32, 2, (uint8_t[]){0, 0, 0, 0x3f, 0, 0, 0xc0, 0xbf}, 8);    /* 0.5, -1.5 */
    gb_kv_array(b, "arr.bool", DRIFT_GGUF_BOOL, 3, (uint8_t[]){1, 0, 1}, 3);
    gb_kv_array(b, "arr.u64", DRIFT_GGUF_U64, 1, (uint8_t[]){0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 8);
    gb_kv_array(b, "arr.i64", DRIFT_GGUF_I64, 1, (uint8_t[]){0, 0, 0, 0, 0, 0, 0, 0x80}, 8);    /* INT64_MIN */
    gb_kv_array(b, "arr.f64", DRIFT_GGUF_F64, 1, (uint8_t[]){0, 0, 0, 0, 0, 0, 0x04, 0xc0}, 8); /* -2.5 */
    gb_kv_str_array(b, "arr.str", STRS, 4);
    gb_kv_array(b, "arr.empty", DRIFT_GGUF_U32, 0, NULL, 0);
    /* [[1, 2], [3]] of u16 */
    gb_key(b, "arr.arr", DRIFT_GGUF_ARRAY);
    gb_put_u32(&b->kv, DRIFT_GGUF_ARRAY), gb_put_u64(&b->kv, 2);
    gb_put_u32(&b->kv, DRIFT_GGUF_U16), gb_put_u64(&b->kv, 2), gb_put_le(&b->kv, 1, 2), gb_put_le(&b->kv, 2, 2);
    gb_put_u32(&b->kv, DRIFT_GGUF_U16), gb_put_u64(&b->kv, 1), gb_put_le(&b->kv, 3, 2);
    /* [["x", "yy"]] */
    gb_key(b, "arr.arr.str", DRIFT_GGUF_ARRAY);
    gb_put_u32(&b->kv, DRIFT_GGUF_ARRAY), gb_put_u64(&b->kv, 1);
    gb_put_u32(&b->kv, DRIFT_GGUF_STRING), gb_put_u64(&b->kv, 2), gb_put_str(&b->kv, "x"), gb_put_str(&b->kv, "yy");
    /* [[[true]]] */
    gb_key(b, "arr.arr.arr", DRIFT_GGUF_ARRAY);
    gb_put_u32(&b->kv, DRIFT_GGUF_ARRAY), gb_put_u64(&b->kv, 1);
    gb_put_u32(&b->kv, DRIFT_GGUF_ARRAY), gb_put_u64(&b->kv, 1);
    gb_put_u32(&b->kv, DRIFT_GGUF_BOOL), gb_put_u64(&b->kv, 1), gb_put_u8(&b->kv, 1);
}
#define N_EVERY_KV 29

static void add_every_tensor(gguf_build_t *b)
{
    for (size_t k = 0; k < NTYPES; k++) {
        char name[32];
        uint64_t ne[4];
        uint32_t n = tensor_dims(k, ne);
        size_t nb = tensor_bytes(k);
        uint8_t *p = malloc(nb);
        tensor_fill(p, nb, k);
        snprintf(name, sizeof name, "t.%s", drift_ggml_type_name(TYPES[k].type));
        gb_tensor(b, name, TYPES[k].type, n, ne, p, nb);
        free(p);
    }
}

static uint8_t *every_file(size_t *size, uint32_t version, uint32_t alignment)
{
    gguf_build_t b;
    gb_init(&b);
    b.version = version;
    if (alignment != DRIFT_GGUF_DEFAULT_ALIGNMENT) gb_alignment(&b, alignment);
    add_every_kv(&b);
    add_every_tensor(&b);
    uint8_t *img = gb_finish(&b, size);
    gb_free(&b);
    return img;
}

static void expect_u64(const drift_gguf_t *g, const char *key, uint64_t want)
{
    uint64_t v = 0;
    char err[ERR];
    cr_assert_eq(drift_gguf_get_u64(g, key, &v, err, sizeof err), 0, "%s", err);
    cr_assert_eq(v, want, "%s: %llu, wrote %llu", key, (unsigned long long)v, (unsigned long long)want);
}

static const drift_gguf_kv_t *expect_kv(const drift_gguf_t *g, const char *key, drift_gguf_type_t type)
{
    const drift_gguf_kv_t *kv = drift_gguf_find(g, key);
    cr_assert(kv, "%s missing", key);
    cr_assert_eq(kv->type, type, "%s: type %s", key, drift_gguf_type_name(kv->type));
    cr_assert_eq(kv->key.len, strlen(key));
    cr_assert_eq(memcmp(kv->key.s, key, kv->key.len), 0);
    return kv;
}

static int str_is(drift_gguf_str_t s, const char *want) { return s.len == strlen(want) && !memcmp(s.s, want, s.len); }

static void check_every_kv(const drift_gguf_t *g)
{
    const drift_gguf_kv_t *kv;
    /* scalars as written (the values above) */
    cr_assert_eq(expect_kv(g, "u8", DRIFT_GGUF_U8)->v.u, 200);
    cr_assert_eq(expect_kv(g, "i8", DRIFT_GGUF_I8)->v.i, -100);
    cr_assert_eq(expect_kv(g, "u16", DRIFT_GGUF_U16)->v.u, 60000);
    cr_assert_eq(expect_kv(g, "i16", DRIFT_GGUF_I16)->v.i, -30000);
    cr_assert_eq(expect_kv(g, "u32", DRIFT_GGUF_U32)->v.u, 4000000000u);
    cr_assert_eq(expect_kv(g, "i32", DRIFT_GGUF_I32)->v.i, -2000000000);
    cr_assert_eq(expect_kv(g, "f32", DRIFT_GGUF_F32)->v.f, (double)0.1f); /* widening is exact: tolerance 0 */
    cr_assert_eq(expect_kv(g, "bool", DRIFT_GGUF_BOOL)->v.u, 1);
    cr_assert(str_is(expect_kv(g, "str", DRIFT_GGUF_STRING)->str, "line\nbreak"));
    cr_assert_eq(expect_kv(g, "u64", DRIFT_GGUF_U64)->v.u, UINT64_MAX);
    cr_assert_eq(expect_kv(g, "i64", DRIFT_GGUF_I64)->v.i, INT64_MIN);
    cr_assert_eq(expect_kv(g, "f64", DRIFT_GGUF_F64)->v.f, -0.1);
    cr_assert(str_is(expect_kv(g, "str.empty", DRIFT_GGUF_STRING)->str, ""));
    /* arrays: element type, count, each element through the getters */
    static const struct {
        const char *key;
        drift_gguf_type_t et;
        uint64_t count;
        int64_t i[3]; /* as _i64 gives them (unused for floats) */
        double f[3];  /* as _f64 gives them (unused for bool) */
    } A[] = {
        {"arr.u8", DRIFT_GGUF_U8, 2, {0, 255}, {0, 255}},
        {"arr.i8", DRIFT_GGUF_I8, 2, {-128, 127}, {-128, 127}},
        {"arr.u16", DRIFT_GGUF_U16, 2, {1, 65535}, {1, 65535}},
        {"arr.i16", DRIFT_GGUF_I16, 2, {-32768, 5}, {-32768, 5}},
        {"arr.u32", DRIFT_GGUF_U32, 1, {4294967295}, {4294967295.0}},
        {"arr.i32", DRIFT_GGUF_I32, 2, {-2, 3}, {-2, 3}},
        {"arr.f32", DRIFT_GGUF_F32, 2, {0}, {0.5, -1.5}},
        {"arr.bool", DRIFT_GGUF_BOOL, 3, {1, 0, 1}, {0}},
        {"arr.i64", DRIFT_GGUF_I64, 1, {INT64_MIN}, {-9223372036854775808.0}},
        {"arr.f64", DRIFT_GGUF_F64, 1, {0}, {-2.5}},
        {"arr.empty", DRIFT_GGUF_U32, 0, {0}, {0}},
    };
    for (size_t a = 0; a < sizeof A / sizeof A[0]; a++) {
        kv = expect_kv(g, A[a].key, DRIFT_GGUF_ARRAY);
        cr_assert_eq(kv->elem_type, A[a].et, "%s", A[a].key);
        cr_assert_eq(kv->count, A[a].count, "%s", A[a].key);
        int is_float = A[a].et == DRIFT_GGUF_F32 || A[a].et == DRIFT_GGUF_F64, is_bool = A[a].et == DRIFT_GGUF_BOOL;
        for (uint64_t i = 0; i < kv->count; i++) {
            int64_t iv = 0;
            double fv = 0;
            cr_assert_eq(drift_gguf_array_i64(kv, i, &iv), is_float ? DRIFT_EINVAL : 0, "%s[%llu]", A[a].key,
                (unsigned long long)i);
            cr_assert_eq(drift_gguf_array_f64(kv, i, &fv), is_bool ? DRIFT_EINVAL : 0, "%s[%llu]", A[a].key,
                (unsigned long long)i);
            if (!is_float) cr_assert_eq(iv, A[a].i[i], "%s[%llu]", A[a].key, (unsigned long long)i);
            if (!is_bool)
                cr_assert_eq(fv, A[a].f[i], "%s[%llu]", A[a].key, (unsigned long long)i); /* exact: tolerance 0 */
        }
        int64_t iv;
        cr_assert_eq(drift_gguf_array_i64(kv, kv->count, &iv), DRIFT_EINVAL, "%s: past the end", A[a].key);
        drift_gguf_str_t s;
        cr_assert_eq(drift_gguf_array_str(kv, 0, &s), DRIFT_EINVAL, "%s is no string array", A[a].key);
    }
    kv = expect_kv(g, "arr.u64", DRIFT_GGUF_ARRAY);
    int64_t iv;
    double fv;
    cr_assert_eq(drift_gguf_array_i64(kv, 0, &iv), DRIFT_ERANGE, "2^64-1 is no int64");
    cr_assert_eq(drift_gguf_array_f64(kv, 0, &fv), 0);
    cr_assert_eq(fv, 18446744073709551616.0, "2^64-1 rounds to 2^64 in a double");
    kv = expect_kv(g, "arr.str", DRIFT_GGUF_ARRAY);
    cr_assert_eq(kv->elem_type, DRIFT_GGUF_STRING);
    cr_assert_eq(kv->count, 4);
    for (uint64_t i = 0; i < 4; i++) {
        drift_gguf_str_t s;
        cr_assert_eq(drift_gguf_array_str(kv, i, &s), 0);
        cr_assert(str_is(s, STRS[i]), "arr.str[%llu]", (unsigned long long)i);
    }
    drift_gguf_str_t s;
    cr_assert_eq(drift_gguf_array_str(kv, 4, &s), DRIFT_EINVAL);
    cr_assert_eq(drift_gguf_array_i64(kv, 0, &iv), DRIFT_EINVAL);
    /* arrays of arrays: counted, their bytes kept, no element getter */
    kv = expect_kv(g, "arr.arr", DRIFT_GGUF_ARRAY);
    cr_assert(kv->elem_type == DRIFT_GGUF_ARRAY && kv->count == 2);
    cr_assert_eq(drift_gguf_array_i64(kv, 0, &iv), DRIFT_EINVAL);
    cr_assert_eq(kv->data[0], DRIFT_GGUF_U16, "data: the first inner array's element type");
    kv = expect_kv(g, "arr.arr.str", DRIFT_GGUF_ARRAY);
    cr_assert(kv->elem_type == DRIFT_GGUF_ARRAY && kv->count == 1);
    kv = expect_kv(g, "arr.arr.arr", DRIFT_GGUF_ARRAY);
    cr_assert(kv->elem_type == DRIFT_GGUF_ARRAY && kv->count == 1);
}

static void check_every_tensor(const drift_gguf_t *g)
{
    cr_assert_eq(g->n_tensors, NTYPES);
    cr_assert_eq(g->data_offset % g->alignment, 0);
    for (size_t k = 0; k < NTYPES; k++) {
        char name[32];
        snprintf(name, sizeof name, "t.%s", drift_ggml_type_name(TYPES[k].type));
        const drift_gguf_tensor_t *t = drift_gguf_tensor(g, name);
        cr_assert(t, "%s missing", name);
        cr_assert_eq(t, &g->tensors[k], "%s: in info order", name);
        uint64_t ne[4];
        cr_assert_eq(t->n_dims, tensor_dims(k, ne), "%s", name);
        for (int j = 0; j < 4; j++) cr_assert_eq(t->ne[j], ne[j], "%s ne[%d]", name, j);
        cr_assert_eq(t->type, TYPES[k].type, "%s", name);
        cr_assert_eq(t->nbytes, tensor_bytes(k), "%s: %zu bytes", name, t->nbytes);
        cr_assert_eq(t->offset % g->alignment, 0, "%s", name);
        cr_assert_eq((const uint8_t *)t->data, g->base + g->data_offset + t->offset, "%s: points into the bytes", name);
        uint8_t *want = malloc(t->nbytes);
        tensor_fill(want, t->nbytes, k);
        cr_assert_eq(memcmp(t->data, want, t->nbytes), 0, "%s: bytes", name);
        free(want);
    }
    cr_assert_null(drift_gguf_tensor(g, "t.q4_"), "a prefix is not a name");
    cr_assert_null(drift_gguf_tensor(g, "nope"));
}

/* ---- valid files --------------------------------------------------------------------------- */

Test(gguf, round_trip_every_value_type_and_tensor_type)
{
    const uint32_t versions[] = {3, 2}, alignments[] = {32, 64, 1, 4096};
    for (int v = 0; v < 2; v++)
        for (int a = 0; a < 4; a++) {
            size_t size;
            uint8_t *img = every_file(&size, versions[v], alignments[a]);
            drift_gguf_t g;
            char err[ERR];
            cr_assert_eq(drift_gguf_parse(&g, img, size, err, sizeof err), 0, "v%u align %u: %s", versions[v],
                alignments[a], err);
            cr_assert_eq(g.version, versions[v]);
            cr_assert_eq(g.alignment, alignments[a]);
            cr_assert_eq(g.n_kv, N_EVERY_KV + (alignments[a] != 32));
            cr_assert_eq(g.base, img);
            cr_assert_eq(g.size, size);
            cr_assert_null(g.map, "parse maps nothing");
            check_every_kv(&g);
            check_every_tensor(&g);
            drift_gguf_close(&g);
            cr_assert_null(g.kv);
            drift_gguf_close(&g); /* twice: harmless */
            free(img);
        }
}

Test(gguf, getters_convert_or_name_key_and_types)
{
    size_t size;
    uint8_t *img = every_file(&size, 3, 32);
    drift_gguf_t g;
    char err[ERR];
    cr_assert_eq(drift_gguf_parse(&g, img, size, err, sizeof err), 0, "%s", err);
    expect_u64(&g, "u8", 200);
    expect_u64(&g, "u16", 60000);
    expect_u64(&g, "u32", 4000000000u);
    expect_u64(&g, "u64", UINT64_MAX);
    uint64_t u;
    double f;
    drift_gguf_str_t s;
    int b;
    static const struct {
        const char *key;
        int getter; /* 0 u64, 1 f64, 2 str, 3 bool */
        const char *msg;
    } BADGET[] = {
        {"i8", 0, "i8: expected an unsigned integer, found -100"},
        {"i64", 0, "i64: expected an unsigned integer, found -9223372036854775808"},
        {"str", 0, "str: expected an unsigned integer, found string"},
        {"f32", 0, "f32: expected an unsigned integer, found f32"},
        {"bool", 0, "bool: expected an unsigned integer, found bool"},
        {"arr.str", 0, "arr.str: expected an unsigned integer, found an array of string"},
        {"absent.key", 0, "absent.key: expected an unsigned integer, found no such key"},
        {"absent\nkey", 0, "absent\\x0akey: expected an unsigned integer, found no such key"}, /* one line */
        {"u32", 1, "u32: expected f32 or f64, found u32"},
        {"u8", 2, "u8: expected a string, found u8"},
        {"absent.key", 2, "absent.key: expected a string, found no such key"},
        {"u8", 3, "u8: expected a bool, found u8"},
    };
    for (size_t i = 0; i < sizeof BADGET / sizeof BADGET[0]; i++) {
        int rc = BADGET[i].getter == 0   ? drift_gguf_get_u64(&g, BADGET[i].key, &u, err, sizeof err)
                 : BADGET[i].getter == 1 ? drift_gguf_get_f64(&g, BADGET[i].key, &f, err, sizeof err)
                 : BADGET[i].getter == 2 ? drift_gguf_get_str(&g, BADGET[i].key, &s, err, sizeof err)
                                         : drift_gguf_get_bool(&g, BADGET[i].key, &b, err, sizeof err);
        cr_assert_eq(rc, DRIFT_EINVAL, "%s", BADGET[i].key);
        cr_assert_str_eq(err, BADGET[i].msg);
    }
    /* positive signed values are unsigned integers too */
    gguf_build_t bb;
    gb_init(&bb);
    gb_kv_i32(&bb, "pos", 7);
    size_t size2;
    uint8_t *img2 = gb_finish(&bb, &size2);
    drift_gguf_t g2;
    cr_assert_eq(drift_gguf_parse(&g2, img2, size2, err, sizeof err), 0, "%s", err);
    expect_u64(&g2, "pos", 7);
    drift_gguf_close(&g2);
    free(img2);
    gb_free(&bb);
    cr_assert_eq(drift_gguf_get_f64(&g, "f64", &f, err, sizeof err), 0);
    cr_assert_eq(f, -0.1);
    cr_assert_eq(drift_gguf_get_f64(&g, "f32", &f, err, sizeof err), 0);
    cr_assert_eq(f, (double)0.1f);
    cr_assert_eq(drift_gguf_get_str(&g, "str", &s, err, sizeof err), 0);
    cr_assert(str_is(s, "line\nbreak"));
    cr_assert_eq(drift_gguf_get_bool(&g, "bool", &b, err, sizeof err), 0);
    cr_assert_eq(b, 1);
    cr_assert_null(drift_gguf_find(&g, "u"), "a prefix is not a key");
    cr_assert_null(drift_gguf_find(&g, "u8 "));
    drift_gguf_close(&g);
    free(img);
}

/* A file without tensors may end right after its metadata (no padding): data_offset is the
 * file size. An empty-named tensor is a name like any other. */
Test(gguf, metadata_only_file_and_empty_tensor_name)
{
    gguf_build_t b;
    gb_init(&b);
    gb_kv_str(&b, "general.architecture", "llama");
    b.alignment = 0;
    size_t size;
    uint8_t *img = gb_finish(&b, &size);
    cr_assert_neq(size % 32, 0, "the test needs an unaligned end");
    drift_gguf_t g;
    char err[ERR];
    cr_assert_eq(drift_gguf_parse(&g, img, size, err, sizeof err), 0, "%s", err);
    cr_assert_eq(g.data_offset, size);
    cr_assert_eq(g.n_tensors, 0);
    cr_assert_null(drift_gguf_tensor(&g, "x"));
    drift_gguf_close(&g);
    free(img);
    gb_free(&b);

    gb_init(&b);
    gb_tensor(&b, "", DRIFT_GGML_F32, 1, (uint64_t[]){3}, NULL, 12);
    img = gb_finish(&b, &size);
    cr_assert_eq(drift_gguf_parse(&g, img, size, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_gguf_tensor(&g, ""), &g.tensors[0]);
    cr_assert_eq(g.n_kv, 0);
    cr_assert_null(drift_gguf_find(&g, "x"));
    drift_gguf_close(&g);
    free(img);
    gb_free(&b);
}

static void nested(gguf_build_t *b, int levels);

Test(gguf, arrays_nested_to_the_limit)
{
    gguf_build_t b;
    gb_init(&b);
    nested(&b, DRIFT_GGUF_MAX_NEST);
    size_t size;
    uint8_t *img = gb_finish(&b, &size);
    drift_gguf_t g;
    char err[ERR];
    cr_assert_eq(drift_gguf_parse(&g, img, size, err, sizeof err), 0, "%d levels: %s", DRIFT_GGUF_MAX_NEST, err);
    drift_gguf_close(&g);
    free(img);
    gb_free(&b);
}

static char *temp_path(void)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/drift_gguf_XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    return path;
}

Test(gguf, open_maps_the_file_and_never_copies)
{
    gguf_build_t b;
    gb_init(&b);
    add_every_kv(&b);
    add_every_tensor(&b);
    char *path = temp_path();
    cr_assert_eq(gb_write(&b, path), 0);
    drift_gguf_t g;
    char err[ERR];
    cr_assert_eq(drift_gguf_open(&g, path, err, sizeof err), 0, "%s", err);
    cr_assert_not_null(g.map);
    cr_assert_eq((const void *)g.base, g.map);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(g.map_size, (size_t)st.st_size);
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const uint8_t *d = g.tensors[i].data;
        cr_assert(d >= g.base && d + g.tensors[i].nbytes <= g.base + g.size, "tensor %llu inside the mapping",
            (unsigned long long)i);
        cr_assert_eq((uintptr_t)d % 32, 0, "aligned in memory as in the file (the mapping is page aligned)");
    }
    const drift_gguf_kv_t *kv = drift_gguf_find(&g, "arr.str");
    cr_assert(kv && (const uint8_t *)kv->strs[2].s > g.base && (const uint8_t *)kv->strs[2].s < g.base + g.size,
        "strings point into the mapping");
    check_every_kv(&g);
    check_every_tensor(&g);
    drift_gguf_close(&g);
    cr_assert_null(g.map);
    remove(path);
    gb_free(&b);
}

/* Not a regular file: refused from fstat, so a FIFO without a writer cannot hang the reader. */
Test(gguf, open_refuses_what_is_not_a_regular_file, .timeout = 20)
{
    drift_gguf_t g;
    char err[ERR];
    cr_assert_eq(drift_gguf_open(&g, "/nonexistent/model.gguf", err, sizeof err), DRIFT_EIO);
    cr_assert(strstr(err, "/nonexistent/model.gguf: cannot open"), "%s", err);
    cr_assert_eq(drift_gguf_open(&g, "/tmp", err, sizeof err), DRIFT_EIO);
    cr_assert_str_eq(err, "/tmp: expected a regular file, found a directory");
    cr_assert_eq(drift_gguf_open(&g, "/dev/null", err, sizeof err), DRIFT_EIO);
    cr_assert_str_eq(err, "/dev/null: expected a regular file, found a device");
    char fifo[80];
    snprintf(fifo, sizeof fifo, "/tmp/drift_gguf_fifo_%d", (int)getpid());
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(drift_gguf_open(&g, fifo, err, sizeof err), DRIFT_EIO);
    cr_assert(strstr(err, "expected a regular file, found a FIFO"), "%s", err);
    remove(fifo);
    char *path = temp_path(); /* empty */
    cr_assert_eq(drift_gguf_open(&g, path, err, sizeof err), DRIFT_EINVAL);
    cr_assert(strstr(err, ": magic: expected 4 bytes, found 0 bytes left"), "%s", err);
    cr_assert_null(g.kv);
    remove(path);
}

/* ---- files written by llama.cpp's gguf-py (tests/fuzz/gguf_seeds.py); each value below is the
 * one that script writes, and the offsets are what gguf.GGUFReader reports for the files. ---- */

static void open_seed(drift_gguf_t *g, int i)
{
    char path[256], err[ERR];
    snprintf(path, sizeof path, SEEDS "%d", i);
    cr_assert_eq(drift_gguf_open(g, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(g->version, 3);
    drift_gguf_str_t s;
    cr_assert_eq(drift_gguf_get_str(g, "general.architecture", &s, err, sizeof err), 0, "%s", err);
    cr_assert(str_is(s, "llama"));
}

Test(gguf, reads_files_of_the_reference_writer)
{
    drift_gguf_t g;
    char err[ERR];
    drift_gguf_str_t s;
    open_seed(&g, 0);
    cr_assert(g.n_kv == 2 && g.n_tensors == 0);
    cr_assert_eq(drift_gguf_get_str(&g, "general.name", &s, err, sizeof err), 0);
    cr_assert(str_is(s, "seed0"));
    drift_gguf_close(&g);

    open_seed(&g, 1);
    cr_assert(g.n_kv == 16 && g.n_tensors == 2 && g.data_offset == 576);
    cr_assert_eq(expect_kv(&g, "t.u8", DRIFT_GGUF_U8)->v.u, 200);
    cr_assert_eq(expect_kv(&g, "t.i8", DRIFT_GGUF_I8)->v.i, -100);
    cr_assert_eq(expect_kv(&g, "t.u16", DRIFT_GGUF_U16)->v.u, 60000);
    cr_assert_eq(expect_kv(&g, "t.i16", DRIFT_GGUF_I16)->v.i, -30000);
    cr_assert_eq(expect_kv(&g, "t.u32", DRIFT_GGUF_U32)->v.u, 4000000000u);
    cr_assert_eq(expect_kv(&g, "t.i32", DRIFT_GGUF_I32)->v.i, -2000000000);
    cr_assert_eq(expect_kv(&g, "t.f32", DRIFT_GGUF_F32)->v.f, 0.5);
    cr_assert_eq(expect_kv(&g, "t.bool", DRIFT_GGUF_BOOL)->v.u, 1);
    cr_assert(str_is(expect_kv(&g, "t.str", DRIFT_GGUF_STRING)->str, "hi"));
    cr_assert_eq(expect_kv(&g, "t.u64", DRIFT_GGUF_U64)->v.u, 9223372036854775813u);
    cr_assert_eq(expect_kv(&g, "t.i64", DRIFT_GGUF_I64)->v.i, -4611686018427387904);
    cr_assert_eq(expect_kv(&g, "t.f64", DRIFT_GGUF_F64)->v.f, -0.25);
    const drift_gguf_kv_t *kv = expect_kv(&g, "t.arr_i32", DRIFT_GGUF_ARRAY);
    int64_t iv;
    cr_assert(kv->elem_type == DRIFT_GGUF_I32 && kv->count == 3);
    cr_assert(!drift_gguf_array_i64(kv, 1, &iv) && iv == -2);
    kv = expect_kv(&g, "t.arr_str", DRIFT_GGUF_ARRAY);
    cr_assert(kv->count == 3 && !drift_gguf_array_str(kv, 2, &s) && str_is(s, "ccc"));
    cr_assert(!drift_gguf_array_str(kv, 1, &s) && str_is(s, ""));
    kv = expect_kv(&g, "t.arr_arr", DRIFT_GGUF_ARRAY);
    cr_assert(kv->elem_type == DRIFT_GGUF_ARRAY && kv->count == 2);
    const drift_gguf_tensor_t *t = drift_gguf_tensor(&g, "a");
    cr_assert(t && t->type == DRIFT_GGML_F32 && t->n_dims == 1 && t->ne[0] == 8 && t->nbytes == 32 && t->offset == 0);
    for (int i = 0; i < 8; i++) {
        float x;
        memcpy(&x, (const uint8_t *)t->data + 4 * i, 4);
        cr_assert_eq(x, (float)i, "a = arange(8)");
    }
    t = drift_gguf_tensor(&g, "b");
    cr_assert(t && t->type == DRIFT_GGML_Q8_0 && t->n_dims == 2 && t->ne[0] == 32 && t->ne[1] == 2 && t->nbytes == 68);
    cr_assert_eq(g.data_offset + t->offset, 608);
    drift_gguf_close(&g);

    open_seed(&g, 2);
    cr_assert(g.n_kv == 8 && g.n_tensors == 3 && g.alignment == 64 && g.data_offset == 640);
    expect_u64(&g, "llama.embedding_length", 256);
    kv = expect_kv(&g, "tokenizer.ggml.tokens", DRIFT_GGUF_ARRAY);
    cr_assert(kv->count == 5 && !drift_gguf_array_str(kv, 2, &s) && str_is(s, "</s>"));
    double f;
    kv = expect_kv(&g, "tokenizer.ggml.scores", DRIFT_GGUF_ARRAY);
    cr_assert(kv->elem_type == DRIFT_GGUF_F32 && !drift_gguf_array_f64(kv, 4, &f) && f == -2.0);
    static const struct {
        const char *name;
        uint32_t type, n_dims;
        uint64_t ne0, ne1;
        size_t nbytes, file_offset;
    } T2[] = {
        {"token_embd.weight", DRIFT_GGML_Q4_1, 2, 256, 5, 800, 640},
        {"blk.0.attn_q.weight", DRIFT_GGML_Q4_K, 2, 256, 2, 288, 1472},
        {"output_norm.weight", DRIFT_GGML_F16, 1, 256, 1, 512, 1792},
    };
    for (int i = 0; i < 3; i++) {
        t = drift_gguf_tensor(&g, T2[i].name);
        cr_assert(t, "%s", T2[i].name);
        cr_assert(t->type == T2[i].type && t->n_dims == T2[i].n_dims && t->ne[0] == T2[i].ne0 && t->ne[1] == T2[i].ne1,
            "%s", T2[i].name);
        cr_assert_eq(t->nbytes, T2[i].nbytes, "%s", T2[i].name);
        cr_assert_eq(g.data_offset + t->offset, T2[i].file_offset, "%s", T2[i].name);
    }
    drift_gguf_close(&g);

    open_seed(&g, 3);
    cr_assert(g.n_kv == 1 && g.n_tensors == 2 && g.data_offset == 192);
    t = drift_gguf_tensor(&g, "c");
    cr_assert(t && t->type == DRIFT_GGML_BF16 && t->n_dims == 4 && t->ne[0] == 1 && t->ne[1] == 2 && t->ne[2] == 3 &&
              t->ne[3] == 4 && t->nbytes == 48);
    t = drift_gguf_tensor(&g, "d");
    cr_assert(t && t->type == DRIFT_GGML_Q6_K && t->n_dims == 3 && t->ne[0] == 256 && t->ne[1] == 1 && t->ne[2] == 3 &&
              t->nbytes == 630 && g.data_offset + t->offset == 256);
    drift_gguf_close(&g);
}

/* ---- files that lie ---------------------------------------------------------------------------
 * Each case writes a small file with one lie; the reader must refuse it with DRIFT_EINVAL and a
 * one-line message that holds `expect` (the field, and what was found). */

/* The honest part most cases start from: two kv, two tensors (f32 {8} and q8_0 {32, 2}). */
static void honest_kv(gguf_build_t *b)
{
    gb_kv_str(b, "general.architecture", "llama");
    gb_kv_u32(b, "llama.block_count", 1);
}

static void honest_tensors(gguf_build_t *b)
{
    gb_tensor(b, "w0", DRIFT_GGML_F32, 1, (uint64_t[]){8}, NULL, 32);
    gb_tensor(b, "w1", DRIFT_GGML_Q8_0, 2, (uint64_t[]){32, 2}, NULL, 68);
}

static void honest(gguf_build_t *b)
{
    honest_kv(b);
    honest_tensors(b);
}

static void lie_version1(gguf_build_t *b) { honest(b), b->version = 1; }
static void lie_version4(gguf_build_t *b) { honest(b), b->version = 4; }
static void lie_version0(gguf_build_t *b) { honest(b), b->version = 0; }
static void lie_version_be(gguf_build_t *b) { honest(b), b->version = 0x03000000; }
static void lie_n_tensors(gguf_build_t *b)
{
    honest(b), b->lie_counts = 1, b->n_tensors_lie = 1ull << 40, b->n_kv_lie = 2;
}
static void lie_n_kv(gguf_build_t *b) { honest(b), b->lie_counts = 1, b->n_tensors_lie = 2, b->n_kv_lie = 1ull << 62; }
static void lie_n_kv_max(gguf_build_t *b)
{
    honest(b), b->lie_counts = 1, b->n_tensors_lie = 0, b->n_kv_lie = UINT64_MAX;
}

static void lie_key_length(gguf_build_t *b)
{
    gb_put_u64(&b->kv, 1ull << 60), gb_put(&b->kv, "abcd", 4), b->n_kv++;
    honest_tensors(b);
}

static void lie_key_empty(gguf_build_t *b)
{
    gb_key(b, "", DRIFT_GGUF_U8), gb_put_u8(&b->kv, 1);
    honest_tensors(b);
}

static void lie_value_type(gguf_build_t *b)
{
    honest_kv(b);
    gb_key(b, "k", 13), gb_put_u32(&b->kv, 0);
    honest_tensors(b);
}

static void lie_elem_type(gguf_build_t *b)
{
    honest_kv(b);
    gb_key(b, "k", DRIFT_GGUF_ARRAY), gb_put_u32(&b->kv, 99), gb_put_u64(&b->kv, 1), gb_put_u32(&b->kv, 0);
    honest_tensors(b);
}

static void lie_array_count(gguf_build_t *b)
{
    honest_kv(b);
    gb_key(b, "k", DRIFT_GGUF_ARRAY), gb_put_u32(&b->kv, DRIFT_GGUF_U32), gb_put_u64(&b->kv, 1ull << 61),
        gb_put_u32(&b->kv, 5);
    honest_tensors(b);
}

static void lie_string_array_count(gguf_build_t *b)
{
    honest_kv(b);
    gb_key(b, "k", DRIFT_GGUF_ARRAY), gb_put_u32(&b->kv, DRIFT_GGUF_STRING), gb_put_u64(&b->kv, 1000),
        gb_put_str(&b->kv, "x");
    honest_tensors(b);
}

static void lie_string_length(gguf_build_t *b)
{
    honest_kv(b);
    gb_key(b, "k", DRIFT_GGUF_STRING), gb_put_u64(&b->kv, 1ull << 40), gb_put(&b->kv, "abc", 3);
    honest_tensors(b);
}

static void lie_string_elem_length(gguf_build_t *b)
{
    honest_kv(b);
    gb_key(b, "k", DRIFT_GGUF_ARRAY), gb_put_u32(&b->kv, DRIFT_GGUF_STRING), gb_put_u64(&b->kv, 2);
    gb_put_str(&b->kv, "ok"), gb_put_u64(&b->kv, 1ull << 50), gb_put(&b->kv, "abc", 3);
    honest_tensors(b);
}

static void lie_bool(gguf_build_t *b)
{
    honest_kv(b);
    gb_key(b, "k", DRIFT_GGUF_BOOL), gb_put_u8(&b->kv, 2);
    honest_tensors(b);
}

static void lie_bool_elem(gguf_build_t *b)
{
    honest_kv(b);
    gb_kv_array(b, "k", DRIFT_GGUF_BOOL, 3, (uint8_t[]){0, 7, 1}, 3);
    honest_tensors(b);
}

/* An array of arrays `levels` deep (the innermost an empty u8 array). */
static void nested(gguf_build_t *b, int levels)
{
    gb_key(b, "k", DRIFT_GGUF_ARRAY);
    for (int d = 0; d < levels - 1; d++) gb_put_u32(&b->kv, DRIFT_GGUF_ARRAY), gb_put_u64(&b->kv, 1);
    gb_put_u32(&b->kv, DRIFT_GGUF_U8), gb_put_u64(&b->kv, 0);
}

static void lie_nesting(gguf_build_t *b)
{
    honest_kv(b);
    nested(b, DRIFT_GGUF_MAX_NEST + 1);
    honest_tensors(b);
}

static void lie_alignment0(gguf_build_t *b) { gb_kv_u32(b, "general.alignment", 0), honest(b); }
static void lie_alignment48(gguf_build_t *b) { gb_kv_u32(b, "general.alignment", 48), honest(b); }
static void lie_alignment_i32(gguf_build_t *b) { gb_kv_i32(b, "general.alignment", 32), honest(b); }
static void lie_alignment_u64(gguf_build_t *b) { gb_kv_u64(b, "general.alignment", 32), honest(b); }

static void lie_n_dims0(gguf_build_t *b) { honest_kv(b), gb_tensor(b, "w0", DRIFT_GGML_F32, 0, NULL, NULL, 4); }
static void lie_n_dims5(gguf_build_t *b)
{
    honest_kv(b), gb_tensor(b, "w0", DRIFT_GGML_F32, 5, (uint64_t[]){1, 1, 1, 1, 1}, NULL, 4);
}
static void lie_ne0(gguf_build_t *b)
{
    honest_kv(b), gb_tensor(b, "w0", DRIFT_GGML_F32, 2, (uint64_t[]){8, 0}, NULL, 32);
}
static void lie_ne_overflow(gguf_build_t *b)
{
    honest_kv(b), gb_tensor(b, "w0", DRIFT_GGML_F32, 2, (uint64_t[]){1ull << 32, 1ull << 32}, NULL, 32);
}
static void lie_ne_huge(gguf_build_t *b)
{
    honest_kv(b), gb_tensor(b, "w0", DRIFT_GGML_F32, 1, (uint64_t[]){1ull << 63}, NULL, 32);
}
static void lie_bytes_overflow(gguf_build_t *b)
{
    honest_kv(b), gb_tensor(b, "w0", DRIFT_GGML_F32, 2, (uint64_t[]){1ull << 31, 1ull << 31}, NULL, 32);
}
static void lie_type4(gguf_build_t *b) { honest_kv(b), gb_tensor(b, "w0", 4, 1, (uint64_t[]){32}, NULL, 32); }
static void lie_type_max(gguf_build_t *b)
{
    honest_kv(b), gb_tensor(b, "w0", UINT32_MAX, 1, (uint64_t[]){32}, NULL, 32);
}
static void lie_block(gguf_build_t *b)
{
    honest_kv(b), gb_tensor(b, "w0", DRIFT_GGML_Q8_0, 1, (uint64_t[]){33}, NULL, 34);
}

static void lie_offset_unaligned(gguf_build_t *b)
{
    honest(b);
    gb_tensor_info(b, "w2", DRIFT_GGML_F32, 1, (uint64_t[]){4}, 16);
}

static void lie_offset_past_end(gguf_build_t *b)
{
    honest(b);
    gb_tensor_info(b, "w2", DRIFT_GGML_F32, 1, (uint64_t[]){8}, 1024);
}

static void lie_offset_huge(gguf_build_t *b)
{
    honest(b);
    gb_tensor_info(b, "w2", DRIFT_GGML_F32, 1, (uint64_t[]){8}, UINT64_MAX - 31);
}

static void lie_overlap(gguf_build_t *b)
{
    honest_kv(b);
    gb_tensor(b, "w0", DRIFT_GGML_F32, 1, (uint64_t[]){16}, NULL, 64);
    gb_tensor_info(b, "w1", DRIFT_GGML_F32, 1, (uint64_t[]){8}, 32);
}

static void lie_duplicate_key(gguf_build_t *b)
{
    honest_kv(b);
    gb_kv_u32(b, "llama.block_count", 2);
    honest_tensors(b);
}

static void lie_duplicate_name(gguf_build_t *b)
{
    honest_kv(b);
    gb_tensor(b, "w0", DRIFT_GGML_F32, 1, (uint64_t[]){8}, NULL, 32);
    gb_tensor(b, "w0", DRIFT_GGML_F32, 1, (uint64_t[]){8}, NULL, 32);
}

static void lie_name_length(gguf_build_t *b)
{
    honest_kv(b);
    gb_put_u64(&b->ti, 1ull << 62), gb_put(&b->ti, "w0", 2), b->n_tensors++;
}

/* Tensor infos that end at byte 57 of a file of 57 bytes: the data section (byte 64) is missing. */
static void lie_no_data_section(gguf_build_t *b)
{
    gb_tensor_info(b, "w", DRIFT_GGML_F32, 1, (uint64_t[]){1}, 0);
    b->alignment = 0;
}

static void lie_key_in_message(gguf_build_t *b) { gb_key(b, "evil\nkey'\\", 13); }

typedef struct {
    const char *what;
    void (*make)(gguf_build_t *b);
    const char *expect;
} lie_t;

static const lie_t LIES[] = {
    {"magic", NULL, "magic: expected 'GGUF', found 'GGUX'"},
    {"version 1", lie_version1, "version: expected 2 or 3, found 1 (GGUF v1"},
    {"version 4", lie_version4, "version: expected 2 or 3, found 4"},
    {"version 0", lie_version0, "version: expected 2 or 3, found 0"},
    {"version big-endian", lie_version_be, "version: expected 2 or 3, found 50331648 (a big-endian file?)"},
    {"n_tensors", lie_n_tensors, "n_tensors: expected at most"},
    {"n_kv", lie_n_kv, "n_kv: expected at most"},
    {"n_kv max", lie_n_kv_max, "found 18446744073709551615"},
    {"key length", lie_key_length, "kv[0]: key length: expected at most"},
    {"key empty", lie_key_empty, "kv[0]: key: expected a non-empty key, found length 0"},
    {"value type", lie_value_type, "kv[2] 'k': value type: expected a value type 0..12, found 13"},
    {"array element type", lie_elem_type, "kv[2] 'k': value element type: expected a value type 0..12, found 99"},
    {"array count", lie_array_count, "kv[2] 'k': value count: expected at most"},
    {"string array count", lie_string_array_count, "found 1000"},
    {"string length", lie_string_length, "kv[2] 'k': value length: expected at most"},
    {"string element length", lie_string_elem_length, "kv[2] 'k': value[1] length: expected at most"},
    {"bool", lie_bool, "kv[2] 'k': value: expected a bool 0 or 1, found 2"},
    {"bool element", lie_bool_elem, "kv[2] 'k': value[1]: expected a bool 0 or 1, found 7"},
    {"nesting", lie_nesting, "element type: expected arrays nested at most 16 deep"},
    {"alignment 0", lie_alignment0, "kv[0] 'general.alignment': value: expected a power of two, found 0"},
    {"alignment 48", lie_alignment48, "kv[0] 'general.alignment': value: expected a power of two, found 48"},
    {"alignment i32", lie_alignment_i32, "kv[0] 'general.alignment': value type: expected u32, found i32"},
    {"alignment u64", lie_alignment_u64, "kv[0] 'general.alignment': value type: expected u32, found u64"},
    {"n_dims 0", lie_n_dims0, "tensor[0] 'w0': n_dims: expected 1..4, found 0"},
    {"n_dims 5", lie_n_dims5, "tensor[0] 'w0': n_dims: expected 1..4, found 5"},
    {"ne 0", lie_ne0, "tensor[0] 'w0': ne[1]: expected at least 1, found 0"},
    {"ne product overflow", lie_ne_overflow, "tensor[0] 'w0': ne[1]: expected a total of at most 2^63-1 elements"},
    {"ne above int64", lie_ne_huge, "tensor[0] 'w0': ne[0]: expected a total of at most 2^63-1 elements"},
    {"bytes overflow", lie_bytes_overflow, "tensor[0] 'w0': ne: expected a size in bytes that fits in size_t"},
    {"ggml type 4", lie_type4, "tensor[0] 'w0': type: expected a known ggml type"},
    {"ggml type max", lie_type_max, "found 4294967295"},
    {"ne[0] not a block multiple", lie_block,
        "tensor[0] 'w0': ne[0]: expected a multiple of 32 (the q8_0 block), found 33"},
    {"offset unaligned", lie_offset_unaligned,
        "tensor[2] 'w2': offset: expected a multiple of the alignment 32, found 16"},
    {"tensor past the end", lie_offset_past_end,
        "tensor[2] 'w2': offset: expected offset + 32 bytes within the 100 bytes"},
    {"tensor offset huge", lie_offset_huge, "tensor[2] 'w2': offset: expected offset + 32 bytes within"},
    {"tensors overlap", lie_overlap,
        "tensor[1] 'w1': offset: expected no overlap with tensor[0] at [0, 64), found offset 32"},
    {"duplicate key", lie_duplicate_key,
        "kv[2] 'llama.block_count': key: expected unique keys, found the key of kv[1] again"},
    {"duplicate tensor name", lie_duplicate_name,
        "tensor[1] 'w0': name: expected unique names, found the name of tensor[0] again"},
    {"tensor name length", lie_name_length, "tensor[0]: name length: expected at most"},
    {"no data section", lie_no_data_section, "data section: expected to start at byte 64 (tensor infos end at 57"},
    {"key escaped in message", lie_key_in_message, "kv[0] 'evil\\x0akey\\'\\\\': value type"},
};
#define NLIES (sizeof LIES / sizeof LIES[0])

/* What every refusal must be: the code, a non-empty single line, nothing left allocated. */
static void expect_refusal(const drift_gguf_t *g, int rc, const char *err, const char *what)
{
    cr_assert_eq(rc, DRIFT_EINVAL, "%s: accepted (rc %d)", what, rc);
    cr_assert(err[0], "%s: no message", what);
    cr_assert_null(strchr(err, '\n'), "%s: message is not one line: %s", what, err);
    cr_assert(
        strstr(err, ": expected ") && strstr(err, "found"), "%s: '%s' says neither expected nor found", what, err);
    cr_assert(g->kv == NULL && g->tensors == NULL && g->kv_by_key == NULL && g->size == 0, "%s: *g not zeroed", what);
}

ParameterizedTestParameters(gguf, refuses_lies)
{
    static int ids[NLIES];
    for (size_t i = 0; i < NLIES; i++) ids[i] = (int)i;
    return cr_make_param_array(int, ids, NLIES);
}

ParameterizedTest(int *id, gguf, refuses_lies)
{
    const lie_t *c = &LIES[*id];
    gguf_build_t b;
    gb_init(&b);
    if (c->make)
        c->make(&b);
    else
        honest(&b);
    size_t size;
    uint8_t *img = gb_finish(&b, &size);
    if (!c->make) img[3] = 'X';
    drift_gguf_t g;
    char err[ERR] = "";
    int rc = drift_gguf_parse(&g, img, size, err, sizeof err);
    expect_refusal(&g, rc, err, c->what);
    cr_assert(strstr(err, c->expect), "%s: message '%s' lacks '%s'", c->what, err, c->expect);
    free(img);
    gb_free(&b);
}

/* ---- cuts of a valid file ------------------------------------------------------------------ */

/* Every value type and two small tensors: most of its bytes are metadata, so cuts land in it. */
static uint8_t *small_valid(size_t *size)
{
    gguf_build_t b;
    gb_init(&b);
    add_every_kv(&b);
    honest_tensors(&b);
    uint8_t *img = gb_finish(&b, size);
    gb_free(&b);
    return img;
}

/* A message that names its field starts with a header field or with the item being read. */
static int names_field(const char *err)
{
    static const char *const starts[] = {
        "magic: ", "version: ", "n_tensors: ", "n_kv: ", "data section: ", "kv[", "tensor["};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
        if (!strncmp(err, starts[i], strlen(starts[i]))) return 1;
    return 0;
}

static void expect_cut_refused(const uint8_t *img, size_t cut)
{
    /* a copy of exactly cut bytes, so that ASan sees any read past the end */
    uint8_t *p = malloc(cut ? cut : 1);
    memcpy(p, img, cut);
    drift_gguf_t g;
    char err[ERR] = "", what[48];
    snprintf(what, sizeof what, "cut at %zu", cut);
    int rc = drift_gguf_parse(&g, p, cut, err, sizeof err);
    expect_refusal(&g, rc, err, what);
    cr_assert(names_field(err), "%s: '%s' names no field", what, err);
    free(p);
}

#define NCUTS 20

ParameterizedTestParameters(gguf, refuses_cuts)
{
    static int ids[NCUTS];
    for (int i = 0; i < NCUTS; i++) ids[i] = i;
    return cr_make_param_array(int, ids, NCUTS);
}

/* Cut i: the i-th draw from the Philox stream (seed 7, "test_gguf.cuts"), uniform in [0, size). */
ParameterizedTest(int *id, gguf, refuses_cuts)
{
    size_t size;
    uint8_t *img = small_valid(&size);
    drift_stream_t s;
    drift_stream_init(&s, 7, drift_fnv1a32("test_gguf.cuts"), 0, 0);
    size_t cut = 0;
    for (int i = 0; i <= *id; i++) cut = drift_stream_below(&s, (uint32_t)size);
    expect_cut_refused(img, cut);
    free(img);
}

/* The 20 draws above sample the cuts; this takes every one (the file is ~1 kB, so it is cheap). */
Test(gguf, refuses_every_cut)
{
    size_t size;
    uint8_t *img = small_valid(&size);
    drift_gguf_t g;
    char err[ERR];
    cr_assert_eq(drift_gguf_parse(&g, img, size, err, sizeof err), 0, "the whole file is valid: %s", err);
    drift_gguf_close(&g);
    for (size_t cut = 0; cut < size; cut++) expect_cut_refused(img, cut);
    free(img);
}

/* ---- the real model ------------------------------------------------------------------------- */

/* Expected values read from the file with the `gguf` Python package 0.19.0 (llama.cpp's gguf-py,
 * gguf.GGUFReader): version 3, 272 tensors (210 q4_1, 61 f32, 1 q8_0), 33 kv, no
 * general.alignment (so 32), data section at byte 1785664; llama.block_count 30,
 * llama.embedding_length 576, llama.rope.freq_base 100000.0 (f32), tokenizer.ggml.add_bos_token
 * false; token_embd.weight q8_0 ne {576, 49152}, 30081024 bytes at data offset 0;
 * output_norm.weight f32 {576} at file byte 98360128; tokenizer.ggml.tokens 49152 strings with
 * [0] "<|endoftext|>", [1] "<|im_start|>", [49151] "ectable"; tokenizer.ggml.merges 48900
 * strings with [0] "Ġ t". */
Test(gguf, smollm2_header_matches_gguf_py)
{
    if (access(SMOL, R_OK)) cr_skip_test("%s is absent: nothing to compare with gguf-py's reading", SMOL);
    drift_gguf_t g;
    char err[ERR];
    cr_assert_eq(drift_gguf_open(&g, SMOL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(g.version, 3);
    cr_assert_eq(g.n_tensors, 272);
    cr_assert_eq(g.n_kv, 33);
    cr_assert_eq(g.alignment, 32);
    cr_assert_eq(g.data_offset, 1785664);
    expect_u64(&g, "llama.block_count", 30);
    expect_u64(&g, "llama.embedding_length", 576);
    double f;
    cr_assert_eq(drift_gguf_get_f64(&g, "llama.rope.freq_base", &f, err, sizeof err), 0, "%s", err);
    cr_assert_eq(f, 100000.0);
    int b;
    cr_assert_eq(drift_gguf_get_bool(&g, "tokenizer.ggml.add_bos_token", &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b, 0);
    const drift_gguf_tensor_t *t = drift_gguf_tensor(&g, "token_embd.weight");
    cr_assert(t);
    cr_assert(t->type == DRIFT_GGML_Q8_0 && t->n_dims == 2 && t->ne[0] == 576 && t->ne[1] == 49152);
    cr_assert(t->nbytes == 30081024 && t->offset == 0);
    t = drift_gguf_tensor(&g, "output_norm.weight");
    cr_assert(t && t->type == DRIFT_GGML_F32 && t->ne[0] == 576 && g.data_offset + t->offset == 98360128);
    size_t counts[3] = {0};
    for (uint64_t i = 0; i < g.n_tensors; i++)
        counts[g.tensors[i].type == DRIFT_GGML_Q4_1 ? 0 : g.tensors[i].type == DRIFT_GGML_F32 ? 1 : 2]++;
    cr_assert(counts[0] == 210 && counts[1] == 61 && counts[2] == 1);
    const drift_gguf_kv_t *kv = drift_gguf_find(&g, "tokenizer.ggml.tokens");
    cr_assert(kv && kv->type == DRIFT_GGUF_ARRAY && kv->elem_type == DRIFT_GGUF_STRING && kv->count == 49152);
    drift_gguf_str_t s;
    cr_assert(!drift_gguf_array_str(kv, 0, &s) && str_is(s, "<|endoftext|>"));
    cr_assert(!drift_gguf_array_str(kv, 1, &s) && str_is(s, "<|im_start|>"));
    cr_assert(!drift_gguf_array_str(kv, 49151, &s) && str_is(s, "ectable"));
    kv = drift_gguf_find(&g, "tokenizer.ggml.merges");
    cr_assert(kv && kv->elem_type == DRIFT_GGUF_STRING && kv->count == 48900);
    cr_assert(!drift_gguf_array_str(kv, 0, &s) && str_is(s, "\xc4\xa0 t"));
    drift_gguf_close(&g);
}
