/* test_gpu_generations_greedy.c — the greedy text of every architecture (arch_greedy.h) and
 * the experiment's contract.
 *
 * Independent sources: greedy_batch.h decoding each recipe with its own model; the tensor-core
 * probe of test_tc_model.c (section B3, hand-derived from the A100/H100 alignment widths)
 * planted in a hand-built checkpoint whose logits are that dot product; hand counts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_greedy.h"
#include "checkpoint.h"
#include "drift.h"
#include "greedy_batch.h"
#include "model.h"
#include "pair_stats.h"
#include "shipped_model.h"
#include "support.h"
#include "tc_model.h"

#define EXP DRIFT_BIN_DIR "/gpu_generations_greedy"

static drift_checkpoint_t ck;
static char dir[64];
static void setup(void)
{
    shipped_checkpoint_read(&ck);
    tmpdir_make(dir, sizeof dir, "drift_gpugen");
}
static void teardown(void)
{
    drift_checkpoint_free(&ck);
    tmpdir_remove(dir);
}
TestSuite(gpu_generations_greedy, .init = setup, .fini = teardown, .timeout = 300);

/* B200 shares H100's decode because their rows of the architecture table agree (tc_model.h:
 * both blocks of 16, 2 extra alignment bits, RZ); A100's row differs (blocks of 8, 1 bit).
 * The sharing is only sound if the two recipes give the same bits: checked here by decoding
 * both for real, each with its own model. */
Test(gpu_generations_greedy, same_table_row_shares_the_decode)
{
    enum { R = 2, T = 12 };
    const drift_tc_arch_t arch[3] = {DRIFT_TC_A100, DRIFT_TC_H100, DRIFT_TC_B200};
    int ok[3];
    drift_arch_greedy_t *g;
    char err[256];
    cr_assert_eq(drift_arch_greedy_create(&g, &ck, DRIFT_BF16, arch, 3, R, ok, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_arch_greedy_same_as(g, 0), -1);
    cr_assert_eq(drift_arch_greedy_same_as(g, 1), -1, "H100 and A100 compute differently");
    cr_assert_eq(drift_arch_greedy_same_as(g, 2), 1, "B200 decodes as H100");
    drift_arch_greedy_free(g);
    const int prompts[R * 2] = {1, 123, 1, 456};
    drift_model_t *mh = recipe_model(&ck, "bf16/tc:h100/fp32/fp32", DRIFT_POLICY_BATCH_INVARIANT, R);
    drift_model_t *mb = recipe_model(&ck, "bf16/tc:b200/fp32/fp32", DRIFT_POLICY_BATCH_INVARIANT, R);
    drift_gen_t gh[R], gb[R];
    cr_assert_eq(drift_greedy_batch(gh, mh, prompts, R, 2, T, 1), 0);
    cr_assert_eq(drift_greedy_batch(gb, mb, prompts, R, 2, T, 1), 0);
    for (int r = 0; r < R; r++) {
        cr_assert_eq(
            memcmp(gh[r].logits, gb[r].logits, (size_t)T * ck.cfg.vocab_size * sizeof(double)), 0, "prompt %d", r);
        drift_gen_free(&gh[r]), drift_gen_free(&gb[r]);
    }
    drift_model_free(mh), drift_model_free(mb);
}

/* The same recipe under two names computes the same bits: no completion parts. */
Test(gpu_generations_greedy, same_recipe_twice_never_parts)
{
    enum { R = 2, T = 16 };
    const drift_tc_arch_t arch[2] = {DRIFT_TC_A100, DRIFT_TC_A100};
    const int prompts[R * 2] = {1, 200, 1, 450};
    int ok[2];
    drift_arch_greedy_t *g;
    char err[256];
    cr_assert_eq(drift_arch_greedy_create(&g, &ck, DRIFT_BF16, arch, 2, R, ok, err, sizeof err), 0, "%s", err);
    cr_assert(ok[0] && ok[1]);
    drift_parting_t part[R * 3];
    double gaps[R * T];
    const int *pp[R] = {prompts, prompts + 2}, np[R] = {2, 2};
    cr_assert_eq(drift_arch_greedy_run(g, part, gaps, pp, np, T, err, sizeof err), 0, "%s", err);
    for (int r = 0; r < R; r++) cr_assert_eq(part[r * 3 + drift_pair_index(0, 1, 2)].step, -1, "prompt %d", r);
    for (int i = 0; i < R * T; i++) cr_assert_geq(gaps[i], 0, "top-1 minus top-2 is never negative");
    cr_assert_eq(drift_arch_greedy_exact_steps(g), 0, "no parting, no exact step");
    drift_arch_greedy_free(g);
    /* V100 has no bf16 path: flagged, no model */
    const drift_tc_arch_t va[2] = {DRIFT_TC_V100, DRIFT_TC_A100};
    cr_assert_eq(drift_arch_greedy_create(&g, &ck, DRIFT_BF16, va, 2, R, ok, err, sizeof err), 0, "%s", err);
    cr_assert(!ok[0] && ok[1]);
    drift_arch_greedy_free(g);
}

/* Hand case: test_tc_model.c's probe B3 in the LM head of a hand-built model.
 * h = (1, 0 x 7, 0.5 x 4, 0 x 4) and row 3 of the classifier w3 = (1, 0 x 7, 2^-24 x 4, 0 x 4):
 * exactly 1 + 4 * 2^-25 = 1 + 2^-23. fp16 inputs, fp32 output:
 *   A100 (blocks of 8, 1 extra alignment bit, RZ): block 1 gives 1; block 2 adds its four
 *     2^-25 to c = 1 with lsb 2^-24: truncated, 1.
 *   H100 (blocks of 16, 2 extra bits): one block, lsb 2^-25 keeps them: 1 + 2^-23.
 * Row 2 is e_0: logit exactly 1 on both. So A100 ties rows 2 and 3 and greedy takes the first
 * (2); H100 takes 3: the texts part at step 0, the spread there is 2^-23, and the exact model
 * gives E[2] - E[3] = -2^-23 (up to the exact RMSNorm's factor 1/sqrt(1 + 1e-5 / 2^20), see
 * below) with 3 its argmax.
 * The model is made a pass-through: every token's embedding is 1024 in every channel; wo = 0
 * and w2 = 0, so each layer adds exactly 0 and x stays the embedding; the final RMSNorm of
 * x = 1024 (fp32: sum of squares 2^24 exact, 2^20 + 1e-5 rounds to 2^20, 1/sqrt = 2^-10)
 * gives exactly its weights, which hold h. */
Test(gpu_generations_greedy, tensor_core_probe_propagates_to_the_text)
{
    const double u24 = 0x1p-24;
    double h[16] = {1, 0, 0, 0, 0, 0, 0, 0, .5, .5, .5, .5}, w3[16] = {1, 0, 0, 0, 0, 0, 0, 0, u24, u24, u24, u24};
    double r;
    cr_assert_eq(drift_tc_dot(&r, h, w3, 16, NULL, DRIFT_TC_A100, DRIFT_FP16, DRIFT_FP32), 0);
    cr_assert_eq(r, 1.0, "A100: the probe as derived");
    cr_assert_eq(drift_tc_dot(&r, h, w3, 16, NULL, DRIFT_TC_H100, DRIFT_FP16, DRIFT_FP32), 0);
    cr_assert_eq(r, 1 + 0x1p-23, "H100: the probe as derived");

    drift_llm_config_t cfg = {16, 16, 1, 2, 2, 8, 8, 0, 0, 0};
    drift_checkpoint_t hc;
    char err[256];
    cr_assert_eq(drift_checkpoint_synth(&hc, &cfg, 1, err, sizeof err), 0, "%s", err);
    cr_assert(hc.wcls != hc.token_embedding, "a separate classifier");
    for (int i = 0; i < 8 * 16; i++) hc.token_embedding[i] = 1024.0f, hc.wcls[i] = 0.0f;
    for (int i = 0; i < 16 * 16; i++) hc.wo[i] = 0.0f;
    for (int i = 0; i < 16 * 16; i++) hc.w2[i] = 0.0f;
    for (int i = 0; i < 16; i++) hc.rms_final[i] = (float)h[i], hc.wcls[3 * 16 + i] = (float)w3[i];
    hc.wcls[2 * 16 + 0] = 1.0f;

    const drift_tc_arch_t arch[2] = {DRIFT_TC_A100, DRIFT_TC_H100};
    const int prompt[2] = {1, 5};
    int ok[2];
    drift_arch_greedy_t *g;
    cr_assert_eq(drift_arch_greedy_create(&g, &hc, DRIFT_FP16, arch, 2, 1, ok, err, sizeof err), 0, "%s", err);
    drift_parting_t part[3];
    const int *pp[1] = {prompt}, np[1] = {2};
    cr_assert_eq(drift_arch_greedy_run(g, part, NULL, pp, np, 3, err, sizeof err), 0, "%s", err);
    const drift_parting_t *p = &part[drift_pair_index(0, 1, 2)];
    cr_assert_eq(p->step, 0);
    cr_assert_eq(p->tok_a, 2, "A100 ties and takes the first");
    cr_assert_eq(p->tok_b, 3);
    cr_assert_eq(p->spread, 0x1p-23);
    cr_assert_eq(p->exact_top1, 3);
    /* the exact RMSNorm scales by 1/sqrt(1 + 1e-5 * 2^-20) = 1 - 4.8e-12: relative 1e-10 is
     * far above that and far below anything else the gap could be */
    cr_assert(fabs(p->gap_ab + 0x1p-23) <= 1e-10 * 0x1p-23, "exact gap %a", p->gap_ab);
    cr_assert(fabs(p->gap12 - 0x1p-23) <= 1e-10 * 0x1p-23, "exact top-1/top-2 gap %a", p->gap12);
    drift_arch_greedy_free(g);
    drift_checkpoint_free(&hc);
}

Test(gpu_generations_greedy, bad_options_exit_2_one_line_no_file)
{
    const char *const bad[] = {"--prompts 0", "--tokens 0", "--tokens 600", "--prompts x",
        "--checkpoint /nonexistent.bin", "--archs h100", "--archs a100,a100", "--orders seq"};
    expect_bad_options(EXP " --profile quick", bad, sizeof bad / sizeof bad[0], dir, "gpu_generations_greedy.csv");
}

Test(gpu_generations_greedy, quick_run_greedy_tables)
{
    cr_assert_eq(sh("%s --profile quick --archs a100,h100,b200 --text-formats fp16 --quiet --out %s/ok", EXP, dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/ok/gpu_generations_greedy.csv", dir);
    char *s = slurp(p);
    int rows = 0;
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n"))
        if (l[0] != '#' && strncmp(l, "seed,", 5)) {
            rows++;
            /* H100 and B200 share one row of the architecture table: never a parting */
            if (strstr(l, ",h100,b200,")) cr_assert(strstr(l, ",2,8,0,"), "%s", l);
        }
    cr_assert_eq(rows, 9, "3 seeds x 3 pairs at the quick profile");
    free(s);
    snprintf(p, sizeof p, "%s/ok/gpu_generations_greedy.md", dir);
    s = slurp(p);
    cr_assert(strstr(s, "Greedy text (stories260K)") && !strstr(s, "TODO"));
    free(s);
}

Test(gpu_generations_greedy, fragment_of_the_quick_profile)
{
    cr_assert_eq(sh("%s --profile quick --quiet --out %s/gen", EXP, dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/gen/gpu_generations_greedy.md", dir);
    char *t = slurp(p);
    cr_assert(strstr(t, "**Question.**") && strstr(t, "**Takeaway.**"));
    cr_assert(strstr(t, "Greedy text (stories260K)"), "the greedy-text part is measured");
    free(t);
}
