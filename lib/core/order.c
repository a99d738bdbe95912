/* order.c — reduction orders: parse, print and the generic reducer (the error bounds are in
 * order_bound.c).
 *
 * Every reducer step is "the exact result rounded once to acc in mode m". The reference
 * implementation of a step is drift_add / drift_mul / drift_fma (format.c). Where a faster
 * formula gives the same bits for every input it may see, it is used instead; each such
 * shortcut is listed in choose_path() with the reason it is exact. */
#include "order.h"

#include <limits.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "philox.h"

/* ---- spec parsing and printing ------------------------------------------------------ */

static const char *const TC_NAMES[DRIFT_TC_NARCH] = {
    "v100", "a100", "h100", "b200", "ada", "l40s", "a2", "a30", "h200", "rtxpro6000", "mi100", "mi250", "mi300x"};

/* warp:W allocates W lanes; 2^20 is far beyond any hardware warp or block and keeps the
 * lane array small. */
#define DRIFT_WARP_MAX (1L << 20)

int drift_order_is_tc(const drift_order_t *o) { return o && o->kind == DRIFT_ORDER_TC; }

const char *drift_tc_arch_name(drift_tc_arch_t a) { return (unsigned)a < DRIFT_TC_NARCH ? TC_NAMES[a] : "?"; }

/* A decimal number: digits only (no sign, no blanks, no leading zero unless it is "0"),
 * no overflow of uint64_t. One spelling per value keeps the printed spec canonical. */
static int parse_u64(uint64_t *out, const char *s, size_t len)
{
    if (len == 0 || len > 20) return DRIFT_EINVAL;
    if (s[0] == '0' && len > 1) return DRIFT_EINVAL;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return DRIFT_EINVAL;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return DRIFT_EINVAL;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* A positive parameter (block, split count, lanes): 1 .. LONG_MAX. */
static int parse_param(long *out, const char *s, size_t len)
{
    uint64_t v;
    if (parse_u64(&v, s, len) || v == 0 || v > (uint64_t)LONG_MAX) return DRIFT_EINVAL;
    *out = (long)v;
    return 0;
}

static int is_pow2(long w) { return w > 0 && (w & (w - 1)) == 0; }

static int order_valid(const drift_order_t *o)
{
    switch (o->kind) {
    case DRIFT_ORDER_SEQ:
    case DRIFT_ORDER_REV:
    case DRIFT_ORDER_PAIRWISE:
    case DRIFT_ORDER_KAHAN:
    case DRIFT_ORDER_NEUMAIER:
    case DRIFT_ORDER_RANDOM: return 1;
    case DRIFT_ORDER_BLOCKED:
    case DRIFT_ORDER_SPLITK: return o->param >= 1;
    case DRIFT_ORDER_WARP: return is_pow2(o->param) && o->param <= DRIFT_WARP_MAX;
    case DRIFT_ORDER_TC: return (unsigned)o->arch < DRIFT_TC_NARCH;
    default: return 0;
    }
}

int drift_order_parse(drift_order_t *o, const char *spec)
{
    if (!o || !spec) return DRIFT_EINVAL;
    drift_order_t r = {DRIFT_ORDER_SEQ, 0, 0, 0, DRIFT_TC_V100};
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *arg = colon ? colon + 1 : NULL;
#define NAME_IS(s) (nlen == sizeof(s) - 1 && !strncmp(spec, s, nlen))
    if (!colon) {
        if (NAME_IS("seq"))
            r.kind = DRIFT_ORDER_SEQ;
        else if (NAME_IS("rev"))
            r.kind = DRIFT_ORDER_REV;
        else if (NAME_IS("pairwise"))
            r.kind = DRIFT_ORDER_PAIRWISE;
        else if (NAME_IS("kahan"))
            r.kind = DRIFT_ORDER_KAHAN;
        else if (NAME_IS("neumaier"))
            r.kind = DRIFT_ORDER_NEUMAIER;
        else
            return DRIFT_EINVAL;
    } else if (NAME_IS("blocked") || NAME_IS("warp")) {
        r.kind = NAME_IS("blocked") ? DRIFT_ORDER_BLOCKED : DRIFT_ORDER_WARP;
        if (parse_param(&r.param, arg, strlen(arg))) return DRIFT_EINVAL;
    } else if (NAME_IS("splitk")) {
        r.kind = DRIFT_ORDER_SPLITK;
        const char *c2 = strchr(arg, ':');
        if (c2) {
            if (strcmp(c2 + 1, "tree")) return DRIFT_EINVAL;
            r.tree = 1;
        }
        if (parse_param(&r.param, arg, c2 ? (size_t)(c2 - arg) : strlen(arg))) return DRIFT_EINVAL;
    } else if (NAME_IS("random")) {
        r.kind = DRIFT_ORDER_RANDOM;
        if (parse_u64(&r.seed, arg, strlen(arg))) return DRIFT_EINVAL;
    } else if (NAME_IS("tc")) {
        r.kind = DRIFT_ORDER_TC;
        int found = 0;
        for (int i = 0; i < DRIFT_TC_NARCH; i++)
            if (!strcmp(arg, TC_NAMES[i])) {
                r.arch = (drift_tc_arch_t)i;
                found = 1;
            }
        if (!found) return DRIFT_EINVAL;
    } else {
        return DRIFT_EINVAL;
    }
#undef NAME_IS
    if (!order_valid(&r)) return DRIFT_EINVAL; /* warp:6, warp beyond DRIFT_WARP_MAX */
    *o = r;
    return 0;
}

int drift_order_print(char *buf, size_t size, const drift_order_t *o)
{
    if (!o || !order_valid(o) || (!buf && size)) return DRIFT_EINVAL;
    int len;
    switch (o->kind) {
    case DRIFT_ORDER_SEQ: len = snprintf(buf, size, "seq"); break;
    case DRIFT_ORDER_REV: len = snprintf(buf, size, "rev"); break;
    case DRIFT_ORDER_PAIRWISE: len = snprintf(buf, size, "pairwise"); break;
    case DRIFT_ORDER_BLOCKED: len = snprintf(buf, size, "blocked:%ld", o->param); break;
    case DRIFT_ORDER_SPLITK: len = snprintf(buf, size, "splitk:%ld%s", o->param, o->tree ? ":tree" : ""); break;
    case DRIFT_ORDER_WARP: len = snprintf(buf, size, "warp:%ld", o->param); break;
    case DRIFT_ORDER_KAHAN: len = snprintf(buf, size, "kahan"); break;
    case DRIFT_ORDER_NEUMAIER: len = snprintf(buf, size, "neumaier"); break;
    case DRIFT_ORDER_RANDOM: len = snprintf(buf, size, "random:%" PRIu64, o->seed); break;
    case DRIFT_ORDER_TC: len = snprintf(buf, size, "tc:%s", TC_NAMES[o->arch]); break;
    default: return DRIFT_EINVAL;
    }
    if (len < 0 || (size_t)len >= size) return DRIFT_EINVAL;
    return len;
}

int drift_order_equal(const drift_order_t *a, const drift_order_t *b)
{
    if (a->kind != b->kind) return 0;
    switch (a->kind) {
    case DRIFT_ORDER_BLOCKED:
    case DRIFT_ORDER_WARP: return a->param == b->param;
    case DRIFT_ORDER_SPLITK: return a->param == b->param && !a->tree == !b->tree;
    case DRIFT_ORDER_RANDOM: return a->seed == b->seed;
    case DRIFT_ORDER_TC: return a->arch == b->arch;
    default: return 1; /* the other fields mean nothing for this kind */
    }
}

/* ---- arithmetic paths ----------------------------------------------------------------- */

/* How one step is computed. Every path gives the bits of the GENERIC path (drift_add,
 * drift_mul, drift_fma) for the inputs it is chosen for; see choose_path(). */
typedef enum {
    PATH_GENERIC = 0, /* drift_add / drift_mul / drift_fma */
    PATH_F64,         /* acc fp64, RNE: the hardware's double + and fma() */
    PATH_F32,         /* acc fp32, RNE, inputs fp32 values: the hardware's float + and fmaf() */
    PATH_SMALL        /* acc p <= 24, RNE, inputs values of acc (sum) / of fp32 (dot) */
} path_t;

typedef struct {
    const double *x; /* sum terms, or NULL for a dot product */
    const double *a, *b;
    drift_format_t f;
    drift_mode_t m;
    drift_round_opts_t ropts;
    int fma;
    path_t path;
} ctx_t;

/* x is a value of the format (finite; NaN and infinities are left to the generic path):
 * |x| <= max_finite and x a multiple of the format's quantum 2^q at x's binade,
 * q = max(e, emin) - (p - 1). For a normal double, the weight of its lowest set bit is
 * 2^(biased_exp - 1075 + ctz(significand)). */
static int is_member(double x, const drift_format_info_t *fi)
{
    if (!isfinite(x)) return 0;
    if (x == 0) return 1;
    double ax = fabs(x);
    if (ax > fi->max_finite) return 0;
    uint64_t u;
    memcpy(&u, &ax, sizeof u);
    int be = (int)(u >> 52);
    if (be == 0) return fi->emin - fi->p + 1 <= -1074; /* double subnormal: only fp64 has these */
    uint64_t sig = (u & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
    int lsb = be - 1075 + __builtin_ctzll(sig);
    int e = be - 1023;
    int q = (e > fi->emin ? e : fi->emin) - (fi->p - 1);
    return lsb >= q;
}

/* The x86 clones below (AVX2 for the fp32 membership test, FMA for the fused fp32/fp64
 * chains) are chosen at run time: the library is built for baseline x86-64. */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define ORDER_X86_CLONES 1
static int cpu_has(int which)
{
    static int has[2] = {-1, -1}; /* a benign race: every thread computes the same value */
    if (has[which] < 0) has[which] = which ? __builtin_cpu_supports("fma") != 0 : __builtin_cpu_supports("avx2") != 0;
    return has[which];
}
#define CPU_AVX2 0
#define CPU_FMA 1
#endif

/* Whether every v[i] is an fp32 value: a double within fp32's range is one iff converting it
 * to float and back gives the same bits (the conversion rounds to nearest with gradual
 * underflow; -0 stays -0). A value out of range (or NaN, or an infinity) is replaced by +0
 * before the conversion, which keeps the conversion defined and fails the comparison (+0's
 * bits differ from those of any such value). Integer operations only, no branch: the AVX2
 * clone vectorises it (the membership test is a pass over both inputs on every dot
 * product, and as the scalar loop it was ~5% of argmax_flip's planted trials). */
static inline __attribute__((always_inline)) uint64_t fp32_misfits(const double *v, size_t n)
{
    const double fmax = FLT_MAX;
    uint64_t lim, diff = 0;
    memcpy(&lim, &fmax, sizeof lim);
    for (size_t i = 0; i < n; i++) {
        uint64_t u, r;
        memcpy(&u, &v[i], sizeof u);
        uint64_t keep = -(uint64_t)((u & ~(UINT64_C(1) << 63)) <= lim), yb = u & keep;
        double y;
        memcpy(&y, &yb, sizeof y);
        double z = (double)(float)y;
        memcpy(&r, &z, sizeof r);
        diff |= r ^ u;
    }
    return diff;
}

#ifdef ORDER_X86_CLONES
__attribute__((target("avx2"))) static uint64_t fp32_misfits_avx2(const double *v, size_t n)
{
    return fp32_misfits(v, n);
}
#endif

static int all_fp32(const double *v, size_t n)
{
#ifdef ORDER_X86_CLONES
    if (cpu_has(CPU_AVX2)) return fp32_misfits_avx2(v, n) == 0;
#endif
    return fp32_misfits(v, n) == 0;
}

static int all_members(const double *v, size_t n, const drift_format_info_t *fi)
{
    if (fi == drift_format_info(DRIFT_FP32)) return all_fp32(v, n);
    for (size_t i = 0; i < n; i++)
        if (!is_member(v[i], fi)) return 0;
    return 1;
}

/* The shortcuts, and why each gives exactly the correctly rounded result:
 *  PATH_F64  IEEE 754 binary64 +, * and fma() are correctly rounded to nearest-even, and
 *            overflow to infinity as drift_round does in RNE.
 *  PATH_F32  IEEE binary32 + and fmaf() on binary32 operands are correctly rounded RNE,
 *            with gradual underflow (no -ffast-math, so no flush-to-zero). Products of
 *            two fp32 values (48 bits, exponents >= -298) are exact in double, so
 *            (float)(a*b) is the correctly rounded product. Needs FLT_EVAL_METHOD == 0
 *            (float expressions evaluated in float).
 *  PATH_SMALL acc has p <= 24 and emin >= -149. Sum of two acc values: computed in double
 *            (RNE, p' = 53 >= 2p + 2) and then rounded to acc: the double rounding is
 *            innocuous for + (Figueroa 1995; the design's condition), a
 *            result in acc's subnormal range is exact (both operands are multiples of
 *            the subnormal quantum), and the double sum cannot overflow. Products of
 *            two fp32 values are exact in double, so rounding a*b once is drift_mul, and
 *            drift_round_sum2(a*b, s) is drift_fma's own path for exact products. */
static path_t choose_path(const ctx_t *c, size_t n)
{
    if (c->m != DRIFT_RNE) return PATH_GENERIC;
    if (c->f == DRIFT_FP64) return PATH_F64;
    const drift_format_info_t *fa = drift_format_info(c->f);
    if (fa->p > 24 || fa->emin < -126) return PATH_GENERIC;
    const drift_format_info_t *f32 = drift_format_info(DRIFT_FP32);
    int members;
    if (c->x)
        members = all_members(c->x, n, c->f == DRIFT_FP32 ? f32 : fa);
    else
        members = all_members(c->a, n, f32) && all_members(c->b, n, f32);
    if (!members) return PATH_GENERIC;
#if FLT_EVAL_METHOD == 0
    if (c->f == DRIFT_FP32) return PATH_F32;
#endif
    return PATH_SMALL;
}

static inline double rnd(const ctx_t *c, double v)
{
    if (c->f == DRIFT_FP64 && c->m == DRIFT_RNE) return v;
    return drift_round(v, c->f, &c->ropts, 0);
}

/* s + t, both values of acc. */
static inline double add2(const ctx_t *c, double s, double t)
{
    switch (c->path) {
    case PATH_F64: return s + t;
    case PATH_F32: return (double)((float)s + (float)t);
    case PATH_SMALL: return drift_rne(s + t, c->f);
    default: return drift_add(s, t, c->f, c->m);
    }
}

/* Term i rounded to acc: a leaf of pairwise, a term of kahan/neumaier, a chain's start. */
static inline double leaf(const ctx_t *c, size_t i)
{
    if (c->x) {
        if (c->path != PATH_GENERIC) return c->x[i]; /* already a value of acc */
        return rnd(c, c->x[i]);
    }
    double a = c->a[i], b = c->b[i];
    switch (c->path) {
    case PATH_F64: return a * b;
    case PATH_F32: return (double)((float)a * (float)b);
    case PATH_SMALL: return drift_rne(a * b, c->f);
    default: return drift_mul(a, b, c->f, c->m);
    }
}

/* One chain step: s + term i rounded once (fma), or s + round(a*b) (nofma). */
static inline double step(const ctx_t *c, double s, size_t i)
{
    if (c->x) {
        switch (c->path) {
        case PATH_F64: return s + c->x[i];
        case PATH_F32: return (double)((float)s + (float)c->x[i]);
        case PATH_SMALL: return drift_rne(s + c->x[i], c->f);
        default: return drift_add(s, c->x[i], c->f, c->m);
        }
    }
    double a = c->a[i], b = c->b[i];
    if (!c->fma) return add2(c, s, leaf(c, i));
    switch (c->path) {
    case PATH_F64: return fma(a, b, s);
    case PATH_F32: return (double)fmaf((float)a, (float)b, (float)s);
    case PATH_SMALL: return drift_round_sum2(a * b, s, c->f, DRIFT_RNE);
    default: return drift_fma(a, b, s, c->f, c->m);
    }
}

#ifdef ORDER_X86_CLONES
/* The fused chains with the hardware's FMA instruction inline (one rounding per step, as
 * fmaf()/fma() give, without a library call per term). */
__attribute__((target("fma"))) static double fma_chain_f32(
    const double *a, const double *b, size_t i, ptrdiff_t stride, size_t count, float s)
{
    for (size_t k = 0; k < count; k++, i += (size_t)stride) s = __builtin_fmaf((float)a[i], (float)b[i], s);
    return s;
}

__attribute__((target("fma"))) static double fma_chain_f64(
    const double *a, const double *b, size_t i, ptrdiff_t stride, size_t count, double s)
{
    for (size_t k = 0; k < count; k++, i += (size_t)stride) s = __builtin_fma(a[i], b[i], s);
    return s;
}
#endif

/* A chain over indices first, first + stride, ... (count >= 1 terms), starting with the
 * rounded first term, or with s0 when have_s0 (then every term is added). */
static double chain(const ctx_t *c, size_t first, ptrdiff_t stride, size_t count, int have_s0, double s0)
{
    size_t i = first;
    double s;
    if (have_s0) {
        s = s0;
    } else {
        s = leaf(c, i);
        i += (size_t)stride;
        count--;
    }
    /* The common fast cases get a loop of their own: same operations, no dispatch. */
#ifdef ORDER_X86_CLONES
    if (!c->x && c->fma && (c->path == PATH_F32 || c->path == PATH_F64) && cpu_has(CPU_FMA))
        return c->path == PATH_F32 ? fma_chain_f32(c->a, c->b, i, stride, count, (float)s)
                                   : fma_chain_f64(c->a, c->b, i, stride, count, s);
#endif
    if (c->x && stride == 1 && c->path == PATH_F64) {
        for (size_t k = 0; k < count; k++) s += c->x[i + k];
        return s;
    }
#if FLT_EVAL_METHOD == 0
    if (c->x && stride == 1 && c->path == PATH_F32) {
        float sf = (float)s;
        for (size_t k = 0; k < count; k++) sf += (float)c->x[i + k];
        return sf;
    }
#endif
    for (size_t k = 0; k < count; k++, i += (size_t)stride) s = step(c, s, i);
    return s;
}

static double pairwise_terms(const ctx_t *c, size_t lo, size_t n)
{
    if (n == 1) return leaf(c, lo);
    size_t m = n / 2;
    double l = pairwise_terms(c, lo, m);
    double r = pairwise_terms(c, lo + m, n - m);
    return add2(c, l, r);
}

static double pairwise_values(const ctx_t *c, const double *v, size_t n)
{
    if (n == 1) return v[0];
    size_t m = n / 2;
    return add2(c, pairwise_values(c, v, m), pairwise_values(c, v + m, n - m));
}

static double blocked(const ctx_t *c, size_t n, size_t B)
{
    double s = 0;
    for (size_t lo = 0; lo < n; lo += B) {
        size_t len = n - lo < B ? n - lo : B;
        double bs = chain(c, lo, 1, len, 0, 0);
        s = lo == 0 ? bs : add2(c, s, bs);
        if (n - lo <= B) break; /* no lo += B overflow near SIZE_MAX */
    }
    return s;
}

static int splitk(double *out, const ctx_t *c, size_t n, size_t S, int tree)
{
    size_t len = n / S + (n % S != 0); /* ceil(n/S) >= 1 */
    size_t P = n / len + (n % len != 0);
    double *p = malloc(P * sizeof *p);
    if (!p) return DRIFT_ENOMEM;
    for (size_t k = 0; k < P; k++) {
        size_t lo = k * len;
        p[k] = chain(c, lo, 1, n - lo < len ? n - lo : len, 0, 0);
    }
    if (tree) {
        *out = pairwise_values(c, p, P);
    } else {
        double s = p[0];
        for (size_t k = 1; k < P; k++) s = add2(c, s, p[k]);
        *out = s;
    }
    free(p);
    return 0;
}

static int warp(double *out, const ctx_t *c, size_t n, size_t W)
{
    double *v = malloc(2 * W * sizeof *v);
    if (!v) return DRIFT_ENOMEM;
    double *t = v + W;
    /* Lane i's chain x[i], x[i+W], ... walked row by row (all lanes advance one term per row of
     * W consecutive terms): the same operations on the same values in each lane's own order, so
     * the same bits, but memory is read once, in order, instead of W strided passes. */
    size_t first = n < W ? n : W;
    for (size_t i = 0; i < first; i++) v[i] = leaf(c, i);
    for (size_t i = first; i < W; i++) v[i] = 0.0; /* an empty lane holds +0 */
    for (size_t lo = W; lo < n; lo += W) {
        size_t len = n - lo < W ? n - lo : W;
        for (size_t i = 0; i < len; i++) v[i] = step(c, v[i], lo + i);
        if (n - lo <= W) break; /* no lo += W overflow near SIZE_MAX */
    }
    for (size_t off = W / 2; off >= 1; off /= 2) {
        for (size_t i = 0; i < W; i++) t[i] = add2(c, v[i], v[i ^ off]);
        memcpy(v, t, W * sizeof *v);
    }
    *out = v[0];
    free(v);
    return 0;
}

/* Kahan (1965): y = x - c; t = s + y; c = (t - s) - y; s = t. Starts at s = s0 (the
 * rounded first term, or the initial value) with c = 0. */
static double kahan(const ctx_t *c, size_t from, size_t n, double s)
{
    double comp = 0;
    for (size_t i = from; i < n; i++) {
        double y = add2(c, leaf(c, i), -comp);
        double t = add2(c, s, y);
        comp = add2(c, add2(c, t, -s), -y);
        s = t;
    }
    return s;
}

/* Neumaier (1974): t = s + x; the part of the smaller operand lost in t is recovered
 * exactly (in RNE) as (big - t) + small and summed into comp; the result is s + comp. */
static double neumaier(const ctx_t *c, size_t from, size_t n, double s)
{
    double comp = 0;
    for (size_t i = from; i < n; i++) {
        double x = leaf(c, i);
        double t = add2(c, s, x);
        if (fabs(s) >= fabs(x))
            comp = add2(c, comp, add2(c, add2(c, s, -t), x));
        else
            comp = add2(c, comp, add2(c, add2(c, x, -t), s));
        s = t;
    }
    return add2(c, s, comp);
}

/* The Fisher–Yates permutation of random:SEED (order.h). */
static int random_perm(uint32_t **out, size_t n, uint64_t seed)
{
    if (n > UINT32_MAX) return DRIFT_EINVAL;
    uint32_t *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return DRIFT_ENOMEM;
    for (size_t i = 0; i < n; i++) p[i] = (uint32_t)i;
    drift_stream_t s;
    drift_stream_init(&s, seed, drift_fnv1a32("order.random"), 0, 0);
    /* The draws do not depend on the swaps, so a batch of them is drawn first and the slots
     * they will touch are prefetched: the same swaps in the same order, without waiting on a
     * cache miss per step when p outgrows the cache. */
    enum { BATCH = 64 };
    size_t js[BATCH];
    for (size_t i = n; i > 1;) {
        size_t nb = i - 1 < BATCH ? i - 1 : BATCH; /* steps i-1, i-2, ..., i-nb */
        for (size_t k = 0; k < nb; k++) {
            js[k] = drift_stream_below(&s, (uint32_t)(i - k));
            __builtin_prefetch(&p[js[k]], 1);
        }
        for (size_t k = 0; k < nb; k++) {
            size_t a = i - 1 - k, j = js[k];
            uint32_t t = p[a];
            p[a] = p[j];
            p[j] = t;
        }
        i -= nb;
    }
    *out = p;
    return 0;
}

static int check_acc(const drift_acc_t *acc)
{
    if (!acc || (unsigned)acc->acc >= DRIFT_NFORMATS || (unsigned)acc->mode >= DRIFT_NMODES) return DRIFT_EINVAL;
    if (acc->mode == DRIFT_SR) return DRIFT_EUNSUPPORTED;
    return 0;
}

/* The reducer over terms [0, n) of c (n >= 0), with an optional initial value. */
static int reduce(double *out, ctx_t *c, size_t n, const double *init, const drift_order_t *o)
{
    c->path = choose_path(c, n);
    int have = init != NULL;
    double s0 = have ? rnd(c, *init) : 0.0;
    int multi = o->kind == DRIFT_ORDER_PAIRWISE || o->kind == DRIFT_ORDER_BLOCKED || o->kind == DRIFT_ORDER_SPLITK ||
                o->kind == DRIFT_ORDER_WARP;
    if (n == 0) { /* no terms: the initial value, or +0 */
        *out = have ? s0 : 0.0;
        return 0;
    }
    double r = 0;
    int st = 0;
    switch (o->kind) {
    case DRIFT_ORDER_SEQ: r = chain(c, 0, 1, n, have, s0); break;
    case DRIFT_ORDER_REV: r = chain(c, n - 1, -1, n, have, s0); break;
    case DRIFT_ORDER_PAIRWISE: r = pairwise_terms(c, 0, n); break;
    case DRIFT_ORDER_BLOCKED: r = blocked(c, n, (size_t)o->param); break;
    case DRIFT_ORDER_SPLITK: st = splitk(&r, c, n, (size_t)o->param, o->tree); break;
    case DRIFT_ORDER_WARP: st = warp(&r, c, n, (size_t)o->param); break;
    case DRIFT_ORDER_KAHAN: r = have ? kahan(c, 0, n, s0) : kahan(c, 1, n, leaf(c, 0)); break;
    case DRIFT_ORDER_NEUMAIER: r = have ? neumaier(c, 0, n, s0) : neumaier(c, 1, n, leaf(c, 0)); break;
    case DRIFT_ORDER_RANDOM: {
        uint32_t *p; /* n <= UINT32_MAX: half the memory traffic of size_t */
        if ((st = random_perm(&p, n, o->seed))) break;
        /* Gather the permuted terms and run seq on them; the path stays valid because the
         * same values are visited. */
        double *buf = malloc((c->x ? 1 : 2) * n * sizeof *buf);
        if (!buf) {
            free(p);
            st = DRIFT_ENOMEM;
            break;
        }
        ctx_t pc = *c;
        /* the gather's reads are random: prefetch a few iterations ahead */
        enum { AHEAD = 16 };
        if (c->x) {
            for (size_t i = 0; i < n; i++) {
                if (i + AHEAD < n) __builtin_prefetch(&c->x[p[i + AHEAD]]);
                buf[i] = c->x[p[i]];
            }
            pc.x = buf;
        } else {
            for (size_t i = 0; i < n; i++) {
                if (i + AHEAD < n) {
                    __builtin_prefetch(&c->a[p[i + AHEAD]]);
                    __builtin_prefetch(&c->b[p[i + AHEAD]]);
                }
                buf[i] = c->a[p[i]];
                buf[n + i] = c->b[p[i]];
            }
            pc.a = buf;
            pc.b = buf + n;
        }
        r = chain(&pc, 0, 1, n, have, s0);
        free(buf);
        free(p);
        break;
    }
    default: return DRIFT_EUNSUPPORTED;
    }
    if (st) return st;
    /* Multi-partial orders: round(c + r), one rounding of the exact sum (c need not be a
     * value of acc, so this uses drift_add whatever the path). */
    if (have && multi) r = drift_add(*init, r, c->f, c->m);
    *out = r;
    return 0;
}

int drift_sum(double *out, const double *x, size_t n, const drift_order_t *o, const drift_acc_t *acc)
{
    int st = check_acc(acc);
    if (st) return st;
    if (!out || !o || !order_valid(o) || (n && !x)) return DRIFT_EINVAL;
    if (o->kind == DRIFT_ORDER_TC) return DRIFT_EUNSUPPORTED;
    ctx_t c = {x, NULL, NULL, acc->acc, acc->mode, {acc->mode, 0, 0}, 1, PATH_GENERIC};
    return reduce(out, &c, n, NULL, o);
}

int drift_dot(double *out, const double *a, const double *b, size_t n, const double *c0, const drift_order_t *o,
    const drift_acc_t *acc)
{
    int st = check_acc(acc);
    if (st) return st;
    if (!out || !o || !order_valid(o) || (n && (!a || !b))) return DRIFT_EINVAL;
    if (o->kind == DRIFT_ORDER_TC) return DRIFT_EUNSUPPORTED; /* callers use drift_tc_dot */
    ctx_t c = {NULL, a, b, acc->acc, acc->mode, {acc->mode, 0, 0}, acc->fma != 0, PATH_GENERIC};
    return reduce(out, &c, n, c0, o);
}
