/* flipfit.c — the implied flip law of a configuration, fitted to its flip set (flipfit.h). */
#include "flipfit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "stats.h"

drift_fliplaw_t drift_flip_implied_law(int exact, drift_format_t acc, drift_format_t out)
{
    if (exact) return DRIFT_FLIPLAW_TRIANGLE;
    const drift_format_info_t *a = drift_format_info(acc), *o = drift_format_info(out);
    if (!a || !o) return DRIFT_FLIPLAW_GAUSS;
    if (o->p < a->p || a->p <= 11) return DRIFT_FLIPLAW_CONV; /* a coarse grid: bf16/fp16 logits or accumulators */
    return DRIFT_FLIPLAW_GAUSS;
}

int drift_flipset_laws(drift_flip_laws_t *L, const drift_flipset_t *s, int c, drift_fliplaw_t implied,
    drift_format_t out, const drift_logbins_t *bins)
{
    if (!L || !s || c < 0 || c >= s->ncfg || (unsigned)implied >= DRIFT_FLIPLAW_N) return DRIFT_EINVAL;
    memset(L, 0, sizeof *L);
    L->implied = implied;
    L->d001 = L->d01 = L->d001_ulp = L->d01_ulp = L->q_med = NAN;
    size_t n = s->n;
    double *gap = malloc((n ? n : 1) * sizeof *gap), *q = malloc((n ? n : 1) * sizeof *q);
    unsigned char *flip = malloc(n ? n : 1);
    if (!gap || !q || !flip) {
        free(gap), free(q), free(flip);
        return DRIFT_ENOMEM;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const drift_flip_trial_t *t = &s->t[i];
        if (t->tie || !(t->gap > 0) || !(t->s > 0) || !isfinite(t->gap)) continue;
        gap[m] = t->gap / t->s;
        /* the spacing of the pair's larger-magnitude logit: the top one when logits are
         * positive, the other when they are negative (no flip beyond it either way) */
        q[m] = drift_ulp(fmax(fabs(t->l1), fabs(t->l1 - t->gap)), out) / t->s;
        flip[m] = s->flip[i * (size_t)s->ncfg + (size_t)c];
        L->flips += flip[m];
        m++;
    }
    L->pairs = (long)m;
    int rc = DRIFT_OK;
    /* the convolution (the slow law: Psi differences) only where the mechanism implies it */
    for (int law = 0; law < DRIFT_FLIPLAW_N && !rc; law++)
        if (law != DRIFT_FLIPLAW_CONV || implied == DRIFT_FLIPLAW_CONV)
            rc = drift_fliplaw_fit(&L->fit[law], (drift_fliplaw_t)law, gap, q, flip, m, bins);
        else
            L->fit[law].law = DRIFT_FLIPLAW_CONV, L->fit[law].status = DRIFT_FIT_EMPTY, L->fit[law].theta = NAN;
    if (!rc && m) {
        rc = drift_median(&L->q_med, q, m);
        L->rival = implied == DRIFT_FLIPLAW_GAUSS ? DRIFT_FLIPLAW_TRIANGLE : DRIFT_FLIPLAW_GAUSS;
        if (!rc) rc = drift_fliplaw_choose(&L->choice, &L->fit[implied], &L->fit[L->rival], gap, q, flip, m);
        const drift_fliplaw_fit_t *F = &L->fit[implied];
        if (!rc && (F->status == DRIFT_FIT_OK || F->status == DRIFT_FIT_SEPARATED || F->status == DRIFT_FIT_NO_FLIPS)) {
            /* no flips: the 95% upper bound of the parameter gives upper bounds on the gaps */
            double th = F->status == DRIFT_FIT_NO_FLIPS ? F->hi : F->theta;
            /* the gaps come from the parameter as fitted, never moved to a value its interval
             * merely contains (kappa = 1, sigma = 0): the interval is reported beside it */
            double sigma = implied == DRIFT_FLIPLAW_TRIANGLE ? 0 : th;
            double qq = implied == DRIFT_FLIPLAW_TRIANGLE ? th * L->q_med : L->q_med;
            if (isfinite(th)) {
                L->d001 = drift_fliplaw_gap_at(implied, sigma, qq, 0.001);
                L->d01 = drift_fliplaw_gap_at(implied, sigma, qq, 0.01);
                L->d001_ulp = L->d001 / L->q_med;
                L->d01_ulp = L->d01 / L->q_med;
            }
        }
    }
    free(gap), free(q), free(flip);
    return rc;
}
