/* sampler.c — the four samplers, their filters and their keyed randomness (sampler.h). */
#include "sampler.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "philox.h"

static const char *const KIND[DRIFT_SAMPLER_NKINDS] = {"inverse-cdf", "exp-race", "gumbel", "rejection"};

drift_sampling_t drift_sampling_default(drift_sampling_kind_t kind)
{
    return (drift_sampling_t){kind, 1.0, 0, 1.0, 0.0, 0.0};
}

int drift_sampling_validate(const drift_sampling_t *s, const char **why)
{
    const char *w = NULL;
    if (!s) w = "sampler: NULL";
    else if ((unsigned)s->kind >= DRIFT_SAMPLER_NKINDS) w = "sampler: unknown kind (accepted: inverse-cdf, exp-race, gumbel, rejection)";
    else if (!(s->temperature >= 0) || !isfinite(s->temperature)) w = "sampler T: a finite temperature >= 0";
    else if (s->top_k < 0) w = "sampler k: top-k >= 0 (0 = off)";
    else if (!(s->top_p > 0 && s->top_p <= 1)) w = "sampler p: top-p in (0, 1] (1 = off)";
    else if (!(s->min_p >= 0 && s->min_p < 1)) w = "sampler minp: min-p in [0, 1) (0 = off)";
    else if (!(s->greedy_below >= 0) || !isfinite(s->greedy_below)) w = "sampler greedy: a finite threshold >= 0 or vllm";
    if (why) *why = w;
    return w ? DRIFT_EINVAL : DRIFT_OK;
}

static int parse_double(double *out, const char *s, size_t n)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf) return DRIFT_EINVAL;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (!strcmp(buf, "vllm")) {
        *out = DRIFT_SAMPLER_VLLM_GREEDY;
        return 1;
    }
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end || errno || !isfinite(v) || isspace((unsigned char)buf[0])) return DRIFT_EINVAL;
    *out = v;
    return DRIFT_OK;
}

int drift_sampling_parse(drift_sampling_t *s, const char *spec)
{
    if (!s || !spec) return DRIFT_EINVAL;
    const char *colon = strchr(spec, ':');
    size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
    drift_sampling_t r;
    int found = 0;
    for (int k = 0; k < DRIFT_SAMPLER_NKINDS; k++)
        if (strlen(KIND[k]) == nl && !strncmp(spec, KIND[k], nl)) {
            r = drift_sampling_default((drift_sampling_kind_t)k);
            found = 1;
        }
    if (!found) return DRIFT_EINVAL;
    if (colon) {
        const char *p = colon + 1;
        if (!*p) return DRIFT_EINVAL;
        while (*p) {
            const char *eq = strchr(p, '='), *comma = strchr(p, ',');
            const char *end = comma ? comma : p + strlen(p);
            if (!eq || eq > end) return DRIFT_EINVAL;
            size_t kl = (size_t)(eq - p);
            double v;
            int rc = parse_double(&v, eq + 1, (size_t)(end - eq - 1));
            if (rc < 0) return DRIFT_EINVAL;
            int is_vllm = rc == 1;
            if (kl == 1 && p[0] == 'T' && !is_vllm) r.temperature = v;
            else if (kl == 1 && p[0] == 'k' && !is_vllm) {
                if (v != floor(v) || v < 0 || v > 1e9) return DRIFT_EINVAL;
                r.top_k = (int)v;
            } else if (kl == 1 && p[0] == 'p' && !is_vllm) r.top_p = v;
            else if (kl == 4 && !strncmp(p, "minp", 4) && !is_vllm) r.min_p = v;
            else if (kl == 6 && !strncmp(p, "greedy", 6)) r.greedy_below = v;
            else return DRIFT_EINVAL;
            if (!comma) break;
            p = comma + 1;
            if (!*p) return DRIFT_EINVAL;
        }
    }
    if (drift_sampling_validate(&r, NULL)) return DRIFT_EINVAL;
    *s = r;
    return DRIFT_OK;
}

int drift_sampling_print(char *buf, size_t size, const drift_sampling_t *s)
{
    if (!buf || drift_sampling_validate(s, NULL)) return DRIFT_EINVAL;
    char t[DRIFT_SAMPLER_SPEC_MAX];
    int n = snprintf(t, sizeof t, "%s", KIND[s->kind]);
    char sep = ':';
#define ADD(...)                                                                                                       \
    do {                                                                                                               \
        n += snprintf(t + n, sizeof t - (size_t)n, "%c", sep);                                                         \
        n += snprintf(t + n, sizeof t - (size_t)n, __VA_ARGS__);                                                       \
        sep = ',';                                                                                                     \
    } while (0)
    if (s->temperature != 1.0) ADD("T=%.17g", s->temperature);
    if (s->top_k) ADD("k=%d", s->top_k);
    if (s->top_p != 1.0) ADD("p=%.17g", s->top_p);
    if (s->min_p != 0.0) ADD("minp=%.17g", s->min_p);
    if (s->greedy_below != 0.0) ADD("greedy=%.17g", s->greedy_below);
#undef ADD
    if (n < 0 || (size_t)n >= sizeof t || (size_t)n >= size) return DRIFT_EINVAL;
    memcpy(buf, t, (size_t)n + 1);
    return n;
}

/* ---- keyed randomness -------------------------------------------------------------------- */

static double lane_uniform(const drift_sampling_key_t *key, uint32_t stream, uint32_t lane)
{
    uint32_t k[2] = {(uint32_t)key->seed, (uint32_t)(key->seed >> 32)};
    uint32_t ctr[4] = {lane / 2, key->trial, key->point, stream}, w[4];
    drift_philox4x32_10(w, ctr, k);
    uint64_t hi = w[2 * (lane % 2)] >> 5, lo = w[2 * (lane % 2) + 1] >> 6;
    return (double)((hi << 26) | lo) * 0x1p-53; /* [0, 1), 53 bits, as drift_stream_uniform */
}

double drift_sampling_token_uniform(const drift_sampling_key_t *key, uint32_t lane)
{
    return 1.0 - lane_uniform(key, drift_fnv1a32("sampler.token"), lane); /* (0, 1]: exact */
}

double drift_sampling_draw_uniform(const drift_sampling_key_t *key, uint32_t round)
{
    return lane_uniform(key, drift_fnv1a32("sampler.draw"), round);
}

void drift_sampling_exponentials(double *e, size_t V, const drift_sampling_key_t *key)
{
    for (size_t i = 0; i < V; i++) e[i] = -log(drift_sampling_token_uniform(key, (uint32_t)i));
}

/* ---- the transform ------------------------------------------------------------------------ */

typedef struct {
    const drift_sampling_key_t *key; /* keyed, or */
    const double *u;               /* explicit */
    size_t n;
} draws_t;

static int draw(double *u, const draws_t *d, size_t r)
{
    if (d->key) {
        *u = drift_sampling_draw_uniform(d->key, (uint32_t)r);
        return DRIFT_OK;
    }
    if (r >= d->n) return DRIFT_ERANGE;
    *u = d->u[r];
    return DRIFT_OK;
}

typedef struct {
    double p;
    size_t i;
} pi_t;

static int cmp_pi_asc(const void *a, const void *b)
{
    const pi_t *x = a, *y = b;
    if (x->p != y->p) return x->p < y->p ? -1 : 1;
    return x->i < y->i ? 1 : x->i > y->i ? -1 : 0; /* equal p: higher id first, so lower ids survive */
}

static int cmp_double_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x > y ? -1 : x < y ? 1 : 0;
}

/* Inverse CDF in id order over tokens with keep[i] (all when keep is NULL) and p > floor. */
static size_t walk(const double *p, const unsigned char *keep, size_t V, double floor, double u)
{
    double Z = 0;
    size_t last = 0;
    for (size_t i = 0; i < V; i++)
        if ((!keep || keep[i]) && p[i] > floor) Z += p[i], last = i;
    double target = u * Z, c = 0;
    for (size_t i = 0; i < V; i++) {
        if ((keep && !keep[i]) || !(p[i] > floor)) continue;
        c += p[i];
        if (c > target) return i;
    }
    return last; /* u Z at or above the rounded total: the last token */
}

static int sample(size_t *out, const double *logits, size_t V, const drift_sampling_t *s, const double *e,
                  const draws_t *d)
{
    if (!out || !logits || V == 0 || drift_sampling_validate(s, NULL)) return DRIFT_EINVAL;
    size_t amax = 0;
    for (size_t i = 0; i < V; i++) {
        if (isnan(logits[i])) return DRIFT_EINVAL;
        if (logits[i] > logits[amax]) amax = i;
    }
    if (s->temperature == 0 || s->temperature < s->greedy_below) {
        *out = amax;
        return DRIFT_OK;
    }
    if ((s->kind == DRIFT_SAMPLER_EXPRACE || s->kind == DRIFT_SAMPLER_GUMBEL) && !e) return DRIFT_EINVAL;
    double T = s->temperature, zmax = logits[amax] / T;
    double *p = malloc(V * sizeof *p);
    unsigned char *keep = malloc(V);
    if (!p || !keep) {
        free(p);
        free(keep);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < V; i++) {
        p[i] = exp(logits[i] / T - zmax);
        keep[i] = 1;
    }
    int rc = DRIFT_OK;
    int filtered = s->top_k || s->top_p < 1 || s->min_p > 0;

    if (s->kind == DRIFT_SAMPLER_REJECTION) {
        double Z = 0;
        for (size_t i = 0; i < V; i++) Z += p[i];
        double floor = 0;
        for (size_t r = 0;; r++) {
            double u;
            if ((rc = draw(&u, d, r))) break;
            size_t j = walk(p, NULL, V, floor, u);
            long above = 0;
            double mass = 0;
            for (size_t i = 0; i < V; i++)
                if (p[i] > p[j]) above++, mass += p[i];
            int ok = (!s->top_k || above < s->top_k) && (s->top_p >= 1 || mass < s->top_p * Z) && p[j] >= s->min_p;
            if (ok || !filtered) {
                *out = j;
                break;
            }
            floor = p[j];
        }
        free(p);
        free(keep);
        return rc;
    }

    if (s->top_k && (size_t)s->top_k < V) {
        double *c = malloc(V * sizeof *c);
        if (!c) rc = DRIFT_ENOMEM;
        else {
            memcpy(c, p, V * sizeof *c);
            qsort(c, V, sizeof *c, cmp_double_desc);
            double kth = c[s->top_k - 1];
            for (size_t i = 0; i < V; i++) keep[i] = p[i] >= kth;
            free(c);
        }
    }
    if (!rc && s->top_p < 1) {
        size_t m = 0;
        pi_t *c = malloc(V * sizeof *c);
        if (!c) rc = DRIFT_ENOMEM;
        else {
            double Z = 0;
            for (size_t i = 0; i < V; i++)
                if (keep[i]) c[m++] = (pi_t){p[i], i}, Z += p[i];
            qsort(c, m, sizeof *c, cmp_pi_asc);
            double cum = 0;
            for (size_t t = 0; t + 1 < m; t++) {
                cum += c[t].p;
                if (cum <= (1 - s->top_p) * Z) keep[c[t].i] = 0;
                else break;
            }
            free(c);
        }
    }
    if (!rc && s->min_p > 0)
        for (size_t i = 0; i < V; i++)
            if (p[i] < s->min_p) keep[i] = 0; /* p_max = 1 after the shift */

    if (!rc) switch (s->kind) {
        case DRIFT_SAMPLER_INVCDF: {
            double u;
            if (!(rc = draw(&u, d, 0))) *out = walk(p, keep, V, -1.0, u);
            break;
        }
        case DRIFT_SAMPLER_EXPRACE: {
            /* vLLM: probs = softmax; probs / q; argmax (first maximum). Dividing by Z does not
             * change the argmax, but is done as the engine does. */
            double Z = 0;
            for (size_t i = 0; i < V; i++)
                if (keep[i]) Z += p[i];
            double best = -1;
            size_t bi = amax;
            for (size_t i = 0; i < V; i++) {
                if (!keep[i]) continue;
                double r = (p[i] / Z) / e[i];
                if (r > best) best = r, bi = i;
            }
            *out = bi;
            break;
        }
        case DRIFT_SAMPLER_GUMBEL: {
            double best = -INFINITY;
            size_t bi = amax;
            for (size_t i = 0; i < V; i++) {
                if (!keep[i]) continue;
                double g = logits[i] / T - log(e[i]);
                if (g > best) best = g, bi = i;
            }
            *out = bi;
            break;
        }
        default:
            rc = DRIFT_EINVAL;
        }
    free(p);
    free(keep);
    return rc;
}

int drift_sampling_draw(size_t *out, const double *logits, size_t V, const drift_sampling_t *s, const double *e,
                 const drift_sampling_key_t *key)
{
    if (!key) return DRIFT_EINVAL;
    draws_t d = {key, NULL, 0};
    return sample(out, logits, V, s, e, &d);
}

int drift_sampling_draw_given(size_t *out, const double *logits, size_t V, const drift_sampling_t *s, const double *e,
                       const double *u_draw, size_t n_draw)
{
    if (n_draw && !u_draw) return DRIFT_EINVAL;
    draws_t d = {NULL, u_draw, n_draw};
    return sample(out, logits, V, s, e, &d);
}
