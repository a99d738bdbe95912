/* test_stored_summary.c — the random reals counted by where the real lies (stored_summary.h).
 * Expected values are derived by hand next to each case from fp16's parameters. */
#include <criterion/criterion.h>
#include <math.h>

#include "drift.h"
#include "stored_summary.h"
#include "witness.h"

Test(stored_summary, classifies_by_the_real)
{
    /* fp16: p = 11, smallest normal 2^-14, subnormal spacing 2^-24, largest finite 65504.
     * X[2] = 2^-14 - 2^-25 + 2^-40 lies just above the tie between 1023 and 1024 times 2^-24,
     * so it goes up to 2^-14, a normal; but the real is below the normal range, and its
     * relative error (2^-25 - 2^-40) / X[2] = 1.00046 u is above u. */
    static const char *const X[] = {
        "0.1",             /* normal range: 0x1.998p-4, error 1/40960, relative 2^-12 = u/2 */
        "0x1p-14",         /* the smallest normal itself: exact, in the normal range */
        "0x1.ffc0008p-15", /* below the normal range, stored as the normal 2^-14 */
        "0x1p-20",         /* a subnormal, exact: below the normal range, not zero */
        "0x1p-26",         /* below half the smallest subnormal: zero */
        "65520",           /* the overflow tie: inf */
    };
    mpfr_t x, d, q;
    mpfr_init2(x, DRIFT_WITNESS_PREC);
    mpfr_init2(d, DRIFT_WITNESS_DIFF_PREC);
    mpfr_init2(q, 53);
    drift_stored_summary_t s = {0};
    drift_stored_t c[6];
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(drift_witness_read(x, X[i]), 0);
        drift_witness_error(&c[i], drift_witness_round(x, DRIFT_FP16), x, DRIFT_FP16, d, q);
        drift_stored_summary_add(&s, &c[i]);
    }
    cr_assert(!c[0].below_normal && !c[1].below_normal && c[2].below_normal && c[3].below_normal && c[4].below_normal);
    /* the case the stored value misclassifies: stored as the normal 2^-14, its error above u */
    cr_assert(c[2].result == 0x1p-14 && c[2].cls == DRIFT_CLASS_NORMAL && c[2].rel_err > 0x1p-11);
    cr_assert(s.n_normal == 2 && s.n_below == 2 && s.n_zero == 1 && s.n_overflow == 1);
    cr_assert(s.max_rel_normal >= 0x1p-12 && s.max_rel_normal <= nextafter(0x1p-12, 1)); /* 0.1's */
    cr_assert_eq(s.max_rel_below, c[2].rel_err);
    mpfr_clears(x, d, q, (mpfr_ptr)0);
}
