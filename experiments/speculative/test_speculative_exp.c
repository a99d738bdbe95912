/* test_speculative_exp.c — the speculative experiment end to end: bad options are one line,
 * exit 2 and no file; at the quick profile (stories260K), under batch-invariant kernels every
 * speculative text equals plain greedy (each row's bits cannot depend on M: policy.h's
 * batch-invariant definition, one fixed tile and no split-K), and a draft length's rows do not
 * depend on which other lengths share the draft; with SmolLM2-135M (skipped when absent), the
 * default path's plan table says what policy.h's rules say for the model's GEMM shapes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#define EXP DRIFT_BIN_DIR "/speculative"
#define SMOLLM2 DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf"

static char dir[64];
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_spec"); }
static void remove_dir(void) { tmpdir_remove(dir); }

TestSuite(speculative_exp, .init = make_dir, .fini = remove_dir, .timeout = 300);

Test(speculative_exp, bad_options_exit_2_one_line_no_file)
{
    /* the checkpoint's limits at the quick profile: stories260K (context 512, no tokenizer) */
    const char *const bad[] = {"--prompts 0", "--tokens 0", "--profile quick --tokens 600", "--draft 0", "--draft 2,x",
        "--draft 257", "--sms 0", "--min-slice 0", "--checkpoint /nonexistent.bin", "--orders seq",
        "--profile quick --prompt-set " DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt"};
    expect_bad_options(EXP, bad, sizeof bad / sizeof bad[0], dir, "speculative.csv");
}

Test(speculative_exp, batch_invariant_equals_plain_greedy)
{
    cr_assert_eq(sh("%s --profile quick --draft 3 --quiet --out %s/ok", EXP, dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/ok/speculative.csv", dir);
    char *s = slurp(p);
    int rows = 0;
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
        if (strncmp(l, "invariant-", 10)) continue;
        char *last = strrchr(l, ',');
        cr_assert(last && atoi(last + 1) == 1, "speculative text differs under batch-invariant kernels: %s", l);
        rows++;
    }
    cr_assert_eq(rows, 4); /* 2 invariant configurations x 2 prompts at the quick profile */
    free(s);
}

/* The data rows (no # lines) of a CSV whose second column, k, is `k`, in file order. */
static char *rows_of_k(const char *path, int k)
{
    char *s = slurp(path), *o = calloc(strlen(s) + 1, 1);
    cr_assert(o);
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
        const char *c = strchr(l, ',');
        if (l[0] == '#' || !c || atoi(c + 1) != k || !strncmp(l, "config,", 7)) continue;
        strcat(o, l), strcat(o, "\n");
    }
    free(s);
    return o;
}

/* The draft answers every context once for all draft lengths and configurations: a length's
 * rows must be those it gets when it runs alone (tokens long enough for several passes). */
Test(speculative_exp, draft_length_rows_do_not_depend_on_the_other_lengths)
{
    cr_assert_eq(sh("%s --profile quick --draft 2 --tokens 40 --prompts 3 --quiet --out %s/a", EXP, dir), 0);
    cr_assert_eq(sh("%s --profile quick --draft 5,2,1 --tokens 40 --prompts 3 --quiet --out %s/b", EXP, dir), 0);
    char pa[256], pb[256];
    snprintf(pa, sizeof pa, "%s/a/speculative.csv", dir);
    snprintf(pb, sizeof pb, "%s/b/speculative.csv", dir);
    char *a = rows_of_k(pa, 2), *b = rows_of_k(pb, 2);
    cr_assert_gt(strlen(a), 0);
    cr_assert_str_eq(a, b);
    free(a), free(b);
}

/* SmolLM2-135M on an H100 as it is (132 SMs, split-K slices >= 256, at most 16 splits), by
 * hand from policy.h's rules (and rechecked by a separate script of the four tiles): at M = 1
 * no GEMM fills the device, so each splits K by the largest power of two <= min(132 / tiles,
 * K / 256, 16) with tiles the most any candidate gives: q, o (576 x 576): 9 tiles -> 2; k, v
 * (192 x 576): 3 -> 2; gate, up (1536 x 576): 24 -> 2; down (576 x 1536): 9 -> 4; the LM head
 * (49152 x 576) fills it with 384 128x128 tiles -> 1. The splits stay while 132 / tiles keeps
 * them: gate and up get 48 tiles up to M = 128 (132 / 48 = 2) and 72 from M = 129 (132 / 72
 * = 1: no split). So the first pass that changes the kernels is M = 129, and the table runs to
 * twice that less one, 257; batch-invariant never changes (one tile, no split). */
Test(speculative_exp, smollm2_plan_table_changes_at_129)
{
    FILE *fp = fopen(SMOLLM2, "rb");
    if (!fp) cr_skip_test("skipped: %s is absent (./lab models get smollm2-135m)", SMOLLM2);
    fclose(fp);
    cr_assert_eq(sh("%s --prompts 1 --tokens 2 --draft 1 --quiet --out %s/s", EXP, dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/s/speculative_plans.csv", dir);
    char *s = slurp(p);
    int first = -1, last_vendor = 0, invariant_changes = 0, invariant_rows = 0;
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
        int M, d;
        if (sscanf(l, "vendor-like,%d,%d", &M, &d) == 2) {
            if (d && first < 0) first = M;
            cr_assert(first < 0 || d, "vendor-like kernels back to M = 1's at M = %d", M);
            last_vendor = M;
        } else if (sscanf(l, "batch-invariant,%d,%d", &M, &d) == 2)
            invariant_changes += d, invariant_rows++;
    }
    free(s);
    cr_assert_eq(first, 129);
    cr_assert_eq(last_vendor, 257);
    cr_assert_eq(invariant_rows, 256); /* M = 2 .. 257 */
    cr_assert_eq(invariant_changes, 0);
    /* the prompt is one of the set, chat-wrapped: its kind is named and it outgrows BOS */
    snprintf(p, sizeof p, "%s/s/speculative.csv", dir);
    s = slurp(p);
    cr_assert(strstr(s, "\nconfig,k,prompt,set_index,kind,prompt_tokens,tokens,"), "no chat-prompt columns");
    int rows = 0;
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
        char conf[32], kind[32];
        int k, r, idx, np;
        if (sscanf(l, "%31[^,],%d,%d,%d,%31[^,],%d,", conf, &k, &r, &idx, kind, &np) != 6) continue;
        cr_assert(np > 2 && strcmp(kind, "-"), "%s", l);
        if (!strncmp(conf, "invariant-", 10)) cr_assert_eq(atoi(strrchr(l, ',') + 1), 1, "%s", l);
        rows++;
    }
    cr_assert_eq(rows, 4); /* 4 configurations x 1 draft length x 1 prompt */
    free(s);
    /* the model's context (1024) bounds the tokens */
    cr_assert_eq(sh("%s --tokens 1022 --draft 1 --quiet --out %s/bad 2>/dev/null", EXP, dir), 2);
}
