/* test_messages.c — messages once found wrong: each case failed before its fix. */
#include "support.h"
#include "drift.h"
#include "why.h"

#define BIN DRIFT_BIN_DIR

/* inf + -inf is x86's default NaN, sign bit set: glibc printed "-nan" beside the exact "nan". */
Test(messages, calc_spells_nan_one_way)
{
    const char *f = tmpfile_with(0, "inf\n-inf\n");
    char out[1024], cmd[512];
    snprintf(cmd, sizeof cmd, "'%s/drift-calc' sum --format fp32 --order seq '%s'", BIN, f);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 0);
    cr_assert_str_eq(out, "order,format,acc,n,result_hex,result,exact_hex,exact,abs_err,rel_err,ulp_err\n"
                          "seq,fp32,fp32,2,nan,nan,nan,nan,nan,nan,nan\n");
    remove(f);
}

/* ./lab with an unknown command: one line naming it and the accepted commands (was 18+ lines). */
Test(messages, lab_unknown_command_is_one_line)
{
    char err[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "'%s/lab' bogus", DRIFT_SOURCE_DIR);
    cr_assert_eq(run_capture(cmd, NULL, 0, err, sizeof err), 2);
    cr_assert_str_eq(err,
        "lab: unknown command 'bogus' (accepted: setup, build, test, list, run, plot, report, calc, generate, "
        "forecast, models, bench, sweep, fuzz, help)\n");
}

/* A format without a tensor-core path: refused before the files are read (they do not exist
 * here), naming the formats that have one. */
Test(messages, calc_dot_lists_accepted_formats_before_reading)
{
    char err[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "'%s/drift-calc' dot --format bf16 --order tc:v100 /nonexistent/a /nonexistent/b", BIN);
    cr_assert_eq(run_capture(cmd, NULL, 0, err, sizeof err), 2);
    cr_assert_str_eq(
        err, "drift-calc dot: --format: bf16 has no tc:v100 path (accepted with --order tc:v100 --acc fp32: fp16)\n");
}

/* --help states the limits the parser enforces. */
Test(messages, help_states_limits)
{
    char out[16384], cmd[512];
    snprintf(cmd, sizeof cmd, "'%s/matmul_drift' --help", BIN);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 0);
    cr_assert(strstr(out, "--threads N          OpenMP threads, 1..256"), "%s", out);
    cr_assert(
        strstr(out,
            "inner dimensions; 1..1048576; at most 64 distinct values (default by profile: quick 64,128,256,512,1024, "),
        "%s", out);
}

/* The build's commit is compiled in: drift-calc env's git is the header the build generated
 * (cmake/gitinfo.cmake), not what `git rev-parse` says at run time (before, a commit after
 * the build changed the # git: line of an unchanged binary). */
Test(messages, git_is_the_builds_commit)
{
    char env[4096], hdr[512], cmd[512];
    snprintf(cmd, sizeof cmd, "'%s/drift-calc' env | grep '^git,' | cut -d, -f2", BIN);
    cr_assert_eq(run_stdout(cmd, env, sizeof env), 0);
    snprintf(cmd, sizeof cmd,
        "sed -n 's/^#define DRIFT_BUILD_GIT \"\\(.*\\)\"$/\\1/p' '%s/../generated/drift_gitinfo.h'", BIN);
    cr_assert_eq(run_stdout(cmd, hdr, sizeof hdr), 0);
    cr_assert(hdr[0], "the generated header names a commit");
    cr_assert_str_eq(env, hdr);
}

/* A failed allocation names what and how large (a bare "out of memory" left the user to guess
 * which size to lower). Sizes in decimal units, hand-computed: 49152 * 576 * 8 B =
 * 226,492,416 B = 226 MB; 1.5e9 B = 1.5 GB; 999 B stays bytes; 999.6 B rounds to 1.0 KB. */
Test(messages, out_of_memory_names_what_and_how_large)
{
    static const struct {
        double bytes;
        const char *text;
    } SIZES[] = {{0, "0 B"}, {999, "999 B"}, {999.6, "1.0 KB"}, {12345, "12 KB"}, {226492416, "226 MB"},
        {1.5e9, "1.5 GB"}, {9.96e9, "10 GB"}, {4.4e12, "4.4 TB"}};
    for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
        char b[32];
        drift_bytes_text(b, sizeof b, SIZES[i].bytes);
        cr_expect_str_eq(b, SIZES[i].text, "%.17g bytes", SIZES[i].bytes);
    }
    char why[128];
    cr_assert_eq(drift_why_oom(why, sizeof why, 8.0 * 49152 * 576, "the %d x %d logits", 49152, 576), DRIFT_ENOMEM);
    cr_expect_str_eq(why, "out of memory allocating the 49152 x 576 logits (226 MB)");
}
