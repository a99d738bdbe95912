/* gen_logits.c — LM head inputs: hidden states, weight rows, planted gaps and ties.
 * What each function promises is in gen_logits.h; comments here say how and why. */
#include "gen_logits.h"
#include "drift.h"
#include "exact.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- generators ------------------------------------------------------------------------------ */

/* RNE to fp32 by the hardware conversion (correctly rounded, with gradual underflow and overflow
 * to inf: the same function as drift_rne(x, DRIFT_FP32), without the generic path's cost). */
static double fp32(double x) { return (double)(float)x; }

int drift_hidden_model(drift_hidden_model_t *m, size_t K, drift_stream_t *s)
{
    if (!m || !s || K < 2) return DRIFT_EINVAL;
    memset(m, 0, sizeof *m);
    m->K = K;
    size_t n = K / 512;
    if (n < 1) n = 1;
    if (n > DRIFT_MAX_OUTLIERS) n = DRIFT_MAX_OUTLIERS;
    m->n = (int)n;
    /* Distinct channels by rejection, then sorted so that the model does not depend on the
     * order they were drawn in. */
    for (int i = 0; i < m->n; i++) {
        size_t c;
        int dup;
        do {
            c = drift_stream_below(s, (uint32_t)(K > UINT32_MAX ? UINT32_MAX : K));
            dup = 0;
            for (int j = 0; j < i; j++) dup |= m->channel[j] == c;
        } while (dup);
        m->channel[i] = c;
        double mag = 20 + 80 * drift_stream_uniform(s);
        m->scale[i] = drift_stream_u32(s) & 1 ? -mag : mag;
    }
    for (int i = 1; i < m->n; i++)
        for (int j = i; j > 0 && m->channel[j - 1] > m->channel[j]; j--) {
            size_t tc = m->channel[j];
            m->channel[j] = m->channel[j - 1];
            m->channel[j - 1] = tc;
            double ts = m->scale[j];
            m->scale[j] = m->scale[j - 1];
            m->scale[j - 1] = ts;
        }
    return DRIFT_OK;
}

/* n standard normals: Box-Muller with both branches (r cos t, r sin t) from one pair of uniforms,
 * half the Philox blocks and logarithms of drift_stream_normal (which keeps one branch so that its
 * stream position is simple); the position here is simple too: 4 words per pair. */
static void normals(double *x, size_t n, drift_stream_t *s)
{
    for (size_t i = 0; i < n; i += 2) {
        double u1 = drift_stream_uniform_pos(s), u2 = drift_stream_uniform(s);
        double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586 * u2;
        x[i] = r * cos(t);
        if (i + 1 < n) x[i + 1] = r * sin(t);
    }
}

void drift_gen_hidden(double *h, const drift_hidden_model_t *m, drift_stream_t *s)
{
    normals(h, m->K, s);
    for (int j = 0; j < m->n; j++) h[m->channel[j]] = m->scale[j] * (1 + 0.1 * drift_stream_normal(s));
    for (size_t i = 0; i < m->K; i++) h[i] = fp32(h[i]);
}

void drift_gen_weight_row(double *w, size_t K, drift_stream_t *s)
{
    double sd = 1 / sqrt((double)K);
    normals(w, K, s);
    for (size_t i = 0; i < K; i++) w[i] = fp32(sd * w[i]);
}

void drift_gen_row_with_logit(double *w, const double *h, size_t K, double logit, drift_stream_t *s)
{
    double sd = 1 / sqrt((double)K), hg = 0, hh = 0;
    normals(w, K, s);
    for (size_t i = 0; i < K; i++) {
        w[i] *= sd;
        hg += h[i] * w[i];
        hh += h[i] * h[i];
    }
    double c = (logit - hg) / hh;
    for (size_t i = 0; i < K; i++) w[i] = fp32(w[i] + c * h[i]);
}

int drift_gen_head(
    double *Wd, float *Wf, double *l1, double *l2, size_t V, size_t K, uint64_t seed, uint32_t experiment)
{
    if (V == 0 || K == 0) return DRIFT_EINVAL;
    int err = 0;
    DRIFT_OMP("omp parallel reduction(|:err)")
    {
        double *w = malloc(K * sizeof *w);
        if (!w) err |= 1;
        DRIFT_OMP("omp for schedule(dynamic, 16)")
        for (size_t v = 0; v < V; v++) {
            if (!w) continue;
            drift_stream_t s;
            drift_stream_init(&s, seed, experiment, (uint32_t)K, (uint32_t)v);
            drift_gen_weight_row(w, K, &s);
            double a = 0, b = 0;
            for (size_t i = 0; i < K; i++) {
                if (Wd) Wd[v * K + i] = w[i];
                if (Wf) Wf[v * K + i] = (float)w[i];
                a += fabs(w[i]);
                b += w[i] * w[i];
            }
            if (l1) l1[v] = a * (1 + 1e-9);
            if (l2) l2[v] = sqrt(b * (1 + 1e-9));
        }
        free(w);
    }
    return err ? DRIFT_ENOMEM : DRIFT_OK;
}

double drift_logit_scale(const double *h, size_t K)
{
    double ss = 0;
    for (size_t i = 0; i < K; i++) ss += h[i] * h[i];
    return sqrt(ss / (double)K);
}

double drift_gen_top_logit(size_t V, drift_stream_t *s)
{
    double u = drift_stream_uniform_pos(s);
    double q = -expm1(log(u) / (double)V); /* 1 - U^(1/V), the upper-tail probability */
    return -drift_phi_inv(q);
}

/* ---- planted gaps and ties --------------------------------------------------------------------- */

/* Exact h.w1 - h.w2 into a fresh superaccumulator. */
static void gap_acc(drift_xacc_t *a, const double *h, const double *w1, const double *w2, size_t K)
{
    drift_xacc_init(a);
    for (size_t i = 0; i < K; i++) {
        drift_xacc_add_prod(a, h[i], w1[i]);
        drift_xacc_add_prod(a, -h[i], w2[i]);
    }
}

/* (exact gap) - target, rounded once to double. */
static double residual(const drift_xacc_t *a, double target)
{
    drift_xacc_t t = *a;
    drift_xacc_add(&t, -target);
    return drift_xacc_round(&t, DRIFT_FP64, DRIFT_RNE);
}

/* Setting w2[j] from old to new changes the exact gap by -h_j (new - old): both products are
 * added exactly. */
static void set_w2(drift_xacc_t *a, double *w2, const double *h, size_t j, double v)
{
    drift_xacc_add_prod(a, h[j], w2[j]);
    drift_xacc_add_prod(a, -h[j], v);
    w2[j] = v;
}

int drift_plant_gap(
    drift_plant_t *out, double *w2, const double *h, const double *w1, size_t K, double target, drift_format_t f)
{
    if (!out || !w2 || !h || !w1 || K < DRIFT_PLANT_FINE + 2 || !(target >= 0) || !isfinite(target))
        return DRIFT_EINVAL;
    memset(out, 0, sizeof *out);
    out->target = target;
    /* Reserved fine channels: the smallest nonzero |h| (selection, ties to the lower index). */
    size_t fine[DRIFT_PLANT_FINE];
    int nfine = 0;
    for (int r = 0; r < DRIFT_PLANT_FINE; r++) {
        size_t best = K;
        for (size_t i = 0; i < K; i++) {
            if (h[i] == 0) continue;
            int used = 0;
            for (int q = 0; q < nfine; q++) used |= fine[q] == i;
            if (used) continue;
            if (best == K || fabs(h[i]) < fabs(h[best])) best = i;
        }
        if (best == K) break;
        fine[nfine++] = best;
    }
    size_t coarse = K;
    for (size_t i = 0; i < K; i++) {
        int used = 0;
        for (int q = 0; q < nfine; q++) used |= fine[q] == i;
        if (!used && h[i] != 0 && (coarse == K || fabs(h[i]) > fabs(h[coarse]))) coarse = i;
    }
    if (coarse == K) return DRIFT_EINVAL;

    drift_xacc_t a;
    for (int q = 0; q < nfine; q++) w2[fine[q]] = 0;
    gap_acc(&a, h, w1, w2, K);
    double tol = DRIFT_PLANT_TOL * target;
    /* gap - target = r; raising w2_j by r/h_j lowers the gap by r. */
    double r = residual(&a, target);
    if (fabs(r) > tol) {
        set_w2(&a, w2, h, coarse, drift_rne(w2[coarse] + r / h[coarse], f));
        out->steps++;
        r = residual(&a, target);
    }
    int usedf[DRIFT_PLANT_FINE] = {0};
    while (fabs(r) > tol) {
        int pick = -1;
        double pred = fabs(r);
        for (int q = 0; q < nfine; q++) {
            if (usedf[q]) continue;
            double v = drift_rne(r / h[fine[q]], f);
            double e = fabs(r - h[fine[q]] * v); /* a prediction only; the real residual is exact */
            if (e < pred) {
                pred = e;
                pick = q;
            }
        }
        if (pick < 0) break; /* no channel improves: the format's resolution is reached */
        usedf[pick] = 1;
        set_w2(&a, w2, h, fine[pick], drift_rne(r / h[fine[pick]], f));
        out->steps++;
        r = residual(&a, target);
    }
    out->gap = drift_xacc_round(&a, DRIFT_FP64, DRIFT_RNE);
    out->reached = fabs(r) <= tol;
    int rc = drift_exact_dot(&out->l1, h, w1, K, DRIFT_FP64, DRIFT_RNE);
    if (!rc) rc = drift_exact_dot(&out->l2, h, w2, K, DRIFT_FP64, DRIFT_RNE);
    return rc;
}

int drift_plant_tie(double *h, double *w2, const double *w1, size_t K, int npairs, drift_stream_t *s)
{
    if (!h || !w2 || !w1 || !s || npairs < 0 || (size_t)2 * (size_t)npairs > K) return DRIFT_EINVAL;
    memcpy(w2, w1, K * sizeof *w2);
    unsigned char *used = calloc(K, 1);
    if (!used) return DRIFT_ENOMEM;
    uint32_t n32 = (uint32_t)(K > UINT32_MAX ? UINT32_MAX : K);
    for (int p = 0; p < npairs; p++) {
        size_t a, b;
        do a = drift_stream_below(s, n32);
        while (used[a]);
        used[a] = 1;
        do b = drift_stream_below(s, n32);
        while (used[b]);
        used[b] = 1;
        h[b] = h[a];
        w2[a] = w1[b];
        w2[b] = w1[a];
    }
    free(used);
    return DRIFT_OK;
}

int drift_gen_planted_pair(double *h, double *w1, double *w2, double *scale, int *swap, const drift_hidden_model_t *m,
    size_t V, double rel, int tie, drift_stream_t *s)
{
    size_t K = m->K;
    drift_gen_hidden(h, m, s);
    double sc = drift_logit_scale(h, K);
    double L1 = sc * drift_gen_top_logit(V, s);
    drift_gen_row_with_logit(w1, h, K, L1, s);
    int rc = DRIFT_OK;
    if (tie) {
        rc = drift_plant_tie(h, w2, w1, K, DRIFT_PLANT_TIE_PAIRS, s);
        sc = drift_logit_scale(h, K);
    } else {
        drift_gen_row_with_logit(w2, h, K, L1 - rel * sc, s);
    }
    *swap = !tie && (drift_stream_u32(s) & 1);
    *scale = sc;
    return rc;
}

int drift_plant_pair_in(drift_plant_t *pt, double *hf, double *W2, const double *h, const double *w1, const double *w2,
    size_t K, double target, int swap, int tie, drift_format_t f)
{
    double *a = W2 + (swap ? K : 0), *b = W2 + (swap ? 0 : K);
    for (size_t q = 0; q < K; q++) { /* fp32: the master values already are */
        hf[q] = f == DRIFT_FP32 ? h[q] : drift_rne(h[q], f);
        a[q] = f == DRIFT_FP32 ? w1[q] : drift_rne(w1[q], f);
        b[q] = f == DRIFT_FP32 ? w2[q] : drift_rne(w2[q], f);
    }
    memset(pt, 0, sizeof *pt);
    return tie ? DRIFT_OK : drift_plant_gap(pt, b, hf, a, K, target, f);
}
