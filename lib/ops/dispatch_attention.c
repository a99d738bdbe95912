/* dispatch_attention.c — attention through the backend (dispatch_attention.h). The CPU
 * computes first (its errors are the call's errors, its result the call's result); the
 * device then computes the same call and must agree bit for bit. */
#include "dispatch_attention.h"

#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "drift.h"
#include "why.h"


static const drift_backend_ops_t *device(void) { return drift_backend_active() ? drift_backend_registered() : NULL; }

/* The device's verdict rc on n outputs got against the CPU's cpu (rows of head_dim). */
static int twin_verdict(
    int rc, const double *got, const double *cpu, size_t n, const drift_attn_opts_t *o, char *err, size_t errsz)
{
    char label[DRIFT_ATTN_SPEC_MAX + 16] = "attention", spec[DRIFT_ATTN_SPEC_MAX];
    if (drift_attn_kernel_print(spec, sizeof spec, &o->kernel) > 0) snprintf(label, sizeof label, "attention %s", spec);
    if (rc == DRIFT_EUNSUPPORTED) {
        drift_backend_count(0, 0, 1);
        return DRIFT_OK;
    }
    if (!rc) {
        drift_backend_count(1, 0, 0);
        size_t i = drift_backend_first_diff(got, cpu, n);
        if (i == n) return DRIFT_OK;
        rc = drift_backend_mismatch(label, i, (size_t)o->head_dim, got[i], cpu[i]);
    } else {
        rc = drift_backend_failed(rc, label);
    }
    return drift_why(err, errsz, rc, "%s", drift_backend_message());
}

int drift_dispatch_attention(double *out, const double *q, size_t nq, size_t q_pos, const drift_kv_cache_t *kv,
    const unsigned char *key_mask, const drift_attn_opts_t *o, char *err, size_t errsz)
{
    int rc = drift_attention(out, q, nq, q_pos, kv, key_mask, o, err, errsz);
    const drift_backend_ops_t *dev = device();
    if (rc || !dev || nq == 0) return rc;
    if (!dev->attention) return twin_verdict(DRIFT_EUNSUPPORTED, NULL, NULL, 0, o, err, errsz);
    size_t n = nq * (size_t)o->heads * (size_t)o->head_dim;
    double *got = malloc(n * sizeof *got);
    if (!got) return drift_why(err, errsz, DRIFT_ENOMEM, "attention: out of memory for the device's result");
    drift_backend_lock();
    rc = dev->attention(got, q, nq, q_pos, kv, key_mask, o);
    drift_backend_unlock();
    rc = twin_verdict(rc, got, out, n, o, err, errsz);
    free(got);
    return rc;
}

int drift_dispatch_attention_decode(
    double *out, const double *q, const drift_kv_cache_t *kv, const drift_attn_opts_t *o, char *err, size_t errsz)
{
    if (!kv || kv->len == 0) return drift_attention_decode(out, q, kv, o, err, errsz); /* its error */
    return drift_dispatch_attention(out, q, 1, kv->len - 1, kv, NULL, o, err, errsz);
}

/* The CPU's prefill gives the result; the device then replays the cache's growth chunk by
 * chunk and its outputs are held against it. */
int drift_dispatch_attention_prefill(double *out, const double *q, const double *k, const double *v, size_t n,
    const drift_kv_format_t *kvf, size_t chunk, const drift_attn_opts_t *o, char *err, size_t errsz)
{
    int rc = drift_attention_prefill(out, q, k, v, n, kvf, chunk, o, err, errsz);
    const drift_backend_ops_t *dev = device();
    if (rc || !dev) return rc;
    if (!dev->attention) return twin_verdict(DRIFT_EUNSUPPORTED, NULL, NULL, 0, o, err, errsz);
    size_t qrow = (size_t)o->heads * (size_t)o->head_dim, krow = (size_t)o->kv_heads * (size_t)o->head_dim;
    size_t step = chunk ? chunk : n;
    drift_kv_cache_t kv;
    double *got = malloc(n * qrow * sizeof *got);
    if (!got) return drift_why(err, errsz, DRIFT_ENOMEM, "attention prefill: out of memory for the device's result");
    if ((rc = drift_kv_init(&kv, o->kv_heads, o->head_dim, n, kvf, err, errsz))) {
        free(got);
        return rc;
    }
    for (size_t p0 = 0; p0 < n && !rc; p0 += step) {
        size_t c = n - p0 < step ? n - p0 : step;
        if ((rc = drift_kv_append(&kv, k + p0 * krow, v + p0 * krow, c, err, errsz))) break;
        drift_backend_lock();
        rc = dev->attention(got + p0 * qrow, q + p0 * qrow, c, p0, &kv, NULL, o);
        drift_backend_unlock();
    }
    drift_kv_free(&kv);
    rc = twin_verdict(rc, got, out, n * qrow, o, err, errsz);
    free(got);
    return rc;
}
