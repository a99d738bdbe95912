/* attention.c — standard, flash and split-KV attention (see attention.h for the numerics).
 *
 * Two implementations of every tiled kernel: the generic one (any formats, orders and
 * modes, through drift_dot / drift_tc_dot / drift_sum and softmax.h's kernel arithmetic)
 * and a float fast path for the common recipe (inputs of at most 24 bits, seq order, fp32
 * RNE fma accumulation, fp32 softmax with seq sums), vectorised over keys for QK^T and over
 * head_dim for P.V. tests/test_attention.c proves both equal to an independent emulation. */
#include "attention.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "drift.h"
#include "why.h"
#include "dispatch_order.h"
#include "exact.h"
#include "tc_model.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define ATTN_X86 1
#endif


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
            return drift_why(err, errsz, DRIFT_EINVAL, "attention kernel '%s': expected flash:Br,Bc with tiles 1..%ld", spec,
                        DRIFT_ATTN_TILE_MAX);
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
            return drift_why(err, errsz, DRIFT_EINVAL, "attention kernel '%s': expected splitkv:N[,Bc] with N 1..%ld and Bc 1..%ld",
                        spec, DRIFT_ATTN_SPLIT_MAX, DRIFT_ATTN_TILE_MAX);
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
        n = k->bc == 64 ? snprintf(buf, size, "splitkv:%ld", k->splits) : snprintf(buf, size, "splitkv:%ld,%ld", k->splits, k->bc);
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
    if (r->exact) return drift_why(err, errsz, DRIFT_EUNSUPPORTED, "attention %s recipe: exact is not an attention kernel", name);
    if (!format_ok(r->in) || !format_ok(r->out) || !format_ok(r->acc.acc))
        return drift_why(err, errsz, DRIFT_EINVAL, "attention %s recipe: unknown format (accepted: fp64 fp32 tf32 fp16 bf16 fp8e4m3 fp8e5m2)", name);
    if ((int)r->acc.mode < 0 || r->acc.mode >= DRIFT_NMODES || r->acc.mode == DRIFT_SR)
        return drift_why(err, errsz, DRIFT_EUNSUPPORTED, "attention %s recipe: accumulator rounding must be rne, rz, rna, ru or rd (not sr)", name);
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
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: heads (%d) must be an integer 1..%ld", o->heads, DRIFT_ATTN_DIM_MAX);
    if (o->kv_heads < 1 || o->kv_heads > DRIFT_ATTN_DIM_MAX)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: kv_heads (%d) must be an integer 1..%ld", o->kv_heads, DRIFT_ATTN_DIM_MAX);
    if (o->heads % o->kv_heads)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: heads (%d) must be a multiple of kv_heads (%d)", o->heads, o->kv_heads);
    if (o->head_dim < 1 || o->head_dim > DRIFT_ATTN_DIM_MAX)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: head_dim (%d) must be an integer 1..%ld", o->head_dim, DRIFT_ATTN_DIM_MAX);
    if (!(o->scale >= 0) || !isfinite(o->scale))
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: scale must be finite and > 0 (or 0 for 1/sqrt(head_dim))");
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
        return drift_why(err, errsz, DRIFT_EINVAL, "attention kernel '%s': the split size must be a multiple of the tile Bc", kbuf);
    drift_tc_params_t p; /* a tensor-core P.V (its path checked above) reads tiles in blocks */
    if (k->kind != DRIFT_ATTN_STANDARD && drift_order_tc_params(&p, &o->pv.order, o->pv.in) == 1) {
        if (k->bc % p.block)
            return drift_why(err, errsz, DRIFT_EINVAL,
                        "attention kernel '%s': the tile Bc = %ld must be a multiple of %d, the tc:%s block for %s P.V", kbuf, k->bc,
                        p.block, drift_tc_arch_name(o->pv.order.arch), drift_format_name(o->pv.in));
    }
    drift_softmax_opts_t so = drift_softmax_opts(o->qk.out, o->softmax_acc.acc);
    so.acc = o->softmax_acc;
    so.order = o->sum_order;
    so.variant = o->softmax;
    so.exp = o->exp;
    char serr[DRIFT_ERRMSG_MAX];
    if ((st = drift_softmax_validate(&so, serr, sizeof serr)))
        return drift_why(err, errsz, st, "attention %s", serr);
    return 0;
}

/* ---- KV cache ------------------------------------------------------------------------------ */

void drift_kv_free(drift_kv_cache_t *c)
{
    if (!c) return;
    free(c->k);
    free(c->v);
    free(c->kq);
    free(c->vq);
    free(c->kscale);
    free(c->vscale);
    memset(c, 0, sizeof *c);
}

int drift_kv_init(drift_kv_cache_t *c, int kv_heads, int head_dim, size_t capacity, const drift_kv_format_t *fmt,
                  char *err, size_t errsz)
{
    if (!c || !fmt) return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: missing argument");
    memset(c, 0, sizeof *c);
    if (kv_heads < 1 || kv_heads > DRIFT_ATTN_DIM_MAX)
        return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: kv_heads (%d) must be an integer 1..%ld", kv_heads, DRIFT_ATTN_DIM_MAX);
    if (head_dim < 1 || head_dim > DRIFT_ATTN_DIM_MAX)
        return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: head_dim (%d) must be an integer 1..%ld", head_dim, DRIFT_ATTN_DIM_MAX);
    if (capacity < 1) return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: capacity must be at least 1 token");
    char buf[32];
    if (drift_kv_format_print(buf, sizeof buf, fmt) < 0)
        return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: unknown format (accepted: a lab float format, int8:token, int8:head)");
    size_t row = (size_t)kv_heads * (size_t)head_dim;
    if (capacity > SIZE_MAX / 2 / sizeof(double) / row)
        return drift_why(err, errsz, DRIFT_ENOMEM, "kv cache: capacity %zu tokens x %zu values cannot fit in memory", capacity, row);
    size_t n = capacity * row;
    c->fmt = *fmt;
    c->kv_heads = kv_heads;
    c->head_dim = head_dim;
    c->capacity = capacity;
    c->k = malloc(n * sizeof *c->k);
    c->v = malloc(n * sizeof *c->v);
    int bad = !c->k || !c->v;
    if (fmt->storage != DRIFT_KV_FLOAT) {
        size_t ns = fmt->storage == DRIFT_KV_INT8_TOKEN ? capacity * (size_t)kv_heads : (size_t)kv_heads;
        c->kq = malloc(n);
        c->vq = malloc(n);
        c->kscale = malloc(ns * sizeof *c->kscale);
        c->vscale = malloc(ns * sizeof *c->vscale);
        bad |= !c->kq || !c->vq || !c->kscale || !c->vscale;
    }
    if (bad) {
        drift_kv_free(c);
        return drift_why(err, errsz, DRIFT_ENOMEM, "kv cache: out of memory for %zu tokens", capacity);
    }
    return 0;
}

static double amax(const double *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

static double int8_scale(double a) { return a > 0 ? drift_rne(a / 127.0, DRIFT_FP32) : 1.0; }

/* code of x at scale s: rint (ties to even) of the double quotient, clamped */
static void quantise(int8_t *q, double *deq, const double *x, size_t n, double s)
{
    for (size_t i = 0; i < n; i++) {
        double r = rint(x[i] / s);
        r = r > 127 ? 127 : r < -127 ? -127 : r;
        q[i] = (int8_t)r;
        deq[i] = drift_rne(r * s, DRIFT_FP32);
    }
}

int drift_kv_append(drift_kv_cache_t *c, const double *k, const double *v, size_t ntok, char *err, size_t errsz)
{
    if (!c || !c->k || (ntok && (!k || !v))) return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: missing argument");
    if (ntok > c->capacity - c->len)
        return drift_why(err, errsz, DRIFT_ERANGE, "kv cache: %zu more tokens do not fit (%zu of %zu used)", ntok, c->len,
                    c->capacity);
    size_t d = (size_t)c->head_dim, H = (size_t)c->kv_heads, row = H * d;
    for (size_t i = 0; i < ntok * row; i++)
        if (!isfinite(k[i]) || !isfinite(v[i])) return drift_why(err, errsz, DRIFT_EINVAL, "kv cache: keys and values must be finite");
    if (c->fmt.storage == DRIFT_KV_INT8_HEAD && !c->scales_set) {
        for (size_t g = 0; g < H; g++) {
            double ak = 0, av = 0;
            for (size_t t = 0; t < ntok; t++) {
                double a = amax(k + t * row + g * d, d), b = amax(v + t * row + g * d, d);
                ak = a > ak ? a : ak;
                av = b > av ? b : av;
            }
            c->kscale[g] = int8_scale(ak);
            c->vscale[g] = int8_scale(av);
        }
        c->scales_set = ntok > 0;
    }
    for (size_t t = 0; t < ntok; t++) {
        size_t at = (c->len + t) * row;
        for (size_t g = 0; g < H; g++) {
            const double *kx = k + t * row + g * d, *vx = v + t * row + g * d;
            size_t o = at + g * d;
            switch (c->fmt.storage) {
            case DRIFT_KV_FLOAT:
                for (size_t i = 0; i < d; i++) {
                    c->k[o + i] = drift_rne(kx[i], c->fmt.fmt);
                    c->v[o + i] = drift_rne(vx[i], c->fmt.fmt);
                }
                break;
            case DRIFT_KV_INT8_TOKEN: {
                size_t si = (c->len + t) * H + g;
                c->kscale[si] = int8_scale(amax(kx, d));
                c->vscale[si] = int8_scale(amax(vx, d));
                quantise(c->kq + o, c->k + o, kx, d, c->kscale[si]);
                quantise(c->vq + o, c->v + o, vx, d, c->vscale[si]);
                break;
            }
            case DRIFT_KV_INT8_HEAD:
                quantise(c->kq + o, c->k + o, kx, d, c->kscale[g]);
                quantise(c->vq + o, c->v + o, vx, d, c->vscale[g]);
                break;
            }
        }
    }
    c->len += ntok;
    return 0;
}

/* ---- the per-call state ------------------------------------------------------------------ */

typedef struct {
    const drift_attn_opts_t *o;
    size_t L, Lpad, d, bc;
    drift_karith_t ka, kpv; /* softmax arithmetic; P.V accumulator */
    drift_format_t A;
    double scale_d, scale_A, c, ln_c; /* scale as double, in A; exp2: round_A(scale log2 e) */
    int fast;                         /* float fast path of the flash loop */
    int fast_dots;                    /* float fast path of the dot products (standard) */
    /* generic: per kv head, K rounded [L][d] and V transposed [d][Lpad] */
    double *Kr, *Vt;
    /* fast: per kv head, K transposed [d][Lpad] and V [Lpad][d], floats */
    float *Kt, *Vf;
    const unsigned char *mask;
    size_t lim_all; /* non-causal: the key limit for every row (L) */
} call_t;

static inline double rnd_to(double x, drift_format_t f) { return f == DRIFT_FP64 ? x : drift_rne(x, f); }

/* One dot product of a recipe: out = init + a . b (init NULL: none). */
static int rdot(double *out, const double *a, const double *b, size_t n, const double *init, const drift_recipe_t *r)
{
    return drift_order_dot(out, a, b, n, init, &r->order, r->in, &r->acc);
}

/* ---- fast path helpers (float) ------------------------------------------------------------- */

static inline float bf16_rne(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

/* S[j] = q . Kt[:, j] in seq order with fmaf, j in [0, n) */
#define SCORES_BODY                                                                                                   \
    for (size_t j = 0; j < n; j++) S[j] = q[0] * Kt[j];                                                               \
    for (size_t c = 1; c < d; c++) {                                                                                  \
        const float qc = q[c];                                                                                        \
        const float *kr = Kt + c * ld;                                                                                \
        for (size_t j = 0; j < n; j++) S[j] = fmaf(qc, kr[j], S[j]);                                                  \
    }
/* O[c] = fmaf(p_j, V[j][c], O[c]) for j in [0, n) */
#define PV_BODY                                                                                                       \
    for (size_t j = 0; j < n; j++) {                                                                                  \
        const float pj = p[j];                                                                                        \
        const float *vr = V + j * d;                                                                                  \
        for (size_t c = 0; c < d; c++) O[c] = fmaf(pj, vr[c], O[c]);                                                  \
    }

static void scores_gen(float *restrict S, const float *restrict q, const float *restrict Kt, size_t n, size_t d, size_t ld)
{
    SCORES_BODY
}
static void pv_gen(float *restrict O, const float *restrict p, const float *restrict V, size_t n, size_t d) { PV_BODY }
#ifdef ATTN_X86
__attribute__((target("avx2,fma"))) static void scores_avx2(float *restrict S, const float *restrict q,
                                                            const float *restrict Kt, size_t n, size_t d, size_t ld)
{
    SCORES_BODY
}
__attribute__((target("avx2,fma"))) static void pv_avx2(float *restrict O, const float *restrict p,
                                                        const float *restrict V, size_t n, size_t d)
{
    PV_BODY
}
#endif

static int simd_ok(void)
{
#ifdef ATTN_X86
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        const char *env = getenv("DRIFT_NO_SIMD");
        if (env && *env && strcmp(env, "0") != 0) cached = 0;
    }
    return cached;
#else
    return 0;
#endif
}

static void scores_f(float *S, const float *q, const float *Kt, size_t n, size_t d, size_t ld)
{
#ifdef ATTN_X86
    if (simd_ok()) {
        scores_avx2(S, q, Kt, n, d, ld);
        return;
    }
#endif
    scores_gen(S, q, Kt, n, d, ld);
}

static void pv_f(float *O, const float *p, const float *V, size_t n, size_t d)
{
#ifdef ATTN_X86
    if (simd_ok()) {
        pv_avx2(O, p, V, n, d);
        return;
    }
#endif
    pv_gen(O, p, V, n, d);
}

/* ---- one query row over a range of tiles: the flash loop ------------------------------------ */

typedef struct {
    double m, l;  /* running max (x units: scaled in expf mode, raw in exp2 mode) and sum */
    double *O;    /* [d] unnormalised output in pv.acc */
} rowstate_t;

typedef struct {
    double *S, *p, *pr; /* [bc] */
    float *Sf, *pf, *prf, *Of; /* fast path scratch */
    double *qr;         /* [d] */
    float *qf;
} scratch_t;

static inline int live(const call_t *C, size_t j, size_t lim)
{
    return j < lim && (!C->mask || C->mask[j]);
}

/* exp of x relative to the current max, and the rescale factor (softmax.h's formulas). */
static inline double e_rel(const call_t *C, double x, double m, double ms)
{
    if (x == -INFINITY) return 0.0;
    if (C->o->exp == DRIFT_EXP_EXP2) return drift_kexp2(drift_kfma(&C->ka, x, C->c, -ms), C->A);
    return drift_kexp(drift_ksub(&C->ka, x, m), C->A);
}
static inline double resc(const call_t *C, double mo, double mn)
{
    double t = drift_ksub(&C->ka, mo, mn);
    if (C->o->exp == DRIFT_EXP_EXP2) return drift_kexp2(drift_kmul(&C->ka, t, C->c), C->A);
    return drift_kexp(t, C->A);
}

/* Tiles [t0, t1) (tile indices) for query row q (kv head g) with key limit lim. */
static int flash_rows_generic(const call_t *C, rowstate_t *rs, const double *qr, size_t g, size_t t0, size_t t1, size_t lim,
                              scratch_t *sc)
{
    const drift_attn_opts_t *o = C->o;
    size_t d = C->d, bc = C->bc;
    const double *Kr = C->Kr + g * C->L * d, *Vt = C->Vt + g * d * C->Lpad;
    int st;
    for (size_t t = t0; t < t1; t++) {
        size_t j0 = t * bc;
        double tmax = -INFINITY;
        for (size_t jj = 0; jj < bc; jj++) {
            size_t j = j0 + jj;
            double s = -INFINITY;
            if (j < C->L && live(C, j, lim)) {
                if ((st = rdot(&s, qr, Kr + j * d, d, NULL, &o->qk))) return st;
                if (o->exp == DRIFT_EXP_EXPF) s = drift_kmul(&C->ka, s, C->scale_A);
            }
            sc->S[jj] = s;
            if (s > tmax) tmax = s;
        }
        if (tmax == -INFINITY) continue; /* no live key: the tile is skipped */
        double mn = tmax > rs->m ? tmax : rs->m;
        double alpha = rs->m == -INFINITY ? 0.0 : resc(C, rs->m, mn);
        double ms = o->exp == DRIFT_EXP_EXP2 ? drift_kmul(&C->ka, mn, C->c) : 0;
        for (size_t jj = 0; jj < bc; jj++) {
            sc->p[jj] = e_rel(C, sc->S[jj], mn, ms);
            sc->pr[jj] = rnd_to(sc->p[jj], o->pv.in);
        }
        double r;
        if ((st = drift_sum(&r, sc->p, bc, &o->sum_order, &o->softmax_acc))) return st;
        rs->l = o->softmax_acc.fma ? drift_kfma(&C->ka, rs->l, alpha, r)
                                   : drift_kadd(&C->ka, drift_kmul(&C->ka, rs->l, alpha), r);
        for (size_t c = 0; c < d; c++) {
            double oc = drift_kmul(&C->kpv, rs->O[c], alpha);
            if ((st = rdot(&rs->O[c], sc->pr, Vt + c * C->Lpad + j0, bc, &oc, &o->pv))) return st;
        }
        rs->m = mn;
    }
    return 0;
}

static void flash_rows_fast(const call_t *C, rowstate_t *rs, const float *qf, size_t g, size_t t0, size_t t1, size_t lim,
                            scratch_t *sc)
{
    const drift_attn_opts_t *o = C->o;
    size_t d = C->d, bc = C->bc;
    const float *Kt = C->Kt + g * d * C->Lpad, *Vf = C->Vf + g * C->Lpad * d;
    float m = (float)rs->m, l = (float)rs->l;
    float *O = sc->Of;
    for (size_t c = 0; c < d; c++) O[c] = (float)rs->O[c];
    const float scale = (float)C->scale_A, cc = (float)C->c;
    const int base2 = o->exp == DRIFT_EXP_EXP2, is_bf16 = o->pv.in == DRIFT_BF16, is_f32 = o->pv.in == DRIFT_FP32;
    for (size_t t = t0; t < t1; t++) {
        size_t j0 = t * bc;
        float *S = sc->Sf, *p = sc->pf, *pr = sc->prf;
        scores_f(S, qf, Kt + j0, bc, d, C->Lpad);
        float tmax = -INFINITY;
        for (size_t jj = 0; jj < bc; jj++) {
            size_t j = j0 + jj;
            float s = (j < C->L && live(C, j, lim)) ? (base2 ? S[jj] : S[jj] * scale) : -INFINITY;
            S[jj] = s;
            tmax = s > tmax ? s : tmax;
        }
        if (tmax == -INFINITY) continue;
        float mn = tmax > m ? tmax : m;
        float alpha = m == -INFINITY ? 0.0f
                                     : (base2 ? (float)drift_kexp2((double)((m - mn) * cc), DRIFT_FP32)
                                              : (float)drift_kexp((double)(m - mn), DRIFT_FP32));
        float ms = mn * cc;
        for (size_t jj = 0; jj < bc; jj++) {
            float s = S[jj], e;
            if (s == -INFINITY) e = 0.0f;
            else if (base2) {
                float tt = fmaf(s, cc, -ms);
                e = drift_kexp2f(tt);
            } else {
                float tt = s - mn;
                e = drift_kexpf(tt);
            }
            p[jj] = e;
            pr[jj] = is_f32 ? e : is_bf16 ? bf16_rne(e) : (float)drift_rne((double)e, o->pv.in);
        }
        float r = p[0];
        for (size_t jj = 1; jj < bc; jj++) r += p[jj];
        l = o->softmax_acc.fma ? fmaf(l, alpha, r) : l * alpha + r;
        for (size_t c = 0; c < d; c++) O[c] *= alpha;
        pv_f(O, pr, Vf + j0 * d, bc, d);
        m = mn;
    }
    rs->m = m;
    rs->l = l;
    for (size_t c = 0; c < d; c++) rs->O[c] = O[c];
}

static int flash_rows(const call_t *C, rowstate_t *rs, const scratch_t *q, size_t g, size_t t0, size_t t1, size_t lim,
                      scratch_t *sc)
{
    if (C->fast) {
        flash_rows_fast(C, rs, q->qf, g, t0, t1, lim, sc);
        return 0;
    }
    return flash_rows_generic(C, rs, q->qr, g, t0, t1, lim, sc);
}

/* out_c = round_out(round_A(O_c * round_A(1 / l))), +0 when l == 0 */
static void finish(const call_t *C, double *out, const double *O, double l)
{
    if (l == 0) {
        for (size_t c = 0; c < C->d; c++) out[c] = 0.0;
        return;
    }
    double inv = drift_kdiv(&C->ka, 1.0, l);
    for (size_t c = 0; c < C->d; c++) out[c] = rnd_to(drift_kmul(&C->ka, O[c], inv), C->o->pv.out);
}

/* ---- kernels per row ------------------------------------------------------------------------- */

static int row_standard(const call_t *C, double *out, const double *qr, size_t g, size_t lim, scratch_t *sc)
{
    const drift_attn_opts_t *o = C->o;
    size_t L = C->L, d = C->d;
    const double *Kr = C->Kr + g * L * d, *Vt = C->Vt + g * d * C->Lpad;
    int st;
    if (C->fast_dots) { /* the same seq fmaf chains, vectorised over keys */
        scores_f(sc->Sf, sc->qf, C->Kt + g * d * C->Lpad, L, d, C->Lpad);
        for (size_t j = 0; j < L; j++) sc->S[j] = live(C, j, lim) ? rnd_to((double)sc->Sf[j], o->qk.out) : -INFINITY;
    } else {
        for (size_t j = 0; j < L; j++) {
            double s = -INFINITY;
            if (live(C, j, lim)) {
                if ((st = rdot(&s, qr, Kr + j * d, d, NULL, &o->qk))) return st;
                s = rnd_to(s, o->qk.out);
            }
            sc->S[j] = s;
        }
    }
    drift_softmax_opts_t so = drift_softmax_opts(o->qk.out, o->softmax_acc.acc);
    so.variant = o->softmax;
    so.acc = o->softmax_acc;
    so.order = o->sum_order;
    so.out = o->pv.in;
    so.exp = o->exp;
    so.scale = C->scale_d;
    double m, l;
    if ((st = drift_softmax_row(sc->p, &m, &l, sc->S, L, &so))) return st;
    if (l == 0) {
        for (size_t c = 0; c < d; c++) out[c] = 0.0;
        return 0;
    }
    for (size_t j = 0; j < L; j++)
        sc->pr[j] = o->normalise_after ? rnd_to(sc->p[j], o->pv.in) : rnd_to(drift_kdiv(&C->ka, sc->p[j], l), o->pv.in);
    double zero = 0.0;
    if (C->fast_dots) { /* O = +0, then the fmaf chain over keys, vectorised over head_dim */
        for (size_t j = 0; j < L; j++) sc->prf[j] = (float)sc->pr[j];
        for (size_t c = 0; c < d; c++) sc->Of[c] = 0.0f;
        pv_f(sc->Of, sc->prf, C->Vf + g * C->Lpad * d, L, d);
        for (size_t c = 0; c < d; c++) sc->S[c] = sc->Of[c];
    }
    for (size_t c = 0; c < d && !C->fast_dots; c++) {
        double oc;
        if ((st = rdot(&oc, sc->pr, Vt + c * C->Lpad, L, &zero, &o->pv))) return st;
        sc->S[c] = oc; /* S is free again: hold O */
    }
    if (o->normalise_after) finish(C, out, sc->S, l);
    else
        for (size_t c = 0; c < d; c++) out[c] = rnd_to(sc->S[c], o->pv.out);
    return 0;
}

static int row_flash(const call_t *C, double *out, const scratch_t *q, size_t g, size_t lim, scratch_t *sc, double *O)
{
    size_t tiles = (C->L + C->bc - 1) / C->bc;
    rowstate_t rs = {-INFINITY, 0, O};
    for (size_t c = 0; c < C->d; c++) O[c] = 0;
    int st = flash_rows(C, &rs, q, g, 0, tiles, lim, sc);
    if (st) return st;
    finish(C, out, O, rs.l);
    return 0;
}

static int row_splitkv(const call_t *C, double *out, const scratch_t *q, size_t g, size_t lim, scratch_t *sc, double *O,
                       double *acc)
{
    const drift_attn_opts_t *o = C->o;
    size_t d = C->d, tiles = (C->L + C->bc - 1) / C->bc, per;
    if (o->kernel.kind == DRIFT_ATTN_SPLITKV_N) per = (tiles + (size_t)o->kernel.splits - 1) / (size_t)o->kernel.splits;
    else per = (size_t)(o->kernel.size / o->kernel.bc);
    if (per == 0) per = 1;
    size_t nsplit = (tiles + per - 1) / per;
    /* pass 1: partials (lse_s, O_s) kept in acc: [nsplit][d + 1] */
    double *lse = acc, *Os = acc + nsplit;
    int st;
    for (size_t s = 0; s < nsplit; s++) {
        rowstate_t rs = {-INFINITY, 0, O};
        for (size_t c = 0; c < d; c++) O[c] = 0;
        size_t a = s * per, b = a + per < tiles ? a + per : tiles;
        if ((st = flash_rows(C, &rs, q, g, a, b, lim, sc))) return st;
        if (rs.l == 0) {
            lse[s] = -INFINITY;
            continue;
        }
        double inv = drift_kdiv(&C->ka, 1.0, rs.l);
        for (size_t c = 0; c < d; c++) Os[s * d + c] = drift_kmul(&C->ka, O[c], inv);
        double mm = o->exp == DRIFT_EXP_EXP2 ? drift_kmul(&C->ka, rs.m, C->scale_A) : rs.m;
        lse[s] = drift_kadd(&C->ka, mm, drift_klog(rs.l, C->A));
    }
    /* pass 2: the combine kernel */
    double M = -INFINITY;
    for (size_t s = 0; s < nsplit; s++) M = lse[s] > M ? lse[s] : M;
    if (M == -INFINITY) {
        for (size_t c = 0; c < d; c++) out[c] = 0.0;
        return 0;
    }
    double Z = 0;
    int first = 1;
    for (size_t s = 0; s < nsplit; s++) {
        if (lse[s] == -INFINITY) continue;
        double e = drift_kexp(drift_ksub(&C->ka, lse[s], M), C->A);
        Z = first ? e : drift_kadd(&C->ka, Z, e);
        first = 0;
    }
    double LSE = drift_kadd(&C->ka, drift_klog(Z, C->A), M);
    for (size_t c = 0; c < d; c++) O[c] = 0;
    for (size_t s = 0; s < nsplit; s++) {
        if (lse[s] == -INFINITY) continue;
        double w = drift_kexp(drift_ksub(&C->ka, lse[s], LSE), C->A);
        for (size_t c = 0; c < d; c++) O[c] = drift_kfma(&C->ka, w, Os[s * d + c], O[c]);
    }
    for (size_t c = 0; c < d; c++) out[c] = rnd_to(O[c], o->pv.out);
    return 0;
}

/* ---- the call ------------------------------------------------------------------------------- */

static int fast_recipe(const drift_recipe_t *r)
{
    return r->in != DRIFT_FP64 && r->order.kind == DRIFT_ORDER_SEQ && r->acc.acc == DRIFT_FP32 && r->acc.mode == DRIFT_RNE &&
           r->acc.fma;
}

/* Every value of a is a value of b (precision, exponent range and subnormal spacing). */
static int subset_of(drift_format_t a, drift_format_t b)
{
    const drift_format_info_t *x = drift_format_info(a), *y = drift_format_info(b);
    return x->p <= y->p && x->emax <= y->emax && x->min_subnormal >= y->min_subnormal && x->max_finite <= y->max_finite;
}

static int checked_mul(size_t *out, size_t a, size_t b)
{
    if (a && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

int drift_attention(double *out, const double *q, size_t nq, size_t q_pos, const drift_kv_cache_t *kv,
                    const unsigned char *key_mask, const drift_attn_opts_t *o, char *err, size_t errsz)
{
    int st = drift_attn_validate(o, err, errsz);
    if (st) return st;
    if (!kv || !kv->k) return drift_why(err, errsz, DRIFT_EINVAL, "attention: missing kv cache");
    if ((nq && (!out || !q))) return drift_why(err, errsz, DRIFT_EINVAL, "attention: NULL buffer");
    if (kv->kv_heads != o->kv_heads || kv->head_dim != o->head_dim)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: the cache has kv_heads %d and head_dim %d, the options %d and %d",
                    kv->kv_heads, kv->head_dim, o->kv_heads, o->head_dim);
    if (o->causal && (q_pos > kv->len || nq > kv->len - q_pos))
        return drift_why(err, errsz, DRIFT_EINVAL, "attention: causal queries at positions %zu..%zu need that many cached keys (the cache has %zu)",
                    q_pos, q_pos + nq - 1, kv->len);
    if (nq == 0) return 0;
    size_t d = (size_t)o->head_dim, H = (size_t)o->heads, G = (size_t)o->kv_heads, L = kv->len;
    call_t C;
    memset(&C, 0, sizeof C);
    C.o = o;
    C.L = L;
    C.d = d;
    C.bc = o->kernel.kind == DRIFT_ATTN_STANDARD ? (L ? L : 1) : (size_t)o->kernel.bc;
    C.Lpad = (L + C.bc - 1) / C.bc * C.bc;
    if (C.Lpad == 0) C.Lpad = C.bc;
    C.A = o->softmax_acc.acc;
    int wide = o->qk.in == DRIFT_FP64 || o->pv.in == DRIFT_FP64 || o->qk.acc.acc == DRIFT_FP64 || o->pv.acc.acc == DRIFT_FP64;
    C.ka = drift_karith(C.A, o->softmax_acc.mode, wide);
    /* O * alpha: alpha is a value of softmax_acc, which may be wider than pv.acc */
    C.kpv = drift_karith(o->pv.acc.acc, o->pv.acc.mode, o->softmax_acc.acc == DRIFT_FP64 || o->pv.acc.acc == DRIFT_FP64);
    C.scale_d = o->scale > 0 ? o->scale : 1.0 / sqrt((double)d);
    drift_round_opts_t ro = {o->softmax_acc.mode, 0, 0};
    C.scale_A = drift_round(C.scale_d, C.A, &ro, 0);
    C.c = drift_round(C.scale_d * 1.4426950408889634, C.A, &ro, 0);
    C.mask = key_mask;
    C.fast_dots = fast_recipe(&o->qk) && fast_recipe(&o->pv);
    C.fast = o->kernel.kind != DRIFT_ATTN_STANDARD && C.fast_dots && o->softmax_acc.acc == DRIFT_FP32 &&
             o->softmax_acc.mode == DRIFT_RNE && o->sum_order.kind == DRIFT_ORDER_SEQ;
    size_t nkv, nrow, tmp;
    if (!checked_mul(&nkv, C.Lpad, d) || !checked_mul(&nkv, nkv, G) || !checked_mul(&tmp, nkv, 2 * sizeof(double)) ||
        !checked_mul(&nrow, nq, H) || !checked_mul(&tmp, nrow, d))
        return drift_why(err, errsz, DRIFT_ENOMEM, "attention: %zu queries x %zu cached keys cannot fit in memory", nq, L);
    size_t nsplit_max = C.Lpad / C.bc + 1;
    size_t wS = C.Lpad > d ? C.Lpad : d;
    size_t scratch_n = 3 * wS + 2 * d + nsplit_max * (d + 1), fscratch_n = 4 * C.bc + 2 * d;
    int nth = 1;
#ifdef _OPENMP
    nth = omp_get_max_threads();
    if ((size_t)nth > nq * H) nth = (int)(nq * H);
    if (nth < 1) nth = 1;
#endif
    double *buf = malloc((2 * nkv + (size_t)nth * scratch_n) * sizeof(double));
    float *fbuf = C.fast_dots ? malloc((2 * nkv + (size_t)nth * fscratch_n) * sizeof(float)) : NULL;
    if (!buf || (C.fast_dots && !fbuf)) {
        free(buf);
        free(fbuf);
        return drift_why(err, errsz, DRIFT_ENOMEM, "attention: out of memory for %zu cached keys", L);
    }
    /* load: operands rounded to their recipe's input format, padded with zeros */
    memset(buf, 0, 2 * nkv * sizeof(double));
    C.Kr = buf;
    C.Vt = buf + nkv;
    /* a cache whose format is a subset of the input format needs no rounding (decode calls
     * reload the whole cache, so this is most of their load cost) */
    drift_format_t stored = kv->fmt.storage == DRIFT_KV_FLOAT ? kv->fmt.fmt : DRIFT_FP32;
    int k_same = subset_of(stored, o->qk.in), v_same = subset_of(stored, o->pv.in);
    for (size_t g = 0; g < G; g++)
        for (size_t j = 0; j < L; j++)
            for (size_t c = 0; c < d; c++) {
                size_t src = (j * G + g) * d + c;
                C.Kr[(g * L + j) * d + c] = k_same ? kv->k[src] : rnd_to(kv->k[src], o->qk.in);
                C.Vt[(g * d + c) * C.Lpad + j] = v_same ? kv->v[src] : rnd_to(kv->v[src], o->pv.in);
            }
    if (C.fast_dots) {
        memset(fbuf, 0, 2 * nkv * sizeof(float));
        C.Kt = fbuf;
        C.Vf = fbuf + nkv;
        for (size_t g = 0; g < G; g++)
            for (size_t j = 0; j < L; j++)
                for (size_t c = 0; c < d; c++) {
                    C.Kt[(g * d + c) * C.Lpad + j] = (float)C.Kr[(g * L + j) * d + c];
                    C.Vf[(g * C.Lpad + j) * d + c] = (float)C.Vt[(g * d + c) * C.Lpad + j];
                }
    }
    /* Threads split the (query, head) rows, never a sum: every row is computed by one
     * thread with its own scratch, so the bits do not depend on the thread count. */
    size_t grp = H / G, rows = nq * H;
    int st_all = 0;
#pragma omp parallel num_threads(nth) if (nth > 1)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        double *s0 = buf + 2 * nkv + (size_t)tid * scratch_n;
        scratch_t sc = {s0, s0 + wS, s0 + 2 * wS, NULL, NULL, NULL, NULL, s0 + 3 * wS, NULL};
        double *O = s0 + 3 * wS + d, *acc = O + d;
        if (C.fast_dots) {
            float *f0 = fbuf + 2 * nkv + (size_t)tid * fscratch_n;
            sc.Sf = f0;
            sc.pf = f0 + C.bc;
            sc.prf = f0 + 2 * C.bc;
            sc.Of = f0 + 3 * C.bc;
            sc.qf = f0 + 3 * C.bc + d;
        }
        int st_t = 0;
#pragma omp for schedule(dynamic, 8)
        for (size_t r = 0; r < rows; r++) {
            if (st_t) continue;
            size_t i = r / H, h = r % H, g = h / grp;
            size_t lim = o->causal ? q_pos + i + 1 : L;
            const double *qi = q + (i * H + h) * d;
            double *oi = out + (i * H + h) * d;
            for (size_t c = 0; c < d; c++) {
                sc.qr[c] = rnd_to(qi[c], o->qk.in);
                if (C.fast_dots) sc.qf[c] = (float)sc.qr[c];
            }
            switch (o->kernel.kind) {
            case DRIFT_ATTN_STANDARD: st_t = row_standard(&C, oi, sc.qr, g, lim, &sc); break;
            case DRIFT_ATTN_FLASH: st_t = row_flash(&C, oi, &sc, g, lim, &sc, O); break;
            default: st_t = row_splitkv(&C, oi, &sc, g, lim, &sc, O, acc); break;
            }
        }
        if (st_t) {
#pragma omp critical(drift_attention_status)
            if (!st_all) st_all = st_t;
        }
    }
    st = st_all;
    free(buf);
    free(fbuf);
    if (st) return drift_why(err, errsz, st, "attention: %s", drift_strerror(st));
    return 0;
}

int drift_attention_decode(double *out, const double *q, const drift_kv_cache_t *kv, const drift_attn_opts_t *o,
                           char *err, size_t errsz)
{
    if (!kv || kv->len == 0) return drift_why(err, errsz, DRIFT_EINVAL, "attention decode: the kv cache is empty (append the token first)");
    return drift_attention(out, q, 1, kv->len - 1, kv, NULL, o, err, errsz);
}

int drift_attention_prefill(double *out, const double *q, const double *k, const double *v, size_t n,
                            const drift_kv_format_t *kvf, size_t chunk, const drift_attn_opts_t *o, char *err,
                            size_t errsz)
{
    int st = drift_attn_validate(o, err, errsz);
    if (st) return st;
    if (n == 0) return drift_why(err, errsz, DRIFT_EINVAL, "attention prefill: sequence length must be at least 1");
    drift_kv_cache_t kv;
    if ((st = drift_kv_init(&kv, o->kv_heads, o->head_dim, n, kvf, err, errsz))) return st;
    size_t C = chunk ? chunk : n;
    size_t qrow = (size_t)o->heads * (size_t)o->head_dim, krow = (size_t)o->kv_heads * (size_t)o->head_dim;
    for (size_t p0 = 0; p0 < n && !st; p0 += C) {
        size_t c = n - p0 < C ? n - p0 : C;
        st = drift_kv_append(&kv, k + p0 * krow, v + p0 * krow, c, err, errsz);
        if (!st) st = drift_attention(out + p0 * qrow, q + p0 * qrow, c, p0, &kv, NULL, o, err, errsz);
    }
    drift_kv_free(&kv);
    return st;
}

/* ---- reference ------------------------------------------------------------------------------ */

/* One row at w bits: out_c = sum_j e_j v_jc / sum_j e_j, e_j = exp(scale q.k_j - m). */
static void ref_row(mpfr_t *res, const double *q, const double *k, const double *v, size_t nk, size_t lim, size_t g,
                    const unsigned char *mask, const drift_attn_opts_t *o, mpfr_prec_t w)
{
    size_t d = (size_t)o->head_dim, G = (size_t)o->kv_heads;
    mpfr_t sc, t, s, m, sum, *S = malloc(nk * sizeof *S);
    mpfr_inits2(w, sc, t, s, m, sum, (mpfr_ptr)0);
    if (o->scale > 0) mpfr_set_d(sc, o->scale, MPFR_RNDN);
    else {
        mpfr_set_ui(sc, (unsigned long)d, MPFR_RNDN);
        mpfr_rec_sqrt(sc, sc, MPFR_RNDN);
    }
    mpfr_set_inf(m, -1);
    for (size_t j = 0; j < nk; j++) {
        mpfr_init2(S[j], w);
        if (!(j < lim && (!mask || mask[j]))) {
            mpfr_set_inf(S[j], -1);
            continue;
        }
        mpfr_set_zero(s, 1);
        for (size_t c = 0; c < d; c++) {
            mpfr_set_d(t, q[c], MPFR_RNDN);
            mpfr_mul_d(t, t, k[(j * G + g) * d + c], MPFR_RNDN);
            mpfr_add(s, s, t, MPFR_RNDN);
        }
        mpfr_mul(S[j], s, sc, MPFR_RNDN);
        if (mpfr_greater_p(S[j], m)) mpfr_set(m, S[j], MPFR_RNDN);
    }
    for (size_t c = 0; c < d; c++) mpfr_set_zero(res[c], 1);
    if (!mpfr_inf_p(m)) {
        mpfr_set_zero(sum, 1);
        for (size_t j = 0; j < nk; j++) {
            if (mpfr_inf_p(S[j])) continue;
            mpfr_sub(t, S[j], m, MPFR_RNDN);
            mpfr_exp(t, t, MPFR_RNDN);
            mpfr_add(sum, sum, t, MPFR_RNDN);
            for (size_t c = 0; c < d; c++) {
                mpfr_mul_d(s, t, v[(j * G + g) * d + c], MPFR_RNDN);
                mpfr_add(res[c], res[c], s, MPFR_RNDN);
            }
        }
        for (size_t c = 0; c < d; c++) mpfr_div(res[c], res[c], sum, MPFR_RNDN);
    }
    for (size_t j = 0; j < nk; j++) mpfr_clear(S[j]);
    free(S);
    mpfr_clears(sc, t, s, m, sum, (mpfr_ptr)0);
}

int drift_attention_reference(double *out, const double *q, const double *k, const double *v, size_t nq, size_t nk,
                              size_t q_pos, const unsigned char *key_mask, const drift_attn_opts_t *o,
                              drift_format_t f, char *err, size_t errsz)
{
    if (!o || o->heads < 1 || o->kv_heads < 1 || o->head_dim < 1 || o->heads % o->kv_heads)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention reference: heads must be a positive multiple of kv_heads >= 1, head_dim >= 1");
    if (!format_ok(f)) return drift_why(err, errsz, DRIFT_EINVAL, "attention reference: unknown format");
    if (nq && (!out || !q || (nk && (!k || !v)))) return drift_why(err, errsz, DRIFT_EINVAL, "attention reference: NULL buffer");
    size_t d = (size_t)o->head_dim, H = (size_t)o->heads, grp = H / (size_t)o->kv_heads;
    mpfr_t *a = malloc(d * sizeof *a), *b = malloc(d * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return drift_why(err, errsz, DRIFT_ENOMEM, "attention reference: out of memory");
    }
    int bad = 0;
    for (size_t i = 0; i < nq; i++) {
        size_t lim = o->causal ? q_pos + i + 1 : nk;
        for (size_t h = 0; h < H; h++) {
            const double *qi = q + (i * H + h) * d;
            double *oi = out + (i * H + h) * d;
            mpfr_prec_t w = 128;
            for (size_t c = 0; c < d; c++) mpfr_init2(a[c], w);
            ref_row(a, qi, k, v, nk, lim, h / grp, key_mask, o, w);
            int done = 0;
            while (!done && w < 4096) {
                w *= 2;
                for (size_t c = 0; c < d; c++) mpfr_init2(b[c], w);
                ref_row(b, qi, k, v, nk, lim, h / grp, key_mask, o, w);
                done = 1;
                for (size_t c = 0; c < d; c++) {
                    double x = drift_mpfr_to_format(a[c], f, DRIFT_RNE), y = drift_mpfr_to_format(b[c], f, DRIFT_RNE);
                    if (x != y || signbit(x) != signbit(y)) done = 0;
                    oi[c] = y;
                }
                for (size_t c = 0; c < d; c++) {
                    mpfr_swap(a[c], b[c]);
                    mpfr_clear(b[c]);
                }
            }
            for (size_t c = 0; c < d; c++) mpfr_clear(a[c]);
            bad |= !done;
        }
    }
    free(a);
    free(b);
    if (bad) return drift_why(err, errsz, DRIFT_ERANGE, "attention reference: 4096 bits did not decide an output");
    return 0;
}
