/* test_table.c — result files (lib/table): a commit renames the temporary onto the path, an
 * abort leaves nothing behind and never touches an existing file, and the standard
 * metadata block carries every key that docs/experiments.md lists. */
#include <criterion/criterion.h>
#include <mpfr.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "drift.h"
#include "support.h"
#include "table.h"

static char dir[64];

static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_table"); }

static void remove_dir(void) { tmpdir_remove(dir); }

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    cr_assert(fp);
    fputs(text, fp);
    fclose(fp);
}

TestSuite(table, .init = make_dir, .fini = remove_dir);

/* drift_cli_parse locks its --out, "data" by default, relative to the working directory: two of
 * these tests, run side by side in one build directory (Criterion's jobs, ctest -j), would each
 * find the other's lock. Each parses from its own temporary directory instead. */
static void in_own_dir(void) { cr_assert_eq(chdir(dir), 0, "chdir %s", dir); }

Test(table, commit_renames_onto_the_path)
{
    char path[128];
    snprintf(path, sizeof path, "%s/x.csv", dir);
    drift_file_t f;
    cr_assert_eq(drift_file_open(&f, path), DRIFT_OK);
    fprintf(f.fp, "a,b\n1,2\n");
    /* Until the commit, the path does not exist: a reader never sees half a file. */
    cr_assert_eq(access(path, F_OK), -1);
    cr_assert_eq(count_entries(dir), 1, "the temporary should be the only entry");
    cr_assert_eq(drift_file_commit(&f), DRIFT_OK);
    cr_assert_str_eq(slurp(path), "a,b\n1,2\n");
    cr_assert_eq(count_entries(dir), 1, "the temporary must be gone after the commit");
}

Test(table, commit_replaces_an_existing_file)
{
    char path[128];
    snprintf(path, sizeof path, "%s/x.csv", dir);
    write_file(path, "old\n");
    drift_file_t f;
    cr_assert_eq(drift_file_open(&f, path), DRIFT_OK);
    fprintf(f.fp, "new\n");
    cr_assert_str_eq(slurp(path), "old\n", "the old file must stay intact until the commit");
    cr_assert_eq(drift_file_commit(&f), DRIFT_OK);
    cr_assert_str_eq(slurp(path), "new\n");
}

Test(table, abort_leaves_nothing)
{
    char path[128];
    snprintf(path, sizeof path, "%s/x.csv", dir);
    drift_file_t f;
    cr_assert_eq(drift_file_open(&f, path), DRIFT_OK);
    fprintf(f.fp, "partial");
    drift_file_abort(&f);
    cr_assert_eq(count_entries(dir), 0);
    drift_file_abort(&f); /* a second abort on a closed file is harmless */
    cr_assert_eq(count_entries(dir), 0);
}

Test(table, abort_keeps_an_existing_file)
{
    char path[128];
    snprintf(path, sizeof path, "%s/x.csv", dir);
    write_file(path, "precious\n");
    drift_file_t f;
    cr_assert_eq(drift_file_open(&f, path), DRIFT_OK);
    fprintf(f.fp, "garbage\n");
    drift_file_abort(&f);
    cr_assert_str_eq(slurp(path), "precious\n");
    cr_assert_eq(count_entries(dir), 1);
}

Test(table, open_in_a_missing_directory_fails_cleanly)
{
    char path[128];
    snprintf(path, sizeof path, "%s/no/such/dir/x.csv", dir);
    drift_file_t f;
    cr_assert_eq(drift_file_open(&f, path), DRIFT_EIO);
    cr_assert_eq(count_entries(dir), 0);
    drift_file_abort(&f); /* safe after a failed open */
}

Test(table, commit_of_an_unopened_file_fails)
{
    drift_file_t f;
    memset(&f, 0, sizeof f);
    cr_assert_eq(drift_file_commit(&f), DRIFT_EIO);
}

Test(table, meta_line_format)
{
    char path[128];
    snprintf(path, sizeof path, "%s/m.csv", dir);
    drift_file_t f;
    cr_assert_eq(drift_file_open(&f, path), DRIFT_OK);
    drift_table_meta(&f, "answer", "%d and %s", 42, "more");
    cr_assert_eq(drift_file_commit(&f), DRIFT_OK);
    cr_assert_str_eq(slurp(path), "# answer: 42 and more\n");
}

/* The value of "# key: " in text, or NULL. */
static const char *meta_value(const char *text, const char *key, char *out, size_t size)
{
    char pat[64];
    snprintf(pat, sizeof pat, "# %s: ", key);
    const char *p = strstr(text, pat);
    if (!p || (p != text && p[-1] != '\n')) return NULL;
    p += strlen(pat);
    size_t n = strcspn(p, "\n");
    if (n >= size) n = size - 1;
    memcpy(out, p, n);
    out[n] = 0;
    return out;
}

Test(table, std_meta_has_every_key)
{
    static const drift_cli_spec_t spec = {
        .name = "table_test", .question = "a question?", .default_formats = "fp32", .default_orders = "seq"};
    char *argv[] = {"/some/build/dir/bin/table_test", "--seed", "42", "--profile", "quick", NULL};
    drift_cli_t cli;
    in_own_dir();
    drift_cli_parse(&cli, &spec, 5, argv);

    char path[128];
    snprintf(path, sizeof path, "%s/s.csv", dir);
    drift_file_t f;
    cr_assert_eq(drift_file_open(&f, path), DRIFT_OK);
    drift_table_std_meta(&f, &cli, NULL);
    fprintf(f.fp, "col\n1\n");
    cr_assert_eq(drift_file_commit(&f), DRIFT_OK);
    char *text = slurp(path);

    char v[512];
    cr_assert_str_eq(meta_value(text, "experiment", v, sizeof v), "table_test");
    cr_assert_str_eq(meta_value(text, "driftlab", v, sizeof v), DRIFT_VERSION);
    cr_assert_str_eq(meta_value(text, "seed", v, sizeof v), "42");
    cr_assert_str_eq(meta_value(text, "profile", v, sizeof v), "quick");
    cr_assert_str_eq(meta_value(text, "backend", v, sizeof v), "cpu");
    /* The program's own path differs between build trees; only its name is recorded. */
    cr_assert_str_eq(meta_value(text, "argv", v, sizeof v), "table_test --seed 42 --profile quick");
    /* MPFR's version as MPFR itself reports it. */
    cr_assert_str_eq(meta_value(text, "mpfr", v, sizeof v), mpfr_get_version());
    const char *present[] = {"git", "compiler", "cflags", "gmp", "cpu"};
    for (size_t i = 0; i < sizeof present / sizeof present[0]; i++)
        cr_assert(meta_value(text, present[i], v, sizeof v) && *v, "missing or empty '# %s:'", present[i]);
    /* UTC date in ISO 8601 with seconds and Z. */
    cr_assert(meta_value(text, "date", v, sizeof v));
    regex_t re;
    cr_assert_eq(regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", REG_EXTENDED), 0);
    cr_assert_eq(regexec(&re, v, 0, NULL, 0), 0, "date '%s' is not ISO 8601 UTC", v);
    regfree(&re);
    /* No GPU line without a device; and the header row follows the metadata. */
    cr_assert_null(meta_value(text, "gpu", v, sizeof v));
    cr_assert(strstr(text, "\ncol\n1\n"));
    /* Every line before the header is a metadata line. */
    for (const char *p = text; strncmp(p, "col\n", 4); p = strchr(p, '\n') + 1)
        cr_assert(!strncmp(p, "# ", 2), "non-metadata line before the header: %.40s", p);
    free(text);
}

Test(table, std_meta_names_the_gpu_when_used)
{
    static const drift_cli_spec_t spec = {
        .name = "table_test", .question = "q", .default_formats = "fp32", .default_orders = "seq"};
    char *argv[] = {"table_test", NULL};
    drift_cli_t cli;
    in_own_dir();
    drift_cli_parse(&cli, &spec, 1, argv);
    char path[128];
    snprintf(path, sizeof path, "%s/g.csv", dir);
    drift_file_t f;
    cr_assert_eq(drift_file_open(&f, path), DRIFT_OK);
    drift_table_std_meta(&f, &cli, "NVIDIA H200");
    cr_assert_eq(drift_file_commit(&f), DRIFT_OK);
    char v[512];
    char *text = slurp(path);
    cr_assert_str_eq(meta_value(text, "backend", v, sizeof v), "cuda");
    cr_assert_str_eq(meta_value(text, "gpu", v, sizeof v), "NVIDIA H200");
    free(text);
}
