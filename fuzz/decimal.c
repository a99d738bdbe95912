/* fuzz/decimal.c — the exact decimal reader (decimal.h) in every format and mode: a valid
 * string rounds in each, and the rounded value is a value of the format. */
#include "common.h"
#include "decimal.h"
#include "format.h"
#include "drift.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    char *s = fuzz_string(data + 1, size - 1);
    if (!s) return 0;
    drift_format_t f = (drift_format_t)(data[0] % DRIFT_NFORMATS);
    drift_round_opts_t o = {(drift_mode_t)((data[0] / DRIFT_NFORMATS) % 5), 0, 0};
    double x;
    int valid = drift_decimal_valid(s);
    int rc = drift_decimal_round(&x, s, f, &o, 0);
    if ((rc == DRIFT_OK) != valid) abort();
    if (rc == DRIFT_OK && !isnan(x) && drift_rne(x, f) != x) abort(); /* already in the format */
    free(s);
    return 0;
}
