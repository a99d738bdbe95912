/* calc_exact.c — `drift-calc exact FILE|-`: the correctly rounded sum of your numbers, the
 * witness every other sum is measured against.
 *
 * FILE (or stdin for "-") has one value per line: decimal or C99 hex float (strtod
 * syntax), inf, nan; blank lines and lines starting with '#' are skipped (calc_input.h).
 * Prints CSV on stdout:
 *   n,exact_hex,exact
 * where exact is the exact real sum of the values rounded once to double, nearest-even
 * (drift_exact_sum: superaccumulator, proved equal to MPFR's mpfr_sum by the tests),
 * exact_hex in C99 hex (%a) and exact in %.17g (enough digits to read it back).
 * Errors (unreadable file, no values, a line that is not a number, reported as
 * file:line): one line on stderr, exit status 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "calc_input.h"
#include "cli.h"
#include "drift.h"
#include "exact.h"

static void usage(FILE *to)
{
    fprintf(to, "usage: drift-calc exact FILE|-\n"
                "  FILE   one value per line (decimal or C99 hex float, inf, nan); '#' lines and blank lines\n"
                "         are skipped; '-' reads stdin\n"
                "prints CSV: n,exact_hex,exact (the exact sum rounded once to double, nearest-even)\n");
}

int calc_exact(int argc, char **argv)
{
    const char *file = NULL;
    if (drift_args_parse(NULL, 0, &file, 1, argc, argv, usage) != 1)
        drift_die("expected exactly one FILE (or - for stdin), got none (usage: exact FILE|-)");

    double *x;
    size_t n;
    if (calc_read_values(file, &x, &n) != 0) return 2;
    double s;
    int rc = drift_exact_sum(&s, x, n, DRIFT_FP64, DRIFT_RNE);
    free(x);
    if (rc != 0) drift_die("%s: %s", file, drift_strerror(rc));
    printf("n,exact_hex,exact\n%zu,%a,%.17g\n", n, calc_nan(s), calc_nan(s));
    return 0;
}
