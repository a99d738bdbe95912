/* batch_sweep.c — the batch-invariance measurement (batch_sweep.h). */
#include "batch_sweep.h"
#include "dispatch.h"
#include "dot_cond.h"
#include "drift.h"
#include "gpu_gemm.h"
#include "metrics.h"
#include "why.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static drift_rows_src_t src_of(const drift_batch_sweep_cfg_t *cfg, const char *name, size_t K)
{
    return (drift_rows_src_t){cfg->data, cfg->seed, name, (uint32_t)K};
}

/* The index of (format f, policy p, K index ki) in b->sum, and times Mmax in b->rows. */
static size_t at(const drift_batch_sweep_t *b, int f, int p, int ki)
{
    return (size_t)(f * DRIFT_NPOLICIES + p) * b->cfg.nK + ki;
}

const drift_batch_row_t *drift_batch_sweep_rows(const drift_batch_sweep_t *b, int f, int p, int ki)
{
    return &b->rows[at(b, f, p, ki) * b->cfg.Mmax];
}

const drift_batch_sum_t *drift_batch_sweep_sum(const drift_batch_sweep_t *b, int f, int p, int ki)
{
    return &b->sum[at(b, f, p, ki)];
}

const drift_row0_cache_t *drift_batch_sweep_cache(const drift_batch_sweep_t *b, int f, int ki)
{
    return &b->cache[f * b->cfg.nK + ki];
}

/* Self-check of the row-0 shortcut: row 0 of the full product A[:M] B under k must be row. */
static int self_check(const drift_batch_sweep_t *b, const drift_gemm_kernel_t *k, const drift_gemm_opts_t *o, size_t M,
    size_t K, const double *B, const double *row, char *err, size_t errsz)
{
    const size_t N = b->cfg.N;
    double *Af = malloc(M * K * sizeof *Af), *Cf = malloc(M * N * sizeof *Cf);
    int rc = Af && Cf ? DRIFT_OK
                      : drift_why_oom(err, errsz, (double)M * (K + N) * sizeof(double),
                            "the %zu x %zu and %zu x %zu matrices of the self-check", M, K, M, N);
    if (!rc) {
        drift_rows_src_t a = src_of(&b->cfg, "batch_invariance.A", K);
        drift_rows_fill(Af, &a, b->cfg.Mmax, K, 0, M);
        if ((rc = drift_gpu_gemm(Cf, Af, B, M, N, K, k, o, b->arch)))
            drift_why(err, errsz, rc, "drift_gemm failed: %s", drift_strerror(rc));
        else if (memcmp(Cf, row, N * sizeof *Cf) != 0)
            rc = drift_why(err, errsz, DRIFT_ERANGE,
                "self-check failed: row 0 of the full product differs from the row-0 shortcut");
    }
    free(Af), free(Cf);
    return rc;
}

/* Every policy at one (format f, K index ki): rows over M, their summaries. */
static int sweep_policies(drift_batch_sweep_t *b, int f, int ki, const double *A0, const double *B, const double *ex,
    double cond_med, int *checked, char *err, size_t errsz)
{
    const size_t N = b->cfg.N, Mmax = b->cfg.Mmax, K = (size_t)b->cfg.K[ki];
    const drift_format_t in = b->cfg.formats[f];
    drift_row0_cache_t *kc = &b->cache[f * b->cfg.nK + ki];
    drift_gemm_opts_t o = drift_gemm_opts(in, DRIFT_FP32);
    const int tc = drift_gpu_uses_tc(in, b->arch);
    for (int p = 0; p < DRIFT_NPOLICIES; p++) {
        drift_batch_row_t *blk = &b->rows[at(b, f, p, ki) * Mmax];
        drift_batch_sum_t *s = &b->sum[at(b, f, p, ki)];
        int used[64] = {0}, rc;
        for (size_t M = 1; M <= Mmax; M++) {
            drift_gemm_kernel_t k;
            if (drift_policy_choose(&k, (drift_policy_t)p, M, N, K, b->dev.sms))
                return drift_why(err, errsz, DRIFT_EINVAL, "policy failed");
            int c = drift_gpu_row0_of(kc, &k, A0, B, N, K, &o, b->arch);
            if (c < 0)
                return drift_why(
                    err, errsz, c, "row 0 under %s: %s", drift_policy_name((drift_policy_t)p), drift_strerror(c));
            drift_batch_row_t *r = &blk[M - 1];
            *r = (drift_batch_row_t){M, c, 0, 0};
            used[c] = 1;
            drift_row_diff(&r->n_diff, &r->max_diff, kc->row[c], kc->row[blk[0].kc], N);
            if (r->n_diff && !s->m_changed++) s->first_M = M;
            if (r->max_diff > s->max_diff) s->max_diff = r->max_diff;
            /* the full product for the first (cheap enough) M whose kernel differs from M = 1's */
            if (!(*checked & (1 << f)) && c != blk[0].kc && M <= 512 && M * N * K <= ((size_t)1 << 31)) {
                if ((rc = self_check(b, &k, &o, M, K, B, kc->row[c], err, errsz))) return rc;
                *checked |= 1 << f;
            }
        }
        s->cond_med = cond_med;
        s->tc = tc;
        /* distinct row vectors, and their NMSE, among the kernels used */
        int reps[64];
        s->nmse_min = INFINITY;
        for (int c = 0; c < kc->n; c++) {
            if (!used[c]) continue;
            double nm = drift_nmse(kc->row[c], ex, N);
            s->nmse_min = fmin(s->nmse_min, nm), s->nmse_max = fmax(s->nmse_max, nm);
            int dup = 0;
            for (int q = 0; q < s->distinct; q++) dup |= !memcmp(kc->row[reps[q]], kc->row[c], N * sizeof(double));
            if (!dup) reps[s->distinct++] = c;
        }
    }
    return DRIFT_OK;
}

int drift_batch_sweep_run(drift_batch_sweep_t *b, const drift_batch_sweep_cfg_t *cfg,
    void (*progress)(void *ctx, size_t done, size_t total), void *ctx, char *err, size_t errsz)
{
    memset(b, 0, sizeof *b);
    b->cfg = *cfg;
    if (drift_device_lookup(&b->dev, cfg->device) || drift_gpu_arch(&b->arch, b->dev.name))
        return drift_why(err, errsz, DRIFT_EINVAL, "--device: unknown device '%s'", cfg->device ? cfg->device : "");
    const int nf = cfg->nformats, np = DRIFT_NPOLICIES, nK = cfg->nK;
    const size_t N = cfg->N, Mmax = cfg->Mmax;
    size_t Kmax = 0;
    for (int t = 0; t < nK; t++) Kmax = (size_t)cfg->K[t] > Kmax ? (size_t)cfg->K[t] : Kmax;
    b->rows = calloc((size_t)nf * np * nK * Mmax, sizeof *b->rows);
    b->cache = calloc((size_t)nf * nK, sizeof *b->cache);
    b->sum = calloc((size_t)nf * np * nK, sizeof *b->sum);
    double *A0 = malloc(Kmax * sizeof *A0), *B = malloc(Kmax * N * sizeof *B), *ex = malloc(N * sizeof *ex);
    int rc =
        b->rows && b->cache && b->sum && A0 && B && ex
            ? DRIFT_OK
            : drift_why_oom(err, errsz,
                  (double)nf * np * nK * Mmax * sizeof *b->rows + (double)nf * nK * sizeof *b->cache +
                      (double)nf * np * nK * sizeof *b->sum + (double)(Kmax + Kmax * N + N) * sizeof(double),
                  "the results of %d formats x %d policies x %d K x %zu M and the %zu x %zu B matrix (--N, --M: smaller)",
                  nf, np, nK, Mmax, Kmax, N);
    int checked = 0; /* formats whose row-0 shortcut has been checked */
    for (int ki = 0; !rc && ki < nK; ki++) {
        size_t K = (size_t)cfg->K[ki];
        if (progress) progress(ctx, (size_t)ki, (size_t)nK);
        drift_rows_src_t sa = src_of(cfg, "batch_invariance.A", K), sb = src_of(cfg, "batch_invariance.B", K);
        drift_rows_fill(B, &sb, K, N, 0, K);
        for (int f = 0; !rc && f < nf; f++) {
            drift_rows_fill(A0, &sa, Mmax, K, 0, 1); /* row 0 of A */
            drift_recipe_t exact =
                drift_recipe_exact(cfg->formats[f], DRIFT_FP64); /* the exact row 0 of the rounded inputs */
            double cond_med;
            if (drift_recipe_gemm(ex, A0, B, 1, N, K, &exact, 1, 0))
                rc = drift_why(err, errsz, DRIFT_EINVAL, "exact reference failed");
            else if ((rc = drift_dot_cond_median(&cond_med, A0, B, K, N, cfg->formats[f], ex)))
                rc == DRIFT_ENOMEM ? (void)drift_why_oom(err, errsz, (double)(N + 2 * K) * sizeof(double),
                                         "the %zu condition numbers of K = %zu", N, K)
                                   : (void)drift_why(err, errsz, rc, "condition numbers of %s inputs: %s",
                                         drift_format_name(cfg->formats[f]), drift_strerror(rc));
            else
                rc = sweep_policies(b, f, ki, A0, B, ex, cond_med, &checked, err, errsz);
        }
    }
    if (!rc && progress) progress(ctx, (size_t)nK, (size_t)nK);
    free(A0), free(B), free(ex);
    return rc;
}

void drift_batch_sweep_free(drift_batch_sweep_t *b)
{
    for (int t = 0; b->cache && t < b->cfg.nformats * b->cfg.nK; t++) drift_row0_free(&b->cache[t]);
    free(b->cache), free(b->rows), free(b->sum);
    memset(b, 0, sizeof *b);
}

int drift_batch_sweep_sampled(const drift_batch_row_t *blk, size_t Mmax, size_t M0)
{
    int run_end = (M0 > 0 && blk[M0 - 1].kc != blk[M0].kc) || (M0 + 1 < Mmax && blk[M0 + 1].kc != blk[M0].kc);
    return drift_policy_sampled_m(blk[M0].M, Mmax, run_end);
}

int drift_batch_sweep_linspace_cond(double *med, const drift_batch_sweep_cfg_t *cfg, size_t K, drift_format_t in)
{
    const size_t N = cfg->N;
    double *A0 = malloc((K ? K : 1) * sizeof *A0), *B = malloc((K && N ? K * N : 1) * sizeof *B);
    int rc = A0 && B ? DRIFT_OK : DRIFT_ENOMEM;
    if (!rc) {
        drift_rows_src_t lin = {DRIFT_ROWS_LINSPACE, 0, NULL, 0};
        drift_rows_fill(B, &lin, K, N, 0, K);
        drift_rows_fill(A0, &lin, cfg->Mmax, K, 0, 1);
        rc = drift_dot_cond_median(med, A0, B, K, N, in, NULL);
    }
    free(A0), free(B);
    return rc;
}
