/* calc_input.c — read a column of numbers, strictly: a value the user typed wrong must
 * stop the calculator with the line number, never be read as 0 or skipped. */
#include "calc_input.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calc_npy.h"
#include "decimal.h"

_Static_assert(
    sizeof((calc_shape_t *)0)->dim / sizeof(size_t) == CALC_NPY_MAX_DIMS, "calc_shape_t holds every .npy shape");

/* One line into buf (CALC_LINE_MAX + 1 bytes, NUL-terminated, newline dropped), its length in
 * *len: 0, EOF at the end of the input, or 1 when the line is longer than CALC_LINE_MAX (read
 * no further: the memory never grows with the input). */
static int read_line(char *buf, size_t *len, FILE *fp)
{
    size_t n = 0;
    int c;
    while ((c = getc(fp)) != EOF && c != '\n') {
        if (n == CALC_LINE_MAX) return 1;
        buf[n++] = (char)c;
    }
    buf[n] = 0;
    *len = n;
    return c == EOF && n == 0 ? EOF : 0;
}

/* Appends x to the growing array; 1 (with the line said) beyond CALC_VALUES_MAX or without memory. */
static int push(double **v, size_t *len, size_t *size, double x, const char *name, size_t lineno)
{
    if (*len == CALC_VALUES_MAX) {
        fprintf(stderr, "drift-calc: %s:%zu: more than %zu values (the limit of one input)\n", name, lineno,
            (size_t)CALC_VALUES_MAX);
        return 1;
    }
    if (*len == *size) {
        size_t ns = *size ? 2 * *size : 1024;
        double *nv = ns > ((size_t)-1) / sizeof *nv ? NULL : realloc(*v, ns * sizeof *nv);
        if (!nv) {
            fprintf(stderr, "drift-calc: %s:%zu: out of memory\n", name, lineno);
            return 1;
        }
        *v = nv;
        *size = ns;
    }
    (*v)[(*len)++] = x;
    return 0;
}

int calc_read_array(const char *path, drift_format_t f, double **out, size_t *n, calc_shape_t *shape)
{
    *out = NULL;
    *n = 0;
    calc_shape_t sh = {{0}, 0};
    if (calc_is_npy(path)) { /* binary values are exact doubles: round each once to f */
        if (calc_read_npy_shape(path, out, n, sh.dim, &sh.ndim) != 0) return 1;
        if (shape) *shape = sh;
        for (size_t i = 0; i < *n; i++) (*out)[i] = drift_rne((*out)[i], f);
        return 0;
    }
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "stdin" : path;
    FILE *fp = is_stdin ? stdin : fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "drift-calc: %s: cannot open: %s\n", name, strerror(errno));
        return 1;
    }
    static char line[CALC_LINE_MAX + 1];
    size_t len = 0, size = 0, lineno = 0, rows = 0, cols = 0, first_line = 0;
    double *v = NULL;
    int rc = 0;
    int st;
    size_t got;
    while ((st = read_line(line, &got, fp)) != EOF) {
        lineno++;
        if (st == 1) {
            fprintf(stderr, "drift-calc: %s:%zu: line longer than %d bytes (the limit of one value's line)\n", name,
                lineno, CALC_LINE_MAX);
            rc = 1;
            goto done;
        }
        if (memchr(line, '\0', got)) {
            fprintf(stderr, "drift-calc: %s:%zu: not a number (contains a NUL byte)\n", name, lineno);
            rc = 1;
            goto done;
        }
        char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '\0' || *s == '#') continue;
        /* A CSV line holds one row: its fields, comma-separated, each a number (blanks around
         * a field allowed); every row must have as many as the first. */
        size_t fields = 0;
        for (char *field = s;; fields++) {
            char *comma = strchr(field, ',');
            if (comma) *comma = '\0';
            while (isspace((unsigned char)*field)) field++;
            char *e = field + strlen(field);
            while (e > field && isspace((unsigned char)e[-1])) *--e = '\0';
            double x;
            if (drift_decimal_round(&x, field, f, NULL, 0) != 0) {
                fprintf(stderr,
                    "drift-calc: %s:%zu: not a number (accepted: decimal or C99 hex float, inf, nan; CSV fields "
                    "separated by commas): '%.60s'\n",
                    name, lineno, field);
                rc = 1;
                goto done;
            }
            if (push(&v, &len, &size, x, name, lineno)) {
                rc = 1;
                goto done;
            }
            if (!comma) break;
            field = comma + 1;
        }
        fields++;
        if (rows == 0)
            first_line = lineno, cols = fields;
        else if (fields != cols) {
            fprintf(stderr,
                "drift-calc: %s:%zu: %zu value%s on this line, %zu on line %zu (a CSV matrix has as many on every line)\n",
                name, lineno, fields, fields == 1 ? "" : "s", cols, first_line);
            rc = 1;
            goto done;
        }
        rows++;
        continue;
    }
    if (ferror(fp)) {
        fprintf(stderr, "drift-calc: %s:%zu: read error: %s\n", name, lineno + 1, strerror(errno));
        rc = 1;
    } else if (len == 0) {
        fprintf(stderr, "drift-calc: %s: no values (empty input)\n", name);
        rc = 1;
    }
done:
    if (!is_stdin) fclose(fp);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = len;
    sh.ndim = cols > 1 ? 2 : 1;
    sh.dim[0] = cols > 1 ? rows : len;
    sh.dim[1] = cols;
    if (shape) *shape = sh;
    return 0;
}

int calc_read_values_as(const char *path, drift_format_t f, double **out, size_t *n)
{
    return calc_read_array(path, f, out, n, NULL);
}

void calc_shape_print(char *buf, size_t size, const calc_shape_t *s)
{
    /* NumPy's spelling: (64,) for one dimension, (2, 64) for two */
    size_t n = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < s->ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%zu", i ? ", " : "", s->dim[i]);
    if (n < size) snprintf(buf + n, size - n, s->ndim == 1 ? ",)" : ")");
}


int calc_read_values(const char *path, double **out, size_t *n)
{
    return calc_read_values_as(path, DRIFT_FP64, out, n);
}
