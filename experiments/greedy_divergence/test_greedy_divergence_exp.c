/* test_greedy_divergence_exp.c — the greedy_divergence experiment end to end: bad options are
 * one line, exit 2 and no file; at the quick profile, batch-invariant kernels with a fixed
 * split size give exactly one completion (on a small R). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#define EXP DRIFT_BIN_DIR "/greedy_divergence"

static char dir[64];
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_greedydiv"); }
static void remove_dir(void) { tmpdir_remove(dir); }

TestSuite(greedy_divergence_exp, .init = make_dir, .fini = remove_dir, .timeout = 300);

Test(greedy_divergence_exp, bad_options_exit_2_one_line_no_file)
{
    const char *const bad[] = {"--requests 0", "--tokens 0", "--configs nope", "--prompt-ids 1,x", "--prompt-ids 99999",
        "--checkpoint /nonexistent.bin", "--profile quick --tokens 600", "--orders seq", "--batch-max 0"};
    expect_bad_options(EXP, bad, sizeof bad / sizeof bad[0], dir, "greedy_divergence_summary.csv");
}

Test(greedy_divergence_exp, invariant_fixed_size_gives_one_completion)
{
    cr_assert_eq(
        sh("%s --profile quick --requests 6 --tokens 24 --configs invariant-bf16-splitkv-size,invariant-fp32-splitkv-size "
           "--quiet --out %s/ok",
            EXP, dir),
        0);
    char p[256];
    snprintf(p, sizeof p, "%s/ok/greedy_divergence_summary.csv", dir);
    char *s = slurp(p);
    int rows = 0;
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
        if (l[0] == '#' || !strncmp(l, "config,", 7)) continue;
        /* distinct_completions is column 12 */
        char *f = l;
        for (int c = 1; c < 12 && f; c++) f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
        cr_assert(f && atoi(f) == 1, "not one completion: %s", l);
        rows++;
    }
    cr_assert_eq(rows, 2);
    free(s);
}
