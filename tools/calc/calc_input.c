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

int calc_read_values_as(const char *path, drift_format_t f, double **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (calc_is_npy(path)) { /* binary values are exact doubles: round each once to f */
        if (calc_read_npy(path, out, n) != 0) return 1;
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
    char *line = NULL;
    size_t cap = 0, len = 0, size = 0, lineno = 0;
    double *v = NULL;
    int rc = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, fp)) != -1) {
        lineno++;
        if (memchr(line, '\0', (size_t)got)) {
            fprintf(stderr, "drift-calc: %s:%zu: not a number (contains a NUL byte)\n", name, lineno);
            rc = 1;
            goto done;
        }
        char *s = line;
        while (isspace((unsigned char)*s)) s++;
        char *e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
        if (*s == '\0' || *s == '#') continue;
        double x;
        if (drift_decimal_round(&x, s, f, NULL, 0) != 0) {
            fprintf(stderr, "drift-calc: %s:%zu: not a number (accepted: decimal or C99 hex float, inf, nan): '%.60s'\n",
                    name, lineno, s);
            rc = 1;
            goto done;
        }
        if (len == size) {
            size_t ns = size ? 2 * size : 1024;
            double *nv = ns > ((size_t)-1) / sizeof *nv ? NULL : realloc(v, ns * sizeof *nv);
            if (!nv) {
                fprintf(stderr, "drift-calc: %s:%zu: out of memory\n", name, lineno);
                rc = 1;
                goto done;
            }
            v = nv;
            size = ns;
        }
        v[len++] = x;
    }
    if (ferror(fp)) {
        fprintf(stderr, "drift-calc: %s:%zu: read error: %s\n", name, lineno + 1, strerror(errno));
        rc = 1;
    } else if (len == 0) {
        fprintf(stderr, "drift-calc: %s: no values (empty input)\n", name);
        rc = 1;
    }
done:
    free(line);
    if (!is_stdin) fclose(fp);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = len;
    return 0;
}

int calc_read_values(const char *path, double **out, size_t *n)
{
    return calc_read_values_as(path, DRIFT_FP64, out, n);
}
