/* kv_setup.c — kv_cache's inputs (kv_setup.h). */
#include "kv_setup.h"

#include "gen.h"
#include "philox.h"

void drift_kv_fill(double *x, size_t n, uint64_t seed, uint32_t point, uint32_t trial)
{
    drift_stream_t st;
    drift_stream_init(&st, seed, drift_fnv1a32("kv_cache"), point, trial);
    drift_gen_fill(x, n, DRIFT_DIST_NORMAL, &st);
}
