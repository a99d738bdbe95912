/* decimal.h — read a number the way the user wrote it and round it once.
 *
 * strtod followed by drift_round rounds twice (first to double, then to the format), so
 * fp16("1.00048828125000000000001") became 1 instead of 1 + 2^-10. These functions
 * take the exact value of the string and round it once to the format. */
#ifndef DRIFT_DECIMAL_H
#define DRIFT_DECIMAL_H

#include <stdint.h>

#include "drift.h"
#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Accepted syntax (the whole string, no surrounding blanks): an optional sign, then a
 * decimal ("12", "1.5", ".5", "1e-3", "2.5E+10"), a C99 hex float ("0x1.8p+3", "0x10"),
 * "inf", "infinity" or "nan" (any case). Returns DRIFT_EINVAL for anything else.
 *
 * *out is the exact value of s rounded once to f with o (NULL = RNE, subnormals kept,
 * overflow to inf): values beyond the format's range overflow as the mode says (1e309
 * is inf in fp64 RNE, DBL_MAX in RZ); tiny values underflow to subnormals or zero.
 * sr_bits is used only by DRIFT_SR (as in drift_round; the fraction is that of the exact
 * value for fp64 and of a round-to-odd 53-bit value, correct to 2^-29, for the others). */
DRIFT_MUST_CHECK int drift_decimal_round(
    double *out, const char *s, drift_format_t f, const drift_round_opts_t *o, uint32_t sr_bits);

/* 1 if s has the syntax above, else 0. */
int drift_decimal_valid(const char *s);

#ifdef __cplusplus
}
#endif

#endif
