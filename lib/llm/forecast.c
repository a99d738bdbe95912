/* forecast.c — the parting forecast (forecast.h): the law of the gap difference, the step and
 * text risks, and the scores that hold them against what happened. */
#include "forecast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "philox.h"
#include "stats.h"

const char *drift_delta_law_name(drift_delta_law_t law)
{
    return law == DRIFT_DELTA_GAUSS ? "gauss" : law == DRIFT_DELTA_LAPLACE ? "laplace" : "?";
}

/* log-density of x under the zero-mean law with parameter s (sd or scale) */
static double logpdf(drift_delta_law_t law, double s, double x)
{
    if (law == DRIFT_DELTA_GAUSS) return -0.5 * (x / s) * (x / s) - log(s) - 0.5 * log(2 * M_PI);
    return -fabs(x) / s - log(2 * s);
}

double drift_delta_loglik(const drift_delta_fit_t *f, drift_delta_law_t law, const double *delta, size_t n)
{
    double s = law == DRIFT_DELTA_GAUSS ? f->sigma : f->b, ll = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(delta[i]) || delta[i] == 0) continue;
        if (!(s > 0)) return NAN;
        ll += logpdf(law, s, delta[i]);
    }
    return ll;
}

int drift_delta_fit(drift_delta_fit_t *out, const double *delta, const unsigned char *cls, size_t n)
{
    if (!out || (n && !delta)) return DRIFT_EINVAL;
    drift_delta_fit_t f;
    memset(&f, 0, sizeof f);
    double s2 = 0, s1 = 0;
    long nz = 0;
    for (size_t i = 0; i < n; i++) {
        if (isinf(delta[i])) return DRIFT_EINVAL;
        int c = cls ? cls[i] : 0;
        if (c < 0 || c >= DRIFT_FORECAST_CLASSES) return DRIFT_EINVAL;
        f.steps[c]++;
        if (delta[i] == 0) continue;
        f.nonzero[c]++;
        if (isnan(delta[i])) continue; /* not 0, its value unseen: counts for pi only */
        nz++;
        s2 += delta[i] * delta[i], s1 += fabs(delta[i]);
    }
    for (int c = 0; c < DRIFT_FORECAST_CLASSES; c++)
        f.pi[c] = f.steps[c] ? (double)f.nonzero[c] / (double)f.steps[c] : 0;
    /* maximum likelihood of a zero-mean law: the root mean square (GAUSS), the mean |x| (LAPLACE) */
    f.sigma = nz ? sqrt(s2 / (double)nz) : 0;
    f.b = nz ? s1 / (double)nz : 0;
    f.loglik[DRIFT_DELTA_GAUSS] = drift_delta_loglik(&f, DRIFT_DELTA_GAUSS, delta, n);
    f.loglik[DRIFT_DELTA_LAPLACE] = drift_delta_loglik(&f, DRIFT_DELTA_LAPLACE, delta, n);
    f.law = nz && f.loglik[DRIFT_DELTA_LAPLACE] > f.loglik[DRIFT_DELTA_GAUSS] ? DRIFT_DELTA_LAPLACE : DRIFT_DELTA_GAUSS;
    *out = f;
    return 0;
}

double drift_forecast_step(const drift_delta_fit_t *f, int law, double gap, int cls)
{
    if (!(gap >= 0) || cls < 0 || cls >= DRIFT_FORECAST_CLASSES) return NAN;
    drift_delta_law_t l = law < 0 ? f->law : (drift_delta_law_t)law;
    double pi = f->pi[cls], s = l == DRIFT_DELTA_GAUSS ? f->sigma : f->b;
    if (pi == 0) return 0;
    if (!(s > 0)) return gap == 0 ? 0.5 * pi : 0; /* a point mass: only a tie can go either way */
    return pi * (l == DRIFT_DELTA_GAUSS ? drift_phi(-gap / s) : 0.5 * exp(-gap / s));
}

/* P(part) from per-step risks: steps 0 .. n-1, risk(t) from the callback */
typedef double (*step_risk_fn)(const void *ctx, double gap, int cls);

static int combine(
    drift_forecast_t *out, step_risk_fn risk, const void *ctx, const double *gap, const unsigned char *cls, int n)
{
    if (!out || n < 0 || (n && !gap)) return DRIFT_EINVAL;
    drift_forecast_t r = {0, -1, 0, NAN};
    double logq = 0; /* log P(no flip so far), summed with log1p: small risks keep their digits */
    for (int t = 0; t < n; t++) {
        double p = risk(ctx, gap[t], cls ? cls[t] : 0);
        if (isnan(p)) return DRIFT_EINVAL;
        logq += p < 1 ? log1p(-p) : -INFINITY;
        if (p > r.step_p) r.step_p = p, r.step = t, r.step_gap = gap[t];
    }
    r.p = logq < 0 ? -expm1(logq) : 0; /* never -0 */
    *out = r;
    return 0;
}

typedef struct {
    const drift_delta_fit_t *f;
    int law;
    const drift_delta_ecdf_t *e;
} risk_ctx_t;

static double law_risk(const void *ctx, double gap, int cls)
{
    const risk_ctx_t *c = ctx;
    return drift_forecast_step(c->f, c->law, gap, cls);
}

static double ecdf_risk(const void *ctx, double gap, int cls)
{
    const risk_ctx_t *c = ctx;
    if (cls < 0 || cls >= DRIFT_FORECAST_CLASSES) return NAN;
    double q = drift_delta_ecdf_tail(c->e, gap);
    return isnan(q) ? q : c->f->pi[cls] * q;
}

int drift_forecast_text(
    drift_forecast_t *out, const drift_delta_fit_t *f, int law, const double *gap, const unsigned char *cls, int n)
{
    if (!f) return DRIFT_EINVAL;
    risk_ctx_t c = {f, law, NULL};
    return combine(out, law_risk, &c, gap, cls, n);
}

int drift_forecast_text_ecdf(drift_forecast_t *out, const drift_delta_fit_t *f, const drift_delta_ecdf_t *e,
    const double *gap, const unsigned char *cls, int n)
{
    if (!f || !e) return DRIFT_EINVAL;
    risk_ctx_t c = {f, -1, e};
    return combine(out, ecdf_risk, &c, gap, cls, n);
}

int drift_delta_ecdf(drift_delta_ecdf_t *e, const double *delta, size_t n)
{
    if (!e || (n && !delta)) return DRIFT_EINVAL;
    e->absd = NULL, e->n = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += isfinite(delta[i]) && delta[i] != 0;
    if (!k) return 0;
    e->absd = malloc(k * sizeof *e->absd);
    if (!e->absd) return DRIFT_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (isfinite(delta[i]) && delta[i] != 0) e->absd[e->n++] = fabs(delta[i]);
    qsort(e->absd, e->n, sizeof *e->absd, drift_cmp_double);
    return 0;
}

void drift_delta_ecdf_free(drift_delta_ecdf_t *e)
{
    if (!e) return;
    free(e->absd);
    e->absd = NULL, e->n = 0;
}

/* the first index with absd[i] > x (strict: upper) or >= x */
static size_t bound(const double *a, size_t n, double x, int upper)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (upper ? a[mid] <= x : a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

double drift_delta_ecdf_tail(const drift_delta_ecdf_t *e, double d)
{
    if (!(d >= 0)) return NAN;
    if (d == 0) return 0.5; /* a tie: either way, whatever the law */
    if (!e->n) return 0;
    size_t ge = e->n - bound(e->absd, e->n, d, 0), gt = e->n - bound(e->absd, e->n, d, 1);
    return ((double)gt + 0.5 * (double)(ge - gt)) / (2.0 * (double)e->n);
}

static double clamp_p(double p)
{
    return p < DRIFT_FORECAST_PMIN ? DRIFT_FORECAST_PMIN : p > 1 - DRIFT_FORECAST_PMIN ? 1 - DRIFT_FORECAST_PMIN : p;
}

double drift_brier(const double *p, const unsigned char *y, size_t n)
{
    if (!n) return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (p[i] - y[i]) * (p[i] - y[i]);
    return s / (double)n;
}

double drift_log_loss(const double *p, const unsigned char *y, size_t n)
{
    if (!n) return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++) s -= y[i] ? log(clamp_p(p[i])) : log1p(-clamp_p(p[i]));
    return s / (double)n;
}

int drift_brier_skill(double *skill, double *lo, double *hi, const double *p, const double *r, const unsigned char *y,
    size_t n, uint64_t seed, int reps, double level)
{
    if (!skill || !lo || !hi || !p || !r || !y || !n || reps < 1 || !(level > 0 && level < 1)) return DRIFT_EINVAL;
    double bp = drift_brier(p, y, n), br = drift_brier(r, y, n);
    *skill = br > 0 ? 1 - bp / br : NAN;
    double *s = malloc((size_t)reps * sizeof *s);
    if (!s) return DRIFT_ENOMEM;
    drift_stream_t st;
    drift_stream_init(&st, seed, drift_fnv1a32("forecast.bootstrap"), 0, 0);
    int m = 0;
    for (int k = 0; k < reps; k++) {
        double ep = 0, er = 0;
        for (size_t j = 0; j < n; j++) {
            size_t i = (size_t)(((uint64_t)drift_stream_u32(&st) * (uint64_t)n) >> 32);
            ep += (p[i] - y[i]) * (p[i] - y[i]), er += (r[i] - y[i]) * (r[i] - y[i]);
        }
        if (er > 0) s[m++] = 1 - ep / er;
    }
    *lo = *hi = NAN;
    if (2 * m >= reps) {
        qsort(s, (size_t)m, sizeof *s, drift_cmp_double);
        double a = (1 - level) / 2;
        int il = (int)floor(a * (m - 1)), ih = (int)ceil((1 - a) * (m - 1));
        *lo = s[il], *hi = s[ih];
    }
    free(s);
    return 0;
}

drift_gap_threshold_t drift_gap_threshold_fit(const double *mg, const unsigned char *y, int n)
{
    drift_gap_threshold_t best = {INFINITY, 0, 0};
    double bb = INFINITY;
    for (int c = 0; c <= n; c++) {
        double tau = c < n ? mg[c] : INFINITY;
        long kb = 0, nb = 0, ka = 0, na = 0;
        for (int i = 0; i < n; i++)
            if (mg[i] < tau)
                nb++, kb += y[i];
            else
                na++, ka += y[i];
        double rb = nb ? (double)kb / (double)nb : 0, ra = na ? (double)ka / (double)na : 0, s = 0;
        for (int i = 0; i < n; i++) {
            double p = mg[i] < tau ? rb : ra;
            s += (p - y[i]) * (p - y[i]);
        }
        if (s < bb) bb = s, best = (drift_gap_threshold_t){tau, rb, ra};
    }
    return best;
}

int drift_reliability(
    drift_rel_bin_t *out, const double *edges, int nedges, const double *p, const unsigned char *y, size_t n)
{
    int nb = 0;
    for (int e = 0; e + 1 < nedges; e++) {
        long c = 0, k = 0;
        double sp = 0;
        for (size_t i = 0; i < n; i++)
            if (p[i] >= edges[e] && p[i] < edges[e + 1]) c++, k += y[i], sp += p[i];
        if (!c) continue;
        drift_rel_bin_t *b = &out[nb++];
        b->lo = edges[e], b->hi = edges[e + 1], b->n = c, b->k = k, b->mean_p = sp / (double)c;
        b->rate = (double)k / (double)c;
        if (drift_wilson(&b->wilson_lo, &b->wilson_hi, k, c, 1.959963984540054)) b->wilson_lo = b->wilson_hi = NAN;
    }
    return nb;
}

int drift_tie_rule_acts(const double *top1, const double *top2, const int *tok, const int *runner, int n, double eps)
{
    for (int t = 0; t < n; t++)
        if (top1[t] - top2[t] < eps && runner[t] < tok[t]) return 1;
    return 0;
}

double drift_tie_step_risk(const drift_delta_fit_t *f, double gap, int runner_lower, double eps)
{
    return drift_forecast_step(f, -1, runner_lower ? fabs(gap - eps) : gap + eps, 0);
}

int drift_tie_parting_cause(double gap_a, int top_a, int runner_a, double gap_b, int top_b, int runner_b, double eps)
{
    const int la = gap_a < eps, lb = gap_b < eps;
    const int same = (top_a == top_b && runner_a == runner_b) || (top_a == runner_b && runner_a == top_b);
    return la != lb ? DRIFT_TIE_BOUNDARY : la && !same ? DRIFT_TIE_OTHER_PAIR : DRIFT_TIE_CROSSED;
}
