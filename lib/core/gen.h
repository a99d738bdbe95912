/* gen.h — input generators. Every value comes from a drift_stream_t (law 4). */
#ifndef DRIFT_GEN_H
#define DRIFT_GEN_H

#include <stddef.h>

#include "drift.h"
#include "philox.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DRIFT_DIST_UNIFORM = 0, /* uniform [0, 1) */
    DRIFT_DIST_NORMAL,      /* standard normal */
    DRIFT_DIST_ILLCOND,     /* cancellation: pairs v, -v (v normal) on half the slots, small
                               positive values in [2^-21, 2^-20) on the rest, shuffled;
                               condition number ~1.1e6 in every format (see gen.c) */
    DRIFT_DIST_LLM,         /* LLM-like activations: normal(0, 1) with ~0.5% outlier channels
                               of magnitude 20..100 (heavy tail), see gen.c */
    DRIFT_NDISTS
} drift_dist_t;

const char *drift_dist_name(drift_dist_t d);
DRIFT_MUST_CHECK int drift_dist_parse(drift_dist_t *out, const char *name);
void drift_gen_fill(double *x, size_t n, drift_dist_t d, drift_stream_t *s);

#ifdef __cplusplus
}
#endif

#endif
