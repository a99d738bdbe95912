/* calc_npy.h — read a NumPy .npy array (the format people already have hidden states and
 * weights in) as a flat column of doubles, with bounded, validated parsing.
 *
 * Accepted: format versions 1.0, 2.0 and 3.0; dtype little-endian float64 ('<f8'), float32
 * ('<f4') or float16 ('<f2') ('|' is taken as '<'; big-endian '>' is refused); C order, or any order for a 1-D array; any shape,
 * read as its elements in memory order (row-major: element v*K + i of a (V, K) array is
 * W[v][i]). The header must be a dict holding exactly the keys descr, fortran_order and
 * shape, each once, and nothing after it but its padding (numpy.load is as strict); the file
 * must be exactly header + prod(shape) * itemsize bytes. */
#ifndef DRIFT_CALC_NPY_H
#define DRIFT_CALC_NPY_H

#include <stddef.h>
#include "drift.h"

/* 1 if path names a .npy file (by its extension). */
int calc_is_npy(const char *path);

/* On success: *out a malloc'ed array of *n >= 1 values (exact: every float64/32/16 is a
 * double), 0 returned. On error (unreadable, not .npy, unsupported dtype or order, malformed
 * header, truncated or overlong data, empty array): one line "drift-calc: PATH: problem" on
 * stderr, *out NULL, *n 0, nonzero returned (the caller exits 2). */
DRIFT_MUST_CHECK int calc_read_npy(const char *path, double **out, size_t *n);

/* The most dimensions of an accepted array. */
#define CALC_NPY_MAX_DIMS 32
/* calc_read_npy, and the array's shape: *ndim dimensions (0 for a scalar) into shape[] (room for
 * CALC_NPY_MAX_DIMS), when shape and ndim are not NULL. */
DRIFT_MUST_CHECK int calc_read_npy_shape(const char *path, double **out, size_t *n, size_t *shape, int *ndim);

#endif
