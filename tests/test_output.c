/* test_output.c — the declared output (lib/run/output.h) and profiles as option data
 * (lib/run/cli.h): one declaration gives the CSV header and rows in each print style, the
 * Markdown table, and the profile's value of an option that was not given. Expected texts are
 * written by hand from the documented styles (%.17g, %a, %ld, quoted text). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "drift.h"
#include "output.h"
#include "support.h"

static char dir[64];
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_output"); }
static void remove_dir(void) { tmpdir_remove(dir); }
TestSuite(output, .init = make_dir, .fini = remove_dir);

static long K = 0;
static const drift_cli_opt_t OPTS[] = {
    {"K", DRIFT_OPT_INT, &K, "N", "inner dimension", 1, 0, {"16", "256", "4096"}},
};
static const drift_cli_spec_t SPEC = {.name = "demo",
    .question = "What does the kit write?",
    .default_formats = "fp32",
    .default_orders = "seq",
    .opts = OPTS,
    .nopts = 1};

static void parse(drift_cli_t *cli, const char *a1, const char *a2, const char *a3, const char *a4)
{
    static char *argv[8];
    int argc = 0;
    argv[argc++] = "demo";
    const char *a[] = {a1, a2, a3, a4};
    for (int i = 0; i < 4; i++)
        if (a[i]) argv[argc++] = (char *)a[i];
    drift_cli_parse(cli, &SPEC, argc, argv);
}

Test(output, profile_values_apply_unless_the_option_is_given)
{
    drift_cli_t cli;
    parse(&cli, "--profile", "quick", NULL, NULL);
    cr_assert_eq(K, 16);
    parse(&cli, NULL, NULL, NULL, NULL); /* the default profile */
    cr_assert_eq(K, 256);
    parse(&cli, "--profile", "full", "--K", "7");
    cr_assert_eq(K, 7);
    parse(&cli, "--K", "7", "--profile", "full"); /* whatever the order */
    cr_assert_eq(K, 7);
}

Test(output, one_declaration_gives_csv_and_markdown)
{
    static const drift_col_t COLS[] = {DRIFT_C_TEXT("format"), DRIFT_C_INT("K"), DRIFT_C_NUM("x", NULL),
        DRIFT_C_NUM("y", "%.3g"), DRIFT_C_HEX("x_hex"), DRIFT_C_QUOTED("kernel")};
    static const drift_table_spec_t TABLES[] = {{".csv", NULL, DRIFT_SHOW_MD, COLS, 6}};
    drift_cli_t cli;
    parse(&cli, "--out", dir, "--quiet", NULL);
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 1, 1);
    drift_out_meta(&out, 0, "table", "demo rows");
    /* 0.1 is 0x1.999999999999ap-4; %.17g prints 0.10000000000000001 */
    drift_row(&out, 0, DRIFT_TXT("bf16"), DRIFT_INT(256), DRIFT_NUM(0.1), DRIFT_NUM(2.0 / 3), DRIFT_NUM(0.1),
        DRIFT_TXT("tiled:128,64,32"));
    drift_row(&out, 0, DRIFT_TXT("fp16"), DRIFT_INT(-1), DRIFT_NUM(-1.0 / 0.0), DRIFT_NUM(0), DRIFT_NUM(1),
        DRIFT_TXT("naive"));
    drift_md_end(&out, 0);
    drift_out_commit(&out);

    char path[128];
    snprintf(path, sizeof path, "%s/demo.csv", dir);
    char *csv = slurp(path);
    cr_assert(strstr(csv, "# experiment: demo\n") != NULL, "the standard metadata block");
    const char *body = strstr(csv, "# table: demo rows\nformat,K,x,y,x_hex,kernel\n");
    cr_assert(body != NULL, "metadata, then the header: %s", csv);
    cr_assert(strstr(body, "\nbf16,256,0.10000000000000001,0.667,0x1.999999999999ap-4,\"tiled:128,64,32\"\n"
                           "fp16,-1,-inf,0,0x1p+0,\"naive\"\n") != NULL,
        "%s", body);
    snprintf(path, sizeof path, "%s/demo.md", dir);
    cr_assert_str_eq(slurp(path),
        "| format | K | x | y | x_hex | kernel |\n"
        "|---|---:|---:|---:|---:|---|\n"
        "| bf16 | 256 | 0.10000000000000001 | 0.667 | 0x1.999999999999ap-4 | \"tiled:128,64,32\" |\n"
        "| fp16 | -1 | -inf | 0 | 0x1p+0 | \"naive\" |\n\n");
}

/* A text cell with a comma or a quote must not shift the CSV's columns: RFC 4180 quoting
 * (field in quotes, quotes doubled), written by hand here; the Markdown cell stays as given. */
Test(output, a_text_cell_with_a_comma_is_quoted_in_the_csv)
{
    static const drift_col_t COLS[] = {DRIFT_C_TEXT("algo"), DRIFT_C_INT("block")};
    static const drift_table_spec_t TABLES[] = {{".csv", NULL, DRIFT_SHOW_MD, COLS, 2}};
    drift_cli_t cli;
    parse(&cli, "--out", dir, "--quiet", NULL);
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 1, 1);
    drift_row(&out, 0, DRIFT_TXT("align, then +c"), DRIFT_INT(32));
    drift_row(&out, 0, DRIFT_TXT("say \"hi\""), DRIFT_INT(1));
    drift_row(&out, 0, DRIFT_TXT("plain"), DRIFT_INT(2));
    drift_md_end(&out, 0);
    drift_out_commit(&out);
    char path[128];
    snprintf(path, sizeof path, "%s/demo.csv", dir);
    const char *body = strstr(slurp(path), "algo,block\n");
    cr_assert(body != NULL);
    cr_assert_str_eq(body, "algo,block\n\"align, then +c\",32\n\"say \"\"hi\"\"\",1\nplain,2\n");
    snprintf(path, sizeof path, "%s/demo.md", dir);
    cr_assert(strstr(slurp(path), "| align, then +c | 32 |\n") != NULL);
}

Test(output, a_row_of_the_wrong_kind_is_refused, .exit_code = 2)
{
    static const drift_col_t COLS[] = {DRIFT_C_INT("K")};
    static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, COLS, 1}};
    drift_cli_t cli;
    parse(&cli, "--out", dir, "--quiet", NULL);
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 1, 0);
    fclose(stderr); /* the one-line message is the program's; keep the test log clean */
    drift_row(&out, 0, DRIFT_NUM(1.5));
}

/* The fragment's own wording: question and Reproduce line apart, a titled Markdown-only table
 * with a right-aligned preformatted cell, then prose. Expected text written by hand from
 * output.h's description of each call. */
Test(output, question_reproduce_caption_cells_and_prose)
{
    static const drift_col_t COLS[] = {DRIFT_C_TEXT("order"), DRIFT_C_CELL("fp32/fp32")};
    static const drift_table_spec_t TABLES[] = {{NULL, "**(b) Error** (mean):", DRIFT_SHOW_MD, COLS, 2}};
    drift_cli_t cli;
    parse(&cli, "--out", dir, "--quiet", NULL);
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 1, 1);
    drift_md_question(&out, "Against the exact sum (%d bits).", 53);
    drift_md_reproduce(&out, "data/demo_*.csv; %ld trials", 3L);
    drift_md_text(&out, "**(a)** %s\n\n", "first");
    drift_row(&out, 0, DRIFT_TXT("seq"), DRIFT_TXT("1.2e-03 [0.50]"));
    drift_md_end(&out, 0);
    drift_md_text(&out, "- Lists:");
    for (int i = 0; i < 3; i++) drift_md_text(&out, "%s%c", drift_list_sep(i, 3), 'a' + i);
    drift_md_text(&out, ".\n");
    drift_out_commit(&out);

    char path[128], cmd[1024], want[2048];
    drift_cli_reproduce(cmd, sizeof cmd, &cli);
    snprintf(want, sizeof want,
        "**Question.** What does the kit write? Against the exact sum (53 bits).\n\n"
        "Reproduce: `%s` (data/demo_*.csv; 3 trials).\n\n"
        "**(a)** first\n\n"
        "**(b) Error** (mean):\n\n| order | fp32/fp32 |\n|---|---:|\n| seq | 1.2e-03 [0.50] |\n\n"
        "- Lists:a, b and c.\n",
        cmd);
    snprintf(path, sizeof path, "%s/demo.md", dir);
    cr_assert_str_eq(slurp(path), want);
}

/* A row formatted by one printf format: cells split at '|', blanks around each dropped, so the
 * Markdown row is what printf would write; a cell count other than the table's is refused. */
Test(output, a_row_formatted_in_one_printf_format)
{
    static const drift_col_t COLS[] = {DRIFT_C_TEXT("kernel"), DRIFT_C_CELL("sigma [95% CI]"), DRIFT_C_CELL("flips")};
    static const drift_table_spec_t TABLES[] = {{NULL, NULL, DRIFT_SHOW_MD, COLS, 3}};
    drift_cli_t cli;
    parse(&cli, "--out", dir, "--quiet", NULL);
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 1, 1);
    drift_row_fmt(&out, 0, "%s | %.3g [%.3g, %.3g] | %ld / %zu", "seq", 1.5e-6, 1e-6, 2e-6, 3L, (size_t)40);
    drift_row_fmt(&out, 0, "  tc|< %.2g|-  ", 0.25);
    drift_out_commit(&out);
    char path[128];
    snprintf(path, sizeof path, "%s/demo.md", dir);
    cr_assert_str_eq(slurp(path), "| kernel | sigma [95% CI] | flips |\n|---|---:|---:|\n"
                                  "| seq | 1.5e-06 [1e-06, 2e-06] | 3 / 40 |\n| tc | < 0.25 | - |\n");
}

Test(output, a_formatted_row_of_the_wrong_length_is_refused, .exit_code = 2)
{
    static const drift_col_t COLS[] = {DRIFT_C_TEXT("kernel"), DRIFT_C_CELL("flips")};
    static const drift_table_spec_t TABLES[] = {{NULL, NULL, DRIFT_SHOW_MD, COLS, 2}};
    drift_cli_t cli;
    parse(&cli, "--out", dir, "--quiet", NULL);
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 1, 1);
    fclose(stderr); /* the one-line message is the program's; keep the test log clean */
    drift_row_fmt(&out, 0, "%s | %d | %d", "seq", 1, 2);
}
