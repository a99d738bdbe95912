/* npy_write.h — a float64 array written as a NumPy .npy file (format 1.0: magic, version,
 * header length, the header dict {'descr': '<f8', 'fortran_order': False, 'shape': (...), }
 * padded with spaces to a multiple of 64 bytes and a newline, then the values in C order), so
 * that a dump the lab writes is read back by numpy.load and by drift-calc alike. */
#ifndef DRIFT_NPY_WRITE_H
#define DRIFT_NPY_WRITE_H

#include <stddef.h>
#include "drift.h"

/* Writes the prod(shape) values x (ndim 1..8 dimensions, each >= 1) to path, through a
 * temporary renamed on success (a failed write leaves no file and what was at path). 0, or
 * DRIFT_EINVAL / DRIFT_EIO with one line in err. */
DRIFT_MUST_CHECK int drift_npy_write_f64(
    const char *path, const double *x, const size_t *shape, int ndim, char *err, size_t errsz);

#endif
