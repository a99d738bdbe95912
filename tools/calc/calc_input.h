/* calc_input.h — the calculator's one way to read a column of numbers (shared by the
 * exact, sum, dot and argmax subcommands, so every one accepts the same files). */
#ifndef DRIFT_CALC_INPUT_H
#define DRIFT_CALC_INPUT_H

#include <stddef.h>

#include "format.h"

/* Reads one value per line from path ("-" is stdin): decimal or C99 hex float, inf, nan
 * (decimal.h syntax, the whole line must be the number), each rounded ONCE from its exact
 * value to format f (nearest-even; beyond the range: +-inf); blank lines and lines whose first
 * non-blank character is '#' are skipped; whitespace around the number is allowed.
 * A path ending in ".npy" is read as a NumPy array instead (calc_npy.h: float64/32/16,
 * any shape flattened in C order), each value rounded once to f.
 * On success *out is a malloc'ed array of *n >= 1 values (free it) and 0 is returned.
 * On error (unreadable file, a line that is not a number, no values at all) a one-line
 * message naming file:line is printed on stderr, *out is NULL, *n is 0, and nonzero is
 * returned: the caller exits with status 2. */
int calc_read_values_as(const char *path, drift_format_t f, double **out, size_t *n);

/* calc_read_values_as(path, DRIFT_FP64, out, n). */
int calc_read_values(const char *path, double **out, size_t *n);

#endif
