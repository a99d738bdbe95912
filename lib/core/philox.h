/* philox.h — Philox4x32-10 (Salmon, Moraes, Dror & Shaw, SC'11), counter-based, usable
 * from C and from CUDA (functions are __host__ __device__ under nvcc).
 *
 * Why counter-based: every random number is a pure function of (key, counter), so a result
 * never depends on the thread count or on the order in which points are computed (law 4).
 *
 * Stream derivation (the lab's one way to get randomness):
 *   key     = (seed mod 2^32, seed div 2^32)
 *   counter = (block, trial, point, experiment_id)
 * where experiment_id = drift_fnv1a32(experiment name) and block counts 128-bit blocks
 * within the stream. Two streams that differ in (experiment, point, trial) therefore use
 * disjoint counters, so they cannot overlap for up to 2^32 blocks (2^34 words) each. */
#ifndef DRIFT_PHILOX_H
#define DRIFT_PHILOX_H

#include <math.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define DRIFT_HD __host__ __device__
#else
#define DRIFT_HD
#endif

#define DRIFT_PHILOX_M0 0xD2511F53u
#define DRIFT_PHILOX_M1 0xCD9E8D57u
#define DRIFT_PHILOX_W0 0x9E3779B9u
#define DRIFT_PHILOX_W1 0xBB67AE85u

DRIFT_HD static inline void drift_philox4x32_10(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)DRIFT_PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)DRIFT_PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += DRIFT_PHILOX_W0;
        k1 += DRIFT_PHILOX_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* FNV-1a, 32 bits: names experiments in the counter. */
DRIFT_HD static inline uint32_t drift_fnv1a32(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s) {
        h ^= (uint8_t)*s++;
        h *= 16777619u;
    }
    return h;
}

typedef struct {
    uint32_t key[2];
    uint32_t ctr[4]; /* ctr[0] is the block index; ctr[1..3] name the stream */
    uint32_t buf[4];
    int used; /* words of buf already handed out; 4 = refill */
} drift_stream_t;

DRIFT_HD static inline void drift_stream_init(
    drift_stream_t *s, uint64_t seed, uint32_t experiment_id, uint32_t point, uint32_t trial)
{
    s->key[0] = (uint32_t)seed;
    s->key[1] = (uint32_t)(seed >> 32);
    s->ctr[0] = 0;
    s->ctr[1] = trial;
    s->ctr[2] = point;
    s->ctr[3] = experiment_id;
    s->used = 4;
}

DRIFT_HD static inline uint32_t drift_stream_u32(drift_stream_t *s)
{
    if (s->used == 4) {
        drift_philox4x32_10(s->buf, s->ctr, s->key);
        s->ctr[0]++;
        s->used = 0;
    }
    return s->buf[s->used++];
}

/* Uniform double in [0, 1) with 53 random bits: k * 2^-53. */
DRIFT_HD static inline double drift_stream_uniform(drift_stream_t *s)
{
    uint64_t hi = drift_stream_u32(s) >> 5; /* 27 bits */
    uint64_t lo = drift_stream_u32(s) >> 6; /* 26 bits */
    return (double)((hi << 26) | lo) * 0x1p-53;
}

/* Uniform double in (0, 1]: for logarithms. */
DRIFT_HD static inline double drift_stream_uniform_pos(drift_stream_t *s) { return 1.0 - drift_stream_uniform(s); }

/* Uniform integer in [0, n) without modulo bias (Lemire's method with rejection). */
DRIFT_HD static inline uint32_t drift_stream_below(drift_stream_t *s, uint32_t n)
{
    uint64_t m = (uint64_t)drift_stream_u32(s) * n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (uint32_t)(-n) % n;
        while (low < threshold) {
            m = (uint64_t)drift_stream_u32(s) * n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

/* Standard normal variate (Box–Muller, cosine branch; one variate per call so that the
 * stream position never depends on a cached spare). Uses libm log, sqrt and cos: results
 * are reproducible on one libm; glibc's are the reference for the committed data. */
DRIFT_HD static inline double drift_stream_normal(drift_stream_t *s)
{
    double u1 = drift_stream_uniform_pos(s);
    double u2 = drift_stream_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#ifdef __cplusplus
}
#endif

#endif
