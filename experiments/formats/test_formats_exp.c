/* test_formats_exp.c — the formats experiment end to end: reproducible files (law 4) and
 * values spot-checked against hand derivations written next to each case. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_text.h"
#include "support.h"

#define FORMATS DRIFT_BIN_DIR "/formats"

static const char *const FILES[] = {"formats.csv", "formats_constants.csv", "formats_spacing.csv", "formats.md"};
#define NFILES 4

static char dir[64];

static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_fmt"); }

static void remove_dir(void) { tmpdir_remove(dir); }

TestSuite(formats_exp, .init = make_dir, .fini = remove_dir, .timeout = 300);

/* Law 4: same command, same seed -> the same bytes, except the date line. */
Test(formats_exp, rerun_is_byte_identical_except_date)
{
    cr_assert_eq(sh("%s --out %s/a --quiet --seed 5 --profile quick --threads 1", FORMATS, dir), 0);
    cr_assert_eq(sh("mv %s/a %s/first", dir, dir), 0);
    cr_assert_eq(sh("%s --out %s/a --quiet --seed 5 --profile quick --threads 1", FORMATS, dir), 0);
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/first", dir);
    snprintf(b, sizeof b, "%s/a", dir);
    const char *skip[] = {"# date: "};
    assert_same_files(a, b, FILES, NFILES, skip, 1);
}

/* ... and whatever --threads: only the argv line (which names --threads and --out) and
 * the date may differ. */
Test(formats_exp, thread_count_does_not_change_the_data)
{
    cr_assert_eq(sh("%s --out %s/t1 --quiet --seed 9 --threads 1", FORMATS, dir), 0);
    cr_assert_eq(sh("%s --out %s/t2 --quiet --seed 9 --threads 2", FORMATS, dir), 0);
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/t1", dir);
    snprintf(b, sizeof b, "%s/t2", dir);
    const char *skip[] = {"# date: ", "# argv: "};
    assert_same_files(a, b, FILES, NFILES, skip, 2);
}

/* ---- spot checks ------------------------------------------------------------------------ */

/* Runs the program with --out dir --quiet and the options given, and returns the file named
 * from dir (free it). */
static char *run_and_read(const char *options, const char *file)
{
    cr_assert_eq(sh("%s --out %s --quiet %s", FORMATS, dir, options), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return slurp(path);
}

typedef struct {
    const char *value, *format, *column, *expect, *why;
} spot_t;

/* Hand derivations (p = precision with the hidden bit; the fp16 bias is 15, bf16 127). */
static const spot_t SPOTS[] = {
    {"0.1", "fp16", "result_hex", "0x1.998p-4",
        "0.1 = 1.1001100110|011...b x 2^-4; the cut-off part starts 011 < half: down"},
    {"0.1", "fp16", "bits", "0x2e66", "0 01011 1001100110"},
    {"0.1", "fp16", "direction", "down", "see above"},
    {"0.1", "bf16", "result_hex", "0x1.9ap-4", "1.1001100|1100...: above half, up to 1.1001101b"},
    {"0.1", "fp64", "abs_err", "5.551115e-18", "the double 0.1000000000000000055511151231257827 is 5.55e-18 above 0.1"},
    {"65520", "bf16", "result", "65536", "65520 = 1.1111111|11110000b x 2^15, rounds up to 2^16"},
    {"65520", "fp16", "class", "inf", "the tie above 65504 goes to the even 2^16: overflow"},
    {"65504", "fp16", "ulp_err", "0", "65504 is fp16's largest finite"},
    {"70000", "fp8e4m3", "class", "nan", "OCP e4m3 has no inf: overflow is NaN"},
    {"70000", "fp8e4m3", "bits", "0x7f", "S.1111.111"},
    {"70000", "fp8e5m2", "class", "inf", "70000 > 57344 + 8192/2"},
    {"70000", "fp8e5m2", "bits", "0x7c", "0 11111 00"},
    {"2^-24", "fp16", "class", "subnormal", "2^-24 < 2^-14, fp16's smallest subnormal"},
    {"2^-24", "fp16", "bits", "0x0001", "exponent field 0, fraction 1"},
    {"2^-25", "fp16", "class", "zero", "the midpoint between 0 and 2^-24 ties to the even 0"},
    {"1+2^-11", "fp16", "result_hex", "0x1p+0", "a tie at p = 11: 1 is even"},
    {"1+2^-11", "fp16", "ulp_err", "0.5", "exactly half a spacing"},
    {"1+3*2^-11", "fp16", "result_hex", "0x1.008p+0", "between 1+2^-10 (odd) and 1+2^-9 (even): up"},
    {"1+2^-11+2^-40", "fp16", "result_hex", "0x1.004p+0", "above the tie: up (single rounding)"},
    {"2^24+1", "fp32", "result_hex", "0x1p+24", "p = 24: 2^24 + 1 is a tie, 2^24 is even"},
    {"448", "fp8e4m3", "bits", "0x7e", "1.11b x 2^8: 0 1111 110"},
    {"1e39", "fp32", "class", "inf", "fp32 max is 3.4e38"},
    {"1e39", "fp64", "class", "normal", "fp64 max is 1.8e308"},
    /* bf16(0.1) + bf16(0.2) = 0.10009765625 + 0.2001953125 = 0.30029296875 exactly; in
     * [0.25, 0.5) bf16's spacing is 2^-9, and 0.30029296875 / 2^-9 = 153.75 -> 154:
     * 154 x 2^-9 = 0.30078125 = 0x1.34p-2. */
    {"0.1+0.2", "bf16", "result_hex", "0x1.34p-2", "see above"},
    {"0.1+0.2", "fp64", "result", "0.30000000000000004", "the famous one"},
};

Test(formats_exp, values_match_hand_derivations)
{
    char *text = run_and_read("--profile quick", "formats.csv");
    for (size_t i = 0; i < sizeof SPOTS / sizeof SPOTS[0]; i++) {
        const spot_t *s = &SPOTS[i];
        char got[128];
        csv_lookup(got, sizeof got, text, "value", s->value, "format", s->format, s->column);
        cr_expect_str_eq(got, s->expect, "%s in %s, %s: got %s, want %s (%s)", s->value, s->format, s->column, got,
            s->expect, s->why);
    }
    free(text);
}

Test(formats_exp, constants_match_published_tables)
{
    char *text = run_and_read("--profile quick", "formats_constants.csv");
    /* IEEE 754-2019 Table 3.5 (binary16, binary32, binary64), the bfloat16 and OCP FP8
     * (v1.0, 2023) specifications. */
    static const struct {
        const char *format, *column, *expect;
    } K[] = {
        {"fp16", "max_finite", "65504"},
        {"fp16", "min_subnormal_hex", "0x1p-24"},
        {"fp16", "min_normal_hex", "0x1p-14"},
        {"fp16", "epsilon_hex", "0x1p-10"},
        {"fp16", "decimal_digits", "3.31"}, /* 11 log10 2 = 3.311 */
        {"fp32", "max_finite_hex", "0x1.fffffep+127"},
        {"fp32", "unit_roundoff_hex", "0x1p-24"},
        {"fp64", "epsilon", "2.2204460492503131e-16"},
        {"bf16", "max_finite_hex", "0x1.fep+127"},
        {"bf16", "min_subnormal_hex", "0x1p-133"},
        {"tf32", "epsilon_hex", "0x1p-10"},
        {"fp8e4m3", "max_finite", "448"},
        {"fp8e4m3", "min_subnormal_hex", "0x1p-9"},
        {"fp8e4m3", "has_inf", "0"},
        {"fp8e5m2", "max_finite", "57344"},
        {"fp8e5m2", "min_subnormal_hex", "0x1p-16"},
    };
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++) {
        char got[128];
        csv_lookup(got, sizeof got, text, "format", K[i].format, "format", K[i].format, K[i].column);
        cr_expect_str_eq(got, K[i].expect, "%s %s", K[i].format, K[i].column);
    }
    free(text);
}

Test(formats_exp, spacing_staircase)
{
    char *text = run_and_read("--profile quick --formats fp16,fp8e4m3", "formats_spacing.csv");
    char got[128];
    /* Binade [1, 2) of fp16: spacing 2^-10; every subnormal binade: 2^-24. */
    csv_lookup(got, sizeof got, text, "format", "fp16", "binade", "0", "spacing_hex");
    cr_expect_str_eq(got, "0x1p-10");
    csv_lookup(got, sizeof got, text, "format", "fp16", "binade", "-20", "spacing_hex");
    cr_expect_str_eq(got, "0x1p-24");
    csv_lookup(got, sizeof got, text, "format", "fp16", "binade", "-20", "region");
    cr_expect_str_eq(got, "subnormal");
    /* e4m3's top binade [256, 448]: spacing 2^(8-3) = 32. */
    csv_lookup(got, sizeof got, text, "format", "fp8e4m3", "binade", "8", "spacing");
    cr_expect_str_eq(got, "32");
    csv_lookup(got, sizeof got, text, "format", "fp8e4m3", "binade", "8", "x_end");
    cr_expect_str_eq(got, "448");
    /* fp16 has binades 2^-24 .. 2^15: 40 rows; e4m3 2^-9 .. 2^8: 18 rows. */
    int rows = 0;
    for (const char *p = text; (p = strstr(p, "\nfp16,")); p++) rows++;
    cr_expect_eq(rows, 40);
    rows = 0;
    for (const char *p = text; (p = strstr(p, "\nfp8e4m3,")); p++) rows++;
    cr_expect_eq(rows, 18);
    free(text);
}

Test(formats_exp, user_values_and_formats)
{
    char *text = run_and_read("--profile quick --formats fp16 --values 0.3,0x1p-20,-2.5", "formats.csv");
    char got[128];
    /* 0.3 = 1.0011001100|1100...b x 2^-2: above half, up to 1.0011001101b = 0x1.334p-2. */
    csv_lookup(got, sizeof got, text, "value", "0.3", "format", "fp16", "result_hex");
    cr_expect_str_eq(got, "0x1.334p-2");
    csv_lookup(got, sizeof got, text, "value", "0x1p-20", "format", "fp16", "class");
    cr_expect_str_eq(got, "subnormal");
    csv_lookup(got, sizeof got, text, "value", "-2.5", "format", "fp16", "direction");
    cr_expect_str_eq(got, "exact");
    /* Only fp16 rows: the teaching values (17) plus three. */
    int rows = 0;
    for (const char *p = text; (p = strstr(p, ",fp16,")); p++) rows++;
    cr_expect_eq(rows, 20);
    cr_expect_null(strstr(text, ",bf16,"));
    free(text);
}

Test(formats_exp, stdout_is_for_people)
{
    char out[128];
    snprintf(out, sizeof out, "%s/stdout.txt", dir);
    cr_assert_eq(sh("%s --out %s/d --profile quick > %s", FORMATS, dir, out), 0);
    char *text = slurp(out);
    cr_expect(strstr(text, "What you just saw"), "no explanation on stdout");
    cr_expect(strstr(text, "0.1+0.2"), "no table on stdout");
    free(text);
    cr_assert_eq(sh("%s --out %s/d --profile quick --quiet > %s", FORMATS, dir, out), 0);
    text = slurp(out);
    cr_expect_str_eq(text, "", "--quiet must keep stdout empty");
    free(text);
}

Test(formats_exp, fragment_has_question_table_takeaway)
{
    char *text = run_and_read("--profile quick", "formats.md");
    cr_expect(strstr(text, "**Question.**"));
    cr_expect(strstr(text, "| value | fp64 | fp32 | tf32 | fp16 | bf16 | fp8e4m3 | fp8e5m2 |"));
    cr_expect(strstr(text, "**Takeaway.**"));
    free(text);
}
