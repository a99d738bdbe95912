/* ggml_types.c — the table of ggml's storage types: name, elements per block and bytes per
 * block, as ggml's type_traits (ggml.c) and block structs (ggml-common.h) define them. The
 * byte counts are the sums of each struct's fields (every struct is packed: its size is
 * static_asserted in ggml-common.h), for QK_K = 256:
 *   q4_0  2 (d) + 16 (qs)                                       = 18
 *   q4_1  2 (d) + 2 (m) + 16 (qs)                               = 20
 *   q5_0  2 (d) + 4 (qh) + 16 (qs)                              = 22
 *   q5_1  2 (d) + 2 (m) + 4 (qh) + 16 (qs)                      = 24
 *   q8_0  2 (d) + 32 (qs)                                       = 34
 *   q8_1  2 (d) + 2 (s) + 32 (qs)                               = 36
 *   q2_K  16 (scales) + 64 (qs) + 2 (d) + 2 (dmin)              = 84
 *   q3_K  32 (hmask) + 64 (qs) + 12 (scales) + 2 (d)            = 110
 *   q4_K  2 (d) + 2 (dmin) + 12 (scales) + 128 (qs)             = 144
 *   q5_K  2 (d) + 2 (dmin) + 12 (scales) + 32 (qh) + 128 (qs)   = 176
 *   q6_K  128 (ql) + 64 (qh) + 16 (scales) + 2 (d)              = 210
 *   q8_K  4 (float d) + 256 (qs) + 32 (int16 bsums)             = 292 */
#include <stdint.h>

#include "drift.h"
#include "ggml_quant.h"

typedef struct {
    uint32_t id;
    const char *name;
    size_t elems, bytes;
} ggml_type_row_t;

static const ggml_type_row_t TYPES[] = {
    {DRIFT_GGML_F32, "f32", 1, 4},        {DRIFT_GGML_F16, "f16", 1, 2},
    {DRIFT_GGML_Q4_0, "q4_0", 32, 18},    {DRIFT_GGML_Q4_1, "q4_1", 32, 20},
    {DRIFT_GGML_Q5_0, "q5_0", 32, 22},    {DRIFT_GGML_Q5_1, "q5_1", 32, 24},
    {DRIFT_GGML_Q8_0, "q8_0", 32, 34},    {DRIFT_GGML_Q8_1, "q8_1", 32, 36},
    {DRIFT_GGML_Q2_K, "q2_K", 256, 84},   {DRIFT_GGML_Q3_K, "q3_K", 256, 110},
    {DRIFT_GGML_Q4_K, "q4_K", 256, 144},  {DRIFT_GGML_Q5_K, "q5_K", 256, 176},
    {DRIFT_GGML_Q6_K, "q6_K", 256, 210},  {DRIFT_GGML_Q8_K, "q8_K", 256, 292},
    {DRIFT_GGML_BF16, "bf16", 1, 2},
};

static const ggml_type_row_t *row_of(uint32_t t)
{
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (TYPES[i].id == t) return &TYPES[i];
    return NULL;
}

int drift_ggml_type_known(uint32_t t)
{
    return row_of(t) != NULL;
}

const char *drift_ggml_type_name(uint32_t t)
{
    const ggml_type_row_t *r = row_of(t);
    return r ? r->name : "?";
}

size_t drift_ggml_block_elems(uint32_t t)
{
    const ggml_type_row_t *r = row_of(t);
    return r ? r->elems : 0;
}

size_t drift_ggml_block_bytes(uint32_t t)
{
    const ggml_type_row_t *r = row_of(t);
    return r ? r->bytes : 0;
}

int drift_ggml_row_bytes(size_t *bytes, uint32_t t, uint64_t n)
{
    const ggml_type_row_t *r = row_of(t);
    if (!r || n % r->elems) return DRIFT_EINVAL;
    uint64_t blocks = n / r->elems;
    if (blocks > SIZE_MAX / r->bytes) return DRIFT_ERANGE;
    *bytes = (size_t)blocks * r->bytes;
    return DRIFT_OK;
}
