/* deployment.c — deployments as data (deployment.h): presets, the spec grammar, and the
 * decoding of one request inside the batch a deployment gives it. */
#include "deployment.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "drift.h"
#include "file_read.h"
#include "metrics.h"
#include "philox.h"
#include "why.h"

/* Companions of a continuous batch: prompt lengths uniform in 1 .. this, generation lengths
 * uniform in 1 .. DRIFT_DEPLOY_GEN_MAX (chat requests of a small model's server). */
#define DRIFT_DEPLOY_PROMPT_MAX 128
#define DRIFT_DEPLOY_GEN_MAX 256
#define DEPLOY_FILE_MAX 4096

/* ---- presets ------------------------------------------------------------------------------ */

typedef struct {
    const char *name, *spec;
} preset_t;

/* Each preset is its own fields over the base (hf-eager's), so that the table reads as the
 * docs' list: what each stack decides. */
static const preset_t PRESETS[] = {
    {"hf-eager", ""},
    {"vllm-like", "attention=splitkv:auto,batch=continuous:64,prefill-chunk=256,prefix-cache=on"},
    {"llamacpp-cpu", "card=cpu,engine=llamacpp-cpu"},
    {"llamacpp-cpu-avx512", "card=cpu,engine=llamacpp-cpu-avx512"},
    {"lab-fp32", "card=cpu,weights=fp32,compute=fp32,act=fp32,gemm=batch-invariant,kv=fp32"},
};
#define NPRESETS ((int)(sizeof PRESETS / sizeof PRESETS[0]))

static const char *const KEYS[] = {"card", "engine", "weights", "compute", "act", "gemm", "attention", "kv", "batch",
    "padded", "prefill-chunk", "prefix-cache", "tp", "allreduce", "draft", "sampler"};
#define NKEYS ((int)(sizeof KEYS / sizeof KEYS[0]))

static void base(drift_deployment_t *d)
{
    memset(d, 0, sizeof *d);
    int rc = drift_card_parse(&d->card, "h100"); /* a card of the table (cards.c): cannot fail */
    (void)rc;
    d->nx = drift_numerics_fp32();
    d->nx.weights = DRIFT_BF16;
    d->nx.act = DRIFT_BF16; /* torch_dtype=bfloat16: hidden states in bf16, norms upcast inside */
    d->nx.kv = (drift_kv_format_t){DRIFT_KV_FLOAT, DRIFT_BF16};
    snprintf(d->compute, sizeof d->compute, "bf16");
    d->batch_kind = DRIFT_BATCH_ALONE;
    d->batch = 1;
    d->sampler = drift_sampler_default(DRIFT_SAMPLER_GREEDY);
}

static int apply_fields(drift_deployment_t *d, char *fields, unsigned *given, char *err, size_t errsz);
static int finish(drift_deployment_t *d, unsigned given, char *err, size_t errsz);
static int key_index(const char *k);

static int load_preset(drift_deployment_t *d, const char *name, char *err, size_t errsz)
{
    for (int i = 0; i < NPRESETS; i++)
        if (!strcmp(name, PRESETS[i].name)) {
            base(d);
            char buf[DRIFT_DEPLOY_SPEC_MAX];
            snprintf(buf, sizeof buf, "%s", PRESETS[i].spec);
            unsigned given = 0;
            int rc = apply_fields(d, buf, &given, err, errsz);
            snprintf(d->preset, sizeof d->preset, "%s", name);
            return rc;
        }
    char names[160];
    drift_deployment_preset_names(names, sizeof names);
    return drift_why(
        err, errsz, DRIFT_EINVAL, "deployment: unknown preset '%s' (accepted: %s, or KEY=VALUE fields)", name, names);
}

void drift_deployment_preset_names(char *buf, size_t size)
{
    size_t n = 0;
    if (size) buf[0] = 0;
    for (int i = 0; i < NPRESETS && n < size; i++) {
        int w = snprintf(buf + n, size - n, "%s%s", i ? ", " : "", PRESETS[i].name);
        if (w < 0) break;
        n += (size_t)w;
    }
}

/* ---- fields -------------------------------------------------------------------------------- */

static int yes_no(int *out, const char *v)
{
    if (!strcmp(v, "yes") || !strcmp(v, "on")) return *out = 1, 0;
    if (!strcmp(v, "no") || !strcmp(v, "off")) return *out = 0, 0;
    return DRIFT_EINVAL;
}

/* A decimal integer in lo .. hi, digits only. */
static int int_in(int *out, const char *v, int lo, int hi)
{
    if (!*v || strlen(v) > 9) return DRIFT_EINVAL;
    for (const char *p = v; *p; p++)
        if (!isdigit((unsigned char)*p)) return DRIFT_EINVAL;
    long x = strtol(v, NULL, 10);
    if (x < lo || x > hi) return DRIFT_EINVAL;
    *out = (int)x;
    return 0;
}

#define BAD(field, accepted) drift_why(err, errsz, DRIFT_EINVAL, "deployment: %s=%s: expected %s", field, v, accepted)

static int set_field(drift_deployment_t *d, const char *k, const char *v, char *err, size_t errsz)
{
    if (!strcmp(k, "card")) {
        if (!strcmp(v, "cpu")) {
            d->on_cpu = 1;
            memset(&d->card, 0, sizeof d->card);
            d->card.name = "cpu", d->card.product = "the host CPU", d->card.sms = 1, d->card.unit = "core";
            return 0;
        }
        drift_card_t c;
        if (drift_card_parse(&c, v)) {
            char names[400];
            drift_card_names(names, sizeof names);
            return drift_why(err, errsz, DRIFT_EINVAL, "deployment: card=%s: expected cpu or a card: %s", v, names);
        }
        d->on_cpu = 0, d->card = c;
        return 0;
    }
    if (!strcmp(k, "engine")) {
        if (!strcmp(v, "lab"))
            d->nx.engine = DRIFT_ENGINE_LAB;
        else if (!strcmp(v, "llamacpp-cpu"))
            d->nx.engine = DRIFT_ENGINE_LLAMACPP_CPU;
        else if (!strcmp(v, "llamacpp-cpu-avx512"))
            d->nx.engine = DRIFT_ENGINE_LLAMACPP_CPU_AVX512;
        else
            return BAD("engine", "lab, llamacpp-cpu or llamacpp-cpu-avx512");
        return 0;
    }
    if (!strcmp(k, "weights")) {
        drift_format_t f;
        if (drift_format_parse(&f, v) || (f != DRIFT_FP32 && f != DRIFT_BF16 && f != DRIFT_FP16))
            return BAD("weights", "fp32 (the stored values), bf16 or fp16");
        d->nx.weights = f;
        return 0;
    }
    if (!strcmp(k, "compute")) {
        drift_format_t f;
        drift_recipe_t r;
        if (strlen(v) >= sizeof d->compute ||
            (drift_format_parse(&f, v) ? drift_model_recipe_parse(&r, v) != 0
                                       : (f != DRIFT_FP32 && f != DRIFT_TF32 && f != DRIFT_BF16 && f != DRIFT_FP16)))
            return BAD("compute", "bf16, fp16, tf32 (the card's tensor cores), fp32, or a recipe IN/ORDER/ACC/OUT");
        snprintf(d->compute, sizeof d->compute, "%s", v);
        return 0;
    }
    if (!strcmp(k, "act")) {
        drift_format_t f;
        if (drift_format_parse(&f, v) || (f != DRIFT_FP32 && f != DRIFT_BF16 && f != DRIFT_FP16))
            return BAD("act", "fp32, bf16 or fp16");
        d->nx.act = f;
        return 0;
    }
    if (!strcmp(k, "gemm")) {
        if (drift_policy_parse(&d->nx.policy, v)) return BAD("gemm", "vendor-like or batch-invariant");
        return 0;
    }
    if (!strcmp(k, "attention")) {
        char why[DRIFT_LLM_ERR_MAX];
        if (drift_numerics_set_attention(&d->nx, v, why, sizeof why))
            return drift_why(err, errsz, DRIFT_EINVAL, "deployment: attention=%s: %s", v, why);
        return 0;
    }
    if (!strcmp(k, "kv")) {
        char why[DRIFT_LLM_ERR_MAX];
        if (drift_kv_format_parse(&d->nx.kv, v, why, sizeof why))
            return drift_why(err, errsz, DRIFT_EINVAL, "deployment: kv=%s: %s", v, why);
        return 0;
    }
    if (!strcmp(k, "batch")) {
        int b = 1;
        if (!strcmp(v, "alone") || !strcmp(v, "1"))
            d->batch_kind = DRIFT_BATCH_ALONE, b = 1;
        else if (!strncmp(v, "static:", 7) && !int_in(&b, v + 7, 1, 4096))
            d->batch_kind = DRIFT_BATCH_STATIC;
        else if (!strncmp(v, "continuous:", 11) && !int_in(&b, v + 11, 1, 4096))
            d->batch_kind = DRIFT_BATCH_CONTINUOUS;
        else
            return BAD("batch", "alone, static:B or continuous:B with B in 1 .. 4096");
        d->batch = b;
        if (b == 1) d->batch_kind = DRIFT_BATCH_ALONE;
        return 0;
    }
    if (!strcmp(k, "padded")) return yes_no(&d->padded, v) ? BAD("padded", "yes or no") : 0;
    if (!strcmp(k, "prefix-cache")) return yes_no(&d->prefix_cache, v) ? BAD("prefix-cache", "on or off") : 0;
    if (!strcmp(k, "prefill-chunk"))
        return int_in(&d->prefill_chunk, v, 0, 1 << 20)
                   ? BAD("prefill-chunk", "0 (whole prompts) or a chunk size in tokens")
                   : 0;
    if (!strcmp(k, "tp")) return int_in(&d->nx.tp, v, 1, DRIFT_TP_MAX) ? BAD("tp", "ranks 1 .. 64") : 0;
    if (!strcmp(k, "allreduce"))
        return drift_allreduce_parse(&d->nx.allreduce, v) ? BAD("allreduce", "ring, tree or rank") : 0;
    if (!strcmp(k, "draft")) {
        if (strcmp(v, "0"))
            return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
                "deployment: draft=%s: expected 0 (speculative drafts are measured by the speculative experiment)", v);
        return 0;
    }
    if (!strcmp(k, "sampler")) {
        drift_sampler_t s;
        if (!drift_sampler_parse(&s, v) && s.kind == DRIFT_SAMPLER_GREEDY) {
            d->sampler = s;
            return 0;
        }
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
            "deployment: sampler=%s: expected greedy or greedy-ties:EPS with EPS > 0 logits (text at temperature 0)",
            v);
    }
    char keys[256];
    size_t n = 0;
    for (int i = 0; i < NKEYS; i++) n += (size_t)snprintf(keys + n, sizeof keys - n, "%s%s", i ? ", " : "", KEYS[i]);
    return drift_why(err, errsz, DRIFT_EINVAL, "deployment: unknown field '%s' (fields: %s)", k, keys);
}

static int key_index(const char *k)
{
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(k, KEYS[i])) return i;
    return -1;
}

/* KEY=VALUE items separated by commas; an item without '=' continues the previous value
 * (attention=flash:64,64). A field given twice is refused: one spec, one meaning. */
static int apply_fields(drift_deployment_t *d, char *fields, unsigned *given, char *err, size_t errsz)
{
    char *item[64];
    int n = 0;
    for (char *p = fields; *p && n < 64;) {
        item[n++] = p;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = 0, p = c + 1;
        if (!*p) return drift_why(err, errsz, DRIFT_EINVAL, "deployment: empty field after ','");
    }
    for (int i = 0; i < n; i++) {
        char *eq = strchr(item[i], '=');
        if (!eq) return drift_why(err, errsz, DRIFT_EINVAL, "deployment: '%s': expected KEY=VALUE", item[i]);
        *eq = 0;
        char *k = item[i], *v = eq + 1;
        while (i + 1 < n && !strchr(item[i + 1], '=')) { /* rejoin a value that held commas */
            v[strlen(v)] = ',';
            i++;
        }
        if (!*v) return drift_why(err, errsz, DRIFT_EINVAL, "deployment: %s: empty value", k);
        int ki = key_index(k);
        if (ki >= 0 && (*given >> ki & 1u)) return drift_why(err, errsz, DRIFT_EINVAL, "deployment: %s given twice", k);
        int rc = set_field(d, k, v, err, errsz);
        if (rc) return rc;
        *given |= 1u << ki;
    }
    return 0;
}

/* The matmul recipe of the compute field on the card. */
static int compute_recipe(drift_recipe_t *r, const drift_deployment_t *d, char *err, size_t errsz)
{
    drift_format_t f;
    char spec[160];
    if (drift_format_parse(&f, d->compute)) {
        snprintf(spec, sizeof spec, "%s", d->compute);
    } else if (f == DRIFT_FP32) {
        snprintf(spec, sizeof spec, "fp32/seq/fp32/fp32");
    } else {
        if (d->on_cpu)
            return drift_why(err, errsz, DRIFT_EINVAL,
                "deployment: compute=%s: card=cpu has no tensor cores (use compute=fp32 or a seq recipe)", d->compute);
        snprintf(spec, sizeof spec, "%s/tc:%s/fp32/%s", d->compute, drift_tc_arch_name(d->card.arch),
            f == DRIFT_TF32 ? "fp32" : d->compute);
    }
    int rc = drift_model_recipe_parse(r, spec);
    if (rc == DRIFT_EUNSUPPORTED)
        return drift_why(err, errsz, rc, "deployment: compute=%s: the %s's matrix units take no %s input", d->compute,
            d->card.name, d->compute);
    if (rc) return drift_why(err, errsz, DRIFT_EINVAL, "deployment: compute=%s: not a recipe", d->compute);
    return 0;
}

/* The llama.cpp engines decide their own numerics: a deployment names them by preset, or by
 * card=cpu and engine alone (as printed), and carries the preset's values. */
static int finish_llamacpp(drift_deployment_t *d, unsigned given, char *err, size_t errsz)
{
    const char *eng = d->nx.engine == DRIFT_ENGINE_LLAMACPP_CPU ? "llamacpp-cpu" : "llamacpp-cpu-avx512";
    unsigned own = 1u << key_index("card") | 1u << key_index("engine") | 1u << key_index("sampler");
    int from_preset = !strcmp(d->preset, eng), from_base = !strcmp(d->preset, "custom");
    if ((given & ~own) || (!from_preset && !from_base))
        return drift_why(err, errsz, DRIFT_EINVAL,
            "deployment: engine=%s computes as llama.cpp does (stored weights, q8 activations, fp16 KV cache, "
            "its flash attention, each request alone): use the preset %s, or card=cpu,engine=%s only",
            eng, eng, eng);
    if (!d->on_cpu) return drift_why(err, errsz, DRIFT_EINVAL, "deployment: engine=%s runs on card=cpu", eng);
    char preset[32];
    snprintf(preset, sizeof preset, "%s", d->preset);
    drift_sampler_t sampler = d->sampler; /* the deployment's own, whatever llama.cpp computes */
    load_preset(d, eng, NULL, 0);
    d->sampler = sampler;
    d->nx.kv = (drift_kv_format_t){DRIFT_KV_FLOAT, DRIFT_FP16};
    d->nx.weights = DRIFT_FP32, d->nx.sms = 1;
    snprintf(d->compute, sizeof d->compute, "q8");
    snprintf(d->preset, sizeof d->preset, "%s", preset);
    return 0;
}

static int finish(drift_deployment_t *d, unsigned given, char *err, size_t errsz)
{
    if (d->nx.engine != DRIFT_ENGINE_LAB) return finish_llamacpp(d, given, err, errsz);
    drift_recipe_t r;
    int rc = compute_recipe(&r, d, err, errsz);
    if (rc) return rc;
    drift_numerics_set_mm(&d->nx, &r);
    d->nx.sms = d->card.sms;
    if (d->padded && d->batch_kind != DRIFT_BATCH_STATIC)
        return drift_why(
            err, errsz, DRIFT_EINVAL, "deployment: padded=yes needs batch=static:B (continuous batches pack rows)");
    return 0;
}

int drift_deployment_parse(drift_deployment_t *d, const char *spec, char *err, size_t errsz)
{
    if (!d || !spec) return drift_why(err, errsz, DRIFT_EINVAL, "deployment: no spec");
    char buf[DEPLOY_FILE_MAX + 1];
    if (spec[0] == '@') {
        size_t size = 0;
        char why[DRIFT_LLM_ERR_MAX];
        int rc = 0;
        char *bytes =
            (char *)drift_file_read(spec + 1, DEPLOY_FILE_MAX, "deployment file", &size, why, sizeof why, &rc);
        if (!bytes) return drift_why(err, errsz, rc, "deployment: %s", why);
        /* one field a line; '#' starts a comment; joined with commas */
        size_t n = 0;
        for (char *line = bytes, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next) *next++ = 0;
            char *h = strchr(line, '#');
            if (h) *h = 0;
            char *s = line, *e = line + strlen(line);
            while (*s && isspace((unsigned char)*s)) s++;
            while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
            if (!*s) continue;
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? "," : "", s);
        }
        free(bytes);
        if (!n) return drift_why(err, errsz, DRIFT_EINVAL, "deployment: %s holds no fields", spec + 1);
    } else {
        if (strlen(spec) >= DRIFT_DEPLOY_SPEC_MAX)
            return drift_why(
                err, errsz, DRIFT_EINVAL, "deployment: spec longer than %d characters", DRIFT_DEPLOY_SPEC_MAX - 1);
        snprintf(buf, sizeof buf, "%s", spec);
    }
    if (!buf[0]) return drift_why(err, errsz, DRIFT_EINVAL, "deployment: empty spec (a preset or KEY=VALUE fields)");
    drift_deployment_t t;
    char *fields = buf;
    char *comma = strchr(buf, ',');
    if (!strchr(buf, '=') || (comma && memchr(buf, '=', (size_t)(comma - buf)) == NULL)) {
        if (comma) *comma = 0;
        int rc = load_preset(&t, buf, err, errsz);
        if (rc) return rc;
        fields = comma ? comma + 1 : buf + strlen(buf);
        if (comma && !*fields) return drift_why(err, errsz, DRIFT_EINVAL, "deployment: empty field after ','");
    } else {
        load_preset(&t, "hf-eager", NULL, 0);
        snprintf(t.preset, sizeof t.preset, "custom");
    }
    unsigned given = 0;
    int rc = apply_fields(&t, fields, &given, err, errsz);
    if (!rc) rc = finish(&t, given, err, errsz);
    if (rc) return rc;
    *d = t;
    return 0;
}

/* ---- printing ------------------------------------------------------------------------------ */

static int field_text(char *buf, size_t size, const drift_deployment_t *d, int key)
{
    char t[DRIFT_ATTN_SPEC_MAX + 32];
    switch (key) {
    case 0: return snprintf(buf, size, "%s", d->card.name);
    case 1:
        return snprintf(buf, size, "%s",
            d->nx.engine == DRIFT_ENGINE_LAB            ? "lab"
            : d->nx.engine == DRIFT_ENGINE_LLAMACPP_CPU ? "llamacpp-cpu"
                                                        : "llamacpp-cpu-avx512");
    case 2: return snprintf(buf, size, "%s", drift_format_name(d->nx.weights));
    case 3: return snprintf(buf, size, "%s", d->compute);
    case 4: return snprintf(buf, size, "%s", drift_format_name(d->nx.act));
    case 5: return snprintf(buf, size, "%s", drift_policy_name(d->nx.policy));
    case 6:
        if (drift_numerics_attention_print(t, sizeof t, &d->nx) < 0) return DRIFT_EINVAL;
        return snprintf(buf, size, "%s", t);
    case 7:
        if (drift_kv_format_print(t, sizeof t, &d->nx.kv) < 0) return DRIFT_EINVAL;
        return snprintf(buf, size, "%s", t);
    case 8:
        if (d->batch_kind == DRIFT_BATCH_ALONE) return snprintf(buf, size, "alone");
        return snprintf(buf, size, "%s:%d", d->batch_kind == DRIFT_BATCH_STATIC ? "static" : "continuous", d->batch);
    case 9: return snprintf(buf, size, "%s", d->padded ? "yes" : "no");
    case 10: return snprintf(buf, size, "%d", d->prefill_chunk);
    case 11: return snprintf(buf, size, "%s", d->prefix_cache ? "on" : "off");
    case 12: return snprintf(buf, size, "%d", d->nx.tp);
    case 13: return snprintf(buf, size, "%s", drift_allreduce_name(d->nx.allreduce));
    case 14: return snprintf(buf, size, "%d", d->draft);
    default: return drift_sampler_print(buf, size, &d->sampler);
    }
}

int drift_deployment_print(char *buf, size_t size, const drift_deployment_t *d)
{
    if (!buf || !d) return DRIFT_EINVAL;
    size_t at = 0;
    /* the llama.cpp engines have no other fields but the sampler: llama.cpp decides them */
    int lab = d->nx.engine == DRIFT_ENGINE_LAB;
    for (int k = 0; k < NKEYS; k++) {
        if (!lab && k >= 2 && !(k == NKEYS - 1 && d->sampler.tie_eps > 0)) continue;
        char v[DRIFT_ATTN_SPEC_MAX + 32];
        if (field_text(v, sizeof v, d, k) < 0) return DRIFT_EINVAL;
        at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s%s=%s", k ? "," : "", KEYS[k], v);
    }
    return at < size ? (int)at : DRIFT_EINVAL;
}

int drift_deployment_diff(char *buf, size_t size, const drift_deployment_t *a, const drift_deployment_t *b)
{
    if (!buf || !a || !b || !size) return DRIFT_EINVAL;
    size_t at = 0;
    buf[0] = 0;
    for (int k = 0; k < NKEYS; k++) {
        char va[DRIFT_ATTN_SPEC_MAX + 32], vb[DRIFT_ATTN_SPEC_MAX + 32];
        field_text(va, sizeof va, a, k);
        field_text(vb, sizeof vb, b, k);
        if (strcmp(va, vb)) at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s%s", at ? " " : "", KEYS[k]);
    }
    return at < size ? (int)at : DRIFT_EINVAL;
}

/* ---- one request inside the deployment's batch ---------------------------------------------- */

/* A companion request of a continuous batch: prompt tokens still to prefill, tokens still to
 * generate. */
typedef struct {
    int prompt_left, gen_left;
} companion_t;

static void companion_join(companion_t *c, drift_stream_t *st)
{
    c->prompt_left = 1 + (int)drift_stream_below(st, DRIFT_DEPLOY_PROMPT_MAX);
    c->gen_left = 1 + (int)drift_stream_below(st, DRIFT_DEPLOY_GEN_MAX);
}

/* A server in steady state: each slot's request somewhere in its generation. */
static void companion_midway(companion_t *c, drift_stream_t *st)
{
    companion_join(c, st);
    c->prompt_left = 0;
    c->gen_left = 1 + (int)drift_stream_below(st, (uint32_t)c->gen_left);
}

static int chunk_of(int left, int C) { return C > 0 && left > C ? C : left; }

/* The rows the companions add to this step; advances them by the step. */
static long companions_step(companion_t *c, int n, int C, drift_stream_t *st)
{
    long rows = 0;
    for (int i = 0; i < n; i++) {
        if (c[i].prompt_left > 0) {
            int r = chunk_of(c[i].prompt_left, C);
            rows += r;
            c[i].prompt_left -= r;
            continue; /* its first token comes with the last chunk; counted as a decode row next */
        }
        rows += 1;
        if (--c[i].gen_left <= 0) companion_join(&c[i], st);
    }
    return rows;
}

typedef struct {
    drift_model_t *m;
    const drift_deployment_t *d;
    companion_t *comp;
    int ncomp;
    int static_len;   /* static batches: the longest prompt of the batch (padded rows) */
    long static_rows; /* static batches: the other requests' prompt rows still to prefill */
    drift_stream_t st;
} sched_t;

/* Rows of a step in which this request contributes `own` rows (a prefill chunk of `own`
 * tokens starting at prompt offset `at`, or one decode row when decoding). */
static long step_rows(sched_t *s, int own, int prefill, int at)
{
    const drift_deployment_t *d = s->d;
    int C = d->prefill_chunk;
    if (d->batch_kind == DRIFT_BATCH_CONTINUOUS) return own + companions_step(s->comp, s->ncomp, C, &s->st);
    if (d->batch_kind == DRIFT_BATCH_STATIC) {
        long B = d->batch;
        if (!prefill) return B;
        if (d->padded) {
            int left = s->static_len - at; /* every request padded to the longest prompt */
            return B * chunk_of(left, C);
        }
        /* the other requests prefill their own prompts alongside, chunk by chunk */
        long other = s->static_rows;
        long take = C > 0 ? (long)C * (B - 1) : other;
        if (take > other) take = other;
        s->static_rows -= take;
        return own + (take > 0 ? take : 0);
    }
    return own;
}

static int run_step(sched_t *s, double *lg, int pos, int ntok, const int *tokens, long rows)
{
    drift_model_set_shape(s->m, (size_t)rows, s->d->batch);
    drift_seq_step_t q = {0, pos, ntok, tokens};
    return drift_model_step(s->m, lg, &q, 1);
}

int drift_deploy_generate(drift_gen_t *out, drift_model_t *m, const drift_deployment_t *d, const int *prompt, int np,
    int prefix, int ntokens, uint64_t seed, int keep_logits)
{
    if (!out || !m || !d || !prompt || np < 1 || prefix < 0 || prefix > np || ntokens < 0) return DRIFT_EINVAL;
    if (d->nx.engine != DRIFT_ENGINE_LAB) {
        return drift_generate(out, m, prompt, np, ntokens, 0, &d->sampler, NULL, keep_logits);
    }
    memset(out, 0, sizeof *out);
    const drift_llm_config_t *c = drift_model_config(m);
    int V = c->vocab_size, cap = c->seq_len;
    if (np > cap) return DRIFT_EINVAL;
    if (ntokens > cap - np + 1) ntokens = cap - np + 1;
    size_t n1 = (size_t)ntokens + 1;
    int rc = DRIFT_ENOMEM;
    sched_t s;
    memset(&s, 0, sizeof s);
    s.m = m, s.d = d;
    drift_stream_init(&s.st, seed, drift_fnv1a32("deploy.batch"), 0, 0);
    out->token = malloc(n1 * sizeof(int));
    out->top2 = malloc(n1 * sizeof(int));
    out->top1_logit = malloc(n1 * sizeof(double));
    out->top2_logit = malloc(n1 * sizeof(double));
    out->rows = calloc(n1, sizeof(int));
    out->logits = keep_logits ? malloc(n1 * (size_t)V * sizeof(double)) : NULL;
    double *lg = malloc((size_t)V * sizeof(double));
    if (d->batch_kind == DRIFT_BATCH_CONTINUOUS) s.comp = calloc((size_t)d->batch, sizeof *s.comp);
    if (!out->token || !out->top2 || !out->top1_logit || !out->top2_logit || !out->rows ||
        (keep_logits && !out->logits) || !lg || (d->batch_kind == DRIFT_BATCH_CONTINUOUS && !s.comp))
        goto done;
    if (d->batch_kind == DRIFT_BATCH_CONTINUOUS) {
        s.ncomp = d->batch - 1;
        for (int i = 0; i < s.ncomp; i++) companion_midway(&s.comp[i], &s.st);
    } else if (d->batch_kind == DRIFT_BATCH_STATIC) {
        s.static_len = np;
        for (int i = 1; i < d->batch; i++) {
            int len = 1 + (int)drift_stream_below(&s.st, DRIFT_DEPLOY_PROMPT_MAX);
            s.static_rows += len;
            if (len > s.static_len) s.static_len = len;
        }
    }
    rc = 0;
    int pos = 0;
    /* A cached prefix: its whole blocks were computed by an earlier request that shared them,
     * in that request's batch (its own prompt: the prefix and a suffix of random length). */
    int cached = d->prefix_cache ? prefix / DRIFT_DEPLOY_PREFIX_BLOCK * DRIFT_DEPLOY_PREFIX_BLOCK : 0;
    if (cached >= np) cached -= DRIFT_DEPLOY_PREFIX_BLOCK; /* a fully cached prompt recomputes its last block */
    if (cached > 0) {
        int suffix = 1 + (int)drift_stream_below(&s.st, DRIFT_DEPLOY_PROMPT_MAX), C = d->prefill_chunk;
        for (int at = 0; at < cached && !rc;) {
            int own = chunk_of(cached - at, C);
            long rows = d->batch_kind == DRIFT_BATCH_CONTINUOUS ? step_rows(&s, own, 1, at) : own;
            if (C == 0) rows += suffix; /* the earlier request's own tokens rode in the same step */
            rc = run_step(&s, lg, at, own, prompt + at, rows);
            at += own;
        }
        pos = cached;
    }
    int last_rows = 0;
    while (!rc && pos < np) { /* this request's prefill, chunk by chunk */
        int own = chunk_of(np - pos, d->prefill_chunk);
        long rows = step_rows(&s, own, 1, pos);
        last_rows = (int)rows;
        rc = run_step(&s, lg, pos, own, prompt + pos, rows);
        pos += own;
    }
    for (int k = 0; !rc && k < ntokens; k++) {
        drift_top2_t tt;
        drift_top2(&tt, lg, (size_t)V);
        int t1 = (int)tt.top1, t2 = (int)tt.top2;
        out->token[k] = d->sampler.tie_eps > 0 ? drift_greedy_tie(lg, V, d->sampler.tie_eps) : t1, out->top2[k] = t2;
        out->top1_logit[k] = lg[t1], out->top2_logit[k] = lg[t2];
        out->rows[k] = last_rows;
        if (keep_logits) memcpy(out->logits + (size_t)k * (size_t)V, lg, (size_t)V * sizeof(double));
        out->n = k + 1;
        if (k + 1 == ntokens) break;
        long rows = step_rows(&s, 1, 0, 0);
        last_rows = (int)rows;
        rc = run_step(&s, lg, pos, 1, &out->token[k], rows);
        pos++;
    }
done:
    drift_model_set_shape(m, 0, 0);
    free(lg), free(s.comp);
    if (rc) drift_gen_free(out);
    return rc;
}

/* ---- what two SM counts change ------------------------------------------------------------ */

int drift_model_kernels_differ(
    const drift_llm_config_t *c, int sms_a, int sms_b, int min_slice, int maxM, int *first, int *last)
{
    const int head = c->dim / c->n_heads, kv = c->n_kv_heads * head;
    /* the decoder's GEMMs at tp = 1 (model.c: Wq, Wk and Wv, Wo, W1 and W3, W2, the LM head),
     * N x K each */
    const size_t shape[][2] = {{(size_t)c->dim, (size_t)c->dim}, {(size_t)kv, (size_t)c->dim},
        {(size_t)c->hidden_dim, (size_t)c->dim}, {(size_t)c->dim, (size_t)c->hidden_dim},
        {(size_t)c->vocab_size, (size_t)c->dim}};
    int n = 0;
    *first = *last = -1;
    for (int M = 1; M <= maxM; M++) {
        int differ = 0;
        for (size_t s = 0; s < sizeof shape / sizeof shape[0]; s++) {
            drift_gemm_kernel_t ka, kb;
            int rc = drift_policy_choose_slice(
                &ka, DRIFT_POLICY_VENDOR_LIKE, (size_t)M, shape[s][0], shape[s][1], sms_a, min_slice);
            if (!rc)
                rc = drift_policy_choose_slice(
                    &kb, DRIFT_POLICY_VENDOR_LIKE, (size_t)M, shape[s][0], shape[s][1], sms_b, min_slice);
            if (rc) return rc;
            differ |= memcmp(&ka, &kb, sizeof ka) != 0;
        }
        if (differ) n++, *last = M, *first = *first < 0 ? M : *first;
    }
    return n;
}
