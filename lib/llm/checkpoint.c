/* checkpoint.c — llama2.c checkpoints and tokenizers (see checkpoint.h). */
#include "checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "drift.h"
#include "file_read.h"
#include "why.h"
#include "philox.h"

#define HEADER_INTS 7
#define HEADER_BYTES (HEADER_INTS * 4)

/* a * b + into *acc, refusing overflow past DRIFT_CKPT_MAX_FLOATS. */
static int add_prod(size_t *acc, size_t a, size_t b)
{
    if (a && b > DRIFT_CKPT_MAX_FLOATS / a) return -1;
    if (a * b > DRIFT_CKPT_MAX_FLOATS - *acc) return -1;
    *acc += a * b;
    return 0;
}

double drift_llm_rope_theta(const drift_llm_config_t *c) { return c->rope_theta > 0 ? c->rope_theta : 10000.0; }

double drift_llm_rms_eps(const drift_llm_config_t *c) { return c->rms_eps > 0 ? c->rms_eps : 1e-5; }

int drift_llm_config_check(const drift_llm_config_t *c, size_t *nfloats, char *err, size_t errsz)
{
    if (!c) return drift_why(err, errsz, DRIFT_EINVAL, "no configuration");
    const struct {
        const char *name;
        int v;
    } pos[] = {{"dim", c->dim}, {"hidden_dim", c->hidden_dim}, {"n_layers", c->n_layers}, {"n_heads", c->n_heads},
        {"n_kv_heads", c->n_kv_heads}, {"seq_len", c->seq_len}};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (pos[i].v <= 0)
            return drift_why(
                err, errsz, DRIFT_EINVAL, "header: %s must be a positive integer, found %d", pos[i].name, pos[i].v);
    if (c->vocab_size < 2) /* a top-1/top-2 gap needs two tokens */
        return drift_why(err, errsz, DRIFT_EINVAL, "header: |vocab_size| must be at least 2, found %d", c->vocab_size);
    if (c->dim % c->n_heads)
        return drift_why(err, errsz, DRIFT_EINVAL, "header: n_heads must divide dim, found dim %d and n_heads %d",
            c->dim, c->n_heads);
    int head = c->dim / c->n_heads;
    if (head % 2)
        return drift_why(err, errsz, DRIFT_EINVAL, "header: head size dim/n_heads must be even (RoPE), found %d", head);
    if (c->n_kv_heads > c->n_heads || c->n_heads % c->n_kv_heads)
        return drift_why(err, errsz, DRIFT_EINVAL,
            "header: n_kv_heads must divide n_heads, found n_heads %d and n_kv_heads %d", c->n_heads, c->n_kv_heads);
    size_t d = (size_t)c->dim, h = (size_t)c->hidden_dim, L = (size_t)c->n_layers, V = (size_t)c->vocab_size;
    size_t kv = (size_t)c->n_kv_heads * (size_t)head, n = 0;
    int bad = add_prod(&n, V, d) || add_prod(&n, L, d) || add_prod(&n, L, d * d) || add_prod(&n, L, kv * d) ||
              add_prod(&n, L, kv * d) || add_prod(&n, L, d * d) || add_prod(&n, L, d) || add_prod(&n, L, h * d) ||
              add_prod(&n, L, h * d) || add_prod(&n, L, h * d) || add_prod(&n, 1, d) ||
              add_prod(&n, (size_t)c->seq_len, (size_t)head) || (!c->shared_classifier && add_prod(&n, V, d));
    if (bad)
        return drift_why(err, errsz, DRIFT_EINVAL, "header: sizes imply more than %zu fp32 values (at most 64 GiB)",
            (size_t)DRIFT_CKPT_MAX_FLOATS);
    if (nfloats) *nfloats = n;
    return 0;
}

/* Point the tensor pointers into ck->data in llama2.c's order. */
void drift_checkpoint_map_tensors(drift_checkpoint_t *ck)
{
    const drift_llm_config_t *c = &ck->cfg;
    size_t d = (size_t)c->dim, h = (size_t)c->hidden_dim, L = (size_t)c->n_layers, V = (size_t)c->vocab_size;
    size_t head = d / (size_t)c->n_heads, kv = (size_t)c->n_kv_heads * head;
    float *p = ck->data;
    ck->token_embedding = p, p += V * d;
    ck->rms_att = p, p += L * d;
    ck->wq = p, p += L * d * d;
    ck->wk = p, p += L * kv * d;
    ck->wv = p, p += L * kv * d;
    ck->wo = p, p += L * d * d;
    ck->rms_ffn = p, p += L * d;
    ck->w1 = p, p += L * h * d;
    ck->w2 = p, p += L * d * h;
    ck->w3 = p, p += L * h * d;
    ck->rms_final = p, p += d;
    ck->freq_real = p, p += (size_t)c->seq_len * head / 2;
    ck->freq_imag = p, p += (size_t)c->seq_len * head / 2;
    ck->wcls = c->shared_classifier ? ck->token_embedding : p;
}

static int32_t le32(const unsigned char *b)
{
    return (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
}

int drift_checkpoint_parse(drift_checkpoint_t *ck, const void *bytes, size_t size, char *err, size_t errsz)
{
    if (!ck) return drift_why(err, errsz, DRIFT_EINVAL, "no checkpoint");
    memset(ck, 0, sizeof *ck);
    if (!bytes && size) return drift_why(err, errsz, DRIFT_EINVAL, "no data");
    if (size < HEADER_BYTES)
        return drift_why(
            err, errsz, DRIFT_EINVAL, "truncated: expected a header of %d bytes, found %zu bytes", HEADER_BYTES, size);
    const unsigned char *b = bytes;
    drift_llm_config_t c;
    memset(&c, 0, sizeof c); /* llama2.c's RoPE base and epsilon: the defaults */
    c.dim = le32(b), c.hidden_dim = le32(b + 4), c.n_layers = le32(b + 8), c.n_heads = le32(b + 12);
    c.n_kv_heads = le32(b + 16), c.vocab_size = le32(b + 20), c.seq_len = le32(b + 24);
    c.shared_classifier = c.vocab_size > 0;
    if (c.vocab_size == INT32_MIN)
        return drift_why(err, errsz, DRIFT_EINVAL, "header: vocab_size %d is out of range", c.vocab_size);
    c.vocab_size = abs(c.vocab_size);
    size_t n;
    int rc = drift_llm_config_check(&c, &n, err, errsz);
    if (rc) return rc;
    size_t want = HEADER_BYTES + 4 * n;
    if (size != want)
        return drift_why(err, errsz, DRIFT_EINVAL,
            "%s: the header (dim %d, hidden_dim %d, n_layers %d, n_heads %d, n_kv_heads %d, vocab_size %d%s, "
            "seq_len %d) implies %zu bytes, found %zu",
            size < want ? "truncated" : "oversized", c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads,
            c.vocab_size, c.shared_classifier ? "" : " unshared", c.seq_len, want, size);
    ck->data = malloc(n * sizeof(float));
    if (!ck->data) return drift_why(err, errsz, DRIFT_ENOMEM, "out of memory for %zu fp32 values", n);
    memcpy(ck->data, b + HEADER_BYTES, n * sizeof(float)); /* little-endian hosts (x86-64, arm64) */
    ck->nfloats = n;
    ck->cfg = c;
    drift_checkpoint_map_tensors(ck);
    return 0;
}

/* 1 when the file at path starts with the GGUF magic. */
static int is_gguf(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;
    char magic[4] = {0};
    size_t got = fread(magic, 1, 4, fp);
    fclose(fp);
    return got == 4 && !memcmp(magic, "GGUF", 4);
}

int drift_checkpoint_read(drift_checkpoint_t *ck, const char *path, char *err, size_t errsz)
{
    if (!ck || !path) return drift_why(err, errsz, DRIFT_EINVAL, "no checkpoint path");
    memset(ck, 0, sizeof *ck);
    size_t size = 0;
    int rc;
    struct stat st;
    if (stat(path, &st) != 0) return drift_why(err, errsz, DRIFT_EIO, "cannot open %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) /* a FIFO or a device would block in the magic's read */
        return drift_why(err, errsz, DRIFT_EIO, "%s: not a regular file", path);
    if (is_gguf(path)) {
        drift_gguf_t *g = calloc(1, sizeof *g);
        if (!g) return drift_why_oom(err, errsz, (double)sizeof *g, "the GGUF reader of %s", path);
        char inner[DRIFT_LLM_ERR_MAX] = "";
        if ((rc = drift_gguf_open(g, path, inner, sizeof inner))) {
            free(g);
            return drift_why(err, errsz, rc, "%s", inner);
        }
        if ((rc = drift_checkpoint_from_gguf(ck, g, inner, sizeof inner)))
            return drift_why(err, errsz, rc, "%s: %s", path, inner);
        return 0;
    }
    unsigned char *buf = drift_file_read(path, 32 + 4 * DRIFT_CKPT_MAX_FLOATS, "checkpoint", &size, err, errsz, &rc);
    if (!buf) return rc;
    char inner[DRIFT_LLM_ERR_MAX] = "";
    rc = drift_checkpoint_parse(ck, buf, size, inner, sizeof inner);
    free(buf);
    if (rc) return drift_why(err, errsz, rc, "%s: %s", path, inner);
    return 0;
}

int drift_checkpoint_write(const drift_checkpoint_t *ck, const char *path, char *err, size_t errsz)
{
    if (!ck || !ck->data || !path) return drift_why(err, errsz, DRIFT_EINVAL, "nothing to write");
    size_t n;
    int rc = drift_llm_config_check(&ck->cfg, &n, err, errsz);
    if (rc) return rc;
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return drift_why(err, errsz, DRIFT_EINVAL, "path too long");
    FILE *fp = fopen(tmp, "wb");
    if (!fp) return drift_why(err, errsz, DRIFT_EIO, "cannot create %s: %s", tmp, strerror(errno));
    const drift_llm_config_t *c = &ck->cfg;
    int32_t h[HEADER_INTS] = {c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads,
        c->shared_classifier ? c->vocab_size : -c->vocab_size, c->seq_len};
    size_t body = n - (c->shared_classifier ? 0 : (size_t)c->vocab_size * (size_t)c->dim);
    int ok = fwrite(h, 4, HEADER_INTS, fp) == HEADER_INTS && fwrite(ck->data, 4, body, fp) == body;
    if (ok && !c->shared_classifier) {
        size_t w = (size_t)c->vocab_size * (size_t)c->dim;
        ok = fwrite(ck->wcls, 4, w, fp) == w;
    }
    ok = (fclose(fp) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return drift_why(err, errsz, DRIFT_EIO, "cannot write %s", path);
    }
    return 0;
}

int drift_checkpoint_synth(
    drift_checkpoint_t *ck, const drift_llm_config_t *cfg, uint64_t seed, char *err, size_t errsz)
{
    if (!ck) return drift_why(err, errsz, DRIFT_EINVAL, "no checkpoint");
    memset(ck, 0, sizeof *ck);
    size_t n;
    int rc = drift_llm_config_check(cfg, &n, err, errsz);
    if (rc) return rc;
    ck->data = malloc(n * sizeof(float));
    if (!ck->data) return drift_why(err, errsz, DRIFT_ENOMEM, "out of memory for %zu fp32 values", n);
    ck->nfloats = n;
    ck->cfg = *cfg;
    drift_checkpoint_map_tensors(ck);
    drift_stream_t s;
    drift_stream_init(&s, seed, drift_fnv1a32("checkpoint.synth"), 0, 0);
    const drift_llm_config_t *c = cfg;
    size_t d = (size_t)c->dim, h = (size_t)c->hidden_dim, L = (size_t)c->n_layers, V = (size_t)c->vocab_size;
    size_t head = d / (size_t)c->n_heads, kv = (size_t)c->n_kv_heads * head;
    struct {
        float *p;
        size_t count, fan_in;
        int norm;
    } t[] = {{ck->token_embedding, V * d, 1, 0}, {ck->rms_att, L * d, 0, 1}, {ck->wq, L * d * d, d, 0},
        {ck->wk, L * kv * d, d, 0}, {ck->wv, L * kv * d, d, 0}, {ck->wo, L * d * d, d, 0}, {ck->rms_ffn, L * d, 0, 1},
        {ck->w1, L * h * d, d, 0}, {ck->w2, L * d * h, h, 0}, {ck->w3, L * h * d, d, 0}, {ck->rms_final, d, 0, 1},
        {c->shared_classifier ? NULL : ck->wcls, V * d, d, 0}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (!t[i].p) continue;
        double sd = t[i].norm ? 0.1 : 1.0 / sqrt((double)t[i].fan_in);
        for (size_t j = 0; j < t[i].count; j++)
            t[i].p[j] = (float)((t[i].norm ? 1.0 : 0.0) + sd * drift_stream_normal(&s));
    }
    /* llama2.c's export writes cos/sin(pos * theta^(-2i/head)) with theta = 10000. */
    for (size_t p = 0; p < (size_t)c->seq_len; p++)
        for (size_t i = 0; i < head / 2; i++) {
            double f = (double)p * pow(10000.0, -(double)(2 * i) / (double)head);
            ck->freq_real[p * head / 2 + i] = (float)cos(f);
            ck->freq_imag[p * head / 2 + i] = (float)sin(f);
        }
    return 0;
}

void drift_checkpoint_free(drift_checkpoint_t *ck)
{
    if (!ck) return;
    free(ck->data);
    if (ck->gguf) drift_gguf_close(ck->gguf), free(ck->gguf);
    memset(ck, 0, sizeof *ck);
}
