/* test_sum_order_exp.c — the sum_order experiment end to end (quick profile): byte-identical
 * files whatever the thread count (law 4), bad options. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv_text.h"
#include "support.h"

#define EXP DRIFT_BIN_DIR "/sum_order"

static const char *const FILES[] = {"sum_order_error.csv", "sum_order_summary.csv", "sum_order.md"};
#define NFILES 3

static char dir[64];

static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_sumorder"); }

static void remove_dir(void) { tmpdir_remove(dir); }

TestSuite(sum_order_exp, .init = make_dir, .fini = remove_dir, .timeout = 300);

/* The only lines allowed to differ: the clock, and the --threads/--out options themselves. */
static const char *const VOLATILE[] = {"# date: ", "# argv: "};

Test(sum_order_exp, reproducible_across_threads)
{
    cr_assert_eq(sh("%s --profile quick --seed 5 --threads 1 --quiet --out %s/t1", EXP, dir), 0);
    cr_assert_eq(sh("%s --profile quick --seed 5 --threads 2 --quiet --out %s/t2", EXP, dir), 0);
    for (int k = 0; k < NFILES; k++) {
        char p1[256], p2[256];
        snprintf(p1, sizeof p1, "%s/t1/%s", dir, FILES[k]);
        snprintf(p2, sizeof p2, "%s/t2/%s", dir, FILES[k]);
        char *a = slurp(p1), *b = slurp(p2), *sa = strip_lines(a, VOLATILE, 2), *sb = strip_lines(b, VOLATILE, 2);
        cr_assert_str_eq(sa, sb, "%s differs between --threads 1 and 2", FILES[k]);
        free(a), free(b), free(sa), free(sb);
    }
    /* another seed gives other vectors */
    cr_assert_eq(sh("%s --profile quick --seed 6 --quiet --out %s/s6", EXP, dir), 0);
    char p1[256], p2[256];
    snprintf(p1, sizeof p1, "%s/t1/sum_order_error.csv", dir);
    snprintf(p2, sizeof p2, "%s/s6/sum_order_error.csv", dir);
    char *a = slurp(p1), *b = slurp(p2), *sa = strip_lines(a, VOLATILE, 2), *sb = strip_lines(b, VOLATILE, 2);
    cr_assert_str_neq(sa, sb);
    free(a), free(b), free(sa), free(sb);
}

Test(sum_order_exp, bad_options_exit_2_and_write_nothing)
{
    const char *bad[] = {
        "--orders tc:h100", "--orders warp:6", "--formats fp99", "--trials 0", "--profile huge", "--backend cuda"};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(sh("%s %s --quiet --out %s/bad 2>/dev/null", EXP, bad[i], dir), 2, "%s", bad[i]);
        char p[256];
        struct stat st;
        snprintf(p, sizeof p, "%s/bad/sum_order_error.csv", dir);
        cr_assert_neq(stat(p, &st), 0, "%s wrote a file", bad[i]);
    }
}
