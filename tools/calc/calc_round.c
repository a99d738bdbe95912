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
#include "cli.h"
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

/* A negative number ("-0.5", "-inf") is a VALUE, not an option: only "--name" is. */
static int is_option(const char *s)
{
    return s[0] == '-' && s[1] == '-' && s[2] != 0;
}

int calc_round(int argc, char **argv)
{
    const char *format_s = NULL;
    drift_round_opts_t opts = {DRIFT_RNE, 0, 0};
    uint64_t seed = 1;
    int nvalues = 0;
    char **values = calloc((size_t)argc, sizeof *values);
    if (!values) drift_die("out of memory");

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            free(values);
            return 0;
        }
        if (!strcmp(a, "--")) { /* everything after is a VALUE */
            for (i++; i < argc; i++) values[nvalues++] = argv[i];
            break;
        }
        if (!is_option(a)) {
            values[nvalues++] = argv[i];
            continue;
        }
        static const char *const KNOWN[] = {"--format", "--mode", "--subnormals", "--overflow", "--seed"};
        int k = -1;
        for (int j = 0; j < 5; j++)
            if (!strcmp(a, KNOWN[j])) k = j;
        if (k < 0) drift_die("unknown option '%s' (accepted: --format, --mode, --subnormals, --overflow, --seed)", a);
        if (i + 1 >= argc) drift_die("%s: missing value", a);
        const char *v = argv[++i];
        switch (k) {
        case 0: {
            drift_format_t f;
            if (drift_format_parse(&f, v) != DRIFT_OK) {
                char names[128];
                format_list(names, sizeof names);
                drift_die("--format: unknown format '%s' (accepted: %s)", v, names);
            }
            format_s = v;
            break;
        }
        case 1:
            if (drift_mode_parse(&opts.mode, v) != DRIFT_OK) {
                char names[64];
                mode_list(names, sizeof names);
                drift_die("--mode: unknown mode '%s' (accepted: %s)", v, names);
            }
            break;
        case 2:
            if (!strcmp(v, "keep")) opts.flush_subnormals = 0;
            else if (!strcmp(v, "flush")) opts.flush_subnormals = 1;
            else drift_die("--subnormals: unknown value '%s' (accepted: keep, flush)", v);
            break;
        case 3:
            if (!strcmp(v, "inf")) opts.saturate = 0;
            else if (!strcmp(v, "saturate")) opts.saturate = 1;
            else drift_die("--overflow: unknown value '%s' (accepted: inf, saturate)", v);
            break;
        case 4: {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 10);
            /* strtoull accepts "-1" (as 2^64-1) and sets ERANGE on overflow: refuse both. */
            if (!*v || *end || errno || v[0] == '-')
                drift_die("--seed: '%s' is not a non-negative integer (accepted: 0..2^64-1)", v);
            seed = s;
            break;
        }
        }
    }
    if (!format_s) drift_die("--format: missing (accepted: see drift-calc round --help)");
    if (nvalues == 0) drift_die("no VALUE given (usage: drift-calc round --format F VALUE...)");

    drift_format_t f;
    drift_format_parse(&f, format_s);
    const drift_format_info_t *fi = drift_format_info(f);

    /* Parse every value before printing anything: a typo in the fifth value must not leave
     * four rows that look like a complete answer. */
    double *x = malloc((size_t)nvalues * sizeof *x);
    if (!x) drift_die("out of memory");
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
        drift_decimal_round(&r, values[i], f, &opts, sr_bits); /* valid: checked above */
        uint64_t bits = drift_encode(r, f);
        int hexdigits = (f == DRIFT_TF32 ? 32 : fi->bits) / 4;
        printf("%a,%s,%s,%a,%.17g,0x%0*" PRIx64 ",%s\n", x[i], fi->name, drift_mode_name(opts.mode), r, r, hexdigits,
               bits, drift_class_name(drift_classify(r, f)));
    }
    free(x);
    free(values);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
