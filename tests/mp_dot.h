/* mp_dot.h — the exact dot product of doubles in MPFR, for tests that check a library dot
 * against it. The includer defines XPREC, the precision of the products and of m (enough
 * for the sum of K products of doubles to be exact: each product needs 106 bits, and the
 * sum the span of their exponents on top); the asserts fail the test when it is not. */
#ifndef DRIFT_TEST_MP_DOT_H
#define DRIFT_TEST_MP_DOT_H

#include <criterion/criterion.h>
#include <mpfr.h>
#include <stddef.h>

#ifndef XPREC
#error "define XPREC before including mp_dot.h"
#endif

/* exact h . w (h, w any doubles) in m */
static inline void mp_dot(mpfr_t m, const double *h, const double *w, size_t K)
{
    mpfr_t p, a, b;
    mpfr_inits2(XPREC, p, a, b, (mpfr_ptr)0);
    mpfr_set_zero(m, 1);
    for (size_t i = 0; i < K; i++) {
        mpfr_set_d(a, h[i], MPFR_RNDN);
        mpfr_set_d(b, w[i], MPFR_RNDN);
        cr_assert_eq(mpfr_mul(p, a, b, MPFR_RNDN), 0, "exact product");
        cr_assert_eq(mpfr_add(m, m, p, MPFR_RNDN), 0, "exact sum");
    }
    mpfr_clears(p, a, b, (mpfr_ptr)0);
}

#endif
