/* storage_sweep.c — kv_cache's storage formats at one cache length (storage_sweep.h). */
#include "storage_sweep.h"

#include <math.h>
#include <stdlib.h>

#include "cli.h"
#include "dispatch_attention.h"
#include "metrics.h"

/* logits = W h (fp64); returns the argmax (lowest index among equals), *gap = top1 - top2. */
static size_t project(double *logits, const double *W, const double *h, size_t V, size_t n, double *gap)
{
    for (size_t t = 0; t < V; t++) {
        double s = 0;
        for (size_t j = 0; j < n; j++) s += W[t * n + j] * h[j];
        logits[t] = s;
    }
    drift_top2_t t2;
    drift_top2(&t2, logits, V);
    if (gap) *gap = t2.gap;
    return t2.top1;
}

void drift_kv_storage_point(drift_kv_err_t *res, const drift_kv_setup_t *S, const drift_attn_kernel_t *kernel, size_t L,
    size_t nq, const double *W, size_t V)
{
    const size_t H = (size_t)S->heads, G = (size_t)S->kv_heads, D = (size_t)S->dim, HD = H * D;
    const size_t nf = (size_t)S->nf, nkv = (size_t)S->nkv, T = nq < L ? nq : L, p0 = L - T;
    const drift_attn_opts_t base = drift_attn_opts(S->heads, S->kv_heads, S->dim, DRIFT_FP32);
    double *q = malloc(T * HD * sizeof *q), *k = malloc(L * G * D * sizeof *k), *v = malloc(L * G * D * sizeof *v);
    double *ref = malloc(T * HD * sizeof *ref), *o = malloc(nf * nkv * T * HD * sizeof *o);
    double *rlog = malloc(T * V * sizeof *rlog);
    size_t *rtop = malloc(T * sizeof *rtop);
    double *rgap = malloc(T * sizeof *rgap);
    if (!q || !k || !v || !ref || !o || !rlog || !rtop || !rgap)
        drift_die_oom(8.0 * ((double)T * HD * (2 + nf * nkv) + 2.0 * L * G * D + (double)T * V),
            "the attention inputs and outputs at L = %zu (--L, --queries, --vocab: smaller)", L);
    drift_kv_fill(q, T * HD, S->seed, (uint32_t)L, 0), drift_kv_fill(k, L * G * D, S->seed, (uint32_t)L, 1),
        drift_kv_fill(v, L * G * D, S->seed, (uint32_t)L, 2);
    int rc = 0;
    DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:rc)")
    for (size_t r = 0; r < T; r++) {
        rc |= drift_attention_reference(
                  &ref[r * HD], &q[r * HD], k, v, 1, p0 + r + 1, p0 + r, NULL, &base, DRIFT_FP64, NULL, 0) != 0;
        rtop[r] = project(&rlog[r * V], W, &ref[r * HD], V, HD, &rgap[r]);
    }
    if (rc) drift_die("the attention reference failed");
    DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:rc)")
    for (size_t t = 0; t < nf * nkv; t++) {
        size_t c = t % nkv, f = t / nkv;
        drift_attn_opts_t ao = drift_attn_opts(S->heads, S->kv_heads, S->dim, S->formats[f]);
        ao.kernel = *kernel;
        ao.pv.out = DRIFT_FP32;
        drift_kv_cache_t kv;
        if (drift_kv_init(&kv, (int)G, (int)D, L, &S->kvf[c], NULL, 0)) {
            rc |= 1;
            continue;
        }
        rc |= drift_kv_append(&kv, k, v, L, NULL, 0) != 0;
        rc |= drift_dispatch_attention(&o[t * T * HD], q, T, p0, &kv, NULL, &ao, NULL, 0) != 0;
        drift_kv_free(&kv);
    }
    if (rc) drift_die("an attention kernel failed");
    double *lg = malloc(V * sizeof *lg);
    if (!lg) drift_die_oom((double)V * sizeof *lg, "a row of %zu logits (--vocab: smaller)", (size_t)V);
    for (size_t t = 0; t < nf * nkv; t++) {
        drift_kv_err_t *s = &res[t];
        const double *oo = &o[t * T * HD];
        double e2 = 0, n2 = 0;
        s->mingap = INFINITY;
        for (size_t j = 0; j < T * HD; j++)
            e2 += (oo[j] - ref[j]) * (oo[j] - ref[j]), n2 += ref[j] * ref[j],
                s->maxabs = fmax(s->maxabs, fabs(oo[j] - ref[j]));
        s->rel = sqrt(e2 / n2);
        for (size_t r = 0; r < T; r++) {
            size_t top = project(lg, W, &oo[r * HD], V, HD, NULL);
            s->flips += top != rtop[r];
            s->mingap = fmin(s->mingap, rgap[r]);
            for (size_t j = 0; j < V; j++) s->maxlog = fmax(s->maxlog, fabs(lg[j] - rlog[r * V + j]));
        }
    }
    free(lg), free(q), free(k), free(v), free(ref), free(o), free(rlog), free(rtop), free(rgap);
}
