/* fuzz/order.c — the order grammar: parse, and what parses prints and parses back equal. */
#include "common.h"
#include "order.h"
#include "drift.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s) return 0;
    drift_order_t o, back;
    if (drift_order_parse(&o, s) == DRIFT_OK) {
        char spec[DRIFT_ORDER_SPEC_MAX];
        drift_order_print(spec, sizeof spec, &o);
        if (drift_order_parse(&back, spec) != DRIFT_OK || !drift_order_equal(&o, &back)) abort();
    }
    free(s);
    return 0;
}
