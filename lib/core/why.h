/* why.h — how a library function explains an error: the message goes into the caller's buffer
 * (when it gave one; truncated to fit) and the code comes back, so that
 *     return drift_why(why, size, DRIFT_EINVAL, "--device: unknown device '%s'", name);
 * is one line. Library code never prints (drift.h); programs print the buffer. */
#ifndef DRIFT_WHY_H
#define DRIFT_WHY_H

#include <stddef.h>

int drift_why(char *why, size_t size, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
