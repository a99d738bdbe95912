/* test_calc_round.c — `drift-calc round` from the outside: the rows of README's probe-calculator
 * examples and other known roundings, and the bad inputs that must exit 2.
 *
 * Every expected row below is derived by hand next to the case (binary expansion of the
 * input, the format's p, emin and bias), never taken from the program's own output. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define CALC DRIFT_BIN_DIR "/drift-calc"

/* Runs "drift-calc ARGS", captures stdout and stderr; returns the exit status. */
static int run_calc(const char *args, char *out, size_t outsz, char *err, size_t errsz)
{
    char cmd[8192]; /* args can be a 4 KiB list of values (the sr test) */
    int n = snprintf(cmd, sizeof cmd, "%s %s", CALC, args);
    cr_assert(n > 0 && (size_t)n < sizeof cmd, "command too long");
    return run_capture(cmd, out, outsz, err, errsz);
}

typedef struct {
    char args[160];
    char row[160]; /* the expected data row (the line after the header) */
} round_case_t;

ParameterizedTestParameters(calc_round, known_rows)
{
    static round_case_t cases[] = {
        /* README example 1. 0.1 = 1.1001100110011...b x 2^-4. bf16 keeps 7 fraction bits:
         * 1001100|1100... the rest is above half, so round up to 1001101b = 0x9a:
         * 0x1.9ap-4 = 0.10009765625. Encoding: exponent -4 + 127 = 123 = 0x7b, so
         * 0 01111011 1001101 = 0x3dcd. The input double of 0.1 is 0x1.999999999999ap-4. */
        {"round --format bf16 0.1", "0x1.999999999999ap-4,bf16,rne,0x1.9ap-4,0.10009765625,0x3dcd,normal"},
        /* README example 2. fp16 max is 65504 = 0x1.ffcp+15, spacing 32 there; 65520 is the
         * midpoint to 65536 and 65504's last bit is 1 (odd), so the tie goes up to 2^16,
         * beyond the range: +inf = 0 11111 0000000000 = 0x7c00. */
        {"round --format fp16 65520", "0x1.ffep+15,fp16,rne,inf,inf,0x7c00,inf"},
        /* README example 3. Saturation: the largest finite, 0 11110 1111111111 = 0x7bff. */
        {"round --format fp16 --overflow saturate 65520", "0x1.ffep+15,fp16,rne,0x1.ffcp+15,65504,0x7bff,normal"},
        /* README example 4. 0x1.002p+0 = 1 + 2^-11, a tie at tf32's p = 11 (10 fraction bits);
         * rna goes away from zero: 1 + 2^-10 = 0x1.004p+0 = 1.0009765625. The fp32 word:
         * 0x3f800000 + (1 << 13) = 0x3f802000. */
        {"round --format tf32 --mode rna 0x1.002p+0", "0x1.002p+0,tf32,rna,0x1.004p+0,1.0009765625,0x3f802000,normal"},
        /* The same tie in rne: 1's last bit is even, so back to 1. */
        {"round --format tf32 0x1.002p+0", "0x1.002p+0,tf32,rne,0x1p+0,1,0x3f800000,normal"},
        /* Single rounding: 1 + 2^-11 + 2^-40 is above the tie, so fp16 rounds up to
         * 1 + 2^-10 (via fp32 it would first become the tie 1 + 2^-11, then 1).
         * 0 01111 0000000001 = 0x3c01. */
        {"round --format fp16 0x1.0020000004p+0", "0x1.0020000004p+0,fp16,rne,0x1.004p+0,1.0009765625,0x3c01,normal"},
        /* fp16 smallest subnormal 2^-24: exponent field 0, fraction 1 = 0x0001. */
        {"round --format fp16 0x1p-24", "0x1p-24,fp16,rne,0x1p-24,5.9604644775390625e-08,0x0001,subnormal"},
        /* 2^-25 is the midpoint between 0 and 2^-24; 0 is even: +0. */
        {"round --format fp16 0x1p-25", "0x1p-25,fp16,rne,0x0p+0,0,0x0000,zero"},
        /* Flushing: 2^-20 is an fp16 subnormal (below 2^-14), so flush gives +0. */
        {"round --format fp16 --subnormals flush 0x1p-20", "0x1p-20,fp16,rne,0x0p+0,0,0x0000,zero"},
        /* Directed modes on fp16(0.1): 1.1001100110|011... The neighbours are 0x1.998p-4
         * and 0x1.99cp-4; rz and rd go down, ru goes up. Exponent -4 + 15 = 11 = 01011:
         * 0 01011 1001100110 = 0x2e66, and + 1 = 0x2e67. */
        {"round --format fp16 --mode rz 0.1", "0x1.999999999999ap-4,fp16,rz,0x1.998p-4,0.0999755859375,0x2e66,normal"},
        {"round --format fp16 --mode ru 0.1", "0x1.999999999999ap-4,fp16,ru,0x1.99cp-4,0.10003662109375,0x2e67,normal"},
        {"round --format fp16 --mode rd -0.1",
            "-0x1.999999999999ap-4,fp16,rd,-0x1.99cp-4,-0.10003662109375,0xae67,normal"},
        /* Negative bf16: the sign bit on top of 0x3dcd. */
        {"round --format bf16 -0.1", "-0x1.999999999999ap-4,bf16,rne,-0x1.9ap-4,-0.10009765625,0xbdcd,normal"},
        /* fp8 e4m3 (OCP fn) has no infinity: 70000 overflows to NaN, S.1111.111 = 0x7f. */
        {"round --format fp8e4m3 70000", "0x1.117p+16,fp8e4m3,rne,nan,nan,0x7f,nan"},
        /* e4m3 max 448 = 1.75 x 2^8: 0 1111 110 = 0x7e. */
        {"round --format fp8e4m3 448", "0x1.cp+8,fp8e4m3,rne,0x1.cp+8,448,0x7e,normal"},
        /* fp8 e5m2: 70000 > 57344 + 8192/2, so inf: 0 11111 00 = 0x7c. */
        {"round --format fp8e5m2 70000", "0x1.117p+16,fp8e5m2,rne,inf,inf,0x7c,inf"},
        /* fp64: the IEEE word of 0.1, 0x3fb999999999999a (every textbook). */
        {"round --format fp64 0.1",
            "0x1.999999999999ap-4,fp64,rne,0x1.999999999999ap-4,0.10000000000000001,0x3fb999999999999a,normal"},
        /* fp32(0.1) = 0x1.99999ap-4 = 0x3dcccccd (the well-known float 0.1). */
        {"round --format fp32 0.1",
            "0x1.999999999999ap-4,fp32,rne,0x1.99999ap-4,0.10000000149011612,0x3dcccccd,normal"},
        /* Infinity stays infinity where the format has one. */
        {"round --format bf16 -inf", "-inf,bf16,rne,-inf,-inf,0xff80,inf"},
    };
    return cr_make_param_array(round_case_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(round_case_t *c, calc_round, known_rows)
{
    char out[4096], err[4096];
    int rc = run_calc(c->args, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "drift-calc %s: exit %d, stderr: %s", c->args, rc, err);
    char expect[512];
    snprintf(expect, sizeof expect, "input,format,mode,result_hex,result,bits,class\n%s\n", c->row);
    cr_assert_str_eq(out, expect, "drift-calc %s", c->args);
}

typedef struct {
    char args[160];
    char names[40]; /* what the one-line message must mention */
} bad_case_t;

ParameterizedTestParameters(calc_round, bad_input)
{
    static bad_case_t cases[] = {
        {"round --format fp17 1", "--format"},
        {"round --format fp16 --mode nearest 1", "--mode"},
        {"round --format fp16 --subnormals drop 1", "--subnormals"},
        {"round --format fp16 --overflow wrap 1", "--overflow"},
        {"round --format fp16 --seed -1 1", "--seed"},
        {"round --format fp16 --bogus 1", "--bogus"},
        {"round --format fp16 0.1 0.2x", "0.2x"},
        {"round --format fp16 1e9x9", "1e9x9"}, /* 1e999 is a number: it rounds to inf */
        {"round --format fp16", "VALUE"},
        {"round 0.1", "--format"},
        {"round --format", "--format"},
    };
    return cr_make_param_array(bad_case_t, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_case_t *c, calc_round, bad_input)
{
    char out[4096], err[4096];
    int rc = run_calc(c->args, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 2, "drift-calc %s: exit %d, want 2", c->args, rc);
    /* Nothing on stdout: a partial table would look like an answer. */
    cr_assert_str_eq(out, "", "drift-calc %s printed: %s", c->args, out);
    char *nl = strchr(err, '\n');
    cr_assert(nl && nl[1] == 0, "drift-calc %s: stderr must be one line, got: %s", c->args, err);
    cr_assert(strstr(err, c->names), "drift-calc %s: stderr does not name '%s': %s", c->args, c->names, err);
}

/* Stochastic rounding: each result is one of the two fp16 neighbours of 0.1, the same
 * seed gives the same rows, and over 400 draws both neighbours appear (0.1 sits 40% of
 * the way up: P(all 400 the same) = 0.6^400 + 0.4^400 < 1e-88). */
Test(calc_round, stochastic_rounding)
{
    char args[4096] = "round --format fp16 --mode sr --seed 7";
    for (int i = 0; i < 400; i++) strcat(args, " 0.1");
    static char out1[65536], out2[65536], err[4096];
    cr_assert_eq(run_calc(args, out1, sizeof out1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_calc(args, out2, sizeof out2, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(out1, out2, "same seed, different rows");
    int down = 0, up = 0;
    char *save = NULL;
    for (char *line = strtok_r(out1, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "input,", 6)) continue;
        if (strstr(line, ",0x1.998p-4,"))
            down++;
        else if (strstr(line, ",0x1.99cp-4,"))
            up++;
        else
            cr_assert_fail("sr result is not a neighbour of 0.1: %s", line);
    }
    cr_assert_eq(down + up, 400);
    cr_assert(down > 0 && up > 0, "down %d up %d", down, up);
    /* A different seed gives a different sequence (P(equal) = tiny, as above). */
    char args2[4096];
    snprintf(args2, sizeof args2, "round --format fp16 --mode sr --seed 8%s",
        args + strlen("round --format fp16 --mode sr --seed 7"));
    cr_assert_eq(run_calc(args2, out2, sizeof out2, err, sizeof err), 0, "%s", err);
    run_calc(args, out1, sizeof out1, err, sizeof err);
    cr_assert_str_neq(out1, out2, "seeds 7 and 8 gave the same draws");
}

Test(calc_round, several_values_keep_order)
{
    char out[4096], err[4096];
    cr_assert_eq(run_calc("round --format fp16 1 -- -2", out, sizeof out, err, sizeof err), 0, "%s", err);
    /* 1 = 0 01111 0 = 0x3c00; -2 = 1 10000 0 = 0xc000. */
    cr_assert_str_eq(out, "input,format,mode,result_hex,result,bits,class\n"
                          "0x1p+0,fp16,rne,0x1p+0,1,0x3c00,normal\n"
                          "-0x1p+1,fp16,rne,-0x1p+1,-2,0xc000,normal\n");
}

Test(calc_env, prints_key_value_csv)
{
    char out[8192], err[4096];
    cr_assert_eq(run_calc("env", out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(!strncmp(out, "key,value\n", 10), "%s", out);
    const char *keys[] = {"\ndriftlab,", "\ngit,", "\ncompiler,", "\nmpfr,", "\ngmp,", "\ncpu,", "\ncuda,"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert(strstr(out, keys[i]), "missing %s", keys[i] + 1);
    cr_assert_eq(run_calc("env --bogus", out, sizeof out, err, sizeof err), 2);
}
