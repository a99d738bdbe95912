/* texts.c — the texts real_gaps scores (real_gaps_lab.h). */
#include <stdlib.h>

#include "philox.h"
#include "prompt_file.h"
#include "prompt_sample.h"
#include "metrics.h"
#include "real_gaps_lab.h"
#include "tokenizer.h"

/* A GGUF model's prompts: R of the prompt set, drawn without replacement by the seed. */
static void gguf_prompts(
    drift_rg_text_t *tx, int R, int T, const drift_checkpoint_t *ck, const char *path, uint64_t seed)
{
    char err[DRIFT_LLM_ERR_MAX];
    drift_prompt_file_t pf;
    if (drift_prompt_file_read(&pf, path, err, sizeof err)) drift_die("--prompts: %s", err);
    if (R > pf.n) drift_die("--sequences: at most %d (the prompts in %s)", pf.n, path);
    drift_tokenizer_t tz;
    if (drift_tokenizer_from_gguf(&tz, ck->gguf, err, sizeof err)) drift_die("--checkpoint: %s", err);
    int *order = malloc((size_t)R * sizeof(int));
    if (!order) drift_die_oom((double)R * sizeof(int), "the order of %d prompts (--sequences: fewer)", R);
    if (drift_prompt_sample(order, R, &pf, seed, "real_gaps.prompts", err, sizeof err))
        drift_die("--sequences: %s", err);
    for (int s = 0; s < R; s++) {
        int cap = ck->cfg.seq_len, np = 0;
        tx[s].tok = malloc((size_t)cap * sizeof(int));
        if (!tx[s].tok) drift_die_oom((double)cap * sizeof(int), "a text of %d tokens (the checkpoint's context)", cap);
        int rc = drift_tokenizer_encode_ex(&tz, pf.text[order[s]], 1, 1, tx[s].tok, cap, &np);
        if (rc || np < 1 || np + T > cap)
            drift_die(
                "--prompts: prompt %d of %s: %s", order[s], path, rc ? drift_strerror(rc) : "too long for --tokens");
        tx[s].from = np - 1, tx[s].n = np + T;
    }
    free(order);
    drift_tokenizer_free(&tz);
    drift_prompt_file_free(&pf);
}

void drift_rg_texts(drift_rg_text_t *tx, int R, int T, const drift_checkpoint_t *ck, const char *path, uint64_t seed)
{
    if (ck->gguf) {
        gguf_prompts(tx, R, T, ck, path, seed);
        return;
    }
    const size_t V = (size_t)ck->cfg.vocab_size;
    if (T + 2 > ck->cfg.seq_len) drift_die("--tokens: at most %d on this checkpoint", ck->cfg.seq_len - 2);
    for (int s = 0; s < R; s++) { /* BOS, the first token, T generated: every position scored */
        if (!(tx[s].tok = malloc((size_t)(T + 2) * sizeof(int))))
            drift_die_oom((double)(T + 2) * sizeof(int), "a text of %d tokens (--tokens: fewer)", T + 2);
        drift_stream_t st;
        drift_stream_init(&st, seed, drift_fnv1a32("real_gaps.first"), (uint32_t)s, 0);
        tx[s].tok[0] = 1, tx[s].tok[1] = 3 + (int)drift_stream_below(&st, (uint32_t)V - 3); /* not <unk>, BOS or EOS */
        tx[s].from = 0, tx[s].n = T + 2;
    }
}

void drift_rg_greedy(drift_rg_text_t *tx, int R, const drift_checkpoint_t *ck)
{
    const size_t V = (size_t)ck->cfg.vocab_size;
    char err[DRIFT_LLM_ERR_MAX];
    drift_numerics_t nx = drift_numerics_fp32();
    drift_model_t *m;
    double *lg = malloc(V * sizeof(double)); /* one step's logits */
    if (!lg) drift_die_oom((double)V * sizeof(double), "a row of %zu logits", V);
    if (drift_model_create(&m, ck, &nx, 1, err, sizeof err)) drift_die("model: %s", err);
    for (int s = 0; s < R; s++) {
        int *tk = tx[s].tok, first = ck->gguf ? tx[s].from : 1; /* the first step whose choice is kept */
        for (int p = 0; p < tx[s].n - 1; p++) {
            drift_seq_step_t sq = {0, p, 1, &tk[p]};
            if (drift_model_step(m, lg, &sq, 1)) drift_die("forward step failed");
            if (p >= first) {
                drift_top2_t tt;
                drift_top2(&tt, lg, V);
                tk[p + 1] = (int)tt.top1;
            }
        }
    }
    drift_model_free(m);
    free(lg);
}
