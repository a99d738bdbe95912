/* test_speculative_exp.c — the speculative experiment end to end: bad options are one line,
 * exit 2 and no file; at the quick profile, under batch-invariant kernels every speculative
 * text equals plain greedy (each row's bits cannot depend on M: policy.h's batch-invariant
 * definition, one fixed tile and no split-K). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#define EXP DRIFT_BIN_DIR "/speculative"

static char dir[64];
static void make_dir(void)
{
    tmpdir_make(dir, sizeof dir, "drift_spec");
}
static void remove_dir(void)
{
    tmpdir_remove(dir);
}

TestSuite(speculative_exp, .init = make_dir, .fini = remove_dir, .timeout = 120);

Test(speculative_exp, bad_options_exit_2_one_line_no_file)
{
    const char *const bad[] = {"--prompts 0", "--tokens 0", "--tokens 600", "--draft 0", "--draft 2,x", "--draft 65",
                         "--sms 0", "--min-slice 0", "--checkpoint /nonexistent.bin", "--orders seq"};
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
