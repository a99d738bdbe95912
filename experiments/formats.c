/* formats.c — the guided tour of the number formats.
 *
 * Question: what happens to a number when it is stored in fp64, fp32, tf32, fp16, bf16,
 * fp8 e4m3 or fp8 e5m2? How much precision and how much range does each format keep, and
 * where does a value stop being represented faithfully (rounding, subnormals, overflow)?
 *
 * What it sweeps:
 *   (a) teaching values (0.1, 1/3, pi, 65504, 65520, 70000, 448, 1e-8, 2^-24, 1 + 2^-11,
 *       1 + 3*2^-11, 0.1 + 0.2, ... plus your own with --values) in every format of
 *       --formats, each against its exact witness (MPFR, 256 bits): the real number the
 *       label names, not its double approximation, so fp64 shows its own error too;
 *   (b) the constants of each format, measured through the rounder (epsilon, smallest
 *       subnormal, largest finite, ...) and checked against the declared table;
 *   (c) the spacing of representable numbers in every binade of every format, and the
 *       relative representation error of random reals (Philox stream from --seed).
 *
 * How to run:
 *   ./lab run formats                         all seven formats, default profile
 *   ./lab run formats --formats fp16,bf16 --values 0.3,1e-5,3.14159 --samples 5000
 *   ./lab plot formats                        plots/formats_spacing.png, formats_relerr.png
 *
 * What to look for: every finite result is within half a spacing of its witness (ulp_err
 * <= 0.5 in round-to-nearest); the relative error of values in the normal range never
 * exceeds the unit roundoff u = 2^-p, while below the smallest normal it grows towards 1
 * (subnormals keep fewer bits) and above the largest finite it is infinite (fp16 65520 ->
 * inf, fp8 e4m3 70000 -> NaN). tf32 and fp16 share p = 11 and differ only in range; bf16
 * has fp32's range with 8 bits of precision.
 *
 * Outputs (written only after everything is computed; temporary file + rename):
 *   data/formats.csv            one row per (value, format)
 *   data/formats_constants.csv  one row per format
 *   data/formats_spacing.csv    one row per (format, binade)
 *   data/formats_relerr.csv     one row per (random value, format)
 *   data/formats.md             the report fragment: question, key tables, takeaway */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "drift.h"
#include "format.h"
#include "format_probe.h"
#include "output.h"
#include "philox.h"
#include "witness.h"

#ifdef _OPENMP
#define DRIFT_OMP(x) _Pragma(x)
#else
#define DRIFT_OMP(x)
#endif

/* Random reals: exponents uniform in [RAND_EMIN, RAND_EMAX), so the plot sees fp16's and
 * fp8's subnormals (below 2^-14, 2^-6) and their overflow (2^16, 2^8.8) on one axis. */
#define RAND_EMIN (-30)
#define RAND_EMAX 20
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

typedef struct {
    char label[64];
    int sum;
    mpfr_t a, b, exact; /* a, b: the operands of a sum; exact: the witness */
    const char *lesson;
} value_t;

/* Random real number i: hi a double with exponent in [RAND_EMIN, RAND_EMAX) and a uniform
 * 52-bit fraction, lo uniform in [-ulp(hi)/2, ulp(hi)/2). The real value hi + lo has ~106
 * significant bits, so even fp64 has something to round. Stream (seed, "formats", i, 0). */
static void random_real(double *hi, double *lo, uint64_t seed, uint32_t i)
{
    drift_stream_t s;
    drift_stream_init(&s, seed, drift_fnv1a32("formats"), i, 0);
    int e = RAND_EMIN + (int)drift_stream_below(&s, RAND_EMAX - RAND_EMIN);
    uint64_t frac = ((uint64_t)drift_stream_u32(&s) << 20) | (drift_stream_u32(&s) >> 12); /* 52 bits */
    *hi = ldexp(1.0 + (double)frac * 0x1p-52, e);
    *lo = (drift_stream_uniform(&s) - 0.5) * ldexp(1.0, e - 52); /* exact: k * 2^-53 scaled */
}

static int find_label(const value_t *v, int nv, const char *label)
{
    for (int i = 0; i < nv; i++)
        if (!strcmp(v[i].label, label)) return i;
    return -1;
}

/* Reads --values into vals[nv..]: both readers must agree (strtod syntax is the lab's, MPFR
 * gives the exact value). Returns the new count; dies with the option's message. */
static int read_values(value_t *vals, int nv, const char *list)
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
        value_t *v = &vals[nv++];
        double d;
        mpfr_inits2(DRIFT_WITNESS_PREC, v->a, v->b, v->exact, (mpfr_ptr)0);
        if (drift_parse_double(&d, item) || !isfinite(d) || drift_witness_read(v->exact, item) ||
            mpfr_get_d(v->exact, MPFR_RNDN) != d)
            drift_die("--values: '%s' is not a finite number (accepted: decimal or hex float, e.g. 0.3,0x1p-20)", item);
        snprintf(v->label, sizeof v->label, "%s", item);
        v->lesson = "your value";
        if (!comma) return nv;
        p = comma + 1;
    }
}

typedef struct {
    long n_normal, n_zero, n_subnormal, n_overflow;
    double max_rel_normal; /* largest relative error among samples whose witness lies in [min_normal, max_finite] */
    double max_rel_sub;    /* largest among samples below min_normal that did not flush to zero */
} relsum_t;

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *values_opt = NULL;
    long nrand = 0; /* 0: not given, take the profile's */
    const drift_cli_opt_t opts[] = {
        {"values", DRIFT_OPT_LIST, &values_opt, "X,X,...",
         "extra values (decimal or hex, e.g. 0.3,0x1p-20), added to the teaching values (default none)", 0, 0, {0}},
        {"samples", DRIFT_OPT_INT, &nrand, "N", "random reals for the relative-error plot", 1, 10000000, {"200", "1000", "20000"}},
    };
    const drift_cli_spec_t spec = {
        "formats", "What happens to a number when it is stored in each format: how much precision and range survive?",
        "fp64,fp32,tf32,fp16,bf16,fp8e4m3,fp8e5m2", "seq", opts, 2, NULL /* no_orders */, "CPU only" /* cpu_only */,
        "each format keeps p significant bits, so a stored value is off by at most u = 2^-p relative to the real "
        "number (the worst of the random reals is always <= u) as long as it lies between the smallest normal and the "
        "largest finite value. Below, subnormals keep fewer bits and the relative error grows to 1 (the value becomes "
        "0); above, the value overflows to inf (NaN in fp8e4m3). tf32 and fp16 have the same p = 11 but different "
        "ranges; bf16 has fp32's range with only p = 8. Plots: ./lab plot formats."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);

    value_t *vals = calloc(MAX_VALUES, sizeof *vals);
    if (!vals) drift_die("out of memory");
    int nv = 0;
    for (; nv < NTEACH; nv++) {
        value_t *v = &vals[nv];
        snprintf(v->label, sizeof v->label, "%s", TEACH[nv].label);
        v->sum = TEACH[nv].sum;
        v->lesson = TEACH[nv].lesson;
        mpfr_inits2(DRIFT_WITNESS_PREC, v->a, v->b, v->exact, (mpfr_ptr)0);
        drift_witness_read(v->a, TEACH[nv].a);
        if (v->sum) drift_witness_read(v->b, TEACH[nv].b);
        if (v->sum) mpfr_add(v->exact, v->a, v->b, MPFR_RNDN); /* exact: same binade, 256 bits */
        else mpfr_set(v->exact, v->a, MPFR_RNDN);
    }
    if (values_opt) nv = read_values(vals, nv, values_opt);
    const int nf = cli.nformats;
    const drift_format_t *F = cli.formats;

    /* (a) values: stored (rounded once) or summed in the format from the rounded operands */
    drift_stored_t *cells = calloc((size_t)nv * nf, sizeof *cells);
    if (!cells) drift_die("out of memory");
    mpfr_t diff, q;
    mpfr_init2(diff, DRIFT_WITNESS_DIFF_PREC);
    mpfr_init2(q, 53);
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nf; j++) {
            const value_t *v = &vals[i];
            double r = v->sum ? drift_add(drift_witness_round(v->a, F[j]), drift_witness_round(v->b, F[j]), F[j], DRIFT_RNE)
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
        if (!(steps[j] = malloc((size_t)drift_format_nbinades(F[j]) * sizeof **steps))) drift_die("out of memory");
        if ((nsteps[j] = drift_format_probe_spacing(steps[j], F[j])) < 0)
            drift_die("self-check failed: %s's measured spacing disagrees with drift_ulp", drift_format_name(F[j]));
    }

    /* (c) relative error of random reals: one stream per point, so the result does not
     * depend on --threads; every thread writes only its own rows. */
    double *rhi = malloc((size_t)nrand * sizeof *rhi), *rlo = malloc((size_t)nrand * sizeof *rlo);
    drift_stored_t *rc = malloc((size_t)nrand * nf * sizeof *rc);
    if (!rhi || !rlo || !rc) drift_die("out of memory");
    DRIFT_OMP("omp parallel")
    {
        mpfr_t x, d, qq;
        mpfr_inits2(DRIFT_WITNESS_DIFF_PREC, x, d, (mpfr_ptr)0);
        mpfr_init2(qq, 53);
        DRIFT_OMP("omp for schedule(static)")
        for (long i = 0; i < nrand; i++) {
            random_real(&rhi[i], &rlo[i], cli.seed, (uint32_t)i);
            mpfr_set_d(x, rhi[i], MPFR_RNDN);
            mpfr_add_d(x, x, rlo[i], MPFR_RNDN); /* exact: hi and lo span < 110 bits */
            for (int j = 0; j < nf; j++)
                drift_witness_error(&rc[i * nf + j], drift_round_sum2(rhi[i], rlo[i], F[j], DRIFT_RNE), x, F[j], d, qq);
        }
        mpfr_clears(x, d, qq, (mpfr_ptr)0);
        mpfr_free_cache();
    }
    /* Classified by the stored value: "stored as a normal number" is what the u = 2^-p bound is about. */
    relsum_t rs[DRIFT_NFORMATS];
    memset(rs, 0, sizeof rs);
    for (long i = 0; i < nrand; i++)
        for (int j = 0; j < nf; j++) {
            double r = rc[i * nf + j].result, rel = rc[i * nf + j].rel_err;
            if (!isfinite(r)) rs[j].n_overflow++;
            else if (r == 0) rs[j].n_zero++;
            else if (fabs(r) < drift_format_info(F[j])->min_normal) rs[j].n_subnormal++, rs[j].max_rel_sub = fmax(rs[j].max_rel_sub, rel);
            else rs[j].n_normal++, rs[j].max_rel_normal = fmax(rs[j].max_rel_normal, rel);
        }

    /* ---- declared output: every file to a temporary name, all renamed when all are complete ---- */
    enum { T_VALUES, T_CONST, T_SPACING, T_RELERR, T_MD_VALUES, T_SHOW_VALUES, T_MD_CONST, T_SHOW_RANDOM };
    static const drift_col_t VALUES[] = {
        DRIFT_C_TEXT("value"), DRIFT_C_TEXT("kind"), DRIFT_C_TEXT("format"), DRIFT_C_NUM("exact", NULL),
        DRIFT_C_HEX("exact_hex"), DRIFT_C_NUM("result", NULL), DRIFT_C_HEX("result_hex"), DRIFT_C_TEXT("bits"),
        DRIFT_C_TEXT("class"), DRIFT_C_TEXT("direction"), DRIFT_C_NUM("abs_err", "%.6e"), DRIFT_C_NUM("rel_err", "%.6e"),
        DRIFT_C_NUM("ulp_err", "%.6g")};
    static const drift_col_t CONST[] = {
        DRIFT_C_TEXT("format"), DRIFT_C_INT("bits"), DRIFT_C_INT("p"), DRIFT_C_INT("emin"), DRIFT_C_INT("emax"),
        DRIFT_C_INT("has_inf"), DRIFT_C_NUM("unit_roundoff", NULL), DRIFT_C_HEX("unit_roundoff_hex"),
        DRIFT_C_NUM("epsilon", NULL), DRIFT_C_HEX("epsilon_hex"), DRIFT_C_NUM("min_subnormal", NULL),
        DRIFT_C_HEX("min_subnormal_hex"), DRIFT_C_NUM("min_normal", NULL), DRIFT_C_HEX("min_normal_hex"),
        DRIFT_C_NUM("max_finite", NULL), DRIFT_C_HEX("max_finite_hex"), DRIFT_C_NUM("decimal_digits", "%.2f")};
    static const drift_col_t SPACING[] = {
        DRIFT_C_TEXT("format"), DRIFT_C_INT("binade"), DRIFT_C_NUM("x", NULL), DRIFT_C_HEX("x_hex"),
        DRIFT_C_NUM("x_end", NULL), DRIFT_C_NUM("spacing", NULL), DRIFT_C_HEX("spacing_hex"),
        DRIFT_C_NUM("rel_spacing", NULL), DRIFT_C_TEXT("region")};
    static const drift_col_t RELERR[] = {DRIFT_C_INT("point"), DRIFT_C_TEXT("format"), DRIFT_C_NUM("x", "%.9e"),
                                         DRIFT_C_HEX("x_hi_hex"), DRIFT_C_HEX("x_lo_hex"), DRIFT_C_HEX("result_hex"),
                                         DRIFT_C_TEXT("class"), DRIFT_C_NUM("rel_err", "%.6e")};
    static const drift_col_t MD_CONST[] = {
        DRIFT_C_TEXT("format"), DRIFT_C_INT("p"), DRIFT_C_NUM("unit roundoff u", "%.3g"), DRIFT_C_NUM("epsilon", "%.3g"),
        DRIFT_C_NUM("min subnormal", "%.3g"), DRIFT_C_NUM("min normal", "%.3g"), DRIFT_C_NUM("max finite", "%.5g"),
        DRIFT_C_NUM("decimal digits", "%.2f")};
    static const drift_col_t RANDOM[] = {DRIFT_C_TEXT("format"), DRIFT_C_NUM("max rel err (random, normal)", "%.3g"),
                                         DRIFT_C_NUM("in u", "%.3f")};
    drift_col_t by_format[DRIFT_NFORMATS + 2] = {DRIFT_C_TEXT("value")}; /* value, one column per format, lesson */
    for (int j = 0; j < nf; j++) by_format[1 + j] = (drift_col_t)DRIFT_C_CELL(drift_format_name(F[j]));
    by_format[1 + nf] = (drift_col_t)DRIFT_C_TEXT("");
    const drift_table_spec_t TABLES[] = {
        {".csv", NULL, 0, VALUES, 13},
        {"_constants.csv", NULL, 0, CONST, 17},
        {"_spacing.csv", NULL, 0, SPACING, 9},
        {"_relerr.csv", NULL, 0, RELERR, 8},
        {NULL, "**Teaching values as stored** (round to nearest even; `inf`/`NaN` = overflow; the hex values and "
               "errors are in data/formats.csv):", DRIFT_SHOW_MD, by_format, 1 + nf},
        {NULL, NULL, DRIFT_SHOW_STDOUT, by_format, 2 + nf},
        {NULL, "**Constants** (measured through the rounder; data/formats_constants.csv):", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD_CONST, 8},
        {NULL, NULL, DRIFT_SHOW_STDOUT, RANDOM, 3}};
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 8, 1);
    char b1[64], b2[64];
    drift_md_question(&out, "Each value is held against its exact witness (MPFR), so even fp64 shows its own rounding.");
    drift_md_reproduce(&out, "data/formats*.csv");

    drift_out_meta(&out, T_VALUES, "table", "teaching values stored in each format (round to nearest even)");
    drift_out_meta(&out, T_VALUES, "witness",
                   "the real number the label names (MPFR, %d bits); exact/exact_hex show it rounded to the "
                   "nearest double; kind=sum: a+b computed in the format from the rounded a and b",
                   DRIFT_WITNESS_PREC);
    drift_out_meta(&out, T_VALUES, "errors", "abs, rel, ulp errors against the witness, rounded up; ulp = spacing of the format at the witness");
    char shown[DRIFT_NFORMATS][32];
    drift_cell_t row[DRIFT_NFORMATS + 2];
    for (int i = 0; i < nv; i++) {
        row[0] = DRIFT_TXT(vals[i].label);
        for (int j = 0; j < nf; j++) {
            const drift_stored_t *c = &cells[i * nf + j];
            double ex = mpfr_get_d(vals[i].exact, MPFR_RNDN);
            int hexdigits = (F[j] == DRIFT_TF32 ? 32 : drift_format_info(F[j])->bits) / 4;
            snprintf(b1, sizeof b1, "0x%0*llx", hexdigits, (unsigned long long)drift_encode(c->result, F[j]));
            drift_row(&out, T_VALUES, DRIFT_TXT(vals[i].label), DRIFT_TXT(vals[i].sum ? "sum" : "stored"),
                      DRIFT_TXT(drift_format_name(F[j])), DRIFT_NUM(ex), DRIFT_NUM(ex), DRIFT_NUM(c->result),
                      DRIFT_NUM(c->result), DRIFT_TXT(b1), DRIFT_TXT(drift_class_name(c->cls)), DRIFT_TXT(c->dir),
                      DRIFT_NUM(c->abs_err), DRIFT_NUM(c->rel_err), DRIFT_NUM(c->ulp_err));
            drift_fmt_num(shown[j], sizeof shown[j], c->result, "%.8g");
            row[1 + j] = DRIFT_TXT(isnan(c->result) ? "NaN" : shown[j]);
        }
        row[1 + nf] = DRIFT_TXT(vals[i].lesson);
        drift_row_cells(&out, T_MD_VALUES, row, 1 + nf);
        drift_row_cells(&out, T_SHOW_VALUES, row, 2 + nf);
    }
    drift_md_end(&out, T_MD_VALUES);

    drift_out_meta(&out, T_CONST, "table", "constants of each format, measured through the rounder and checked against format.h");
    for (int j = 0; j < nf; j++) {
        const drift_format_consts_t *k = &consts[j];
        drift_row(&out, T_CONST, DRIFT_TXT(drift_format_name(F[j])), DRIFT_INT(k->bits), DRIFT_INT(k->p), DRIFT_INT(k->emin),
                  DRIFT_INT(k->emax), DRIFT_INT(k->has_inf), DRIFT_NUM(k->u), DRIFT_NUM(k->u), DRIFT_NUM(k->eps),
                  DRIFT_NUM(k->eps), DRIFT_NUM(k->min_sub), DRIFT_NUM(k->min_sub), DRIFT_NUM(k->min_norm),
                  DRIFT_NUM(k->min_norm), DRIFT_NUM(k->max_fin), DRIFT_NUM(k->max_fin), DRIFT_NUM(k->digits));
        drift_row(&out, T_MD_CONST, DRIFT_TXT(drift_format_name(F[j])), DRIFT_INT(k->p), DRIFT_NUM(k->u), DRIFT_NUM(k->eps),
                  DRIFT_NUM(k->min_sub), DRIFT_NUM(k->min_norm), DRIFT_NUM(k->max_fin), DRIFT_NUM(k->digits));
        drift_row(&out, T_SHOW_RANDOM, DRIFT_TXT(drift_format_name(F[j])), DRIFT_NUM(rs[j].max_rel_normal),
                  DRIFT_NUM(rs[j].max_rel_normal / k->u));
    }
    drift_md_end(&out, T_MD_CONST);

    drift_out_meta(&out, T_SPACING, "table", "spacing of representable numbers in each binade [x, x_end): (next member above x) - x");
    for (int j = 0; j < nf; j++)
        for (int n = 0; n < nsteps[j]; n++) {
            const drift_binade_t *s = &steps[j][n];
            drift_row(&out, T_SPACING, DRIFT_TXT(drift_format_name(F[j])), DRIFT_INT(s->e), DRIFT_NUM(s->x), DRIFT_NUM(s->x),
                      DRIFT_NUM(s->x_end), DRIFT_NUM(s->spacing), DRIFT_NUM(s->spacing), DRIFT_NUM(s->spacing / s->x),
                      DRIFT_TXT(s->subnormal ? "subnormal" : "normal"));
        }

    drift_out_meta(&out, T_RELERR, "table", "relative error |round(x) - x| / x (rounded up) of random reals x = x_hi + x_lo (exact sum)");
    drift_out_meta(&out, T_RELERR, "sampling",
                   "%ld points; exponent of x_hi uniform in [%d, %d), fraction uniform (52 bits); x_lo uniform in "
                   "[-ulp/2, ulp/2) of x_hi; Philox stream (seed, \"formats\", point, 0)",
                   nrand, RAND_EMIN, RAND_EMAX);
    for (long i = 0; i < nrand; i++)
        for (int j = 0; j < nf; j++) {
            double r = rc[i * nf + j].result;
            drift_row(&out, T_RELERR, DRIFT_INT(i), DRIFT_TXT(drift_format_name(F[j])), DRIFT_NUM(rhi[i]), DRIFT_NUM(rhi[i]),
                      DRIFT_NUM(rlo[i]), DRIFT_NUM(r), DRIFT_TXT(drift_class_name(drift_classify(r, F[j]))),
                      DRIFT_NUM(rc[i * nf + j].rel_err));
        }


    /* The takeaway: every number comes from the arrays written above. */
    drift_md_text(&out, "**Takeaway.**\n\n- Precision: among %ld random reals (exponents 2^%d to 2^%d), the largest "
                        "relative error of a value stored as a normal number was", nrand, RAND_EMIN, RAND_EMAX);
    double worst = 0; /* the largest max-relative-error / u over the formats */
    for (int j = 0; j < nf; j++) {
        drift_md_text(&out, "%s %s %.3g (%.3f u)", j ? (j + 1 == nf ? " and" : ",") : "", drift_format_name(F[j]),
                      rs[j].max_rel_normal, rs[j].max_rel_normal / consts[j].u);
        worst = fmax(worst, rs[j].max_rel_normal / consts[j].u);
    }
    drift_md_text(&out, worst <= 1 ? ": never above the unit roundoff u = 2^-p.\n"
                                   : ": ABOVE the unit roundoff u = 2^-p somewhere, which means a rounding bug.\n");
    drift_md_text(&out, "- Below the smallest normal the guarantee is gone:");
    int any = 0;
    for (int j = 0; j < nf; j++)
        if (rs[j].n_subnormal || rs[j].n_zero)
            drift_md_text(&out, "%s %s stored %ld of them as subnormals (relative error up to %.3g) and %ld as zero",
                          any++ ? ";" : "", drift_format_name(F[j]), rs[j].n_subnormal, rs[j].max_rel_sub, rs[j].n_zero);
    drift_md_text(&out, "%s\n- Range: overflowed (inf, or NaN in fp8e4m3) among the random values:",
                  any ? "." : " none of the sampled values fell there in these formats.");
    for (int j = 0; j < nf; j++) drift_md_text(&out, "%s %s %ld", j ? "," : "", drift_format_name(F[j]), rs[j].n_overflow);
    drift_md_text(&out, " of %ld. Teaching values that overflowed:", nrand);
    any = 0;
    for (int j = 0; j < nf; j++)
        for (int i = 0, first = 1; i < nv; i++)
            if (cells[i * nf + j].cls == DRIFT_CLASS_INF || cells[i * nf + j].cls == DRIFT_CLASS_NAN) {
                if (first) drift_md_text(&out, "%s %s: %s", any ? ";" : "", drift_format_name(F[j]), vals[i].label);
                else drift_md_text(&out, ", %s", vals[i].label);
                first = 0, any = 1;
            }
    drift_md_text(&out, "%s\n", any ? "." : " none.");
    int i01 = find_label(vals, nv, "0.1"), isum = find_label(vals, nv, "0.1+0.2");
    if (i01 >= 0) {
        drift_md_text(&out, "- 0.1 is stored as");
        double w = 0;
        for (int j = 0; j < nf; j++) {
            const drift_stored_t *c = &cells[i01 * nf + j];
            drift_fmt_num(b1, sizeof b1, c->result, "%.17g");
            drift_md_text(&out, "%s %s (%s, relative error %.2e)", j ? (j + 1 == nf ? " and" : ",") : "", b1,
                          drift_format_name(F[j]), c->rel_err);
            w = fmax(w, c->rel_err / consts[j].u);
        }
        drift_md_text(&out, ": the fewer the bits, the larger the error; the largest is %.2f u.\n", w);
    }
    if (isum >= 0) {
        drift_md_text(&out, "- 0.1 + 0.2 computed in the format:");
        int far = 0;
        for (int j = 0; j < nf; j++) {
            const drift_stored_t *c = &cells[isum * nf + j];
            drift_fmt_num(b1, sizeof b1, c->result, "%.17g");
            drift_fmt_num(b2, sizeof b2, c->ulp_err, "%.3g");
            drift_md_text(&out, "%s %s %s (%s ulp from 0.3)", j ? "," : "", drift_format_name(F[j]), b1, b2);
            far += c->ulp_err > 0.5;
        }
        drift_md_text(&out, ". In %d of %d formats the computed sum is more than half an ulp from 0.3, so it is not the "
                            "stored 0.3: the two input roundings and the sum's rounding add up.\n", far, nf);
    }
    drift_out_commit(&out);

    for (int i = 0; i < nv; i++) mpfr_clears(vals[i].a, vals[i].b, vals[i].exact, (mpfr_ptr)0);
    for (int j = 0; j < nf; j++) free(steps[j]);
    free(vals);
    free(cells);
    free(rhi);
    free(rlo);
    free(rc);
    mpfr_free_cache();
    return 0;
}
