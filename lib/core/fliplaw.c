/* fliplaw.c — the three flip laws, their maximum-likelihood fits and the model choice
 * (derivations in fliplaw.h). */
#include "fliplaw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"

static const char *const NAMES[DRIFT_FLIPLAW_N] = {"gauss", "triangle", "conv"};

const char *drift_fliplaw_name(drift_fliplaw_t law) { return (unsigned)law < DRIFT_FLIPLAW_N ? NAMES[law] : "?"; }

int drift_fliplaw_parse(drift_fliplaw_t *out, const char *name)
{
    if (!out || !name) return DRIFT_EINVAL;
    for (int i = 0; i < DRIFT_FLIPLAW_N; i++)
        if (!strcmp(name, NAMES[i])) {
            *out = (drift_fliplaw_t)i;
            return DRIFT_OK;
        }
    return DRIFT_EINVAL;
}

double drift_fliplaw_psi(double z)
{
    /* Right of -20 the direct form loses at most a factor z^2 ~ 400 to cancellation (relative
     * error ~ 1e-13); further left the asymptotic series phi(z)/z^2 (1 - 3/z^2 + 15/z^4 -
     * 105/z^6) has relative error below 945/z^8 < 4e-8 and no cancellation. */
    if (z >= -20) return z * drift_phi(z) + drift_phi_pdf(z);
    double r = 1.0 / (z * z);
    return drift_phi_pdf(z) * r * (1 - 3 * r + 15 * r * r - 105 * r * r * r);
}

static double triangle(double gap, double q) { return gap >= q ? 0.0 : 0.5 * (1.0 - gap / q); }

double drift_fliplaw_p(drift_fliplaw_t law, double gap, double sigma, double q)
{
    if (!(gap >= 0) || isnan(sigma) || isnan(q)) return NAN;
    switch (law) {
    case DRIFT_FLIPLAW_GAUSS:
        if (!(sigma >= 0)) return NAN;
        if (sigma == 0) return gap > 0 ? 0.0 : 0.5;
        return drift_phi(-gap / sigma);
    case DRIFT_FLIPLAW_TRIANGLE:
        if (!(q >= 0)) return NAN;
        if (q == 0) return gap > 0 ? 0.0 : 0.5;
        return triangle(gap, q);
    case DRIFT_FLIPLAW_CONV:
        if (!(sigma >= 0) || !(q >= 0)) return NAN;
        if (sigma == 0) return drift_fliplaw_p(DRIFT_FLIPLAW_TRIANGLE, gap, 0, q);
        if (q == 0) return drift_phi(-gap / sigma);
        if (q < 1e-4 * sigma)
            return drift_phi(-gap / sigma); /* the ramp is a step at sigma's scale: the
                                                                  model error ~ (q/sigma)^2 < 1e-8, less than
                                                                  the Psi difference would lose (~ 1e-16 sigma/q) */
        {
            double p = sigma / (2 * q) * (drift_fliplaw_psi((q - gap) / sigma) - drift_fliplaw_psi((-q - gap) / sigma));
            return p < 0 ? 0.0 : p > 1 ? 1.0 : p;
        }
    default: return NAN;
    }
}

double drift_fliplaw_straddle_len(double gap, double qlo, double qhi)
{
    if (!(gap >= 0) || !(qlo > 0) || !(qhi > 0)) return NAN;
    double L = fmin(gap, qlo / 2) + fmin(0.0, qhi / 2 - gap);
    return L > 0 ? L : 0.0;
}

double drift_fliplaw_gap_at(drift_fliplaw_t law, double sigma, double q, double p)
{
    if (!(p > 0 && p < 0.5)) return NAN;
    switch (law) {
    case DRIFT_FLIPLAW_GAUSS: return sigma >= 0 ? -sigma * drift_phi_inv(p) : NAN;
    case DRIFT_FLIPLAW_TRIANGLE: return q >= 0 ? q * (1 - 2 * p) : NAN;
    case DRIFT_FLIPLAW_CONV: {
        if (!(sigma >= 0) || !(q >= 0)) return NAN;
        double lo = 0, hi = q + 40 * sigma + 1e-300; /* P(hi) < Phi(-40): far below any p */
        for (int it = 0; it < 200; it++) {
            double m = 0.5 * (lo + hi);
            if (drift_fliplaw_p(law, m, sigma, q) > p)
                lo = m;
            else
                hi = m;
        }
        return 0.5 * (lo + hi);
    }
    default: return NAN;
    }
}

/* ---- fits ---------------------------------------------------------------------------------- */

static int usable(drift_fliplaw_t law, double g, const double *q, size_t i)
{
    if (!(g > 0) || !isfinite(g)) return 0;
    if (law == DRIFT_FLIPLAW_GAUSS) return 1;
    return q && q[i] > 0 && isfinite(q[i]);
}

static double p_of(drift_fliplaw_t law, double theta, double gap, const double *q, size_t i)
{
    switch (law) {
    case DRIFT_FLIPLAW_GAUSS: return drift_fliplaw_p(law, gap, theta, 0);
    case DRIFT_FLIPLAW_TRIANGLE: return drift_fliplaw_p(law, gap, 0, theta * q[i]);
    default: return drift_fliplaw_p(law, gap, theta, q[i]);
    }
}

static double log_p(drift_fliplaw_t law, double theta, double gap, const double *q, size_t i, int flip)
{
    if (law == DRIFT_FLIPLAW_GAUSS) return flip ? drift_log_phi(-gap / theta) : drift_log_phi(gap / theta);
    double p = p_of(law, theta, gap, q, i);
    return flip ? log(p) : log1p(-p);
}

double drift_fliplaw_loglik(
    drift_fliplaw_t law, double theta, const double *gap, const double *q, const unsigned char *flip, size_t n)
{
    double l = 0;
    for (size_t i = 0; i < n; i++) {
        if (!usable(law, gap[i], q, i)) continue;
        l += log_p(law, theta, gap[i], q, i, flip[i] != 0);
    }
    return l;
}

#define LR_DROP 1.9207294103470618 /* chi^2_1(0.95) / 2: the 95% profile-likelihood drop */

typedef struct {
    drift_fliplaw_t law;
    const double *gap, *q;
    const unsigned char *flip;
    size_t n;
} problem_t;

static double L(const problem_t *P, double t)
{
    double l = drift_fliplaw_loglik(P->law, exp(t), P->gap, P->q, P->flip, P->n);
    return isnan(l) ? -INFINITY : l;
}

/* Bisection on t for L(t) = target, L(a) and L(b) on opposite sides. */
static double solve(const problem_t *P, double a, double b, double target)
{
    int above_a = L(P, a) >= target;
    for (int it = 0; it < 200 && fabs(b - a) > 1e-8 * fmax(1.0, fabs(a)); it++) { /* interval ends to 1e-8 */
        double m = 0.5 * (a + b);
        if ((L(P, m) >= target) == above_a)
            a = m;
        else
            b = m;
    }
    return 0.5 * (a + b);
}

int drift_fliplaw_fit(drift_fliplaw_fit_t *out, drift_fliplaw_t law, const double *gap, const double *q,
    const unsigned char *flip, size_t n, const drift_logbins_t *bins)
{
    if (!out || (unsigned)law >= DRIFT_FLIPLAW_N || (n && (!gap || !flip))) return DRIFT_EINVAL;
    if (law != DRIFT_FLIPLAW_GAUSS && n && !q) return DRIFT_EINVAL;
    memset(out, 0, sizeof *out);
    out->law = law;
    out->theta = out->lo = out->hi = out->loglik = out->g2 = out->p_value = NAN;
    /* The scale of theta: the gaps themselves (sigma) or the gaps in units of q (kappa). */
    double smin = INFINITY, smax = 0;
    for (size_t i = 0; i < n; i++) {
        if (!usable(law, gap[i], q, i)) continue;
        out->n++;
        out->k += flip[i] != 0;
        double s = law == DRIFT_FLIPLAW_TRIANGLE ? gap[i] / q[i] : gap[i];
        smin = fmin(smin, s);
        smax = fmax(smax, s);
        if (law == DRIFT_FLIPLAW_CONV) smax = fmax(smax, q[i]);
    }
    if (out->n == 0) {
        out->status = DRIFT_FIT_EMPTY;
        return DRIFT_OK;
    }
    if (out->k == out->n) {
        out->status = DRIFT_FIT_ALL_FLIPS;
        out->theta = out->hi = INFINITY;
        out->loglik = (double)out->n * log(0.5);
        return DRIFT_OK;
    }
    problem_t P = {law, gap, q, flip, n};
    /* Scan t = log theta in steps of 1/2 over a range wide enough for an interior maximum
     * (flip rates between the laws' values at e^8 and e^-8 times the extreme gaps), then golden
     * section around the best point. Unimodality: GAUSS and TRIANGLE are concave in 1/theta
     * (probit; log of affine pieces capped at 0); CONV is checked by the scan. */
    const double STEP = 0.5;
    double t0 = log(smin) - 8, t1 = log(smax) + 8;
    int ng = (int)ceil((t1 - t0) / STEP) + 1;
    int best = 0;
    double lbest = -INFINITY;
    for (int i = 0; i < ng; i++) {
        double l = L(&P, t0 + i * STEP);
        if (l > lbest) lbest = l, best = i;
    }
    double tlast = t0 + (ng - 1) * STEP;
    if (out->k == 0) {
        out->status = DRIFT_FIT_NO_FLIPS;
        out->theta = out->lo = 0;
        out->loglik = 0;
        double target = -LR_DROP;
        out->hi = L(&P, t0) < target ? exp(t0) : L(&P, tlast) >= target ? INFINITY : exp(solve(&P, t0, tlast, target));
    } else {
        double a = t0 + STEP * (best > 0 ? best - 1 : 0), b = t0 + STEP * (best < ng - 1 ? best + 1 : ng - 1);
        const double R = 0.6180339887498949;
        double c = b - R * (b - a), d = a + R * (b - a), lc = L(&P, c), ld = L(&P, d);
        while (b - a > 1e-7) { /* theta to 1e-7 relative: far inside its interval */
            if (lc >= ld) {
                b = d, d = c, ld = lc, c = b - R * (b - a), lc = L(&P, c);
            } else {
                a = c, c = d, lc = ld, d = a + R * (b - a), ld = L(&P, d);
            }
        }
        double th = 0.5 * (a + b);
        out->status = best == 0 ? DRIFT_FIT_SEPARATED : DRIFT_FIT_OK;
        out->theta = exp(th);
        out->loglik = L(&P, th);
        double target = out->loglik - LR_DROP;
        out->lo = L(&P, t0) >= target ? 0 : exp(solve(&P, t0, th, target));
        out->hi = L(&P, tlast) >= target ? INFINITY : exp(solve(&P, th, tlast, target));
    }
    if (!bins) return DRIFT_OK;

    /* Grouped deviance; adjacent bins pooled in gap order until each group expects at least
     * DRIFT_FIT_MIN_EXPECTED flips and non-flips (as drift_phi_fit, stats.h). */
    int nb = bins->nbins;
    double O[DRIFT_BINS_MAX], E[DRIFT_BINS_MAX], N[DRIFT_BINS_MAX];
    for (int j = 0; j < nb; j++) O[j] = E[j] = N[j] = 0;
    for (size_t i = 0; i < n; i++) {
        if (!usable(law, gap[i], q, i)) continue;
        int j = drift_logbins_find(bins, gap[i]);
        if (j < 0) continue;
        N[j] += 1;
        O[j] += flip[i] != 0;
        E[j] += out->theta > 0 ? p_of(law, out->theta, gap[i], q, i) : 0;
    }
    double gO[DRIFT_BINS_MAX], gE[DRIFT_BINS_MAX], gN[DRIFT_BINS_MAX];
    int g = 0;
    double aO = 0, aE = 0, aN = 0;
    for (int j = 0; j < nb; j++) {
        aO += O[j], aE += E[j], aN += N[j];
        if (aE >= DRIFT_FIT_MIN_EXPECTED && aN - aE >= DRIFT_FIT_MIN_EXPECTED) {
            gO[g] = aO, gE[g] = aE, gN[g] = aN, g++;
            aO = aE = aN = 0;
        }
    }
    if (aN > 0) {
        if (g > 0)
            gO[g - 1] += aO, gE[g - 1] += aE, gN[g - 1] += aN;
        else
            gO[g] = aO, gE[g] = aE, gN[g] = aN, g++;
    }
    double G = 0;
    for (int j = 0; j < g; j++) {
        double o1 = gO[j], e1 = gE[j], o0 = gN[j] - gO[j], e0 = gN[j] - gE[j];
        if (o1 > 0) G += 2 * o1 * log(o1 / e1);
        if (o0 > 0) G += 2 * o0 * log(o0 / e0);
    }
    out->groups = g;
    out->df = g > 0 ? g - 1 : 0;
    out->g2 = G;
    out->p_value = out->df > 0 ? drift_chi2_sf(G, out->df) : NAN;
    return DRIFT_OK;
}

/* ---- model choice ----------------------------------------------------------------------------- */

/* KL(Bern(a) || Bern(b)), with b kept in [1e-12, 1 - 1e-12]: a law that gives an outcome
 * probability 0 (the triangle beyond kappa q) would make the evidence infinite, yet a fitted
 * kappa always covers the flips seen, so the cap keeps the power finite and comparable. */
static double kl_bern(double a, double b)
{
    b = b < 1e-12 ? 1e-12 : b > 1 - 1e-12 ? 1 - 1e-12 : b;
    double r = 0;
    if (a > 0) r += b > 0 ? a * log(a / b) : INFINITY;
    if (a < 1) r += b < 1 ? (1 - a) * log((1 - a) / (1 - b)) : INFINITY;
    return r;
}

int drift_fliplaw_choose(drift_fliplaw_choice_t *out, const drift_fliplaw_fit_t *A, const drift_fliplaw_fit_t *B,
    const double *gap, const double *q, const unsigned char *flip, size_t n)
{
    if (!out || !A || !B || (n && (!gap || !flip))) return DRIFT_EINVAL;
    memset(out, 0, sizeof *out);
    out->dloglik = A->loglik - B->loglik;
    for (size_t i = 0; i < n; i++) {
        if (!usable(A->law, gap[i], q, i) || !usable(B->law, gap[i], q, i)) continue;
        double pa = isfinite(A->theta) ? p_of(A->law, A->theta, gap[i], q, i) : 0.5;
        double pb = isfinite(B->theta) ? p_of(B->law, B->theta, gap[i], q, i) : 0.5;
        out->pairs++;
        out->power_a += kl_bern(pa, pb);
        out->power_b += kl_bern(pb, pa);
        if ((pa > 1e-3 && pa < 1 - 1e-3) || (pb > 1e-3 && pb < 1 - 1e-3)) out->informative++;
    }
    double favoured_power = out->dloglik >= 0 ? out->power_a : out->power_b;
    out->decided = fabs(out->dloglik) >= DRIFT_FLIPLAW_DECIDE && favoured_power >= DRIFT_FLIPLAW_DECIDE;
    return DRIFT_OK;
}
