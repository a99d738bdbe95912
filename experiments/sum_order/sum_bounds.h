/* sum_bounds.h — the error-vs-n sweep (sum_sweep.h) summarised: per (distribution, setting,
 * order, n) the mean and max over trials of error / sum|x| and the mean relative error, set
 * against the deterministic bound gamma_k sum|x| (Higham) and the probabilistic bound
 * ~lambda sqrt(k) u sum|x| (Higham & Mary 2019; order.h), with the growth exponent of the
 * mean error in n and a tally of how often each bound held. */
#ifndef DRIFT_SUM_BOUNDS_H
#define DRIFT_SUM_BOUNDS_H

#include "sum_sweep.h"

typedef struct {
    double mean_e, max_e, mean_rel; /* error / sum|x| (mean, max), relative error (mean) */
    double det, prob, p;            /* the bounds on error / sum|x|; p: the probability the second holds */
    int overflow;                   /* trials whose sum overflowed */
} drift_sum_summary_t;

typedef struct {
    long det_ok, det_total, prob_ok, prob_total, overflow;
    /* probabilistic-bound failures with an accumulator of at most 11 bits (bf16, fp16), and
     * those of them whose relative error reached 1/4: stagnation, where the bound's model of
     * independent mean-zero roundings does not apply */
    long prob_fail_narrow, prob_fail_stagnant;
} drift_sum_tally_t;

/* The smallest multiple of 0.01 with drift_bound_prob(lambda, n, u) >= target (and hence at
 * every smaller n or u). */
double drift_sum_lambda(size_t n, double u, double target);

/* sm[((d * ns + s) * no + o) * nn + li] and slope[(d * ns + s) * no + o] (nn = log2_max -
 * log2_min + 1): the slope is the least-squares growth exponent of the mean error / sum|x|
 * in n over n >= 2^slope_from (finite, non-zero points; NaN with fewer than 3). */
void drift_sum_summarise(drift_sum_summary_t *sm, double *slope, drift_sum_tally_t *tally,
    const drift_sum_cell_t *cells, const drift_sum_sweep_t *w, double lambda, int slope_from);

#endif
