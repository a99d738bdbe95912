/* test_lab_prompts.c — the shipped prompt set prompts/lab-prompts.txt (prompts/README.md):
 *   - it reads as a kinds file, holds at least 512 prompts, every kind at least 40 of them (the
 *     set's promise), and no prompt twice;
 *   - with SmolLM2-135M-Instruct present: every prompt, wrapped in the model's chat template,
 *     tokenizes (llama.cpp's rules: add_special, parse_special) to at most 120 tokens, the
 *     budget the deployments experiment gives a prompt, and at least 25 (the default system turn
 *     alone is 20 of them: a wrapped prompt below that was not wrapped). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat_template.h"
#include "drift.h"
#include "gguf.h"
#include "prompt_file.h"
#include "tokenizer.h"

#define LAB_PROMPTS DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt"
#define SMOLLM2 DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
#define MAX_TOKENS 120

Test(lab_prompts, the_set_keeps_its_promise)
{
    char err[256];
    drift_prompt_file_t p;
    cr_assert_eq(drift_prompt_file_read(&p, LAB_PROMPTS, err, sizeof err), 0, "%s", err);
    cr_assert_not_null(p.kind, "the set must declare its kinds");
    cr_expect_geq(p.n, 512);
    int count[DRIFT_PROMPT_N_KINDS] = {0};
    for (int i = 0; i < p.n; i++) {
        int k = drift_prompt_kind_index(p.kind[i]);
        cr_assert_geq(k, 0);
        count[k]++;
        for (int j = 0; j < i; j++) cr_expect_str_neq(p.text[i], p.text[j], "prompt %d repeats prompt %d", i, j);
    }
    for (int k = 0; k < DRIFT_PROMPT_N_KINDS; k++)
        cr_expect_geq(count[k], 40, "kind %s: %d prompts", drift_prompt_kinds[k], count[k]);
    drift_prompt_file_free(&p);
}

Test(lab_prompts, every_wrapped_prompt_fits)
{
    FILE *fp = fopen(SMOLLM2, "rb");
    if (!fp) cr_skip_test("skipped: %s is absent (./lab models get smollm2-135m)", SMOLLM2);
    fclose(fp);
    char err[256];
    drift_gguf_t g;
    drift_tokenizer_t t;
    drift_chat_template_t ct;
    drift_prompt_file_t p;
    cr_assert_eq(drift_gguf_open(&g, SMOLLM2, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_tokenizer_from_gguf(&t, &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_chat_template_from_gguf(&ct, &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(ct.family, DRIFT_CHAT_CHATML);
    cr_assert_eq(drift_prompt_file_read(&p, LAB_PROMPTS, err, sizeof err), 0, "%s", err);
    int most = 0, least = 1 << 30, at = -1;
    for (int i = 0; i < p.n; i++) {
        char wrapped[4096];
        int ids[512], n = 0;
        cr_assert_eq(drift_chat_wrap(wrapped, sizeof wrapped, &ct, p.text[i], NULL, err, sizeof err), 0, "%s", err);
        cr_assert_eq(drift_tokenizer_encode_ex(&t, wrapped, 1, 1, ids, 512, &n), 0, "prompt %d", i);
        cr_expect_leq(n, MAX_TOKENS, "prompt %d (%s): %d tokens", i, p.kind[i], n);
        if (n > most) most = n, at = i;
        if (n < least) least = n;
    }
    cr_expect_geq(least, 25);
    cr_log_info("wrapped prompts: %d to %d tokens (the longest: prompt %d)", least, most, at);
    drift_prompt_file_free(&p);
    drift_tokenizer_free(&t);
    drift_gguf_close(&g);
}
