/* test_calc_sum.c — `drift-calc sum` and `drift-calc dot` from the outside: the built
 * program is run through the shell on temporary files. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

#define CALC DRIFT_BIN_DIR "/drift-calc"

/* Runs a shell command; returns the exit status, stdout in out (may be NULL), and the
 * number of stderr lines in *errlines. */
static int run(const char *cmd, char *out, size_t outsize, int *errlines)
{
    char full[2048], errpath[64];
    snprintf(errpath, sizeof errpath, "/tmp/drift_calc_sum_err_%d", (int)getpid());
    snprintf(full, sizeof full, "%s 2>%s", cmd, errpath);
    int st = run_stdout(full, out, outsize);
    FILE *e = fopen(errpath, "r");
    int lines = 0;
    char buf[512];
    if (e) {
        while (fgets(buf, sizeof buf, e)) lines++;
        fclose(e);
        remove(errpath);
    }
    if (errlines) *errlines = lines;
    return st;
}

#define HEADER "order,format,acc,n,result_hex,result,exact_hex,exact,abs_err,rel_err,ulp_err\n"

/* The README's calc sum example. seq loses the 1 (1e16 + 1 is a tie that rounds to
 * the even 1e16); Kahan loses it too (its correction -1 is absorbed when it meets -1e16:
 * see test_order.c, compensated_classics); Neumaier keeps it. The error of 1 is 2^52 ulps
 * of fp64 at the exact value 1 (2^52 = 4503599627370496, printed %.6g as 4.5036e+15). */
Test(calc_sum, acceptance)
{
    char out[1024];
    const struct {
        const char *order, *row;
    } c[] = {
        {"seq", "seq,fp64,fp64,3,0x0p+0,0,0x1p+0,1,1,1,4.5036e+15\n"},
        {"kahan", "kahan,fp64,fp64,3,0x0p+0,0,0x1p+0,1,1,1,4.5036e+15\n"},
        {"neumaier", "neumaier,fp64,fp64,3,0x1p+0,1,0x1p+0,1,0,0,0\n"},
    };
    for (int i = 0; i < 3; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "printf '1e16\\n1\\n-1e16\\n' | %s sum --format fp64 --order %s -", CALC, c[i].order);
        cr_assert_eq(run(cmd, out, sizeof out, NULL), 0, "%s", cmd);
        char want[256];
        snprintf(want, sizeof want, HEADER "%s", c[i].row);
        cr_assert_str_eq(out, want);
    }
}

/* Inputs are rounded to F before summing, and the exact column is the exact sum of the
 * ROUNDED inputs: 0.1 in fp16 is 0x1.998p-4 (RNE of 0.1 to 11 bits); four of them sum
 * exactly to 0x1.998p-2, which every order reaches exactly in fp32. File comments and
 * blank lines are skipped. */
Test(calc_sum, rounded_inputs)
{
    const char *f = tmpfile_with(0, "# four tenths\n0.1\n\n0.1\n  0.1  \n0x1.999999999999ap-4\n");
    char cmd[512], out[1024];
    snprintf(cmd, sizeof cmd, "%s sum --format fp16 --acc fp32 --order pairwise %s", CALC, f);
    cr_assert_eq(run(cmd, out, sizeof out, NULL), 0);
    cr_assert_str_eq(out, HEADER "pairwise,fp16,fp32,4,0x1.998p-2,0.39990234375,0x1.998p-2,0.39990234375,0,0,0\n");
    remove(f);
}

/* fma vs nofma (hand-derived in test_order.c, fma_vs_nofma): fp32, a = b = 1 + 2^-12,
 * c = -1: fma gives 2^-11 + 2^-24 = 0x1.0008p-11 = 0.00048834085464477539 exactly
 * (error 0); nofma rounds the product to 1 + 2^-11 first and gives 2^-11, off by
 * 2^-24 = 5.9604644775390625e-08, which is 2^10 = 1024 ulps of fp32 in the 2^-11 binade
 * (spacing 2^-34). */
Test(calc_sum, dot_fma_nofma)
{
    const char *fa = tmpfile_with(0, "0x1.001p+0\n");
    const char *fb = tmpfile_with(1, "0x1.001p+0\n");
    char cmd[512], out[1024];
    snprintf(cmd, sizeof cmd, "%s dot --format fp32 --order seq --c -1 %s %s", CALC, fa, fb);
    cr_assert_eq(run(cmd, out, sizeof out, NULL), 0);
    cr_assert_str_eq(out, HEADER "seq,fp32,fp32,1,0x1.0008p-11,0.00048834085464477539,0x1.0008p-11,"
                                 "0.00048834085464477539,0,0,0\n");
    snprintf(cmd, sizeof cmd, "%s dot --format fp32 --order seq --nofma --c -1 %s %s", CALC, fa, fb);
    cr_assert_eq(run(cmd, out, sizeof out, NULL), 0);
    cr_assert(strstr(out, "seq,fp32,fp32,1,0x1p-11,0.00048828125,0x1.0008p-11,0.00048834085464477539,"
                          "5.9604644775390625e-08,"),
        "%s", out);
    cr_assert(strstr(out, ",1024\n"), "%s", out);
    remove(fa);
    remove(fb);
}

/* Every bad input: exit status 2, one line on stderr, nothing on stdout. */
Test(calc_sum, bad_inputs_exit_2)
{
    const char *good = tmpfile_with(0, "1\n2\n3\n");
    const char *shorter = tmpfile_with(1, "1\n2\n");
    const char *empty = tmpfile_with(2, "# nothing here\n\n");
    const char *garbage = tmpfile_with(3, "1\n2x\n3\n");
    struct {
        const char *args;
        const char *why;
    } c[] = {
        {"sum --format fp32 --order warp:6 G", "warp not a power of two"},
        {"sum --format fp32 --order blocked:0 G", "blocked:0"},
        {"sum --format fp32 --order splitk: G", "splitk without S"},
        {"sum --format fp32 --order splitk:3:foo G", "bad splitk suffix"},
        {"sum --format fp32 --order random: G", "random without seed"},
        {"sum --format fp32 --order sideways G", "unknown order"},
        {"sum --format fp17 --order seq G", "unknown format"},
        {"sum --format fp32 --acc fp99 --order seq G", "unknown acc"},
        {"sum --format fp32 G", "missing --order"},
        {"sum --order seq G", "missing --format"},
        {"sum --format fp32 --order seq", "no file"},
        {"sum --format fp32 --order seq G G", "two files for sum"},
        {"sum --format fp32 --order seq --bogus G", "unknown option"},
        {"sum --format fp32 --order seq --nofma G", "--nofma is for dot"},
        {"sum --format fp32 --order tc:h100 G", "tc on a sum"},
        {"sum --format fp32 --order seq E", "empty file"},
        {"sum --format fp32 --order seq X", "unparsable line"},
        {"sum --format fp32 --order seq /nonexistent/drift", "missing file"},
        {"dot --format fp32 --order seq G S", "mismatched lengths"},
        {"dot --format fp32 --order seq G", "one file for dot"},
        {"dot --format fp32 --order seq --c abc G G", "bad --c"},
        {"dot --format fp32 --order seq G E", "empty second file"},
        {"dot --format fp32 --order seq - -", "stdin twice"},
        {"dot --format fp16 --order tc:h100 --acc bf16 G G", "tc output must be fp32 or fp16"},
        {"dot --format fp32 --order tc:v100 G G", "fp32 inputs have no tensor-core path"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char args[512], cmd[1024], out[1024];
        /* substitute G, S, E, X with the temporary files */
        args[0] = 0;
        for (const char *p = c[i].args; *p; p++) {
            const char *sub = NULL;
            if ((p == c[i].args || p[-1] == ' ') && (p[1] == 0 || p[1] == ' ')) {
                if (*p == 'G') sub = good;
                if (*p == 'S') sub = shorter;
                if (*p == 'E') sub = empty;
                if (*p == 'X') sub = garbage;
            }
            if (sub)
                strncat(args, sub, sizeof args - strlen(args) - 1);
            else
                strncat(args, (char[]){*p, 0}, sizeof args - strlen(args) - 1);
        }
        snprintf(cmd, sizeof cmd, "%s %s </dev/null", CALC, args);
        int lines;
        int st = run(cmd, out, sizeof out, &lines);
        cr_assert_eq(st, 2, "%s (%s): exit %d", c[i].why, cmd, st);
        cr_assert_str_empty(out, "%s: stdout must stay empty", c[i].why);
        cr_assert_eq(lines, 1, "%s: one line on stderr, got %d", c[i].why, lines);
    }
    remove(good);
    remove(shorter);
    remove(empty);
    remove(garbage);
}
