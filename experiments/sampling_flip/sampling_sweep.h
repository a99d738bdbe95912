/* sampling_sweep.h — the tokens a sampler draws from one set of logits, for every step (hidden
 * state r, draw j) at every temperature: the plain inverse-CDF sampler with each cut on the
 * fixed uniforms U, and the engines' samplers on randomness
 * keyed by (seed, r, j). Both are shared by every numerics, so that only the logits differ. */
#ifndef DRIFT_SAMPLING_SWEEP_H
#define DRIFT_SAMPLING_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "sampler.h"

typedef struct {
    size_t rows, V;
    long draws;
    const double *U; /* rows x draws uniforms */
    uint64_t seed;   /* the engines' keyed randomness */
    const double *temps;
    int nt;                      /* the inverse-CDF temperatures (0: argmax) */
    const drift_sampler_t *cuts; /* the plain sampler: DRIFT_NCUTS of them, in drift_cut_t order */
    const drift_sampler_t *engines;
    int ne;
    const double *etemps; /* the engines' temperatures */
    int net;
} drift_sf_sweep_t;

typedef struct {
    long top_ties;       /* rows whose two largest logits are equal */
    double softmax_diff; /* largest relative difference of the double softmax from the correctly
                          * rounded one (drift_exact_softmax; row 0, full, T >= 1e-3) */
} drift_sf_check_t;

/* Exact logits L (rows x V) of H (rows x K) and WT (K x V): each dot correctly rounded to double. 0 or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_exact_logits(double *L, const double *H, const double *WT, size_t rows, size_t V, size_t K);

/* tok[(t * DRIFT_NCUTS + cut) * steps + r * draws + j] and etok[(te * ne + k) * steps + ...]
 * for the logits L (rows x V). 0, DRIFT_ENOMEM, or DRIFT_EINVAL (an inconsistency: the
 * argmax disagrees with the sort, or an engine's sampler failed). */
DRIFT_MUST_CHECK int drift_sampling_sweep_run(
    size_t *tok, size_t *etok, drift_sf_check_t *chk, const double *L, const drift_sf_sweep_t *w);

#endif
