/* draft.c — the draft of speculative decoding and its memo of contexts (draft.h). */
#include "draft.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "greedy_step.h"

void drift_draft_open(
    drift_draft_t *D, const drift_checkpoint_t *ck, const drift_numerics_t *nx, int cap, double *lg, size_t V)
{
    char err[DRIFT_LLM_ERR_MAX];
    memset(D, 0, sizeof *D);
    D->nslot = 1024, D->lg = lg, D->V = V;
    D->text = malloc((size_t)cap * sizeof(int)), D->slot = malloc(D->nslot * sizeof(int)),
    D->memo = malloc(D->nslot / 2 * sizeof *D->memo);
    if (!D->text || !D->slot || !D->memo)
        drift_die_oom((double)cap * sizeof(int) + (double)D->nslot * (sizeof(int) + sizeof *D->memo),
            "the draft's text of %d tokens and its memo", cap);
    for (size_t i = 0; i < D->nslot; i++) D->slot[i] = -1;
    if (drift_model_create(&D->m, ck, nx, 1, err, sizeof err)) drift_die("draft model: %s", err);
    long p1[256], pm[256];
    int n1 = drift_model_plan(D->m, 1, 1, cap, p1, 256);
    if (n1 < 0) drift_die("plan failed");
    for (D->chunk = 1; D->chunk < cap; D->chunk++) {
        int nm = drift_model_plan(D->m, (size_t)D->chunk + 1, 1, cap, pm, 256);
        if (nm < 0) drift_die("plan failed");
        if (nm != n1 || memcmp(p1, pm, (size_t)n1 * sizeof(long))) break;
    }
}

static uint32_t hash_ids(const int *t, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++) h = (h ^ (uint32_t)t[i]) * 16777619u;
    return h;
}

static int draft_next(drift_draft_t *D, const int *c, int len)
{
    const uint32_t h = hash_ids(c, len);
    size_t b = h & (D->nslot - 1);
    for (; D->slot[b] >= 0; b = (b + 1) & (D->nslot - 1)) {
        const drift_draft_memo_t *e = &D->memo[D->slot[b]];
        if (e->len == len && e->h == h && !memcmp(D->ctx + e->at, c, (size_t)len * sizeof(int))) return e->tok;
    }
    int s = 0;
    while (s < D->n && s < len && D->text[s] == c[s]) s++;
    if (s == len) s = len - 1; /* the last row again, for its logits */
    int y = -1;
    for (int p = s; p < len; p += D->chunk) {
        const int n = len - p < D->chunk ? len - p : D->chunk;
        y = drift_greedy_step(D->m, D->lg, p, n, c + p, D->V);
        D->rows += n;
    }
    memcpy(D->text, c, (size_t)len * sizeof(int));
    D->n = len;
    if (D->nctx + (size_t)len > D->capctx) {
        D->capctx = 2 * D->capctx + (size_t)len + 4096;
        if (!(D->ctx = realloc(D->ctx, D->capctx * sizeof(int))))
            drift_die_oom((double)D->capctx * sizeof(int), "the draft's memo");
    }
    memcpy(D->ctx + D->nctx, c, (size_t)len * sizeof(int));
    D->memo[D->nmemo] = (drift_draft_memo_t){len, y, h, D->nctx};
    D->slot[b] = D->nmemo++;
    D->nctx += (size_t)len;
    if (2 * (size_t)D->nmemo >= D->nslot) { /* keep the table at most half full: grow and rehash */
        D->nslot *= 2;
        free(D->slot);
        if (!(D->slot = malloc(D->nslot * sizeof(int))) ||
            !(D->memo = realloc(D->memo, D->nslot / 2 * sizeof *D->memo)))
            drift_die_oom((double)D->nslot * (sizeof(int) + sizeof *D->memo), "the draft's memo");
        for (size_t i = 0; i < D->nslot; i++) D->slot[i] = -1;
        for (int i = 0; i < D->nmemo; i++) {
            size_t q = D->memo[i].h & (D->nslot - 1);
            while (D->slot[q] >= 0) q = (q + 1) & (D->nslot - 1);
            D->slot[q] = i;
        }
    }
    return y;
}

void drift_draft_propose(drift_draft_t *D, int *vin, int *txt, int len, int k)
{
    vin[0] = txt[len - 1];
    for (int i = 1; i <= k; i++) {
        vin[i] = draft_next(D, txt, len + i - 1);
        txt[len + i - 1] = vin[i]; /* scratch past the accepted text, overwritten by the verify */
    }
}

void drift_draft_close(drift_draft_t *D)
{
    drift_model_free(D->m);
    free(D->text), free(D->slot), free(D->memo), free(D->ctx);
}
