/* tie_demo.h — a planted exact tie at the top of a small head, sampled at a tiny temperature:
 * temperature 1e-8 is not greedy. Two of 64 tokens get exactly equal exact logits well above
 * the others; greedy (T = 0) takes the lower id, while softmax(l / 1e-8) gives each exactly
 * 1/2 (exp(0) = 1 for both, exp(-gap/1e-8) = 0 in double for the others, whose gaps are ~s:
 * also the correctly rounded value of the exact 1/(2 + sum e^(-gap/T))), so the uniform
 * decides. */
#ifndef DRIFT_TIE_DEMO_H
#define DRIFT_TIE_DEMO_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "format.h"
#include "gen_logits.h"

#define DRIFT_TIE_DEMO_V 64

typedef struct {
    size_t a, b;   /* the tied pair (a < b) */
    double la, lb; /* exact logits (equal) */
    double pa, pb; /* the sampler's probabilities at T = 1e-8 */
    long n_b;      /* draws that picked b at T = 1e-8 */
    size_t greedy; /* T = 0 */
} drift_tie_demo_t;

/* Tie q: the head from the stream (seed, tie_stream, K, q), inputs rounded to f, exact logits;
 * draws uniforms from the streams (seed, u_stream, q, j), drawn by the inverse CDF
 * (sampler.h's plain sampler, full). 0 or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_tie_demo(drift_tie_demo_t *t, const drift_hidden_model_t *model, size_t K, drift_format_t f,
    uint64_t seed, uint32_t tie_stream, uint32_t u_stream, long q, long draws);

#endif
