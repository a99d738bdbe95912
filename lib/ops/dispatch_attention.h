/* dispatch_attention.h — attention through the backend (backend.h): drift_attention,
 * drift_attention_decode and drift_attention_prefill with the same arguments and errors, on
 * the device when one is selected and takes the options (cuda/drift_cuda_attention.h: the
 * float path's recipes), checked bit for bit against the CPU twin as each call is produced;
 * on the CPU otherwise (counted in drift_backend_stats). Experiments call these instead of
 * the attention.h functions to get --backend cuda. Kept apart from dispatch.h so that the
 * recipe dispatcher and attention can change independently. */
#ifndef DRIFT_DISPATCH_ATTENTION_H
#define DRIFT_DISPATCH_ATTENTION_H

#include <stddef.h>

#include "drift.h"
#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

DRIFT_MUST_CHECK int drift_dispatch_attention(double *out, const double *q, size_t nq, size_t q_pos,
    const drift_kv_cache_t *kv, const unsigned char *key_mask, const drift_attn_opts_t *o, char *err, size_t errsz);
DRIFT_MUST_CHECK int drift_dispatch_attention_decode(
    double *out, const double *q, const drift_kv_cache_t *kv, const drift_attn_opts_t *o, char *err, size_t errsz);
DRIFT_MUST_CHECK int drift_dispatch_attention_prefill(double *out, const double *q, const double *k, const double *v,
    size_t n, const drift_kv_format_t *kvf, size_t chunk, const drift_attn_opts_t *o, char *err, size_t errsz);

#ifdef __cplusplus
}
#endif

#endif
