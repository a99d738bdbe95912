/* argmax_trial.c — one planted trial of the argmax-flip experiments (argmax_run.h) over every
 * format and kernel, on buffers its thread owns. Library code: errors come back as codes. */
#include <math.h>
#include <stdlib.h>

#include "argmax_run.h"
#include "drift.h"
#include "format.h"
#include "lmhead.h"
#include "metrics.h"
#include "philox.h"

#define PRED_EVERY 4 /* the partial-sum prediction is evaluated on every 4th planted pair */

int drift_af_scratch_alloc(drift_af_scratch_t *b, size_t K, size_t wmax)
{
    b->h = malloc(K * sizeof *b->h), b->w1 = malloc(K * sizeof *b->w1), b->w2 = malloc(K * sizeof *b->w2);
    b->hf = malloc(K * sizeof *b->hf), b->W2 = malloc(2 * K * sizeof *b->W2);
    b->pa = malloc(K * sizeof *b->pa), b->pb = malloc(K * sizeof *b->pb);
    b->vt = malloc(drift_flip_model_scratch(K, wmax) * sizeof *b->vt);
    return b->h && b->w1 && b->w2 && b->hf && b->W2 && b->pa && b->pb && b->vt ? 0 : DRIFT_ENOMEM;
}

void drift_af_scratch_free(drift_af_scratch_t *b)
{
    free(b->h), free(b->w1), free(b->w2), free(b->hf), free(b->W2), free(b->pa), free(b->pb), free(b->vt);
}

/* One planted trial i (a pair at a target gap, or an exact tie when i >= nplant) at K = Ks[ki],
 * every format and kernel; the buffers are the calling thread's. */
int drift_aflab_planted_trial(drift_aflab_t *L, int ki, size_t i, size_t nplant, drift_af_scratch_t *sc_)
{
    double *h = sc_->h, *w1 = sc_->w1, *w2 = sc_->w2, *hf = sc_->hf, *W2 = sc_->W2, *pa = sc_->pa, *pb = sc_->pb;
    drift_flip_vv_t *vt = sc_->vt;
    int err_ = 0, *err = &err_;
    const size_t K = L->Ks[ki];
    int is_tie = i >= nplant;
    size_t tgt = is_tie ? 0 : i / (size_t)L->reps, rep = is_tie ? i - nplant : i % (size_t)L->reps;
    drift_stream_t s;
    drift_stream_init(&s, L->cli.seed, drift_fnv1a32(is_tie ? "argmax_flip.tie" : "argmax_flip.planted"),
        (uint32_t)(K * 64 + tgt), (uint32_t)rep);
    double sc, rel = pow(10.0, -7.0 + (double)tgt / DRIFT_AF_PER_DECADE);
    int swap; /* where the top row sits */
    if (drift_gen_planted_pair(h, w1, w2, &sc, &swap, &L->hidden_model[ki], (size_t)L->V, rel, is_tie, &s)) *err |= 1;
    for (int fi = 0; fi < L->nformats && !*err; fi++) {
        double *a = W2 + (swap ? K : 0), *b = W2 + (swap ? 0 : K);
        double p2 = 0;
        drift_plant_t pt;
        if (drift_plant_pair_in(&pt, hf, W2, h, w1, w2, K, rel * sc, swap, is_tie, L->cell[ki][fi].kernels.f))
            *err |= 1;
        for (size_t q = 0; q < K; q++) p2 += hf[q] * hf[q] * (a[q] * a[q] + b[q] * b[q]);
        drift_lmhead_result_t res;
        drift_recipe_t cfg[DRIFT_AF_MAXC];
        for (int c = 0; c < L->cell[ki][fi].kernels.n; c++) cfg[c] = L->cell[ki][fi].kernels.k[c].c;
        if (drift_lmhead_eval_full(&res, hf, W2, 2, K, cfg, L->cell[ki][fi].kernels.n)) {
            *err |= 1;
            break;
        }
        drift_flipset_t *st = is_tie ? &L->cell[ki][fi].ties : &L->cell[ki][fi].planted;
        size_t idx = is_tie ? rep : i;
        drift_flipset_record(st, idx, &res);
        drift_flip_trial_t *t = &st->t[idx];
        t->s = sc;
        t->rel = t->gap / sc;
        t->p2 = p2;
        /* the model's variance of the computed gap (the two logits' errors, independent),
         * on every 4th pair: it only enters an average */
        if (!is_tie && rep % PRED_EVERY == 0) {
            for (size_t q = 0; q < K; q++) {
                pa[q] = hf[q] * a[q]; /* exact: narrow (<= 24-bit) values multiply exactly in double */
                pb[q] = hf[q] * b[q];
            }
            for (int c = 0; c < L->cell[ki][fi].kernels.n; c++)
                st->pvar[idx * st->ncfg + c] =
                    drift_flip_model_var(&cfg[c], pa, K, vt) + drift_flip_model_var(&cfg[c], pb, K, vt);
        }
        t->target = is_tie ? 0 : rel;
        t->steps = pt.steps;
        t->reached = is_tie ? 1 : pt.reached;
    }
    return *err;
}
