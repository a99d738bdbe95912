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

#ifdef _OPENMP
#define DRIFT_OMP(x) _Pragma(x)
#else
#define DRIFT_OMP(x)
#endif

/* ---- configurations ------------------------------------------------------------------------------ */

int drift_lmhead_input_ok(drift_format_t f)
{
    return f == DRIFT_BF16 || f == DRIFT_FP16 || f == DRIFT_TF32 || f == DRIFT_FP32;
}

int drift_lmhead_cfg_check(const drift_lmhead_cfg_t *c)
{
    return drift_recipe_check(c, NULL, 0);
}

int drift_lmhead_cfg_name(char *buf, size_t size, const drift_lmhead_cfg_t *c)
{
    char o[DRIFT_ORDER_SPEC_MAX];
    int n;
    if (!buf || !c) return DRIFT_EINVAL;
    if (c->exact) {
        n = snprintf(buf, size, "exact/-/%s", drift_format_name(c->out));
    } else {
        if (drift_order_print(o, sizeof o, &c->order) < 0) return DRIFT_EINVAL;
        n = snprintf(buf, size, "%s/%s/%s", o, drift_format_name(c->acc.acc), drift_format_name(c->out));
    }
    return n < 0 || (size_t)n >= size ? DRIFT_EINVAL : n;
}

/* The accumulator's result before the logit is stored (exact configurations never use this
 * path: the exact value rounded to double would round to `out` as the exact value does only
 * when out is fp64). */
static int raw_dot(double *y, const double *h, const double *w, size_t K, const drift_lmhead_cfg_t *c)
{
    return drift_recipe_dot_acc(y, h, w, K, NULL, c);
}

static double store(double y, const drift_lmhead_cfg_t *c)
{
    return drift_recipe_store(y, c);
}

int drift_lmhead_dot(double *out, const double *h, const double *w, size_t K, const drift_lmhead_cfg_t *c)
{
    return drift_recipe_dot(out, h, w, K, NULL, c);
}

/* Configurations that differ only in the logits' format share one dot product: twin[c] is the
 * first configuration computing the same accumulator result (itself when none earlier does). */
static void twins(int *twin, const drift_lmhead_cfg_t *cfg, int ncfg)
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
                        const double *w, size_t K, const drift_lmhead_cfg_t *cfg)
{
    if (cfg[c].exact) return drift_exact_dot(out, h, w, K, cfg[c].out, DRIFT_RNE);
    double *slot = &raw[(size_t)twin[c] * n + q];
    if (isnan(*slot)) {
        int rc = raw_dot(slot, h, w, K, &cfg[c]);
        if (rc) return rc;
    }
    *out = store(*slot, &cfg[c]);
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
static double bound_checked(const drift_lmhead_cfg_t *c, size_t K, double sum_abs, double sum_l1, double mag)
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

double drift_lmhead_bound(const drift_lmhead_cfg_t *c, size_t K, double sum_abs, double sum_l1, double mag)
{
    if (drift_lmhead_cfg_check(c)) return NAN;
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
    for (size_t i = 0; i < c->n; i++) drift_exact_dot(&c->ex[i], c->h, c->rows + i * c->K, c->K, DRIFT_FP64, DRIFT_RNE);
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
        drift_exact_dot(&t->gap, a, b, 2 * K, DRIFT_FP64, DRIFT_RNE);
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

static int check_cfgs(const drift_lmhead_cfg_t *cfg, int ncfg)
{
    if (!cfg || ncfg < 1 || ncfg > DRIFT_LMHEAD_MAXCFG) return DRIFT_EINVAL;
    for (int c = 0; c < ncfg; c++) {
        int rc = drift_lmhead_cfg_check(&cfg[c]);
        if (rc) return rc;
        if (cfg[c].in != cfg[0].in) return DRIFT_EINVAL;
    }
    return DRIFT_OK;
}

static void finish_flips(drift_lmhead_result_t *r)
{
    for (int c = 0; c < r->ncfg; c++) r->flip[c] = !r->exact.tie && r->computed[c].top1 != r->exact.top1;
}

int drift_lmhead_eval_full(drift_lmhead_result_t *r, const double *h, const double *W, size_t V, size_t K,
                           const drift_lmhead_cfg_t *cfg, int ncfg)
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

#define AP_ROWS 4  /* hidden states computed together against one weight row (registers) */
#define AP_LANES 16 /* independent float accumulators per dot product: vectorisable */
#define AP_TILE 8   /* weight rows per cache tile */

double drift_lmhead_approx_coef(size_t K)
{
    return SAFE(drift_gamma(K, 0x1p-24));
}

int drift_lmhead_approx(double *out, const double *H, size_t R, const float *W, size_t V, size_t K)
{
    if (!out || !H || !W || K == 0) return DRIFT_EINVAL;
    size_t RP = (R + AP_ROWS - 1) / AP_ROWS * AP_ROWS; /* rows padded with zeros to whole groups */
    float *Hf = calloc(RP * K, sizeof *Hf);
    if (!Hf) return DRIFT_ENOMEM;
    for (size_t i = 0; i < R * K; i++) Hf[i] = (float)H[i]; /* fp32 numbers: exact */
    /* Token tiles outermost: a tile of AP_TILE weight rows stays in cache while every group of
     * AP_ROWS hidden states passes over it, so W is read from memory once per call. */
    size_t ntile = (V + AP_TILE - 1) / AP_TILE;
    DRIFT_OMP("omp parallel for schedule(dynamic, 4)")
    for (size_t t = 0; t < ntile; t++) {
        size_t v0 = t * AP_TILE, v1 = v0 + AP_TILE < V ? v0 + AP_TILE : V;
        for (size_t r0 = 0; r0 < RP; r0 += AP_ROWS)
            for (size_t v = v0; v < v1; v++) {
                const float *w = W + v * K;
                float acc[AP_ROWS][AP_LANES];
                memset(acc, 0, sizeof acc);
                size_t i = 0;
                for (; i + AP_LANES <= K; i += AP_LANES)
                    for (int r = 0; r < AP_ROWS; r++) {
                        const float *h = Hf + (r0 + r) * K + i;
                        for (int j = 0; j < AP_LANES; j++) acc[r][j] += h[j] * w[i + j];
                    }
                for (; i < K; i++)
                    for (int r = 0; r < AP_ROWS; r++) acc[r][i % AP_LANES] += Hf[(r0 + r) * K + i] * w[i];
                for (size_t r = 0; r < AP_ROWS && r0 + r < R; r++) {
                    float sum = 0;
                    for (int j = 0; j < AP_LANES; j++) sum += acc[r][j];
                    out[(r0 + r) * V + v] = sum;
                }
            }
    }
    free(Hf);
    return DRIFT_OK;
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

int drift_lmhead_eval_pruned(drift_lmhead_result_t *r, const double *h, const float *W, size_t V, size_t K,
                             const double *approx, const double *row_l1, const double *row_l2,
                             const drift_lmhead_cfg_t *cfg, int ncfg)
{
    if (!r || !h || !W || !approx || !row_l1 || !row_l2 || V < 2 || K < 1) return DRIFT_EINVAL;
    int rc = check_cfgs(cfg, ncfg);
    if (rc) return rc;
    memset(r, 0, sizeof *r);
    r->ncfg = ncfg;
    drift_format_t f = cfg[0].in;
    const drift_format_info_t *fi = drift_format_info(f);
    /* input rounding: none when the format holds every fp32 master value */
    int lossless = f == DRIFT_FP32 || f == DRIFT_FP64;
    double u = lossless ? 0 : fi->unit_roundoff, eta = lossless ? 0 : fi->min_subnormal / 2;

    /* Stage 1: one radius for all tokens of this row, from the largest ||w||_2, sum|w| and
     * |approx| (each bound below is increasing in all of its arguments). */
    double hl2 = 0, hl1 = 0;
    for (size_t i = 0; i < K; i++) {
        hl2 += h[i] * h[i];
        hl1 += fabs(h[i]);
    }
    hl2 = SAFE(sqrt(SAFE(hl2)));
    hl1 = SAFE(hl1);
    double wl2 = 0, wl1 = 0, amax = 0;
    for (size_t v = 0; v < V; v++) {
        wl2 = fmax(wl2, row_l2[v]);
        wl1 = fmax(wl1, row_l1[v]);
        amax = fmax(amax, fabs(approx[v]));
    }
    double S = SAFE(hl2 * wl2); /* >= sum |h_i w_i| (Cauchy-Schwarz), master values */
    double r_pass = SAFE(drift_lmhead_approx_coef(K) * S + 2.0 * (double)K * 0x1p-149);
    double r_in = SAFE((2 * u + u * u) * S + eta * ((1 + u) * (hl1 + wl1) + (double)K * eta));
    double S_f = SAFE(S + r_in);                                   /* sum |h^f w^f| */
    double l1_f = SAFE((1 + u) * (hl1 + wl1) + 2.0 * (double)K * eta); /* sum |h^f| + |w^f| */
    double mag = SAFE(amax + r_pass + r_in);
    double r_cfg = 0;
    for (int c = 0; c < ncfg; c++) r_cfg = fmax(r_cfg, drift_lmhead_bound(&cfg[c], K, S_f, l1_f, mag));
    double R = SAFE(r_pass + r_in + r_cfg);
    if (!isfinite(R)) return DRIFT_EUNSUPPORTED; /* no rigorous bound (e.g. bf16 accumulation of
                                                    K >= 256 terms): only eval_full can help */

    size_t *keep = malloc(V * sizeof *keep);
    double *rad = malloc(V * sizeof *rad);
    int ok = keep && rad; /* on failure keep is freed with the rest below */
    size_t n1 = 0;
    if (ok) {
        for (size_t v = 0; v < V; v++) rad[v] = R;
        n1 = drift_prune_top2(keep, approx, rad, V);
    }
    free(rad);
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
#define EXACT(j)                                                                                   \
    do {                                                                                           \
        if (!known[j]) {                                                                           \
            drift_exact_dot(&ex[j], hf, rows + (j) * K, K, DRIFT_FP64, DRIFT_RNE);                 \
            known[j] = 1;                                                                          \
        }                                                                                          \
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

int drift_lmhead_eval_pruned_some(drift_lmhead_result_t *r, const double *h, const float *W, size_t V, size_t K,
                                  const double *approx, const double *row_l1, const double *row_l2,
                                  const drift_lmhead_cfg_t *cfg, int ncfg, const unsigned char *use)
{
    if (!r || !cfg || !use || ncfg < 1 || ncfg > DRIFT_LMHEAD_MAXCFG) return DRIFT_EINVAL;
    drift_lmhead_cfg_t sub[DRIFT_LMHEAD_MAXCFG];
    int map[DRIFT_LMHEAD_MAXCFG], m = 0;
    for (int c = 0; c < ncfg; c++)
        if (use[c]) {
            map[m] = c;
            sub[m++] = cfg[c];
        }
    drift_lmhead_result_t res;
    int rc = drift_lmhead_eval_pruned(&res, h, W, V, K, approx, row_l1, row_l2, sub, m);
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
