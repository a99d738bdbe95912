/* attention_spec.c — the attention kernel and KV-format grammars (attention.h: "standard",
 * "flash:Bc", "splitkv:S:Bc", "fp8e4m3", "int8:token", ...), their canonical printed forms, and
 * the options of one attention call with their validation. */
#include "attention.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch_order.h"
#include "drift.h"
#include "tc_model.h"
#include "why.h"

static int format_ok(drift_format_t f) { return (int)f >= 0 && f < DRIFT_NFORMATS; }

/* ---- specs ------------------------------------------------------------------------------ */

/* Decimal 1 .. max, no sign or leading zero, ending at *end (',' or NUL). */
static int parse_num(long *out, const char *s, const char **end, long max)
{
    if (*s < '1' || *s > '9') return 0;
    long v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (max - (*p - '0')) / 10) return 0;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    *end = p;
    return 1;
}

int drift_attn_kernel_parse(drift_attn_kernel_t *k, const char *spec, char *err, size_t errsz)
{
    if (!k || !spec) return drift_why(err, errsz, DRIFT_EINVAL, "attention kernel: missing");
    drift_attn_kernel_t r = {DRIFT_ATTN_STANDARD, 0, 0, 0, 0};
    const char *p;
    if (!strcmp(spec, "standard")) {
        *k = r;
        return 0;
    }
    if (!strncmp(spec, "flash:", 6)) {
        r.kind = DRIFT_ATTN_FLASH;
        if (!parse_num(&r.br, spec + 6, &p, DRIFT_ATTN_TILE_MAX) || *p != ',' ||
            !parse_num(&r.bc, p + 1, &p, DRIFT_ATTN_TILE_MAX) || *p)
            return drift_why(err, errsz, DRIFT_EINVAL, "attention kernel '%s': expected flash:Br,Bc with tiles 1..%ld",
                spec, DRIFT_ATTN_TILE_MAX);
        *k = r;
        return 0;
    }
    if (!strncmp(spec, "splitkv:", 8)) {
        const char *s = spec + 8;
        int ok;
        if (!strncmp(s, "size=", 5)) {
            r.kind = DRIFT_ATTN_SPLITKV_SIZE;
            ok = parse_num(&r.size, s + 5, &p, DRIFT_ATTN_SIZE_MAX);
        } else {
            r.kind = DRIFT_ATTN_SPLITKV_N;
            ok = parse_num(&r.splits, s, &p, DRIFT_ATTN_SPLIT_MAX);
        }
        if (ok && *p == ',') ok = parse_num(&r.bc, p + 1, &p, DRIFT_ATTN_TILE_MAX);
        if (!ok || *p) {
            if (r.kind == DRIFT_ATTN_SPLITKV_SIZE)
                return drift_why(err, errsz, DRIFT_EINVAL,
                    "attention kernel '%s': expected splitkv:size=S[,Bc] with S 1..%ld and Bc 1..%ld", spec,
                    DRIFT_ATTN_SIZE_MAX, DRIFT_ATTN_TILE_MAX);
            return drift_why(err, errsz, DRIFT_EINVAL,
                "attention kernel '%s': expected splitkv:N[,Bc] with N 1..%ld and Bc 1..%ld", spec,
                DRIFT_ATTN_SPLIT_MAX, DRIFT_ATTN_TILE_MAX);
        }
        if (!r.bc) r.bc = r.kind == DRIFT_ATTN_SPLITKV_SIZE ? (r.size < 64 ? r.size : 64) : 64;
        if (r.kind == DRIFT_ATTN_SPLITKV_SIZE && r.size % r.bc)
            return drift_why(err, errsz, DRIFT_EINVAL,
                "attention kernel '%s': the split size %ld must be a multiple of the tile Bc = %ld (write splitkv:size=S,Bc)",
                spec, r.size, r.bc);
        *k = r;
        return 0;
    }
    return drift_why(err, errsz, DRIFT_EINVAL,
        "attention kernel '%s': expected standard, flash:Br,Bc, splitkv:N[,Bc] or splitkv:size=S[,Bc]", spec);
}

int drift_attn_kernel_print(char *buf, size_t size, const drift_attn_kernel_t *k)
{
    if (!buf || !k) return DRIFT_EINVAL;
    int n;
    switch (k->kind) {
    case DRIFT_ATTN_STANDARD: n = snprintf(buf, size, "standard"); break;
    case DRIFT_ATTN_FLASH: n = snprintf(buf, size, "flash:%ld,%ld", k->br, k->bc); break;
    case DRIFT_ATTN_SPLITKV_N:
        n = k->bc == 64 ? snprintf(buf, size, "splitkv:%ld", k->splits)
                        : snprintf(buf, size, "splitkv:%ld,%ld", k->splits, k->bc);
        break;
    case DRIFT_ATTN_SPLITKV_SIZE:
        n = k->bc == (k->size < 64 ? k->size : 64) ? snprintf(buf, size, "splitkv:size=%ld", k->size)
                                                   : snprintf(buf, size, "splitkv:size=%ld,%ld", k->size, k->bc);
        break;
    default: return DRIFT_EINVAL;
    }
    return n >= 0 && (size_t)n < size ? n : DRIFT_EINVAL;
}

int drift_kv_format_parse(drift_kv_format_t *f, const char *spec, char *err, size_t errsz)
{
    if (!f || !spec) return drift_why(err, errsz, DRIFT_EINVAL, "kv cache format: missing");
    if (!strcmp(spec, "int8:token")) {
        *f = (drift_kv_format_t){DRIFT_KV_INT8_TOKEN, DRIFT_FP32};
        return 0;
    }
    if (!strcmp(spec, "int8:head")) {
        *f = (drift_kv_format_t){DRIFT_KV_INT8_HEAD, DRIFT_FP32};
        return 0;
    }
    drift_format_t x;
    if (drift_format_parse(&x, spec) == 0) {
        *f = (drift_kv_format_t){DRIFT_KV_FLOAT, x};
        return 0;
    }
    return drift_why(err, errsz, DRIFT_EINVAL,
        "kv cache format '%s': expected fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2, int8:token or int8:head", spec);
}

int drift_kv_format_print(char *buf, size_t size, const drift_kv_format_t *f)
{
    if (!buf || !f) return DRIFT_EINVAL;
    const char *s = f->storage == DRIFT_KV_INT8_TOKEN  ? "int8:token"
                    : f->storage == DRIFT_KV_INT8_HEAD ? "int8:head"
                    : format_ok(f->fmt)                ? drift_format_name(f->fmt)
                                                       : NULL;
    if (!s) return DRIFT_EINVAL;
    int n = snprintf(buf, size, "%s", s);
    return n >= 0 && (size_t)n < size ? n : DRIFT_EINVAL;
}

/* ---- options ------------------------------------------------------------------------------ */

drift_attn_opts_t drift_attn_opts(int heads, int kv_heads, int head_dim, drift_format_t in)
{
    drift_attn_opts_t o;
    memset(&o, 0, sizeof o);
    o.heads = heads;
    o.kv_heads = kv_heads;
    o.head_dim = head_dim;
    o.causal = 1;
    o.scale = 0;
    o.kernel = (drift_attn_kernel_t){DRIFT_ATTN_STANDARD, 0, 0, 0, 0};
    drift_order_t seq = {DRIFT_ORDER_SEQ, 0, 0, 0, DRIFT_TC_V100};
    drift_acc_t acc = {DRIFT_FP32, DRIFT_RNE, 1};
    o.qk = drift_recipe(in, &seq, DRIFT_FP32, in);
    o.pv = drift_recipe(in, &seq, DRIFT_FP32, in);
    o.softmax = (drift_softmax_variant_t){DRIFT_SOFTMAX_SAFE, 0};
    o.softmax_acc = acc;
    o.sum_order = seq;
    o.exp = DRIFT_EXP_EXPF;
    o.normalise_after = 0;
    return o;
}

static int recipe_ok(const drift_recipe_t *r, const char *name, char *err, size_t errsz)
{
    if (r->exact)
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED, "attention %s recipe: exact is not an attention kernel", name);
    if (!format_ok(r->in) || !format_ok(r->out) || !format_ok(r->acc.acc))
        return drift_why(err, errsz, DRIFT_EINVAL,
            "attention %s recipe: unknown format (accepted: fp64 fp32 tf32 fp16 bf16 fp8e4m3 fp8e5m2)", name);
    if ((int)r->acc.mode < 0 || r->acc.mode >= DRIFT_NMODES || r->acc.mode == DRIFT_SR)
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
            "attention %s recipe: accumulator rounding must be rne, rz, rna, ru or rd (not sr)", name);
    char buf[DRIFT_ORDER_SPEC_MAX];
    if (drift_order_print(buf, sizeof buf, &r->order) < 0)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention %s recipe: invalid order", name);
    char why[DRIFT_ERRMSG_MAX];
    int rc = drift_order_dot_check(&r->order, r->in, r->acc.acc, why, sizeof why);
    return rc ? drift_why(err, errsz, rc, "attention %s recipe: %s", name, why) : 0;
}

int drift_attn_validate(const drift_attn_opts_t *o, char *err, size_t errsz)
{
    if (!o) return drift_why(err, errsz, DRIFT_EINVAL, "attention options: missing");
    if (o->heads < 1 || o->heads > DRIFT_ATTN_DIM_MAX)
        return drift_why(
            err, errsz, DRIFT_EINVAL, "attention: heads (%d) must be an integer 1..%ld", o->heads, DRIFT_ATTN_DIM_MAX);
    if (o->kv_heads < 1 || o->kv_heads > DRIFT_ATTN_DIM_MAX)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: kv_heads (%d) must be an integer 1..%ld", o->kv_heads,
            DRIFT_ATTN_DIM_MAX);
    if (o->heads % o->kv_heads)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: heads (%d) must be a multiple of kv_heads (%d)",
            o->heads, o->kv_heads);
    if (o->head_dim < 1 || o->head_dim > DRIFT_ATTN_DIM_MAX)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: head_dim (%d) must be an integer 1..%ld", o->head_dim,
            DRIFT_ATTN_DIM_MAX);
    if (!(o->scale >= 0) || !isfinite(o->scale))
        return drift_why(
            err, errsz, DRIFT_EINVAL, "attention: scale must be finite and > 0 (or 0 for 1/sqrt(head_dim))");
    int st;
    if ((st = recipe_ok(&o->qk, "qk", err, errsz)) || (st = recipe_ok(&o->pv, "pv", err, errsz))) return st;
    char kbuf[DRIFT_ATTN_SPEC_MAX];
    const drift_attn_kernel_t *k = &o->kernel;
    if (drift_attn_kernel_print(kbuf, sizeof kbuf, k) < 0 ||
        (k->kind != DRIFT_ATTN_STANDARD && (k->bc < 1 || k->bc > DRIFT_ATTN_TILE_MAX)) ||
        (k->kind == DRIFT_ATTN_FLASH && (k->br < 1 || k->br > DRIFT_ATTN_TILE_MAX)) ||
        (k->kind == DRIFT_ATTN_SPLITKV_N && (k->splits < 1 || k->splits > DRIFT_ATTN_SPLIT_MAX)) ||
        (k->kind == DRIFT_ATTN_SPLITKV_SIZE && (k->size < 1 || k->size > DRIFT_ATTN_SIZE_MAX)))
        return drift_why(err, errsz, DRIFT_EINVAL,
            "attention kernel: invalid (accepted: standard, flash:Br,Bc, splitkv:N[,Bc], splitkv:size=S[,Bc]; split size 0 is not a size)");
    if (k->kind == DRIFT_ATTN_SPLITKV_SIZE && k->size % k->bc)
        return drift_why(
            err, errsz, DRIFT_EINVAL, "attention kernel '%s': the split size must be a multiple of the tile Bc", kbuf);
    drift_tc_params_t p; /* a tensor-core P.V (its path checked above) reads tiles in blocks */
    if (k->kind != DRIFT_ATTN_STANDARD && drift_order_tc_params(&p, &o->pv.order, o->pv.in) == 1) {
        if (k->bc % p.block)
            return drift_why(err, errsz, DRIFT_EINVAL,
                "attention kernel '%s': the tile Bc = %ld must be a multiple of %d, the tc:%s block for %s P.V", kbuf,
                k->bc, p.block, drift_tc_arch_name(o->pv.order.arch), drift_format_name(o->pv.in));
    }
    drift_softmax_opts_t so = drift_softmax_opts(o->qk.out, o->softmax_acc.acc);
    so.acc = o->softmax_acc;
    so.order = o->sum_order;
    so.variant = o->softmax;
    so.exp = o->exp;
    char serr[DRIFT_ERRMSG_MAX];
    if ((st = drift_softmax_validate(&so, serr, sizeof serr))) return drift_why(err, errsz, st, "attention %s", serr);
    return 0;
}
