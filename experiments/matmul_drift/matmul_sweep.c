/* matmul_sweep.c — the K sweep (matmul_sweep.h). */
#include "matmul_sweep.h"
#include "dispatch.h"
#include "drift.h"
#include "product_error.h"
#include "recipe.h"

#include <stdlib.h>

int drift_mm_kernel_runs(const drift_gemm_kernel_t *k, drift_mm_setting_t s)
{
    drift_order_t o;
    if (drift_gemm_kernel_order(&o, k)) return 0; /* not a kernel drift_gemm runs */
    drift_recipe_t r = drift_recipe(s.in, &o, s.acc, s.acc);
    return drift_recipe_check(&r, NULL, 0) == DRIFT_OK;
}

size_t drift_mm_at(const drift_mm_sweep_t *w, int d, int si, int kk, int ki)
{
    return (((size_t)d * w->ns + si) * w->nk + kk) * w->nK + ki;
}

/* The buffers of the sweep: inputs, rounded inputs, results. */
typedef struct {
    double *A, *B, *Ar, *Br, *C, *scratch;
} bufs_t;

static void bufs_free(bufs_t *b) { free(b->A), free(b->B), free(b->Ar), free(b->Br), free(b->C), free(b->scratch); }

/* nC results of M x N and as many scratch areas: one per GEMM of a parallel batch, so that no
 * two threads share a buffer. */
static int bufs_alloc(bufs_t *b, size_t M, size_t N, size_t K, size_t nC)
{
    b->A = malloc(M * K * sizeof *b->A), b->B = malloc(K * N * sizeof *b->B);
    b->Ar = malloc(M * K * sizeof *b->Ar), b->Br = malloc(K * N * sizeof *b->Br);
    b->C = malloc(nC * M * N * sizeof *b->C), b->scratch = malloc(nC * M * N * sizeof *b->scratch);
    if (b->A && b->B && b->Ar && b->Br && b->C && b->scratch) return DRIFT_OK;
    bufs_free(b);
    return DRIFT_ENOMEM;
}

/* The first error of a batch in its own order (the one a serial loop would have met first). */
static int first_error(const int *rcs, int n)
{
    for (int t = 0; t < n; t++)
        if (rcs[t]) return rcs[t];
    return DRIFT_OK;
}

/* Threads: at one (dist, K), every (setting, kernel) GEMM runs on one thread (the batch is
 * parallel, each GEMM inside it serial: nested regions get one thread), so a quick profile's
 * many small products (16 x 16 outputs) keep both cores busy, where each product alone is far
 * below the size worth a parallel region. The witnesses (E, W: M x N each per setting) are
 * computed first, so that the batch holds all settings' kernels: dozens of GEMMs of unequal
 * cost, handed out dynamically, so that neither a costly kernel nor a thread that shares its
 * core with another process leaves the other thread idle. Every GEMM writes its own C,
 * scratch and cell, and every GEMM's result is independent of the thread that runs it: data
 * identical for any thread count and schedule. */
int drift_mm_sweep_run(drift_mm_cell_t *cells, const drift_mm_sweep_t *w)
{
    const size_t M = w->M, N = w->N, MN = M * N;
    const int ns = w->ns, nk = w->nk, npairs = ns * nk;
    size_t Kmax = 0;
    for (int t = 0; t < w->nK; t++)
        if (w->Kv[t] > Kmax) Kmax = w->Kv[t];
    bufs_t b;
    int *prc = malloc((size_t)(npairs > 0 ? npairs : 1) * sizeof *prc),
        *wof = malloc((size_t)(ns > 0 ? ns : 1) * sizeof *wof);
    double *EW = malloc(2 * (size_t)(ns > 0 ? ns : 1) * MN * sizeof *EW); /* E of setting si at 2 si MN, W after it */
    int rc = prc && wof && EW ? bufs_alloc(&b, M, N, Kmax, (size_t)(npairs > 0 ? npairs : 1)) : DRIFT_ENOMEM;
    if (rc) {
        free(prc), free(wof), free(EW);
        return rc;
    }
    size_t done = 0, total = (size_t)w->nd * w->nK;
    for (int d = 0; d < w->nd && !rc; d++)
        for (int ki = 0; ki < w->nK && !rc; ki++, done++) {
            size_t K = w->Kv[ki];
            if (w->progress) w->progress(w->ctx, done, total);
            drift_product_inputs(b.A, b.B, M, N, K, w->dists[d], w->seed);
            /* the exact witness depends on the rounded inputs only: settings that follow one
             * with the same input format share its witness */
            for (int si = 0; si < ns && !rc; si++) {
                if (si > 0 && w->set[si].in == w->set[si - 1].in) {
                    wof[si] = wof[si - 1];
                    continue;
                }
                wof[si] = si;
                rc = drift_product_witness(EW + 2 * (size_t)si * MN, EW + (2 * (size_t)si + 1) * MN, b.Ar, b.Br, b.A,
                    b.B, M, N, K, w->set[si].in);
            }
            if (rc) break;
#pragma omp parallel for schedule(dynamic, 1) if (npairs > 1)
            for (int p = 0; p < npairs; p++) {
                int si = p / nk, kk = p % nk;
                drift_mm_setting_t s = w->set[si];
                prc[p] = DRIFT_OK;
                if (!drift_mm_kernel_runs(&w->kern[kk], s)) continue;
                double *C = b.C + (size_t)p * MN;
                const double *E = EW + 2 * (size_t)wof[si] * MN, *W = E + MN;
                drift_gemm_opts_t o = drift_gemm_opts(s.in, s.acc);
                if ((prc[p] = drift_dispatch_gemm(C, b.A, b.B, M, N, K, &w->kern[kk], &o))) continue;
                drift_mm_cell_t *c = &cells[drift_mm_at(w, d, si, kk, ki)];
                c->ran = 1;
                drift_product_error(&c->err, C, E, W, MN, b.scratch + (size_t)p * MN);
                c->c00 = C[0];
                c->e00 = E[0];
            }
            rc = first_error(prc, npairs);
        }
    bufs_free(&b);
    free(prc), free(wof), free(EW);
    return rc;
}
