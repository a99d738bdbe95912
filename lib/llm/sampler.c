/* sampler.c — the one sampler type: its specs, the decoder's draw, the plain inverse-CDF draw,
 * and the engines' samplers with their filters and keyed randomness (sampler.h). */
#include "sampler.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "drift.h"
#include "metrics.h"
#include "philox.h"

/* ---- specs ----------------------------------------------------------------------------------- */

/* Spec names: the plain sampler is named by its cut. */
static const struct {
    const char *name;
    drift_sampler_kind_t kind;
    drift_cut_t cut;
} NAMES[] = {
    {"greedy", DRIFT_SAMPLER_GREEDY, DRIFT_CUT_FULL},
    {"sorted-cdf", DRIFT_SAMPLER_SORTED, DRIFT_CUT_FULL},
    {"full", DRIFT_SAMPLER_PLAIN, DRIFT_CUT_FULL},
    {"top-k", DRIFT_SAMPLER_PLAIN, DRIFT_CUT_TOPK},
    {"top-p", DRIFT_SAMPLER_PLAIN, DRIFT_CUT_TOPP},
    {"inverse-cdf", DRIFT_SAMPLER_INVCDF, DRIFT_CUT_FULL},
    {"exp-race", DRIFT_SAMPLER_EXPRACE, DRIFT_CUT_FULL},
    {"gumbel", DRIFT_SAMPLER_GUMBEL, DRIFT_CUT_FULL},
    {"rejection", DRIFT_SAMPLER_REJECTION, DRIFT_CUT_FULL},
};
#define NNAMES ((int)(sizeof NAMES / sizeof NAMES[0]))

/* The fields each kind uses (the others keep the kind's defaults). */
enum { USE_T = 1, USE_K = 2, USE_P = 4, USE_MINP = 8, USE_GREEDY = 16, USE_SEED = 32, USE_TIES = 64 };

static unsigned uses(const drift_sampler_t *s)
{
    switch (s->kind) {
    case DRIFT_SAMPLER_GREEDY: return USE_TIES;
    case DRIFT_SAMPLER_SORTED: return USE_T | USE_K | USE_P | USE_SEED;
    case DRIFT_SAMPLER_PLAIN:
        return USE_T | (s->cut == DRIFT_CUT_TOPK ? USE_K : 0) | (s->cut == DRIFT_CUT_TOPP ? USE_P : 0);
    default: return USE_T | USE_K | USE_P | USE_MINP | USE_GREEDY;
    }
}

static int is_engine(drift_sampler_kind_t k) { return k >= DRIFT_SAMPLER_INVCDF && k < DRIFT_SAMPLER_NKINDS; }

drift_sampler_t drift_sampler_default(drift_sampler_kind_t kind)
{
    return (drift_sampler_t){kind, DRIFT_CUT_FULL, kind == DRIFT_SAMPLER_GREEDY ? 0.0 : 1.0, 0, 1.0, 0.0, 0.0, 0.0, 0};
}

const char *drift_sampler_name(const drift_sampler_t *s)
{
    if (!s) return "?";
    if (s->kind == DRIFT_SAMPLER_GREEDY && s->tie_eps > 0) return "greedy-ties";
    for (int i = 0; i < NNAMES; i++)
        if (NAMES[i].kind == s->kind && (s->kind != DRIFT_SAMPLER_PLAIN || NAMES[i].cut == s->cut))
            return NAMES[i].name;
    return "?";
}

int drift_sampler_validate(const drift_sampler_t *s, const char **why)
{
    const char *w = NULL;
    if (!s)
        w = "sampler: NULL";
    else if ((unsigned)s->kind >= DRIFT_SAMPLER_NKINDS)
        w = "sampler: unknown kind (accepted: greedy, greedy-ties:EPS, sorted-cdf, full, top-k, top-p, inverse-cdf, exp-race, "
            "gumbel, rejection)";
    else if ((unsigned)s->cut >= DRIFT_NCUTS || (s->kind != DRIFT_SAMPLER_PLAIN && s->cut != DRIFT_CUT_FULL))
        w = "sampler cut: full, top-k or top-p, for the plain inverse-CDF sampler only";
    else {
        const unsigned u = uses(s);
        const drift_sampler_t d = drift_sampler_default(s->kind);
        if (!(u & USE_T) && s->temperature != d.temperature)
            w = "sampler T: greedy takes no temperature";
        else if (!(u & USE_K) && s->top_k != d.top_k)
            w = "sampler k: only sorted-cdf, top-k and the engines take top-k";
        else if (!(u & USE_P) && s->top_p != d.top_p)
            w = "sampler p: only sorted-cdf, top-p and the engines take top-p";
        else if (!(u & USE_MINP) && s->min_p != d.min_p)
            w = "sampler minp: only the engines take min-p";
        else if (!(u & USE_GREEDY) && s->greedy_below != d.greedy_below)
            w = "sampler greedy: only the engines take a threshold";
        else if (!(u & USE_SEED) && s->seed != d.seed)
            w = "sampler seed: only sorted-cdf carries its stream's seed";
        else if (!(u & USE_TIES) && s->tie_eps != d.tie_eps)
            w = "sampler ties: only greedy takes a tie-breaker (greedy-ties:EPS)";
        else if (!(s->temperature >= 0) || !isfinite(s->temperature))
            w = "sampler T: a finite temperature >= 0";
        else if (s->top_k < 0)
            w = "sampler k: top-k >= 0 (0 = off)";
        else if (s->kind == DRIFT_SAMPLER_PLAIN && s->cut == DRIFT_CUT_TOPK && s->top_k < 1)
            w = "sampler k: top-k keeps k >= 1 tokens";
        else if (!(s->top_p > 0 && s->top_p <= 1))
            w = "sampler p: top-p in (0, 1] (1 = off)";
        else if (!(s->min_p >= 0 && s->min_p < 1))
            w = "sampler minp: min-p in [0, 1) (0 = off)";
        else if (!(s->greedy_below >= 0) || !isfinite(s->greedy_below))
            w = "sampler greedy: a finite threshold >= 0 or vllm";
        else if (!(s->tie_eps >= 0) || !isfinite(s->tie_eps))
            w = "sampler ties: a finite gap >= 0 in logits";
    }
    if (why) *why = w;
    return w ? DRIFT_EINVAL : DRIFT_OK;
}

/* A value of at most 63 characters into buf: 0, or DRIFT_EINVAL. */
static int value_text(char *buf, size_t size, const char *s, size_t n)
{
    if (n == 0 || n >= size) return DRIFT_EINVAL;
    memcpy(buf, s, n);
    buf[n] = 0;
    return DRIFT_OK;
}

/* A finite number, or vllm (returns 1) for vLLM's greedy threshold. */
static int parse_double(double *out, const char *buf)
{
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

/* Decimal digits only: a seed. */
static int parse_seed(uint64_t *out, const char *buf)
{
    for (const char *c = buf; *c; c++)
        if (!isdigit((unsigned char)*c)) return DRIFT_EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (*end || errno) return DRIFT_EINVAL;
    *out = (uint64_t)v;
    return DRIFT_OK;
}

int drift_sampler_parse(drift_sampler_t *s, const char *spec)
{
    if (!s || !spec) return DRIFT_EINVAL;
    drift_sampler_t r;
    if (!strncmp(spec, "greedy-ties:", 12)) { /* the gap is read as every decimal of the lab is */
        double e;
        const char *v = spec + 12;
        if (!drift_decimal_valid(v) || drift_decimal_round(&e, v, DRIFT_FP64, NULL, 0) || !isfinite(e) || !(e > 0))
            return DRIFT_EINVAL;
        r = drift_sampler_default(DRIFT_SAMPLER_GREEDY);
        r.tie_eps = e;
        *s = r;
        return DRIFT_OK;
    }
    const char *colon = strchr(spec, ':');
    size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
    int found = 0;
    for (int i = 0; i < NNAMES; i++)
        if (strlen(NAMES[i].name) == nl && !strncmp(spec, NAMES[i].name, nl)) {
            r = drift_sampler_default(NAMES[i].kind);
            r.cut = NAMES[i].cut;
            found = 1;
        }
    if (!found) return DRIFT_EINVAL;
    const unsigned u = uses(&r);
    if (colon) {
        const char *p = colon + 1;
        if (!*p) return DRIFT_EINVAL;
        while (*p) {
            const char *eq = strchr(p, '='), *comma = strchr(p, ',');
            const char *end = comma ? comma : p + strlen(p);
            if (!eq || eq > end) return DRIFT_EINVAL;
            size_t kl = (size_t)(eq - p);
            char val[64];
            if (value_text(val, sizeof val, eq + 1, (size_t)(end - eq - 1))) return DRIFT_EINVAL;
            if (kl == 4 && !strncmp(p, "seed", 4) && (u & USE_SEED)) {
                if (parse_seed(&r.seed, val)) return DRIFT_EINVAL;
            } else {
                double v;
                int rc = parse_double(&v, val);
                if (rc < 0) return DRIFT_EINVAL;
                int is_vllm = rc == 1;
                if (kl == 1 && p[0] == 'T' && (u & USE_T) && !is_vllm)
                    r.temperature = v;
                else if (kl == 1 && p[0] == 'k' && (u & USE_K) && !is_vllm) {
                    if (v != floor(v) || v < 0 || v > 1e9) return DRIFT_EINVAL;
                    r.top_k = (int)v;
                } else if (kl == 1 && p[0] == 'p' && (u & USE_P) && !is_vllm)
                    r.top_p = v;
                else if (kl == 4 && !strncmp(p, "minp", 4) && (u & USE_MINP) && !is_vllm)
                    r.min_p = v;
                else if (kl == 6 && !strncmp(p, "greedy", 6) && (u & USE_GREEDY))
                    r.greedy_below = v;
                else
                    return DRIFT_EINVAL;
            }
            if (!comma) break;
            p = comma + 1;
            if (!*p) return DRIFT_EINVAL;
        }
    }
    if (drift_sampler_validate(&r, NULL)) return DRIFT_EINVAL;
    *s = r;
    return DRIFT_OK;
}

int drift_sampler_print(char *buf, size_t size, const drift_sampler_t *s)
{
    if (!buf || drift_sampler_validate(s, NULL)) return DRIFT_EINVAL;
    char t[DRIFT_SAMPLER_SPEC_MAX];
    const drift_sampler_t d = drift_sampler_default(s->kind);
    int n = snprintf(t, sizeof t, "%s", drift_sampler_name(s));
    char sep = ':';
#define ADD(...)                                                 \
    do {                                                         \
        n += snprintf(t + n, sizeof t - (size_t)n, "%c", sep);   \
        n += snprintf(t + n, sizeof t - (size_t)n, __VA_ARGS__); \
        sep = ',';                                               \
    } while (0)
    /* validate keeps the fields a kind does not use at its defaults: only the kind's own differ */
    if (s->temperature != d.temperature) ADD("T=%.17g", s->temperature);
    if (s->top_k != d.top_k) ADD("k=%d", s->top_k);
    if (s->top_p != d.top_p) ADD("p=%.17g", s->top_p);
    if (s->min_p != d.min_p) ADD("minp=%.17g", s->min_p);
    if (s->greedy_below != d.greedy_below) ADD("greedy=%.17g", s->greedy_below);
    if (s->seed != d.seed) ADD("seed=%llu", (unsigned long long)s->seed);
    if (s->tie_eps != d.tie_eps) ADD("%.17g", s->tie_eps); /* greedy-ties:EPS */
#undef ADD
    if (n < 0 || (size_t)n >= sizeof t || (size_t)n >= size) return DRIFT_EINVAL;
    memcpy(buf, t, (size_t)n + 1);
    return n;
}

/* ---- greedy and sorted-cdf: the decoder's draw -------------------------------------------- */

typedef struct {
    double p;
    int i;
} prob_t;

static int by_prob_desc(const void *x, const void *y)
{
    const prob_t *a = x, *b = y;
    if (a->p != b->p) return a->p > b->p ? -1 : 1;
    return a->i - b->i;
}

int drift_greedy_tie(const double *logits, int V, double eps)
{
    if (V < 2) return 0;
    drift_top2_t tt;
    drift_top2(&tt, logits, (size_t)V);
    int t1 = (int)tt.top1, t2 = (int)tt.top2;
    if (!(logits[t1] - logits[t2] < eps)) return t1;
    return t1 < t2 ? t1 : t2;
}

int drift_sample(const double *logits, int V, const drift_sampler_t *s, double u)
{
    if (!logits || V < 1 || !s || (s->kind != DRIFT_SAMPLER_GREEDY && s->kind != DRIFT_SAMPLER_SORTED))
        return DRIFT_EINVAL;
    int best = 0;
    for (int i = 1; i < V; i++)
        if (logits[i] > logits[best]) best = i;
    if (s->kind == DRIFT_SAMPLER_GREEDY || s->temperature <= 0)
        return s->tie_eps > 0 ? drift_greedy_tie(logits, V, s->tie_eps) : best;
    prob_t *p = malloc((size_t)V * sizeof *p);
    if (!p) return DRIFT_ENOMEM;
    double mx = logits[best];
    for (int i = 0; i < V; i++) p[i].p = exp((logits[i] - mx) / s->temperature), p[i].i = i;
    qsort(p, (size_t)V, sizeof *p, by_prob_desc);
    int keep = V;
    if (s->top_k > 0 && s->top_k < keep) keep = s->top_k;
    double total = 0;
    for (int i = 0; i < keep; i++) total += p[i].p;
    if (s->top_p > 0 && s->top_p < 1) {
        double cum = 0;
        for (int i = 0; i < keep; i++) {
            cum += p[i].p;
            if (cum >= s->top_p * total) {
                keep = i + 1;
                break;
            }
        }
        total = cum;
    }
    double target = u * total, cum = 0;
    int tok = p[keep - 1].i;
    for (int i = 0; i < keep; i++) {
        cum += p[i].p;
        if (cum > target) {
            tok = p[i].i;
            break;
        }
    }
    free(p);
    return tok;
}

/* ---- full, top-k, top-p: the plain inverse-CDF draw ------------------------------------------ */

/* i before j: larger logit first, then lower id */
static int before(const double *l, size_t i, size_t j) { return l[i] != l[j] ? l[i] > l[j] : i < j; }

/* merge sort of the ids in x[0..n) by `before`, with scratch t (qsort has no context argument) */
static void sort_ids(size_t *x, size_t *t, size_t n, const double *l)
{
    if (n < 2) return;
    size_t m = n / 2;
    sort_ids(x, t, m, l);
    sort_ids(x + m, t, n - m, l);
    size_t i = 0, j = m, k = 0;
    while (i < m && j < n) t[k++] = before(l, x[j], x[i]) ? x[j++] : x[i++];
    while (i < m) t[k++] = x[i++];
    while (j < n) t[k++] = x[j++];
    memcpy(x, t, n * sizeof *x);
}

size_t drift_cdf_argmax(const double *l, size_t V)
{
    size_t b = 0;
    for (size_t v = 1; v < V; v++)
        if (l[v] > l[b]) b = v;
    return b;
}

void drift_cdf_order(size_t *order, size_t *scratch, const double *l, size_t V)
{
    for (size_t v = 0; v < V; v++) order[v] = v;
    sort_ids(order, scratch, V, l);
}

double drift_cdf_weights(double *w, const double *l, const size_t *order, size_t V, const drift_sampler_t *s)
{
    const double T = s->temperature;
    double lmax = l[order[0]];
    for (size_t v = 0; v < V; v++) w[v] = 0;
    size_t keep = V;
    if (s->cut == DRIFT_CUT_TOPK) keep = (size_t)s->top_k < V ? (size_t)s->top_k : V;
    double sum = 0;
    for (size_t q = 0; q < keep; q++) {
        size_t v = order[q];
        w[v] = exp((l[v] - lmax) / T);
        sum += w[v];
    }
    if (s->cut == DRIFT_CUT_TOPP) {
        /* the fewest largest tokens whose probability reaches p (in sorted order) */
        double run = 0;
        size_t q = 0;
        for (; q < V; q++) {
            run += w[order[q]];
            if (run >= s->top_p * sum) break;
        }
        for (size_t r = q + 1; r < V; r++) w[order[r]] = 0;
        sum = 0;
        for (size_t r = 0; r <= q && r < V; r++) sum += w[order[r]];
    }
    return sum;
}

size_t drift_cdf_draw(const double *w, size_t V, double sum, double u)
{
    double t = u * sum, run = 0;
    size_t last = 0;
    for (size_t v = 0; v < V; v++) {
        if (w[v] == 0) continue;
        run += w[v];
        last = v;
        if (run > t) return v;
    }
    return last;
}

/* ---- keyed randomness -------------------------------------------------------------------- */

static double lane_uniform(const drift_draw_key_t *key, uint32_t stream, uint32_t lane)
{
    uint32_t k[2] = {(uint32_t)key->seed, (uint32_t)(key->seed >> 32)};
    uint32_t ctr[4] = {lane / 2, key->trial, key->point, stream}, w[4];
    drift_philox4x32_10(w, ctr, k);
    uint64_t hi = w[2 * (lane % 2)] >> 5, lo = w[2 * (lane % 2) + 1] >> 6;
    return (double)((hi << 26) | lo) * 0x1p-53; /* [0, 1), 53 bits, as drift_stream_uniform */
}

double drift_sampler_token_uniform(const drift_draw_key_t *key, uint32_t lane)
{
    return 1.0 - lane_uniform(key, drift_fnv1a32("sampler.token"), lane); /* (0, 1]: exact */
}

double drift_sampler_draw_uniform(const drift_draw_key_t *key, uint32_t round)
{
    return lane_uniform(key, drift_fnv1a32("sampler.draw"), round);
}

void drift_sampler_exponentials(double *e, size_t V, const drift_draw_key_t *key)
{
    for (size_t i = 0; i < V; i++) e[i] = -log(drift_sampler_token_uniform(key, (uint32_t)i));
}

/* ---- the transform ------------------------------------------------------------------------ */

typedef struct {
    const drift_draw_key_t *key; /* keyed, or */
    const double *u;             /* explicit */
    size_t n;
} draws_t;

static int draw(double *u, const draws_t *d, size_t r)
{
    if (d->key) {
        *u = drift_sampler_draw_uniform(d->key, (uint32_t)r);
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

static int sample(
    size_t *out, const double *logits, size_t V, const drift_sampler_t *s, const double *e, const draws_t *d)
{
    if (!out || !logits || V == 0 || drift_sampler_validate(s, NULL) || !is_engine(s->kind)) return DRIFT_EINVAL;
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
        if (!c)
            rc = DRIFT_ENOMEM;
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
        if (!c)
            rc = DRIFT_ENOMEM;
        else {
            double Z = 0;
            for (size_t i = 0; i < V; i++)
                if (keep[i]) c[m++] = (pi_t){p[i], i}, Z += p[i];
            qsort(c, m, sizeof *c, cmp_pi_asc);
            double cum = 0;
            for (size_t t = 0; t + 1 < m; t++) {
                cum += c[t].p;
                if (cum <= (1 - s->top_p) * Z)
                    keep[c[t].i] = 0;
                else
                    break;
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
        default: rc = DRIFT_EINVAL;
        }
    free(p);
    free(keep);
    return rc;
}

int drift_sampler_draw(
    size_t *out, const double *logits, size_t V, const drift_sampler_t *s, const double *e, const drift_draw_key_t *key)
{
    if (!key) return DRIFT_EINVAL;
    draws_t d = {key, NULL, 0};
    return sample(out, logits, V, s, e, &d);
}

int drift_sampler_draw_given(size_t *out, const double *logits, size_t V, const drift_sampler_t *s, const double *e,
    const double *u_draw, size_t n_draw)
{
    if (n_draw && !u_draw) return DRIFT_EINVAL;
    draws_t d = {NULL, u_draw, n_draw};
    return sample(out, logits, V, s, e, &d);
}
