/* npy_write.c — drift_npy_write_f64 (npy_write.h). */
#include "npy_write.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "drift.h"
#include "table.h"

int drift_npy_write_f64(const char *path, const double *x, const size_t *shape, int ndim, char *err, size_t errsz)
{
    if (!path || !x || !shape || ndim < 1 || ndim > 8) {
        snprintf(err, errsz, "%s: an array of 1 to 8 dimensions is needed", path ? path : "(null)");
        return DRIFT_EINVAL;
    }
    char h[256];
    size_t at = (size_t)snprintf(h, sizeof h, "{'descr': '<f8', 'fortran_order': False, 'shape': (");
    size_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 1 || n > SIZE_MAX / 8 / shape[d]) {
            snprintf(err, errsz, "%s: dimension %d of the array is %zu", path, d, shape[d]);
            return DRIFT_EINVAL;
        }
        n *= shape[d];
        at += (size_t)snprintf(h + at, sizeof h - at,
            ndim == 1      ? "%zu,), }"
            : d + 1 < ndim ? "%zu, "
                           : "%zu), }",
            shape[d]);
    }
    /* magic (6) + version (2) + length (2) + header, padded with spaces, ending in '\n', to 64 */
    size_t total = 10 + at + 1, pad = (64 - total % 64) % 64;
    memset(h + at, ' ', pad);
    h[at + pad] = '\n';
    size_t hl = at + pad + 1;
    drift_file_t f;
    if (drift_file_open(&f, path)) {
        snprintf(err, errsz, "%s: cannot write: %s", path, strerror(errno));
        return DRIFT_EIO;
    }
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff), (unsigned char)(hl >> 8)};
    int ok = fwrite(pre, 1, 10, f.fp) == 10 && fwrite(h, 1, hl, f.fp) == hl;
    /* the values in little-endian byte order, whatever the host's */
    for (size_t i = 0; ok && i < n; i++) {
        uint64_t u;
        memcpy(&u, &x[i], 8);
        unsigned char b[8];
        for (int k = 0; k < 8; k++) b[k] = (unsigned char)(u >> (8 * k));
        ok = fwrite(b, 1, 8, f.fp) == 8;
    }
    if (!ok) {
        int e = errno;
        drift_file_abort(&f);
        snprintf(err, errsz, "%s: write failed: %s", path, strerror(e));
        return DRIFT_EIO;
    }
    if (drift_file_commit(&f)) {
        snprintf(err, errsz, "%s: write failed: %s", path, strerror(errno));
        return DRIFT_EIO;
    }
    return 0;
}
