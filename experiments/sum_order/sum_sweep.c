/* sum_sweep.c — the error-vs-n sweep (sum_sweep.h). */
#include "sum_sweep.h"
#include "drift.h"
#include "gen.h"
#include "philox.h"

#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static int nlog(const drift_sum_sweep_t *w) { return w->log2_max - w->log2_min + 1; }

size_t drift_sum_sweep_ncells(const drift_sum_sweep_t *w)
{
    return (size_t)DRIFT_NDISTS * nlog(w) * w->trials * w->ns * w->no;
}

size_t drift_sum_sweep_at(const drift_sum_sweep_t *w, int d, int li, long tr, int s, int o)
{
    return ((((size_t)d * nlog(w) + li) * w->trials + tr) * w->ns + s) * w->no + o;
}

/* Keeps the first error of a parallel loop. */
static void first_error(int *st, int e)
{
    if (e == DRIFT_OK) return;
    DRIFT_OMP("omp critical(drift_sum_sweep_error)")
    if (*st == DRIFT_OK) *st = e;
}

int drift_sum_sweep_run(drift_sum_cell_t *cells, const drift_sum_sweep_t *w)
{
    const int nd = DRIFT_NDISTS, nn = nlog(w), ns = w->ns, no = w->no;
    const size_t ntasks = (size_t)nd * nn * w->trials;
    size_t done = 0;
    int st = DRIFT_OK;
    /* one task per (dist, n, trial), largest n first so the dynamic schedule balances; each
     * task writes only its own cells */
    DRIFT_OMP("omp parallel")
    {
        double *x = NULL, *xr = NULL;
        size_t cap = 0;
        DRIFT_OMP("omp for schedule(dynamic, 1)")
        for (size_t t = 0; t < ntasks; t++) {
            int li = nn - 1 - (int)(t / ((size_t)nd * w->trials));
            int d = (int)(t / w->trials % nd);
            long tr = (long)(t % w->trials);
            size_t n = (size_t)1 << (w->log2_min + li);
            if (n > cap) {
                free(x);
                free(xr);
                x = malloc(n * sizeof *x);
                xr = malloc(n * sizeof *xr);
                cap = x && xr ? n : 0;
            }
            if (!cap) {
                first_error(&st, DRIFT_ENOMEM);
                continue;
            }
            drift_stream_t rs;
            drift_stream_init(
                &rs, w->seed, drift_fnv1a32("sum_order"), (uint32_t)(d * 64 + w->log2_min + li), (uint32_t)tr);
            drift_gen_fill(x, n, (drift_dist_t)d, &rs);
            drift_format_t last_in = DRIFT_NFORMATS;
            drift_xacc_t ex;
            double sa = 0, exd = 0;
            for (int s = 0; s < ns; s++) {
                if (w->S[s].in != last_in) { /* settings of one input format share the rounded vector */
                    for (size_t i = 0; i < n; i++) xr[i] = drift_rne(x[i], w->S[s].in);
                    drift_exact_sum_abs(&ex, &sa, xr, n);
                    exd = drift_xacc_round(&ex, DRIFT_FP64, DRIFT_RNE);
                    last_in = w->S[s].in;
                }
                drift_acc_t acc = {w->S[s].acc, DRIFT_RNE, 1};
                for (int o = 0; o < no; o++) {
                    double r;
                    first_error(&st, drift_sum(&r, xr, n, &w->O[o], &acc));
                    drift_sum_cell_t *c = &cells[drift_sum_sweep_at(w, d, li, tr, s, o)];
                    drift_sum_error(&c->m, &ex, r, w->S[s].acc);
                    c->sum_abs = sa;
                    c->exact = exd;
                }
            }
            DRIFT_OMP("omp atomic")
            done++;
#ifdef _OPENMP
            if (w->progress && omp_get_thread_num() == 0) w->progress(w->ctx, done, ntasks);
#else
            if (w->progress) w->progress(w->ctx, done, ntasks);
#endif
        }
        free(x);
        free(xr);
    }
    if (w->progress) w->progress(w->ctx, ntasks, ntasks);
    return st;
}
