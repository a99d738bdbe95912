/* stored_summary.h — the random reals of one format, counted and their worst relative errors
 * kept, by where the real lies: what formats_relerr asks of the u = 2^-p bound. */
#ifndef DRIFT_STORED_SUMMARY_H
#define DRIFT_STORED_SUMMARY_H

#include "witness.h"

/* Errors of many reals stored in one format, classified by the real x, not by what it became:
 * the u = 2^-p bound is about reals in the normal range, and a real just below the smallest
 * normal that rounds up to it is rounded at the subnormal spacing. Zero-initialise, then add
 * each. */
typedef struct {
    long n_normal;         /* reals in the normal range, stored finite */
    long n_below;          /* reals below the smallest normal, stored non-zero */
    long n_zero;           /* reals below the smallest normal, stored as zero */
    long n_overflow;       /* stored as inf or NaN */
    double max_rel_normal; /* the largest relative error of a real in the normal range */
    double max_rel_below;  /* the largest of a real below the smallest normal, stored non-zero */
} drift_stored_summary_t;

void drift_stored_summary_add(drift_stored_summary_t *s, const drift_stored_t *c);

#endif
