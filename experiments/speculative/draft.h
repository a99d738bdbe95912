/* draft.h — speculative decoding's draft: the same model under LayerCast (bf16 weights, fp32
 * compute) proposing the next k tokens, greedily.
 *
 * Its greedy next token after a context is a function of the context alone. Its rows are
 * computed in steps of at most `chunk` rows, the largest M whose kernel plan is M = 1's, so a
 * row's bits do not depend on which step computed it (drift_model_plan: equal plans, equal
 * rows), and every configuration and draft length can share one answer per context (the
 * memo). Its KV cache holds `text`; a context that shares a prefix with it resumes there. */
#ifndef DRIFT_DRAFT_H
#define DRIFT_DRAFT_H

#include <stddef.h>
#include <stdint.h>

#include "checkpoint.h"
#include "model.h"

typedef struct {
    int len, tok;
    uint32_t h;
    size_t at; /* the context in `ctx` */
} drift_draft_memo_t;

typedef struct {
    drift_model_t *m;
    double *lg;
    size_t V;
    int *text, n, cap, chunk;
    drift_draft_memo_t *memo; /* nslot / 2 entries */
    int nmemo, *slot;         /* open addressing: memo indices, -1 empty */
    size_t nslot;
    int *ctx;
    size_t nctx, capctx;
    long rows; /* rows the draft computed */
} drift_draft_t;

/* The draft model of ck under nx for contexts of up to cap tokens; lg is a row of V logits
 * (the caller's, not copied). Dies when the model cannot be made or memory runs out. */
void drift_draft_open(
    drift_draft_t *D, const drift_checkpoint_t *ck, const drift_numerics_t *nx, int cap, double *lg, size_t V);
/* The draft proposes k tokens after the accepted text txt[0..len): vin[0] = txt[len-1],
 * vin[1..k]; txt past len is scratch (the caller's verify overwrites it). */
void drift_draft_propose(drift_draft_t *D, int *vin, int *txt, int len, int k);
void drift_draft_close(drift_draft_t *D);

#endif
