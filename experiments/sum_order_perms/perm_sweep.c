/* perm_sweep.c — sums in random orders (perm_sweep.h). */
#include "perm_sweep.h"
#include "gen.h"
#include "order.h"
#include "philox.h"
#include "sum_error.h"

#include <stdlib.h>

/* Keeps the first error of a parallel loop. */
static void first_error(int *st, int e)
{
    if (e == DRIFT_OK) return;
    DRIFT_OMP("omp critical(drift_perm_sweep_error)")
    if (*st == DRIFT_OK) *st = e;
}

int drift_sum_perms_run(drift_sum_perm_t *p, uint64_t seed, const drift_sum_setting_t *S, int ns, size_t n, long perms)
{
    const size_t npc = (size_t)DRIFT_NDISTS * ns;
    int st = DRIFT_OK;
    for (size_t t = 0; t < npc; t++) p[t].bins = NULL;
    DRIFT_OMP("omp parallel")
    {
        double *x = malloc(n * sizeof *x), *xr = malloc(n * sizeof *xr);
        double *res = malloc((size_t)perms * sizeof *res);
        if (!x || !xr || !res) first_error(&st, DRIFT_ENOMEM);
        DRIFT_OMP("omp for schedule(dynamic, 1)")
        for (size_t t = 0; t < npc; t++) {
            if (!x || !xr || !res) continue;
            int d = (int)(t / ns), s = (int)(t % ns);
            drift_sum_perm_t *q = &p[t];
            drift_stream_t rs;
            drift_stream_init(&rs, seed, drift_fnv1a32("sum_order.perms"), (uint32_t)d, 0);
            drift_gen_fill(x, n, (drift_dist_t)d, &rs);
            for (size_t i = 0; i < n; i++) xr[i] = drift_rne(x[i], S[s].in);
            double sa;
            drift_exact_sum_abs(&q->x, &sa, xr, n);
            q->exact = drift_xacc_round(&q->x, DRIFT_FP64, DRIFT_RNE);
            q->cr = drift_xacc_round(&q->x, S[s].acc, DRIFT_RNE);
            q->ulp = drift_ulp(q->exact, S[s].acc);
            drift_acc_t acc = {S[s].acc, DRIFT_RNE, 1};
            q->crcount = 0;
            for (long r = 0; r < perms; r++) {
                drift_order_t o = {DRIFT_ORDER_RANDOM, 0, 0, (seed << 32) + (uint64_t)r, DRIFT_TC_V100};
                first_error(&st, drift_sum(&res[r], xr, n, &o, &acc));
                q->crcount += res[r] == q->cr;
            }
            q->bins = malloc((size_t)perms * sizeof *q->bins);
            if (!q->bins) {
                first_error(&st, DRIFT_ENOMEM);
                continue;
            }
            q->nbins = drift_distinct(q->bins, res, perms);
        }
        free(x);
        free(xr);
        free(res);
    }
    return st;
}
