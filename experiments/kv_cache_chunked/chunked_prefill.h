/* chunked_prefill.h — chunked prefill against a full prefill, bit for bit: n tokens through
 * drift_attention_prefill with chunk C (the cache grows by C tokens and those C queries attend
 * to it) against chunk 0 (all at once), per kernel and storage. */
#ifndef DRIFT_CHUNKED_PREFILL_H
#define DRIFT_CHUNKED_PREFILL_H

#include "kv_run.h"

/* For every compute format f, storage c and kernel i of kern[0..nk), t = (f * S->nkv + c) * nk + i,
 * and chunk size s of chunks[0..nC): rows[t * nC + s] = the query rows whose output differs
 * from the full prefill's, maxd[t * nC + s] = the largest |difference|. Dies when a prefill
 * fails or memory runs out. */
void drift_kv_chunked_prefill(long *rows, double *maxd, const drift_kv_setup_t *S, const drift_attn_kernel_t *kern,
    int nk, size_t n, const long *chunks, size_t nC);

#endif
