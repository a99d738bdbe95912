/* calc_round.c — `drift-calc round`: round your own numbers into any format and see the
 * bits, so a workshop can check a claim ("bf16(0.1) is 0x3dcd") without writing code.
 *
 *   drift-calc round --format F [--mode M] [--subnormals keep|flush]
 *                    [--overflow inf|saturate] [--seed N] VALUE...
 *
 * CSV on stdout, one row per VALUE:
 *   input,format,mode,result_hex,result,bits,class
 * The VALUE's exact value (decimal or hex) is rounded once to the format (decimal.h), never
 * via double first. input is the VALUE rounded to double (nearest-even), for reference;
 * input and result_hex in C99 hex (%a; the rounded value as a double), result in %.17g
 * (enough digits to read the double back exactly), bits the encoding in hex with the
 * format's width (fp64 16 digits, fp32/tf32 8, fp16/bf16 4, fp8 2), class one of
 * zero|subnormal|normal|inf|nan.
 *
 * --mode sr draws one 32-bit word per VALUE from the Philox stream
 * (seed, "calc.round", point = position of the VALUE, trial 0), so a row's result depends
 * only on the seed and its position, never on the other values. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "calc_input.h"
#include "cli.h"
#include "output.h"
#include "decimal.h"
#include "drift.h"
#include "format.h"
#include "philox.h"

static void format_list(char *buf, size_t size)
{
    buf[0] = 0;
    for (int i = 0; i < DRIFT_NFORMATS; i++) {
        strncat(buf, drift_format_name((drift_format_t)i), size - strlen(buf) - 1);
        if (i + 1 < DRIFT_NFORMATS) strncat(buf, ", ", size - strlen(buf) - 1);
    }
}

static void mode_list(char *buf, size_t size)
{
    buf[0] = 0;
    for (int i = 0; i < DRIFT_NMODES; i++) {
        strncat(buf, drift_mode_name((drift_mode_t)i), size - strlen(buf) - 1);
        if (i + 1 < DRIFT_NMODES) strncat(buf, ", ", size - strlen(buf) - 1);
    }
}

static void usage(FILE *to)
{
    char formats[128], modes[64];
    format_list(formats, sizeof formats);
    mode_list(modes, sizeof modes);
    fprintf(to,
        "usage: drift-calc round --format F [--mode M] [--subnormals keep|flush] [--overflow inf|saturate]\n"
        "                        [--seed N] VALUE...\n"
        "  --format F       target format (%s)\n"
        "  --mode M         rounding mode (%s; default rne)\n"
        "  --subnormals S   keep|flush: a result below the smallest normal becomes zero (default keep)\n"
        "  --overflow O     inf|saturate: overflow gives inf (NaN in fp8e4m3) or +-max finite (default inf)\n"
        "  --seed N         Philox seed for --mode sr (default 1)\n"
        "  VALUE            decimal or C99 hex float, inf, nan; negative values are fine; its exact value is\n"
        "                   rounded once (input = the VALUE rounded to double, for reference)\n"
        "prints CSV: input,format,mode,result_hex,result,bits,class\n",
        formats, modes);
}

int calc_round(int argc, char **argv)
{
    const char *format_s = NULL, *mode_s = NULL, *sub_s = NULL, *over_s = NULL, *seed_s = NULL;
    drift_round_opts_t opts = {DRIFT_RNE, 0, 0};
    uint64_t seed = 1;
    const char **values = calloc((size_t)argc, sizeof *values);
    if (!values) drift_die_oom((double)argc * sizeof *values, "the list of %d arguments", argc);
    /* A negative number ("-0.5", "-inf") is a VALUE, not an option: drift_args_parse takes
     * only "--name" (and -h) as one, and everything after "--" as VALUEs. */
    const drift_arg_opt_t known[] = {{"format", &format_s, NULL, 0, "F"}, {"mode", &mode_s, NULL, 0, "M"},
        {"subnormals", &sub_s, NULL, 0, "keep|flush"}, {"overflow", &over_s, NULL, 0, "inf|saturate"},
        {"seed", &seed_s, NULL, 0, "N"}};
    int nvalues = drift_args_parse(known, 5, values, argc, argc, argv, usage);
    if (format_s) drift_format_arg("--format", format_s);
    if (mode_s && drift_mode_parse(&opts.mode, mode_s) != DRIFT_OK) {
        const char *names[DRIFT_NMODES];
        for (int i = 0; i < DRIFT_NMODES; i++) names[i] = drift_mode_name((drift_mode_t)i);
        drift_name_pick("--mode", mode_s, names, DRIFT_NMODES);
    }
    static const char *const SUB[] = {"keep", "flush"}, *const OVER[] = {"inf", "saturate"};
    if (sub_s) opts.flush_subnormals = drift_name_pick("--subnormals", sub_s, SUB, 2);
    if (over_s) opts.saturate = drift_name_pick("--overflow", over_s, OVER, 2);
    if (seed_s) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(seed_s, &end, 10);
        /* strtoull accepts "-1" (as 2^64-1) and sets ERANGE on overflow: refuse both. */
        if (!*seed_s || *end || errno || !(seed_s[0] >= '0' && seed_s[0] <= '9'))
            drift_die("--seed: '%s' is not a non-negative integer (accepted: 0..2^64-1)", seed_s);
        seed = v;
    }
    if (!format_s) drift_die("--format: missing (accepted: see drift-calc round --help)");
    if (nvalues == 0) drift_die("no VALUE given (usage: drift-calc round --format F VALUE...)");

    drift_format_t f = drift_format_arg("--format", format_s);
    const drift_format_info_t *fi = drift_format_info(f);

    /* Parse every value before printing anything: a typo in the fifth value must not leave
     * four rows that look like a complete answer. */
    double *x = malloc((size_t)nvalues * sizeof *x);
    if (!x) drift_die_oom((double)nvalues * sizeof *x, "%d values", nvalues);
    for (int i = 0; i < nvalues; i++)
        if (drift_decimal_round(&x[i], values[i], DRIFT_FP64, NULL, 0) != DRIFT_OK)
            drift_die("VALUE: '%s' is not a number (accepted: decimal or hex float, inf, nan)", values[i]);

    const uint32_t stream_id = drift_fnv1a32("calc.round");
    printf("input,format,mode,result_hex,result,bits,class\n");
    for (int i = 0; i < nvalues; i++) {
        uint32_t sr_bits = 0;
        if (opts.mode == DRIFT_SR) {
            drift_stream_t s;
            drift_stream_init(&s, seed, stream_id, (uint32_t)i, 0);
            sr_bits = drift_stream_u32(&s);
        }
        double r;
        if (drift_decimal_round(&r, values[i], f, &opts, sr_bits) != DRIFT_OK) /* valid: checked above */
            drift_die("VALUE: '%s' is not a number (accepted: decimal or hex float, inf, nan)", values[i]);
        uint64_t bits = drift_encode(r, f);
        int hexdigits = (f == DRIFT_TF32 ? 32 : fi->bits) / 4;
        printf("%a,%s,%s,%a,%.17g,0x%0*" PRIx64 ",%s\n", calc_nan(x[i]), fi->name, drift_mode_name(opts.mode),
            calc_nan(r), calc_nan(r), hexdigits, bits, drift_class_name(drift_classify(r, f)));
    }
    free(x);
    free(values);
    return drift_stdout_close_check(); /* a failed write is one line naming its cause, status 2 */
}
