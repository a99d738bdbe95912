/* sampling_sweep.c — tokens per step, temperature and sampler (sampling_sweep.h). */
#include "sampling_sweep.h"
#include "drift.h"
#include "exact.h"

#include <math.h>
#include <stdlib.h>

int drift_exact_logits(double *L, const double *H, const double *WT, size_t rows, size_t V, size_t K)
{
    int err = 0;
    DRIFT_OMP("omp parallel reduction(|:err)")
    {
        double *w = malloc(K * sizeof *w);
        if (!w) err = 1;
        DRIFT_OMP("omp for schedule(dynamic, 16)")
        for (size_t v = 0; v < V; v++) {
            if (!w) continue;
            for (size_t i = 0; i < K; i++) w[i] = WT[i * V + v];
            for (size_t r = 0; r < rows; r++) drift_exact_dot(&L[r * V + v], H + r * K, w, K, DRIFT_FP64, DRIFT_RNE);
        }
        free(w);
    }
    return err ? DRIFT_ENOMEM : DRIFT_OK;
}

/* The double softmax w / sum against the correctly rounded one of the same shifted logits. */
static double softmax_diff(const double *l, const double *w, double sum, size_t top, size_t V, double T)
{
    double *x = malloc(V * sizeof *x), *p = malloc(V * sizeof *p), d = 0;
    /* shifted by the max first, as the sampler does (softmax is shift-invariant; the exact
     * reference works on the same doubles the sampler exponentiates). A DRIFT_ERANGE from the
     * exact softmax (Ziv cannot decide a probability that is exactly representable) just skips
     * the check for that temperature. */
    if (x && p) {
        for (size_t v = 0; v < V; v++) x[v] = (l[v] - l[top]) / T;
        if (drift_exact_softmax(p, x, V) == DRIFT_OK)
            for (size_t v = 0; v < V; v++)
                if (p[v] > 1e-300) d = fmax(d, fabs(w[v] / sum - p[v]) / p[v]);
    }
    free(x);
    free(p);
    return d;
}

int drift_sampling_sweep_run(
    size_t *tok, size_t *etok, drift_sf_check_t *chk, const double *L, const drift_sf_sweep_t *w)
{
    const size_t V = w->V, steps = w->rows * (size_t)w->draws;
    int err = 0;
    long ties = 0;
    double check = 0;
    DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:err) reduction(max:check) reduction(+:ties)")
    for (size_t r = 0; r < w->rows; r++) {
        const double *l = L + r * V;
        size_t *order = malloc(V * sizeof *order), *scratch = malloc(V * sizeof *scratch);
        double *wt = malloc(V * sizeof *wt), *e = malloc(V * sizeof *e);
        if (!order || !wt || !scratch || !e) {
            err = 1;
            free(order), free(scratch), free(wt), free(e);
            continue;
        }
        drift_cdf_order(order, scratch, l, V);
        size_t am = drift_cdf_argmax(l, V);
        if (am != order[0]) err = 1; /* the two definitions of "largest, lowest id" agree */
        for (int t = 0; t < w->nt; t++)
            for (int s = 0; s < DRIFT_NCUTS; s++) {
                drift_sampler_t cut = w->cuts[s];
                cut.temperature = w->temps[t];
                double T = cut.temperature, sum = T > 0 ? drift_cdf_weights(wt, l, order, V, &cut) : 0;
                for (long j = 0; j < w->draws; j++) {
                    size_t i = r * w->draws + j;
                    tok[((size_t)t * DRIFT_NCUTS + s) * steps + i] = T == 0 ? am : drift_cdf_draw(wt, V, sum, w->U[i]);
                }
                if (r == 0 && s == DRIFT_CUT_FULL && T >= 1e-3)
                    check = fmax(check, softmax_diff(l, wt, sum, order[0], V, T));
            }
        for (long j = 0; j < w->draws; j++) {
            size_t i = r * w->draws + j;
            drift_draw_key_t key = {w->seed, (uint32_t)r, (uint32_t)j};
            drift_sampler_exponentials(e, V, &key);
            for (int te = 0; te < w->net; te++)
                for (int k = 0; k < w->ne; k++) {
                    drift_sampler_t sm = w->engines[k];
                    sm.temperature = w->etemps[te];
                    size_t tk = 0;
                    if (drift_sampler_draw(&tk, l, V, &sm, e, &key)) err = 1;
                    etok[((size_t)te * w->ne + k) * steps + i] = tk;
                }
        }
        ties += l[order[0]] == l[order[1]];
        free(order), free(scratch), free(wt), free(e);
    }
    chk->top_ties = ties;
    chk->softmax_diff = check;
    return err ? DRIFT_EINVAL : DRIFT_OK;
}
