/* gemm_kernel_spec.c — GEMM kernels as data (gemm.h): parsing and printing the kernel spec,
 * and the reduction order each kernel gives its outputs (law 2).
 *
 * The order is built by the order parser from text, never field by field: splitk:S[:tree]
 * and tc:ARCH are spelled the same in both grammars, so a kernel's order is its own spec
 * read as an order (and naive/tiled are seq). Only the order parser and the recipe
 * dispatcher know how a tensor-core order is represented. */
#include <stdio.h>
#include <string.h>

#include "drift.h"
#include "gemm_internal.h"
#include "tc_model.h"

/* A decimal integer 1..max without sign or leading zero; advances *s. */
static int parse_pos(const char **s, long max, long *out)
{
    const char *p = *s;
    if (*p < '1' || *p > '9') return -1;
    long v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > max) return -1;
        p++;
    }
    *s = p;
    *out = v;
    return 0;
}

int drift_gemm_kernel_parse(drift_gemm_kernel_t *k, const char *spec)
{
    if (!k || !spec) return DRIFT_EINVAL;
    drift_gemm_kernel_t r;
    memset(&r, 0, sizeof r);
    const char *p;
    long v[3];
    if (strcmp(spec, "naive") == 0) {
        r.family = DRIFT_GEMM_NAIVE;
    } else if (strncmp(spec, "tiled:", 6) == 0) {
        p = spec + 6;
        for (int t = 0; t < 3; t++) {
            if (parse_pos(&p, DRIFT_GEMM_TILE_MAX, &v[t])) return DRIFT_EINVAL;
            if (*p != (t < 2 ? ',' : '\0')) return DRIFT_EINVAL;
            p++;
        }
        r.family = DRIFT_GEMM_TILED;
        r.bm = (int)v[0], r.bn = (int)v[1], r.bk = (int)v[2];
    } else if (strncmp(spec, "splitk:", 7) == 0) {
        p = spec + 7;
        if (parse_pos(&p, DRIFT_GEMM_SPLIT_MAX, &v[0])) return DRIFT_EINVAL;
        if (strcmp(p, ":tree") == 0)
            r.tree = 1;
        else if (*p != '\0')
            return DRIFT_EINVAL;
        r.family = DRIFT_GEMM_SPLITK;
        r.splits = (int)v[0];
    } else if (strncmp(spec, "tc:", 3) == 0) {
        int found = 0;
        for (int a = 0; a < DRIFT_TC_NARCH; a++)
            if (strcmp(spec + 3, drift_tc_arch_name((drift_tc_arch_t)a)) == 0) r.arch = (drift_tc_arch_t)a, found = 1;
        if (!found) return DRIFT_EINVAL;
        r.family = DRIFT_GEMM_TC;
    } else {
        return DRIFT_EINVAL;
    }
    *k = r;
    return DRIFT_OK;
}

int drift_gemm_kernel_valid(const drift_gemm_kernel_t *k)
{
    switch (k->family) {
    case DRIFT_GEMM_NAIVE: return 1;
    case DRIFT_GEMM_TILED:
        return k->bm >= 1 && k->bm <= DRIFT_GEMM_TILE_MAX && k->bn >= 1 && k->bn <= DRIFT_GEMM_TILE_MAX && k->bk >= 1 &&
               k->bk <= DRIFT_GEMM_TILE_MAX;
    case DRIFT_GEMM_SPLITK:
        return k->splits >= 1 && k->splits <= DRIFT_GEMM_SPLIT_MAX && (k->tree == 0 || k->tree == 1);
    case DRIFT_GEMM_TC: return (unsigned)k->arch < DRIFT_TC_NARCH;
    default: return 0;
    }
}

int drift_gemm_kernel_print(char *buf, size_t size, const drift_gemm_kernel_t *k)
{
    if (!buf || !k || !drift_gemm_kernel_valid(k)) return DRIFT_EINVAL;
    int n;
    switch (k->family) {
    case DRIFT_GEMM_NAIVE: n = snprintf(buf, size, "naive"); break;
    case DRIFT_GEMM_TILED: n = snprintf(buf, size, "tiled:%d,%d,%d", k->bm, k->bn, k->bk); break;
    case DRIFT_GEMM_SPLITK: n = snprintf(buf, size, "splitk:%d%s", k->splits, k->tree ? ":tree" : ""); break;
    default: n = snprintf(buf, size, "tc:%s", drift_tc_arch_name(k->arch)); break;
    }
    if (n < 0 || (size_t)n >= size) return DRIFT_EINVAL;
    return n;
}

int drift_gemm_kernel_equal(const drift_gemm_kernel_t *a, const drift_gemm_kernel_t *b)
{
    if (a->family != b->family) return 0;
    switch (a->family) {
    case DRIFT_GEMM_TILED: return a->bm == b->bm && a->bn == b->bn && a->bk == b->bk;
    case DRIFT_GEMM_SPLITK: return a->splits == b->splits && a->tree == b->tree;
    case DRIFT_GEMM_TC: return a->arch == b->arch;
    default: return 1;
    }
}

int drift_gemm_kernel_order(drift_order_t *o, const drift_gemm_kernel_t *k)
{
    if (!o || !k || !drift_gemm_kernel_valid(k)) return DRIFT_EINVAL;
    /* naive and tiled keep one seq chain per output (gemm.h); splitk:S[:tree] and tc:ARCH
     * are order specs as printed. */
    char spec[DRIFT_GEMM_KERNEL_SPEC_MAX];
    if (k->family == DRIFT_GEMM_NAIVE || k->family == DRIFT_GEMM_TILED)
        snprintf(spec, sizeof spec, "seq");
    else if (drift_gemm_kernel_print(spec, sizeof spec, k) < 0)
        return DRIFT_EINVAL;
    drift_order_t r;
    if (drift_order_parse(&r, spec) != DRIFT_OK) return DRIFT_EINVAL;
    *o = r;
    return DRIFT_OK;
}

drift_gemm_opts_t drift_gemm_opts(drift_format_t in, drift_format_t acc)
{
    drift_gemm_opts_t o;
    o.in = in;
    o.acc.acc = acc;
    o.acc.mode = DRIFT_RNE;
    o.acc.fma = 1;
    o.out = acc;
    o.alpha = 1.0;
    o.beta = 0.0;
    return o;
}
