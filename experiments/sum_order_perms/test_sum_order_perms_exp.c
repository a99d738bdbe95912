/* test_sum_order_perms_exp.c — the sum_order_perms experiment end to end (quick profile):
 * byte-identical files whatever the thread count (law 4), hand-derived classroom rows, bad
 * options. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv_text.h"
#include "support.h"

#define EXP DRIFT_BIN_DIR "/sum_order_perms"

static const char *const FILES[] = {"sum_order_perms_classroom.csv", "sum_order_perms.csv", "sum_order_perms.md"};
#define NFILES 3

static char dir[64];

static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_sumperms"); }

static void remove_dir(void) { tmpdir_remove(dir); }

TestSuite(sum_order_perms_exp, .init = make_dir, .fini = remove_dir, .timeout = 300);

/* The only lines allowed to differ: the clock, and the --threads/--out options themselves. */
static const char *const VOLATILE[] = {"# date: ", "# argv: "};

Test(sum_order_perms_exp, reproducible_across_threads)
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
}

/* Hand-derived classroom rows.
 * fp64, 1e16 + 1 - 1e16: seq and kahan 0, neumaier 1, exact 1 (test_order.c derives them).
 * fp32, 10000 + 0.0001 - 9999.9: the inputs round to 10000, 0x1.a36e2ep-14 and 9999.900390625
 * (9999.9 / 2^-10 = 10239897.6 -> 10239898 spacings of 2^-10); 10000 + 0.0001 rounds back to
 * 10000 (0.0001 is below half of fp32's spacing 2^-10 at 10000), and 10000 - 9999.900390625 =
 * 0.099609375 = 0x1.98p-4 exactly (Sterbenz). */
Test(sum_order_perms_exp, classroom_rows)
{
    cr_assert_eq(sh("%s --profile quick --quiet --out %s/c", EXP, dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/c/sum_order_perms_classroom.csv", dir);
    char *t = slurp(p);
    cr_assert(strstr(t, "\n1e16+1-1e16,fp64,fp64,seq,3,0x0p+0,0,0x1p+0,1,0x1p+0,"), "seq row");
    cr_assert(strstr(t, "\n1e16+1-1e16,fp64,fp64,kahan,3,0x0p+0,0,0x1p+0,1,0x1p+0,"), "kahan row");
    cr_assert(strstr(t, "\n1e16+1-1e16,fp64,fp64,neumaier,3,0x1p+0,1,0x1p+0,1,0x1p+0,0.000000e+00,"), "neumaier row");
    cr_assert(strstr(t, "\ntextbook,fp32,fp32,seq,3,0x1.98p-4,0.099609375,"), "textbook fp32 seq");
    free(t);
    snprintf(p, sizeof p, "%s/c/sum_order_perms.md", dir);
    t = slurp(p);
    cr_assert(strstr(t, "**Question.**") && strstr(t, "**Takeaway.**"));
    free(t);
}

Test(sum_order_perms_exp, bad_options_exit_2_and_write_nothing)
{
    const char *bad[] = {
        "--orders tc:h100", "--orders warp:6", "--formats fp99", "--perms x", "--profile huge", "--backend cuda"};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(sh("%s %s --quiet --out %s/bad 2>/dev/null", EXP, bad[i], dir), 2, "%s", bad[i]);
        char p[256];
        struct stat st;
        snprintf(p, sizeof p, "%s/bad/sum_order_perms.csv", dir);
        cr_assert_neq(stat(p, &st), 0, "%s wrote a file", bad[i]);
    }
}
