/* formats.c — the guided tour of the number formats.
 *
 * Question: what happens to a number when it is stored in fp64, fp32, tf32, fp16, bf16,
 * fp8 e4m3 or fp8 e5m2? How much precision and how much range does each format keep, and
 * where does a value stop being represented faithfully (rounding, subnormals, overflow)?
 * (formats_relerr holds random reals against the unit roundoff.)
 *
 * What it sweeps:
 *   (a) teaching values (0.1, 1/3, pi, 65504, 65520, 70000, 448, 1e-8, 2^-24, 1 + 2^-11,
 *       1 + 3*2^-11, 0.1 + 0.2, ... plus your own with --values) in every format of
 *       --formats, each against its exact witness (MPFR, 256 bits): the real number the
 *       label names, not its double approximation, so fp64 shows its own error too;
 *   (b) the constants of each format, measured through the rounder (epsilon, smallest
 *       subnormal, largest finite, ...) and checked against the declared table;
 *   (c) the spacing of representable numbers in every binade of every format.
 *
 * How to run:
 *   ./lab run formats                         all seven formats, default profile
 *   ./lab run formats --formats fp16,bf16 --values 0.3,1e-5,3.14159
 *   ./lab plot formats                        plots/formats_spacing.png
 *
 * What to look for: every finite result is within half a spacing of its witness (ulp_err
 * <= 0.5 in round-to-nearest); the relative error of reals in the normal range never
 * exceeds the unit roundoff u = 2^-p, while below the smallest normal it grows towards 1
 * (subnormals keep fewer bits) and above the largest finite it is infinite (fp16 65520 ->
 * inf, fp8 e4m3 70000 -> NaN). tf32 and fp16 share p = 11 and differ only in range; bf16
 * has fp32's range with 8 bits of precision.
 *
 * Outputs (written only after everything is computed; temporary file + rename):
 *   data/formats.csv            one row per (value, format)
 *   data/formats_constants.csv  one row per format
 *   data/formats_spacing.csv    one row per (format, binade)
 *   data/formats.md             the report fragment: question, key tables, takeaway */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "drift.h"
#include "format.h"
#include "format_probe.h"
#include "formats_lab.h"
#include "witness.h"

#define MAX_VALUES 96

/* ---- the teaching values ------------------------------------------------------------ */

typedef struct {
    const char *label;  /* as printed: what the value is */
    int sum;            /* 0: the real number rounded once; 1: a + b computed in the format */
    const char *a, *b;  /* numbers drift_witness_read reads: decimal, hex, "pi", "N/D" */
    const char *lesson; /* one line for stdout */
} teach_t;

static const teach_t TEACH[] = {
    {"0.1", 0, "0.1", NULL, "not a binary fraction: every format rounds it"},
    {"1/3", 0, "1/3", NULL, "a repeating binary fraction, rounded at p bits"},
    {"pi", 0, "pi", NULL, "p bits of pi: fp16 keeps 3.140625"},
    {"0.1+0.2", 1, "0.1", "0.2", "two rounded inputs, one rounded sum: not 0.3"},
    {"1+2^-11", 0, "0x1.002p0", NULL, "a tie at p = 11: to even, so back to 1"},
    {"1+3*2^-11", 0, "0x1.006p0", NULL, "a tie at p = 11: to even, this time up"},
    {"1+2^-11+2^-40", 0, "0x1.0020000004p0", NULL, "just above the tie: fp16 rounds up (via fp32 it would not)"},
    {"2^24+1", 0, "16777217", NULL, "the first integer fp32 cannot hold"},
    {"448", 0, "448", NULL, "the largest fp8 e4m3"},
    {"65504", 0, "65504", NULL, "the largest fp16"},
    {"65520", 0, "65520", NULL, "fp16's overflow threshold: the tie rounds to inf"},
    {"70000", 0, "70000", NULL, "beyond fp16 and fp8; bf16 keeps it, roughly"},
    {"1e-8", 0, "1e-8", NULL, "below half of fp16's smallest subnormal: 0 in fp16 and fp8"},
    {"2^-24", 0, "0x1p-24", NULL, "fp16's smallest subnormal"},
    {"2^-25", 0, "0x1p-25", NULL, "half of it: the tie goes to zero"},
    {"1e-40", 0, "1e-40", NULL, "an fp32 subnormal"},
    {"1e39", 0, "1e39", NULL, "beyond fp32, tf32 and bf16"},
};
#define NTEACH (int)(sizeof TEACH / sizeof TEACH[0])


/* Reads --values into vals[nv..]: both readers must agree (strtod syntax is the lab's, MPFR
 * gives the exact value). Returns the new count; dies with the option's message. */
static int read_values(drift_formats_value_t *vals, int nv, const char *list)
{
    if (!*list) drift_die("--values: empty list (accepted: X,X,...)");
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        if (len == 0) drift_die("--values: empty item in list '%s'", list);
        if (len >= sizeof item) drift_die("--values: item too long in '%s'", list);
        if (nv == MAX_VALUES) drift_die("--values: more than %d values", MAX_VALUES - NTEACH);
        memcpy(item, p, len);
        item[len] = 0;
        drift_formats_value_t *v = &vals[nv++];
        double d;
        mpfr_inits2(DRIFT_WITNESS_PREC, v->a, v->b, v->exact, (mpfr_ptr)0);
        if (drift_parse_double(&d, item) || !isfinite(d) || drift_witness_read(v->exact, item) ||
            mpfr_get_d(v->exact, MPFR_RNDN) != d)
            drift_die("--values: '%s' is not a finite number (accepted: decimal or hex float, e.g. 0.3,0x1p-20)", item);
        for (int j = NTEACH; j < nv - 1; j++) /* compared as numbers: 0.5 and 0x1p-1 are one value */
            if (mpfr_equal_p(vals[j].exact, v->exact))
                drift_die("--values: '%s' given twice (the same value as '%s')", item, vals[j].label);
        snprintf(v->label, sizeof v->label, "%s", item);
        v->lesson = "your value";
        if (!comma) return nv;
        p = comma + 1;
    }
}


/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *values_opt = NULL;
    const drift_cli_opt_t opts[] = {
        {"values", DRIFT_OPT_LIST, &values_opt, "X,X,...",
            "extra values (decimal or hex, e.g. 0.3,0x1p-20), added to the teaching values (default none)", 0, 0, {0}},
    };
    const drift_cli_spec_t spec = {.name = "formats",
        .question = "What happens to a number when it is stored in each format: how much precision and range survive?",
        .default_formats = "fp64,fp32,tf32,fp16,bf16,fp8e4m3,fp8e5m2",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders = "takes no orders (its one sum, a + b, has no order to choose)",
        .cpu_only = "CPU only",
        .summary =
            "each format keeps p significant bits, so a stored value is off by at most u = 2^-p relative to the real "
            "number as long as it lies between the smallest normal and the largest finite value. Below, subnormals keep "
            "fewer bits and the relative error grows to 1 (the value becomes 0); above, the value overflows to inf (NaN "
            "in fp8e4m3). tf32 and fp16 have the same p = 11 but different ranges; bf16 has fp32's range with only p = "
            "8. Plots: ./lab plot formats."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);

    drift_formats_value_t *vals = calloc(MAX_VALUES, sizeof *vals);
    if (!vals) drift_die_oom((double)MAX_VALUES * sizeof *vals, "the table of %d values", MAX_VALUES);
    int nv = 0;
    for (; nv < NTEACH; nv++) {
        drift_formats_value_t *v = &vals[nv];
        snprintf(v->label, sizeof v->label, "%s", TEACH[nv].label);
        v->sum = TEACH[nv].sum;
        v->lesson = TEACH[nv].lesson;
        mpfr_inits2(DRIFT_WITNESS_PREC, v->a, v->b, v->exact, (mpfr_ptr)0);
        if (drift_witness_read(v->a, TEACH[nv].a) || (v->sum && drift_witness_read(v->b, TEACH[nv].b)))
            drift_die("lesson %d: a value that is not a number", nv);
        if (v->sum)
            mpfr_add(v->exact, v->a, v->b, MPFR_RNDN); /* exact: same binade, 256 bits */
        else
            mpfr_set(v->exact, v->a, MPFR_RNDN);
    }
    if (values_opt) nv = read_values(vals, nv, values_opt);
    const int nf = cli.nformats;
    const drift_format_t *F = cli.formats;

    /* (a) values: stored (rounded once) or summed in the format from the rounded operands */
    drift_stored_t *cells = calloc((size_t)nv * nf, sizeof *cells);
    if (!cells)
        drift_die_oom((double)nv * nf * sizeof *cells, "%d values x %d formats (--values, --formats: fewer)", nv, nf);
    mpfr_t diff, q;
    mpfr_init2(diff, DRIFT_WITNESS_DIFF_PREC);
    mpfr_init2(q, 53);
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nf; j++) {
            const drift_formats_value_t *v = &vals[i];
            double r =
                v->sum ? drift_add(drift_witness_round(v->a, F[j]), drift_witness_round(v->b, F[j]), F[j], DRIFT_RNE)
                       : drift_witness_round(v->exact, F[j]);
            drift_witness_error(&cells[i * nf + j], r, v->exact, F[j], diff, q);
        }
    mpfr_clears(diff, q, (mpfr_ptr)0);

    /* (b) constants and (c) spacing, each checked against format.h */
    drift_format_consts_t consts[DRIFT_NFORMATS];
    drift_binade_t *steps[DRIFT_NFORMATS];
    int nsteps[DRIFT_NFORMATS];
    for (int j = 0; j < nf; j++) {
        if (drift_format_probe_constants(&consts[j], F[j]))
            drift_die("self-check failed: %s's measured constants disagree with format.h", drift_format_name(F[j]));
        if (!(steps[j] = malloc((size_t)drift_format_nbinades(F[j]) * sizeof **steps)))
            drift_die_oom((double)drift_format_nbinades(F[j]) * sizeof **steps, "%s's %d binades",
                drift_format_name(F[j]), drift_format_nbinades(F[j]));
        if ((nsteps[j] = drift_format_probe_spacing(steps[j], F[j])) < 0)
            drift_die("self-check failed: %s's measured spacing disagrees with drift_ulp", drift_format_name(F[j]));
    }

    const drift_formats_lab_t lab = {&cli, F, nf, vals, nv, cells, consts, steps, nsteps};
    drift_formats_write(&lab); /* formats_report.c */

    for (int i = 0; i < nv; i++) mpfr_clears(vals[i].a, vals[i].b, vals[i].exact, (mpfr_ptr)0);
    for (int j = 0; j < nf; j++) free(steps[j]);
    free(vals);
    free(cells);
    mpfr_free_cache();
    return 0;
}
