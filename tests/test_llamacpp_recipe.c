/* test_llamacpp_recipe.c — the recipe llamacpp-cpu through the lab's decoder (drift_model,
 * drift_generate), held against llama.cpp's own greedy record (tests/data/llamacpp_smollm2_*.csv,
 * written by tools/peers/llamacpp.sh): prompt 4 ("12 + 35 = 47 ...", 27 tokens), 12 greedy
 * tokens, every token and its top-2 logits bit for bit, for the AVX2 and the AVX-512 build.
 * The tolerance is 0: the recipe claims to be llama.cpp, so any difference is a failure.
 * Skipped when the model or the record is absent. */
#include "llamacpp_twin.h"
#include "model.h"

static void generate_against(const char *record, const char *recipe)
{
    static twin_prompt_t p[TWIN_MAX_PROMPTS];
    if (access(TWIN_MODEL, R_OK) != 0) cr_skip_test("no %s (./lab models get smollm2-135m)", TWIN_MODEL);
    int n = twin_read_record(p, TWIN_MAX_PROMPTS, record);
    if (n < 5) cr_skip_test("no record %s", record);
    drift_checkpoint_t ck;
    char err[DRIFT_LLM_ERR_MAX];
    cr_assert_eq(drift_checkpoint_read(&ck, TWIN_MODEL, err, sizeof err), 0, "%s", err);
    drift_numerics_t nx = drift_numerics_fp32();
    cr_assert_eq(drift_numerics_set_recipe(&nx, recipe), 0);
    drift_model_t *m;
    cr_assert_eq(drift_model_create(&m, &ck, &nx, 1, err, sizeof err), 0, "%s", err);
    const twin_prompt_t *q = &p[4];
    const int steps = 12;
    cr_assert_geq(q->n_steps, steps);
    drift_sampler_t greedy = drift_sampler_default(DRIFT_SAMPLER_GREEDY);
    drift_gen_t g;
    cr_assert_eq(drift_generate(&g, m, q->prompt, q->n_prompt, steps, 0, &greedy, NULL, 0), 0);
    cr_assert_eq(g.n, steps);
    for (int i = 0; i < steps; i++) {
        cr_expect_eq(g.token[i], q->tok[i], "%s step %d: token %d, llama.cpp %d", recipe, i, g.token[i], q->tok[i]);
        cr_expect(twin_same((float)g.top1_logit[i], q->logit[i]), "%s step %d: top-1 logit %a, llama.cpp %a", recipe, i,
            g.top1_logit[i], (double)q->logit[i]);
        cr_expect_eq(g.top2[i], q->second[i], "%s step %d: runner-up", recipe, i);
        cr_expect(twin_same((float)g.top2_logit[i], q->second_logit[i]), "%s step %d: top-2 logit", recipe, i);
    }
    drift_gen_free(&g);
    drift_model_free(m);
    drift_checkpoint_free(&ck);
}

Test(llamacpp_recipe, avx2_build_through_the_decoder, .timeout = 300) { generate_against(TWIN_RECORD, "llamacpp-cpu"); }

Test(llamacpp_recipe, avx512_build_through_the_decoder, .timeout = 300)
{
    generate_against(TWIN_RECORD512, "llamacpp-cpu-avx512");
}

Test(llamacpp_recipe, refuses_a_llama2c_checkpoint)
{
    drift_checkpoint_t ck;
    char err[DRIFT_LLM_ERR_MAX];
    cr_assert_eq(drift_checkpoint_read(&ck, DRIFT_SOURCE_DIR "/models/stories260K.bin", err, sizeof err), 0, "%s", err);
    drift_numerics_t nx = drift_numerics_fp32();
    cr_assert_eq(drift_numerics_set_recipe(&nx, "llamacpp-cpu"), 0);
    drift_model_t *m;
    cr_assert_eq(drift_model_create(&m, &ck, &nx, 1, err, sizeof err), DRIFT_EUNSUPPORTED);
    cr_assert(strstr(err, "needs a GGUF checkpoint"), "%s", err);
    cr_assert_eq(drift_numerics_set_recipe(&nx, "llamacpp-gpu"), DRIFT_EINVAL);
    drift_checkpoint_free(&ck);
}
