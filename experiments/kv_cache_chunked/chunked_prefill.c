/* chunked_prefill.c — chunked against full prefill (chunked_prefill.h). */
#include "chunked_prefill.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dispatch_attention.h"

void drift_kv_chunked_prefill(long *rows, double *maxd, const drift_kv_setup_t *S, const drift_attn_kernel_t *kern,
    int nk, size_t n, const long *chunks, size_t nC)
{
    const size_t H = (size_t)S->heads, G = (size_t)S->kv_heads, D = (size_t)S->dim, HD = H * D, NCK = (size_t)nk;
    const size_t nf = (size_t)S->nf, nkv = (size_t)S->nkv;
    double *q = malloc(n * HD * sizeof *q), *k = malloc(n * G * D * sizeof *k), *v = malloc(n * G * D * sizeof *v);
    if (!q || !k || !v)
        drift_die_oom(8.0 * ((double)n * HD + 2.0 * n * G * D),
            "the prefill of %zu tokens (--prefill-len, --heads, --dim: smaller)", n);
    drift_kv_fill(q, n * HD, S->seed, 0xC4u, 0), drift_kv_fill(k, n * G * D, S->seed, 0xC4u, 1),
        drift_kv_fill(v, n * G * D, S->seed, 0xC4u, 2);
    int rc = 0;
    DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:rc)")
    for (size_t t = 0; t < nf * nkv * NCK; t++) {
        size_t i = t % NCK, c = (t / NCK) % nkv, f = t / NCK / nkv;
        drift_attn_opts_t ao = drift_attn_opts(S->heads, S->kv_heads, S->dim, S->formats[f]);
        ao.kernel = kern[i];
        double *full = malloc(n * HD * sizeof *full), *ch = malloc(n * HD * sizeof *ch);
        if (!full || !ch) {
            rc |= 1;
            free(full), free(ch);
            continue;
        }
        rc |= drift_dispatch_attention_prefill(full, q, k, v, n, &S->kvf[c], 0, &ao, NULL, 0) != 0;
        for (size_t s = 0; s < nC; s++) {
            rc |= drift_dispatch_attention_prefill(ch, q, k, v, n, &S->kvf[c], (size_t)chunks[s], &ao, NULL, 0) != 0;
            long nrow = 0;
            double mx = 0;
            for (size_t r = 0; r < n; r++) {
                int d = 0;
                for (size_t j = 0; j < HD; j++)
                    if (memcmp(&full[r * HD + j], &ch[r * HD + j], sizeof(double)))
                        d = 1, mx = fmax(mx, fabs(full[r * HD + j] - ch[r * HD + j]));
                nrow += d;
            }
            rows[t * nC + s] = nrow, maxd[t * nC + s] = mx;
        }
        free(full), free(ch);
    }
    if (rc) drift_die("a prefill failed");
    free(q), free(k), free(v);
}
