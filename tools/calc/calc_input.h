/* calc_input.h — the calculator's one way to read a column of numbers (shared by the
 * exact, sum, dot and argmax subcommands, so every one accepts the same files). */
#ifndef DRIFT_CALC_INPUT_H
#define DRIFT_CALC_INPUT_H

#include <stddef.h>

#include "drift.h"
#include "format.h"

/* The bounds of every input (text and .npy): a line of at most CALC_LINE_MAX bytes (a value
 * needs far fewer: 1e-320 written in full is 330 digits), at most CALC_VALUES_MAX values
 * (1 GiB of doubles). Beyond either: one line naming the limit, exit 2, before the memory grows
 * (calc sum on /dev/zero used 2.1 GB before the limit). */
#define CALC_LINE_MAX 4096
#define CALC_VALUES_MAX (1u << 27)

/* Reads one value per line from path ("-" is stdin): decimal or C99 hex float, inf, nan
 * (decimal.h syntax, the whole line must be the number), each rounded ONCE from its exact
 * value to format f (nearest-even; beyond the range: +-inf); blank lines and lines whose first
 * non-blank character is '#' are skipped; whitespace around the number is allowed.
 * A line may hold several values separated by commas (a CSV row; calc_read_array says the shape).
 * A path ending in ".npy" is read as a NumPy array instead (calc_npy.h: float64/32/16,
 * any shape flattened in C order), each value rounded once to f.
 * On success *out is a malloc'ed array of *n >= 1 values (free it) and 0 is returned.
 * On error (unreadable file, a line that is not a number, no values at all) a one-line
 * message naming file:line is printed on stderr, *out is NULL, *n is 0, and nonzero is
 * returned: the caller exits with status 2. */
DRIFT_MUST_CHECK int calc_read_values_as(const char *path, drift_format_t f, double **out, size_t *n);

/* An input's shape: a .npy array's own (any number of dimensions), a text file's (n,) for one
 * value per line, (rows, cols) for a CSV of rows with cols > 1 fields each. */
typedef struct {
    size_t dim[32]; /* CALC_NPY_MAX_DIMS */
    int ndim;
} calc_shape_t;

/* calc_read_values_as, and the shape of what was read (shape may be NULL). Text lines may hold
 * several comma-separated values (a CSV row); then every line must hold as many as the first,
 * or the line is named (exit 2). */
DRIFT_MUST_CHECK int calc_read_array(const char *path, drift_format_t f, double **out, size_t *n, calc_shape_t *shape);
/* "(2, 64)", "(64,)" into buf: NumPy's spelling of a shape. */
void calc_shape_print(char *buf, size_t size, const calc_shape_t *s);

/* x, with a NaN of either sign as the positive NaN, so that every column prints "nan" (glibc
 * writes "-nan" for a NaN with its sign bit set: one result showed both spellings). The bits
 * column of calc round keeps the sign bit. */
static inline double calc_nan(double x) { return x != x ? __builtin_nan("") : x; }

/* calc_read_values_as(path, DRIFT_FP64, out, n). */
DRIFT_MUST_CHECK int calc_read_values(const char *path, double **out, size_t *n);

#endif
