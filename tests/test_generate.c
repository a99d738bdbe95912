/* test_generate.c — drift-generate's contract: CSV rows per token, --compare runs exit 0, and
 * every bad option or file is one line on stderr with exit status 2 and nothing on stdout. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

#define GEN DRIFT_BIN_DIR "/drift-generate"
#define CKPT DRIFT_SOURCE_DIR "/models/stories260K.bin"

typedef struct {
    char args[160];
    char expect[80]; /* a piece of the one-line message */
} bad_t;

static bad_t BAD[] = {
    {"--tokens 0", "--tokens: expected an integer"},
    {"--tokens x", "--tokens: expected an integer"},
    {"--batch 0", "--batch: expected an integer"},
    {"--policy fast", "--policy: expected vendor-like or batch-invariant"},
    {"--recipe bf17", "--recipe: expected IN/ORDER/ACC"},
    {"--recipe bf16/tc:v100/fp32", "--recipe: 'bf16/tc:v100/fp32'"},
    {"--recipe bf16/tc:rtx9999/fp32/bf16", "--recipe: unknown tensor-core model or card 'rtx9999'"},
    {"--recipe-lmhead bf16/tc:h10/fp32/bf16", "(did you mean 'h100'?"},
    {"--allreduce star", "--allreduce: expected ring, tree or rank"},
    {"--tp 3", "tp: must divide n_kv_heads 4"},
    {"--prompt-ids 1,x", "--prompt-ids: expected comma-separated ids"},
    {"--prompt-ids 600", "--prompt-ids: expected comma-separated ids in 0 .. 511"},
    {"--prompt hello", "--prompt: needs --tokenizer"},
    {"--checkpoint /nonexistent.bin", "cannot open /nonexistent.bin"},
    {"--checkpoint " DRIFT_SOURCE_DIR "/models/README.md", "README.md: header:"},
    {"--frobnicate 1", "unknown option '--frobnicate'"},
    {"--temperature -1", "--temperature: expected a number"},
    {"--attention flash:64", "--attention: attention kernel"},
    {"--attention splitkv:auto,0", "--attention: attention kernel"},
    {"--kv int4", "--kv:"},
    {"--compare --tokens 5", "--tokens: applies to both runs"},
    {"--tokens", "--tokens: needs a value"},
    {"--beams 2 --temperature 0.7", "not with the sampling option --temperature"},
    {"--beams 2 --top-k 5", "not with the sampling option --top-k"},
    {"--beams 2 --compare --seed 4", "not with the sampling option --seed"},
    {"--beams 2 --batch 4", "--beams: the beams are the batch"},
    {"--beams 2 --exact-gaps", "--beams: not with --exact-gaps"},
    {"--beam-ties unstable", "--beam-ties: needs --beams N"},
    {"--beams 2 --beam-ties random", "--beam-ties: expected stable or unstable"},
    {"--beams 0", "--beams: expected an integer in 1 .. 1024"},
};

ParameterizedTestParameters(generate, bad_input_is_one_line_exit_2)
{
    return cr_make_param_array(bad_t, BAD, sizeof BAD / sizeof BAD[0]);
}

ParameterizedTest(bad_t *t, generate, bad_input_is_one_line_exit_2)
{
    char dir[64], out[128], err[128];
    tmpdir_make(dir, sizeof dir, "drift_gen");
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    int st = sh("%s %s >%s 2>%s", GEN, t->args, out, err);
    cr_assert_eq(st, 2, "'%s' exited %d", t->args, st);
    char *o = slurp(out), *e = slurp(err);
    cr_assert_eq(strlen(o), 0, "stdout not empty: %s", o);
    char *nl = strchr(e, '\n');
    cr_assert(nl && nl[1] == 0, "not one line: %s", e);
    cr_assert(strstr(e, t->expect), "'%s' lacks '%s'", e, t->expect);
    free(o), free(e);
    tmpdir_remove(dir);
}

Test(generate, csv_and_compare)
{
    char dir[64], out[128], err[128];
    tmpdir_make(dir, sizeof dir, "drift_gen");
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    cr_assert_eq(sh("%s --checkpoint %s --tokens 12 --exact-gaps >%s 2>%s", GEN, CKPT, out, err), 0);
    char *o = slurp(out);
    cr_assert(!strncmp(o, "step,token,text,top1_logit,top2_token,top2_logit,gap,exact_gap\n", 63), "%s", o);
    int rows = 0;
    for (char *p = o; *p; p++) rows += *p == '\n';
    cr_assert_eq(rows, 13, "a header and 12 tokens");
    free(o);
    cr_assert_eq(
        sh("%s --checkpoint %s --tokens 8 --compare --tp 2 --allreduce tree >%s 2>%s", GEN, CKPT, out, err), 0);
    char *e = slurp(err);
    cr_assert(strstr(e, "Against"), "%s", e);
    free(e);
    cr_assert_eq(sh("%s --checkpoint %s --tokens 4 --json >%s 2>%s", GEN, CKPT, out, err), 0);
    o = slurp(out);
    cr_assert(o[0] == '{' && strstr(o, "\"steps\""), "%s", o);
    free(o);
    tmpdir_remove(dir);
}

/* --beams 1 is greedy: the same token column as the greedy CSV (both stop at BOS). */
Test(generate, one_beam_csv_is_greedy)
{
    char dir[64], out[128], out2[128], err[128];
    tmpdir_make(dir, sizeof dir, "drift_gen");
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(out2, sizeof out2, "%s/out2", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    cr_assert_eq(sh("%s --checkpoint %s --tokens 16 2>%s | cut -d, -f2 >%s", GEN, CKPT, err, out), 0);
    cr_assert_eq(sh("%s --checkpoint %s --tokens 16 --beams 1 >%s 2>%s", GEN, CKPT, out2, err), 0);
    char *b = slurp(out2);
    cr_assert(!strncmp(b, "step,token,text,logprob,score\n", 30), "%s", b);
    free(b);
    cr_assert_eq(sh("cut -d, -f2 %s | tail -n +2 >%s.tok && tail -n +2 %s | cmp -s - %s.tok", out2, out2, out, out2), 0,
        "--beams 1 tokens differ from greedy");
    cr_assert_eq(
        sh("%s --checkpoint %s --tokens 8 --beams 3 --beam-ties unstable --beam-seed 5 >%s 2>%s", GEN, CKPT, out, err),
        0);
    char *e = slurp(err);
    cr_assert(strstr(e, "beams=3 ties=unstable beam-seed=5") && strstr(e, "exact score ties"), "%s", e);
    free(e);
    tmpdir_remove(dir);
}

/* A card names its tensor-core model (cards.h: the RTX 4090 is an Ada card, tc:ada): a decoder
 * recipe on tc:rtx4090 (in any case, '-' ignored) computes what tc:ada computes, bit for bit, and
 * the run prints the model's canonical name, not the card's. */
Test(generate, a_card_in_a_recipe_is_its_tensor_core_model)
{
    char dir[64], a[128], b[128], c[128];
    tmpdir_make(dir, sizeof dir, "drift_gen_card");
    snprintf(a, sizeof a, "%s/ada", dir);
    snprintf(b, sizeof b, "%s/card", dir);
    snprintf(c, sizeof c, "%s/Card", dir);
    cr_assert_eq(sh("%s --checkpoint %s --tokens 6 --recipe bf16/tc:ada/fp32/bf16 >%s 2>%s.err", GEN, CKPT, a, a), 0);
    cr_assert_eq(
        sh("%s --checkpoint %s --tokens 6 --recipe bf16/tc:rtx4090/fp32/bf16 >%s 2>%s.err", GEN, CKPT, b, b), 0);
    cr_assert_eq(
        sh("%s --checkpoint %s --tokens 6 --recipe-lmhead bf16/tc:RTX-4090/fp32/bf16 --recipe bf16/tc:ada/fp32/bf16 >%s 2>%s.err",
            GEN, CKPT, c, c),
        0);
    char *x = slurp(a), *y = slurp(b), *z = slurp(c);
    cr_assert(x && y && z && strlen(x) > 0);
    cr_expect_str_eq(y, x, "tc:rtx4090 and tc:ada computed other tokens or logits");
    cr_expect_str_eq(z, x, "tc:RTX-4090 on the LM head and tc:ada computed other tokens or logits");
    char e[160];
    snprintf(e, sizeof e, "%s.err", b);
    char *said = slurp(e);
    cr_expect(strstr(said, "qkv=bf16/tc:ada/fp32/bf16") && !strstr(said, "rtx4090"),
        "the run does not name the model: %s", said);
    free(x), free(y), free(z), free(said);
    tmpdir_remove(dir);
}
