/* flips.c — argmax flip sets, their binned rates, the Phi fit with its predictions, and the
 * partial-sum rounding model. What each function promises is in flips.h; comments here say how
 * and why. */
#include "flips.h"
#include "drift.h"
#include "dispatch.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LN2 0.69314718055994531

/* ---- flip sets ------------------------------------------------------------------------------- */

int drift_flipset_alloc(drift_flipset_t *s, size_t n, int ncfg)
{
    if (!s || ncfg < 0) return DRIFT_EINVAL;
    memset(s, 0, sizeof *s);
    s->n = n;
    s->ncfg = ncfg;
    size_t m = n * (size_t)ncfg + 1;
    s->t = calloc(n ? n : 1, sizeof *s->t);
    s->flip = calloc(m, 1);
    s->pick = calloc(m, sizeof *s->pick);
    s->pick2 = calloc(m, sizeof *s->pick2);
    s->cgap = calloc(m, sizeof *s->cgap);
    s->neval = calloc(m, sizeof *s->neval);
    s->nstage1 = calloc(n + 1, sizeof *s->nstage1);
    s->pvar = malloc(m * sizeof *s->pvar);
    if (!s->t || !s->flip || !s->pick || !s->pick2 || !s->cgap || !s->neval || !s->nstage1 || !s->pvar) {
        drift_flipset_free(s);
        return DRIFT_ENOMEM;
    }
    for (size_t j = 0; j < m; j++) s->pvar[j] = NAN;
    return 0;
}

void drift_flipset_free(drift_flipset_t *s)
{
    if (!s) return;
    free(s->t);
    free(s->flip);
    free(s->pick);
    free(s->pick2);
    free(s->cgap);
    free(s->neval);
    free(s->nstage1);
    free(s->pvar);
    memset(s, 0, sizeof *s);
}

void drift_flipset_record(drift_flipset_t *s, size_t i, const drift_lmhead_result_t *r)
{
    drift_flip_trial_t *t = &s->t[i];
    t->top1 = r->exact.top1;
    t->top2 = r->exact.top2;
    t->gap = r->exact.gap;
    t->tie = r->exact.tie;
    t->l1 = r->exact.v1;
    s->nstage1[i] = r->n_stage1;
    for (int c = 0; c < s->ncfg; c++) {
        size_t j = i * s->ncfg + c;
        s->flip[j] = r->flip[c];
        s->pick[j] = r->computed[c].top1;
        s->pick2[j] = r->computed[c].top2;
        s->cgap[j] = r->computed[c].gap;
        s->neval[j] = r->n_eval[c];
    }
}

long drift_flipset_flips(const drift_flipset_t *s, int c)
{
    long k = 0;
    for (size_t i = 0; i < s->n; i++) k += s->flip[i * s->ncfg + c];
    return k;
}

int drift_flipset_changed(const drift_flipset_t *s, size_t i, const int *cfg, int n)
{
    int any = 0;
    for (int b = 1; b < n; b++) any |= s->pick[i * s->ncfg + cfg[b]] != s->pick[i * s->ncfg + cfg[0]];
    return any;
}

size_t drift_flip_tiebreak(size_t top1, size_t top2, double gap, double eps)
{
    return gap < eps ? (top1 < top2 ? top1 : top2) : top1;
}

/* ---- flip rates per gap bin -------------------------------------------------------------------- */

int drift_flipset_bin(
    drift_flip_bin_t *out, const drift_flipset_t *s, int c, const drift_logbins_t *bins, int b, drift_format_t in)
{
    if (!out || !s || !bins || c < 0 || c >= s->ncfg) return DRIFT_EINVAL;
    long n = 0, k = 0;
    double ga = 0, gu = 0;
    for (size_t i = 0; i < s->n; i++) {
        const drift_flip_trial_t *t = &s->t[i];
        if (t->tie || drift_logbins_find(bins, t->rel) != b) continue;
        n++;
        k += s->flip[i * s->ncfg + c];
        ga += t->gap;
        gu += t->gap / drift_ulp(t->l1, in);
    }
    out->n = n;
    out->k = k;
    out->lo = out->hi = NAN;
    if (n) {
        int rc = drift_wilson(&out->lo, &out->hi, k, n, DRIFT_Z95);
        if (rc) return rc;
    }
    out->rate = n ? (double)k / n : NAN;
    out->gap_abs = n ? ga / n : NAN;
    out->gap_ulp = n ? gu / n : NAN;
    return 0;
}

/* ---- the Phi fit, the predictions and the critical gaps ---------------------------------------- */

double drift_flip_c(double nu) { return sqrt(nu / (8 * LN2)); }

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

double drift_flip_nu(const drift_order_t *o, drift_format_t in, size_t K)
{
    double k = (double)K;
    drift_tc_params_t p;
    int tc = drift_order_tc_params(&p, o, in);
    if (tc) return tc > 0 ? (1 + p.block / pow(4.0, p.neab)) / (2.0 * p.block) : NAN;
    switch (o->kind) {
    case DRIFT_ORDER_SEQ:
    case DRIFT_ORDER_REV:
    case DRIFT_ORDER_RANDOM: return (k + 1) / (2 * k);
    case DRIFT_ORDER_PAIRWISE: return (1 + ceil(log2(k))) / k;
    case DRIFT_ORDER_BLOCKED: {
        double B = (double)o->param, nb = ceil(k / B);
        return ((B + 1) / 2 + nb / 2) / k;
    }
    case DRIFT_ORDER_SPLITK: {
        size_t L = ceil_div(K, (size_t)o->param), P = ceil_div(K, L);
        double comb = o->tree ? ceil(log2((double)P)) : (double)P / 2;
        return (((double)L + 1) / 2 + comb) / k;
    }
    case DRIFT_ORDER_WARP: {
        double W = (double)o->param;
        return ((ceil(k / W) + 1) / 2 + log2(W)) / k;
    }
    case DRIFT_ORDER_KAHAN:
    case DRIFT_ORDER_NEUMAIER: return 2 / k;
    default: return NAN;
    }
}

int drift_flipset_fit(drift_flip_fit_t *F, const drift_flipset_t *s, int c, const drift_recipe_t *cf, double nu,
    size_t K, const drift_logbins_t *bins)
{
    if (!F || !s || !cf || c < 0 || c >= s->ncfg) return DRIFT_EINVAL;
    size_t n = s->n;
    memset(F, 0, sizeof *F);
    double *gap = malloc((n + 1) * sizeof *gap), *sv = malloc((n + 1) * sizeof *sv), *lv = malloc((n + 1) * sizeof *lv);
    unsigned char *fl = malloc(n + 1);
    int rc = 0;
    if (!gap || !sv || !lv || !fl) {
        rc = DRIFT_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        sv[i] = s->t[i].s;
        lv[i] = fabs(s->t[i].l1);
        gap[i] = s->t[i].tie ? 0 : s->t[i].rel;
        fl[i] = s->flip[i * s->ncfg + c];
    }
    if (drift_median(&F->s_med, sv, n) || drift_median(&F->l1_med, lv, n)) {
        rc = DRIFT_ENOMEM;
        goto done;
    }
    if ((rc = drift_phi_fit(&F->fit, gap, fl, n, bins))) goto done;
    /* the predictions (see flips.h): RMS over the trials of sigma_i / s_i. The norm form is
     * evaluated with sqrt(sum h_i^2 (w1_i^2 + w2_i^2)) for ||h||_rms ||w1 - w2||: equal in
     * expectation for independent rows, and blind to the few large weights that the planted
     * construction puts on channels of tiny |h_i| (their products are tiny). */
    double sum = 0, sum2 = 0, k8 = 8 * LN2;
    size_t n2 = 0;
    for (size_t i = 0; i < n; i++) {
        const drift_flip_trial_t *t = &s->t[i];
        double var = 0;
        if (!cf->exact) {
            double u = drift_format_info(cf->acc.acc)->unit_roundoff;
            var = nu * (double)K / k8 * u * u * t->p2;
        }
        if (cf->exact || cf->out != cf->acc.acc) {
            double uo = drift_format_info(cf->out)->unit_roundoff;
            var += 2 * uo * uo * t->l1 * t->l1 / k8;
        }
        sum += var / (t->s * t->s);
        double pv = s->pvar[i * s->ncfg + c];
        if (!isnan(pv)) {
            sum2 += pv / (t->s * t->s);
            n2++;
        }
    }
    F->sigma_pred = n ? sqrt(sum / (double)n) : NAN;
    F->sigma_sums = n2 ? sqrt(sum2 / (double)n2) : NAN;
    double sg = F->fit.status == DRIFT_FIT_OK ? F->fit.sigma : F->fit.sigma_hi; /* bounds when no fit */
    F->half = drift_phi_gap_at(sg, 0.25);
    F->p001 = drift_phi_gap_at(sg, 0.001);
done:
    free(gap);
    free(sv);
    free(lv);
    free(fl);
    return rc;
}

/* ---- the partial-sum model -------------------------------------------------------------------- */

typedef drift_flip_vv_t vv_t;

/* The variance a rounding of x to acc adds: ulp^2/12 = 4^(e-p+1)/12, e = max(floor(log2|x|), emin).
 * Built from the exponent bits (it runs K times per kernel per planted pair). */
static double rvar(double x, drift_format_t acc)
{
    const drift_format_info_t *fi = drift_format_info(acc);
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int e = (int)((b >> 52) & 0x7ff) - 1023; /* x is a normal double here, or 0 */
    if (x == 0 || e < fi->emin) e = fi->emin;
    int e2 = 2 * (e - fi->p + 1);
    uint64_t r = (uint64_t)(e2 + 1023) << 52; /* 2^e2: e2 >= 2 (-1074 - 52) never occurs for the lab formats */
    double q;
    memcpy(&q, &r, sizeof q);
    return q / 12;
}

static vv_t leaf(double p, drift_format_t acc) /* a product, rounded unless representable */
{
    double r = acc == DRIFT_FP32 ? (double)(float)p : drift_rne(p, acc); /* the cast is RNE to fp32 */
    return (vv_t){p, r == p ? 0 : rvar(p, acc)};
}

static vv_t add_vv(vv_t a, vv_t b, drift_format_t acc)
{
    double v = a.v + b.v;
    return (vv_t){v, a.var + b.var + rvar(v, acc)};
}

static vv_t chain(const double *p, size_t lo, size_t hi, size_t step, drift_format_t acc)
{
    if (lo >= hi) return (vv_t){0, 0};
    vv_t s = leaf(p[lo], acc);
    for (size_t i = lo + step; i < hi; i += step) {
        s.v += p[i];
        s.var += rvar(s.v, acc);
    }
    return s;
}

static vv_t pairwise_vv(const vv_t *x, size_t n, drift_format_t acc)
{
    if (n == 1) return x[0];
    size_t m = n / 2;
    return add_vv(pairwise_vv(x, m, acc), pairwise_vv(x + m, n - m, acc), acc);
}

static vv_t seq_vv(const vv_t *x, size_t n, drift_format_t acc)
{
    vv_t s = x[0];
    for (size_t i = 1; i < n; i++) s = add_vv(s, x[i], acc);
    return s;
}

/* The tensor-core model's variance: per block, the truncation of each term (uniform on a
 * grid of 2^(E-23-neab)) and the block's output rounding. */
static double tc_var(const drift_tc_params_t *tp, const double *p, size_t K, drift_format_t acc)
{
    double cv = 0, var = 0;
    for (size_t b0 = 0; b0 < K; b0 += (size_t)tp->block) {
        size_t b1 = b0 + (size_t)tp->block < K ? b0 + (size_t)tp->block : K;
        int E = cv != 0 ? ilogb(cv) : INT32_MIN, nt = cv != 0;
        double sum = cv;
        for (size_t i = b0; i < b1; i++) {
            if (p[i] == 0) continue;
            nt++;
            if (ilogb(p[i]) > E) E = ilogb(p[i]);
            sum += p[i];
        }
        if (nt) {
            if (E < tp->min_exp) E = tp->min_exp;
            double g = ldexp(1.0, E - 23 - tp->neab);
            var += nt * g * g / 12 + rvar(sum, acc);
        }
        cv = sum;
    }
    return var;
}

size_t drift_flip_model_scratch(size_t K, size_t wmax) { return 2 * (K + wmax + 64); }

double drift_flip_model_var(const drift_recipe_t *c, const double *p, size_t K, vv_t *tmp)
{
    double exact = 0, var = 0;
    for (size_t i = 0; i < K; i++) exact += p[i];
    drift_format_t acc = c->acc.acc;
    const drift_order_t *o = &c->order;
    drift_tc_params_t tp;
    if (c->exact) {
        return rvar(exact, c->out);
    }
    if (drift_order_tc_params(&tp, o, c->in) > 0) {
        var = tc_var(&tp, p, K, acc);
    } else {
        switch (o->kind) {
        case DRIFT_ORDER_PAIRWISE:
            for (size_t i = 0; i < K; i++) tmp[i] = leaf(p[i], acc);
            var = pairwise_vv(tmp, K, acc).var;
            break;
        case DRIFT_ORDER_BLOCKED:
        case DRIFT_ORDER_SPLITK: {
            size_t L = o->kind == DRIFT_ORDER_BLOCKED ? (size_t)o->param : ceil_div(K, (size_t)o->param);
            size_t P = ceil_div(K, L);
            for (size_t j = 0; j < P; j++) tmp[j] = chain(p, j * L, (j + 1) * L < K ? (j + 1) * L : K, 1, acc);
            var = (o->kind == DRIFT_ORDER_SPLITK && o->tree ? pairwise_vv(tmp, P, acc) : seq_vv(tmp, P, acc)).var;
            break;
        }
        case DRIFT_ORDER_WARP: {
            size_t W = (size_t)o->param;
            for (size_t i = 0; i < W; i++) tmp[i] = chain(p, i, K, W, acc);
            for (size_t off = W / 2; off >= 1; off /= 2) {
                for (size_t i = 0; i < W; i++) tmp[W + i] = add_vv(tmp[i], tmp[i ^ off], acc);
                for (size_t i = 0; i < W; i++) tmp[i] = tmp[W + i];
            }
            var = tmp[0].var;
            break;
        }
        case DRIFT_ORDER_KAHAN:
        case DRIFT_ORDER_NEUMAIER: var = rvar(exact, acc); break; /* compensated: about one rounding */
        default: /* seq, and rev/random as a chain (same count, another order) */
            var = chain(p, 0, K, 1, acc).var;
            break;
        }
    }
    if (c->out != acc) var += rvar(exact, c->out);
    return var;
}

/* ---- realistic heads and exact ties ------------------------------------------------------------ */

void drift_flipset_realistic(drift_flip_real_t *out, const drift_flipset_t *s, int c, const drift_flip_fit_t *F)
{
    long k = 0, a = 0, b = 0;
    double pred = 0, ev = 0;
    int ok = F->fit.status == DRIFT_FIT_OK;
    for (size_t i = 0; i < s->n; i++) {
        const drift_flip_trial_t *t = &s->t[i];
        k += s->flip[i * s->ncfg + c];
        ev += (double)s->neval[i * s->ncfg + c];
        a += t->rel < F->half;
        b += t->rel < F->p001;
        if (!t->tie && ok) pred += drift_phi(-t->rel / F->fit.sigma);
    }
    out->flips = k;
    out->rate = (double)k / (double)s->n;
    if (drift_wilson(&out->lo, &out->hi, k, (long)s->n, DRIFT_Z95))
        out->lo = out->hi = NAN; /* no trials: no interval */
    out->predicted = ok ? pred : NAN;
    out->eval_mean = ev / (double)s->n;
    out->below_half = a;
    out->below_p001 = b;
}

void drift_flipset_ties(drift_flip_ties_t *out, const drift_flipset_t *s, int c)
{
    for (size_t i = 0; i < s->n; i++) {
        out->confirmed += s->t[i].tie;
        out->distinguished += s->cgap[i * s->ncfg + c] != 0;
        out->picked_higher += s->pick[i * s->ncfg + c] == 1;
        out->flips += s->flip[i * s->ncfg + c];
    }
}
