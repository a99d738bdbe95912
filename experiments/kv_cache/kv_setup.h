/* kv_setup.h — what kv_cache's synthetic sweeps share: the attention shape, the compute and
 * storage formats swept, and their inputs, N(0,1) values from the seed's Philox stream. */
#ifndef DRIFT_KV_SETUP_H
#define DRIFT_KV_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include "attention.h"

#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
    uint64_t seed;
    int heads, kv_heads, dim;      /* query heads over KV heads, head dim */
    const drift_format_t *formats; /* the compute input formats, */
    int nf;                        /* nf of them */
    const drift_kv_format_t *kvf;  /* the KV storage formats, */
    int nkv;                       /* nkv of them */
} drift_kv_setup_t;

/* x[0..n) ~ N(0,1) from the stream ("kv_cache", point, trial) of seed. */
void drift_kv_fill(double *x, size_t n, uint64_t seed, uint32_t point, uint32_t trial);

#endif
