/* product_error.c — errors of a matrix product (product_error.h). */
#include "product_error.h"
#include "drift.h"
#include "exact.h"
#include "metrics.h"
#include "par_sizes.h"
#include "philox.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>

void drift_product_inputs(double *A, double *B, size_t M, size_t N, size_t K, drift_dist_t d, uint64_t seed)
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

int drift_product_witness(double *E, double *W, double *Ar, double *Br, const double *A, const double *B, size_t M,
    size_t N, size_t K, drift_format_t in)
{
    /* element by element: any partition gives the same values */
#pragma omp parallel if (K * (M + N) >= DRIFT_PAR_MIN_ELEMS / 16)
    {
#pragma omp for schedule(dynamic, DRIFT_PAR_CHUNK_ELEMS) nowait
        for (size_t t = 0; t < M * K; t++) Ar[t] = drift_rne(A[t], in);
#pragma omp for schedule(dynamic, DRIFT_PAR_CHUNK_ELEMS)
        for (size_t t = 0; t < K * N; t++) Br[t] = drift_rne(B[t], in);
    }
    return drift_product_exact(E, W, Ar, Br, M, N, K);
}

int drift_product_exact(double *E, double *W, const double *Ar, const double *Br, size_t M, size_t N, size_t K)
{
    int fail = 0;
    DRIFT_OMP("omp parallel reduction(| : fail)")
    {
        double *col = malloc(K * sizeof *col), *acol = malloc(K * sizeof *acol), *arow = malloc(K * sizeof *arow);
        if (!col || !acol || !arow) fail = 1;
        /* dynamic: a column costs the same everywhere, but on a loaded machine a thread that
         * shares its core runs slower and a static split would wait for it (each column's
         * results are its own: any partition gives the same bits) */
        DRIFT_OMP("omp for schedule(dynamic, 1)")
        for (size_t j = 0; j < N; j++) {
            if (fail) continue;
            for (size_t k = 0; k < K; k++) col[k] = Br[k * N + j], acol[k] = fabs(col[k]);
            for (size_t i = 0; i < M; i++) {
                for (size_t k = 0; k < K; k++) arow[k] = fabs(Ar[i * K + k]);
                if (drift_exact_dot(&E[i * N + j], Ar + i * K, col, K, DRIFT_FP64, DRIFT_RNE) ||
                    drift_exact_dot(&W[i * N + j], arow, acol, K, DRIFT_FP64, DRIFT_RNE))
                    fail = 1;
            }
        }
        free(col), free(acol), free(arow);
    }
    return fail ? DRIFT_ENOMEM : DRIFT_OK;
}

void drift_product_error(
    drift_product_err_t *r, const double *C, const double *E, const double *W, size_t n, double *scratch)
{
    r->nmse = drift_nmse(C, E, n);
    double sum = 0, mx = 0;
    for (size_t t = 0; t < n; t++) {
        double e = W[t] > 0 ? drift_abs_err(C[t], E[t]) / W[t] : 0;
        sum += e;
        if (e > mx) mx = e;
        scratch[t] = drift_rel_err(C[t], E[t]);
    }
    r->err_mean = sum / (double)n;
    r->err_max = mx;
    qsort(scratch, n, sizeof *scratch, drift_cmp_double);
    r->rel_med = n % 2 ? scratch[n / 2] : 0.5 * (scratch[n / 2 - 1] + scratch[n / 2]);
}
