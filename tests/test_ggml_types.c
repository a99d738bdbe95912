/* test_ggml_types.c — ggml's type table (ggml_types.c): ids, names, block sizes as ggml
 * defines them, and row sizes with their refusals. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "drift.h"
#include "ggml_quant.h"

/* Ids: enum ggml_type in ggml.h; names: type_traits[].type_name in ggml.c; block elements and
 * bytes: the block structs of ggml-common.h and the static_assert beside each (llama.cpp as
 * vendored by llama-cpp-python 0.3.36), with ggml_half = 2 bytes, QK_K = 256, K_SCALE_SIZE = 12:
 *   q5_1 = 2*2 + 4 (qh) + 32/2 = 24,   q3_K = 2 + 256/4 + 256/8 + 12 = 110,
 *   q6_K = 2 + 256/16 + 3*256/4 = 210, q8_K = 4 (float d) + 256 + 256/16 * 2 = 292. */
static const struct {
    uint32_t id;
    const char *name;
    size_t elems, bytes;
} GGML[] = {
    {0, "f32", 1, 4},
    {1, "f16", 1, 2},
    {2, "q4_0", 32, 18},
    {3, "q4_1", 32, 20},
    {6, "q5_0", 32, 22},
    {7, "q5_1", 32, 24},
    {8, "q8_0", 32, 34},
    {9, "q8_1", 32, 36},
    {10, "q2_K", 256, 84},
    {11, "q3_K", 256, 110},
    {12, "q4_K", 256, 144},
    {13, "q5_K", 256, 176},
    {14, "q6_K", 256, 210},
    {15, "q8_K", 256, 292},
    {30, "bf16", 1, 2},
};

Test(ggml_types, table_matches_ggml)
{
    for (size_t i = 0; i < sizeof GGML / sizeof GGML[0]; i++) {
        uint32_t t = GGML[i].id;
        cr_assert(drift_ggml_type_known(t), "%u", t);
        cr_assert_str_eq(drift_ggml_type_name(t), GGML[i].name);
        cr_assert_eq(drift_ggml_block_elems(t), GGML[i].elems, "%s", GGML[i].name);
        cr_assert_eq(drift_ggml_block_bytes(t), GGML[i].bytes, "%s", GGML[i].name);
        size_t row = 0;
        cr_assert_eq(drift_ggml_row_bytes(&row, t, 3 * GGML[i].elems), 0);
        cr_assert_eq(row, 3 * GGML[i].bytes, "%s: three blocks", GGML[i].name);
    }
}

/* Every other id up to 255 is unknown: the removed q4_2/q4_3 (4, 5), the i-quants, i8..f64,
 * the ternary and fp4 types, and ids ggml never had. */
Test(ggml_types, other_ids_are_unknown)
{
    int known = 0;
    for (uint32_t t = 0; t < 256; t++) {
        if (!drift_ggml_type_known(t)) {
            cr_assert_str_eq(drift_ggml_type_name(t), "?", "%u", t);
            cr_assert_eq(drift_ggml_block_elems(t), 0);
            cr_assert_eq(drift_ggml_block_bytes(t), 0);
            size_t row;
            cr_assert_eq(drift_ggml_row_bytes(&row, t, 256), DRIFT_EINVAL, "%u", t);
        } else {
            known++;
        }
    }
    cr_assert_eq(known, 15);
    cr_assert(!drift_ggml_type_known(UINT32_MAX));
}

Test(ggml_types, row_bytes_refuses_partial_blocks_and_overflow)
{
    size_t row = 7;
    cr_assert_eq(drift_ggml_row_bytes(&row, DRIFT_GGML_Q4_K, 255), DRIFT_EINVAL);
    cr_assert_eq(drift_ggml_row_bytes(&row, DRIFT_GGML_Q8_0, 33), DRIFT_EINVAL);
    cr_assert_eq(row, 7, "untouched on refusal");
    cr_assert_eq(drift_ggml_row_bytes(&row, DRIFT_GGML_F32, 0), 0);
    cr_assert_eq(row, 0, "an empty row");
    /* 2^62 f32 values are 2^64 bytes: one more than size_t holds; 2^62 - 1 values fit */
    cr_assert_eq(drift_ggml_row_bytes(&row, DRIFT_GGML_F32, (uint64_t)1 << 62), DRIFT_ERANGE);
    cr_assert_eq(drift_ggml_row_bytes(&row, DRIFT_GGML_F32, ((uint64_t)1 << 62) - 1), 0);
    cr_assert_eq(row, SIZE_MAX - 3);
    cr_assert_eq(drift_ggml_row_bytes(&row, DRIFT_GGML_Q8_0, UINT64_MAX - 31), DRIFT_ERANGE);
}
