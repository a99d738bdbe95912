/* split_sweep.c — the split sweep (split_sweep.h). */
#include "split_sweep.h"
#include "dispatch.h"
#include "gemm.h"
#include "product_error.h"
#include "stats.h"

#include <stdlib.h>
#include <string.h>

/* The first error of a batch in its own order (the one a serial loop would have met first). */
static int first_error(const int *rcs, int n)
{
    for (int t = 0; t < n; t++)
        if (rcs[t]) return rcs[t];
    return DRIFT_OK;
}

/* The buffers of the sweep: inputs, rounded inputs, witnesses, and one result and one scratch
 * area per split factor, so that no two threads share a buffer. */
typedef struct {
    double *A, *B, *Ar, *Br, *E, *W, *C, *scratch;
} bufs_t;

static void bufs_free(bufs_t *b)
{
    free(b->A), free(b->B), free(b->Ar), free(b->Br), free(b->E), free(b->W), free(b->C), free(b->scratch);
}

static int bufs_alloc(bufs_t *b, size_t M, size_t N, size_t K)
{
    const size_t nC = DRIFT_MM_SPLIT_MAX;
    b->A = malloc(M * K * sizeof *b->A), b->B = malloc(K * N * sizeof *b->B);
    b->Ar = malloc(M * K * sizeof *b->Ar), b->Br = malloc(K * N * sizeof *b->Br);
    b->E = malloc(M * N * sizeof *b->E), b->W = malloc(M * N * sizeof *b->W), b->C = malloc(nC * M * N * sizeof *b->C);
    b->scratch = malloc(M * N * nC * sizeof *b->scratch);
    if (b->A && b->B && b->Ar && b->Br && b->E && b->W && b->C && b->scratch) return DRIFT_OK;
    bufs_free(b);
    return DRIFT_ENOMEM;
}

int drift_mm_split_run(drift_mm_split_t *split, drift_mm_distinct_t *distinct, const drift_mm_split_sweep_t *w)
{
    const size_t M = w->M, N = w->N, K = w->K, MN = M * N;
    bufs_t b;
    int srcs[DRIFT_MM_SPLIT_MAX];
    int rc = bufs_alloc(&b, M, N, K);
    if (rc) return rc;
    size_t nsplit = 0, ndistinct = 0;
    for (int d = 0; d < w->nd && !rc; d++) {
        drift_product_inputs(b.A, b.B, M, N, K, w->dists[d], w->seed);
        for (int f = 0; f < w->nf && !rc; f++) {
            if ((rc = drift_product_witness(b.E, b.W, b.Ar, b.Br, b.A, b.B, M, N, K, w->in[f]))) break;
            /* the 64 split factors in parallel: each writes its own C slot, scratch and row */
            drift_mm_split_t *rows = split + nsplit;
#pragma omp parallel for schedule(dynamic, 1)
            for (int S = 1; S <= DRIFT_MM_SPLIT_MAX; S++) {
                drift_gemm_kernel_t k = {DRIFT_GEMM_SPLITK, 0, 0, 0, S, 0, DRIFT_TC_V100};
                drift_gemm_opts_t o = drift_gemm_opts(w->in[f], DRIFT_FP32);
                double *Cs = b.C + (size_t)(S - 1) * MN;
                if ((srcs[S - 1] = drift_dispatch_gemm(Cs, b.A, b.B, M, N, K, &k, &o))) continue;
                drift_product_err_t e;
                drift_product_error(&e, Cs, b.E, b.W, MN, b.scratch + (size_t)(S - 1) * MN);
                drift_mm_split_t *r = &rows[S - 1];
                r->dist = d, r->format = f, r->S = S, r->nmse = e.nmse, r->err_mean = e.err_mean, r->c00 = Cs[0];
            }
            if ((rc = first_error(srcs, DRIFT_MM_SPLIT_MAX))) break;
            for (int S = 1; S <= DRIFT_MM_SPLIT_MAX; S++) { /* against S = 1, once all are computed */
                const double *Cs = b.C + (size_t)(S - 1) * MN;
                rows[S - 1].changed = 0;
                for (size_t t = 0; t < MN; t++) rows[S - 1].changed += memcmp(&Cs[t], &b.C[t], sizeof(double)) != 0;
            }
            nsplit += DRIFT_MM_SPLIT_MAX;
            drift_mm_distinct_t *q = &distinct[ndistinct++];
            q->dist = d, q->format = f, q->max_distinct = 0, q->changed_any = 0;
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
