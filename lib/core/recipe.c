/* recipe.c — one value for how a number is computed: constructors, the validator, parsing and
 * printing. The grammar and its meaning are in recipe.h. */
#include "recipe.h"
#include "drift.h"
#include "why.h"

#include <stdio.h>
#include <string.h>

#define FORMATS "fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2"
#define ORDERS "seq, rev, pairwise, blocked:B, splitk:S[:tree], warp:W, kahan, neumaier, random:SEED, tc:ARCH, exact"

drift_recipe_t drift_recipe(drift_format_t in, const drift_order_t *order, drift_format_t acc, drift_format_t out)
{
    drift_recipe_t r;
    memset(&r, 0, sizeof r);
    r.in = in;
    if (order) r.order = *order;
    r.acc = (drift_acc_t){acc, DRIFT_RNE, 1};
    r.out = out;
    return r;
}

drift_recipe_t drift_recipe_exact(drift_format_t in, drift_format_t out)
{
    drift_recipe_t r = drift_recipe(in, NULL, out, out);
    r.exact = 1;
    return r;
}

int drift_recipe_validate(const drift_recipe_t *r, char *err, size_t errsz)
{
    if (err && errsz) err[0] = 0;
    if (!r) return drift_why(err, errsz, DRIFT_EINVAL, "no recipe");
    if ((unsigned)r->in >= DRIFT_NFORMATS)
        return drift_why(err, errsz, DRIFT_EINVAL, "input format %d is not a format", (int)r->in);
    if ((unsigned)r->out >= DRIFT_NFORMATS)
        return drift_why(err, errsz, DRIFT_EINVAL, "output format %d is not a format", (int)r->out);
    if (r->exact) return DRIFT_OK;
    char spec[DRIFT_ORDER_SPEC_MAX];
    if (drift_order_print(spec, sizeof spec, &r->order) < 0)
        return drift_why(err, errsz, DRIFT_EINVAL, "the order is malformed");
    if ((unsigned)r->acc.acc >= DRIFT_NFORMATS)
        return drift_why(err, errsz, DRIFT_EINVAL, "accumulator format %d is not a format", (int)r->acc.acc);
    if (drift_order_is_tc(&r->order)) {
        if (r->acc.acc != DRIFT_FP32 && r->acc.acc != DRIFT_FP16)
            return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
                "accumulator %s: a tensor core (%s) accumulates into fp32 or fp16 only", drift_format_name(r->acc.acc),
                spec);
        return DRIFT_OK;
    }
    if ((unsigned)r->acc.mode >= DRIFT_NMODES)
        return drift_why(err, errsz, DRIFT_EINVAL, "rounding mode %d is not a mode", (int)r->acc.mode);
    if (r->acc.mode == DRIFT_SR)
        return drift_why(
            err, errsz, DRIFT_EUNSUPPORTED, "rounding mode sr: accumulation supports rne, rz, rna, ru, rd");
    if (r->acc.fma != 0 && r->acc.fma != 1)
        return drift_why(err, errsz, DRIFT_EINVAL, "fma is %d, not 0 or 1", r->acc.fma);
    return DRIFT_OK;
}

/* The accumulation fields that matter for this recipe (tc and exact fix them). */
static int same_acc_fields(const drift_recipe_t *a, const drift_recipe_t *b)
{
    if (a->exact || b->exact) return a->exact && b->exact;
    if (!drift_order_equal(&a->order, &b->order) || a->acc.acc != b->acc.acc) return 0;
    if (drift_order_is_tc(&a->order)) return 1;
    return a->acc.mode == b->acc.mode && a->acc.fma == b->acc.fma;
}

int drift_recipe_same_acc(const drift_recipe_t *a, const drift_recipe_t *b)
{
    return a && b && a->in == b->in && same_acc_fields(a, b);
}

int drift_recipe_equal(const drift_recipe_t *a, const drift_recipe_t *b)
{
    return drift_recipe_same_acc(a, b) && a->out == b->out;
}

int drift_recipe_print(char *buf, size_t size, const drift_recipe_t *r)
{
    if (!buf || drift_recipe_validate(r, NULL, 0)) return DRIFT_EINVAL;
    int n;
    if (r->exact) {
        n = snprintf(buf, size, "%s/exact/-/%s", drift_format_name(r->in), drift_format_name(r->out));
    } else {
        char o[DRIFT_ORDER_SPEC_MAX];
        drift_order_print(o, sizeof o, &r->order);
        int plain = drift_order_is_tc(&r->order);
        const char *mode = plain || r->acc.mode == DRIFT_RNE ? "" : drift_mode_name(r->acc.mode);
        n = snprintf(buf, size, "%s/%s/%s%s%s%s/%s", drift_format_name(r->in), o, drift_format_name(r->acc.acc),
            *mode ? ":" : "", mode, plain || r->acc.fma ? "" : ":nofma", drift_format_name(r->out));
    }
    return n < 0 || (size_t)n >= size ? DRIFT_EINVAL : n;
}

int drift_recipe_label(char *buf, size_t size, const drift_recipe_t *r)
{
    char o[DRIFT_ORDER_SPEC_MAX];
    int n;
    if (!buf || !r) return DRIFT_EINVAL;
    if (r->exact) {
        n = snprintf(buf, size, "exact/-/%s", drift_format_name(r->out));
    } else {
        if (drift_order_print(o, sizeof o, &r->order) < 0) return DRIFT_EINVAL;
        n = snprintf(buf, size, "%s/%s/%s", o, drift_format_name(r->acc.acc), drift_format_name(r->out));
    }
    return n < 0 || (size_t)n >= size ? DRIFT_EINVAL : n;
}

/* Splits s at '/' into at most 5 fields (a fifth means too many). */
static int split_fields(char *s, char **f)
{
    int n = 0;
    for (char *p = s;; p++) {
        if (n == 5) return n;
        f[n++] = p;
        p = strchr(p, '/');
        if (!p) return n;
        *p = 0;
    }
}

static int parse_acc(drift_recipe_t *r, char *acc, int tc, char *err, size_t errsz)
{
    char *mod = strchr(acc, ':');
    if (mod) *mod++ = 0;
    if (drift_format_parse(&r->acc.acc, acc))
        return drift_why(err, errsz, DRIFT_EINVAL, "accumulator '%s' is not a format (accepted: %s)", acc, FORMATS);
    while (mod) {
        char *next = strchr(mod, ':');
        if (next) *next++ = 0;
        drift_mode_t m;
        if (tc)
            return drift_why(
                err, errsz, DRIFT_EINVAL, "accumulator modifier '%s': a tensor-core model fixes its rounding", mod);
        if (!strcmp(mod, "nofma") && r->acc.fma) {
            r->acc.fma = 0;
        } else if (!drift_mode_parse(&m, mod) && m != DRIFT_RNE && m != DRIFT_SR && r->acc.mode == DRIFT_RNE &&
                   r->acc.fma) {
            r->acc.mode = m;
        } else {
            return drift_why(err, errsz, DRIFT_EINVAL,
                "accumulator modifier '%s' (accepted: FORMAT[:rz|rna|ru|rd][:nofma], each at most once, in "
                "that order)",
                mod);
        }
        mod = next;
    }
    return DRIFT_OK;
}

int drift_recipe_parse(drift_recipe_t *r, const char *spec, char *err, size_t errsz)
{
    char s[DRIFT_RECIPE_SPEC_MAX], *f[5];
    if (err && errsz) err[0] = 0;
    if (!r || !spec) return drift_why(err, errsz, DRIFT_EINVAL, "no recipe");
    if (strlen(spec) >= sizeof s)
        return drift_why(err, errsz, DRIFT_EINVAL, "recipe longer than %d characters", DRIFT_RECIPE_SPEC_MAX - 1);
    strcpy(s, spec);
    int n = split_fields(s, f);
    if (n != 4)
        return drift_why(err, errsz, DRIFT_EINVAL,
            "recipe '%s' has %s than 4 fields (accepted: IN/ORDER/ACC/OUT, e.g. bf16/tc:h100/fp32/bf16)", spec,
            n < 4 ? "fewer" : "more");
    drift_recipe_t t;
    memset(&t, 0, sizeof t);
    t.acc = (drift_acc_t){DRIFT_FP32, DRIFT_RNE, 1};
    if (drift_format_parse(&t.in, f[0]))
        return drift_why(err, errsz, DRIFT_EINVAL, "input format '%s' (accepted: %s)", f[0], FORMATS);
    if (drift_format_parse(&t.out, f[3]))
        return drift_why(err, errsz, DRIFT_EINVAL, "output format '%s' (accepted: %s)", f[3], FORMATS);
    if (!strcmp(f[1], "exact")) {
        if (strcmp(f[2], "-"))
            return drift_why(
                err, errsz, DRIFT_EINVAL, "accumulator '%s': an exact recipe has none (write IN/exact/-/OUT)", f[2]);
        t.exact = 1;
        t.acc.acc = t.out;
    } else {
        if (drift_order_parse(&t.order, f[1]))
            return drift_why(err, errsz, DRIFT_EINVAL, "order '%s' (accepted: %s)", f[1], ORDERS);
        int rc = parse_acc(&t, f[2], drift_order_is_tc(&t.order), err, errsz);
        if (rc) return rc;
    }
    int rc = drift_recipe_validate(&t, err, errsz);
    if (rc) return DRIFT_EINVAL;
    *r = t;
    return DRIFT_OK;
}
