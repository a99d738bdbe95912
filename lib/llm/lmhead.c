/* lmhead.c — the LM head h . W under each configuration, its rigorous error bound, and the
 * pruned exact argmax. What each function promises is in lmhead.h; comments here say how and why. */
#include "lmhead.h"
#include "drift.h"
#include "exact.h"
#include "dispatch.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- configurations ------------------------------------------------------------------------------ */

int drift_lmhead_input_ok(drift_format_t f)
{
    return f == DRIFT_BF16 || f == DRIFT_FP16 || f == DRIFT_TF32 || f == DRIFT_FP32;
}

/* Configurations that differ only in the logits' format share one dot product: twin[c] is the
 * first configuration computing the same accumulator result (itself when none earlier does). */
static void twins(int *twin, const drift_recipe_t *cfg, int ncfg)
{
    for (int c = 0; c < ncfg; c++) {
        twin[c] = c;
        if (cfg[c].exact) continue;
        for (int j = 0; j < c; j++)
            if (!cfg[j].exact && drift_recipe_same_acc(&cfg[j], &cfg[c])) {
                twin[c] = j;
                break;
            }
    }
}

/* One logit of configuration c for candidate q, through the cache raw[twin * n + q] (NaN: not yet). */
static int cached_logit(double *out, double *raw, size_t n, size_t q, const int *twin, int c, const double *h,
    const double *w, size_t K, const drift_recipe_t *cfg)
{
    if (cfg[c].exact) return drift_exact_dot(out, h, w, K, cfg[c].out, DRIFT_RNE);
    /* the cache holds the accumulator's result before the logit is stored (an exact
     * configuration never goes through it: its exact value rounded to double would round to
     * `out` as the exact value does only when out is fp64) */
    double *slot = &raw[(size_t)twin[c] * n + q];
    if (isnan(*slot)) {
        int rc = drift_recipe_dot_acc(slot, h, w, K, NULL, &cfg[c]);
        if (rc) return rc;
    }
    *out = drift_recipe_store(*slot, &cfg[c]);
    return DRIFT_OK;
}

/* Unit roundoff of a rounding to f in mode m: u for the nearest modes, 2u (a whole ulp) for the
 * directed ones. */
static double round_u(drift_format_t f, drift_mode_t m)
{
    double u = drift_format_info(f)->unit_roundoff;
    return m == DRIFT_RNE || m == DRIFT_RNA ? u : 2 * u;
}

/* Every bound is inflated by this relative amount and a tiny absolute one, so that the
 * double arithmetic that evaluates it can only err on the safe side (each bound is a short
 * formula: a few roundings of relative size 2^-53). */
#define SAFE(x) ((x) * (1 + 0x1p-40) + 0x1p-1000)

/* drift_lmhead_bound for a configuration already checked (the pruning calls it per token). */
static double bound_checked(const drift_recipe_t *c, size_t K, double sum_abs, double sum_l1, double mag)
{
    double err = 0;
    drift_tc_params_t p;
    drift_format_t acc_fmt = c->exact ? DRIFT_FP64 : c->acc.acc;
    if (c->exact) {
        err = 0;
    } else if (drift_order_tc_params(&p, &c->order, c->in) > 0) {
        const drift_format_info_t *fi = drift_format_info(c->in), *fo = drift_format_info(c->acc.acc);
        double m = fi->min_normal;
        double P = sum_abs + m * sum_l1 + (double)K * m * m;
        double nb = ceil((double)K / p.block);
        double trunc = ldexp(1.0, -23 - p.neab);
        /* block result: RZ to fp32 (< 1 ulp; a narrower accumulator when neab < 0) or RNE fp16 */
        double blk = c->acc.acc == DRIFT_FP32 ? fmax(ldexp(1.0, -23), ldexp(1.0, -23 - (p.neab < 0 ? p.neab : 0)))
                                              : fo->unit_roundoff;
        double alpha = (p.block + 1) * trunc + blk;
        int min_exp = p.min_exp < -2000 ? -2000 : p.min_exp;
        double beta = (p.block + 1) * ldexp(1.0, min_exp - 23 - p.neab) + fo->min_subnormal;
        if (nb * alpha >= 0.5) return INFINITY;
        err = 2 * nb * (alpha * P + beta) / (1 - nb * alpha);
    } else {
        double u = round_u(c->acc.acc, c->acc.mode);
        if (c->order.kind == DRIFT_ORDER_KAHAN || c->order.kind == DRIFT_ORDER_NEUMAIER) {
            /* products rounded to acc (u), then the compensated sum of those products */
            err = u * sum_abs + drift_order_bound(&c->order, K, u, sum_abs * (1 + u));
        } else {
            err = drift_gamma(drift_order_depth(&c->order, K) + 1, u) * sum_abs;
        }
        /* underflow: at most 2K roundings (products and sums) in the subnormal range, each off by
         * at most one subnormal spacing */
        err += 2.0 * (double)K * drift_format_info(c->acc.acc)->min_subnormal;
    }
    if (!isfinite(err)) return INFINITY;
    if (c->out != acc_fmt) {
        const drift_format_info_t *fo = drift_format_info(c->out);
        err += fo->unit_roundoff * (mag + err) + fo->min_subnormal;
    }
    return SAFE(err);
}

double drift_lmhead_bound(const drift_recipe_t *c, size_t K, double sum_abs, double sum_l1, double mag)
{
    if (drift_recipe_check(c, NULL, 0)) return NAN;
    return bound_checked(c, K, sum_abs, sum_l1, mag);
}

/* ---- exact and computed top-2 over a candidate set --------------------------------------------- */

/* Candidates: n rows (n x K, values of the input format) with increasing token ids. */
typedef struct {
    const double *h;
    const double *rows;
    const size_t *ids;
    size_t n, K;
    double *ex; /* exact logits rounded to double */
} cand_t;

/* sign(exact h.row_a - h.row_b) */
static int exact_cmp(const cand_t *c, size_t a, size_t b)
{
    if (c->ex[a] != c->ex[b]) return c->ex[a] > c->ex[b] ? 1 : -1; /* RN is monotone */
    drift_xacc_t x;
    drift_xacc_init(&x);
    const double *ra = c->rows + a * c->K, *rb = c->rows + b * c->K;
    for (size_t i = 0; i < c->K; i++) {
        drift_xacc_add_prod(&x, c->h[i], ra[i]);
        drift_xacc_add_prod(&x, -c->h[i], rb[i]);
    }
    return drift_xacc_sign(&x);
}

static int exact_top2(drift_top2_t *t, cand_t *c)
{
    for (size_t i = 0; i < c->n; i++) {
        int rc = drift_exact_dot(&c->ex[i], c->h, c->rows + i * c->K, c->K, DRIFT_FP64, DRIFT_RNE);
        if (rc) return rc;
    }
    /* strictly greater wins: among exact equals the earlier (lower id) stays */
    size_t i1 = 0;
    for (size_t i = 1; i < c->n; i++)
        if (exact_cmp(c, i, i1) > 0) i1 = i;
    size_t i2 = i1 == 0 ? 1 : 0;
    for (size_t i = 0; i < c->n; i++)
        if (i != i1 && exact_cmp(c, i, i2) > 0) i2 = i;
    memset(t, 0, sizeof *t);
    t->top1 = c->ids[i1];
    t->top2 = c->ids[i2];
    t->v1 = c->ex[i1];
    t->v2 = c->ex[i2];
    /* the exact difference, rounded once: [h, -h] . [w1, w2] */
    size_t K = c->K;
    double *a = malloc(2 * K * sizeof *a), *b = malloc(2 * K * sizeof *b);
    int ok = a && b;
    if (ok) {
        for (size_t i = 0; i < K; i++) {
            a[i] = c->h[i];
            a[K + i] = -c->h[i];
            b[i] = c->rows[i1 * K + i];
            b[K + i] = c->rows[i2 * K + i];
        }
        int rc = drift_exact_dot(&t->gap, a, b, 2 * K, DRIFT_FP64, DRIFT_RNE);
        if (rc) return rc;
        t->tie = t->gap == 0;
    }
    free(a);
    free(b);
    return ok ? DRIFT_OK : DRIFT_ENOMEM;
}

/* Top-2 of computed values (positions in increasing id order, so drift_top2's "lowest index
 * among equals" is "lowest id"), mapped to ids. */
static void computed_top2(drift_top2_t *t, const double *val, const size_t *ids, size_t n)
{
    drift_top2(t, val, n);
    t->top1 = ids[t->top1];
    t->top2 = ids[t->top2];
}

static int check_cfgs(const drift_recipe_t *cfg, int ncfg)
{
    if (!cfg || ncfg < 1 || ncfg > DRIFT_LMHEAD_MAXCFG) return DRIFT_EINVAL;
    for (int c = 0; c < ncfg; c++) {
        int rc = drift_recipe_check(&cfg[c], NULL, 0);
        if (rc) return rc;
        if (cfg[c].in != cfg[0].in) return DRIFT_EINVAL;
    }
    return DRIFT_OK;
}

static void finish_flips(drift_lmhead_result_t *r)
{
    for (int c = 0; c < r->ncfg; c++) r->flip[c] = !r->exact.tie && r->computed[c].top1 != r->exact.top1;
}

int drift_lmhead_eval_full(
    drift_lmhead_result_t *r, const double *h, const double *W, size_t V, size_t K, const drift_recipe_t *cfg, int ncfg)
{
    if (!r || !h || !W || V < 2 || K < 1) return DRIFT_EINVAL;
    int rc = check_cfgs(cfg, ncfg);
    if (rc) return rc;
    memset(r, 0, sizeof *r);
    r->ncfg = ncfg;
    drift_format_t f = cfg[0].in;
    double *hf = malloc(K * sizeof *hf), *Wf = malloc(V * K * sizeof *Wf), *ex = malloc(V * sizeof *ex);
    double *val = malloc(V * sizeof *val), *raw = malloc((size_t)ncfg * V * sizeof *raw);
    size_t *ids = malloc(V * sizeof *ids);
    int twin[DRIFT_LMHEAD_MAXCFG];
    if (!hf || !Wf || !ex || !val || !ids || !raw) {
        rc = DRIFT_ENOMEM;
        goto done;
    }
    twins(twin, cfg, ncfg);
    for (size_t i = 0; i < (size_t)ncfg * V; i++) raw[i] = NAN;
    for (size_t i = 0; i < K; i++) hf[i] = drift_rne(h[i], f);
    for (size_t i = 0; i < V * K; i++) Wf[i] = drift_rne(W[i], f);
    for (size_t v = 0; v < V; v++) ids[v] = v;
    cand_t c = {hf, Wf, ids, V, K, ex};
    if ((rc = exact_top2(&r->exact, &c))) goto done;
    r->n_stage1 = V;
    for (int k = 0; k < ncfg; k++) {
        for (size_t v = 0; v < V; v++)
            if ((rc = cached_logit(&val[v], raw, V, v, twin, k, hf, Wf + v * K, K, cfg))) goto done;
        computed_top2(&r->computed[k], val, ids, V);
        r->n_eval[k] = V;
    }
    finish_flips(r);
done:
    free(hf);
    free(Wf);
    free(ex);
    free(val);
    free(ids);
    free(raw);
    return rc;
}

/* ---- the approximate pass and the pruning ------------------------------------------------------- */

#define AP_ROWS 4   /* hidden states computed together against one weight row (registers) */
#define AP_LANES 16 /* independent float accumulators per dot product: vectorisable */
#define AP_TILE 8   /* weight rows per cache tile */

/* Each product h_i w_i (rounded once) enters lane i mod AP_LANES, which adds at most
 * ceil(K/AP_LANES) terms; the AP_LANES lane sums are then added in sequence (AP_LANES - 1 more
 * additions). So every term passes through at most 1 + ceil(K/AP_LANES) + AP_LANES - 1 roundings
 * of float (the compiler may not reassociate: no fast-math; a contracted product would round
 * once less), and Higham's Lemma 3.4 / Theorem 3.5 give |computed - exact| <= gamma_n(2^-24)
 * sum |h_i w_i| with n = ceil(K/AP_LANES) + AP_LANES: 16 times smaller than gamma_K at large K. */
double drift_lmhead_approx_coef(size_t K)
{
    return SAFE(drift_gamma((K + AP_LANES - 1) / AP_LANES + AP_LANES, 0x1p-24));
}

/* The approximate pass's coefficient for any order (gamma_K), the global stage's: looser than
 * drift_lmhead_approx_coef, which counts on the lane order. */
static double approx_coef_any_order(size_t K) { return SAFE(drift_gamma(K, 0x1p-24)); }

/* Tokens v0..v1 against every group of AP_ROWS hidden states (Hf: RP x K floats). The same
 * float operations in the same order whatever the instruction set: lane j of (row, token) adds
 * the products h_i w_i (each rounded once: no contraction) for i = j mod AP_LANES in
 * increasing i, then the lanes are added in sequence, so the AVX2 build below is bit-identical
 * to the generic one (it only holds the 4 x 16 accumulators in 8 ymm registers instead of
 * spilling 16 xmm ones). */
typedef float approx_v8 __attribute__((vector_size(32))); /* 8 lanes; GCC/clang vector extension */

#define AP_KB 512 /* hidden channels per block: 4 rows and AP_TILE weight rows of a block (24 KB) stay in L1 */

/* Tokens v0..v1 (at most AP_TILE) against every group of AP_ROWS hidden states (Hf: RP x K
 * floats); acc: RP x AP_TILE x AP_LANES floats of scratch (the lanes between blocks). The
 * channels are taken in blocks of AP_KB (a multiple of AP_LANES), every group and token per
 * block, so that the block's hidden states and weights are read from L1; each lane still adds
 * its products in increasing i, so the result does not depend on the blocking. */
static inline __attribute__((always_inline)) void approx_tile(double *out, const float *Hf, size_t R, size_t RP,
    const float *W, size_t V, size_t K, size_t v0, size_t v1, float *acc)
{
    _Static_assert(AP_ROWS == 4 && AP_LANES == 16 && AP_KB % AP_LANES == 0, "the kernel holds 4 rows x 16 lanes");
    size_t nt = v1 - v0, Kfull = K / AP_LANES * AP_LANES;
    memset(acc, 0, RP * AP_TILE * AP_LANES * sizeof *acc);
    for (size_t k0 = 0; k0 < Kfull; k0 += AP_KB) {
        size_t k1 = k0 + AP_KB < Kfull ? k0 + AP_KB : Kfull;
        for (size_t r0 = 0; r0 < RP; r0 += AP_ROWS)
            for (size_t t = 0; t < nt; t++) {
                const float *w = W + (v0 + t) * K;
                const float *h0 = Hf + r0 * K, *h1 = h0 + K, *h2 = h1 + K, *h3 = h2 + K;
                float *A = acc + (r0 * AP_TILE + t * AP_ROWS) * AP_LANES; /* this (group, token): 4 rows x 16 lanes */
                /* lanes 0-7 (a) and 8-15 (b) of each row in named vectors: registers (an array
                 * would live on the stack and chain every addition through a store) */
                approx_v8 a0, b0, a1, b1, a2, b2, a3, b3;
                memcpy(&a0, A + 0, 32), memcpy(&b0, A + 8, 32), memcpy(&a1, A + 16, 32), memcpy(&b1, A + 24, 32);
                memcpy(&a2, A + 32, 32), memcpy(&b2, A + 40, 32), memcpy(&a3, A + 48, 32), memcpy(&b3, A + 56, 32);
                for (size_t i = k0; i < k1; i += AP_LANES) {
                    approx_v8 wa, wb, x, y; /* unaligned loads through memcpy */
                    memcpy(&wa, w + i, sizeof wa);
                    memcpy(&wb, w + i + 8, sizeof wb);
#define AP_ROW(a, b, h)              \
    memcpy(&x, h + i, sizeof x);     \
    memcpy(&y, h + i + 8, sizeof y); \
    a += x * wa;                     \
    b += y * wb;
                    AP_ROW(a0, b0, h0)
                    AP_ROW(a1, b1, h1)
                    AP_ROW(a2, b2, h2)
                    AP_ROW(a3, b3, h3)
#undef AP_ROW
                }
                memcpy(A + 0, &a0, 32), memcpy(A + 8, &b0, 32), memcpy(A + 16, &a1, 32), memcpy(A + 24, &b1, 32);
                memcpy(A + 32, &a2, 32), memcpy(A + 40, &b2, 32), memcpy(A + 48, &a3, 32), memcpy(A + 56, &b3, 32);
            }
    }
    for (size_t r0 = 0; r0 < RP; r0 += AP_ROWS)
        for (size_t t = 0; t < nt; t++) {
            float *A = acc + (r0 * AP_TILE + t * AP_ROWS) * AP_LANES;
            const float *w = W + (v0 + t) * K;
            for (size_t i = Kfull; i < K; i++) /* the last K mod 16 channels, as lanes 0.. */
                for (int r = 0; r < AP_ROWS; r++) A[r * AP_LANES + i % AP_LANES] += Hf[(r0 + r) * K + i] * w[i];
            for (size_t r = 0; r < AP_ROWS && r0 + r < R; r++) {
                float sum = 0;
                for (int j = 0; j < AP_LANES; j++) sum += A[r * AP_LANES + j];
                out[(r0 + r) * V + v0 + t] = sum;
            }
        }
}

static void approx_tile_generic(double *out, const float *Hf, size_t R, size_t RP, const float *W, size_t V, size_t K,
    size_t v0, size_t v1, float *acc)
{
    approx_tile(out, Hf, R, RP, W, V, K, v0, v1, acc);
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define LMHEAD_X86 1
__attribute__((target("avx2"))) static void approx_tile_avx2(double *out, const float *Hf, size_t R, size_t RP,
    const float *W, size_t V, size_t K, size_t v0, size_t v1, float *acc)
{
    approx_tile(out, Hf, R, RP, W, V, K, v0, v1, acc);
}
#endif

/* 1 when the AVX2 build runs: the CPU has it and DRIFT_NO_SIMD is unset or "0" (the tests
 * compare both builds). */
static int approx_simd(void)
{
#ifdef LMHEAD_X86
    __builtin_cpu_init();
    const char *env = getenv("DRIFT_NO_SIMD");
    return __builtin_cpu_supports("avx2") && !(env && *env && strcmp(env, "0") != 0);
#else
    return 0;
#endif
}

int drift_lmhead_approx(double *out, const double *H, size_t R, const float *W, size_t V, size_t K)
{
    if (!out || !H || !W || K == 0) return DRIFT_EINVAL;
    size_t RP = (R + AP_ROWS - 1) / AP_ROWS * AP_ROWS; /* rows padded with zeros to whole groups */
    float *Hf = calloc(RP * K, sizeof *Hf);
    if (!Hf) return DRIFT_ENOMEM;
    for (size_t i = 0; i < R * K; i++) Hf[i] = (float)H[i]; /* fp32 numbers: exact */
    int simd = approx_simd();
    (void)simd;
    /* Token tiles outermost: a tile of AP_TILE weight rows stays in cache while every group of
     * AP_ROWS hidden states passes over it, so W is read from memory once per call. */
    size_t ntile = (V + AP_TILE - 1) / AP_TILE;
    int err = 0;
    DRIFT_OMP("omp parallel reduction(|:err)")
    {
        float *acc = malloc(RP * AP_TILE * AP_LANES * sizeof *acc); /* the thread's lanes between blocks */
        if (!acc) err |= 1;
        DRIFT_OMP("omp for schedule(dynamic, 4)")
        for (size_t t = 0; t < ntile; t++) {
            size_t v0 = t * AP_TILE, v1 = v0 + AP_TILE < V ? v0 + AP_TILE : V;
            if (!acc) continue;
#ifdef LMHEAD_X86
            if (simd) {
                approx_tile_avx2(out, Hf, R, RP, W, V, K, v0, v1, acc);
                continue;
            }
#endif
            approx_tile_generic(out, Hf, R, RP, W, V, K, v0, v1, acc);
        }
        free(acc);
    }
    free(Hf);
    return err ? DRIFT_ENOMEM : DRIFT_OK;
}

/* a + b rounded up / a - b rounded down, safely: one rounding of relative size 2^-53, covered
 * by one extra part in 2^52 of the magnitude. */
static double up(double a, double b)
{
    double s = a + b;
    return s + fabs(s) * 0x1p-52 + 0x1p-1074;
}
static double down(double a, double b)
{
    double s = a - b;
    return s - fabs(s) * 0x1p-52 - 0x1p-1074;
}

size_t drift_prune_top2(size_t *keep, const double *value, const double *radius, size_t n)
{
    if (n < 2) {
        for (size_t i = 0; i < n; i++) keep[i] = i;
        return n;
    }
    double l1 = -INFINITY, l2 = -INFINITY; /* the two largest lower bounds */
    for (size_t i = 0; i < n; i++) {
        double lb = down(value[i], radius[i]);
        if (lb > l1) {
            l2 = l1;
            l1 = lb;
        } else if (lb > l2) {
            l2 = lb;
        }
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (up(value[i], radius[i]) >= l2 || isnan(value[i]) || isnan(radius[i])) keep[m++] = i;
    return m;
}

/* ---- stage 1 ------------------------------------------------------------------------------------ */

/* Largest radius over the configurations for logits bounded by (sum_abs, sum_l1, mag). */
static double cfg_radius(const drift_recipe_t *cfg, int ncfg, size_t K, double sum_abs, double sum_l1, double mag)
{
    double r = 0;
    for (int c = 0; c < ncfg; c++) r = fmax(r, bound_checked(&cfg[c], K, sum_abs, sum_l1, mag));
    return r;
}

/* sqrt of a K-term sum of squares computed in double, rounded up: the sum's relative error is
 * below gamma_K(2^-53) (nonnegative terms, each square rounded once: gamma_{K+1}), the square
 * root's one rounding is inside SAFE. */
static double norm_up(double sumsq, size_t K)
{
    return SAFE(sqrt(sumsq * (1 + drift_gamma(K + 1, 0x1p-53)) * (1 + 0x1p-52)));
}
/* a K-term sum of nonnegative doubles, rounded up */
static double sum_up(double sum, size_t K) { return SAFE(sum * (1 + drift_gamma(K, 0x1p-53)) * (1 + 0x1p-52)); }

/* The global first stage (stage1_global; bench/argmax's baseline): one radius for every token, from
 * Cauchy-Schwarz with the largest ||w||_2 and the worst case (2u + u^2) sum|h w| of the input
 * rounding, with the approximate pass's error bound for any order. */
static double stage1_global_radius(const double *h, const drift_lmhead_head_t *hd, const double *approx,
    const drift_recipe_t *cfg, int ncfg, double u, double eta)
{
    size_t K = hd->K, V = hd->V;
    double hl2 = 0, hl1 = 0;
    for (size_t i = 0; i < K; i++) {
        hl2 += h[i] * h[i];
        hl1 += fabs(h[i]);
    }
    hl2 = norm_up(hl2, K);
    hl1 = sum_up(hl1, K);
    double wl2 = 0, wl1 = 0, amax = 0;
    for (size_t v = 0; v < V; v++) {
        wl2 = fmax(wl2, hd->row_l2[v]);
        wl1 = fmax(wl1, hd->row_l1[v]);
        amax = fmax(amax, fabs(approx[v]));
    }
    double S = SAFE(hl2 * wl2); /* >= sum |h_i w_i| (Cauchy-Schwarz), master values */
    double r_pass = SAFE(approx_coef_any_order(K) * S + 2.0 * (double)K * 0x1p-149);
    double r_in = SAFE((2 * u + u * u) * S + eta * ((1 + u) * (hl1 + wl1) + (double)K * eta));
    double S_f = SAFE(S + r_in);                                       /* sum |h^f w^f| */
    double l1_f = SAFE((1 + u) * (hl1 + wl1) + 2.0 * (double)K * eta); /* sum |h^f| + |w^f| */
    double mag = SAFE(amax + r_pass + r_in);
    return SAFE(r_pass + r_in + cfg_radius(cfg, ncfg, K, S_f, l1_f, mag));
}

/* What the split first stage knows of one hidden state (see drift_lmhead_stage1 below). */
typedef struct {
    double u, eta; /* the input format's unit roundoff and half its smallest subnormal (0, 0: lossless) */
    double hl2;    /* >= ||h||_2 (master) */
    double hfl2;   /* >= ||h^f||_2 */
    double hfl1;   /* >= sum |h^f_i| */
    double dhr;    /* >= ||(h - h^f) outside the split channels||_2 */
    double hfr;    /* >= ||h^f outside the split channels||_2 */
    double cO;     /* >= eta sum over the split channels of |h^f_i| */
    double a[DRIFT_LMHEAD_MAXSPLIT]; /* |h_i - h^f_i| + u |h^f_i| on split channel j */
    double coef;                     /* the approximate pass's coefficient */
} s1row_t;

/* The radius of token v: |every configuration's computed logit - approx_v| and |exact logit -
 * approx_v| are at most this (proof at drift_lmhead_stage1). */
static double token_radius(
    const s1row_t *q, const drift_lmhead_head_t *hd, size_t v, double approx_v, const drift_recipe_t *cfg, int ncfg)
{
    size_t K = hd->K, M = hd->nsplit;
    double l2 = hd->row_l2[v];
    double dl2 = q->u == 0     ? 0
                 : hd->row_dl2 ? hd->row_dl2[v]
                               : SAFE(q->u * l2 + q->eta * sqrt((double)K) * (1 + 0x1p-50));
    double r_pass = SAFE(q->coef * SAFE(q->hl2 * l2) + 2.0 * (double)K * 0x1p-149);
    double r_in = 0;
    if (q->u != 0) {
        double o = 0;
        const float *col = hd->split_cols + v * M;
        for (size_t j = 0; j < M; j++) o += q->a[j] * fabs((double)col[j]);
        r_in = SAFE(sum_up(o, M + 1) + q->cO + q->dhr * l2 + q->hfr * dl2);
    }
    double S_f = SAFE(q->hfl2 * SAFE(l2 + dl2));                                   /* >= sum |h^f w^f| */
    double l1_f = SAFE(q->hfl1 + (1 + q->u) * hd->row_l1[v] + (double)K * q->eta); /* >= sum |h^f| + |w^f| */
    double mag = SAFE(fabs(approx_v) + r_pass + r_in);                             /* >= |exact logit| */
    return SAFE(r_pass + r_in + cfg_radius(cfg, ncfg, K, S_f, l1_f, mag));
}

static int check_head(const drift_lmhead_head_t *hd)
{
    if (!hd || !hd->W || !hd->row_l1 || !hd->row_l2 || hd->V < 2 || hd->K < 1) return DRIFT_EINVAL;
    if (hd->nsplit > DRIFT_LMHEAD_MAXSPLIT || (hd->nsplit && (!hd->split || !hd->split_cols))) return DRIFT_EINVAL;
    for (size_t j = 0; j < hd->nsplit; j++) {
        if (hd->split[j] >= hd->K) return DRIFT_EINVAL;
        for (size_t k = 0; k < j; k++)
            if (hd->split[k] == hd->split[j]) return DRIFT_EINVAL;
    }
    return DRIFT_OK;
}

int drift_lmhead_head_prepare(drift_lmhead_head_t *hd)
{
    int rc = check_head(hd);
    if (rc) return rc;
    double l2 = 0, l1 = 0, dl = 0;
    for (size_t v = 0; v < hd->V; v++) {
        l2 = fmax(l2, hd->row_l2[v]);
        l1 = fmax(l1, hd->row_l1[v]);
        if (hd->row_dl2) dl = fmax(dl, hd->row_dl2[v]);
    }
    for (size_t j = 0; j < hd->nsplit; j++) hd->colmax[j] = 0;
    for (size_t v = 0; v < hd->V; v++)
        for (size_t j = 0; j < hd->nsplit; j++)
            hd->colmax[j] = fmaxf(hd->colmax[j], fabsf(hd->split_cols[v * hd->nsplit + j]));
    hd->l2max = l2, hd->l1max = l1, hd->dl2max = dl;
    hd->prepared = 1;
    return DRIFT_OK;
}

/* Why the split first stage is rigorous. Write h^f, w^f for h, w rounded (RNE) to the input
 * format, E = h . w (master values), E^f = h^f . w^f (what every configuration and the exact
 * logit start from), d = h - h^f, e = w - w^f. Then
 *   E^f - E = h^f . (w - e) - h . w = -(d . w) - (h^f . e)            (h^f = h - d)
 * and, splitting the channels into the set O (hd->split) and the rest,
 *   |d . w|   <= sum_O |d_i| |w_i| + ||d_rest||_2 ||w||_2             (Cauchy-Schwarz on the rest)
 *   |h^f . e| <= sum_O |h^f_i| (u |w_i| + eta) + ||h^f_rest||_2 ||e||_2
 * since RNE without overflow errs by at most u |x| (normal range) or eta = half the smallest
 * subnormal spacing (subnormal range), so |e_i| <= u |w_i| + eta and ||e||_2 <= u ||w||_2 +
 * eta sqrt(K) (triangle inequality) when hd->row_dl2 does not give it. Hence
 *   |E^f - E| <= r_in = sum_O (|d_i| + u |h^f_i|) |w_i| + eta sum_O |h^f_i| + ||d_rest|| ||w|| + ||h^f_rest|| ||e||.
 * Unlike the worst case (2u + u^2) sum |h w| this keeps the random-walk size of the rounding
 * errors on the channels outside O (the norms of the actual residuals d and e), and the large
 * outlier channels, where Cauchy-Schwarz would be loose, term by term. The approximate pass errs
 * by r_pass = coef(K) ||h|| ||w|| at most (drift_lmhead_approx_coef), and each configuration c
 * by at most drift_lmhead_bound(c, K, sum|h^f w^f|, sum(|h^f| + |w^f|), |E^f|) from E^f, with
 * sum|h^f w^f| <= ||h^f|| (||w|| + ||e||) and |E^f| <= |approx| + r_pass + r_in (the bound is
 * increasing in each argument). So every computed logit and E^f itself lie within
 * R_v = r_pass + r_in + max_c bound_c of approx_v. Every sum above is evaluated in double and
 * rounded up (sum_up, norm_up, SAFE); d_i is exact in double (two fp32 numbers 2^-8 apart at
 * most, relatively), and no value overflows the format (checked: max|h_i| and max ||w_v||_2
 * below its largest finite value, else no bound).
 * Stage 1a takes R >= the largest R_v over the tokens, from the largest of each argument
 * (R_v is increasing in each; the split sum from each channel's largest |w|), and drops the tokens with approx_v + R < L2 (drift_prune_top2):
 * the two tokens whose lower ends give L2 are above them in every configuration and exactly.
 * Stage 1b recomputes R_v <= R for the survivors only and repeats the test among them: the
 * two tokens that gave L2 in 1a survive with lower ends at least as high, so the new L2 is
 * at least the old one, and every token dropped in 1a or 1b lies below two survivors in every
 * configuration and exactly: it can be neither top-1 nor top-2 anywhere, nor tie with them. */
int drift_lmhead_stage1(size_t *keep, size_t *nkeep, double *rad, const double *h, const drift_lmhead_head_t *hd,
    const double *approx, const drift_recipe_t *cfg, int ncfg)
{
    if (!keep || !nkeep || !h || !approx) return DRIFT_EINVAL;
    int rc = check_head(hd);
    if (rc || (rc = check_cfgs(cfg, ncfg))) return rc;
    size_t K = hd->K, V = hd->V, M = hd->nsplit;
    drift_format_t f = cfg[0].in;
    const drift_format_info_t *fi = drift_format_info(f);
    /* input rounding: none when the format holds every fp32 master value */
    int lossless = f == DRIFT_FP32 || f == DRIFT_FP64;
    s1row_t q;
    memset(&q, 0, sizeof q);
    q.u = lossless ? 0 : fi->unit_roundoff;
    q.eta = lossless ? 0 : fi->min_subnormal / 2;
    q.coef = drift_lmhead_approx_coef(K);
    double R;
    if (hd->stage1_global) {
        R = stage1_global_radius(h, hd, approx, cfg, ncfg, q.u, q.eta);
    } else {
        /* the hidden state's norms, in and outside the split channels (O in increasing order) */
        size_t order[DRIFT_LMHEAD_MAXSPLIT];
        for (size_t k = 0; k < M; k++) order[k] = hd->split[k];
        for (size_t a = 1; a < M; a++) /* insertion sort: M is small */
            for (size_t b = a; b > 0 && order[b - 1] > order[b]; b--) {
                size_t t = order[b];
                order[b] = order[b - 1];
                order[b - 1] = t;
            }
        double hl2 = 0, hfl2 = 0, hfl1 = 0, dhr = 0, hfr = 0, hmax = 0, cO = 0;
        for (size_t i = 0, j = 0; i < K; i++) {
            double hf = lossless ? h[i] : drift_rne(h[i], f), d = h[i] - hf; /* d exact */
            hl2 += h[i] * h[i];
            hfl2 += hf * hf;
            hfl1 += fabs(hf);
            hmax = fmax(hmax, fabs(h[i]));
            if (j < M && order[j] == i) {
                j++;
                cO += fabs(hf);
            } else {
                dhr += d * d;
                hfr += hf * hf;
            }
        }
        for (size_t j = 0; j < M; j++) { /* split channel j's weight in the sum over O */
            size_t i = hd->split[j];
            double hf = lossless ? h[i] : drift_rne(h[i], f);
            q.a[j] = SAFE(fabs(h[i] - hf) + q.u * fabs(hf));
        }
        q.hl2 = norm_up(hl2, K);
        q.hfl2 = norm_up(hfl2, K);
        q.hfl1 = sum_up(hfl1, K);
        q.dhr = norm_up(dhr, K);
        q.hfr = norm_up(hfr, K);
        q.cO = SAFE(q.eta * sum_up(cO, M + 1));
        /* the head's maxima over the tokens (drift_lmhead_head_prepare, or here) */
        drift_lmhead_head_t mx = *hd;
        if (!mx.prepared) {
            int rc = drift_lmhead_head_prepare(&mx);
            if (rc) return rc;
        }
        double wmax = mx.l2max, l1max = mx.l1max, dlmax = mx.dl2max, amax = 0, rimax = 0;
        /* overflow would break |x - rnd(x)| <= u|x| + eta */
        if (!lossless && (hmax > fi->max_finite || wmax > fi->max_finite)) return DRIFT_EUNSUPPORTED;

        /* Stage 1a: the largest radius, from the largest of each argument over the tokens; for the
         * split channels sum_j a_j max_v |w_v,split[j]| >= max_v sum_j a_j |w_v,split[j]| */
        for (size_t v = 0; v < V; v++) amax = fmax(amax, fabs(approx[v]));
        if (!lossless) {
            double omax = 0;
            for (size_t j = 0; j < M; j++) omax += q.a[j] * (double)mx.colmax[j];
            if (!hd->row_dl2) dlmax = SAFE(q.u * wmax + q.eta * sqrt((double)K) * (1 + 0x1p-50));
            rimax = SAFE(sum_up(omax, M + 1) + q.cO + q.dhr * wmax + q.hfr * dlmax);
        }
        double r_pass = SAFE(q.coef * SAFE(q.hl2 * wmax) + 2.0 * (double)K * 0x1p-149);
        double S_f = SAFE(q.hfl2 * SAFE(wmax + dlmax));
        double l1_f = SAFE(q.hfl1 + (1 + q.u) * l1max + (double)K * q.eta);
        double mag = SAFE(amax + r_pass + rimax);
        R = SAFE(r_pass + rimax + cfg_radius(cfg, ncfg, K, S_f, l1_f, mag));
    }
    if (!isfinite(R))
        return DRIFT_EUNSUPPORTED; /* no rigorous bound (e.g. bf16 accumulation of
                                                    K >= 256 terms): only eval_full can help */
    /* drift_prune_top2 with one radius for all tokens (no V-sized radius array) */
    double l1 = -INFINITY, l2 = -INFINITY;
    for (size_t v = 0; v < V; v++) {
        double lb = down(approx[v], R);
        if (lb > l1) {
            l2 = l1;
            l1 = lb;
        } else if (lb > l2) {
            l2 = lb;
        }
    }
    size_t n = 0;
    for (size_t v = 0; v < V; v++) {
        if (rad) rad[v] = R;
        if (up(approx[v], R) >= l2 || isnan(approx[v])) keep[n++] = v;
    }
    if (hd->stage1_global || n < 2) {
        *nkeep = n;
        return DRIFT_OK;
    }
    /* Stage 1b: each survivor's own radius, the test again among the survivors */
    double *val = malloc(2 * n * sizeof *val);
    size_t *k2 = malloc(n * sizeof *k2);
    if (!val || !k2) {
        free(val);
        free(k2);
        return DRIFT_ENOMEM;
    }
    double *rv = val + n;
    for (size_t j = 0; j < n; j++) {
        val[j] = approx[keep[j]];
        rv[j] = token_radius(&q, hd, keep[j], val[j], cfg, ncfg);
        if (!(rv[j] <= R)) rv[j] = R; /* cannot happen (monotone); keeps 1b a refinement */
        if (rad) rad[keep[j]] = rv[j];
    }
    size_t m = drift_prune_top2(k2, val, rv, n);
    for (size_t j = 0; j < m; j++) keep[j] = keep[k2[j]];
    *nkeep = m;
    free(val);
    free(k2);
    return DRIFT_OK;
}

/* ---- the pruned evaluation ------------------------------------------------------------------------ */

static int eval_head(drift_lmhead_result_t *r, const double *h, const drift_lmhead_head_t *hd, const double *approx,
    const drift_recipe_t *cfg, int ncfg)
{
    if (!r || !h || !approx) return DRIFT_EINVAL;
    int rc = check_head(hd);
    if (rc || (rc = check_cfgs(cfg, ncfg))) return rc;
    memset(r, 0, sizeof *r);
    r->ncfg = ncfg;
    const float *W = hd->W;
    size_t V = hd->V, K = hd->K;
    drift_format_t f = cfg[0].in;
    int lossless = f == DRIFT_FP32 || f == DRIFT_FP64;

    size_t *keep = malloc(V * sizeof *keep);
    int ok = keep != NULL; /* on failure keep is freed with the rest below */
    size_t n1 = 0;
    if (ok && (rc = drift_lmhead_stage1(keep, &n1, NULL, h, hd, approx, cfg, ncfg))) {
        free(keep);
        return rc;
    }
    r->n_stage1 = n1;

    /* The survivors' rows in the input format (one bulk rounding, bit for bit drift_rne), the
     * bounds sum|h w| and sum(|h| + |w|) of stage 2, and a cheap fp64 logit per survivor. */
    size_t nd = (size_t)7 * n1 + K + (size_t)ncfg * n1;
    double *buf = ok ? malloc((nd + n1 * K) * sizeof *buf) : NULL;
    size_t *ibuf = ok ? malloc(3 * (n1 + 1) * sizeof *ibuf) : NULL;
    unsigned char *known = ok ? calloc(n1 + 1, 1) : NULL;
    if (!buf || !ibuf || !known) {
        rc = DRIFT_ENOMEM;
        goto done;
    }
    double *hf = buf, *ex = hf + K, *sabs = ex + n1, *sl1 = sabs + n1, *dd = sl1 + n1, *de = dd + n1;
    double *val = de + n1, *lbh = val + n1, *raw = lbh + n1, *rows = raw + (size_t)ncfg * n1;
    size_t *k2 = ibuf, *sub = k2 + n1 + 1, *t2 = sub + n1 + 1;
    int twin[DRIFT_LMHEAD_MAXCFG];
    twins(twin, cfg, ncfg);
    for (size_t i = 0; i < (size_t)ncfg * n1; i++) raw[i] = NAN;
    drift_round_array_opts_t ro = {f, DRIFT_RNE, 0, 0, NULL};
    for (size_t i = 0; i < K; i++) hf[i] = h[i];
    if (!lossless && (rc = drift_round_array(hf, hf, K, &ro))) goto done;
    double hfl1 = 0;
    for (size_t i = 0; i < K; i++) hfl1 += fabs(hf[i]);
    double gK = drift_gamma(K, 0x1p-53);
    for (size_t j = 0; j < n1; j++) {
        const float *w = W + keep[j] * K;
        double *row = rows + j * K, sa = 0, wl = 0, d = 0;
        for (size_t i = 0; i < K; i++) row[i] = (double)w[i];
        if (!lossless && (rc = drift_round_array(row, row, K, &ro))) goto done;
        for (size_t i = 0; i < K; i++) {
            double p = hf[i] * row[i]; /* exact product (two values of at most 24 bits) */
            sa += fabs(p);             /* the sums round */
            wl += fabs(row[i]);
            d += p;
        }
        /* K-term sums of nonnegative doubles: relative error below gamma_K(2^-53) */
        sabs[j] = SAFE(sa * (1 + gK));
        sl1[j] = SAFE((hfl1 + wl) * (1 + drift_gamma(K + 1, 0x1p-53)));
        /* the fp64 logit d: |d - exact| <= gamma_K(2^-53) sum|h w| (Higham; the products are
         * exact), so the exact logit rounded to double lies in [down(d, de), up(d, de)] (RN is
         * monotone and up/down round outwards) */
        dd[j] = d;
        de[j] = SAFE(gK * sabs[j]);
    }
    /* Exact logits are computed only where a decision needs them (known[j]). */
#define EXACT(j)                                                                                       \
    do {                                                                                               \
        if (!known[j]) {                                                                               \
            if ((rc = drift_exact_dot(&ex[j], hf, rows + (j)*K, K, DRIFT_FP64, DRIFT_RNE))) goto done; \
            known[j] = 1;                                                                              \
        }                                                                                              \
    } while (0)

    /* Exact top-2: a token whose fp64 interval lies below two others' is strictly below them
     * exactly, so it is neither exact top-1 nor top-2; the rest (in increasing id order) decide. */
    {
        size_t nt = drift_prune_top2(t2, dd, de, n1);
        double *tex = val, *trows = NULL;
        size_t *tid = sub;
        trows = malloc(nt * K * sizeof *trows);
        if (!trows) {
            rc = DRIFT_ENOMEM;
            goto done;
        }
        for (size_t q = 0; q < nt; q++) {
            tid[q] = keep[t2[q]];
            memcpy(trows + q * K, rows + t2[q] * K, K * sizeof *trows);
        }
        cand_t cd = {hf, trows, tid, nt, K, tex};
        rc = exact_top2(&r->exact, &cd);
        free(trows);
        if (rc) goto done;
        for (size_t q = 0; q < nt; q++) { /* exact_top2 computed these exact logits */
            ex[t2[q]] = tex[q];
            known[t2[q]] = 1;
        }
    }

    /* Stage 2, per configuration: the same test around the exact logits, with the
     * configuration's own bound; then the emulated dot products of the tokens left. The test's
     * outcome is decided from the fp64 intervals where they suffice (down, up and the bound are
     * monotone in the exact value and in its magnitude), and from the exact logit otherwise, so
     * the set kept is exactly the one the exact logits give. */
    for (int c = 0; c < ncfg; c++) {
        /* L2 = second largest of down(ex_j, crad_j); A = second largest of its lower ends */
        double a1 = -INFINITY, a2 = -INFINITY;
        for (size_t j = 0; j < n1; j++) {
            double lo = down(dd[j], de[j]), hi = up(dd[j], de[j]);
            double mlo = lo <= 0 && hi >= 0 ? 0 : fmin(fabs(lo), fabs(hi)), mhi = fmax(fabs(lo), fabs(hi));
            double lb_lo, lb_hi;
            if (known[j]) {
                lb_lo = lb_hi = down(ex[j], bound_checked(&cfg[c], K, sabs[j], sl1[j], fabs(ex[j])));
            } else {
                lb_lo = down(lo, bound_checked(&cfg[c], K, sabs[j], sl1[j], mhi));
                lb_hi = down(hi, bound_checked(&cfg[c], K, sabs[j], sl1[j], mlo));
            }
            lbh[j] = lb_hi;
            if (lb_lo > a1) {
                a2 = a1;
                a1 = lb_lo;
            } else if (lb_lo > a2) {
                a2 = lb_lo;
            }
        }
        double l1 = -INFINITY, l2 = -INFINITY;
        for (size_t j = 0; j < n1; j++) {
            if (!(lbh[j] >= a2) && !isnan(lbh[j])) continue; /* below the top two: cannot be L2 */
            EXACT(j);
            double lb = down(ex[j], bound_checked(&cfg[c], K, sabs[j], sl1[j], fabs(ex[j])));
            if (lb > l1) {
                l2 = l1;
                l1 = lb;
            } else if (lb > l2) {
                l2 = lb;
            }
        }
        size_t n2 = 0;
        for (size_t j = 0; j < n1; j++) {
            int in;
            if (known[j]) {
                double cr = bound_checked(&cfg[c], K, sabs[j], sl1[j], fabs(ex[j]));
                in = up(ex[j], cr) >= l2 || isnan(ex[j]) || isnan(cr);
            } else {
                double lo = down(dd[j], de[j]), hi = up(dd[j], de[j]);
                double mlo = lo <= 0 && hi >= 0 ? 0 : fmin(fabs(lo), fabs(hi)), mhi = fmax(fabs(lo), fabs(hi));
                double ub_hi = up(hi, bound_checked(&cfg[c], K, sabs[j], sl1[j], mhi));
                double ub_lo = up(lo, bound_checked(&cfg[c], K, sabs[j], sl1[j], mlo));
                if (ub_lo >= l2) {
                    in = 1;
                } else if (ub_hi < l2) {
                    in = 0;
                } else {
                    EXACT(j);
                    double cr = bound_checked(&cfg[c], K, sabs[j], sl1[j], fabs(ex[j]));
                    in = up(ex[j], cr) >= l2 || isnan(ex[j]) || isnan(cr);
                }
            }
            if (in) k2[n2++] = j;
        }
        for (size_t q = 0; q < n2; q++) {
            if ((rc = cached_logit(&val[q], raw, n1, k2[q], twin, c, hf, rows + k2[q] * K, K, cfg))) goto done;
            sub[q] = keep[k2[q]];
        }
        if (n2 < 2) { /* impossible: two tokens always pass; guard against a NaN bound */
            rc = DRIFT_EINVAL;
            goto done;
        }
        computed_top2(&r->computed[c], val, sub, n2);
        r->n_eval[c] = n2;
    }
#undef EXACT
    finish_flips(r);
done:
    free(keep);
    free(buf);
    free(ibuf);
    free(known);
    return rc;
}

int drift_lmhead_eval_pruned_head(drift_lmhead_result_t *r, const double *h, const drift_lmhead_head_t *hd,
    const double *approx, const drift_recipe_t *cfg, int ncfg, const unsigned char *use)
{
    if (!r || !cfg || ncfg < 1 || ncfg > DRIFT_LMHEAD_MAXCFG) return DRIFT_EINVAL;
    if (!use) return eval_head(r, h, hd, approx, cfg, ncfg);
    drift_recipe_t sub[DRIFT_LMHEAD_MAXCFG];
    int map[DRIFT_LMHEAD_MAXCFG], m = 0;
    for (int c = 0; c < ncfg; c++)
        if (use[c]) {
            map[m] = c;
            sub[m++] = cfg[c];
        }
    drift_lmhead_result_t res;
    int rc = eval_head(&res, h, hd, approx, sub, m);
    if (rc) return rc;
    memset(r, 0, sizeof *r);
    r->exact = res.exact;
    r->ncfg = ncfg;
    r->n_stage1 = res.n_stage1;
    for (int q = 0; q < m; q++) {
        r->computed[map[q]] = res.computed[q];
        r->flip[map[q]] = res.flip[q];
        r->n_eval[map[q]] = res.n_eval[q];
    }
    return DRIFT_OK;
}

int drift_lmhead_eval_pruned(drift_lmhead_result_t *r, const double *h, const float *W, size_t V, size_t K,
    const double *approx, const double *row_l1, const double *row_l2, const drift_recipe_t *cfg, int ncfg)
{
    drift_lmhead_head_t hd = {.W = W, .V = V, .K = K, .row_l1 = row_l1, .row_l2 = row_l2};
    return drift_lmhead_eval_pruned_head(r, h, &hd, approx, cfg, ncfg, NULL);
}

int drift_lmhead_eval_pruned_some(drift_lmhead_result_t *r, const double *h, const float *W, size_t V, size_t K,
    const double *approx, const double *row_l1, const double *row_l2, const drift_recipe_t *cfg, int ncfg,
    const unsigned char *use)
{
    if (!use) return DRIFT_EINVAL;
    drift_lmhead_head_t hd = {.W = W, .V = V, .K = K, .row_l1 = row_l1, .row_l2 = row_l2};
    return drift_lmhead_eval_pruned_head(r, h, &hd, approx, cfg, ncfg, use);
}

/* ---- aids to the first stage --------------------------------------------------------------------- */

int drift_lmhead_round_norms(double *dl2, const float *W, size_t V, size_t K, drift_format_t f)
{
    if (!dl2 || !W || K < 1 || !drift_format_info(f)) return DRIFT_EINVAL;
    if (f == DRIFT_FP32 || f == DRIFT_FP64) {
        for (size_t v = 0; v < V; v++) dl2[v] = 0;
        return DRIFT_OK;
    }
    int err = 0;
    DRIFT_OMP("omp parallel reduction(|:err)")
    {
        double *row = malloc(K * sizeof *row);
        drift_round_array_opts_t ro = {f, DRIFT_RNE, 0, 0, NULL};
        if (!row) err |= 1;
        DRIFT_OMP("omp for schedule(dynamic, 16)")
        for (size_t v = 0; v < V; v++) {
            if (!row) continue;
            const float *w = W + v * K;
            for (size_t i = 0; i < K; i++) row[i] = w[i];
            if (drift_round_array(row, row, K, &ro)) err |= 2;
            double s = 0;
            for (size_t i = 0; i < K; i++) {
                double e = (double)w[i] - row[i]; /* exact: w and its rounding are fp32 numbers */
                s += e * e;
            }
            dl2[v] = norm_up(s, K); /* inf when a value overflowed the format: no bound, nothing pruned */
        }
        free(row);
    }
    return err & 1 ? DRIFT_ENOMEM : err ? DRIFT_EINVAL : DRIFT_OK;
}

int drift_lmhead_split_choose(size_t *chan, size_t M, const double *H, size_t R, size_t K)
{
    if (!chan || !H || R < 1 || M > K || M > DRIFT_LMHEAD_MAXSPLIT) return DRIFT_EINVAL;
    double best[DRIFT_LMHEAD_MAXSPLIT];
    size_t n = 0;
    for (size_t i = 0; i < K; i++) {
        double m = 0;
        for (size_t r = 0; r < R; r++) m = fmax(m, fabs(H[r * K + i]));
        /* insert into the descending list best[0..n) (a later equal value goes after) */
        size_t p = n;
        while (p > 0 && best[p - 1] < m) p--;
        if (p >= M) continue;
        if (n < M) n++;
        for (size_t q = n - 1; q > p; q--) {
            best[q] = best[q - 1];
            chan[q] = chan[q - 1];
        }
        best[p] = m;
        chan[p] = i;
    }
    for (size_t a = 1; a < M; a++) /* increasing channel order */
        for (size_t b = a; b > 0 && chan[b - 1] > chan[b]; b--) {
            size_t t = chan[b];
            chan[b] = chan[b - 1];
            chan[b - 1] = t;
        }
    return DRIFT_OK;
}

int drift_lmhead_split_cols(float *cols, const float *W, size_t V, size_t K, const size_t *chan, size_t M)
{
    if ((M && (!cols || !chan)) || !W) return DRIFT_EINVAL;
    for (size_t j = 0; j < M; j++)
        if (chan[j] >= K) return DRIFT_EINVAL;
    for (size_t v = 0; v < V; v++)
        for (size_t j = 0; j < M; j++) cols[v * M + j] = W[v * K + chan[j]];
    return DRIFT_OK;
}
