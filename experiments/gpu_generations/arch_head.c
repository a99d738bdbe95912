/* arch_head.c — one LM head under several recipes and exactly (arch_head.h). */
#include <math.h>
#include <stdlib.h>

#include "arch_head.h"
#include "dispatch.h"
#include "drift.h"
#include "gen_logits.h"
#include "metrics.h"

#define HEAD_MAX 16

static const char *BIN_NAME[DRIFT_ULP_NBIN] = {"0", "1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", ">64"};

int drift_ulp_bin(int64_t d)
{
    if (d <= 2) return (int)d;
    int b = 3;
    for (int64_t hi = 4; d > hi && b < DRIFT_ULP_NBIN - 1; hi *= 2) b++;
    return b;
}

const char *drift_ulp_bin_name(int bin) { return bin >= 0 && bin < DRIFT_ULP_NBIN ? BIN_NAME[bin] : "?"; }

int drift_arch_head_compare(drift_count_t *arg, unsigned char *rowdiff, int64_t *const *ulps, double *const *sdiff,
    size_t at, long *hist, const double *H0, const double *W, size_t R, size_t V, size_t K, drift_format_t in,
    const drift_recipe_t *rec, const int *use, int n)
{
    if (!arg || !ulps || !sdiff || !hist || !H0 || !W || !rec || !use || n < 1 || n > HEAD_MAX || !R || !V || !K)
        return DRIFT_EINVAL;
    const int npair = drift_pair_count(n);
    double *H = malloc(R * K * sizeof *H), *Bt = malloc(K * V * sizeof *Bt), *st = malloc(V * sizeof *st);
    double *L = malloc((size_t)(n + 1) * R * V * sizeof *L), *scale = malloc(R * sizeof *scale);
    int rc = H && Bt && st && L && scale ? 0 : DRIFT_ENOMEM;
    if (!rc) {
        for (size_t r = 0; r < R; r++) {
            for (size_t k = 0; k < K; k++) H[r * K + k] = drift_rne(H0[r * K + k], in);
            scale[r] = drift_logit_scale(H + r * K, K);
        }
        for (size_t v = 0; v < V; v++)
            for (size_t k = 0; k < K; k++) Bt[k * V + v] = drift_rne(W[v * K + k], in);
        drift_recipe_t ex = drift_recipe_exact(in, DRIFT_FP64);
        rc = drift_recipe_gemm(L + (size_t)n * R * V, H, Bt, R, V, K, &ex, 1, 0);
        for (int a = 0; a < n && !rc; a++)
            if (use[a]) rc = drift_recipe_gemm(L + (size_t)a * R * V, H, Bt, R, V, K, &rec[a], 1, 0);
    }
    for (size_t r = 0; r < R && !rc; r++) {
        size_t top[2][HEAD_MAX + 1];
        for (int lg = 0; lg < 2; lg++) /* 0: fp32 logits; 1: stored in the input format */
            for (int a = 0; a <= n; a++) {
                if (a < n && !use[a]) continue;
                const double *x = L + ((size_t)a * R + r) * V;
                for (size_t v = 0; v < V; v++) st[v] = lg && a < n ? drift_rne(x[v], in) : x[v];
                drift_top2_t t2;
                drift_top2(&t2, st, V);
                top[lg][a] = t2.top1;
            }
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b <= n; b++) {
                if (!use[a] || (b < n && !use[b])) continue;
                int p = drift_pair_index(a, b, n);
                for (int lg = 0; lg < 2; lg++) {
                    int d = top[lg][a] != top[lg][b];
                    arg[lg * npair + p].n++, arg[lg * npair + p].k += d;
                    if (rowdiff) rowdiff[(r * 2 + (size_t)lg) * (size_t)npair + (size_t)p] = (unsigned char)d;
                }
                for (size_t v = 0; v < V; v++) {
                    double xa = L[((size_t)a * R + r) * V + v], xb = L[((size_t)b * R + r) * V + v];
                    int64_t d = drift_ulp_distance(xa, b == n ? drift_rne(xb, DRIFT_FP32) : xb, DRIFT_FP32);
                    ulps[p][at + r * V + v] = d;
                    sdiff[p][at + r * V + v] = fabs(xa - xb) / scale[r];
                    hist[(size_t)p * DRIFT_ULP_NBIN + (size_t)drift_ulp_bin(d)]++;
                }
            }
    }
    free(H), free(Bt), free(st), free(L), free(scale);
    return rc;
}
