/* tokenizer_gguf.c — the tokenizer.ggml.* metadata of a GGUF file as a drift_vocab_t, then
 * drift_tokenizer_build (see tokenizer.h). */
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "gguf.h"
#include "tokenizer.h"
#include "why.h"

/* A short string value (model, pre) NUL-terminated into buf; "" when absent and optional. */
static int get_name(
    const drift_gguf_t *g, const char *key, int required, char *buf, size_t size, char *err, size_t errsz)
{
    buf[0] = 0;
    if (!drift_gguf_find(g, key)) return required ? drift_why(err, errsz, DRIFT_EINVAL, "%s: missing", key) : 0;
    drift_gguf_str_t s;
    int rc = drift_gguf_get_str(g, key, &s, err, errsz);
    if (rc) return rc;
    if (s.len >= size)
        return drift_why(err, errsz, DRIFT_EINVAL, "%s: expected a name under %zu bytes, found %llu bytes", key, size,
            (unsigned long long)s.len);
    memcpy(buf, s.s, (size_t)s.len);
    buf[s.len] = 0;
    return 0;
}

/* An array of elem (any integer type when elem is DRIFT_GGUF_I32) with at least min elements. */
static const drift_gguf_kv_t *get_array(
    const drift_gguf_t *g, const char *key, drift_gguf_type_t elem, uint64_t min, int *rc, char *err, size_t errsz)
{
    const drift_gguf_kv_t *kv = drift_gguf_find(g, key);
    *rc = 0;
    if (!kv) return NULL;
    int ok = kv->type == DRIFT_GGUF_ARRAY &&
             (kv->elem_type == elem || (elem == DRIFT_GGUF_F32 && kv->elem_type == DRIFT_GGUF_I32));
    if (!ok) {
        *rc = drift_why(err, errsz, DRIFT_EINVAL, "%s: expected an array of %s, found %s%s%s", key,
            drift_gguf_type_name(elem), drift_gguf_type_name(kv->type), kv->type == DRIFT_GGUF_ARRAY ? " of " : "",
            kv->type == DRIFT_GGUF_ARRAY ? drift_gguf_type_name(kv->elem_type) : "");
        return NULL;
    }
    if (kv->count < min) {
        *rc = drift_why(err, errsz, DRIFT_EINVAL, "%s: expected at least %llu elements (one per token), found %llu",
            key, (unsigned long long)min, (unsigned long long)kv->count);
        return NULL;
    }
    return kv;
}

static int get_id(const drift_gguf_t *g, const char *key, int *out, char *err, size_t errsz)
{
    if (!drift_gguf_find(g, key)) return 0; /* stays DRIFT_TOKENIZER_DEFAULT */
    uint64_t u;
    int rc = drift_gguf_get_u64(g, key, &u, err, errsz);
    if (rc) return rc;
    if (u >= (1u << 30))
        return drift_why(err, errsz, DRIFT_EINVAL, "%s: token id %llu is out of range", key, (unsigned long long)u);
    *out = (int)u;
    return 0;
}

static int get_bool(const drift_gguf_t *g, const char *key, int *out, char *err, size_t errsz)
{
    if (!drift_gguf_find(g, key)) return 0; /* stays DRIFT_TOKENIZER_DEFAULT */
    return drift_gguf_get_bool(g, key, out, err, errsz);
}

int drift_tokenizer_from_gguf(drift_tokenizer_t *t, const drift_gguf_t *g, char *err, size_t errsz)
{
    if (!t) return drift_why(err, errsz, DRIFT_EINVAL, "no tokenizer");
    memset(t, 0, sizeof *t);
    if (!g) return drift_why(err, errsz, DRIFT_EINVAL, "no GGUF file");
    char model[64], pre[64];
    drift_vocab_t v;
    drift_vocab_init(&v);
    int rc;
    if ((rc = get_name(g, "tokenizer.ggml.model", 1, model, sizeof model, err, errsz)) ||
        (rc = get_name(g, "tokenizer.ggml.pre", 0, pre, sizeof pre, err, errsz)))
        return rc;
    v.model = model;
    v.pre = pre[0] ? pre : NULL;
    if (!strcmp(model, "gpt2") && !pre[0])
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
            "tokenizer.ggml.pre: missing (llama.cpp then uses its 'default' pre-tokenizer; accepted: gpt-2, smollm)");
    const drift_gguf_kv_t *tokens = get_array(g, "tokenizer.ggml.tokens", DRIFT_GGUF_STRING, 1, &rc, err, errsz);
    if (rc) return rc;
    if (!tokens) return drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.tokens: missing");
    if (tokens->count >= (1u << 30))
        return drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.tokens: %llu tokens is too many",
            (unsigned long long)tokens->count);
    int n = (int)tokens->count;
    const drift_gguf_kv_t *scores = get_array(g, "tokenizer.ggml.scores", DRIFT_GGUF_F32, (uint64_t)n, &rc, err, errsz);
    if (rc) return rc;
    const drift_gguf_kv_t *types =
        get_array(g, "tokenizer.ggml.token_type", DRIFT_GGUF_I32, (uint64_t)n, &rc, err, errsz);
    if (rc) return rc;
    const drift_gguf_kv_t *merges = get_array(g, "tokenizer.ggml.merges", DRIFT_GGUF_STRING, 0, &rc, err, errsz);
    if (rc) return rc;
    if (!strcmp(model, "gpt2") && !merges) return drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.merges: missing");
    if (merges && merges->count >= (1u << 30))
        return drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.merges: %llu merges is too many",
            (unsigned long long)merges->count);
    int nm = merges ? (int)merges->count : 0;
    if ((rc = get_id(g, "tokenizer.ggml.bos_token_id", &v.bos_id, err, errsz)) ||
        (rc = get_id(g, "tokenizer.ggml.eos_token_id", &v.eos_id, err, errsz)) ||
        (rc = get_id(g, "tokenizer.ggml.eot_token_id", &v.eot_id, err, errsz)) ||
        (rc = get_id(g, "tokenizer.ggml.unknown_token_id", &v.unk_id, err, errsz)) ||
        (rc = get_id(g, "tokenizer.ggml.padding_token_id", &v.pad_id, err, errsz)) ||
        (rc = get_id(g, "tokenizer.ggml.fim_pad_token_id", &v.fim_ids[0], err, errsz)) ||
        (rc = get_id(g, "tokenizer.ggml.fim_rep_token_id", &v.fim_ids[1], err, errsz)) ||
        (rc = get_id(g, "tokenizer.ggml.fim_sep_token_id", &v.fim_ids[2], err, errsz)) ||
        (rc = get_bool(g, "tokenizer.ggml.add_bos_token", &v.add_bos, err, errsz)) ||
        (rc = get_bool(g, "tokenizer.ggml.add_eos_token", &v.add_eos, err, errsz)) ||
        (rc = get_bool(g, "tokenizer.ggml.add_space_prefix", &v.add_space_prefix, err, errsz)))
        return rc;

    /* the arrays as pointers into the mapping (build copies what it keeps) */
    size_t nt = (size_t)n, nmz = (size_t)nm;
    const char **tok = malloc(nt * sizeof *tok), **mer = malloc((nmz ? nmz : 1) * sizeof *mer);
    size_t *tok_len = malloc(nt * sizeof *tok_len), *mer_len = malloc((nmz ? nmz : 1) * sizeof *mer_len);
    float *sc = scores ? malloc(nt * sizeof *sc) : NULL;
    int32_t *ty = types ? malloc(nt * sizeof *ty) : NULL;
    if (!tok || !mer || !tok_len || !mer_len || (scores && !sc) || (types && !ty)) {
        rc = drift_why(err, errsz, DRIFT_ENOMEM, "out of memory for a vocabulary of %d tokens", n);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        drift_gguf_str_t s;
        if (drift_gguf_array_str(tokens, (uint64_t)i, &s)) {
            rc = drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.tokens: element %d unreadable", i);
            goto done;
        }
        tok[i] = s.s, tok_len[i] = (size_t)s.len;
        double d;
        int64_t k;
        if (sc) {
            if (drift_gguf_array_f64(scores, (uint64_t)i, &d)) {
                rc = drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.scores: element %d unreadable", i);
                goto done;
            }
            sc[i] = (float)d; /* stored as f32 (or i32), so exact */
        }
        if (ty) {
            if (drift_gguf_array_i64(types, (uint64_t)i, &k)) {
                rc = drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.token_type: element %d unreadable", i);
                goto done;
            }
            ty[i] = k < INT32_MIN || k > INT32_MAX ? -1 : (int32_t)k;
        }
    }
    for (int i = 0; i < nm; i++) {
        drift_gguf_str_t s;
        if (drift_gguf_array_str(merges, (uint64_t)i, &s)) {
            rc = drift_why(err, errsz, DRIFT_EINVAL, "tokenizer.ggml.merges: element %d unreadable", i);
            goto done;
        }
        mer[i] = s.s, mer_len[i] = (size_t)s.len;
    }
    v.n_tokens = n;
    v.tokens = tok;
    v.token_len = tok_len;
    v.scores = sc;
    v.types = ty;
    v.n_merges = nm;
    v.merges = mer;
    v.merge_len = mer_len;
    rc = drift_tokenizer_build(t, &v, err, errsz);
done:
    free(tok);
    free(mer);
    free(tok_len);
    free(mer_len);
    free(sc);
    free(ty);
    return rc;
}
