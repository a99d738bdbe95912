/* parting.h — where two greedy completions of the same prompt part, and how close to a tie
 * the exact model was there (the same model on different GPU generations; the same
 * question as greedy_divergence's, for any two numerics).
 *
 * Two completions a and b of one prompt (greedy, with every step's logits) agree
 * on tokens 0 .. t-1 and differ at t, the parting step. Both computed step t on the same
 * context (prompt + the common t tokens), so their logits there differ only by numerics:
 * spread = max_v |a_v - b_v|. The exact reference (an exact model, model.h) teacher-forced
 * on that context gives the exact logits E there: gap_ab = E[tok_a] - E[tok_b] and the exact
 * top-1/top-2 gap. Each completion picked its own token, so a_ta >= a_tb and b_tb >= b_ta;
 * with d = computed - exact this means |gap_ab| <= max(|d_a[ta] - d_a[tb]|, |d_b[ta] -
 * d_b[tb]|) <= 2 dev, dev = the larger deviation of a or b from E at that step: a flip can
 * only happen where the exact gap is within the numerics' error. Both generations may share
 * most of that error (inputs rounded to the same format), so spread can be well below dev. */
#ifndef DRIFT_PARTING_H
#define DRIFT_PARTING_H


#include <stddef.h>

#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif
/* the model (model.h), opaque here: callers of the parting analysis need not see its layers */
typedef struct drift_model drift_model_t;

/* Exact (or any) logits of prefixes, each prefix's steps computed once: the model is fed one
 * token per step in slot 0, and a prefix that shares its first tokens with the one scored
 * last resumes after them (the model's cache is cut back, model.h). */
typedef struct {
    drift_model_t *m;
    int V, cap, len; /* vocabulary, context length, tokens of seq scored into logits */
    int *seq;        /* cap tokens */
    double *logits;  /* cap x V: row k = the logits after seq[0 .. k] */
    long steps;      /* forward steps run so far (cost accounting) */
} drift_prefix_logits_t;

/* Over model m (not owned; must outlive p). 0 or DRIFT_EINVAL / DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_prefix_logits_init(drift_prefix_logits_t *p, drift_model_t *m);
void drift_prefix_logits_free(drift_prefix_logits_t *p);
/* *out = the logits (V values, valid until the next call) after seq[0 .. n-1], 1 <= n <= cap.
 * 0 or DRIFT_EINVAL, or the model's error. */
DRIFT_MUST_CHECK int drift_prefix_logits(const double **out, drift_prefix_logits_t *p, const int *seq, int n);

typedef struct {
    int step;         /* parting step (0-based generated token), -1: identical completions */
    int tok_a, tok_b; /* the tokens a and b generated there */
    double spread;    /* max_v |a_v - b_v| at the parting step */
    double dev;       /* max_v of |a_v - E_v| and |b_v - E_v| there: the numerics' error */
    double gap_ab;    /* exact E[tok_a] - E[tok_b] */
    double gap12;     /* exact top-1 - top-2 (>= |gap_ab| unless a or b took neither) */
    int exact_top1;   /* the exact argmax there (first maximum) */
} drift_parting_t;

/* First index < n where x and y differ, or -1. */
int drift_first_difference(const int *x, const int *y, int n);

/* The parting of completions a and b (n tokens each: tok_*, and la, lb the n x V logits of
 * their steps, the logits row k giving token k) of prompt (np tokens); V = the vocabulary;
 * exact = the exact model's prefix logits (NULL: gap_ab, gap12, dev NAN, exact_top1 -1). la
 * or lb NULL: spread and dev NAN. For identical completions only step = -1 is set (the rest NAN / -1).
 * 0 or DRIFT_EINVAL / DRIFT_ENOMEM, or the model's error. */
DRIFT_MUST_CHECK int drift_parting(drift_parting_t *out, const int *tok_a, const double *la, const int *tok_b,
    const double *lb, int n, int V, const int *prompt, int np, drift_prefix_logits_t *exact);

/* A summary of partings p[0 .. n-1] (pointers; those with step < 0 are skipped): their count,
 * the parting steps' min / median / max, the exact top-1/top-2 gaps' median and max, the
 * medians of spread and dev; within = partings with |gap_ab| <= 2 dev (all, unless the
 * exact reference or the logits are inconsistent), exact_among = partings whose exact argmax
 * is tok_a or tok_b. No parting: n = 0, the values NAN (steps -1). 0 or DRIFT_EINVAL /
 * DRIFT_ENOMEM. */
typedef struct {
    size_t n, within, exact_among;
    int step_min, step_max;
    double step_median, gap12_median, gap12_max, spread_median, dev_median;
} drift_parting_summary_t;
DRIFT_MUST_CHECK int drift_parting_summary(drift_parting_summary_t *s, const drift_parting_t *const *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif
