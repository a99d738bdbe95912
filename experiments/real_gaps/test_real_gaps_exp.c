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
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_realgaps"); }
static void remove_dir(void) { tmpdir_remove(dir); }

TestSuite(real_gaps_exp, .init = make_dir, .fini = remove_dir, .timeout = 120);

Test(real_gaps_exp, bad_options_exit_2_one_line_no_file)
{
    const char *const bad[] = {"--sequences 0", "--tokens 0", "--profile quick --tokens 600",
        "--checkpoint /nonexistent.bin", "--orders seq", "--sequences x"};
    expect_bad_options(EXP, bad, sizeof bad / sizeof bad[0], dir, "real_gaps.csv");
}

Test(real_gaps_exp, gaps_nonnegative_and_histogram_complete)
{
    cr_assert_eq(sh("%s --profile quick --sequences 2 --tokens 16 --quiet --out %s/ok", EXP, dir), 0);
    char *s = slurp_in(dir, "ok/real_gaps.csv");
    long positions = 0;
    FOR_CSV_ROWS (l, s, "seq,") {
        int seq, pos, tok, t1, t2;
        double gap;
        cr_assert_eq(sscanf(l, "%d,%d,%d,%d,%d,%lf", &seq, &pos, &tok, &t1, &t2, &gap), 6, "%s", l);
        cr_assert(gap >= 0 && t1 != t2, "%s", l);
        positions++;
    }
    free(s);
    cr_assert_eq(positions, 2 * 18); /* BOS, the first token and 16 generated: T + 2 per text */
    s = slurp_in(dir, "ok/real_gaps_hist.csv");
    long sum = 0;
    FOR_CSV_ROWS (l, s, "bin_lo,") {
        double lo, hi;
        long c;
        cr_assert_eq(sscanf(l, "%lf,%lf,%ld", &lo, &hi, &c), 3, "%s", l);
        sum += c;
    }
    free(s);
    cr_assert_eq(sum, positions, "a gap above 1e2 logits or a lost bin");
}

/* The error-law table: each binade's q is the output format's spacing there (hand values:
 * at [2^k, 2^(k+1)) bf16 keeps 8 significant bits, fp16 11, fp32 24, so q = 2^(k-7), 2^(k-10),
 * 2^(k-23); LayerCast stores fp32 logits), the winner is a stated law or undecided, and the
 * position table covers every scored position of every configuration once. */
Test(real_gaps_exp, error_law_tables)
{
    cr_assert_eq(sh("%s --profile quick --sequences 2 --tokens 16 --quiet --out %s/law", EXP, dir), 0);
    char *s = slurp_in(dir, "law/real_gaps_errlaw.csv");
    int rows = 0;
    FOR_CSV_ROWS (l, s, "config,") {
        char cf[32], win[32];
        double lo, hi, q;
        long n;
        int folds;
        cr_assert_eq(sscanf(l, "%31[^,],%lf,%lf,%ld,%d,%lf,%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%31s", cf,
                         &lo, &hi, &n, &folds, &q, win),
            7, "%s", l);
        int k = (int)lround(log2(lo)), bits = !strcmp(cf, "bf16") ? 8 : !strcmp(cf, "fp16") ? 11 : 24;
        cr_assert(hi == 2 * lo && lo == ldexp(1, k), "%s", l);
        cr_assert(fabs(q / ldexp(1, k - bits + 1) - 1) < 1e-5, "%s: q %g, expected 2^%d (printed to 6 digits)", l, q,
            k - bits + 1);
        cr_assert(n >= 100 && folds >= 1 && folds <= 2, "%s", l);
        cr_assert(!strcmp(win, "conv") || !strcmp(win, "gauss") || !strcmp(win, "undecided"), "%s", l);
        rows++;
    }
    free(s);
    cr_assert(rows >= 4, "at least one binade per configuration");
    s = slurp_in(dir, "law/real_gaps_errpos.csv");
    long total = 0;
    FOR_CSV_ROWS (l, s, "config,") {
        int lo, hi;
        long n;
        cr_assert_eq(sscanf(l, "%*[^,],%d,%d,%ld", &lo, &hi, &n), 3, "%s", l);
        cr_assert(lo < hi && n == 2L * (hi - lo), "%s: two texts, one position per step", l);
        total += n;
    }
    free(s);
    cr_assert_eq(total, 4L * 2 * 18, "four configurations x two texts x 18 positions");
}
