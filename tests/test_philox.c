/* test_philox.c — Philox4x32-10 and the lab's stream derivation.
 *
 * Known answers come from the Random123 distribution's kat_vectors file (D. E. Shaw
 * Research, Random123 1.14, examples/kat_vectors, the three "philox4x32 10" lines:
 * counter[4] key[2] -> output[4]); FNV-1a answers from the FNV reference test vectors
 * (draft-eastlake-fnv, "FNV-1a 32-bit" for "", "a" and "foobar").
 *
 * Statistical checks use Hoeffding's inequality on bounded (indicator or [0,1)) variables:
 * P(|mean - E| >= eps) <= 2 exp(-2 N eps^2). Each test states its N, the number of checks
 * K it makes, and eps = sqrt(ln(2 K / delta) / (2 N)) for a total false-failure probability
 * delta = 1e-10 (union bound), below the lab's 1e-9. The streams are fixed functions of
 * the seed, so the tests are deterministic; the probability is over the choice of seed. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "philox.h"

typedef struct {
    uint32_t ctr[4], key[2], out[4];
} kat_t;

static kat_t KATS[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, {0x00000000, 0x00000000},
        {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
        {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    /* the digits of pi, as Random123 uses them */
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
        {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

ParameterizedTestParameters(philox, known_answers)
{
    return cr_make_param_array(kat_t, KATS, sizeof KATS / sizeof KATS[0]);
}

ParameterizedTest(kat_t *k, philox, known_answers)
{
    uint32_t out[4];
    drift_philox4x32_10(out, k->ctr, k->key);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(out[i], k->out[i], "word %d: %08x, Random123 says %08x", i, out[i], k->out[i]);
}

typedef struct {
    char s[16];
    uint32_t h;
} fnv_t;

static fnv_t FNVS[] = {{"", 0x811c9dc5u}, {"a", 0xe40c292cu}, {"foobar", 0xbf9cf968u}};

ParameterizedTestParameters(philox, fnv1a32) { return cr_make_param_array(fnv_t, FNVS, sizeof FNVS / sizeof FNVS[0]); }

ParameterizedTest(fnv_t *f, philox, fnv1a32)
{
    cr_expect_eq(drift_fnv1a32(f->s), f->h, "fnv1a32(\"%s\") = %08x, want %08x", f->s, drift_fnv1a32(f->s), f->h);
}

/* The documented derivation: key = (seed mod 2^32, seed div 2^32), counter = (block, trial,
 * point, experiment), words handed out in order, four per block. */
Test(stream, follows_the_documented_layout)
{
    uint64_t seed = 0x0123456789abcdefull;
    uint32_t exp_id = drift_fnv1a32("formats"), point = 17, trial = 5;
    drift_stream_t s;
    drift_stream_init(&s, seed, exp_id, point, trial);
    for (uint32_t block = 0; block < 4; block++) {
        uint32_t ctr[4] = {block, trial, point, exp_id}, key[2] = {0x89abcdefu, 0x01234567u}, out[4];
        drift_philox4x32_10(out, ctr, key);
        for (int i = 0; i < 4; i++) cr_expect_eq(drift_stream_u32(&s), out[i], "block %u word %d", block, i);
    }
}

/* Streams for different (experiment, point, trial) use different counters: every counter
 * a stream touches carries its (trial, point, experiment) in words 1..3, and the block
 * index only in word 0, so two streams that differ in any of the three never share a
 * counter (up to 2^32 blocks each). Checked by recording the counters actually used, and
 * by the outputs: no 128-bit block of one stream appears in another. */
#define NSTREAMS 6
#define NBLOCKS 256
Test(stream, distinct_streams_do_not_overlap)
{
    struct {
        const char *exp;
        uint32_t point, trial;
    } ids[NSTREAMS] = {{"a", 0, 0}, {"a", 0, 1}, {"a", 1, 0}, {"b", 0, 0}, {"a", 1, 1}, {"b", 1, 1}};
    static uint32_t ctrs[NSTREAMS][NBLOCKS][4], outs[NSTREAMS][NBLOCKS][4];
    for (int k = 0; k < NSTREAMS; k++) {
        drift_stream_t s;
        drift_stream_init(&s, 42, drift_fnv1a32(ids[k].exp), ids[k].point, ids[k].trial);
        for (int b = 0; b < NBLOCKS; b++) {
            memcpy(ctrs[k][b], s.ctr, sizeof s.ctr); /* the counter the next refill will use */
            for (int i = 0; i < 4; i++) outs[k][b][i] = drift_stream_u32(&s);
            cr_assert_eq(s.ctr[0], (uint32_t)b + 1, "one block per four words");
        }
    }
    for (int k = 0; k < NSTREAMS; k++)
        for (int l = k + 1; l < NSTREAMS; l++)
            for (int b = 0; b < NBLOCKS; b++)
                for (int c = 0; c < NBLOCKS; c++) {
                    cr_assert(memcmp(ctrs[k][b], ctrs[l][c], sizeof ctrs[k][b]) != 0,
                        "streams %d and %d share a counter", k, l);
                    cr_assert(memcmp(outs[k][b], outs[l][c], sizeof outs[k][b]) != 0,
                        "streams %d and %d share an output block", k, l);
                }
}

/* The same stream twice gives the same words (law 4), and another seed other words. */
Test(stream, reproducible_and_seeded)
{
    drift_stream_t a, b, c;
    drift_stream_init(&a, 7, 1, 2, 3);
    drift_stream_init(&b, 7, 1, 2, 3);
    drift_stream_init(&c, 8, 1, 2, 3);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t x = drift_stream_u32(&a), y = drift_stream_u32(&b), z = drift_stream_u32(&c);
        cr_assert_eq(x, y);
        differ += x != z;
    }
    cr_assert_gt(differ, 990, "seed 8 should differ almost everywhere (equal words have probability 2^-32)");
}

/* uniform: k * 2^-53 for a 53-bit k, so always in [0, 1): the extreme words give 0 and
 * 1 - 2^-53 exactly (hand: (2^27 - 1) * 2^26 + 2^26 - 1 = 2^53 - 1). */
Test(uniform, range_and_extremes)
{
    drift_stream_t s;
    drift_stream_init(&s, 1, 2, 3, 4);
    s.used = 0;
    for (int i = 0; i < 4; i++) s.buf[i] = 0xffffffffu;
    cr_expect(drift_stream_uniform(&s) == 1.0 - 0x1p-53);
    cr_expect(drift_stream_uniform_pos(&s) == 0x1p-53, "the (0, 1] variant is 1 - uniform");
    s.used = 0;
    for (int i = 0; i < 4; i++) s.buf[i] = 0;
    cr_expect(drift_stream_uniform(&s) == 0.0);
    cr_expect(drift_stream_uniform_pos(&s) == 1.0);

    drift_stream_init(&s, 1, 2, 3, 4);
    for (int i = 0; i < 1000000; i++) {
        double u = drift_stream_uniform(&s);
        cr_assert(u >= 0 && u < 1, "uniform out of [0,1): %a", u);
        cr_assert(ldexp(u, 53) == floor(ldexp(u, 53)), "not a multiple of 2^-53: %a", u);
    }
}

/* Mean and the fraction below 1/4 and 1/2 of N = 2^20 uniforms: K = 3 checks, values in
 * [0, 1], eps = sqrt(ln(2 * 3 / 1e-10) / 2^21) = sqrt(24.82 / 2097152) = 0.00344. */
Test(uniform, unbiased)
{
    const int N = 1 << 20;
    const double eps = sqrt(log(2.0 * 3 / 1e-10) / (2.0 * N));
    cr_assert(eps > 0.0034 && eps < 0.0035, "eps as derived: %g", eps);
    drift_stream_t s;
    drift_stream_init(&s, 99, drift_fnv1a32("test_philox"), 0, 0);
    double sum = 0;
    long below_q = 0, below_h = 0;
    for (int i = 0; i < N; i++) {
        double u = drift_stream_uniform(&s);
        sum += u;
        below_q += u < 0.25;
        below_h += u < 0.5;
    }
    cr_expect(fabs(sum / N - 0.5) < eps, "mean %g", sum / N);
    cr_expect(fabs((double)below_q / N - 0.25) < eps, "P(u < 1/4) %g", (double)below_q / N);
    cr_expect(fabs((double)below_h / N - 0.5) < eps, "P(u < 1/2) %g", (double)below_h / N);
}

/* drift_stream_below(n) is in [0, n) for every n, including 1 and 2^32 - 1. */
Test(below, range)
{
    uint32_t ns[] = {1, 2, 3, 7, 10, 1000, 0x80000001u, 0xc0000000u, 0xffffffffu};
    drift_stream_t s;
    drift_stream_init(&s, 5, 6, 7, 8);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        for (int i = 0; i < 100000; i++) {
            uint32_t r = drift_stream_below(&s, ns[k]);
            cr_assert_lt(r, ns[k], "below(%u) gave %u", ns[k], r);
        }
}

/* Unbiased: every residue equally likely.
 * n = 3: each of the 3 outcomes has frequency 1/3.
 * n = 3 * 2^30: a multiply-shift without rejection gives the outputs j with j mod 3 == 0
 * two 32-bit preimages and the others one (2^32 / n = 4/3), so P(j mod 3 == 0) would be
 * 1/2 instead of 1/3: the rejection step is what this catches.
 * n = 10: each digit 1/10.
 * N = 2^20 draws per n, K = 3 + 1 + 10 = 14 indicator checks:
 * eps = sqrt(ln(2 * 14 / 1e-10) / 2^21) = sqrt(26.36 / 2097152) = 0.00355. */
Test(below, unbiased)
{
    const int N = 1 << 20;
    const double eps = sqrt(log(2.0 * 14 / 1e-10) / (2.0 * N));
    cr_assert(eps > 0.0035 && eps < 0.0036, "eps as derived: %g", eps);
    drift_stream_t s;
    drift_stream_init(&s, 2024, drift_fnv1a32("test_philox"), 1, 0);
    long c3[3] = {0}, c10[10] = {0}, zero_mod3 = 0;
    for (int i = 0; i < N; i++) {
        c3[drift_stream_below(&s, 3)]++;
        c10[drift_stream_below(&s, 10)]++;
        zero_mod3 += drift_stream_below(&s, 0xc0000000u) % 3 == 0;
    }
    for (int j = 0; j < 3; j++) cr_expect(fabs((double)c3[j] / N - 1.0 / 3) < eps, "below(3) = %d: %ld", j, c3[j]);
    for (int j = 0; j < 10; j++) cr_expect(fabs((double)c10[j] / N - 0.1) < eps, "below(10) = %d: %ld", j, c10[j]);
    cr_expect(fabs((double)zero_mod3 / N - 1.0 / 3) < eps, "below(3*2^30) mod 3 == 0: %g (1/2 means biased)",
        (double)zero_mod3 / N);
}

/* Normal variates through bounded indicators (Hoeffding applies to them, not to the
 * unbounded variates): P(Z < 0) = 1/2, P(|Z| < 1) = erf(1/sqrt 2) = 0.682689,
 * P(|Z| < 2) = erf(sqrt 2) = 0.954500 (standard normal table). N = 2^20, K = 3:
 * eps = 0.00344 as in uniform.unbiased. */
Test(normal, distribution)
{
    const int N = 1 << 20;
    const double eps = sqrt(log(2.0 * 3 / 1e-10) / (2.0 * N));
    drift_stream_t s;
    drift_stream_init(&s, 31337, drift_fnv1a32("test_philox"), 2, 0);
    long neg = 0, in1 = 0, in2 = 0;
    for (int i = 0; i < N; i++) {
        double z = drift_stream_normal(&s);
        cr_assert(isfinite(z));
        neg += z < 0;
        in1 += fabs(z) < 1;
        in2 += fabs(z) < 2;
    }
    cr_expect(fabs((double)neg / N - 0.5) < eps, "P(Z<0) %g", (double)neg / N);
    cr_expect(fabs((double)in1 / N - 0.682689) < eps, "P(|Z|<1) %g", (double)in1 / N);
    cr_expect(fabs((double)in2 / N - 0.954500) < eps, "P(|Z|<2) %g", (double)in2 / N);
}
