/* digest.h — SHA-256 (FIPS 180-4), so that a run's manifest and a sweep share's manifest can
 * be checked with the coreutils `sha256sum` a user already has, and a flipped byte in any
 * result file is caught. */
#ifndef DRIFT_DIGEST_H
#define DRIFT_DIGEST_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t h[8];
    uint64_t nbytes;
    unsigned char block[64];
    size_t fill;
} drift_sha256_t;

void drift_sha256_init(drift_sha256_t *s);
void drift_sha256_update(drift_sha256_t *s, const void *data, size_t n);
/* 64 lowercase hex digits and a NUL into hex. */
void drift_sha256_hex(char hex[65], drift_sha256_t *s);

/* The digest of a whole file (hex) and its size; 0, or -1 when it cannot be read. */
DRIFT_MUST_CHECK int drift_sha256_file(char hex[65], long long *size, const char *path);
/* The same over an open stream, which it reads to the end and closes (fp NULL: -1). */
DRIFT_MUST_CHECK int drift_sha256_stream(char hex[65], long long *size, FILE *fp);

#ifdef __cplusplus
}
#endif

#endif
