/* witness.h — a real number held exactly (its witness, MPFR) and what a format makes of it:
 * the value read from text, rounded once to the format, and the error of a stored or computed
 * value against the witness, every error rounded up (never reported smaller than it is).
 * Used by the formats experiment (teaching values) and formats_relerr (random reals). */
#ifndef DRIFT_WITNESS_H
#define DRIFT_WITNESS_H

#include <mpfr.h>

#include "drift.h"
#include "format.h"

/* Precision of a witness: far above fp64's 53 bits, so every format's rounding of it shows.
 * Differences of a result and a witness need the span of both on top, hence twice that. */
#define DRIFT_WITNESS_PREC 256
#define DRIFT_WITNESS_DIFF_PREC 512

/* Reads one number into out (initialised by the caller): "pi", "N/D" (each part a number), or
 * anything mpfr_strtofr reads whole (decimal, 0x hex). 0 or DRIFT_EINVAL. */
DRIFT_MUST_CHECK int drift_witness_read(mpfr_t out, const char *s);

/* x rounded once to f in round-to-nearest-even, through the library's rounder: first to odd at
 * 53 bits (MPFR, toward zero plus a sticky last bit), which makes the second rounding to any
 * p <= 51 equal to the direct one (Boldo & Melquiond). */
double drift_witness_round(mpfr_srcptr x, drift_format_t f);

/* The spacing of f at the exact value x: 2^(max(e, emin) - p + 1), e = floor(log2 |x|). */
double drift_witness_ulp(mpfr_srcptr x, drift_format_t f);

typedef struct {
    double result;
    drift_class_t cls;
    const char *dir;                  /* exact | up | down | overflow */
    double abs_err, rel_err, ulp_err; /* rounded up */
    int below_normal;                 /* the real |x| < f's smallest normal (zero included) */
} drift_stored_t;

/* The error of result (a member of f) against the witness x. diff (DRIFT_WITNESS_DIFF_PREC bits)
 * and q (53 bits) are the caller's scratch, so that a loop allocates nothing. */
void drift_witness_error(drift_stored_t *c, double result, mpfr_srcptr x, drift_format_t f, mpfr_ptr diff, mpfr_ptr q);

#endif
