/* sha256.h: SHA-256 (FIPS 180-4) of a file, so that every witness record names the exact
 * GGUF and prompt file it was made from. Small and self-contained on purpose: the witness
 * program links only llama.cpp and libc. */
#ifndef DRIFT_PEERS_SHA256_H
#define DRIFT_PEERS_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];
    uint64_t nbytes;
    unsigned char block[64];
    size_t fill;
} witness_sha256;

void witness_sha256_init(witness_sha256 *s);
void witness_sha256_update(witness_sha256 *s, const void *data, size_t n);
/* hex: 65 bytes (64 digits + NUL). */
void witness_sha256_final(witness_sha256 *s, char hex[65]);
/* 0 on success, -1 when the file cannot be read (hex then holds "unreadable"). */
int witness_sha256_file(const char *path, char hex[65]);

#endif
