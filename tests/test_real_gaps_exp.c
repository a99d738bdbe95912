/* test_real_gaps_exp.c — the real_gaps experiment end to end: bad options are one line, exit 2
 * and no file; at the quick profile every exact gap is >= 0 (top-1 minus top-2 by definition)
 * and the histogram counts every position once. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#define EXP DRIFT_BIN_DIR "/real_gaps"

static char dir[64];
static void make_dir(void)
{
    tmpdir_make(dir, sizeof dir, "drift_realgaps");
}
static void remove_dir(void)
{
    tmpdir_remove(dir);
}

TestSuite(real_gaps_exp, .init = make_dir, .fini = remove_dir, .timeout = 120);

Test(real_gaps_exp, bad_options_exit_2_one_line_no_file)
{
    const char *const bad[] = {"--sequences 0", "--tokens 0", "--profile quick --tokens 600", "--checkpoint /nonexistent.bin", "--orders seq",
                         "--sequences x"};
    expect_bad_options(EXP, bad, sizeof bad / sizeof bad[0], dir, "real_gaps.csv");
}

Test(real_gaps_exp, gaps_nonnegative_and_histogram_complete)
{
    cr_assert_eq(sh("%s --profile quick --sequences 2 --tokens 16 --quiet --out %s/ok", EXP, dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/ok/real_gaps.csv", dir);
    char *s = slurp(p);
    long positions = 0;
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
        if (l[0] == '#' || !strncmp(l, "seq,", 4)) continue;
        int seq, pos, tok, t1, t2;
        double gap;
        cr_assert_eq(sscanf(l, "%d,%d,%d,%d,%d,%lf", &seq, &pos, &tok, &t1, &t2, &gap), 6, "%s", l);
        cr_assert(gap >= 0 && t1 != t2, "%s", l);
        positions++;
    }
    free(s);
    cr_assert_eq(positions, 2 * 18); /* BOS, the first token and 16 generated: T + 2 per text */
    snprintf(p, sizeof p, "%s/ok/real_gaps_hist.csv", dir);
    s = slurp(p);
    long sum = 0;
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
        if (l[0] == '#' || !strncmp(l, "bin_lo,", 7)) continue;
        double lo, hi;
        long c;
        cr_assert_eq(sscanf(l, "%lf,%lf,%ld", &lo, &hi, &c), 3, "%s", l);
        sum += c;
    }
    free(s);
    cr_assert_eq(sum, positions, "a gap above 1e2 logits or a lost bin");
}
