/* sha256.h — SHA-256 (FIPS 180-4), so that a share's manifest can be checked with the
 * coreutils `sha256sum` a user already has, and a flipped byte in any result file is caught. */
#ifndef DRIFT_SWEEP_SHA256_H
#define DRIFT_SWEEP_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];
    uint64_t nbytes;
    unsigned char block[64];
    size_t fill;
} sweep_sha256_t;

void sweep_sha256_init(sweep_sha256_t *s);
void sweep_sha256_update(sweep_sha256_t *s, const void *data, size_t n);
/* 64 lowercase hex digits and a NUL into hex. */
void sweep_sha256_hex(char hex[65], sweep_sha256_t *s);

/* The digest of a whole file (hex) and its size; 0, or -1 when it cannot be read. */
int sweep_sha256_file(char hex[65], long long *size, const char *path);

#endif
