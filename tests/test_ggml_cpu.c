/* test_ggml_cpu.c — the twins of ggml-cpu's AVX2 kernels (lib/ops/ggml_cpu.h).
 *
 * Two kinds of witness: cases derived by hand (each derivation next to its case), and a record
 * of ggml's own outputs (tests/data/ggml_cpu_avx2_record.txt and ggml_cpu_avx512_record.txt,
 * written by tools/peers/ggml_twin_check.c --write from the static libraries of llama.cpp's
 * AVX2 and AVX-512 builds) on inputs rebuilt here from the same integer formulas. Every tolerance is 0: the claim is
 * bit-identity. The rope cases take cosf/sinf/powf from libm, as ggml does; they hold where
 * libm is glibc's (the record's machine). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml_cpu.h"

#define RECORD DRIFT_SOURCE_DIR "/tests/data/ggml_cpu_avx2_record.txt"
#define RECORD512 DRIFT_SOURCE_DIR "/tests/data/ggml_cpu_avx512_record.txt"

static uint32_t fbits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

/* ---- fp16 conversion: nearest even, by hand from the binary16 layout ---- */
typedef struct {
    float x;
    uint16_t h;
    const char *why;
} f16case;

static const f16case f16cases[] = {
    {1.0f, 0x3c00, "exponent 15, no fraction"},
    {-2.0f, 0xc000, "sign, exponent 16"},
    {65504.0f, 0x7bff, "largest finite"},
    {65519.0f, 0x7bff, "below the midpoint 65520 of 65504 and 65536"},
    {65520.0f, 0x7c00, "the midpoint: ties to even = 2^16 = overflow to inf"},
    {1.0f + 0x1p-11f, 0x3c00, "half an ulp above 1: tie, 0x3c00 is even"},
    {1.0f + 3 * 0x1p-11f, 0x3c02, "tie between 0x3c01 and 0x3c02: even"},
    {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01, "just above the tie: up"},
    {0x1p-24f, 0x0001, "smallest subnormal"},
    {0x1p-25f, 0x0000, "half the smallest subnormal: tie to even 0"},
    {0x1.8p-25f, 0x0001, "0.75 of the smallest subnormal: up"},
    {0x1p-14f, 0x0400, "smallest normal"},
    {0x1.ff8p-15f, 0x03ff, "largest subnormal, 1023 * 2^-24"},
    {0x1.ffcp-15f, 0x0400, "largest subnormal + half a unit: tie, 1023 odd, up into the smallest normal"},
    {-0.0f, 0x8000, "negative zero"},
};

Test(ggml_cpu, fp16_round_to_nearest_even)
{
    for (size_t i = 0; i < sizeof f16cases / sizeof f16cases[0]; i++) {
        const f16case *c = &f16cases[i];
        cr_expect_eq(drift_ggml_fp32_to_fp16(c->x), c->h, "%a: %s: expected 0x%04x, got 0x%04x", (double)c->x, c->why,
            c->h, drift_ggml_fp32_to_fp16(c->x));
        if ((c->h & 0x7c00) != 0x7c00 && c->x == drift_ggml_fp16_to_fp32(c->h)) {
            cr_expect_eq(fbits(drift_ggml_fp16_to_fp32(c->h)), fbits(c->x)); /* exact values go back exactly */
        }
    }
    cr_expect(isnan(drift_ggml_fp16_to_fp32(drift_ggml_fp32_to_fp16(NAN))), "NaN stays NaN");
}

/* ---- q8_1 of a hand block ----
 * amax 127 so d = 127/127 = 1 (fp16 0x3c00) and id = 127/127 = 1: each quant is x rounded by
 * _mm256_round_ps(_MM_ROUND_NEAREST): half to EVEN (ggml's scalar reference, roundf, would
 * give 3, 4, -3, 1, -1, 2 for the halves below). s = fp16(1 * 133) = 133 = 2^7 * 1.0390625:
 * exponent field 22, fraction 40: 0x5828. */
Test(ggml_cpu, q8_1_hand_block_rounds_half_to_even)
{
    float x[32] = {127.0f, 2.5f, 3.5f, -2.5f, 0.5f, -0.5f, 1.5f};
    const int8_t q[7] = {127, 2, 4, -2, 0, 0, 2};
    drift_ggml_q8_1_t b;
    drift_ggml_quantize_row_q8_1(&b, x, 32);
    cr_expect_eq(b.d, 0x3c00);
    for (int i = 0; i < 7; i++) {
        cr_expect_eq(b.qs[i], q[i], "qs[%d]: expected %d, got %d", i, q[i], b.qs[i]);
    }
    for (int i = 7; i < 32; i++) {
        cr_expect_eq(b.qs[i], 0);
    }
    cr_expect_eq(b.s, 0x5828, "s: expected 0x5828 (133), got 0x%04x", b.s);
    /* amax 16: d = 16/127 = 0.1259842... = 2^-3 * 1.00787: fraction 0.00787*1024 = 8.06 -> 8:
     * 0x3008; id = 127/16 = 7.9375 exactly, so x = 1 gives 7.9375 -> 8, x = -16 gives -127. */
    float y[32] = {-16.0f, 1.0f};
    drift_ggml_quantize_row_q8_1(&b, y, 32);
    cr_expect_eq(b.d, 0x3008);
    cr_expect(b.qs[0] == -127 && b.qs[1] == 8 && b.qs[2] == 0);
    /* s = fp16(d * -119) with d the fp32 16/127 (not its fp16): -14.99212... -> fp16 step
     * 2^-7 in [8, 16): -14.9921875 = -(1919/128): 0xcb7f */
    cr_expect_eq(b.s, 0xcb7f, "s: got 0x%04x", b.s);
}

/* ---- the 8-lane tree of vec_dot_q4_1_q8_1 ----
 * Block 0: d_x = d_y = 2^12 (fp16 0x6c00), element 0 = 1 * 1: lane 0 holds 2^24.
 * Block 1: d = 1, elements a and b (lanes a/4, b/4) hold 1 each. The lanes are summed by
 * hsum_float_8 = ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)): with lanes 1 and 2, 2^24 + 1 rounds to
 * 2^24 (tie, even) and then + 1 again: 2^24; with lanes 1 and 3 the two ones meet first:
 * 2^24 + 2 (exact). m = 0 so the min term adds 0. */
static float lane_case(int ea, int eb)
{
    drift_ggml_q4_1_t x[2];
    drift_ggml_q8_1_t y[2];
    memset(x, 0, sizeof x);
    memset(y, 0, sizeof y);
    x[0].d = y[0].d = 0x6c00;
    x[0].qs[0] = 1;
    y[0].qs[0] = 1;
    x[1].d = y[1].d = 0x3c00;
    x[1].qs[ea] = 1; /* elements < 16: low nibbles */
    x[1].qs[eb] = 1;
    y[1].qs[ea] = 1;
    y[1].qs[eb] = 1;
    return drift_ggml_vec_dot_q4_1_q8_1(64, x, y);
}

Test(ggml_cpu, q4_1_dot_sums_lanes_in_the_hsum_tree)
{
    cr_expect_eq(lane_case(4, 8), 0x1p24f, "lanes 1, 2: got %a", (double)lane_case(4, 8));
    cr_expect_eq(lane_case(4, 12), 0x1p24f + 2.0f, "lanes 1, 3: got %a", (double)lane_case(4, 12));
    /* one block, all nibbles 1 (0x11), d = 1, m = 0.5: x = 1.5 each; y = 2 each, s = 64:
     * lanes 8 each, hsum 64, + m*s = 32: 96 = 32 * 1.5 * 2 */
    drift_ggml_q4_1_t x = {0x3c00, 0x3800, {0}};
    drift_ggml_q8_1_t y = {0x3c00, 0x5400, {0}};
    memset(x.qs, 0x11, sizeof x.qs);
    memset(y.qs, 2, sizeof y.qs);
    cr_expect_eq(drift_ggml_vec_dot_q4_1_q8_1(32, &x, &y), 96.0f);
}

/* v_expf(0): z = r, n = 0, b = 0, k = 1 (the exponent bits of z shifted out), j = 0: fma(0,1,1)
 * = 1 exactly; below -103.97 it flushes to 0; silu(0) = 0 / (1 + 1) = 0. */
Test(ggml_cpu, v_expf_hand_points)
{
    /* AVX-512: j = fma(c1, 0, 1) = 1 at b = 0, scalef(1, 0) = 1; |n| > 192 is 0 or inf */
    cr_expect_eq(drift_ggml_v_expf512(0.0f), 1.0f);
    cr_expect_eq(drift_ggml_v_expf512(-200.0f), 0.0f);
    cr_expect(isinf(drift_ggml_v_expf512(200.0f)));
    cr_expect_eq(drift_ggml_v_expf(0.0f), 1.0f);
    cr_expect_eq(drift_ggml_v_expf(-200.0f), 0.0f);
    cr_expect(isinf(drift_ggml_v_expf(200.0f)));
    cr_expect_eq(drift_ggml_v_expf(-INFINITY), 0.0f, "the masked-key case of the tiled softmax");
}

/* rms_norm: x = 2 everywhere, eps 0: mean 4, scale 1/sqrtf(4) = 0.5, y = (2 * 0.5) * w = w */
Test(ggml_cpu, rms_norm_hand)
{
    float x[64], w[64], y[64];
    for (int i = 0; i < 64; i++) {
        x[i] = 2.0f;
        w[i] = (float)i - 7.25f;
    }
    drift_ggml_rms_norm_mul(y, x, w, 64, 0.0f);
    for (int i = 0; i < 64; i++) {
        cr_expect_eq(fbits(y[i]), fbits(w[i]));
    }
}

/* ---- the record of ggml's outputs ---- */
static float rat(int a, int m, int den) { return (float)(a % m - m / 2) / (float)den; }

static const char *record_path = RECORD;

static int read_line(const char *tag, float *v, int n)
{
    FILE *f = fopen(record_path, "r");
    cr_assert(f, "cannot open %s", record_path);
    char line[8192];
    int got = -1;
    while (fgets(line, sizeof line, f)) {
        size_t tl = strlen(tag);
        if (strncmp(line, tag, tl) || line[tl] != ' ') {
            continue;
        }
        char *p = line + tl;
        for (got = 0; got < n; got++) {
            char *end;
            v[got] = strtof(p, &end);
            if (end == p) {
                break;
            }
            p = end;
        }
        break;
    }
    fclose(f);
    return got;
}

static void expect_same(const char *tag, const float *mine, const float *rec, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (fbits(mine[i]) != fbits(rec[i])) {
            if (bad++ < 3) {
                cr_log_error("%s[%d]: ggml %a, twin %a", tag, i, (double)rec[i], (double)mine[i]);
            }
        }
    }
    cr_expect_eq(bad, 0, "%s: %d of %d values differ from ggml's", tag, bad, n);
}

static void record_swiglu_rope_rms_norm(int avx512)
{
    record_path = avx512 ? RECORD512 : RECORD;
    float rec[64], mine[64], x[64], g[64], cache[64];
    cr_assert_eq(read_line("swiglu", rec, 24), 24);
    for (int i = 0; i < 24; i++) {
        x[i] = rat(37 * i + 5, 61, 4) * (i == 7 ? 16.0f : 1.0f);
        g[i] = rat(11 * i + 3, 17, 8);
    }
    (avx512 ? drift_ggml_swiglu512 : drift_ggml_swiglu)(mine, x, g, 24);
    expect_same("swiglu", mine, rec, 24);
    for (int i = 0; i < 64; i++) {
        x[i] = rat(13 * i + 1, 23, 4);
    }
    const int pos[2] = {7, 300};
    const char *tags[2] = {"rope7", "rope300"};
    for (int p = 0; p < 2; p++) {
        cr_assert_eq(read_line(tags[p], rec, 64), 64);
        drift_ggml_rope_cache(cache, pos[p], 64, 100000.0f);
        drift_ggml_rope_norm(mine, x, cache, 64);
        expect_same(tags[p], mine, rec, 64);
    }
    for (int i = 0; i < 64; i++) {
        x[i] = rat(29 * i + 3, 31, 2);
        g[i] = rat(7 * i + 2, 13, 4);
    }
    cr_assert_eq(read_line("rms_norm_mul", rec, 64), 64);
    drift_ggml_rms_norm_mul(mine, x, g, 64, 1e-5f);
    expect_same("rms_norm_mul", mine, rec, 64);
}

Test(ggml_cpu, record_swiglu_rope_rms_norm) { record_swiglu_rope_rms_norm(0); }
Test(ggml_cpu, record_avx512_swiglu_rope_rms_norm) { record_swiglu_rope_rms_norm(1); }

static void record_flash_attention(int avx512)
{
    record_path = avx512 ? RECORD512 : RECORD;
    static uint16_t k[256 * 64], v[256 * 64];
    for (int c = 0; c < 256; c++) {
        for (int d = 0; d < 64; d++) {
            k[64 * c + d] = drift_ggml_fp32_to_fp16(rat(3 * d + 17 * c, 23, 8));
            v[64 * c + d] = drift_ggml_fp32_to_fp16(rat(7 * d + 5 * c, 29, 16));
        }
    }
    const int T[2] = {5, 70}, p0[2] = {60, 3};
    int idx[256];
    for (int c = 0; c < 256; c++) {
        idx[c] = c;
    }
    for (int w = 0; w < 2; w++) {
        char tag[32];
        snprintf(tag, sizeof tag, "fattn_T%d_p%d", T[w], p0[w]);
        float rec[64], mine[64], q[64];
        cr_assert_eq(read_line(tag, rec, 64), 64);
        const int r = T[w] - 1, h = 2, nk = p0[w] + r + 1; /* the last query row of head 2 */
        for (int i = 0; i < 64; i++) {
            q[i] = rat(5 * i + 7 * r + 11 * h, 19, 4);
        }
        if (T[w] >= 64) {
            (avx512 ? drift_ggml_flash_attn_tiled_row512 : drift_ggml_flash_attn_tiled_row)(
                mine, q, k, v, 64, 64, (size_t)nk, 0.125f);
        } else {
            (avx512 ? drift_ggml_flash_attn_row512 : drift_ggml_flash_attn_row)(
                mine, q, k, v, 64, 64, idx, (size_t)nk, 0.125f);
        }
        expect_same(tag, mine, rec, 64);
    }
}

Test(ggml_cpu, record_flash_attention_one_chunk_and_tiled) { record_flash_attention(0); }
Test(ggml_cpu, record_avx512_flash_attention_one_chunk_and_tiled) { record_flash_attention(1); }

static void record_q8_1_and_q4_1_dot(const char *path)
{
    drift_ggml_q4_1_t wq[2];
    drift_ggml_q8_1_t aq[2];
    float xr[64];
    for (int b = 0; b < 2; b++) {
        wq[b].d = drift_ggml_fp32_to_fp16(0.0123f + 0.01f * (float)b);
        wq[b].m = drift_ggml_fp32_to_fp16(-0.0456f * (float)(b + 1));
        for (int j = 0; j < 16; j++) {
            wq[b].qs[j] = (uint8_t)(((5 * j + 3 * b) % 16) | (((7 * j + b) % 16) << 4));
        }
    }
    for (int i = 0; i < 64; i++) {
        xr[i] = rat(41 * i + 9, 53, 8);
    }
    drift_ggml_quantize_row_q8_1(aq, xr, 64);
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    char line[8192];
    unsigned d0 = 0, s0 = 0, d1 = 0, s1 = 0;
    int qs[64], nq = 0;
    float dot = NAN;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "q8_1_of_x ", 10)) {
            cr_assert_eq(sscanf(line, "q8_1_of_x d=%x s=%x d=%x s=%x", &d0, &s0, &d1, &s1), 4);
        } else if (!strncmp(line, "q8_1_qs ", 8)) {
            char *p = line + 8, *end;
            for (nq = 0; nq < 64; nq++, p = end) {
                qs[nq] = (int)strtol(p, &end, 10);
                if (end == p) {
                    break;
                }
            }
        } else if (!strncmp(line, "vec_dot_q4_1_q8_1 ", 18)) {
            dot = strtof(line + 18, NULL);
        }
    }
    fclose(f);
    cr_assert_eq(nq, 64);
    cr_expect(aq[0].d == d0 && aq[0].s == s0 && aq[1].d == d1 && aq[1].s == s1);
    for (int i = 0; i < 64; i++) {
        cr_expect_eq(aq[i / 32].qs[i % 32], qs[i], "qs[%d]", i);
    }
    const float mine = drift_ggml_vec_dot_q4_1_q8_1(64, wq, aq);
    cr_expect_eq(fbits(mine), fbits(dot), "ggml %a, twin %a", (double)dot, (double)mine);
}

/* the AVX-512 build's quantizer and VNNI dot give the AVX2 bits: the same twin holds both */
Test(ggml_cpu, record_q8_1_and_q4_1_dot) { record_q8_1_and_q4_1_dot(RECORD); }
Test(ggml_cpu, record_avx512_q8_1_and_q4_1_dot) { record_q8_1_and_q4_1_dot(RECORD512); }

/* The AVX2 paths of the two quantized dots against their portable definitions, on random
 * blocks (an xorshift stream; every value of a nibble, an int8 and a wide range of fp16
 * scales): the same bits (tolerance 0), or both are the portable code on a CPU without AVX2. */
Test(ggml_cpu, simd_dots_agree_with_portable_definitions)
{
    uint64_t s = 0x243f6a8885a308d3ull;
#define NEXT() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, (uint32_t)(s >> 11))
    static drift_ggml_q4_1_t x[48];
    static drift_ggml_q8_1_t y[48];
    static drift_ggml_q8_0_t a[48], b[48];
    int bad = 0;
    for (int t = 0; t < 2000; t++) {
        for (int i = 0; i < 48; i++) {
            x[i].d = (uint16_t)(0x1000 + NEXT() % 0x3800); /* positive normals 2^-11 .. 2^3 */
            x[i].m = (uint16_t)(0x9000 + NEXT() % 0x3000);
            y[i].d = (uint16_t)(0x1000 + NEXT() % 0x3800);
            y[i].s = (uint16_t)(NEXT() % 0x7800);
            a[i].d = (uint16_t)(NEXT() % 0x7800);
            b[i].d = (uint16_t)(0x1000 + NEXT() % 0x3800);
            for (int j = 0; j < 32; j++) {
                if (j < 16) {
                    x[i].qs[j] = (uint8_t)NEXT();
                }
                y[i].qs[j] = (int8_t)(NEXT() % 255 - 127);
                a[i].qs[j] = (int8_t)(NEXT() % 256 - 128);
                b[i].qs[j] = (int8_t)(NEXT() % 255 - 127);
            }
        }
        const size_t n = (t % 2) ? 1536 : 576;
        bad += fbits(drift_ggml_vec_dot_q4_1_q8_1(n, x, y)) != fbits(drift_ggml_vec_dot_q4_1_q8_1_ref(n, x, y));
        bad += fbits(drift_ggml_vec_dot_q8_0_q8_0(n, a, b)) != fbits(drift_ggml_vec_dot_q8_0_q8_0_ref(n, a, b));
    }
#undef NEXT
    cr_expect_eq(bad, 0, "%d of 4000 dots differ between the AVX2 and the portable code", bad);
}

/* The AVX2 one_chunk attention row against its portable definition: random fp16 K, V and fp32
 * Q over 1 .. 200 keys, the same bits (tolerance 0). */
Test(ggml_cpu, simd_attention_row_agrees_with_portable_definition)
{
    uint64_t s = 0x13198a2e03707344ull;
#define NEXT() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, (uint32_t)(s >> 11))
#define UNIT() ((float)(NEXT() % 2001) / 1000.0f - 1.0f)
    static uint16_t k[200 * 64], v[200 * 64];
    int idx[200];
    float q[64], a[64], b[64];
    int bad = 0;
    for (int t = 0; t < 200; t++) {
        const int n = 1 + (int)(NEXT() % 200);
        for (int i = 0; i < 200 * 64; i++) {
            k[i] = drift_ggml_fp32_to_fp16(3.0f * UNIT());
            v[i] = drift_ggml_fp32_to_fp16(UNIT());
        }
        for (int i = 0; i < 64; i++) {
            q[i] = 2.0f * UNIT();
        }
        for (int i = 0; i < n; i++) {
            idx[i] = i;
        }
        drift_ggml_flash_attn_row(a, q, k, v, 64, 64, idx, (size_t)n, 0.125f);
        drift_ggml_flash_attn_row_ref(b, q, k, v, 64, 64, idx, (size_t)n, 0.125f);
        for (int i = 0; i < 64; i++) {
            bad += fbits(a[i]) != fbits(b[i]);
        }
    }
#undef UNIT
#undef NEXT
    cr_expect_eq(bad, 0, "%d values differ between the AVX2 and the portable attention row", bad);
}
