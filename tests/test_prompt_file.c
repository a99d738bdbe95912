/* test_prompt_file.c — prompt files (prompt_file.h), plain and with kinds:
 *   - hand cases: bytes in, the prompts (and kinds) the format's rules give, written next to
 *     each case, or the refusal and the line it names;
 *   - the witness file tests/data/llamacpp_prompts.txt still reads as its records were made
 *     from: 10 prompts, no kinds, the texts as its comment lines describe them. */
#include <criterion/criterion.h>
#include <string.h>

#include "drift.h"
#include "prompt_file.h"

#define WITNESS DRIFT_SOURCE_DIR "/tests/data/llamacpp_prompts.txt"
#define KF "#format: kind\ttext\n"

typedef struct {
    const char *bytes;
    int rc;
    const char *text[4]; /* rc 0: the prompts (NULL-terminated) */
    const char *kind[4]; /* rc 0: their kinds; kind[0] NULL: a file without kinds */
    const char *why;     /* rc != 0: a part of the message */
} pf_case_t;

static const pf_case_t CASES[] = {
    /* plain: one prompt a line, comments and empty lines skipped */
    {"a\nb\n", 0, {"a", "b"}, {NULL}, NULL},
    {"# c\n\nx\\ty\\n\\x41\\\\\n", 0, {"x\ty\nA\\"}, {NULL},
        NULL},                                  /* the four escapes: tab, newline, 0x41 'A', backslash */
    {"\\x23hash", 0, {"#hash"}, {NULL}, NULL},  /* a prompt starting with '#', no final newline */
    {"line\r\n", 0, {"line\r"}, {NULL}, NULL},  /* byte for byte: the CR stays */
    {"k\tv\n", 0, {"k\tv"}, {NULL}, NULL},      /* a tab in a plain file is text */
    {"#format x\nq\n", 0, {"q"}, {NULL}, NULL}, /* no colon: a comment */
    {"a\\q\n", DRIFT_EINVAL, {NULL}, {NULL}, "line 1: unknown escape"},
    {"ok\nend\\", DRIFT_EINVAL, {NULL}, {NULL}, "line 2: a trailing backslash"},
    {"x\\x00\n", DRIFT_EINVAL, {NULL}, {NULL}, "line 1: \\x needs two hex digits"},
    {"# only\n\n", DRIFT_EINVAL, {NULL}, {NULL}, "no prompts"},
    /* with kinds */
    {KF "story\tOnce\\n\nfact\tWhy?\n", 0, {"Once\n", "Why?"}, {"story", "fact"}, NULL},
    {"# head\n" KF "# c\n\ncode\t#include\tx\n", 0, {"#include\tx"}, {"code"},
        NULL}, /* later tabs and a '#' are text */
    {KF "multilingual\t\\x41\nchinese\t\xe7\xa7\x8b\n", 0, {"A", "\xe7\xa7\x8b"}, {"multilingual", "chinese"}, NULL},
    {KF "story Once\n", DRIFT_EINVAL, {NULL}, {NULL}, "line 2: no tab between kind and text"},
    {KF "Story\tX\n", DRIFT_EINVAL, {NULL}, {NULL}, "line 2: kind 'Story' is none of: story fact code list arithmetic"},
    {KF "\tX\n", DRIFT_EINVAL, {NULL}, {NULL}, "line 2: kind '' is none"},
    {KF "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\ty\n", DRIFT_EINVAL, {NULL}, {NULL},
        "kind 'xxxxxxxxxxxxxxxxxxxxxxxx...' is none"},
    {KF "fact\tok\nstory\t\n", DRIFT_EINVAL, {NULL}, {NULL}, "line 3: kind story with an empty text"},
    {KF "fact\tbad\\q\n", DRIFT_EINVAL, {NULL}, {NULL}, "line 2: unknown escape"},
    {"a\n" KF, DRIFT_EINVAL, {NULL}, {NULL}, "line 2: a #format: line must come once, before the first prompt"},
    {KF KF "story\tx\n", DRIFT_EINVAL, {NULL}, {NULL}, "line 2: a #format: line must come once"},
    {"#format: kind text\nstory\tx\n", DRIFT_EINVAL, {NULL}, {NULL}, "line 1: #format: expected 'kind<TAB>text'"},
    {"#format: kind\ttext \n", DRIFT_EINVAL, {NULL}, {NULL}, "line 1: #format: expected"},
    {KF "# nothing\n", DRIFT_EINVAL, {NULL}, {NULL}, "no prompts"},
};

Test(prompt_file, hand_cases)
{
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        const pf_case_t *k = &CASES[c];
        drift_prompt_file_t p;
        char err[256] = "";
        int rc = drift_prompt_file_parse(&p, k->bytes, strlen(k->bytes), "f", err, sizeof err);
        cr_expect_eq(rc, k->rc, "case %zu: rc %d (%s)", c, rc, err);
        if (rc) {
            cr_expect(strstr(err, k->why) != NULL, "case %zu: '%s' lacks '%s'", c, err, k->why);
            cr_expect(!strchr(err, '\n'), "case %zu: one line", c);
            cr_expect_eq(p.n, 0, "case %zu: nothing left", c);
            cr_expect_null(p.text, "case %zu", c);
            cr_expect_null(p.kind, "case %zu", c);
            continue;
        }
        int n = 0;
        while (n < 4 && k->text[n]) n++;
        cr_assert_eq(p.n, n, "case %zu: %d prompts", c, p.n);
        for (int i = 0; i < n; i++) cr_expect_str_eq(p.text[i], k->text[i], "case %zu, prompt %d", c, i);
        if (!k->kind[0])
            cr_expect_null(p.kind, "case %zu: a plain file has no kinds", c);
        else {
            cr_assert_not_null(p.kind, "case %zu", c);
            for (int i = 0; i < n; i++) cr_expect_str_eq(p.kind[i], k->kind[i], "case %zu, kind %d", c, i);
        }
        drift_prompt_file_free(&p);
    }
}

Test(prompt_file, kind_names)
{
    static const struct {
        const char *name;
        int index;
    } K[] = {{"story", 0}, {"fact", 1}, {"code", 2}, {"list", 3}, {"arithmetic", 4}, {"instruction", 5},
        {"dialogue", 6}, {"chinese", 7}, {"multilingual", 8}, {"Story", -1}, {"", -1}, {NULL, -1}};
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++)
        cr_expect_eq(drift_prompt_kind_index(K[i].name), K[i].index, "%s", K[i].name ? K[i].name : "(null)");
}

Test(prompt_file, witness_file_reads_as_before)
{
    drift_prompt_file_t p;
    char err[256];
    cr_assert_eq(drift_prompt_file_read(&p, WITNESS, err, sizeof err), 0, "%s", err);
    cr_expect_eq(p.n, 10); /* prompts 0..9, as its comments number them */
    cr_expect_null(p.kind);
    cr_expect_str_eq(
        p.text[0], "Once upon a time, in a small village at the edge of a great forest, there lived a girl named");
    cr_expect_str_eq(p.text[1], "Question: What is the capital city of Australia?\nAnswer:");
    cr_expect_str_eq(p.text[4], "12 + 35 = 47\n64 - 18 = 46\n7 * 8 =");
    cr_expect_str_eq(p.text[5],
        "<|im_start|>user\nGive me three tips for staying focused while studying.<|im_end|>\n<|im_start|>assistant\n");
    drift_prompt_file_free(&p);
}
