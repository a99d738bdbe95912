/* gemm_splitk.c — the accumulators of a kernel as partial sums over K ranges, and their
 * combination: one partial over all of K for naive and tiled, and for splitk:S[:tree] one
 * partial per chunk, combined in the accumulator format seq or pairwise (gemm.h), as
 * cuBLAS-style split-K reduces its slices in a second pass.
 *
 * A partial lives in the engine's own buffer (float tiles, float rows or double rows), so
 * chunks combine without a conversion; only the final result becomes row-major doubles. */
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "gemm_internal.h"

/* Buffers: PATH_F32 tiled -> float tiles; PATH_F32 naive -> float row-major;
 * otherwise double row-major. */
static size_t buf_elems(const drift_gemm_ctx_t *g)
{
    if (g->path == DRIFT_GEMM_PATH_F32 && g->tiled) return g->mp * g->np * (size_t)g->mr * (size_t)g->nr;
    return g->M * g->N;
}

static size_t buf_bytes(const drift_gemm_ctx_t *g)
{
    return buf_elems(g) * (g->path == DRIFT_GEMM_PATH_F32 ? sizeof(float) : sizeof(double)) + 1;
}

static void partial(const drift_gemm_ctx_t *g, void *buf, size_t k0, size_t k1)
{
    if (g->path == DRIFT_GEMM_PATH_F32) {
        if (g->tiled)
            drift_gemm_tiled_chain_f32(g, buf, k0, k1);
        else
            drift_gemm_rows_f32(g, buf, k0, k1);
    } else {
        drift_gemm_rows_double(g, buf, k0, k1);
    }
}

/* x = round_acc(x + y), elementwise. */
static void combine(const drift_gemm_ctx_t *g, void *x, const void *y)
{
    size_t n = buf_elems(g);
    if (g->path == DRIFT_GEMM_PATH_F32) {
        float *xf = x;
        const float *yf = y;
#pragma omp parallel for schedule(dynamic, DRIFT_PAR_CHUNK_ELEMS) if (n >= DRIFT_PAR_MIN_ELEMS_FAST)
        for (size_t t = 0; t < n; t++) xf[t] = xf[t] + yf[t];
    } else if (g->path == DRIFT_GEMM_PATH_F64) {
        double *xd = x;
        const double *yd = y;
#pragma omp parallel for schedule(dynamic, DRIFT_PAR_CHUNK_ELEMS) if (n >= DRIFT_PAR_MIN_ELEMS_FAST)
        for (size_t t = 0; t < n; t++) xd[t] = xd[t] + yd[t];
    } else {
        double *xd = x;
        const double *yd = y;
#pragma omp parallel for schedule(dynamic, DRIFT_PAR_CHUNK_ELEMS) if (n >= DRIFT_PAR_MIN_ELEMS)
        for (size_t t = 0; t < n; t++) xd[t] = drift_add(xd[t], yd[t], g->accf, g->mode);
    }
}

static void buf_to_rm(const drift_gemm_ctx_t *g, const void *buf, double *acc)
{
    if (g->path == DRIFT_GEMM_PATH_F32 && g->tiled) {
        drift_gemm_tiles_to_rm(g, buf, acc);
    } else if (g->path == DRIFT_GEMM_PATH_F32) {
        const float *f = buf;
        for (size_t t = 0; t < g->M * g->N; t++) acc[t] = f[t];
    } else {
        memcpy(acc, buf, g->M * g->N * sizeof(double));
    }
}

/* Pairwise over chunks [lo, hi) of length `chunk`: returns a fresh buffer (NULL: no memory). */
static void *splitk_tree(const drift_gemm_ctx_t *g, size_t lo, size_t hi, size_t chunk)
{
    void *x = malloc(buf_bytes(g));
    if (!x) return NULL;
    if (hi - lo == 1) {
        size_t k0 = lo * chunk, k1 = k0 + chunk < g->K ? k0 + chunk : g->K;
        partial(g, x, k0, k1);
        return x;
    }
    size_t m = (hi - lo) / 2;
    void *left = splitk_tree(g, lo, lo + m, chunk);
    void *right = left ? splitk_tree(g, lo + m, hi, chunk) : NULL;
    if (!right) {
        free(left), free(x);
        return NULL;
    }
    combine(g, left, right);
    free(right), free(x);
    return left;
}

/* acc (row-major M x N doubles) = the accumulators of the kernel. */
int drift_gemm_accumulate(const drift_gemm_ctx_t *g, const drift_gemm_kernel_t *kern, double *acc)
{
    void *buf = NULL, *tmp = NULL;
    int rc = DRIFT_OK;
    if (kern->family != DRIFT_GEMM_SPLITK || g->K == 0) {
        buf = malloc(buf_bytes(g));
        if (!buf) return DRIFT_ENOMEM;
        if (g->path == DRIFT_GEMM_PATH_F32 && g->tiled) { /* one pass: tiles go to acc when done */
            drift_gemm_tiled_f32_to_rm(g, buf, acc);
            goto out;
        }
        partial(g, buf, 0, g->K);
    } else {
        size_t S = (size_t)kern->splits, chunk = (g->K + S - 1) / S, nchunks = (g->K + chunk - 1) / chunk;
        if (kern->tree) {
            buf = splitk_tree(g, 0, nchunks, chunk);
            if (!buf) return DRIFT_ENOMEM;
        } else {
            buf = malloc(buf_bytes(g));
            tmp = nchunks > 1 ? malloc(buf_bytes(g)) : NULL;
            if (!buf || (nchunks > 1 && !tmp)) {
                rc = DRIFT_ENOMEM;
                goto out;
            }
            partial(g, buf, 0, chunk < g->K ? chunk : g->K);
            for (size_t c = 1; c < nchunks; c++) {
                size_t k0 = c * chunk, k1 = k0 + chunk < g->K ? k0 + chunk : g->K;
                partial(g, tmp, k0, k1);
                combine(g, buf, tmp);
            }
        }
    }
    buf_to_rm(g, buf, acc);
out:
    free(buf), free(tmp);
    return rc;
}
