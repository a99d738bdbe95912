/* cdf_sampler.h — the plain inverse-CDF sampler, identical for every numerics so that only the
 * logits differ: the candidates are all tokens (full), the k largest logits (top-k; equal
 * logits ordered by token id), or the fewest largest whose probabilities reach p (top-p); the
 * weights are exp((l_v - l_max)/T) in double for the candidates and 0 for the rest; the sampled
 * token is the first v in token-id order whose running sum of weights exceeds u * (sum of
 * weights), as torch.multinomial over a masked vocabulary does. T = 0 is the argmax (the lowest
 * id among equal maxima) and builds no distribution. (The engines' samplers are sampler.h.) */
#ifndef DRIFT_CDF_SAMPLER_H
#define DRIFT_CDF_SAMPLER_H

#include <stddef.h>

typedef enum { DRIFT_CUT_FULL, DRIFT_CUT_TOPK, DRIFT_CUT_TOPP, DRIFT_NCUTS } drift_cut_t;

typedef struct {
    drift_cut_t cut;
    size_t topk; /* top-k's k */
    double topp; /* top-p's p */
} drift_cdf_sampler_t;

/* "full", "top-k", "top-p". */
const char *drift_cut_name(drift_cut_t c);
/* The argmax of l[0..V) with the lowest id among equal maxima. */
size_t drift_cdf_argmax(const double *l, size_t V);
/* order = the token ids by decreasing logit, ties by increasing id (a total order, so the
 * result is unique); scratch holds V ids. */
void drift_cdf_order(size_t *order, size_t *scratch, const double *l, size_t V);
/* Fills w (per token id) for temperature T > 0; returns the sum of the weights. */
double drift_cdf_weights(double *w, const double *l, const size_t *order, size_t V, double T, const drift_cdf_sampler_t *s);
/* The first v in token-id order whose running sum of w exceeds u * sum (the last candidate
 * when u * sum rounds up to the total). */
size_t drift_cdf_draw(const double *w, size_t V, double sum, double u);

#endif
