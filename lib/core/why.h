/* why.h — how a library function explains an error: the message goes into the caller's buffer
 * (when it gave one; truncated to fit) and the code comes back, so that
 *     return drift_why(err, errsz, DRIFT_EINVAL, "--device: unknown device '%s'", name);
 * is one line. Library code never prints (drift.h); programs print the buffer. */
#ifndef DRIFT_WHY_H
#define DRIFT_WHY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

int drift_why(char *err, size_t errsz, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A failed allocation said so that the user knows which size to lower:
 *     return drift_why_oom(err, errsz, 8.0 * V * K, "the %d x %zu logits", V, K);
 * gives "out of memory allocating the 49152 x 576 logits (226 MB)" and returns DRIFT_ENOMEM.
 * fmt names what was being allocated, with its shape; bytes is its size. */
int drift_why_oom(char *err, size_t errsz, double bytes, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* bytes in decimal units, "226 MB", "1.5 GB", "12 KB", "0 B". */
void drift_bytes_text(char *buf, size_t size, double bytes);

#ifdef __cplusplus
}
#endif

#endif
