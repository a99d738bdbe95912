/* witness_dump.c: the tensor dump behind --dump-tensors (format in witness_dump.h). */
#include "witness_dump.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ggml-backend.h"
#include "ggml.h"

int witness_dump_open(witness_dump *d, const char *dir, int max_calls, char *err, size_t errsz)
{
    memset(d, 0, sizeof *d);
    d->call = -1;
    d->max_calls = max_calls;
    if (strlen(dir) >= sizeof d->dir - 64) {
        snprintf(err, errsz, "--dump-tensors: expected a directory path under %zu bytes, found %zu", sizeof d->dir - 64,
            strlen(dir));
        return -1;
    }
    memcpy(d->dir, dir, strlen(dir) + 1); /* fits: checked above */
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errsz, "--dump-tensors: cannot create directory %s: %s", dir, strerror(errno));
        return -1;
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/index.tsv", dir);
    d->index = fopen(path, "w");
    if (!d->index) {
        snprintf(err, errsz, "--dump-tensors: cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(d->index, "call\tseq\tname\top\ttype\tne0\tne1\tne2\tne3\tfile\n");
    return 0;
}

static void fail(witness_dump *d, const char *what, const char *path)
{
    if (!d->failed) snprintf(d->err, sizeof d->err, "--dump-tensors: %s %s", what, path);
    d->failed = 1;
}

static int write_tensor(witness_dump *d, const struct ggml_tensor *t, const char *path, int as_int)
{
    size_t nbytes = ggml_nbytes(t);
    unsigned char *raw = malloc(nbytes ? nbytes : 1);
    int64_t ne0 = t->ne[0];
    float *row = malloc((size_t)(ne0 > 0 ? ne0 : 1) * sizeof *row);
    if (!raw || !row) {
        free(raw);
        free(row);
        fail(d, "out of memory for", path);
        return -1;
    }
    ggml_backend_tensor_get(t, raw, 0, nbytes);
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(raw);
        free(row);
        fail(d, "cannot write", path);
        return -1;
    }
    const struct ggml_type_traits *tt = ggml_get_type_traits(t->type);
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                const unsigned char *p = raw + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
                if (as_int) {
                    for (int64_t i0 = 0; i0 < ne0; i0++) {
                        int32_t v;
                        memcpy(&v, p + i0 * t->nb[0], sizeof v);
                        fwrite(&v, sizeof v, 1, f);
                    }
                    continue;
                }
                if (tt->is_quantized) {
                    tt->to_float(p, row, ne0); /* quantized rows are always contiguous blocks */
                } else {
                    for (int64_t i0 = 0; i0 < ne0; i0++) {
                        const unsigned char *e = p + i0 * t->nb[0];
                        if (t->type == GGML_TYPE_F32) {
                            memcpy(&row[i0], e, sizeof(float));
                        } else if (t->type == GGML_TYPE_F16) {
                            ggml_fp16_t h;
                            memcpy(&h, e, sizeof h);
                            row[i0] = ggml_fp16_to_fp32(h);
                        } else {
                            ggml_bf16_t b;
                            memcpy(&b, e, sizeof b);
                            row[i0] = ggml_bf16_to_fp32(b);
                        }
                    }
                }
                fwrite(row, sizeof *row, (size_t)ne0, f);
            }
    free(raw);
    free(row);
    if (ferror(f) | (fclose(f) != 0)) {
        fail(d, "write error on", path);
        return -1;
    }
    return 0;
}

bool witness_dump_cb(struct ggml_tensor *t, bool ask, void *user)
{
    witness_dump *d = user;
    int active = d->call >= 0 && d->call < d->max_calls;
    if (ask) return active;
    if (!active) return true;
    if (t->op == GGML_OP_FLASH_ATTN_EXT) d->flash_attn_nodes++;
    if (t->op == GGML_OP_SOFT_MAX) d->softmax_nodes++;
    int seq = d->seq++;
    const char *name = ggml_get_name(t);
    char clean[101];
    size_t k = 0;
    for (; name[k] && k < sizeof clean - 1; k++) {
        char c = name[k];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                 c == '-';
        clean[k] = ok ? c : '_';
    }
    clean[k] = '\0';
    int as_int = t->type == GGML_TYPE_I32;
    int convertible = as_int || t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16 || t->type == GGML_TYPE_BF16 ||
                      ggml_get_type_traits(t->type)->is_quantized;
    char file[160];
    char path[1300];
    if (convertible) {
        snprintf(file, sizeof file, "d%d_%04d_%s.%s", d->call, seq, clean, as_int ? "i32" : "f32");
        snprintf(path, sizeof path, "%s/%s", d->dir, file);
        if (write_tensor(d, t, path, as_int) == 0) d->written++;
    } else {
        snprintf(file, sizeof file, "-"); /* a type without a float view (e.g. I8): listed only */
    }
    fprintf(d->index, "%d\t%d\t%s\t%s\t%s\t%lld\t%lld\t%lld\t%lld\t%s\n", d->call, seq, name, ggml_op_desc(t),
        ggml_type_name(t->type), (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3],
        file);
    return true;
}

int witness_dump_close(witness_dump *d)
{
    if (d->index) {
        if (ferror(d->index) | (fclose(d->index) != 0)) fail(d, "write error on", "index.tsv");
        d->index = NULL;
    }
    return d->failed ? -1 : 0;
}
