/* calc_npy.c — a small, strict .npy reader (NumPy format spec, numpy/lib/format.py:
 * magic "\x93NUMPY", version bytes, header length (2 bytes little-endian in 1.0, 4 in 2.0
 * and 3.0), then a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), }
 * padded with spaces and a newline, then the raw data). Every length is bounded before use. */
#include "calc_npy.h"
#include "calc_input.h"

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "why.h"

#define NPY_MAX_HEADER (1u << 20) /* numpy itself writes < 64 KiB; anything bigger is not ours */
#define NPY_MAX_DIMS CALC_NPY_MAX_DIMS

int calc_is_npy(const char *path)
{
    size_t len = strlen(path);
    return len > 4 && strcmp(path + len - 4, ".npy") == 0;
}

static int fail(const char *path, const char *what)
{
    fprintf(stderr, "drift-calc: %s: %s\n", path, what);
    return 1;
}

/* The header dict, strictly: "{" then 'key': value pairs separated by commas (a trailing comma
 * allowed, as numpy writes), "}", then only the padding (spaces, a final newline). The keys are
 * exactly descr, fortran_order and shape, each once (numpy.load refuses others too); a value is
 * a quoted string, a tuple, or a bare word (True, False). vals[k] points at key k's value.
 * NULL, or the problem. */
static const char *const NPY_KEYS[3] = {"descr", "fortran_order", "shape"};

static const char *parse_dict(const char *h, const char *vals[3])
{
    vals[0] = vals[1] = vals[2] = NULL;
    const char *p = h;
    while (*p == ' ') p++;
    if (*p != '{') return "malformed .npy header (not a dict)";
    p++;
    for (;;) {
        while (*p == ' ') p++;
        if (*p == '}') break;
        char q = *p;
        if (q != '\'' && q != '"') return "malformed .npy header (a key is not a quoted string)";
        const char *k0 = ++p;
        while (*p && *p != q) p++;
        if (!*p) return "malformed .npy header (unterminated key)";
        size_t kl = (size_t)(p - k0);
        int key = -1;
        for (int i = 0; i < 3; i++)
            if (strlen(NPY_KEYS[i]) == kl && !strncmp(k0, NPY_KEYS[i], kl)) key = i;
        if (key < 0) return "malformed .npy header (a key other than descr, fortran_order, shape)";
        if (vals[key]) return "malformed .npy header (a key given twice)";
        p++;
        while (*p == ' ') p++;
        if (*p != ':') return "malformed .npy header (no ':' after a key)";
        p++;
        while (*p == ' ') p++;
        vals[key] = p;
        if (*p == '\'' || *p == '"') { /* a string */
            char c = *p++;
            while (*p && *p != c) p++;
            if (!*p) return "malformed .npy header (unterminated string)";
            p++;
        } else if (*p == '(') { /* a tuple of numbers */
            while (*p && *p != ')') p++;
            if (!*p) return "malformed .npy header (unterminated tuple)";
            p++;
        } else { /* True, False */
            const char *w = p;
            while (isalpha((unsigned char)*p)) p++;
            if (p == w) return "malformed .npy header (a value is not a string, tuple or word)";
        }
        while (*p == ' ') p++;
        if (*p == ',')
            p++;
        else if (*p != '}')
            return "malformed .npy header (no ',' or '}' after a value)";
    }
    p++;
    while (*p == ' ') p++;
    if (*p == '\n') p++;
    if (*p) return "malformed .npy header (text after the dict)";
    for (int i = 0; i < 3; i++)
        if (!vals[i])
            return i == 0   ? "malformed .npy header (no descr)"
                   : i == 1 ? "malformed .npy header (no fortran_order)"
                            : "malformed .npy header (no shape tuple)";
    return NULL;
}

int calc_read_npy(const char *path, double **out, size_t *n) { return calc_read_npy_shape(path, out, n, NULL, NULL); }

int calc_read_npy_shape(const char *path, double **out, size_t *n, size_t *shape, int *ndim)
{
    *out = NULL;
    *n = 0;
    if (ndim) *ndim = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "drift-calc: %s: cannot open: %s\n", path, strerror(errno));
        return 1;
    }
    unsigned char pre[12];
    char *h = NULL;
    double *v = NULL;
    unsigned char *raw = NULL;
    int rc = 1;
    if (fread(pre, 1, 8, fp) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        rc = fail(path, "not a .npy file (no \\x93NUMPY magic)");
        goto done;
    }
    int major = pre[6];
    if (major < 1 || major > 3) {
        rc = fail(path, "unsupported .npy version (accepted: 1.0, 2.0, 3.0)");
        goto done;
    }
    size_t hlen;
    if (major == 1) {
        if (fread(pre + 8, 1, 2, fp) != 2) {
            rc = fail(path, "truncated .npy header");
            goto done;
        }
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else {
        if (fread(pre + 8, 1, 4, fp) != 4) {
            rc = fail(path, "truncated .npy header");
            goto done;
        }
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    if (hlen == 0 || hlen > NPY_MAX_HEADER) {
        rc = fail(path, "malformed .npy header length");
        goto done;
    }
    h = malloc(hlen + 1);
    if (!h) {
        char why[160];
        drift_why_oom(why, sizeof why, (double)hlen + 1, "the .npy header of %zu bytes", hlen);
        rc = fail(path, why);
        goto done;
    }
    if (fread(h, 1, hlen, fp) != hlen) {
        rc = fail(path, "truncated .npy header");
        goto done;
    }
    h[hlen] = 0;
    if (memchr(h, 0, hlen)) {
        rc = fail(path, "malformed .npy header (NUL byte)");
        goto done;
    }

    const char *vals[3], *why = parse_dict(h, vals);
    if (why) {
        rc = fail(path, why);
        goto done;
    }
    const char *d = vals[0];
    int size = 0;
    if (d && (!strncmp(d, "'<f8'", 5) || !strncmp(d, "'|f8'", 5)))
        size = 8;
    else if (d && (!strncmp(d, "'<f4'", 5) || !strncmp(d, "'|f4'", 5)))
        size = 4;
    else if (d && (!strncmp(d, "'<f2'", 5) || !strncmp(d, "'|f2'", 5)))
        size = 2;
    if (!size) {
        rc = fail(path, "unsupported dtype (accepted: little-endian float64, float32, float16: '<f8', '<f4', '<f2')");
        goto done;
    }

    const char *s = vals[2];
    if (!s || *s != '(') {
        rc = fail(path, "malformed .npy header (no shape tuple)");
        goto done;
    }
    s++;
    size_t count = 1;
    int dims = 0;
    for (;;) {
        while (*s == ' ') s++;
        if (*s == ')') break;
        if (!isdigit((unsigned char)*s)) {
            rc = fail(path, "malformed .npy shape");
            goto done;
        }
        size_t dim = 0;
        while (isdigit((unsigned char)*s)) {
            if (dim > (SIZE_MAX - 9) / 10) {
                rc = fail(path, "shape too large");
                goto done;
            }
            dim = dim * 10 + (size_t)(*s++ - '0');
        }
        if (dim != 0 && count > SIZE_MAX / dim) {
            rc = fail(path, "shape too large");
            goto done;
        }
        count *= dim;
        if (dims == NPY_MAX_DIMS) {
            rc = fail(path, "too many dimensions");
            goto done;
        }
        if (shape) shape[dims] = dim;
        dims++;
        while (*s == ' ') s++;
        if (*s == ',')
            s++;
        else if (*s != ')') {
            rc = fail(path, "malformed .npy shape");
            goto done;
        }
    }
    const char *fo = vals[1];
    if (!fo || (strncmp(fo, "False", 5) != 0 && strncmp(fo, "True", 4) != 0)) {
        rc = fail(path, "malformed .npy header (no fortran_order)");
        goto done;
    }
    if (!strncmp(fo, "True", 4) && dims > 1) {
        rc = fail(path, "Fortran-order arrays are not accepted (save with C order)");
        goto done;
    }
    if (count == 0) {
        rc = fail(path, "no values (empty array)");
        goto done;
    }
    if (count > CALC_VALUES_MAX) {
        rc = fail(path, "more than 134217728 values (the limit of one input)");
        goto done;
    }
    { /* the data must be in the file before it is allocated: a header promising 2^27 values
       * of a 100-byte file is truncated, not 1 GiB of memory */
        struct stat st;
        long pos = ftell(fp);
        if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && pos >= 0 &&
            (unsigned long long)(st.st_size - pos) < (unsigned long long)count * (unsigned long long)size) {
            rc = fail(path, "truncated data (fewer values than the shape says)");
            goto done;
        }
    }

    raw = malloc(count * (size_t)size);
    v = malloc(count * sizeof *v);
    if (!raw || !v) {
        char why[160];
        drift_why_oom(
            why, sizeof why, (double)count * ((double)size + sizeof *v), "the %zu values its shape counts", count);
        rc = fail(path, why);
        goto done;
    }
    if (fread(raw, (size_t)size, count, fp) != count) {
        rc = fail(path, "truncated data (fewer values than the shape says)");
        goto done;
    }
    if (fgetc(fp) != EOF) {
        rc = fail(path, "trailing bytes after the data the shape says");
        goto done;
    }
    for (size_t i = 0; i < count; i++) {
        const unsigned char *b = raw + i * (size_t)size;
        uint64_t bits = 0;
        for (int k = size - 1; k >= 0; k--) bits = bits << 8 | b[k];
        if (size == 8)
            memcpy(&v[i], &bits, sizeof v[i]);
        else if (size == 4) {
            uint32_t w = (uint32_t)bits;
            float f;
            memcpy(&f, &w, sizeof f);
            v[i] = f;
        } else
            v[i] = drift_decode(bits, DRIFT_FP16);
    }
    *out = v;
    *n = count;
    if (ndim) *ndim = dims;
    v = NULL;
    rc = 0;
done:
    free(h);
    free(raw);
    free(v);
    fclose(fp);
    return rc;
}
