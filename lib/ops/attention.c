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
#define SCORES_BODY                                                  \
    for (size_t j = 0; j < n; j++) S[j] = q[0] * Kt[j];              \
    for (size_t c = 1; c < d; c++) {                                 \
        const float qc = q[c];                                       \
        const float *kr = Kt + c * ld;                               \
        for (size_t j = 0; j < n; j++) S[j] = fmaf(qc, kr[j], S[j]); \
    }
/* O[c] = fmaf(p_j, V[j][c], O[c]) for j in [0, n) */
#define PV_BODY                                                      \
    for (size_t j = 0; j < n; j++) {                                 \
        const float pj = p[j];                                       \
        const float *vr = V + j * d;                                 \
        for (size_t c = 0; c < d; c++) O[c] = fmaf(pj, vr[c], O[c]); \
    }

static void scores_gen(
    float *restrict S, const float *restrict q, const float *restrict Kt, size_t n, size_t d, size_t ld)
{
    SCORES_BODY
}
static void pv_gen(float *restrict O, const float *restrict p, const float *restrict V, size_t n, size_t d) { PV_BODY }
#ifdef ATTN_X86
__attribute__((target("avx2,fma"))) static void scores_avx2(
    float *restrict S, const float *restrict q, const float *restrict Kt, size_t n, size_t d, size_t ld)
{
    SCORES_BODY
}
__attribute__((target("avx2,fma"))) static void pv_avx2(
    float *restrict O, const float *restrict p, const float *restrict V, size_t n, size_t d)
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
    double m, l; /* running max (x units: scaled in expf mode, raw in exp2 mode) and sum */
    double *O;   /* [d] unnormalised output in pv.acc */
} rowstate_t;

typedef struct {
    double *S, *p, *pr;        /* [bc] */
    float *Sf, *pf, *prf, *Of; /* fast path scratch */
    double *qr;                /* [d] */
    float *qf;
} scratch_t;

static inline int live(const call_t *C, size_t j, size_t lim) { return j < lim && (!C->mask || C->mask[j]); }

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
static int flash_rows_generic(
    const call_t *C, rowstate_t *rs, const double *qr, size_t g, size_t t0, size_t t1, size_t lim, scratch_t *sc)
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

static void flash_rows_fast(
    const call_t *C, rowstate_t *rs, const float *qf, size_t g, size_t t0, size_t t1, size_t lim, scratch_t *sc)
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
            if (s == -INFINITY)
                e = 0.0f;
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

static int flash_rows(
    const call_t *C, rowstate_t *rs, const scratch_t *q, size_t g, size_t t0, size_t t1, size_t lim, scratch_t *sc)
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
    if (o->normalise_after)
        finish(C, out, sc->S, l);
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

static int row_splitkv(
    const call_t *C, double *out, const scratch_t *q, size_t g, size_t lim, scratch_t *sc, double *O, double *acc)
{
    const drift_attn_opts_t *o = C->o;
    size_t d = C->d, tiles = (C->L + C->bc - 1) / C->bc, per;
    if (o->kernel.kind == DRIFT_ATTN_SPLITKV_N)
        per = (tiles + (size_t)o->kernel.splits - 1) / (size_t)o->kernel.splits;
    else
        per = (size_t)(o->kernel.size / o->kernel.bc);
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
    return r->in != DRIFT_FP64 && r->order.kind == DRIFT_ORDER_SEQ && r->acc.acc == DRIFT_FP32 &&
           r->acc.mode == DRIFT_RNE && r->acc.fma;
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
        return drift_why(err, errsz, DRIFT_EINVAL,
            "attention: the cache has kv_heads %d and head_dim %d, the options %d and %d", kv->kv_heads, kv->head_dim,
            o->kv_heads, o->head_dim);
    if (o->causal && (q_pos > kv->len || nq > kv->len - q_pos))
        return drift_why(err, errsz, DRIFT_EINVAL,
            "attention: causal queries at positions %zu..%zu need that many cached keys (the cache has %zu)", q_pos,
            q_pos + nq - 1, kv->len);
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
    int wide =
        o->qk.in == DRIFT_FP64 || o->pv.in == DRIFT_FP64 || o->qk.acc.acc == DRIFT_FP64 || o->pv.acc.acc == DRIFT_FP64;
    C.ka = drift_karith(C.A, o->softmax_acc.mode, wide);
    /* O * alpha: alpha is a value of softmax_acc, which may be wider than pv.acc */
    C.kpv =
        drift_karith(o->pv.acc.acc, o->pv.acc.mode, o->softmax_acc.acc == DRIFT_FP64 || o->pv.acc.acc == DRIFT_FP64);
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
        return drift_why(
            err, errsz, DRIFT_ENOMEM, "attention: %zu queries x %zu cached keys cannot fit in memory", nq, L);
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

int drift_attention_decode(
    double *out, const double *q, const drift_kv_cache_t *kv, const drift_attn_opts_t *o, char *err, size_t errsz)
{
    if (!kv || kv->len == 0)
        return drift_why(err, errsz, DRIFT_EINVAL, "attention decode: the kv cache is empty (append the token first)");
    return drift_attention(out, q, 1, kv->len - 1, kv, NULL, o, err, errsz);
}

int drift_attention_prefill(double *out, const double *q, const double *k, const double *v, size_t n,
    const drift_kv_format_t *kvf, size_t chunk, const drift_attn_opts_t *o, char *err, size_t errsz)
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
