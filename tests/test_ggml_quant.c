/* test_ggml_quant.c — ggml's tensor types (lib/ops/ggml_quant.c, ggml_quant_ref.c,
 * ggml_types.c) against witnesses that are not the code under test:
 *   - hand-built blocks whose values are derived by hand next to each case (the layouts of
 *     ggml-common.h, the formulas of ggml-quants.c dequantize_row_*);
 *   - MPFR: random blocks (Philox), each element computed exactly from the block's fields
 *     by a per-element formula written here, then rounded once to fp32 (tests/oracle.h).
 *     ggml's scalar code is that correctly rounded value for every type (its products are
 *     exact in fp32 and at most one add, or q8_K's one multiply, rounds; see ggml_quant.c),
 *     so one rounding is the right oracle; the quantizers round several times and their
 *     oracle rounds each of ggml's operations to fp32 (or fp16) in ggml's order;
 *   - tests/data/ggml_dequant_cases.tsv: gguf-py's own dequantize (numpy, the `gguf`
 *     package) of rows of SmolLM2-135M-Instruct.Q4_1.gguf and of random blocks, and records
 *     of ggml's ggml-quants.c itself (q8_K values, the reference quantizers); the script
 *     next to it says how it was written;
 *   - fp16/bf16: every one of the 65536 patterns against a sign/exponent/fraction
 *     derivation with ldexp (IEEE 754-2019 binary16; bfloat16 = binary32's top half).
 * Every comparison is bit for bit (tolerance 0: the dequantized values are ggml's exactly,
 * -0 and +0 apart), NaN against NaN by isnan. Loops count mismatches and report the first. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "ggml_quant.h"
#include "oracle.h"
#include "philox.h"
#include "support.h"

/* ---- helpers ------------------------------------------------------------------------- */

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Same float: identical bits, or both NaN. */
static int same_f(float a, float b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fbits(a) == fbits(b);
}

/* binary16 from its fields: e = 0: m * 2^-24; e = 31: inf (m = 0) or NaN; else
 * (1024 + m) * 2^(e - 25) (that is (1 + m/2^10) * 2^(e - 15)). */
static double ref_fp16(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* bfloat16 from its fields: e = 0: m * 2^-133 (m * 2^-7 * 2^-126); e = 255: inf/NaN; else
 * (128 + m) * 2^(e - 134). */
static double ref_bf16(uint16_t b)
{
    int e = (b >> 7) & 255, m = b & 127;
    double v = e == 0 ? ldexp(m, -133) : e == 255 ? (m ? NAN : INFINITY) : ldexp(128 + m, e - 134);
    return (b & 0x8000) ? -v : v;
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void stream(drift_stream_t *s, uint32_t point, uint32_t trial)
{
    drift_stream_init(s, 20250601u, drift_fnv1a32("test_ggml_quant"), point, trial);
}

/* ---- fp16 and bf16: all 65536 patterns ------------------------------------------------ */

/* conv(h) against ref(h) for every 16-bit pattern h: the same value (NaN for NaN). */
static void all_patterns(float (*conv)(uint16_t), double (*ref)(uint16_t), const char *name)
{
    int bad = 0, first = -1;
    for (uint32_t h = 0; h < 65536; h++) {
        float got = conv((uint16_t)h);
        double want = ref((uint16_t)h);
        if (!same_f(got, (float)want) || (!isnan(want) && (double)got != want)) {
            if (first < 0) first = (int)h;
            bad++;
        }
    }
    cr_assert_eq(bad, 0, "%d %s patterns wrong, first 0x%04x -> %a (want %a)", bad, name, first,
        first < 0 ? 0.0 : (double)conv((uint16_t)first), first < 0 ? 0.0 : ref((uint16_t)first));
}

Test(convert, fp16_all_patterns) { all_patterns(drift_fp16_bits_to_float, ref_fp16, "fp16"); }

Test(convert, bf16_all_patterns) { all_patterns(drift_bf16_bits_to_float, ref_bf16, "bf16"); }

/* ---- the type table ------------------------------------------------------------------- */

typedef struct {
    uint32_t t;
    const char *name;
    size_t elems, bytes;
} type_case_t;

/* ggml's names (ggml.c type_traits) and the sizes of the block structs of ggml-common.h
 * (QK_K = 256), summed field by field: q4_0 {half d; u8 qs[16]} = 18, q4_1 {d, m, qs[16]} =
 * 20, q5_0 {d, qh[4], qs[16]} = 22, q5_1 {d, m, qh[4], qs[16]} = 24, q8_0 {d, i8 qs[32]} =
 * 34, q8_1 {d, s, qs[32]} = 36, q2_K {scales[16], qs[64], d, dmin} = 84, q3_K {hmask[32],
 * qs[64], scales[12], d} = 110, q4_K {d, dmin, scales[12], qs[128]} = 144, q5_K {d, dmin,
 * scales[12], qh[32], qs[128]} = 176, q6_K {ql[128], qh[64], i8 scales[16], d} = 210, q8_K
 * {float d, i8 qs[256], i16 bsums[16]} = 292. */
static const type_case_t TYPES[] = {
    {DRIFT_GGML_F32, "f32", 1, 4},
    {DRIFT_GGML_F16, "f16", 1, 2},
    {DRIFT_GGML_BF16, "bf16", 1, 2},
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
};
#define NTYPES (sizeof TYPES / sizeof TYPES[0])

Test(types, table)
{
    for (size_t i = 0; i < NTYPES; i++) {
        const type_case_t *c = &TYPES[i];
        cr_assert(drift_ggml_type_known(c->t), "%s", c->name);
        cr_assert_str_eq(drift_ggml_type_name(c->t), c->name);
        cr_assert_eq(drift_ggml_block_elems(c->t), c->elems, "%s", c->name);
        cr_assert_eq(drift_ggml_block_bytes(c->t), c->bytes, "%s", c->name);
        size_t b = 0;
        cr_assert_eq(drift_ggml_row_bytes(&b, c->t, 3 * c->elems), 0);
        cr_assert_eq(b, 3 * c->bytes, "%s", c->name);
        if (c->elems > 1) cr_assert_eq(drift_ggml_row_bytes(&b, c->t, c->elems + 1), DRIFT_EINVAL, "%s", c->name);
    }
    /* ids ggml has but this table does not: q4_2/q4_3 (4, 5, removed), iq2_xxs (16), i8 (24) */
    const uint32_t unknown[] = {4, 5, 16, 24, 31, 1000};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        size_t b = 0;
        cr_assert(!drift_ggml_type_known(unknown[i]));
        cr_assert_str_eq(drift_ggml_type_name(unknown[i]), "?");
        cr_assert_eq(drift_ggml_block_elems(unknown[i]), 0);
        cr_assert_eq(drift_ggml_block_bytes(unknown[i]), 0);
        cr_assert_eq(drift_ggml_row_bytes(&b, unknown[i], 32), DRIFT_EINVAL);
    }
    /* 2^64 - 256 elements of q8_K = 2^56 - 1 blocks of 292 bytes: about 2^64.2, more than a
     * 64-bit SIZE_MAX; of q4_0 (2^64 - 32 = (2^59 - 1) blocks of 18 bytes, about 2^63.2) it fits */
    size_t b = 0;
    cr_assert_eq(drift_ggml_row_bytes(&b, DRIFT_GGML_Q8_K, UINT64_MAX - 255), DRIFT_ERANGE);
    if (SIZE_MAX == UINT64_MAX) {
        cr_assert_eq(drift_ggml_row_bytes(&b, DRIFT_GGML_Q4_0, UINT64_MAX - 31), 0);
        cr_assert_eq(b, ((size_t)1 << 59) * 18 - 18);
    }
}

/* ---- hand-built blocks ------------------------------------------------------------------ */

/* A block is all zero bytes, then each fill writes bytes[off + k] = (start + k * step) mod 256
 * for k < len; the wanted values are (element, value) pairs. */
typedef struct {
    uint16_t off, len;
    int start, step;
} fill_t;

typedef struct {
    int i;
    float v;
} want_t;

typedef struct {
    char name[32]; /* an array, not a pointer: Criterion copies parameters into a re-executed process */
    uint32_t t;
    fill_t fill[16];
    int nwant;
    want_t want[40];
} hand_t;

#define F1(off, byte)   \
    {                   \
        off, 1, byte, 0 \
    }

static const hand_t HAND[] = {
    /* q4_0: d = 0.5 (fp16 0x3800 = 2^-1: exponent field 14), qs[j] = 240 - 15j = j | (15-j) << 4:
     * element j (j < 16) is the low nibble q = j, element 16 + j the high nibble q = 15 - j;
     * y = 0.5 * (q - 8): elements 0..15 = -4, -3.5, ..., 3.5 and 16..31 = 3.5, ..., -4. */
    {"q4_0 ramp", DRIFT_GGML_Q4_0, {F1(0, 0x00), F1(1, 0x38), {2, 16, 240, -15}}, 32,
        {{0, -4}, {1, -3.5f}, {2, -3}, {3, -2.5f}, {4, -2}, {5, -1.5f}, {6, -1}, {7, -0.5f}, {8, 0}, {9, 0.5f}, {10, 1},
            {11, 1.5f}, {12, 2}, {13, 2.5f}, {14, 3}, {15, 3.5f}, {16, 3.5f}, {17, 3}, {18, 2.5f}, {19, 2}, {20, 1.5f},
            {21, 1}, {22, 0.5f}, {23, 0}, {24, -0.5f}, {25, -1}, {26, -1.5f}, {27, -2}, {28, -2.5f}, {29, -3},
            {30, -3.5f}, {31, -4}}},
    /* q4_0 with d = +inf (0x7C00), same nibbles: q - 8 < 0 -> -inf, = 0 -> inf * 0 = NaN,
     * > 0 -> +inf (IEEE products, as ggml's x0*d gives them). */
    {"q4_0 inf scale", DRIFT_GGML_Q4_0, {F1(0, 0x00), F1(1, 0x7C), {2, 16, 240, -15}}, 6,
        {{0, -INFINITY}, {8, NAN}, {9, INFINITY}, {16, INFINITY}, {23, NAN}, {24, -INFINITY}}},
    /* q4_1: d = 0.5 (0x3800), m = -1 (0xBC00), nibbles as above: y = 0.5 q - 1, q = j for
     * element j < 16, 15 - j for element 16 + j: -1, -0.5, 0 (+0: 1 + -1), ..., 6.5, then
     * 6.5, ..., -1. */
    {"q4_1 ramp", DRIFT_GGML_Q4_1, {F1(0, 0x00), F1(1, 0x38), F1(2, 0x00), F1(3, 0xBC), {4, 16, 240, -15}}, 32,
        {{0, -1}, {1, -0.5f}, {2, 0}, {3, 0.5f}, {4, 1}, {5, 1.5f}, {6, 2}, {7, 2.5f}, {8, 3}, {9, 3.5f}, {10, 4},
            {11, 4.5f}, {12, 5}, {13, 5.5f}, {14, 6}, {15, 6.5f}, {16, 6.5f}, {17, 6}, {18, 5.5f}, {19, 5}, {20, 4.5f},
            {21, 4}, {22, 3.5f}, {23, 3}, {24, 2.5f}, {25, 2}, {26, 1.5f}, {27, 1}, {28, 0.5f}, {29, 0}, {30, -0.5f},
            {31, -1}}},
    /* q4_1 where the add rounds, a tie: d = 1024 (0x6400), m = 2^-14 (0x0400, fp16's smallest
     * normal); qs[0] = 0x10 (element 0: q = 0, element 16: q = 1), qs[1] = 0xF2 (element 1:
     * q = 2, element 17: q = 15), the rest 0. Element 0: 0 + 2^-14 = 2^-14 (exact). Element
     * 16: 1024 + 2^-14, fp32's spacing at 1024 is 2^-13, so this is the midpoint of 1024
     * (fraction even) and 1024 + 2^-13 (odd): ties to even give 1024. Element 1: 2048 + 2^-14,
     * below half the spacing 2^-12: 2048. Element 17: 15360 + 2^-14 (spacing 2^-10): 15360. */
    {"q4_1 add rounds (tie)", DRIFT_GGML_Q4_1, {F1(1, 0x64), F1(3, 0x04), F1(4, 0x10), F1(5, 0xF2)}, 6,
        {{0, 0x1p-14f}, {16, 1024}, {1, 2048}, {17, 15360}, {2, 0x1p-14f}, {31, 0x1p-14f}}},
    /* The same with m = 1.5 * 2^-14 (0x0600): element 16 is 1024 + 0.75 * 2^-13, nearer to
     * 1024 + 2^-13 = 0x1.000002p+10 (rounded up); element 1: 2048 + 0.375 * 2^-12 -> 2048. */
    {"q4_1 add rounds (up)", DRIFT_GGML_Q4_1, {F1(1, 0x64), F1(3, 0x06), F1(4, 0x10), F1(5, 0xF2)}, 4,
        {{0, 0x1.8p-14f}, {16, 0x1.000002p+10f}, {1, 2048}, {17, 15360}}},
    /* q5_0: d = 0.25 (0x3400), qh bytes 55 55 0F F0 (the u32 0xF00F5555: bit j set for even
     * j < 16, for j = 16..19 and for j = 28..31), nibbles as q4_0 (element j: j, element
     * 16 + j: 15 - j). q = nibble | bit << 4, y = 0.25 (q - 16). Element j < 16: even j:
     * 0.25 j, odd j: 0.25 (j - 16). Element 16 + j: bit set for j = 0..3 and 12..15:
     * 0.25 (15 - j), clear: 0.25 (-1 - j). */
    {"q5_0 qh bits", DRIFT_GGML_Q5_0, {F1(1, 0x34), {2, 2, 0x55, 0}, F1(4, 0x0F), F1(5, 0xF0), {6, 16, 240, -15}}, 32,
        {{0, 0}, {1, -3.75f}, {2, 0.5f}, {3, -3.25f}, {4, 1}, {5, -2.75f}, {6, 1.5f}, {7, -2.25f}, {8, 2}, {9, -1.75f},
            {10, 2.5f}, {11, -1.25f}, {12, 3}, {13, -0.75f}, {14, 3.5f}, {15, -0.25f}, {16, 3.75f}, {17, 3.5f},
            {18, 3.25f}, {19, 3}, {20, -1.25f}, {21, -1.5f}, {22, -1.75f}, {23, -2}, {24, -2.25f}, {25, -2.5f},
            {26, -2.75f}, {27, -3}, {28, 0.75f}, {29, 0.5f}, {30, 0.25f}, {31, 0}}},
    /* q5_1: d = 1 (0x3C00), m = 0.5 (0x3800), qh and nibbles as q5_0: y = q + 0.5 with
     * element j < 16: q = j + 16 [j even]; element 16 + j: q = 15 - j + 16 [j < 4 or j >= 12]. */
    {"q5_1 qh bits", DRIFT_GGML_Q5_1,
        {F1(1, 0x3C), F1(3, 0x38), {4, 2, 0x55, 0}, F1(6, 0x0F), F1(7, 0xF0), {8, 16, 240, -15}}, 32,
        {{0, 16.5f}, {1, 1.5f}, {2, 18.5f}, {3, 3.5f}, {4, 20.5f}, {5, 5.5f}, {6, 22.5f}, {7, 7.5f}, {8, 24.5f},
            {9, 9.5f}, {10, 26.5f}, {11, 11.5f}, {12, 28.5f}, {13, 13.5f}, {14, 30.5f}, {15, 15.5f}, {16, 31.5f},
            {17, 30.5f}, {18, 29.5f}, {19, 28.5f}, {20, 11.5f}, {21, 10.5f}, {22, 9.5f}, {23, 8.5f}, {24, 7.5f},
            {25, 6.5f}, {26, 5.5f}, {27, 4.5f}, {28, 19.5f}, {29, 18.5f}, {30, 17.5f}, {31, 16.5f}}},
    /* q8_0: d = -0.125 (0xB000), qs[j] = 0x80 + 8j, as int8 -128 + 8j: y = -0.125 (-128 + 8j)
     * = 16 - j; element 16 is -0.125 * 0 = -0 (sign kept). */
    {"q8_0 ramp", DRIFT_GGML_Q8_0, {F1(1, 0xB0), {2, 32, 0x80, 8}}, 32,
        {{0, 16}, {1, 15}, {2, 14}, {3, 13}, {4, 12}, {5, 11}, {6, 10}, {7, 9}, {8, 8}, {9, 7}, {10, 6}, {11, 5},
            {12, 4}, {13, 3}, {14, 2}, {15, 1}, {16, -0.0f}, {17, -1}, {18, -2}, {19, -3}, {20, -4}, {21, -5}, {22, -6},
            {23, -7}, {24, -8}, {25, -9}, {26, -10}, {27, -11}, {28, -12}, {29, -13}, {30, -14}, {31, -15}}},
    /* q8_0 with fp16's smallest subnormal d = 2^-24 (0x0001): q = -128 -> -2^-17, 127 ->
     * 127 * 2^-24 = 0x1.fcp-18, 1 -> 2^-24, 0 -> +0. */
    {"q8_0 subnormal d", DRIFT_GGML_Q8_0, {F1(0, 0x01), F1(2, 0x80), F1(3, 0x7F), F1(4, 0x01)}, 4,
        {{0, -0x1p-17f}, {1, 0x1.fcp-18f}, {2, 0x1p-24f}, {3, 0}}},
    /* q8_1: d = 2 (0x4000), s = 0x1234 (not a value), qs[j] = 0x81 + 8j = int8 -127 + 8j:
     * y = -254 + 16j. */
    {"q8_1 ramp", DRIFT_GGML_Q8_1, {F1(1, 0x40), F1(2, 0x34), F1(3, 0x12), {4, 32, 0x81, 8}}, 32,
        {{0, -254}, {1, -238}, {2, -222}, {3, -206}, {4, -190}, {5, -174}, {6, -158}, {7, -142}, {8, -126}, {9, -110},
            {10, -94}, {11, -78}, {12, -62}, {13, -46}, {14, -30}, {15, -14}, {16, 2}, {17, 18}, {18, 34}, {19, 50},
            {20, 66}, {21, 82}, {22, 98}, {23, 114}, {24, 130}, {25, 146}, {26, 162}, {27, 178}, {28, 194}, {29, 210},
            {30, 226}, {31, 242}}},
    /* f16, little-endian pairs: 0x3C00 = 1, 0xC000 = -2, 0x0001 = 2^-24, 0x7BFF = 65504,
     * 0x7C00 = inf, 0xFE00 = NaN, 0x8000 = -0, 0x03FF = 1023 * 2^-24 = 0x1.ff8p-15. */
    {"f16 specials", DRIFT_GGML_F16,
        {F1(1, 0x3C), F1(3, 0xC0), F1(4, 0x01), F1(6, 0xFF), F1(7, 0x7B), F1(9, 0x7C), F1(11, 0xFE), F1(13, 0x80),
            F1(14, 0xFF), F1(15, 0x03)},
        8, {{0, 1}, {1, -2}, {2, 0x1p-24f}, {3, 65504}, {4, INFINITY}, {5, NAN}, {6, -0.0f}, {7, 0x1.ff8p-15f}}},
    /* bf16: 0x3F80 = 1, 0x4049 = (1 + 73/128) * 2 = 3.140625, 0xFF80 = -inf, 0x0001 = 2^-133,
     * 0x7FC1 = NaN, 0x7F7F = (1 + 127/128) 2^127 = 0x1.fep+127 (bf16's largest). */
    {"bf16 specials", DRIFT_GGML_BF16,
        {F1(0, 0x80), F1(1, 0x3F), F1(2, 0x49), F1(3, 0x40), F1(4, 0x80), F1(5, 0xFF), F1(6, 0x01), F1(8, 0xC1),
            F1(9, 0x7F), F1(10, 0x7F), F1(11, 0x7F)},
        6, {{0, 1}, {1, 3.140625f}, {2, -INFINITY}, {3, 0x1p-133f}, {4, NAN}, {5, 0x1.fep+127f}}},
    /* f32: 0x3FC00000 = 1.5, 0x80000001 = -2^-149 (copied as they are). */
    {"f32 copy", DRIFT_GGML_F32, {F1(2, 0xC0), F1(3, 0x3F), F1(4, 0x01), F1(7, 0x80)}, 2, {{0, 1.5f}, {1, -0x1p-149f}}},
    /* q2_K: scales[s] = 0x21 + s (bytes 0..15): scale sc = low nibble = s + 1 for s < 15 (s = 15:
     * 0x30, sc = 0), min mn = high nibble = 2 (s = 15: 3); qs (bytes 16..79) all 0xE4 = 2-bit
     * fields 0,1,2,3 from the bottom, so q = j for the elements at shift 2j, except qs[17] = 0
     * and qs[35] = 0xFF (all fields 3); d = 1 (0x3C00 at 80), dmin = 0.5 (0x3800 at 82).
     * Element e = 128h + 32j + l: byte qs[32h + l], q = (byte >> 2j) & 3, sub-block
     * s = 8h + 2j + (l >= 16), y = sc q - 0.5 mn:
     *   e 0: s 0 (sc 1, mn 2), q 0: -1;  e 16: s 1, q 0: -1;  e 32: s 2 (sc 3), q 1: 2;
     *   e 48: s 3 (sc 4), q 1: 3;  e 49: l 17, qs[17] = 0: q 0, -1;  e 64: s 4 (sc 5), q 2: 9;
     *   e 80: s 5 (sc 6), q 2: 11;  e 81: l 17: q 0, -1;  e 96: s 6 (sc 7), q 3: 20;
     *   e 127: s 7 (sc 8), q 3: 23;  e 128: s 8 (sc 9), q 0: -1;  e 131: qs[35] = 0xFF, q 3:
     *   26;  e 163: s 10 (sc 11), qs[35], q 3: 32;  e 227: s 14 (sc 15), qs[35]: 44;
     *   e 240: s 15 (sc 0, mn 3), q 3: -1.5;  e 255: -1.5. */
    {"q2_K layout", DRIFT_GGML_Q2_K,
        {{0, 16, 0x21, 1}, {16, 64, 0xE4, 0}, F1(33, 0x00), F1(51, 0xFF), F1(81, 0x3C), F1(83, 0x38)}, 16,
        {{0, -1}, {16, -1}, {32, 2}, {48, 3}, {49, -1}, {64, 9}, {80, 11}, {81, -1}, {96, 20}, {127, 23}, {128, -1},
            {131, 26}, {163, 32}, {227, 44}, {240, -1.5f}, {255, -1.5f}}},
    /* q3_K: scales (bytes 96..107): sb[k] = 0x80 + 0x11k for k < 8 (low nibble k, high nibble
     * 8 + k), so scale k's low four bits are k for all 16 (sb[k] & 15 for k < 8, sb[k-8] >> 4
     * for k >= 8); high two bits (sb[8 + k%4] >> 2(k/4)) & 3 from sb[8] = 0x00 (k = 0,4,8,12:
     * 0), sb[9] = 0xFF (k = 1,5,9,13: 3), sb[10] = 0xE4 (k = 2,6,10,14: 0,1,2,3), sb[11] =
     * 0x1B (k = 3,7,11,15: 3,2,1,0). Scale = (low | high << 4) - 32:
     *   k:     0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15
     *   scale -32 17 -30  19 -28  21 -10   7 -24  25  10  -5 -20  29  30 -17
     * d = 0.5 (0x3800 at 108). qs (32..95) all 0xE4: low bits = j at shift 2j. hmask (0..31)
     * all 0x0F (bits 0..3 set: h = 0 elements get no -4, h = 1 elements get -4), except
     * hmask[5] = 0xF0. Element e = 128h + 32j + l: q = j - (hmask[l] bit (4h+j) ? 0 : 4),
     * s = 8h + 2j + (l >= 16), y = (0.5 scale_s) q:
     *   e 0: s 0, q 0: -16 * 0 = -0;  e 5: hmask[5] bit 0 clear, q -4: -16 * -4 = 64;
     *   e 16: s 1, q 0: +0;  e 33: s 2, q 1: -15;  e 37: bit 1 clear, q -3: 45;
     *   e 48: s 3, q 1: 9.5;  e 64: s 4, q 2: -28;  e 96: s 6, q 3: -15;  e 101: bit 3 clear,
     *   q -1: 5;  e 127: s 7, q 3: 10.5;  e 128: s 8, bit 4 clear, q -4: 48;  e 133: bit 4
     *   set, q 0: -12 * 0 = -0;  e 144: s 9, q -4: -50;  e 160: s 10, q -3: -15;
     *   e 192: s 12, q -2: 20;  e 224: s 14, q -1: -15;  e 229: bit 7 set, q 3: 45;
     *   e 240: s 15, q -1: 8.5. */
    {"q3_K layout", DRIFT_GGML_Q3_K,
        {{0, 32, 0x0F, 0}, F1(5, 0xF0), {32, 64, 0xE4, 0}, {96, 8, 0x80, 0x11}, F1(104, 0x00), F1(105, 0xFF),
            F1(106, 0xE4), F1(107, 0x1B), F1(109, 0x38)},
        18,
        {{0, -0.0f}, {5, 64}, {16, 0}, {33, -15}, {37, 45}, {48, 9.5f}, {64, -28}, {96, -15}, {101, 5}, {127, 10.5f},
            {128, 48}, {133, -0.0f}, {144, -50}, {160, -15}, {192, 20}, {224, -15}, {229, 45}, {240, 8.5f}}},
    /* q4_K: d = 0.25 (0x3400 at 0), dmin = 1 (0x3C00 at 2); scales (4..15) s[0..3] = 0x41 +
     * 0x41k = 41 82 C3 04, s[4..7] = 0xC5 + 0x41k = C5 06 47 88, s[8..11] = 0x21 + 0x22k =
     * 21 43 65 87 (the top bits of s[0..3], 1 2 3 0, and of s[4..7], 3 0 1 2, differ, so
     * taking one for the other shows). get_scale_min_k4: j < 4: sc = s[j] & 63 = 1,2,3,4,
     * mn = s[j+4] & 63 = 5,6,7,8; j >= 4: sc = (s[j+4] & 15) | (s[j-4] >> 6) << 4,
     * mn = (s[j+4] >> 4) | (s[j] >> 6) << 4: j 4: sc 1|16 = 17, mn 2|48 = 50; j 5: 3|32 = 35,
     * 4|0 = 4; j 6: 5|48 = 53, 6|16 = 22; j 7: 7|0 = 7, 8|32 = 40. qs (16..143) = 0, 1, ...,
     * 127. Element e = 64g + 32t + l: byte 32g + l, q = its low (t = 0) or high (t = 1)
     * nibble, sub-block 2g + t, y = 0.25 sc q - mn:
     *   e 0: q 0, j 0: -5;  e 15: q 15: 3.75 - 5 = -1.25;  e 17: q 1: -4.75;  e 32: j 1, q 0:
     *   -6;  e 63: byte 31, q 1: 0.5 - 6 = -5.5;  e 64: j 2, q 0: -7;  e 79: byte 47, q 15:
     *   11.25 - 7 = 4.25;  e 127: j 3, byte 63, q 3: 3 - 8 = -5;  e 133: j 4, byte 69, q 5:
     *   21.25 - 50 = -28.75;  e 191: j 5, byte 95, q 5: 43.75 - 4 = 39.75;  e 202: j 6,
     *   byte 106, q 10: 132.5 - 22 = 110.5;  e 224: j 7, byte 96, q 6: 10.5 - 40 = -29.5;
     *   e 255: byte 127, q 7: 12.25 - 40 = -27.75. */
    {"q4_K layout", DRIFT_GGML_Q4_K,
        {F1(1, 0x34), F1(3, 0x3C), {4, 4, 0x41, 0x41}, {8, 4, 0xC5, 0x41}, {12, 4, 0x21, 0x22}, {16, 128, 0, 1}}, 13,
        {{0, -5}, {15, -1.25f}, {17, -4.75f}, {32, -6}, {63, -5.5f}, {64, -7}, {79, 4.25f}, {127, -5}, {133, -28.75f},
            {191, 39.75f}, {202, 110.5f}, {224, -29.5f}, {255, -27.75f}}},
    /* q5_K: d, dmin, scales and low nibbles as q4_K (qs at 48..175 = 0..127); qh (16..47) all
     * 0x55 (bits 0,2,4,6: the t = 0 sub-blocks get +16) except qh[31] = 0xFF. Element
     * e = 64g + 32t + l: q = nibble + 16 * (qh[l] bit 2g + t), y = 0.25 sc q - mn:
     *   e 0: q 16: 4 - 5 = -1;  e 15: q 31: 7.75 - 5 = 2.75;  e 32: bit 1 clear, q 0: -6;
     *   e 62: q 1: -5.5;  e 63: qh[31] bit 1 set, q 17: 8.5 - 6 = 2.5;  e 64: q 16: 12 - 7 =
     *   5;  e 127: qh[31] bit 3, q 19: 19 - 8 = 11;  e 133: q 21: 89.25 - 50 = 39.25;
     *   e 191: qh[31] bit 5, q 21: 183.75 - 4 = 179.75;  e 202: q 26: 344.5 - 22 = 322.5;
     *   e 224: bit 7 clear, q 6: 10.5 - 40 = -29.5;  e 255: qh[31] bit 7, q 23: 40.25 - 40 =
     *   0.25. */
    {"q5_K layout", DRIFT_GGML_Q5_K,
        {F1(1, 0x34), F1(3, 0x3C), {4, 4, 0x41, 0x41}, {8, 4, 0xC5, 0x41}, {12, 4, 0x21, 0x22}, {16, 32, 0x55, 0},
            F1(47, 0xFF), {48, 128, 0, 1}},
        12,
        {{0, -1}, {15, 2.75f}, {32, -6}, {62, -5.5f}, {63, 2.5f}, {64, 5}, {127, 11}, {133, 39.25f}, {191, 179.75f},
            {202, 322.5f}, {224, -29.5f}, {255, 0.25f}}},
    /* q6_K: ql (0..127) = 0, 1, ..., 127; qh (128..191) all 0xE4 (2-bit fields 0,1,2,3, so the
     * high bits are g at shift 2g) except qh[33] = 0; scales (192..207, int8) = -8 + k
     * except scales[15] = 0x80 = -128; d = 0.5 (0x3800 at 208). Element e = 128h + 32g + l:
     * low = nibble (g >= 2) of ql[64h + 32(g&1) + l], high = (qh[32h + l] >> 2g) & 3,
     * q = low | high << 4 - 32, scale k = 8h + 2g + l/16, y = (0.5 scale) q:
     *   e 0: q 0 - 32, k 0 (-8): -4 * -32 = 128;  e 1: q -31: 124;  e 16: ql 16 low 0, k 1
     *   (-7): -3.5 * -32 = 112;  e 32: ql 32 low 0, high 1: q -16, k 2 (-6): 48;  e 64: ql 0
     *   high nibble 0, high 2: q 0, k 4 (-4): -2 * 0 = -0;  e 96: ql 32 high nibble 2, high 3:
     *   q 50 - 32 = 18, k 6 (-2): -18;  e 127: ql 63 -> 3, high 3: q 19, k 7 (-1): -9.5;
     *   e 128: ql 64 low 0, q -32, k 8 (0): (0.5 * 0) * -32 = -0;  e 160: ql 96 low 0, high 1:
     *   q -16, k 10 (2): -16;  e 200: ql 72 high nibble 4, high 2: q 4, k 12 (4): 8;
     *   e 225: ql 97 high nibble 6, qh[33] = 0: q -26, k 14 (6): -78;  e 226: ql 98 -> 6,
     *   high 3: q 22: 66;  e 255: ql 127 -> 7, high 3: q 23, k 15 (-128): -64 * 23 = -1472. */
    {"q6_K layout", DRIFT_GGML_Q6_K,
        {{0, 128, 0, 1}, {128, 64, 0xE4, 0}, F1(161, 0x00), {192, 16, 0xF8, 1}, F1(207, 0x80), F1(209, 0x38)}, 13,
        {{0, 128}, {1, 124}, {16, 112}, {32, 48}, {64, -0.0f}, {96, -18}, {127, -9.5f}, {128, -0.0f}, {160, -16},
            {200, 8}, {225, -78}, {226, 66}, {255, -1472}}},
    /* q8_K: d = -0.375 (fp32 0xBEC00000, bytes 00 00 C0 BE), qs[j] = 0x80 + j = int8 j - 128:
     * y = -0.375 (j - 128): e 0: 48, e 1: 47.625, e 128: -0 (-0.375 * 0), e 200: -27,
     * e 255: -47.625. */
    {"q8_K ramp", DRIFT_GGML_Q8_K, {F1(2, 0xC0), F1(3, 0xBE), {4, 256, 0x80, 1}}, 5,
        {{0, 48}, {1, 47.625f}, {128, -0.0f}, {200, -27}, {255, -47.625f}}},
    /* q8_K's multiply rounds: d = 1 + 2^-23 (0x3F800001). q = 127 (qs[0]): 127 + 127 * 2^-23,
     * the spacing in [64, 128) is 2^-17 and 127 * 2^-23 = 1.98 of it: 127 + 2^-16 =
     * 0x1.fc0004p+6. q = 3 (qs[1]): 3 + 1.5 spacings of 2^-22: a tie between 3 + 2^-22 (odd)
     * and 3 + 2^-21 (even): 0x1.800004p+1. q = -128 (qs[2]): -128 - 2^-16 exactly. */
    {"q8_K rounds", DRIFT_GGML_Q8_K, {F1(0, 0x01), F1(2, 0x80), F1(3, 0x3F), F1(4, 0x7F), F1(5, 0x03), F1(6, 0x80)}, 3,
        {{0, 0x1.fc0004p+6f}, {1, 0x1.800004p+1f}, {2, -0x1.000002p+7f}}},
    /* q8_K overflow: d = FLT_MAX (0x7F7FFFFF); q = 2 -> inf, q = -1 -> -FLT_MAX, q = 0 -> 0. */
    {"q8_K overflow", DRIFT_GGML_Q8_K, {F1(0, 0xFF), F1(1, 0xFF), F1(2, 0x7F), F1(3, 0x7F), F1(4, 2), F1(5, 0xFF)}, 3,
        {{0, INFINITY}, {1, -0x1.fffffep+127f}, {2, 0}}},
};

ParameterizedTestParameters(dequant, hand) { return cr_make_param_array(hand_t, HAND, sizeof HAND / sizeof HAND[0]); }

ParameterizedTest(hand_t *c, dequant, hand)
{
    size_t be = drift_ggml_block_elems(c->t), bb = drift_ggml_block_bytes(c->t);
    /* f16/bf16/f32 cases are a run of elements, a block type is one block */
    size_t n = be == 1 ? (size_t)c->nwant : be, nbytes = be == 1 ? n * bb : bb;
    uint8_t blk[292] = {0};
    for (int k = 0; k < 16 && c->fill[k].len; k++)
        for (int i = 0; i < c->fill[k].len; i++)
            blk[c->fill[k].off + i] = (uint8_t)((c->fill[k].start + i * c->fill[k].step) & 0xff);
    cr_assert_leq(nbytes, sizeof blk);
    float y[256];
    cr_assert_eq(drift_ggml_dequantize(y, blk, c->t, n), 0, "%s", c->name);
    for (int k = 0; k < c->nwant; k++) {
        const want_t *w = &c->want[k];
        cr_assert(same_f(y[w->i], w->v), "%s: element %d = %a (0x%08x), want %a (0x%08x)", c->name, w->i,
            (double)y[w->i], fbits(y[w->i]), (double)w->v, fbits(w->v));
    }
}

/* ---- MPFR: random blocks, every element exactly, rounded once -------------------------- */

/* The fp16 scale fields of each block type (offsets), made finite in the random blocks:
 * the formulas are about numbers (the non-finite scales are hand cases above). */
typedef struct {
    uint32_t t;
    int nfp16, fp16_off[2];
    int nblocks;
} rand_case_t;

static const rand_case_t RAND[] = {
    {DRIFT_GGML_Q4_0, 1, {0}, 4000},
    {DRIFT_GGML_Q4_1, 2, {0, 2}, 4000},
    {DRIFT_GGML_Q5_0, 1, {0}, 4000},
    {DRIFT_GGML_Q5_1, 2, {0, 2}, 4000},
    {DRIFT_GGML_Q8_0, 1, {0}, 4000},
    {DRIFT_GGML_Q8_1, 2, {0, 2}, 4000},
    {DRIFT_GGML_Q2_K, 2, {80, 82}, 500},
    {DRIFT_GGML_Q3_K, 1, {108}, 500},
    {DRIFT_GGML_Q4_K, 2, {0, 2}, 500},
    {DRIFT_GGML_Q5_K, 2, {0, 2}, 500},
    {DRIFT_GGML_Q6_K, 1, {208}, 500},
    {DRIFT_GGML_Q8_K, 0, {0}, 500},
};

static void mp_fp16(mpfr_t r, const uint8_t *p) { mpfr_set_d(r, ref_fp16(rd16(p)), MPFR_RNDN); /* exact: 11 bits */ }

/* r = a * b + c exactly (the working precision holds every intermediate: see below). */
static void mp_madd(mpfr_t r, mpfr_srcptr a, long b, mpfr_srcptr c)
{
    mpfr_mul_si(r, a, b, MPFR_RNDN);
    if (c) mpfr_add(r, r, c, MPFR_RNDN);
}

/* The four nibble/bit fields of the 32-element types, element e. */
static int nib32(const uint8_t *qs, int e) { return e < 16 ? qs[e] & 15 : qs[e - 16] >> 4; }

/* q4_K/q5_K sub-block j's 6-bit scale and min, from the 12 bytes as ggml-common.h's
 * comment draws them (scale j < 4: low 6 bits of byte j, min: of byte j + 4; j >= 4: low
 * nibble (scale) / high nibble (min) of byte j + 4, top two bits of byte j - 4 (scale) /
 * byte j (min)). */
static void k4_fields(int *sc, int *mn, const uint8_t *s, int j)
{
    *sc = j < 4 ? s[j] & 63 : (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
    *mn = j < 4 ? s[j + 4] & 63 : (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
}

/* r = element e of block b of type t, exactly: the type's formula on its fields (the
 * formulas of ggml-quants.c, written per element). Precision 128 is exact for all: the
 * products have at most 24 + 8 + 6 bits and the sums span at most 2^28 down to 2^-24 (fp16
 * scales: 52 bits) or are the products of one fp32 (q8_K). */
static void mp_elem(mpfr_t r, uint32_t t, const uint8_t *b, int e)
{
    mpfr_t d, m, p;
    mpfr_inits2(128, d, m, p, (mpfr_ptr)0);
    switch (t) {
    case DRIFT_GGML_Q4_0:
        mp_fp16(d, b);
        mp_madd(r, d, nib32(b + 2, e) - 8, NULL);
        break;
    case DRIFT_GGML_Q4_1:
        mp_fp16(d, b);
        mp_fp16(m, b + 2);
        mp_madd(r, d, nib32(b + 4, e), m);
        break;
    case DRIFT_GGML_Q5_0:
        mp_fp16(d, b);
        mp_madd(r, d, (nib32(b + 6, e) | (int)((rd32(b + 2) >> e) & 1) << 4) - 16, NULL);
        break;
    case DRIFT_GGML_Q5_1:
        mp_fp16(d, b);
        mp_fp16(m, b + 2);
        mp_madd(r, d, nib32(b + 8, e) | (int)((rd32(b + 4) >> e) & 1) << 4, m);
        break;
    case DRIFT_GGML_Q8_0:
        mp_fp16(d, b);
        mp_madd(r, d, (int8_t)b[2 + e], NULL);
        break;
    case DRIFT_GGML_Q8_1:
        mp_fp16(d, b);
        mp_madd(r, d, (int8_t)b[4 + e], NULL);
        break;
    case DRIFT_GGML_Q2_K: {
        int h = e / 128, j = e % 128 / 32, l = e % 32, s = 8 * h + 2 * j + l / 16;
        int q = (b[16 + 32 * h + l] >> (2 * j)) & 3;
        mp_fp16(d, b + 80);
        mp_fp16(m, b + 82);
        mpfr_mul_si(p, d, (b[s] & 15) * q, MPFR_RNDN);
        mpfr_mul_si(m, m, b[s] >> 4, MPFR_RNDN);
        mpfr_sub(r, p, m, MPFR_RNDN);
        break;
    }
    case DRIFT_GGML_Q3_K: {
        int h = e / 128, j = e % 128 / 32, l = e % 32, k = 8 * h + 2 * j + l / 16;
        const uint8_t *sb = b + 96;
        int lo = k < 8 ? sb[k] & 15 : sb[k - 8] >> 4, hi = (sb[8 + k % 4] >> (2 * (k / 4))) & 3;
        int q = ((b[32 + 32 * h + l] >> (2 * j)) & 3) - (((b[l] >> (4 * h + j)) & 1) ? 0 : 4);
        mp_fp16(d, b + 108);
        mpfr_mul_si(p, d, (lo | hi << 4) - 32, MPFR_RNDN); /* (d * scale) * q: signed zeros */
        mpfr_mul_si(r, p, q, MPFR_RNDN);                   /* as ggml's two products */
        break;
    }
    case DRIFT_GGML_Q4_K:
    case DRIFT_GGML_Q5_K: {
        int g = e / 64, tt = e % 64 / 32, l = e % 32, sc, mn;
        const uint8_t *qs = b + (t == DRIFT_GGML_Q4_K ? 16 : 48);
        int q = (qs[32 * g + l] >> (4 * tt)) & 15;
        if (t == DRIFT_GGML_Q5_K) q |= ((b[16 + l] >> (2 * g + tt)) & 1) << 4;
        k4_fields(&sc, &mn, b + 4, 2 * g + tt);
        mp_fp16(d, b);
        mp_fp16(m, b + 2);
        mpfr_mul_si(p, d, sc, MPFR_RNDN);
        mpfr_mul_si(p, p, q, MPFR_RNDN);
        mpfr_mul_si(m, m, mn, MPFR_RNDN);
        mpfr_sub(r, p, m, MPFR_RNDN);
        break;
    }
    case DRIFT_GGML_Q6_K: {
        int h = e / 128, g = e % 128 / 32, l = e % 32;
        int lo = (b[64 * h + 32 * (g & 1) + l] >> (4 * (g / 2))) & 15;
        int hi = (b[128 + 32 * h + l] >> (2 * g)) & 3;
        mp_fp16(d, b + 208);
        mpfr_mul_si(p, d, (int8_t)b[192 + 8 * h + 2 * g + l / 16], MPFR_RNDN);
        mpfr_mul_si(r, p, (lo | hi << 4) - 32, MPFR_RNDN);
        break;
    }
    case DRIFT_GGML_Q8_K:
        mpfr_set_flt(d, bitsf(rd32(b)), MPFR_RNDN);
        mp_madd(r, d, (int8_t)b[4 + e], NULL);
        break;
    default: cr_assert_fail("no formula for type %u", t);
    }
    mpfr_clears(d, m, p, (mpfr_ptr)0);
}

ParameterizedTestParameters(dequant, mpfr_random)
{
    return cr_make_param_array(rand_case_t, RAND, sizeof RAND / sizeof RAND[0]);
}

/* Random bytes everywhere, fp16 scales with any finite pattern (an exponent field of 31 is
 * cleared: those become subnormals), q8_K's fp32 d any finite pattern: scales from 2^-24 to
 * 65504 (2^-149 to FLT_MAX), so the adds of the min types round often and q8_K's products
 * reach subnormals and overflow. */
ParameterizedTest(rand_case_t *c, dequant, mpfr_random)
{
    size_t be = drift_ggml_block_elems(c->t), bb = drift_ggml_block_bytes(c->t);
    size_t n = be * (size_t)c->nblocks;
    uint8_t *x = malloc(bb * (size_t)c->nblocks);
    float *y = malloc(n * sizeof *y);
    cr_assert(x && y);
    drift_stream_t s;
    stream(&s, c->t, 0);
    for (size_t i = 0; i < bb * (size_t)c->nblocks; i++) x[i] = (uint8_t)drift_stream_u32(&s);
    for (int k = 0; k < c->nblocks; k++) {
        uint8_t *b = x + bb * (size_t)k;
        for (int f = 0; f < c->nfp16; f++)
            if ((b[c->fp16_off[f] + 1] & 0x7C) == 0x7C) b[c->fp16_off[f] + 1] &= 0x83;
        if (c->t == DRIFT_GGML_Q8_K && ((rd32(b) >> 23) & 0xFF) == 0xFF) b[3] &= 0x80; /* exponent 0 */
    }
    cr_assert_eq(drift_ggml_dequantize(y, x, c->t, n), 0);
    mpfr_t r;
    mpfr_init2(r, 128);
    long bad = 0, first = -1, rounded = 0;
    for (size_t i = 0; i < n; i++) {
        mp_elem(r, c->t, x + bb * (i / be), (int)(i % be));
        float want = (float)oracle_round_fmt(r, DRIFT_FP32, MPFR_RNDN);
        if (mpfr_cmp_d(r, (double)want) != 0) rounded++;
        if (!same_f(y[i], want)) {
            if (first < 0) first = (long)i;
            bad++;
        }
    }
    mpfr_clear(r);
    cr_assert_eq(bad, 0, "%s: %ld of %zu elements differ from MPFR, first %ld: %a", drift_ggml_type_name(c->t), bad, n,
        first, first < 0 ? 0.0 : (double)y[first]);
    /* the oracle is not trivial where it should not be: the min types and q8_K do round */
    int rounds = c->t == DRIFT_GGML_Q4_1 || c->t == DRIFT_GGML_Q5_1 || c->t == DRIFT_GGML_Q2_K ||
                 c->t == DRIFT_GGML_Q4_K || c->t == DRIFT_GGML_Q5_K || c->t == DRIFT_GGML_Q8_K;
    if (rounds)
        cr_assert_gt(rounded, 0, "%s: no element rounded", drift_ggml_type_name(c->t));
    else
        cr_assert_eq(rounded, 0, "%s: %ld elements not exact in fp32", drift_ggml_type_name(c->t), rounded);
    free(x);
    free(y);
}

/* f32 is a copy, bit for bit: random patterns, NaN payloads included. */
Test(dequant, f32_bits)
{
    uint32_t in[4096], out[4096];
    drift_stream_t s;
    stream(&s, 0, 1);
    for (int i = 0; i < 4096; i++) in[i] = drift_stream_u32(&s);
    cr_assert_eq(drift_ggml_dequantize((float *)out, in, DRIFT_GGML_F32, 4096), 0);
    cr_assert_eq(memcmp(in, out, sizeof in), 0);
}

/* ---- tests/data/ggml_dequant_cases.tsv: gguf-py and ggml's own C --------------------- */

static int hexval(int c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; }

/* The bytes of a hex string into a malloc'd buffer (length in *len). */
static uint8_t *unhex(const char *h, size_t *len)
{
    size_t n = strlen(h);
    cr_assert_eq(n % 2, 0, "odd hex length");
    uint8_t *b = malloc(n / 2 + 1);
    cr_assert(b);
    for (size_t i = 0; i < n / 2; i++) {
        int a = hexval(h[2 * i]), c = hexval(h[2 * i + 1]);
        cr_assert(a >= 0 && c >= 0, "bad hex");
        b[i] = (uint8_t)(a << 4 | c);
    }
    *len = n / 2;
    return b;
}

/* 8 hex digits per float, most significant first. */
static float *unhex_f32(const char *h, size_t n)
{
    cr_assert_eq(strlen(h), 8 * n, "want %zu floats", n);
    float *f = malloc(n * sizeof *f + 1);
    cr_assert(f);
    for (size_t i = 0; i < n; i++) {
        uint32_t u = 0;
        for (int k = 0; k < 8; k++) u = u << 4 | (uint32_t)hexval(h[8 * i + k]);
        f[i] = bitsf(u);
    }
    return f;
}

Test(data, ggml_dequant_cases)
{
    const char *path = DRIFT_SOURCE_DIR "/tests/data/ggml_dequant_cases.tsv";
    FILE *fp = fopen(path, "r");
    cr_assert(fp, "cannot open %s", path);
    char *line = NULL;
    size_t cap = 0;
    int rows = 0, deq = 0, quant = 0, smol = 0;
    while (getline(&line, &cap, fp) > 0) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = 0;
        char *f[7], *save = NULL;
        int k = 0;
        for (char *tok = strtok_r(line, "\t", &save); tok && k < 7; tok = strtok_r(NULL, "\t", &save)) f[k++] = tok;
        cr_assert_eq(k, 7, "row %d: %d fields", rows + 1, k);
        uint32_t t = (uint32_t)strtoul(f[1], NULL, 10);
        size_t n = strtoul(f[3], NULL, 10);
        cr_assert_str_eq(drift_ggml_type_name(t), f[2], "row %d: type id %u", rows + 1, t);
        size_t nbytes = 0;
        cr_assert_eq(drift_ggml_row_bytes(&nbytes, t, n), 0);
        if (!strcmp(f[0], "deq")) {
            size_t len;
            uint8_t *blk = unhex(f[5], &len);
            cr_assert_eq(len, nbytes, "row %d (%s): %zu bytes", rows + 1, f[4], len);
            float *want = unhex_f32(f[6], n), *y = malloc(n * sizeof *y + 1);
            cr_assert(y);
            cr_assert_eq(drift_ggml_dequantize(y, blk, t, n), 0);
            for (size_t i = 0; i < n; i++)
                cr_assert(same_f(y[i], want[i]), "row %d (%s %s) element %zu: %a, want %a", rows + 1, f[2], f[4], i,
                    (double)y[i], (double)want[i]);
            free(blk);
            free(want);
            free(y);
            deq++;
            smol += strncmp(f[4], "smollm2", 7) == 0;
        } else {
            cr_assert_str_eq(f[0], "quant", "row %d", rows + 1);
            size_t len;
            float *x = unhex_f32(f[5], n);
            uint8_t *want = unhex(f[6], &len), *y = malloc(nbytes + 1);
            cr_assert(y);
            cr_assert_eq(len, nbytes);
            cr_assert_eq(drift_ggml_quantize(y, x, t, n), 0, "row %d (%s)", rows + 1, f[4]);
            for (size_t i = 0; i < nbytes; i++)
                cr_assert_eq(y[i], want[i], "row %d (%s %s) byte %zu (block %zu): 0x%02x, want 0x%02x", rows + 1, f[2],
                    f[4], i, i / drift_ggml_block_bytes(t), y[i], want[i]);
            free(x);
            free(want);
            free(y);
            quant++;
        }
        rows++;
    }
    free(line);
    fclose(fp);
    /* the file's rows (see its generator): 8 SmolLM2 rows, 8 gguf-py quantize+dequantize, 15
     * k-quant, 2 q8_K values and 4 quantizer records */
    cr_assert_eq(smol, 8);
    cr_assert_eq(deq, 33);
    cr_assert_eq(quant, 4);
}

/* ---- the reference quantizers: hand cases --------------------------------------------- */

/* q8_0: x[0] = 127, x[j] = j - 15.5 (j = 1..31). amax = 127, d = 127/127 = 1 (fp16 0x3C00),
 * id = 1, q = roundf(x): 127, then ties away from zero: j <= 15: j - 15.5 -> j - 16 (-14.5
 * -> -15, ..., -0.5 -> -1), j >= 16: 0.5 -> 1, ..., 15.5 -> 16, i.e. j - 15 (round to even
 * would give -14, ..., -0, 0, ..., 16: a different block). */
static void tie_block(float *x)
{
    x[0] = 127;
    for (int j = 1; j < 32; j++) x[j] = (float)j - 15.5f;
}

static int tie_q(int j) { return j == 0 ? 127 : j <= 15 ? j - 16 : j - 15; }

Test(quantize, q8_0_ties_away)
{
    float x[32];
    uint8_t y[34];
    tie_block(x);
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_0, 32), 0);
    cr_assert_eq(rd16(y), 0x3C00);
    for (int j = 0; j < 32; j++) cr_assert_eq((int8_t)y[2 + j], tie_q(j), "q[%d]", j);
}

/* q8_1 of the same block: d and q as q8_0; sum q = 127 + (1 + ... + 15 - 15*16) + (16 + ... +
 * 31 - 16*15) = 127 - 120 + 136 = 143; s = fp16(143 * 1) = 143 = 1.0001111b * 2^7: exponent
 * field 22 (0x5800), fraction 15/128 * 1024 = 120 (0x78): 0x5878. */
Test(quantize, q8_1_sum)
{
    float x[32];
    uint8_t y[36];
    tie_block(x);
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_1, 32), 0);
    cr_assert_eq(rd16(y), 0x3C00);
    cr_assert_eq(rd16(y + 2), 0x5878);
    for (int j = 0; j < 32; j++) cr_assert_eq((int8_t)y[4 + j], tie_q(j), "q[%d]", j);
}

/* q8_1's s is rounded twice (fp32 product, then fp16), and that differs from rounding once:
 * x[0] = 2161/2048 = 1.05517578125 (an fp16 midpoint: between 0x3C38 = 1 + 56/1024 and
 * 0x3C39 = 1 + 57/1024), the rest 0. d = RN32(2161/2048/127) = 0x1.104082p-7 = 17842306 *
 * 2^-31; fp16(d) = 0x2041. id = RN32(1/d), x[0] * id = 126.99999... -> q = 127, sum = 127.
 * 127 d = 2265972862 * 2^-31 = 2161/2048 + 126 * 2^-31 = 2161/2048 + 63 * 2^-30, less than
 * half fp32's spacing 2^-23 at 1 (64 * 2^-30): RN32 gives the midpoint 2161/2048 exactly,
 * and fp16 ties to even: s = 0x3C38. Rounding 127 d once would give 0x3C39 (it lies above
 * the midpoint). */
Test(quantize, q8_1_sum_double_rounding)
{
    float x[32] = {0};
    uint8_t y[36];
    x[0] = 2161.0f / 2048.0f;
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_1, 32), 0);
    cr_assert_eq(rd16(y), 0x2041);
    cr_assert_eq((int8_t)y[4], 127);
    cr_assert_eq(rd16(y + 2), 0x3C38);
}

/* q8_K: x[0] = -127 (the max: the first of largest |x|; x[5] = 127 ties in |x| but comes
 * later), iscale = -127/-127 = 1, q = nearest_int(x) with ties to even: x[1] = 2.5 -> 2,
 * x[2] = -2.5 -> -2, x[3] = 3.5 -> 4, x[4] = 0.5 -> 0, x[5] = 127 -> 127, x[6] = -0.5 -> 0,
 * the rest 0; d = 1/1 = 1 (fp32 0x3F800000); bsums[0] = -127 + 2 - 2 + 4 + 0 + 127 + 0 = 4,
 * bsums[1..15] = 0. With the block negated the max is 127, iscale = -1, d = -1 and the
 * quants are the same (q = nearest(-x) of -x). */
Test(quantize, q8_K_ties_even_and_sign)
{
    for (int sign = 1; sign >= -1; sign -= 2) {
        float x[256] = {0};
        const float v[7] = {-127, 2.5f, -2.5f, 3.5f, 0.5f, 127, -0.5f};
        for (int j = 0; j < 7; j++) x[j] = (float)sign * v[j];
        uint8_t y[292];
        cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_K, 256), 0);
        cr_assert_eq(rd32(y), sign > 0 ? 0x3F800000u : 0xBF800000u, "sign %d", sign);
        const int q[7] = {-127, 2, -2, 4, 0, 127, 0};
        for (int j = 0; j < 256; j++) cr_assert_eq((int8_t)y[4 + j], j < 7 ? q[j] : 0, "sign %d q[%d]", sign, j);
        cr_assert_eq((int16_t)rd16(y + 260), 4);
        for (int k = 1; k < 16; k++) cr_assert_eq(rd16(y + 260 + 2 * k), 0);
    }
}

/* ---- the reference quantizers: MPFR emulation of ggml's operations ------------------- */

static float rn32(mpfr_srcptr v) { return (float)oracle_round_fmt(v, DRIFT_FP32, MPFR_RNDN); }

/* ggml's float ops one by one, each rounded to fp32 by MPFR (the quantizers round several
 * times: d = amax/127, id = 1/d, x*id, sum*d, then fp16, so one rounding of a formula is
 * not their definition). Each op is computed at 128 bits, then rounded to fp32 by
 * oracle_round_fmt: the products (24 + 24 bits) and sum*d are exact there, and a quotient
 * rounded first to 128 >= 2*24 + 2 bits, then to 24 (or fewer, subnormal), is the quotient
 * correctly rounded (no double rounding for + - * / at that width). q rounding: roundf =
 * mpfr_round (ties away), nearest_int = mpfr_rint RNDN (ties to even). fp16 encodings are
 * compared as values (ref_fp16). */
static void check_q8(uint32_t t, const float *x, const uint8_t *y)
{
    mpfr_t a, b;
    mpfr_inits2(128, a, b, (mpfr_ptr)0);
    if (t == DRIFT_GGML_Q8_K) {
        float max = 0, amax = 0;
        for (int j = 0; j < 256; j++)
            if (fabsf(x[j]) > amax) amax = fabsf(x[j]), max = x[j];
        if (amax == 0) {
            for (int j = 0; j < 292; j++) cr_assert_eq(y[j], 0);
        } else {
            mpfr_set_si(a, -127, MPFR_RNDN);
            mpfr_div_d(a, a, max, MPFR_RNDN);
            float iscale = rn32(a);
            int16_t bs[16] = {0};
            for (int j = 0; j < 256; j++) {
                mpfr_set_flt(a, iscale, MPFR_RNDN);
                mpfr_mul_d(a, a, x[j], MPFR_RNDN);
                mpfr_set_flt(b, rn32(a), MPFR_RNDN);
                mpfr_rint(b, b, MPFR_RNDN);
                long q = mpfr_get_si(b, MPFR_RNDN);
                if (q > 127) q = 127;
                cr_assert_eq((int8_t)y[4 + j], q, "q8_K q[%d]", j);
                bs[j / 16] = (int16_t)(bs[j / 16] + q);
            }
            mpfr_set_si(a, 1, MPFR_RNDN);
            mpfr_div_d(a, a, iscale, MPFR_RNDN);
            cr_assert(same_f(bitsf(rd32(y)), rn32(a)), "q8_K d");
            for (int k = 0; k < 16; k++) cr_assert_eq((int16_t)rd16(y + 260 + 2 * k), bs[k]);
        }
    } else {
        float amax = 0;
        for (int j = 0; j < 32; j++) amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
        mpfr_set_flt(a, amax, MPFR_RNDN);
        mpfr_div_si(a, a, 127, MPFR_RNDN);
        float d = rn32(a), id = 0;
        if (d != 0) {
            mpfr_set_si(a, 1, MPFR_RNDN);
            mpfr_div_d(a, a, d, MPFR_RNDN);
            id = rn32(a);
        }
        mpfr_set_flt(a, d, MPFR_RNDN);
        cr_assert_eq(ref_fp16(rd16(y)), oracle_round_fmt(a, DRIFT_FP16, MPFR_RNDN), "d of %a", (double)d);
        int off = t == DRIFT_GGML_Q8_1 ? 4 : 2;
        long sum = 0;
        for (int j = 0; j < 32; j++) {
            mpfr_set_flt(a, id, MPFR_RNDN);
            mpfr_mul_d(a, a, x[j], MPFR_RNDN);
            mpfr_set_flt(b, rn32(a), MPFR_RNDN);
            mpfr_round(b, b);
            long q = mpfr_get_si(b, MPFR_RNDN);
            cr_assert_eq((int8_t)y[off + j], q, "q[%d] of %a", j, (double)x[j]);
            sum += q;
        }
        if (t == DRIFT_GGML_Q8_1) {
            mpfr_set_flt(a, d, MPFR_RNDN);
            mpfr_mul_si(a, a, sum, MPFR_RNDN);
            mpfr_set_flt(b, rn32(a), MPFR_RNDN);
            double s = oracle_round_fmt(b, DRIFT_FP16, MPFR_RNDN);
            cr_assert(same(ref_fp16(rd16(y + 2)), s), "s = %a, want %a", ref_fp16(rd16(y + 2)), s);
        }
    }
    mpfr_clears(a, b, (mpfr_ptr)0);
}

/* Random blocks: normals times 2^[-40, 40) per block (fp16's d overflows for amax above
 * 65520 * 127 and is subnormal below 2^-14 * 127: both happen), and per element another
 * 2^[-4, 4) so that amax is not always the same element's scale. */
Test(quantize, mpfr_random)
{
    const uint32_t types[3] = {DRIFT_GGML_Q8_0, DRIFT_GGML_Q8_1, DRIFT_GGML_Q8_K};
    for (int ti = 0; ti < 3; ti++) {
        size_t be = drift_ggml_block_elems(types[ti]), bb = drift_ggml_block_bytes(types[ti]);
        int nblocks = be == 32 ? 2000 : 250;
        float *x = malloc(be * (size_t)nblocks * sizeof *x);
        uint8_t *y = malloc(bb * (size_t)nblocks);
        cr_assert(x && y);
        drift_stream_t s;
        stream(&s, 100 + types[ti], 0);
        for (int k = 0; k < nblocks; k++) {
            int scale = (int)drift_stream_below(&s, 80) - 40;
            for (size_t j = 0; j < be; j++)
                x[be * (size_t)k + j] =
                    (float)ldexp(drift_stream_normal(&s), scale + (int)drift_stream_below(&s, 8) - 4);
        }
        for (size_t j = 0; j < be; j++) x[j] = 0; /* one zero block */
        cr_assert_eq(drift_ggml_quantize(y, x, types[ti], be * (size_t)nblocks), 0);
        for (int k = 0; k < nblocks; k++) check_q8(types[ti], x + be * (size_t)k, y + bb * (size_t)k);
        free(x);
        free(y);
    }
}

/* ---- bad input ----------------------------------------------------------------------------- */

Test(bad_input, dequantize)
{
    uint8_t blk[36] = {0};
    float y[33];
    cr_assert_eq(drift_ggml_dequantize(y, blk, 16, 256), DRIFT_EINVAL);             /* iq2_xxs: not here */
    cr_assert_eq(drift_ggml_dequantize(y, blk, DRIFT_GGML_Q4_0, 33), DRIFT_EINVAL); /* not a whole block */
    cr_assert_eq(drift_ggml_dequantize(NULL, blk, DRIFT_GGML_Q4_0, 32), DRIFT_EINVAL);
    cr_assert_eq(drift_ggml_dequantize(y, NULL, DRIFT_GGML_Q4_0, 32), DRIFT_EINVAL);
    cr_assert_eq(drift_ggml_dequantize(y, blk, DRIFT_GGML_Q4_0, 0), 0);
}

Test(bad_input, quantize)
{
    float x[256] = {0};
    uint8_t y[292];
    memset(y, 0xAB, sizeof y);
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q4_0, 32), DRIFT_EINVAL); /* not an activation type */
    cr_assert_eq(drift_ggml_quantize(y, x, 16, 256), DRIFT_EINVAL);
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_0, 31), DRIFT_EINVAL);
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_K, 32), DRIFT_EINVAL);
    cr_assert_eq(drift_ggml_quantize(NULL, x, DRIFT_GGML_Q8_0, 32), DRIFT_EINVAL);
    x[40] = NAN; /* in the second q8_0 block: the first is not written either */
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_0, 64), DRIFT_EINVAL);
    x[40] = INFINITY;
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_1, 64), DRIFT_EINVAL);
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_K, 256), DRIFT_EINVAL);
    /* max |x| = 2^-128: d = 2^-128 / 127 (about 2^-135, a subnormal) and 1/d (about 2^135)
     * overflows (q8_0, q8_1); -127 / 2^-128 = -127 * 2^128 overflows (q8_K) */
    x[40] = 0x1p-128f;
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_0, 64), DRIFT_ERANGE);
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_1, 64), DRIFT_ERANGE);
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_K, 256), DRIFT_ERANGE);
    for (size_t i = 0; i < sizeof y; i++) cr_assert_eq(y[i], 0xAB, "byte %zu written", i);
    /* just above: 2^-121 / 127 is about 2^-128.0 (a subnormal d), whose 1/d is still finite */
    x[40] = 0x1p-121f;
    cr_assert_eq(drift_ggml_quantize(y, x, DRIFT_GGML_Q8_0, 64), 0);
    cr_assert_eq((int8_t)y[34 + 2 + 8], 127);
}
