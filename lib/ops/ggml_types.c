/* ggml_types.c — ggml's tensor types as data: id, name, elements and bytes per block
 * (ggml_quant.h). Block bytes are the sizeof of ggml's block structs, each checked against
 * the static_assert that ggml-common.h writes next to the struct (ggml_half = 2 bytes):
 *   q4_0  2 + 32/2                = 18      q4_1  2*2 + 32/2             = 20
 *   q5_0  2 + 4 + 32/2            = 22      q5_1  2*2 + 4 + 32/2         = 24
 *   q8_0  2 + 32                  = 34      q8_1  2*2 + 32               = 36
 *   q2_K  2*2 + 256/16 + 256/4    = 84      q3_K  2 + 256/4 + 256/8 + 12 = 110
 *   q4_K  2*2 + 12 + 256/2        = 144     q5_K  2*2 + 12 + 256/2 + 256/8 = 176
 *   q6_K  2 + 256/16 + 3*256/4    = 210     q8_K  4 + 256 + 256/16*2     = 292
 * Names are ggml's type_traits[].type_name (ggml.c). */
#include "ggml_quant.h"

#include "drift.h"

typedef struct {
    uint32_t id;
    const char *name;
    uint32_t block_elems, block_bytes;
} ggml_type_info;

static const ggml_type_info types[] = {
    {DRIFT_GGML_F32, "f32", 1, 4},
    {DRIFT_GGML_F16, "f16", 1, 2},
    {DRIFT_GGML_Q4_0, "q4_0", 32, 18},
    {DRIFT_GGML_Q4_1, "q4_1", 32, 20},
    {DRIFT_GGML_Q5_0, "q5_0", 32, 22},
    {DRIFT_GGML_Q5_1, "q5_1", 32, 24},
    {DRIFT_GGML_Q8_0, "q8_0", 32, 34},
    {DRIFT_GGML_Q8_1, "q8_1", 32, 36},
    {DRIFT_GGML_Q2_K, "q2_K", 256, 84},
    {DRIFT_GGML_Q3_K, "q3_K", 256, 110},
    {DRIFT_GGML_Q4_K, "q4_K", 256, 144},
    {DRIFT_GGML_Q5_K, "q5_K", 256, 176},
    {DRIFT_GGML_Q6_K, "q6_K", 256, 210},
    {DRIFT_GGML_Q8_K, "q8_K", 256, 292},
    {DRIFT_GGML_BF16, "bf16", 1, 2},
};

static const ggml_type_info *info(uint32_t t)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].id == t) return &types[i];
    return NULL;
}

int drift_ggml_type_known(uint32_t t) { return info(t) != NULL; }

const char *drift_ggml_type_name(uint32_t t)
{
    const ggml_type_info *p = info(t);
    return p ? p->name : "?";
}

size_t drift_ggml_block_elems(uint32_t t)
{
    const ggml_type_info *p = info(t);
    return p ? p->block_elems : 0;
}

size_t drift_ggml_block_bytes(uint32_t t)
{
    const ggml_type_info *p = info(t);
    return p ? p->block_bytes : 0;
}

int drift_ggml_row_bytes(size_t *bytes, uint32_t t, uint64_t n)
{
    const ggml_type_info *p = info(t);
    if (!p || n % p->block_elems) return DRIFT_EINVAL;
    uint64_t blocks = n / p->block_elems;
    if (blocks > SIZE_MAX / p->block_bytes) return DRIFT_ERANGE;
    if (bytes) *bytes = (size_t)blocks * p->block_bytes;
    return 0;
}
