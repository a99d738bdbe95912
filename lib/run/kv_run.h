/* kv_run.h — what the KV-cache experiments share (kv_cache, kv_cache_chunked): a list of KV
 * storage formats as an option gives it ("fp16,int8:token"), the attention shape and formats a
 * synthetic sweep covers, and its inputs, N(0,1) values from the seed's Philox stream; with
 * attention_drift, the check of the heads options. */
#ifndef DRIFT_KV_RUN_H
#define DRIFT_KV_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DRIFT_KV_MAX 16 /* formats in one list */
/* every KV storage format a list may name, for the messages of an option that takes them all */
#define DRIFT_KV_FORMATS_ACCEPTED "fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2, int8:token, int8:head"

/* Parses the comma-separated list into f[0..n) and their canonical names (drift_kv_format_print)
 * into names[0..n); returns n. Dies naming opt, with the accepted formats in `accepted`, when the
 * list is empty or too long, a format is unknown, or a format is given twice (compared as parsed:
 * fp32,FP32 is one format twice). */
int drift_kv_format_list(
    drift_kv_format_t *f, char (*names)[32], const char *opt, const char *list, const char *accepted);

/* Dies, naming --heads, unless heads is a multiple of kv_heads: grouped-query attention gives
 * each KV head heads / kv_heads query heads. */
void drift_kv_require_heads(long heads, long kv_heads);

typedef struct {
    uint64_t seed;
    int heads, kv_heads, dim;      /* query heads over KV heads, head dim */
    const drift_format_t *formats; /* the compute input formats, */
    int nf;                        /* nf of them */
    const drift_kv_format_t *kvf;  /* the KV storage formats, */
    int nkv;                       /* nkv of them */
} drift_kv_setup_t;

/* x[0..n) ~ N(0,1) from the stream ("kv_cache", point, trial) of seed: one stream for both
 * experiments, named after the one they began as, so that each keeps its inputs. */
void drift_kv_fill(double *x, size_t n, uint64_t seed, uint32_t point, uint32_t trial);

#ifdef __cplusplus
}
#endif

#endif
