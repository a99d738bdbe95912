/* exact_impl.h — what the three exact_*.c files share, and nothing else includes. */
#ifndef DRIFT_EXACT_IMPL_H
#define DRIFT_EXACT_IMPL_H

#include <stdint.h>
#include <string.h>

#include "exact.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The sign of an exact zero result (IEEE 754 6.3), kept in drift_xacc_t.zstate. */
enum { ZS_EMPTY = 0, ZS_NEGZERO = 1, ZS_POSZERO = 2, ZS_OTHER = 3 };

static inline uint64_t exact_dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline int exact_mode_ok(drift_format_t f, drift_mode_t m)
{
    return (unsigned)f < DRIFT_NFORMATS && (unsigned)m < DRIFT_NMODES && m != DRIFT_SR;
}

/* n MPFR numbers in one allocation (mpfr's custom interface), so that the MPFR paths are
 * timed on arithmetic, not on a million mallocs. */
typedef struct {
    mpfr_t *v;
    mpfr_ptr *p;
    void *mem;
} mpfr_vec_t;

#ifdef __cplusplus
}
#endif

#endif
