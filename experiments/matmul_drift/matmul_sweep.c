/* matmul_sweep.c — the K and split sweeps (matmul_sweep.h). */
#include "matmul_sweep.h"
#include "dispatch.h"
#include "gemm_internal.h" /* the parallel thresholds */
#include "drift.h"
#include "philox.h"
#include "recipe.h"
#include "stats.h"

#include <stdlib.h>
#include <string.h>

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

/* A (M x K) from the distribution, B (K x N) standard normal: one Philox stream per
 * (dist, K, matrix), independent of formats, kernels and threads. */
static void make_inputs(double *A, double *B, size_t M, size_t N, size_t K, drift_dist_t d, uint64_t seed)
{
    /* the two streams are independent: A and B are drawn side by side (each stream in its
     * own order, so the values are those of a serial draw) */
#pragma omp parallel sections if (K * (M + N) >= DRIFT_PAR_MIN_ELEMS / 16)
    {
#pragma omp section
        {
            drift_stream_t s;
            drift_stream_init(&s, seed, drift_fnv1a32("matmul_drift"), (uint32_t)K, (uint32_t)(2 * d));
            for (size_t i = 0; i < M; i++) drift_gen_fill(A + i * K, K, d, &s); /* outliers per row */
        }
#pragma omp section
        {
            drift_stream_t s;
            drift_stream_init(&s, seed, drift_fnv1a32("matmul_drift"), (uint32_t)K, (uint32_t)(2 * d + 1));
            drift_gen_fill(B, K * N, DRIFT_DIST_NORMAL, &s);
        }
    }
}

/* The buffers of one sweep: inputs, rounded inputs, witnesses, results. */
typedef struct {
    double *A, *B, *Ar, *Br, *E, *W, *C, *scratch;
} bufs_t;

static void bufs_free(bufs_t *b)
{
    free(b->A), free(b->B), free(b->Ar), free(b->Br), free(b->E), free(b->W), free(b->C), free(b->scratch);
}

/* nC results of M x N and as many scratch areas (at least DRIFT_MM_SPLIT_MAX): one per GEMM
 * of a parallel batch, so that no two threads share a buffer. */
static int bufs_alloc(bufs_t *b, size_t M, size_t N, size_t K, size_t nC)
{
    size_t ns = nC > DRIFT_MM_SPLIT_MAX ? nC : DRIFT_MM_SPLIT_MAX;
    b->A = malloc(M * K * sizeof *b->A), b->B = malloc(K * N * sizeof *b->B);
    b->Ar = malloc(M * K * sizeof *b->Ar), b->Br = malloc(K * N * sizeof *b->Br);
    b->E = malloc(M * N * sizeof *b->E), b->W = malloc(M * N * sizeof *b->W), b->C = malloc(nC * M * N * sizeof *b->C);
    b->scratch = malloc(M * N * ns * sizeof *b->scratch);
    if (b->A && b->B && b->Ar && b->Br && b->E && b->W && b->C && b->scratch) return DRIFT_OK;
    bufs_free(b);
    return DRIFT_ENOMEM;
}

/* Rounds the inputs to `in` and computes the exact witnesses of the rounded product into
 * E and W (M x N each). */
static int witness(bufs_t *b, double *E, double *W, size_t M, size_t N, size_t K, drift_format_t in)
{
    /* element by element: any partition gives the same values */
#pragma omp parallel if (K * (M + N) >= DRIFT_PAR_MIN_ELEMS / 16)
    {
#pragma omp for schedule(dynamic, DRIFT_PAR_CHUNK_ELEMS) nowait
        for (size_t t = 0; t < M * K; t++) b->Ar[t] = drift_rne(b->A[t], in);
#pragma omp for schedule(dynamic, DRIFT_PAR_CHUNK_ELEMS)
        for (size_t t = 0; t < K * N; t++) b->Br[t] = drift_rne(b->B[t], in);
    }
    return drift_product_exact(E, W, b->Ar, b->Br, M, N, K);
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
            make_inputs(b.A, b.B, M, N, K, w->dists[d], w->seed);
            /* the exact witness depends on the rounded inputs only: settings that follow one
             * with the same input format share its witness */
            for (int si = 0; si < ns && !rc; si++) {
                if (si > 0 && w->set[si].in == w->set[si - 1].in) {
                    wof[si] = wof[si - 1];
                    continue;
                }
                wof[si] = si;
                rc = witness(&b, EW + 2 * (size_t)si * MN, EW + (2 * (size_t)si + 1) * MN, M, N, K, w->set[si].in);
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

int drift_mm_split_run(drift_mm_split_t *split, size_t *nsplit, drift_mm_distinct_t *distinct, size_t *ndistinct,
    const drift_mm_sweep_t *w, size_t K)
{
    const size_t M = w->M, N = w->N, MN = M * N;
    bufs_t b;
    int srcs[DRIFT_MM_SPLIT_MAX];
    int rc = bufs_alloc(&b, M, N, K, DRIFT_MM_SPLIT_MAX);
    if (rc) return rc;
    *nsplit = *ndistinct = 0;
    for (int d = 0; d < w->nd && !rc; d++) {
        make_inputs(b.A, b.B, M, N, K, w->dists[d], w->seed);
        for (int si = 0; si < w->ns && !rc; si++) {
            drift_mm_setting_t s = w->set[si];
            if (s.acc != DRIFT_FP32) continue;
            if ((rc = witness(&b, b.E, b.W, M, N, K, s.in))) break;
            /* the 64 split factors in parallel, as the kernels of the K sweep above: each
             * writes its own C slot, scratch and row */
            drift_mm_split_t *rows = split + *nsplit;
#pragma omp parallel for schedule(dynamic, 1)
            for (int S = 1; S <= DRIFT_MM_SPLIT_MAX; S++) {
                drift_gemm_kernel_t k = {DRIFT_GEMM_SPLITK, 0, 0, 0, S, 0, DRIFT_TC_V100};
                drift_gemm_opts_t o = drift_gemm_opts(s.in, DRIFT_FP32);
                double *Cs = b.C + (size_t)(S - 1) * MN;
                if ((srcs[S - 1] = drift_dispatch_gemm(Cs, b.A, b.B, M, N, K, &k, &o))) continue;
                drift_product_err_t e;
                drift_product_error(&e, Cs, b.E, b.W, MN, b.scratch + (size_t)(S - 1) * MN);
                drift_mm_split_t *r = &rows[S - 1];
                r->dist = d, r->setting = si, r->S = S, r->nmse = e.nmse, r->err_mean = e.err_mean, r->c00 = Cs[0];
            }
            if ((rc = first_error(srcs, DRIFT_MM_SPLIT_MAX))) break;
            for (int S = 1; S <= DRIFT_MM_SPLIT_MAX; S++) { /* against S = 1, once all are computed */
                const double *Cs = b.C + (size_t)(S - 1) * MN;
                rows[S - 1].changed = 0;
                for (size_t t = 0; t < MN; t++) rows[S - 1].changed += memcmp(&Cs[t], &b.C[t], sizeof(double)) != 0;
            }
            *nsplit += DRIFT_MM_SPLIT_MAX;
            drift_mm_distinct_t *q = &distinct[(*ndistinct)++];
            q->dist = d, q->setting = si, q->max_distinct = 0, q->changed_any = 0;
            double sum = 0;
            for (size_t t = 0; t < MN; t++) {
                for (int S = 0; S < DRIFT_MM_SPLIT_MAX; S++) b.scratch[S] = b.C[(size_t)S * MN + t];
                qsort(b.scratch, DRIFT_MM_SPLIT_MAX, sizeof *b.scratch, drift_cmp_double);
                int nd = 1;
                for (int S = 1; S < DRIFT_MM_SPLIT_MAX; S++) nd += b.scratch[S] != b.scratch[S - 1];
                sum += nd;
                if (nd > q->max_distinct) q->max_distinct = nd;
                q->changed_any += nd > 1;
            }
            q->mean_distinct = sum / (double)MN;
        }
    }
    bufs_free(&b);
    return rc;
}
