/* test_cli.c — the common command line, tested through a real experiment (formats, and
 * formats_relerr for the integer option --samples): every bad input (docs/design.md, "Checked
 * before computing") exits 2 with one line on stderr that names the option, writes nothing into
 * --out, and never harms a data file that is already there. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#define FORMATS DRIFT_BIN_DIR "/formats"
#define RELERR DRIFT_BIN_DIR "/formats_relerr"

static char dir[64];

static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_cli"); }

static void remove_dir(void) { tmpdir_remove(dir); }

/* Runs "PROG ARGS" (PROG formats or formats_relerr, from DRIFT_BIN_DIR) with stdout and stderr
 * captured outside dir (so that dir only ever holds what the program itself writes). Returns the
 * exit status. */
static int run_prog(const char *prog, const char *args, char *err, size_t errsz)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s/%s %s", DRIFT_BIN_DIR, prog, args);
    return run_capture(cmd, NULL, 0, err, errsz);
}

static int run_formats(const char *args, char *err, size_t errsz) { return run_prog("formats", args, err, errsz); }

static void check_one_line_naming(const char *prog, const char *args, const char *err, const char *name)
{
    char lead[64];
    snprintf(lead, sizeof lead, "%s: ", prog);
    const char *nl = strchr(err, '\n');
    cr_assert(nl && nl[1] == 0, "%s %s: stderr must be exactly one line, got: '%s'", prog, args, err);
    cr_assert(strstr(err, name), "%s %s: the message does not name '%s': %s", prog, args, name, err);
    cr_assert(!strncmp(err, lead, strlen(lead)), "%s %s: the message should start with the program name: %s", prog,
        args, err);
}

typedef struct {
    char args[200]; /* appended after --out DIR */
    char names[32]; /* what the message must name */
} bad_t;

/* Each case exits 2 with one line naming the option, and leaves nothing in --out. */
static void check_refused(const char *prog, const bad_t *c)
{
    char args[512], err[4096];
    /* The out directory does not exist yet: a bad option must not even create it. */
    snprintf(args, sizeof args, "--out %s/out --quiet %s", dir, c->args);
    int rc = run_prog(prog, args, err, sizeof err);
    cr_assert_eq(rc, 2, "%s %s: exit %d, want 2 (stderr: %s)", prog, args, rc, err);
    check_one_line_naming(prog, args, err, c->names);
    cr_assert_eq(count_entries(dir), 0, "%s %s left something in %s", prog, args, dir);
}

ParameterizedTestParameters(cli, bad_input)
{
    static bad_t cases[] = {
        /* unknown format */
        {"--formats fp17", "--formats"},
        {"--formats fp16,,bf16", "--formats"},
        {"--formats fp16,fp16", "--formats"},
        /* malformed order specs */
        {"--orders blocked:0", "--orders"},
        {"--orders warp:6", "--orders"},
        {"--orders splitk:", "--orders"},
        {"--orders sideways", "--orders"},
        /* unknown option, missing value, stray argument */
        {"--bogus 3", "--bogus"},
        {"--seed", "--seed"},
        {"stray", "stray"},
        /* bad profile, backend, threads, seed */
        {"--profile huge", "--profile"},
        {"--backend gpu", "--backend"},
        {"--backend cuda", "--backend"}, /* formats has no CUDA path: refused, not ignored */
        {"--threads 0", "--threads"},
        {"--threads -2", "--threads"},
        {"--threads two", "--threads"},
        {"--seed -1", "--seed"},
        {"--seed 1.5", "--seed"},
        /* bad values */
        {"--values 0.1,abc", "--values"},
        {"--values 1e999", "--values"},
        {"--values inf", "--values"},
        {"--values 0.1,", "--values"},
        /* formats takes no orders: said, not ignored */
        {"--orders seq", "--orders"},
    };
    return cr_make_param_array(bad_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_t *c, cli, bad_input, .init = make_dir, .fini = remove_dir) { check_refused("formats", c); }

/* The integer option: formats_relerr's --samples. */
ParameterizedTestParameters(cli, bad_input_samples)
{
    static bad_t cases[] = {
        /* zero and negative sizes */
        {"--samples 0", "--samples"},
        {"--samples -5", "--samples"},
        {"--samples 12abc", "--samples"},
    };
    return cr_make_param_array(bad_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_t *c, cli, bad_input_samples, .init = make_dir, .fini = remove_dir)
{
    check_refused("formats_relerr", c);
}

Test(cli, out_dir_that_is_a_file, .init = make_dir, .fini = remove_dir)
{
    char path[128], args[256], err[4096];
    snprintf(path, sizeof path, "%s/afile", dir);
    FILE *fp = fopen(path, "w");
    fputs("keep me\n", fp);
    fclose(fp);
    snprintf(args, sizeof args, "--out %s --quiet", path);
    cr_assert_eq(run_formats(args, err, sizeof err), 2, "stderr: %s", err);
    check_one_line_naming("formats", args, err, "--out");
    cr_assert_eq(count_entries(dir), 1);
    fp = fopen(path, "r");
    char buf[64] = "";
    cr_assert(fgets(buf, sizeof buf, fp));
    fclose(fp);
    cr_assert_str_eq(buf, "keep me\n");
}

/* A good run, then bad runs into the same directory: the data files of the good run
 * survive byte for byte, and no temporary is left beside them. */
Test(cli, failing_run_keeps_existing_data, .init = make_dir, .fini = remove_dir)
{
    char args[256], err[4096];
    snprintf(args, sizeof args, "--out %s --quiet", dir);
    cr_assert_eq(run_formats(args, err, sizeof err), 0, "good run failed: %s", err);
    const char *files[] = {"formats.csv", "formats_constants.csv", "formats_spacing.csv", "formats.md",
        "formats.manifest"}; /* the manifest: lib/run/manifest.h */
    enum { N = 5 };
    char *before[N];
    size_t len[N];
    for (int i = 0; i < N; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        before[i] = slurp_len(p, &len[i]);
    }
    cr_assert_eq(count_entries(dir), N);
    const char *bad[] = {"--formats fp17", "--samples 0", "--threads 0", "--values nope", "--orders warp:3"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(args, sizeof args, "--out %s --quiet %s", dir, bad[k]);
        cr_assert_eq(run_formats(args, err, sizeof err), 2, "formats %s", args);
    }
    cr_assert_eq(count_entries(dir), N, "a failing run left a file behind");
    for (int i = 0; i < N; i++) {
        char p[128];
        size_t n;
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        char *after = slurp_len(p, &n);
        cr_assert(n == len[i] && !memcmp(after, before[i], n), "%s changed after a failing run", files[i]);
        free(after);
        free(before[i]);
    }
}

Test(cli, help_and_version_exit_0)
{
    char err[4096];
    cr_assert_eq(run_formats("--help", err, sizeof err), 0);
    cr_assert_eq(run_formats("--version", err, sizeof err), 0);
}

Test(cli, help_lists_every_option_with_its_default)
{
    static char out[8192];
    cr_assert_eq(run_stdout(FORMATS " --help", out, sizeof out), 0);
    const char *opts[] = {"--seed", "--profile", "--out", "--formats", "--orders", "--backend", "--threads", "--quiet",
        "--help", "--version", "--values"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        cr_assert(strstr(out, opts[i]), "--help lacks %s", opts[i]);
    cr_assert(strstr(out, "default"), "--help shows no defaults");
    cr_assert_eq(run_stdout(RELERR " --help", out, sizeof out), 0);
    cr_assert(strstr(out, "--samples"), "formats_relerr --help lacks --samples");
}

/* An experiment says in --help which common options it does not take, instead of offering
 * them: formats takes no orders, layer_drift neither formats nor orders. */
Test(cli, help_says_what_is_not_taken)
{
    static char out[8192];
    cr_assert_eq(run_stdout(FORMATS " --help", out, sizeof out), 0);
    cr_assert(strstr(out, "--formats LIST"), "formats --help must offer --formats: %s", out);
    cr_assert(strstr(out, "(--orders is not accepted: formats takes no orders"), "formats --help: %s", out);
    cr_assert(!strstr(out, "--orders LIST"), "formats --help offers --orders: %s", out);
    cr_assert_eq(run_stdout(DRIFT_BIN_DIR "/layer_drift --help", out, sizeof out), 0);
    cr_assert(strstr(out, "(--formats is not accepted: layer_drift takes no formats or orders"),
        "layer_drift --help: %s", out);
    cr_assert(
        !strstr(out, "--formats LIST") && !strstr(out, "--orders LIST"), "layer_drift --help offers them: %s", out);
}

/* ---- the option syntax's pieces (cli_args.c), called directly ----------------------------- */

#include "cli.h"
#include "format.h"

typedef struct {
    const char *a, *b;
    int d; /* counted by hand: the edits named in the comment */
} dist_t;

Test(cli, edit_distance_by_hand)
{
    static const dist_t C[] = {
        {"argmax_flp", "argmax_flip", 1}, /* insert i */
        {"bf61", "bf16", 1},              /* swap 6 and 1 (one transposition) */
        {"k", "K", 0},                    /* case does not count */
        {"raport", "report", 1},          /* a -> e */
        {"gnerate", "generate", 1},       /* insert e */
        {"fromat", "format", 1},          /* swap r and o */
        {"", "seed", 4},                  /* four insertions */
        {"bogus", "out", 3},              /* delete b, delete g, s -> t: b-o-g-u-s to o-u-t */
        {"cpu", "gpu", 1},                /* c -> g */
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++)
        cr_expect_eq(drift_edit_distance(C[i].a, C[i].b), C[i].d, "%s / %s: %d, want %d", C[i].a, C[i].b,
            drift_edit_distance(C[i].a, C[i].b), C[i].d);
}

Test(cli, suggest_within_a_third_of_the_word)
{
    static const char *const NAMES[] = {"K", "V", "samples", "seed", "profile", "argmax_flip", "formats"};
    const int n = sizeof NAMES / sizeof NAMES[0];
    cr_expect_str_eq(drift_suggest("k", NAMES, n), "K");            /* 0 edits */
    cr_expect_str_eq(drift_suggest("sample", NAMES, n), "samples"); /* 1 edit, limit 6/3 = 2 */
    cr_expect_str_eq(drift_suggest("argmax_flp", NAMES, n), "argmax_flip");
    cr_expect_null(drift_suggest("v2", NAMES, n));    /* "V" is 1 edit, but as many as V has letters */
    cr_expect_null(drift_suggest("bogus", NAMES, n)); /* nothing within 5/3 = 1 edit */
    cr_expect_str_eq(drift_suggest("profilezzz", NAMES, n), "profile"); /* 3 edits, limit 10/3 = 3: near enough */
    cr_expect_null(drift_suggest("profilezzzz", NAMES, n));             /* 4 edits, limit 11/3 = 3 */
}

Test(cli, opt_split_both_spellings)
{
    char name[64];
    const char *v;
    cr_assert_eq(drift_opt_split(name, sizeof name, &v, "--seed"), 0);
    cr_expect_str_eq(name, "seed");
    cr_expect_null(v);
    cr_assert_eq(drift_opt_split(name, sizeof name, &v, "--out=a=b"), 0); /* the first '=' splits */
    cr_expect_str_eq(name, "out");
    cr_expect_str_eq(v, "a=b");
    cr_assert_eq(drift_opt_split(name, sizeof name, &v, "--out="), 0);
    cr_expect_str_eq(v, "");
    cr_expect_neq(drift_opt_split(name, sizeof name, &v, "-x"), 0);
    cr_expect_neq(drift_opt_split(name, sizeof name, &v, "--"), 0);
    cr_expect_neq(drift_opt_split(name, sizeof name, &v, "--=3"), 0);
}

/* A selection from a table of named cases: the names listed, in any order, are chosen and the
 * rest are not; "all" chooses every one; an unknown name dies with exit status 2 (read by hand). */
Test(cli, name_set_chooses_the_names_listed)
{
    static const char *const NAMES[] = {"rerun-same", "card-h100", "tp-3"};
    int chosen[3];
    drift_name_set(chosen, "--pairs", "tp-3,rerun-same", NAMES, 3);
    cr_expect(chosen[0] == 1 && chosen[1] == 0 && chosen[2] == 1, "%d %d %d", chosen[0], chosen[1], chosen[2]);
    drift_name_set(chosen, "--pairs", "all", NAMES, 3);
    cr_expect(chosen[0] == 1 && chosen[1] == 1 && chosen[2] == 1);
    drift_name_set(chosen, "--pairs", "card-h100", NAMES, 3);
    cr_expect(chosen[0] == 0 && chosen[1] == 1 && chosen[2] == 0);
}

Test(cli, name_set_refuses_an_unknown_name, .exit_code = 2)
{
    static const char *const NAMES[] = {"rerun-same", "card-h100"};
    int chosen[2];
    drift_name_set(chosen, "--pairs", "rerun-same,card-a100", NAMES, 2);
}

/* The names of other tools, each one format (PyTorch's torch.bfloat16, float16 = half,
 * float32 = float, float64 = double, float8_e4m3fn, float8_e5m2; NumPy's single and double;
 * OCP's E4M3 and E5M2), in any case; the canonical name printed is unchanged. */
Test(cli, format_aliases_any_case)
{
    static const struct {
        const char *name;
        const char *canonical;
    } C[] = {{"bfloat16", "bf16"}, {"BF16", "bf16"}, {"BFloat16", "bf16"}, {"float16", "fp16"}, {"half", "fp16"},
        {"HALF", "fp16"}, {"float32", "fp32"}, {"single", "fp32"}, {"float", "fp32"}, {"float64", "fp64"},
        {"double", "fp64"}, {"tf32", "tf32"}, {"TF32", "tf32"}, {"e4m3", "fp8e4m3"}, {"fp8_e4m3fn", "fp8e4m3"},
        {"float8_e4m3fn", "fp8e4m3"}, {"e5m2", "fp8e5m2"}, {"fp8_e5m2", "fp8e5m2"}, {"FP8E5M2", "fp8e5m2"}};
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        drift_format_t f;
        cr_assert_eq(drift_format_parse(&f, C[i].name), 0, "%s refused", C[i].name);
        cr_expect_str_eq(drift_format_name(f), C[i].canonical, "%s", C[i].name);
    }
    drift_format_t f;
    cr_expect_neq(drift_format_parse(&f, "fp8"), 0); /* which of the two? refused */
    cr_expect_neq(drift_format_parse(&f, "float8"), 0);
    cr_expect_neq(drift_format_parse(&f, "int8"), 0);
}
