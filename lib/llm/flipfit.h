/* flipfit.h — the flip law a configuration's mechanism implies, fitted to a flip set, with
 * critical gaps at which flips can occur.
 *
 * Which law (fliplaw.h): a configuration whose logits are the exact dot product rounded once
 * (exact/-/OUT) has only output rounding: TRIANGLE. One whose logits land on a grid coarser
 * than its accumulation noise — stored in a narrower format than the accumulator, or
 * accumulated in a narrow format (bf16/fp16 accumulators) — has both: CONV. Otherwise
 * (fp32 accumulation, logits kept in the accumulator) only accumulation noise: GAUSS.
 * All three laws are fitted anyway, and the implied law is held against the Gaussian (or,
 * for GAUSS, against the triangle) with the power of the comparison stated.
 *
 * Units: gaps relative to each pair's logit scale s (rel = gap / s), and q = the output
 * format's spacing at the pair's larger-magnitude logit, ulp_out(max(|l1|, |l2|)) / s (the top
 * logit when logits are positive; for negative logits the lower one has the larger spacing). Critical gaps D_P (P = 0.1%, 1%)
 * come from the implied law at its parameter as fitted (never moved to a boundary or to a value
 * its interval contains) and the median q: in units of s and of output ulps
 * (D / q_med). For TRIANGLE they are below one output ulp by construction; a
 * GAUSS critical gap is a gap at which flips occur with probability P in that model. */
#ifndef DRIFT_FLIPFIT_H
#define DRIFT_FLIPFIT_H

#include "drift.h"
#include "fliplaw.h"
#include "flips.h"
#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    drift_fliplaw_t implied;
    drift_fliplaw_fit_t fit[DRIFT_FLIPLAW_N]; /* gauss, triangle, conv (conv only when implied:
                                                 status EMPTY otherwise) */
    drift_fliplaw_t rival;                    /* the law the implied one is held against */
    drift_fliplaw_choice_t choice;            /* implied (A) against rival (B) */
    double q_med;                             /* median ulp_out(l1) / s */
    double d001, d01;                         /* critical gaps / s, implied law; NAN without a fit */
    double d001_ulp, d01_ulp;                 /* the same in output ulps */
    long pairs, flips;
} drift_flip_laws_t;

/* The law implied by a configuration: exact = 1 for exact/-/OUT; acc and out the accumulator
 * and logit formats (for tc:ARCH the tensor core's output format as acc). */
drift_fliplaw_t drift_flip_implied_law(int exact, drift_format_t acc, drift_format_t out);

/* Fits configuration c of flip set s (trials with a positive finite gap and s > 0; exact ties
 * excluded) with q from the logit format `out`. bins (over rel) group the goodness of fit.
 * 0, DRIFT_EINVAL or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_flipset_laws(drift_flip_laws_t *L, const drift_flipset_t *s, int c, drift_fliplaw_t implied,
    drift_format_t out, const drift_logbins_t *bins);

#ifdef __cplusplus
}
#endif

#endif
