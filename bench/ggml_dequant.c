/* bench/ggml_dequant.c — what does dequantizing ggml's tensor types cost on one core?
 *
 * 1. The SmolLM2-135M-Instruct Q4_1 mix (its GGUF holds 106168320 q4_1, 28311552 q8_0 and
 *    35136 f32 values): synthetic blocks of those types and counts (random quants, fp16
 *    scales of realistic size: the cost does not depend on the values), dequantized in
 *    chunks of 2^20 values into one reused buffer; the goal is under 1 s for the model.
 * 2. Every type alone: ns per value over 2^22 values.
 * Thread CPU time, min and median of ROUNDS rounds.
 *
 * Usage: bench_ggml_dequant [ROUNDS]   (default 5) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "ggml_quant.h"
#include "philox.h"
#include "cli.h"

#define CHUNK ((size_t)1 << 20)

/* Random blocks of type t for n values, every 16-bit field that is an fp16 scale of a block
 * type set to a normal value near 2^-8 (q8_K's fp32 d likewise). */
static uint8_t *make_blocks(uint32_t t, size_t n, size_t *bytes)
{
    if (drift_ggml_row_bytes(bytes, t, n) != 0) abort();
    uint8_t *b = malloc(*bytes);
    if (!b) abort();
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("bench_ggml_dequant"), t, 0);
    for (size_t i = 0; i < *bytes; i++) b[i] = (uint8_t)drift_stream_u32(&s);
    size_t bb = drift_ggml_block_bytes(t);
    static const struct {
        uint32_t t;
        int off[2], k;
    } F16[] = {{DRIFT_GGML_Q4_0, {0}, 1}, {DRIFT_GGML_Q4_1, {0, 2}, 2}, {DRIFT_GGML_Q5_0, {0}, 1},
        {DRIFT_GGML_Q5_1, {0, 2}, 2}, {DRIFT_GGML_Q8_0, {0}, 1}, {DRIFT_GGML_Q8_1, {0, 2}, 2},
        {DRIFT_GGML_Q2_K, {80, 82}, 2}, {DRIFT_GGML_Q3_K, {108}, 1}, {DRIFT_GGML_Q4_K, {0, 2}, 2},
        {DRIFT_GGML_Q5_K, {0, 2}, 2}, {DRIFT_GGML_Q6_K, {208}, 1}};
    for (size_t f = 0; f < sizeof F16 / sizeof F16[0]; f++)
        if (F16[f].t == t)
            for (size_t i = 0; i < *bytes; i += bb)
                for (int k = 0; k < F16[f].k; k++) b[i + F16[f].off[k] + 1] = 0x1C | (b[i + F16[f].off[k] + 1] & 0x83);
    if (t == DRIFT_GGML_Q8_K)
        for (size_t i = 0; i < *bytes; i += bb) b[i + 3] = 0x3B;
    return b;
}

/* Seconds of thread CPU to dequantize n values of t from b, CHUNK at a time into y. */
static double run(float *y, const uint8_t *b, uint32_t t, size_t n)
{
    size_t bb = drift_ggml_block_bytes(t), be = drift_ggml_block_elems(t);
    double t0 = bench_cpu_now();
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t m = n - i < CHUNK ? n - i : CHUNK;
        if (drift_ggml_dequantize(y, b + i / be * bb, t, m) != 0) abort();
    }
    return bench_cpu_now() - t0;
}

int main(int argc, char **argv)
{
    const char *pos[1];
    int np = bench_args(NULL, 0, pos, 1, argc, argv, "usage: bench_ggml_dequant [ROUNDS]   (1..1000, default 5)");
    int rounds = np ? (int)bench_long("ROUNDS", pos[0], 1, 1000) : 5;
    float *y = malloc(CHUNK * sizeof *y);
    if (!y) abort();
    double *ts = malloc((size_t)rounds * sizeof *ts);

    const struct {
        uint32_t t;
        size_t n;
    } MIX[] = {{DRIFT_GGML_Q4_1, 106168320}, {DRIFT_GGML_Q8_0, 28311552}, {DRIFT_GGML_F32, 35136}};
    uint8_t *mb[3];
    size_t total = 0, bytes;
    for (int k = 0; k < 3; k++) {
        mb[k] = make_blocks(MIX[k].t, MIX[k].n, &bytes);
        total += MIX[k].n;
    }
    for (int r = 0; r < rounds; r++) {
        ts[r] = 0;
        for (int k = 0; k < 3; k++) ts[r] += run(y, mb[k], MIX[k].t, MIX[k].n);
    }
    bench_stat_t st = bench_stat(ts, rounds);
    printf("SmolLM2-135M Q4_1 mix (%zu values): min %.3f s, median %.3f s (%.2f ns/value)\n", total, st.min, st.med,
        1e9 * st.min / (double)total);
    for (int k = 0; k < 3; k++) free(mb[k]);

    const uint32_t ALL[] = {DRIFT_GGML_F32, DRIFT_GGML_F16, DRIFT_GGML_BF16, DRIFT_GGML_Q4_0, DRIFT_GGML_Q4_1,
        DRIFT_GGML_Q5_0, DRIFT_GGML_Q5_1, DRIFT_GGML_Q8_0, DRIFT_GGML_Q8_1, DRIFT_GGML_Q2_K, DRIFT_GGML_Q3_K,
        DRIFT_GGML_Q4_K, DRIFT_GGML_Q5_K, DRIFT_GGML_Q6_K, DRIFT_GGML_Q8_K};
    const size_t n = (size_t)1 << 22;
    printf("%-6s %10s %10s\n", "type", "min ns/v", "med ns/v");
    for (size_t k = 0; k < sizeof ALL / sizeof ALL[0]; k++) {
        uint8_t *b = make_blocks(ALL[k], n, &bytes);
        for (int r = 0; r < rounds; r++) ts[r] = run(y, b, ALL[k], n);
        st = bench_stat(ts, rounds);
        printf(
            "%-6s %10.3f %10.3f\n", drift_ggml_type_name(ALL[k]), 1e9 * st.min / (double)n, 1e9 * st.med / (double)n);
        free(b);
    }
    free(ts);
    free(y);
    return 0;
}
