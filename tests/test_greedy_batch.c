/* test_greedy_batch.c — greedy decoding of many prompts side by side (greedy_batch.h) on the
 * shipped stories260K checkpoint. Independent source: drift_generate (decode.c) decoding each
 * prompt alone. */
#include <criterion/criterion.h>
#include <string.h>

#include "checkpoint.h"
#include "drift.h"
#include "greedy_batch.h"
#include "model.h"
#include "shipped_model.h"

static drift_checkpoint_t ck;
static void setup(void) { shipped_checkpoint_read(&ck); }
static void teardown(void) { drift_checkpoint_free(&ck); }
TestSuite(greedy_batch, .init = setup, .fini = teardown, .timeout = 300);

/* n prompts side by side give each prompt the tokens and logits it gets decoded alone (by
 * decode.c, under the vendor-like policy: no GEMM of stories260K splits K, model.h). */
Test(greedy_batch, batch_equals_each_prompt_alone)
{
    enum { N = 3, NP = 2, T = 12 };
    const int prompts[N * NP] = {1, 40, 1, 300, 1, 77};
    const int V = ck.cfg.vocab_size;
    drift_model_t *mb = recipe_model(&ck, "fp16/tc:a100/fp32/fp32", DRIFT_POLICY_BATCH_INVARIANT, N);
    drift_model_t *ma = recipe_model(&ck, "fp16/tc:a100/fp32/fp32", DRIFT_POLICY_VENDOR_LIKE, 1);
    drift_gen_t g[N];
    cr_assert_eq(drift_greedy_batch(g, mb, prompts, N, NP, T, 1), 0);
    for (int i = 0; i < N; i++) {
        drift_gen_t alone;
        cr_assert_eq(drift_generate(&alone, ma, prompts + i * NP, NP, T, 0, NULL, NULL, 1), 0);
        cr_assert_eq(alone.n, T);
        cr_assert_eq(g[i].n, T);
        for (int t = 0; t < T; t++) cr_assert_eq(g[i].token[t], alone.token[t], "prompt %d step %d", i, t);
        cr_assert_eq(memcmp(g[i].logits, alone.logits, (size_t)T * (size_t)V * sizeof(double)), 0,
            "prompt %d: logits differ", i);
        drift_gen_free(&alone);
        drift_gen_free(&g[i]);
    }
    drift_gen_t g4[N + 1];
    const int p4[(N + 1) * NP] = {1, 40, 1, 300, 1, 77, 1, 2};
    cr_assert_eq(drift_greedy_batch(g4, mb, p4, N + 1, NP, T, 0), DRIFT_EINVAL, "more prompts than KV slots");
    cr_assert_eq(
        drift_greedy_batch(g4, mb, p4, N, NP, ck.cfg.seq_len, 0), DRIFT_EINVAL, "the context cannot hold them");
    drift_model_free(mb), drift_model_free(ma);
}

/* Prompts of different lengths side by side: each gets what decode.c gives it alone. */
Test(greedy_batch, batch_of_unequal_prompts_equals_each_alone)
{
    enum { N = 3, T = 10 };
    const int p0[1] = {1}, p1[4] = {1, 40, 41, 300}, p2[2] = {1, 77};
    const int *pp[N] = {p0, p1, p2}, np[N] = {1, 4, 2};
    const int V = ck.cfg.vocab_size;
    drift_model_t *mb = recipe_model(&ck, "bf16/tc:h100/fp32/fp32", DRIFT_POLICY_BATCH_INVARIANT, N);
    drift_model_t *ma = recipe_model(&ck, "bf16/tc:h100/fp32/fp32", DRIFT_POLICY_VENDOR_LIKE, 1);
    drift_gen_t g[N];
    cr_assert_eq(drift_greedy_batch_var(g, mb, pp, np, N, T, 1), 0);
    cr_assert_eq(g[0].rows[0], 1 + 4 + 2, "the first step prefills every prompt");
    for (int i = 0; i < N; i++) {
        drift_gen_t alone;
        cr_assert_eq(drift_generate(&alone, ma, pp[i], np[i], T, 0, NULL, NULL, 1), 0);
        cr_assert_eq(g[i].n, T);
        for (int t = 0; t < T; t++) cr_assert_eq(g[i].token[t], alone.token[t], "prompt %d step %d", i, t);
        cr_assert_eq(
            memcmp(g[i].logits, alone.logits, (size_t)T * V * sizeof(double)), 0, "prompt %d: logits bit for bit", i);
        drift_gen_free(&alone), drift_gen_free(&g[i]);
    }
    const int *bad[N] = {p0, NULL, p2};
    cr_assert_eq(drift_greedy_batch_var(g, mb, bad, np, N, T, 0), DRIFT_EINVAL, "a missing prompt");
    const int zero[N] = {1, 0, 2};
    cr_assert_eq(drift_greedy_batch_var(g, mb, pp, zero, N, T, 0), DRIFT_EINVAL, "an empty prompt");
    drift_model_free(mb), drift_model_free(ma);
}
