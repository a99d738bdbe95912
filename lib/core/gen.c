/* gen.c — input distributions. Each value comes from the caller's Philox stream, drawn
 * in index order, so a vector is a pure function of (seed, experiment, point, trial).
 *
 *   uniform  x_i = drift_stream_uniform: k 2^-53, k uniform in [0, 2^53). One draw pair
 *            (two 32-bit words) per value.
 *   normal   x_i = drift_stream_normal (Box–Muller, cosine branch), mean 0, variance 1.
 *   illcond  Sum with massive cancellation that SURVIVES rounding to any lab format:
 *            P = floor(n/4) values v_j ~ normal(0,1) each appear twice, as v_j and -v_j;
 *            the remaining n - 2P slots hold small positive "signal" values
 *            2^-21 (1 + w), w uniform in [0, 1). The vector is then shuffled (Fisher–
 *            Yates, i = n-1 .. 1, j = below(i+1), drawn after all values).
 *            Why not "v and -v (1 + tiny)" (the header's first idea): rounding to fp16 or
 *            bf16 erases a relative perturbation below 2^-11, the pair then cancels
 *            exactly and the conditioning depends on the format. Negation commutes with
 *            every symmetric rounding, so here the large pairs cancel exactly in the
 *            exact sum of the ROUNDED inputs too, and the exact sum is the sum of the
 *            signal (about 7.2e-7 per signal value; in fp16 the signal values are
 *            subnormal, 8..16 quanta of 2^-24, but non-zero). Condition number
 *            sum|x| / |sum x| ~ (n/2 * E|v|) / (n/2 * 1.5 * 2^-21) = 0.80 / 7.15e-7
 *            ~ 1.1e6 for large n, independent of n (so error-vs-n curves compare
 *            across n).
 *   llm      LLM-like activations, one hidden-state vector over channels: each channel
 *            independently is an outlier channel with probability 1/200 (0.5%, the
 *            order of the ~0.1-1% of feature dimensions LLM.int8 (Dettmers et al. 2022)
 *            reports as systematic outliers), of magnitude log-uniform in [20, 100] with
 *            a random sign (LLM.int8 reports outlier magnitudes up to ~20x the typical
 *            |x|, Sun et al. 2024 "massive activations" far larger; 20..100 sits between
 *            them while staying inside fp16 and fp8e5m2 ranges); other channels are
 *            normal(0, 1). The heavy tail is the outliers: they hold about a quarter of
 *            sum|x| (0.005 * 80/ln 5 = 0.25 against 0.995 * 0.80) while being 0.5% of
 *            the entries.
 *            Draws per channel: one uniform (outlier?), then either one normal, or one
 *            uniform (magnitude) and one 32-bit word (sign: low bit). */
#include "gen.h"

#include <math.h>
#include <string.h>

#include "drift.h"

static const char *const DIST_NAMES[DRIFT_NDISTS] = {"uniform", "normal", "illcond", "llm"};

const char *drift_dist_name(drift_dist_t d) { return (unsigned)d < DRIFT_NDISTS ? DIST_NAMES[d] : "?"; }

int drift_dist_parse(drift_dist_t *out, const char *name)
{
    if (!name) return DRIFT_EINVAL;
    for (int i = 0; i < DRIFT_NDISTS; i++)
        if (!strcmp(name, DIST_NAMES[i])) {
            *out = (drift_dist_t)i;
            return 0;
        }
    return DRIFT_EINVAL;
}

#define ILLCOND_SIGNAL 0x1p-21
#define LLM_OUTLIER_P (1.0 / 200)
#define LLM_OUTLIER_LO 20.0
#define LLM_OUTLIER_HI 100.0

static void fill_illcond(double *x, size_t n, drift_stream_t *s)
{
    size_t P = n / 4;
    for (size_t j = 0; j < P; j++) {
        double v = drift_stream_normal(s);
        x[2 * j] = v;
        x[2 * j + 1] = -v;
    }
    for (size_t i = 2 * P; i < n; i++) x[i] = ILLCOND_SIGNAL * (1 + drift_stream_uniform(s));
    /* Fisher–Yates; n beyond 2^32 - 1 cannot be drawn with drift_stream_below, so only the
     * first 2^32 - 1 slots are shuffled then (far beyond any experiment's size). */
    size_t m = n > UINT32_MAX ? UINT32_MAX : n;
    for (size_t i = m; i-- > 1;) {
        size_t j = drift_stream_below(s, (uint32_t)(i + 1));
        double t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
}

static void fill_llm(double *x, size_t n, drift_stream_t *s)
{
    for (size_t i = 0; i < n; i++) {
        if (drift_stream_uniform(s) < LLM_OUTLIER_P) {
            double mag = LLM_OUTLIER_LO * pow(LLM_OUTLIER_HI / LLM_OUTLIER_LO, drift_stream_uniform(s));
            x[i] = (drift_stream_u32(s) & 1) ? -mag : mag;
        } else {
            x[i] = drift_stream_normal(s);
        }
    }
}

void drift_gen_fill(double *x, size_t n, drift_dist_t d, drift_stream_t *s)
{
    switch (d) {
    case DRIFT_DIST_UNIFORM:
        for (size_t i = 0; i < n; i++) x[i] = drift_stream_uniform(s);
        break;
    case DRIFT_DIST_NORMAL:
        for (size_t i = 0; i < n; i++) x[i] = drift_stream_normal(s);
        break;
    case DRIFT_DIST_ILLCOND: fill_illcond(x, n, s); break;
    case DRIFT_DIST_LLM: fill_llm(x, n, s); break;
    default:
        for (size_t i = 0; i < n; i++) x[i] = NAN;
        break;
    }
}
