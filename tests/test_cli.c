/* test_cli.c — the common command line, tested through a real experiment (formats): every
 * bad input of the design brief exits 2 with one line on stderr that names the option,
 * writes nothing into --out, and never harms a data file that is already there. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORMATS DRIFT_BIN_DIR "/formats"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/drift_cli_XXXXXX");
    cr_assert(mkdtemp(dir), "mkdtemp failed");
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)!system(cmd);
}

static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    cr_assert(d, "cannot open %s", path);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Runs "formats ARGS" with stdout and stderr captured outside dir (so that dir only ever
 * holds what formats itself writes). Returns the exit status. */
static int run_formats(const char *args, char *err, size_t errsz)
{
    char fe[] = "/tmp/drift_cli_err_XXXXXX";
    int fd = mkstemp(fe);
    cr_assert(fd >= 0);
    close(fd);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>%s", FORMATS, args, fe);
    int st = system(cmd);
    cr_assert(st != -1 && WIFEXITED(st), "could not run: %s", cmd);
    FILE *fp = fopen(fe, "r");
    cr_assert(fp);
    size_t n = fread(err, 1, errsz - 1, fp);
    err[n] = 0;
    fclose(fp);
    remove(fe);
    return WEXITSTATUS(st);
}

static void check_one_line_naming(const char *args, const char *err, const char *name)
{
    const char *nl = strchr(err, '\n');
    cr_assert(nl && nl[1] == 0, "formats %s: stderr must be exactly one line, got: '%s'", args, err);
    cr_assert(strstr(err, name), "formats %s: the message does not name '%s': %s", args, name, err);
    cr_assert(!strncmp(err, "formats: ", 9), "formats %s: the message should start with the program name: %s", args, err);
}

typedef struct {
    char args[200]; /* appended after --out DIR */
    char names[32]; /* what the message must name */
} bad_t;

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
        /* zero and negative sizes */
        {"--samples 0", "--samples"},
        {"--samples -5", "--samples"},
        {"--samples 12abc", "--samples"},
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
    };
    return cr_make_param_array(bad_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_t *c, cli, bad_input, .init = make_dir, .fini = remove_dir)
{
    char args[512], err[4096];
    /* The out directory does not exist yet: a bad option must not even create it. */
    snprintf(args, sizeof args, "--out %s/out --quiet %s", dir, c->args);
    int rc = run_formats(args, err, sizeof err);
    cr_assert_eq(rc, 2, "formats %s: exit %d, want 2 (stderr: %s)", args, rc, err);
    check_one_line_naming(args, err, c->names);
    cr_assert_eq(count_entries(dir), 0, "formats %s left something in %s", args, dir);
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
    check_one_line_naming(args, err, "--out");
    cr_assert_eq(count_entries(dir), 1);
    fp = fopen(path, "r");
    char buf[64] = "";
    cr_assert(fgets(buf, sizeof buf, fp));
    fclose(fp);
    cr_assert_str_eq(buf, "keep me\n");
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    cr_assert(fp, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert(fread(buf, 1, (size_t)n, fp) == (size_t)n);
    buf[n] = 0;
    fclose(fp);
    *len = (size_t)n;
    return buf;
}

/* A good run, then bad runs into the same directory: the data files of the good run
 * survive byte for byte, and no temporary is left beside them. */
Test(cli, failing_run_keeps_existing_data, .init = make_dir, .fini = remove_dir)
{
    char args[256], err[4096];
    snprintf(args, sizeof args, "--out %s --quiet --samples 20", dir);
    cr_assert_eq(run_formats(args, err, sizeof err), 0, "good run failed: %s", err);
    const char *files[] = {"formats.csv", "formats_constants.csv", "formats_spacing.csv", "formats_relerr.csv",
                           "formats.md"};
    enum { N = 5 };
    char *before[N];
    size_t len[N];
    for (int i = 0; i < N; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        before[i] = slurp(p, &len[i]);
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
        char *after = slurp(p, &n);
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
    FILE *p = popen(FORMATS " --help", "r");
    cr_assert(p);
    static char out[8192];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    cr_assert_eq(pclose(p), 0);
    const char *opts[] = {"--seed", "--profile", "--out", "--formats", "--orders", "--backend", "--threads",
                          "--quiet", "--help", "--version", "--values", "--samples"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) cr_assert(strstr(out, opts[i]), "--help lacks %s", opts[i]);
    cr_assert(strstr(out, "default"), "--help shows no defaults");
}
