/* test_workshop.c — docs/workshop.md and the README's examples work as printed.
 *
 * Every command in a ```sh block of docs/workshop.md and README.md is run, from the root of a
 * scratch copy of the working tree (so the user's paths, runs/ and --out land there), with the
 * build under test. Each must exit 0; the report's data/ and plots/ must be byte-identical
 * afterwards; and the numbers the text states must be in the output of the command that the
 * text says prints them (the EXPECT table, each line copied from the prose next to it).
 *
 * Left out for time (the default suite must stay fast), each named in SKIP: ./lab report
 * and ./lab test (they rebuild and rerun everything), and the README's default-profile
 * argmax_flip run with the plot of that run. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"


static const char *const SKIP[] = {
    "./lab report",
    "./lab test",
    "./lab run argmax_flip --K 4096 --V 32000",
    "./lab plot argmax_flip",
};

typedef struct {
    const char *cmd;  /* a substring of the command (the first command containing it) */
    const char *text; /* what its stdout must contain */
} expect_t;

static const expect_t EXPECT[] = {
    /* Exercise 1: the table of stored values */
    {"round --format fp32 0.1", "0x1.99999ap-4"},
    {"round --format fp32 0.1", "0x3dcccccd"},
    {"round --format bf16 0.1", "0x1.9ap-4,0.10009765625,0x3dcd"},
    {"round --format fp16 0.1", "0x1.998p-4,0.0999755859375,0x2e66"},
    /* Exercise 2: 65504 stays, 65520 (the tie) is inf; saturate; e4m3 448 and NaN 0x7f */
    {"round --format fp16 65504 65519 65520 70000", "0x1.ffcp+15,65504,0x7bff"},
    {"round --format fp16 65504 65519 65520 70000", "fp16,rne,inf,inf,0x7c00,inf"},
    {"round --format fp16 --overflow saturate 70000", "65504"},
    {"round --format fp8e4m3 448 70000", "448,0x7e"},
    {"round --format fp8e4m3 448 70000", "nan,nan,0x7f,nan"},
    {"round --format fp8e5m2 70000", "inf"},
    /* Exercise 3: rne -> 1, rna -> 0x1.004p+0; both give 0x1.008p+0 for 1 + 3*2^-11 */
    {"round --format tf32 0x1.002p+0 0x1.006p+0", "tf32,rne,0x1p+0"},
    {"round --format tf32 0x1.002p+0 0x1.006p+0", "0x1.008p+0"},
    {"round --format tf32 --mode rna 0x1.002p+0 0x1.006p+0", "tf32,rna,0x1.004p+0"},
    /* Exercise 4: straight to fp16 gives 0x1.004p+0; via fp32 the tie goes to 1 */
    {"round --format fp16 0x1.0020000004p+0", "fp16,rne,0x1.004p+0"},
    {"round --format fp16 0x1.002p+0", "fp16,rne,0x1p+0"},
    {"round --format fp16 1.00048828125000000000001", "fp16,rne,0x1.004p+0"},
    /* Exercise 6: seq loses the 1 (ulp_err 2^52, printed 4.5036e+15), neumaier keeps it */
    {"--order seq docs/examples/cancel.txt", "4.5036e+15"},
    {"--order neumaier docs/examples/cancel.txt", "neumaier,fp64,fp64,3,0x1p+0,1,"},
    /* Exercise 7: seq 0x1.000008p+0, V100 0x1p+0, H100 exact 0x1.000006p+0, V100 without C exact */
    {"--order seq     --c 1 docs/examples/tc_a.txt", "0x1.000008p+0"},
    {"--order tc:v100 --c 1 docs/examples/tc_a.txt", "tc:v100,fp16,fp32,4,0x1p+0"},
    {"--order tc:h100 --c 1 docs/examples/tc_a.txt", "tc:h100,fp16,fp32,4,0x1.000006p+0"},
    {"--format fp16 --order tc:v100 docs/examples/tc_a.txt", "0x1.8p-22"},
    /* Exercise 8: exact top-1 is token 1 by 0.5; fp16 accumulation flips; fp32 does not;
     * bf16 logits tie at 2048 and flip */
    {"argmax --format fp16 --order seq docs/examples/h.txt", ",0x1p-1,0.5,0,0,"},
    {"argmax --format fp16 --order seq docs/examples/h.txt", ",1\n"},
    {"argmax --format fp16 --acc fp32 --order seq docs/examples/h.txt", ",0\n"},
    {"--logits bf16 --order seq docs/examples/h.txt", ",0x1p+11,2048,0x1p+11,2048,1\n"},
    /* README */
    {"round --format bf16 0.1", "0x1.999999999999ap-4,bf16,rne,0x1.9ap-4,0.10009765625,0x3dcd,normal"},
    {"round --format tf32 --mode rna 0x1.002p+0  #", "0x1.004p+0"},
    {"round --format fp8e4m3 70000", "nan"},
};

/* Exercise 5's numbers are in the run's CSV, not on stdout: "1e-5" rows, rel_err column. */
static const char *const EX5_ROWS[] = {",1.358032e-03,", ",1.320839e-04,"};

static int skipped(const char *cmd)
{
    for (size_t i = 0; i < sizeof SKIP / sizeof SKIP[0]; i++)
        if (strncmp(cmd, SKIP[i], strlen(SKIP[i])) == 0) return 1;
    return 0;
}

Test(workshop, every_command_runs_as_printed_and_states_true_numbers, .timeout = 600)
{
    char dir[64];
    tmpdir_make(dir, sizeof dir, "workshop");
    /* the working tree as a fresh clone would have it (tracked and new files, no build) */
    cr_assert_eq(sh("cd '" DRIFT_SOURCE_DIR "' && git ls-files -co --exclude-standard -z | "
                    "tar --null -T - -cf - 2>/dev/null | (cd '%s' && tar xf -)",
                     dir),
        0);
    cr_assert_eq(sh("cd '%s' && find data plots -type f | sort | xargs md5sum > ../%s.before", dir, dir + 5), 0);
    /* the commands: lines of ```sh blocks; in a block of "$ cmd" lines only those */
    cr_assert_eq(
        sh("cd '%s' && awk '/^```sh/ { f = 1; n = 0; next } /^```/ { f = 0; next } "
           "f { print FILENAME \"\\t\" $0 }' docs/workshop.md README.md | "
           "awk -F'\\t' '{ l = $2; if (l ~ /^\\$ /) { print substr(l, 3) } "
           "else if (l ~ /^\\.\\/lab / && !dollar[$1]) print l; if (l ~ /^\\$ /) dollar[$1] = 1 }' > ../%s.cmds",
            dir, dir + 5),
        0);
    char path[128];
    snprintf(path, sizeof path, "/tmp/%s.cmds", dir + 5);
    FILE *fp = fopen(path, "r");
    cr_assert(fp, "no command list");
    char line[1024];
    int ran = 0;
    static char outs[128][4096];
    static char cmds[128][1024];
    while (fgets(line, sizeof line, fp) && ran < 128) {
        line[strcspn(line, "\n")] = 0;
        if (!*line || skipped(line)) continue;
        snprintf(cmds[ran], sizeof cmds[ran], "%s", line);
        char cmd[256];
        /* each command through a script file: the docs' commands contain quotes of their own */
        char script[128];
        snprintf(script, sizeof script, "/tmp/%s.cmd", dir + 5);
        FILE *sf = fopen(script, "w");
        cr_assert(sf);
        fprintf(sf, "cd '%s' || exit 99\nexport DRIFT_BUILD_DIR='%s/..'\n%s\n", dir, DRIFT_BIN_DIR, line);
        fclose(sf);
        snprintf(cmd, sizeof cmd, "bash %s 2>/dev/null", script);
        int rc = run_stdout(cmd, outs[ran], sizeof outs[ran]);
        cr_expect_eq(rc, 0, "exit %d: %s", rc, line);
        ran++;
    }
    fclose(fp);
    cr_assert_gt(ran, 30, "only %d commands found in the docs", ran);
    cr_log_info("%d commands run", ran);
    for (size_t e = 0; e < sizeof EXPECT / sizeof EXPECT[0]; e++) {
        int found = -1;
        for (int i = 0; i < ran && found < 0; i++)
            if (strstr(cmds[i], EXPECT[e].cmd)) found = i;
        cr_expect_geq(found, 0, "no command contains '%s'", EXPECT[e].cmd);
        if (found >= 0)
            cr_expect(strstr(outs[found], EXPECT[e].text), "'%s' does not print '%s'; it printed:\n%s", cmds[found],
                EXPECT[e].text, outs[found]);
    }
    char csv[128];
    snprintf(csv, sizeof csv, "%s/runs/workshop/formats.csv", dir);
    char *text = slurp(csv);
    for (size_t i = 0; i < 2; i++) cr_expect(strstr(text, EX5_ROWS[i]), "Exercise 5: %s not in %s", EX5_ROWS[i], csv);
    free(text);
    snprintf(csv, sizeof csv, "%s/runs/workshop/formats_relerr.png", dir);
    FILE *png = fopen(csv, "r");
    cr_expect(png != NULL, "./lab plot formats_relerr --data runs/workshop made no plot");
    if (png) fclose(png);
    /* the report's data and plots are untouched */
    cr_expect_eq(sh("cd '%s' && find data plots -type f | sort | xargs md5sum | cmp -s - ../%s.before", dir, dir + 5),
        0, "a workshop or README command changed data/ or plots/");
    sh("rm -f /tmp/%s.before /tmp/%s.cmds /tmp/%s.cmd", dir + 5, dir + 5, dir + 5);
    tmpdir_remove(dir);
}
