/* common.h — what every fuzz target shares: the input as a NUL-terminated string. */
#ifndef DRIFT_FUZZ_COMMON_H
#define DRIFT_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A copy of the bytes with a NUL after them (parsers take C strings); NULL when too long for
 * any option (keeps the fuzzer on the grammar, not on malloc). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    if (size > 4096) return NULL;
    char *s = malloc(size + 1);
    if (!s) return NULL;
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

#endif
