/* fuzz/number.c — the options' strict numbers (cli.h): no blank, no '+', the whole string. */
#include "common.h"
#include "cli.h"
#include "drift.h"

#include <ctype.h>
#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s) return 0;
    long v;
    double d;
    int okl = drift_parse_long(&v, s) == DRIFT_OK, okd = drift_parse_double(&d, s) == DRIFT_OK;
    /* what either accepts starts with a digit, '.', or '-' (or inf/nan for doubles) */
    if ((okl || okd) && (isspace((unsigned char)s[0]) || s[0] == '+')) abort();
    if (okd && isinf(d) && !strpbrk(s, "iI")) abort(); /* overflow is refused */
    free(s);
    return 0;
}
