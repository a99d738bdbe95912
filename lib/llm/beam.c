/* beam.c — beam search (beam.h): the selection over any logit source, and the model's source
 * with one KV slot per beam. */
#include "beam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "philox.h"
#include "why.h"

static const char *const TIE_NAMES[DRIFT_NBEAM_TIES] = {"stable", "unstable"};
int drift_beam_ties_parse(drift_beam_ties_t *t, const char *name)
{
    for (int i = 0; name && i < DRIFT_NBEAM_TIES; i++)
        if (!strcmp(name, TIE_NAMES[i])) return *t = (drift_beam_ties_t)i, 0;
    return DRIFT_EINVAL;
}

drift_beam_opts_t drift_beam_opts(int beams, int ntokens)
{
    drift_beam_opts_t o = {beams, ntokens, DRIFT_BEAM_TIES_STABLE, 0, -1, NULL};
    return o;
}

void drift_beam_free(drift_beam_t *b)
{
    if (!b) return;
    free(b->tokens), free(b->logprob), free(b->len), free(b->score), free(b->finished);
    memset(b, 0, sizeof *b);
}

/* lp[v] = (l[v] - mx) - log(sum_v exp(l[v] - mx)), in place; DRIFT_EINVAL for a NaN, an
 * infinite maximum or a row of -inf (no distribution). */
static int log_softmax(double *l, int V)
{
    double mx = -INFINITY;
    for (int v = 0; v < V; v++) {
        if (isnan(l[v])) return DRIFT_EINVAL;
        if (l[v] > mx) mx = l[v];
    }
    if (!isfinite(mx)) return DRIFT_EINVAL;
    double z = 0;
    for (int v = 0; v < V; v++) z += exp(l[v] - mx);
    double lz = log(z);
    for (int v = 0; v < V; v++) l[v] = (l[v] - mx) - lz;
    return 0;
}

/* A candidate: beam `beam` extended by `tok` (-1: a finished beam carried over). */
typedef struct {
    double s;
    uint32_t key; /* the tie order: smaller first */
    int beam, tok;
} cand_t;

static int better(const cand_t *a, const cand_t *b) { return a->s > b->s || (a->s == b->s && a->key < b->key); }

/* Insert c into top (sorted best first, *n of at most K kept). */
static void offer(cand_t *top, int *n, int K, const cand_t *c)
{
    if (*n == K && !better(c, &top[K - 1])) return;
    int i = *n < K ? (*n)++ : K - 1;
    while (i > 0 && better(c, &top[i - 1])) top[i] = top[i - 1], i--;
    top[i] = *c;
}

/* The beams of one step. */
typedef struct {
    int *tok;
    double *lp;
    int *len, *fin, *row;
    double *score;
} beams_t;

static int beams_alloc(beams_t *b, int W, int N)
{
    size_t cells = (size_t)W * (size_t)(N > 0 ? N : 1);
    b->tok = malloc(cells * sizeof *b->tok);
    b->lp = malloc(cells * sizeof *b->lp);
    b->len = malloc((size_t)W * sizeof *b->len);
    b->fin = malloc((size_t)W * sizeof *b->fin);
    b->row = malloc((size_t)W * sizeof *b->row);
    b->score = malloc((size_t)W * sizeof *b->score);
    return b->tok && b->lp && b->len && b->fin && b->row && b->score ? 0 : DRIFT_ENOMEM;
}

static void beams_free(beams_t *b)
{
    free(b->tok), free(b->lp), free(b->len), free(b->fin), free(b->row), free(b->score);
}

int drift_beam_search_fn(drift_beam_t *out, int V, const drift_beam_opts_t *o, drift_beam_step_fn step, void *ctx)
{
    if (!out) return DRIFT_EINVAL;
    memset(out, 0, sizeof *out);
    if (!o || !step || V < 1 || o->beams < 1 || o->ntokens < 0 || (unsigned)o->ties >= DRIFT_NBEAM_TIES ||
        o->stop_token < -1 || o->stop_token >= V)
        return DRIFT_EINVAL;
    int W = o->beams, N = o->ntokens, K = W + 1;
    /* every candidate of a step has its own key: beams x (V + 1) of them */
    if ((double)W * ((double)V + 1) > (double)UINT32_MAX) return DRIFT_EINVAL;
    beams_t cur = {0}, nxt = {0};
    double *lg = malloc((size_t)W * (size_t)V * sizeof *lg);
    cand_t *top = malloc((size_t)K * sizeof *top);
    int *parent = malloc((size_t)W * sizeof *parent), *last = malloc((size_t)W * sizeof *last);
    uint32_t *perm = o->ties == DRIFT_BEAM_TIES_UNSTABLE ? malloc((size_t)W * ((size_t)V + 1) * sizeof *perm) : NULL;
    int rc = DRIFT_ENOMEM;
    if (!lg || !top || !parent || !last || (o->ties == DRIFT_BEAM_TIES_UNSTABLE && !perm) || beams_alloc(&cur, W, N) ||
        beams_alloc(&nxt, W, N))
        goto done;
    int nb = 1; /* the root: the context alone */
    cur.len[0] = 0, cur.fin[0] = 0, cur.row[0] = 0, cur.score[0] = 0;
    rc = N > 0 ? step(ctx, lg, 1, NULL, NULL) : 0;
    int nlive = 1;
    for (int t = 0; t < N && !rc; t++) {
        for (int r = 0; r < nlive && !rc; r++) rc = log_softmax(lg + (size_t)r * (size_t)V, V);
        if (rc) break;
        uint32_t ncand = (uint32_t)nb * ((uint32_t)V + 1);
        if (perm) {
            drift_stream_t st;
            drift_stream_init(&st, o->seed, drift_fnv1a32("beam.ties"), (uint32_t)t, 0);
            for (uint32_t i = 0; i < ncand; i++) perm[i] = i;
            for (uint32_t i = ncand - 1; i > 0; i--) {
                uint32_t j = drift_stream_below(&st, i + 1), x = perm[i];
                perm[i] = perm[j], perm[j] = x;
            }
        }
        int ntop = 0;
        for (int b = 0; b < nb; b++) {
            uint32_t base = (uint32_t)b * ((uint32_t)V + 1);
            if (cur.fin[b]) {
                cand_t c = {cur.score[b], perm ? perm[base] : base, b, -1};
                offer(top, &ntop, K, &c);
                continue;
            }
            const double *lp = lg + (size_t)cur.row[b] * (size_t)V;
            for (int v = 0; v < V; v++) {
                uint32_t idx = base + 1 + (uint32_t)v;
                cand_t c = {cur.score[b] + lp[v], perm ? perm[idx] : idx, b, v};
                offer(top, &ntop, K, &c);
            }
        }
        int nn = ntop < W ? ntop : W;
        if (ntop > W && top[W - 1].s == top[W].s) out->ties_boundary++;
        for (int i = 0; i + 1 < nn; i++) out->ties_inside += top[i].s == top[i + 1].s;
        nlive = 0;
        for (int i = 0; i < nn; i++) {
            const cand_t *c = &top[i];
            int b = c->beam, L = cur.len[b];
            memcpy(nxt.tok + (size_t)i * (size_t)N, cur.tok + (size_t)b * (size_t)N, (size_t)L * sizeof *nxt.tok);
            memcpy(nxt.lp + (size_t)i * (size_t)N, cur.lp + (size_t)b * (size_t)N, (size_t)L * sizeof *nxt.lp);
            nxt.len[i] = L, nxt.fin[i] = cur.fin[b], nxt.score[i] = c->s, nxt.row[i] = -1;
            if (c->tok < 0) continue;
            if (c->tok == o->stop_token || (o->stop_mask && o->stop_mask[c->tok])) {
                nxt.fin[i] = 1;
                continue;
            }
            nxt.tok[(size_t)i * (size_t)N + (size_t)L] = c->tok;
            nxt.lp[(size_t)i * (size_t)N + (size_t)L] = lg[(size_t)cur.row[b] * (size_t)V + (size_t)c->tok];
            nxt.len[i] = L + 1;
            parent[nlive] = cur.row[b], last[nlive] = c->tok;
            nxt.row[i] = nlive++;
        }
        beams_t sw = cur;
        cur = nxt, nxt = sw;
        nb = nn;
        out->steps = t + 1;
        if (t + 1 < N && nlive > 0) rc = step(ctx, lg, nlive, parent, last);
        if (!nlive) break;
    }
    if (rc) goto done;
    rc = DRIFT_ENOMEM;
    size_t cells = (size_t)nb * (size_t)(N > 0 ? N : 1);
    out->stride = N;
    out->tokens = malloc(cells * sizeof *out->tokens);
    out->logprob = malloc(cells * sizeof *out->logprob);
    out->len = malloc((size_t)nb * sizeof *out->len);
    out->score = malloc((size_t)nb * sizeof *out->score);
    out->finished = malloc((size_t)nb * sizeof *out->finished);
    if (!out->tokens || !out->logprob || !out->len || !out->score || !out->finished) goto done;
    memcpy(out->tokens, cur.tok, cells * sizeof *out->tokens);
    memcpy(out->logprob, cur.lp, cells * sizeof *out->logprob);
    memcpy(out->len, cur.len, (size_t)nb * sizeof *out->len);
    memcpy(out->score, cur.score, (size_t)nb * sizeof *out->score);
    memcpy(out->finished, cur.fin, (size_t)nb * sizeof *out->finished);
    out->nbeams = nb;
    rc = 0;
done:
    beams_free(&cur), beams_free(&nxt);
    free(lg), free(top), free(parent), free(last), free(perm);
    if (rc) {
        long tb = out->ties_boundary, ti = out->ties_inside;
        drift_beam_free(out);
        out->ties_boundary = tb, out->ties_inside = ti;
    }
    return rc;
}

/* ---- the model as the logit source ------------------------------------------------------ */

typedef struct {
    drift_model_t *m;
    const int *prompt;
    int np, W, calls;
    int *slot, *nslot; /* the slot of each row of the previous call, of this one */
    unsigned char *claimed;
    drift_seq_step_t *seqs;
    int failed_copy;
} model_src_t;

/* Row r's beam takes its parent's slot when it is the parent's first child (the cache already
 * holds the parent's positions), else a slot no row keeps, into which the parent's cache is
 * copied first. Copies read only kept slots and write only unkept ones, so no copy clobbers
 * a cache still to be read. */
static int model_step(void *ctx, double *logits, int nbeams, const int *parent, const int *last)
{
    model_src_t *s = ctx;
    int rc;
    if (s->calls == 0) {
        s->seqs[0] = (drift_seq_step_t){0, 0, s->np, s->prompt};
        s->slot[0] = 0;
        rc = drift_model_step(s->m, logits, s->seqs, 1);
        s->calls++;
        return rc;
    }
    int pos = s->np + s->calls - 1;
    memset(s->claimed, 0, (size_t)s->W);
    for (int r = 0; r < nbeams; r++) {
        int ps = s->slot[parent[r]];
        s->nslot[r] = s->claimed[ps] ? -1 : ps;
        s->claimed[ps] = 1;
    }
    for (int r = 0, free_slot = 0; r < nbeams; r++) {
        if (s->nslot[r] >= 0) continue;
        while (s->claimed[free_slot]) free_slot++;
        s->claimed[free_slot] = 1;
        s->nslot[r] = free_slot;
        if ((rc = drift_model_copy_slot(s->m, free_slot, s->slot[parent[r]], pos))) return s->failed_copy = 1, rc;
    }
    for (int r = 0; r < nbeams; r++) s->seqs[r] = (drift_seq_step_t){s->nslot[r], pos, 1, &last[r]};
    rc = drift_model_step(s->m, logits, s->seqs, nbeams);
    memcpy(s->slot, s->nslot, (size_t)nbeams * sizeof *s->slot);
    s->calls++;
    return rc;
}

int drift_beam_search(drift_beam_t *out, drift_model_t *m, const int *prompt, int nprompt, const drift_beam_opts_t *o,
    char *err, size_t errsz)
{
    if (out) memset(out, 0, sizeof *out);
    if (!out || !m || !prompt || !o) return drift_why(err, errsz, DRIFT_EINVAL, "beam search: missing argument");
    const drift_llm_config_t *c = drift_model_config(m);
    int V = c->vocab_size, cap = c->seq_len;
    if (nprompt < 1 || nprompt > cap)
        return drift_why(err, errsz, DRIFT_EINVAL, "beam search: prompt of %d tokens, expected 1 .. %d", nprompt, cap);
    if (o->beams < 1 || o->ntokens < 0)
        return drift_why(err, errsz, DRIFT_EINVAL,
            "beam search: beams %d and tokens %d, expected beams >= 1, tokens >= 0", o->beams, o->ntokens);
    if (o->stop_token < -1 || o->stop_token >= V)
        return drift_why(
            err, errsz, DRIFT_EINVAL, "beam search: stop token %d, expected -1 or 0 .. %d", o->stop_token, V - 1);
    /* a zero-length copy into the last slot the search uses: does it exist, can slots be copied */
    if (o->beams > 1) {
        int rc = drift_model_copy_slot(m, o->beams - 1, 0, 0);
        if (rc == DRIFT_EUNSUPPORTED)
            return drift_why(err, errsz, rc,
                "beam search: beams %d need copies of a KV cache, which llamacpp-cpu does not make", o->beams);
        if (rc)
            return drift_why(err, errsz, rc, "beam search: beams %d need a model with %d KV slots", o->beams, o->beams);
    }
    drift_beam_opts_t oo = *o;
    if (oo.ntokens > cap - nprompt + 1) oo.ntokens = cap - nprompt + 1; /* the last token is not fed */
    model_src_t s = {m, prompt, nprompt, o->beams, 0, NULL, NULL, NULL, NULL, 0};
    s.slot = malloc((size_t)o->beams * sizeof *s.slot);
    s.nslot = malloc((size_t)o->beams * sizeof *s.nslot);
    s.claimed = malloc((size_t)o->beams);
    s.seqs = malloc((size_t)o->beams * sizeof *s.seqs);
    int rc = DRIFT_ENOMEM;
    if (s.slot && s.nslot && s.claimed && s.seqs) rc = drift_beam_search_fn(out, V, &oo, model_step, &s);
    free(s.slot), free(s.nslot), free(s.claimed), free(s.seqs);
    if (rc == DRIFT_ENOMEM) return drift_why(err, errsz, rc, "beam search: out of memory");
    if (rc)
        return drift_why(err, errsz, rc, "beam search: %s failed: %s",
            s.failed_copy ? "a KV-cache copy" : "a model step", drift_strerror(rc));
    return 0;
}
