/* test_formats_relerr_exp.c — the formats_relerr experiment end to end: reproducible files
 * (law 4), the u = 2^-p bound on every sampled row, and the per-format summary against the
 * rows it counts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_text.h"
#include "support.h"

#define RELERR DRIFT_BIN_DIR "/formats_relerr"

static const char *const FILES[] = {"formats_relerr.csv", "formats_relerr_summary.csv", "formats_relerr.md"};
#define NFILES 3

static char dir[64];

static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_relerr"); }

static void remove_dir(void) { tmpdir_remove(dir); }

TestSuite(formats_relerr_exp, .init = make_dir, .fini = remove_dir, .timeout = 300);

/* Law 4: same command, same seed -> the same bytes, except the date line. */
Test(formats_relerr_exp, rerun_is_byte_identical_except_date)
{
    cr_assert_eq(sh("%s --out %s/a --quiet --seed 5 --profile quick --threads 1", RELERR, dir), 0);
    cr_assert_eq(sh("mv %s/a %s/first", dir, dir), 0);
    cr_assert_eq(sh("%s --out %s/a --quiet --seed 5 --profile quick --threads 1", RELERR, dir), 0);
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/first", dir);
    snprintf(b, sizeof b, "%s/a", dir);
    const char *skip[] = {"# date: "};
    assert_same_files(a, b, FILES, NFILES, skip, 1);
}

/* ... and whatever --threads: only the argv line (which names --threads and --out) and
 * the date may differ. */
Test(formats_relerr_exp, thread_count_does_not_change_the_data)
{
    cr_assert_eq(sh("%s --out %s/t1 --quiet --seed 9 --samples 3000 --threads 1", RELERR, dir), 0);
    cr_assert_eq(sh("%s --out %s/t2 --quiet --seed 9 --samples 3000 --threads 2", RELERR, dir), 0);
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/t1", dir);
    snprintf(b, sizeof b, "%s/t2", dir);
    const char *skip[] = {"# date: ", "# argv: "};
    assert_same_files(a, b, FILES, NFILES, skip, 2);
}

Test(formats_relerr_exp, another_seed_changes_the_random_values)
{
    cr_assert_eq(sh("%s --out %s/s1 --quiet --seed 1 --profile quick", RELERR, dir), 0);
    cr_assert_eq(sh("%s --out %s/s2 --quiet --seed 2 --profile quick", RELERR, dir), 0);
    char pa[128], pb[128];
    snprintf(pa, sizeof pa, "%s/s1/formats_relerr.csv", dir);
    snprintf(pb, sizeof pb, "%s/s2/formats_relerr.csv", dir);
    const char *skip[] = {"# "};
    char *ta = slurp(pa), *tb = slurp(pb), *sa = strip_lines(ta, skip, 1), *sb = strip_lines(tb, skip, 1);
    cr_assert(strcmp(sa, sb), "seeds 1 and 2 gave the same random values");
    free(ta), free(tb), free(sa), free(sb);
}

/* Runs the program with --out dir --quiet and the options given, and returns the file named
 * from dir (free it). */
static char *run_and_read(const char *options, const char *file)
{
    cr_assert_eq(sh("%s --out %s --quiet %s", RELERR, dir, options), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return slurp(path);
}

/* The theorem the relative-error plot illustrates: a value stored as a normal number in
 * round-to-nearest is within u = 2^-p of the real number (Higham, Accuracy and Stability,
 * Thm 2.2). Checked on every sampled row. */
Test(formats_relerr_exp, relerr_of_normal_values_is_at_most_u)
{
    /* The bound is about reals of the normal range, so a row is judged by its real x = x_hi + x_lo,
     * not by the class of what it was stored as: a real just below the smallest normal 2^emin can
     * round up to it, at the subnormal spacing, with an error above u (fp16: 2^-14 - 2^-25 + 2^-40
     * is stored as 2^-14, 1.00046 u away). |x_hi| > 2^emin puts x in the normal range, since
     * |x_lo| <= ulp(x_hi) / 2; emin from IEEE 754 and the OCP fp8 specification. */
    char *text = run_and_read("--samples 2000", "formats_relerr.csv");
    int cf = csv_column(text, "format"), cc = csv_column(text, "class"), cr = csv_column(text, "rel_err");
    int ch = csv_column(text, "x_hi_hex");
    static const struct {
        const char *name;
        int p, emin;
    } P[] = {{"fp64", 53, -1022}, {"fp32", 24, -126}, {"tf32", 11, -126}, {"fp16", 11, -14}, {"bf16", 8, -126},
        {"fp8e4m3", 4, -6}, {"fp8e5m2", 3, -14}};
    long rows = 0, normal = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || !strncmp(line, "point,", 6)) continue;
        char *f[16];
        cr_assert_eq(csv_split(line, f, 16), 8);
        rows++;
        int k = 0;
        while (k < 7 && strcmp(f[cf], P[k].name)) k++;
        cr_assert(k < 7);
        double hi = strtod(f[ch], NULL);
        if (!(fabs(hi) > ldexp(1.0, P[k].emin)) || !strcmp(f[cc], "inf") || !strcmp(f[cc], "nan")) continue;
        double rel = strtod(f[cr], NULL);
        /* rel_err is printed with 7 significant digits (%.6e), rounded up at the source; the
         * printed value may round up by half a unit in the 7th digit, so allow 1e-6 relative. */
        cr_assert(rel <= ldexp(1.0, -P[k].p) * (1 + 1e-6), "%s: rel_err %g > u = 2^-%d", f[cf], rel, P[k].p);
        normal++;
    }
    cr_assert_eq(rows, 2000 * 7);
    cr_assert(normal > rows / 2, "too few normal samples: %ld", normal);
    free(text);
}

/* The summary counts every real once, by where the real lies: per format the four groups add up
 * to the number of reals, the zeros and overflows are the rows stored as zero and as inf or NaN,
 * and the worst relative error of a real in the normal range is within u (the bound the row
 * classes of the CSV cannot show: a real just below the smallest normal may be stored as it). */
Test(formats_relerr_exp, summary_counts_every_real_once)
{
    static const char *const NAMES[] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8e4m3", "fp8e5m2"};
    char *rows = run_and_read("--samples 2000 --seed 5", "formats_relerr.csv");
    long stored_zero[7] = {0}, stored_over[7] = {0};
    int cf = csv_column(rows, "format"), cc = csv_column(rows, "class");
    char *save = NULL;
    for (char *line = strtok_r(rows, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || !strncmp(line, "point,", 6)) continue;
        char *f[16];
        cr_assert_eq(csv_split(line, f, 16), 8);
        for (int k = 0; k < 7; k++)
            if (!strcmp(f[cf], NAMES[k])) {
                stored_zero[k] += !strcmp(f[cc], "zero");
                stored_over[k] += !strcmp(f[cc], "inf") || !strcmp(f[cc], "nan");
            }
    }
    char path[128];
    snprintf(path, sizeof path, "%s/formats_relerr_summary.csv", dir);
    char *sum = slurp(path);
    static const char *const GROUPS[] = {"normal", "below", "zero", "overflow"};
    for (int k = 0; k < 7; k++) {
        char got[64];
        long n[4];
        for (int g = 0; g < 4; g++) {
            csv_lookup(got, sizeof got, sum, "format", NAMES[k], "format", NAMES[k], GROUPS[g]);
            n[g] = strtol(got, NULL, 10);
        }
        cr_expect_eq(
            n[0] + n[1] + n[2] + n[3], 2000, "%s: the groups hold %ld reals", NAMES[k], n[0] + n[1] + n[2] + n[3]);
        cr_expect_eq(n[2], stored_zero[k], "%s: %ld zero, %ld rows stored as zero", NAMES[k], n[2], stored_zero[k]);
        cr_expect_eq(
            n[3], stored_over[k], "%s: %ld overflow, %ld rows stored as inf or NaN", NAMES[k], n[3], stored_over[k]);
        csv_lookup(got, sizeof got, sum, "format", NAMES[k], "format", NAMES[k], "max_rel_normal_in_u");
        cr_expect(strtod(got, NULL) <= 1, "%s: a real in the normal range stored %s u away", NAMES[k], got);
    }
    free(rows);
    free(sum);
}

Test(formats_relerr_exp, fragment_has_question_and_takeaway)
{
    char *text = run_and_read("--profile quick", "formats_relerr.md");
    cr_expect(strstr(text, "**Question.**"));
    cr_expect(strstr(text, "**Takeaway.**"));
    cr_expect(strstr(text, "never above the unit roundoff"), "the u bound failed in the data");
    free(text);
}
