/* fuzz/format.c — format names: what parses is a format whose name parses to itself. */
#include "common.h"
#include "format.h"
#include "drift.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s) return 0;
    drift_format_t f, back;
    if (drift_format_parse(&f, s) == DRIFT_OK) {
        if ((unsigned)f >= DRIFT_NFORMATS) abort();
        if (drift_format_parse(&back, drift_format_name(f)) != DRIFT_OK || back != f) abort();
    }
    free(s);
    return 0;
}
