/* fuzz/npy.c — the .npy reader (calc_npy.h) on any file. It either refuses with nothing
 * returned, or returns n >= 1 values whose count is the product of the shape it reports
 * (at most CALC_NPY_MAX_DIMS dimensions); and the array written again as numpy writes it
 * (version 1.0, '<f8', C order) reads back as the same shape and the same bits. */
#include "common.h"
#include "calc_npy.h"

#include <stdio.h>
#include <unistd.h>

static const char *dir(void)
{
    /* a file per input (the reader takes a path and checks its size with fstat): in memory
     * when /dev/shm is there */
    static const char *d;
    if (!d) d = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return d;
}

static int write_file(const char *path, const void *a, size_t na, const void *b, size_t nb)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return -1;
    fwrite(a, 1, na, fp);
    if (nb) fwrite(b, 1, nb, fp);
    return fclose(fp);
}

static int read_quiet(const char *path, double **v, size_t *n, size_t *shape, int *ndim)
{
    static FILE *devnull;
    if (!devnull) devnull = fopen("/dev/null", "w");
    FILE *err = stderr; /* the reader's one-line refusals: the FILE, not fd 2 (ASan's) */
    stderr = devnull;
    int rc = calc_read_npy_shape(path, v, n, shape, ndim);
    stderr = err;
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "%s/drift_fuzz_npy_%ld.npy", dir(), (long)getpid());
    if (write_file(path, data, size, NULL, 0) != 0) return 0;
    double *v = NULL;
    size_t n = 0, shape[CALC_NPY_MAX_DIMS + 1];
    int ndim = -1;
    int rc = read_quiet(path, &v, &n, shape, &ndim);
    unlink(path);
    if (rc != 0) {
        if (v || n) abort();
        return 0;
    }
    if (!v || n == 0 || ndim < 0 || ndim > CALC_NPY_MAX_DIMS) abort();
    size_t prod = 1;
    for (int i = 0; i < ndim; i++) prod *= shape[i];
    if (prod != n || n * 2 > size) abort(); /* every value came from at least 2 bytes of the file */

    /* numpy's own layout: magic, version 1.0, a header padded to a multiple of 64 bytes */
    char hdr[2048];
    int hl = snprintf(hdr + 10, sizeof hdr - 10, "{'descr': '<f8', 'fortran_order': False, 'shape': (");
    for (int i = 0; i < ndim; i++) hl += snprintf(hdr + 10 + hl, sizeof hdr - 10 - (size_t)hl, "%zu, ", shape[i]);
    if (ndim == 1)
        hl -= 1; /* "(3,)" */
    else if (ndim > 1)
        hl -= 2;
    hl += snprintf(hdr + 10 + hl, sizeof hdr - 10 - (size_t)hl, "), }");
    while ((10 + hl + 1) % 64) hdr[10 + hl++] = ' ';
    hdr[10 + hl++] = '\n';
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    hdr[8] = (char)(hl & 0xff), hdr[9] = (char)(hl >> 8);
    unsigned char *raw = malloc(n * 8);
    if (!raw) abort();
    for (size_t i = 0; i < n; i++) { /* little-endian whatever the host */
        uint64_t b;
        memcpy(&b, &v[i], 8);
        for (int k = 0; k < 8; k++) raw[i * 8 + (size_t)k] = (unsigned char)(b >> (8 * k));
    }
    if (write_file(path, hdr, (size_t)(10 + hl), raw, n * 8) != 0) abort();
    double *w = NULL;
    size_t m = 0, shape2[CALC_NPY_MAX_DIMS + 1];
    int ndim2 = -1;
    if (read_quiet(path, &w, &m, shape2, &ndim2) != 0) abort();
    unlink(path);
    if (m != n || ndim2 != ndim || memcmp(shape, shape2, (size_t)ndim * sizeof *shape) || memcmp(v, w, n * sizeof *v))
        abort();
    free(raw);
    free(v);
    free(w);
    return 0;
}
