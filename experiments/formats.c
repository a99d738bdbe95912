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
 *   data/formats.md             the report fragment: question, key table, takeaway */
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "drift.h"
#include "format.h"
#include "philox.h"
#include "output.h"

#ifdef _OPENMP
#define DRIFT_OMP(x) _Pragma(x)
#else
#define DRIFT_OMP(x)
#endif

/* 256 bits hold every teaching value's witness far beyond any format's precision; the
 * differences below need the span of result and witness on top, hence twice that. */
#define WITNESS_PREC 256
#define DIFF_PREC 512

/* Random reals: exponents uniform in [RAND_EMIN, RAND_EMAX), so the plot sees fp16's and
 * fp8's subnormals (below 2^-14, 2^-6) and their overflow (2^16, 2^8.8) on one axis. */
#define RAND_EMIN (-30)
#define RAND_EMAX 20

#define MAX_VALUES 96

/* ---- the teaching values ------------------------------------------------------------ */

typedef enum { VALUE_STORED, VALUE_SUM } value_kind_t;

typedef struct {
    const char *label;  /* as printed: what the value is */
    value_kind_t kind;  /* STORED: the real number rounded once; SUM: a + b computed in F */
    const char *a, *b;  /* MPFR-readable numbers, "pi", or "N/D" */
    const char *lesson; /* one line for stdout */
} teach_t;

static const teach_t TEACH[] = {
    {"0.1", VALUE_STORED, "0.1", NULL, "not a binary fraction: every format rounds it"},
    {"1/3", VALUE_STORED, "1/3", NULL, "a repeating binary fraction, rounded at p bits"},
    {"pi", VALUE_STORED, "pi", NULL, "p bits of pi: fp16 keeps 3.140625"},
    {"0.1+0.2", VALUE_SUM, "0.1", "0.2", "two rounded inputs, one rounded sum: not 0.3"},
    {"1+2^-11", VALUE_STORED, "0x1.002p0", NULL, "a tie at p = 11: to even, so back to 1"},
    {"1+3*2^-11", VALUE_STORED, "0x1.006p0", NULL, "a tie at p = 11: to even, this time up"},
    {"1+2^-11+2^-40", VALUE_STORED, "0x1.0020000004p0", NULL, "just above the tie: fp16 rounds up (via fp32 it would not)"},
    {"2^24+1", VALUE_STORED, "16777217", NULL, "the first integer fp32 cannot hold"},
    {"448", VALUE_STORED, "448", NULL, "the largest fp8 e4m3"},
    {"65504", VALUE_STORED, "65504", NULL, "the largest fp16"},
    {"65520", VALUE_STORED, "65520", NULL, "fp16's overflow threshold: the tie rounds to inf"},
    {"70000", VALUE_STORED, "70000", NULL, "beyond fp16 and fp8; bf16 keeps it, roughly"},
    {"1e-8", VALUE_STORED, "1e-8", NULL, "below half of fp16's smallest subnormal: 0 in fp16 and fp8"},
    {"2^-24", VALUE_STORED, "0x1p-24", NULL, "fp16's smallest subnormal"},
    {"2^-25", VALUE_STORED, "0x1p-25", NULL, "half of it: the tie goes to zero"},
    {"1e-40", VALUE_STORED, "1e-40", NULL, "an fp32 subnormal"},
    {"1e39", VALUE_STORED, "1e39", NULL, "beyond fp32, tf32 and bf16"},
};
#define NTEACH (int)(sizeof TEACH / sizeof TEACH[0])

typedef struct {
    char label[64];
    value_kind_t kind;
    mpfr_t a, b, exact; /* a, b: the operands of a SUM; exact: the witness */
    const char *lesson;
} value_t;

/* Reads one number: "pi", "N/D" or anything mpfr_strtofr reads whole (decimal, 0x hex). */
static int read_exact(mpfr_t out, const char *s)
{
    if (!strcmp(s, "pi")) {
        mpfr_const_pi(out, MPFR_RNDN);
        return 0;
    }
    const char *slash = strchr(s, '/');
    if (slash) {
        char num[64];
        size_t len = (size_t)(slash - s);
        if (len >= sizeof num) return -1;
        memcpy(num, s, len);
        num[len] = 0;
        mpfr_t d;
        mpfr_init2(d, WITNESS_PREC);
        int bad = read_exact(out, num) || read_exact(d, slash + 1) || mpfr_zero_p(d);
        if (!bad) mpfr_div(out, out, d, MPFR_RNDN);
        mpfr_clear(d);
        return bad ? -1 : 0;
    }
    char *end;
    mpfr_strtofr(out, s, &end, 0, MPFR_RNDN); /* returns the ternary value, not a status */
    return (*s && end != s && !*end) ? 0 : -1;
}

/* The exact value rounded once to f in round-to-nearest-even, through the library's
 * rounder: first to odd at 53 bits (MPFR, toward zero plus a sticky last bit), which makes
 * the second rounding to any p <= 51 equal to the direct one (Boldo & Melquiond). */
static double round_exact(mpfr_srcptr x, drift_format_t f)
{
    if (f == DRIFT_FP64) return mpfr_get_d(x, MPFR_RNDN);
    mpfr_t t;
    mpfr_init2(t, 53);
    int inexact = mpfr_set(t, x, MPFR_RNDZ);
    double d = mpfr_get_d(t, MPFR_RNDZ);
    mpfr_clear(t);
    if (inexact && isfinite(d)) {
        uint64_t u;
        memcpy(&u, &d, sizeof u);
        u |= 1;
        memcpy(&d, &u, sizeof d);
    }
    return drift_round(d, f, NULL, 0);
}

/* The spacing of f at the exact value x: 2^(max(e, emin) - p + 1), e = floor(log2 |x|). */
static double exact_ulp(mpfr_srcptr x, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    long e = mpfr_zero_p(x) ? fi->emin : (long)mpfr_get_exp(x) - 1;
    if (e < fi->emin) e = fi->emin;
    return ldexp(1.0, (int)e - (fi->p - 1));
}

/* ---- the rows ------------------------------------------------------------------------- */

typedef struct {
    double result;
    drift_class_t cls;
    const char *dir;      /* exact | up | down | overflow */
    double abs_err, rel_err, ulp_err; /* rounded up: never reported smaller than they are */
} cell_t;

typedef struct {
    int bits, p, emin, emax, has_inf;
    double u, eps, min_sub, min_norm, max_fin, digits;
} consts_t;

typedef struct {
    int e;
    double x, x_end, spacing;
    int subnormal;
} step_t;

typedef struct {
    long n_normal, n_zero, n_subnormal, n_overflow;
    double max_rel_normal; /* largest relative error among samples whose witness lies in [min_normal, max_finite] */
    double max_rel_sub;    /* largest among samples below min_normal that did not flush to zero */
} relsum_t;

static void measure_cell(cell_t *c, const value_t *v, drift_format_t f, mpfr_ptr diff, mpfr_ptr q)
{
    if (v->kind == VALUE_SUM) {
        double a = round_exact(v->a, f), b = round_exact(v->b, f);
        c->result = drift_add(a, b, f, DRIFT_RNE);
    } else {
        c->result = round_exact(v->exact, f);
    }
    c->cls = drift_classify(c->result, f);
    if (!isfinite(c->result)) {
        c->dir = "overflow";
        c->abs_err = c->rel_err = c->ulp_err = isnan(c->result) ? NAN : INFINITY;
        return;
    }
    mpfr_set_d(diff, c->result, MPFR_RNDN);
    mpfr_sub(diff, diff, v->exact, MPFR_RNDN); /* exact: DIFF_PREC covers the span */
    int s = mpfr_sgn(diff);
    c->dir = s == 0 ? "exact" : s > 0 ? "up" : "down";
    mpfr_abs(diff, diff, MPFR_RNDN);
    c->abs_err = mpfr_get_d(diff, MPFR_RNDU);
    if (mpfr_zero_p(v->exact)) {
        c->rel_err = s == 0 ? 0 : INFINITY;
    } else {
        mpfr_div(q, diff, v->exact, MPFR_RNDU);
        mpfr_abs(q, q, MPFR_RNDN);
        c->rel_err = mpfr_get_d(q, MPFR_RNDU);
    }
    mpfr_div_d(q, diff, exact_ulp(v->exact, f), MPFR_RNDU); /* division by a power of two */
    c->ulp_err = mpfr_get_d(q, MPFR_RNDU);
}

/* Constants through the rounder, then checked against format.h's table: two independent
 * descriptions of a format must agree before the lab prints either. */
static int measure_constants(consts_t *k, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    const drift_round_opts_t ru = {DRIFT_RU, 0, 0}, rd = {DRIFT_RD, 0, 0};
    k->bits = fi->bits;
    k->p = fi->p;
    k->emin = fi->emin;
    k->emax = fi->emax;
    k->has_inf = fi->has_inf;
    k->eps = drift_round(nextafter(1.0, 2.0), f, &ru, 0) - 1.0; /* the next member above 1 */
    k->u = k->eps / 2;
    k->min_sub = drift_round(DBL_TRUE_MIN, f, &ru, 0);
    k->max_fin = drift_round(DBL_MAX, f, &rd, 0); /* RD never overflows upward */
    k->min_norm = fi->min_normal;
    /* p log10(2): the number of decimal digits p bits are worth (log10(2) to 17 digits). */
    k->digits = fi->p * 0.30102999566398120;
    int ok = k->eps == fi->epsilon && k->u == fi->unit_roundoff && k->min_sub == fi->min_subnormal &&
             k->max_fin == fi->max_finite &&
             /* u is the half-way point: 1 + u ties back to 1, anything above goes to 1 + eps */
             drift_rne(1.0 + k->u, f) == 1.0 && drift_rne(nextafter(1.0 + k->u, 2.0), f) == 1.0 + k->eps &&
             drift_classify(k->min_norm, f) == DRIFT_CLASS_NORMAL &&
             drift_classify(drift_round(nextafter(k->min_norm, 0.0), f, &rd, 0), f) == DRIFT_CLASS_SUBNORMAL;
    return ok ? 0 : -1;
}

/* One step per binade, from the smallest subnormal's binade to the top one. The spacing is
 * measured as (next member above 2^e) - 2^e, and checked against drift_ulp. */
static int measure_spacing(step_t *s, drift_format_t f)
{
    const drift_format_info_t *fi = drift_format_info(f);
    const drift_round_opts_t ru = {DRIFT_RU, 0, 0};
    int n = 0;
    for (int e = fi->emin - (fi->p - 1); e <= fi->emax; e++, n++) {
        double x = ldexp(1.0, e);
        double next = drift_round(nextafter(x, INFINITY), f, &ru, 0);
        s[n].e = e;
        s[n].x = x;
        s[n].x_end = e == fi->emax ? fi->max_finite : ldexp(1.0, e + 1);
        s[n].spacing = next - x; /* exact: two neighbours of f, one spacing apart */
        s[n].subnormal = e < fi->emin;
        if (s[n].spacing != drift_ulp(x, f)) return -1;
    }
    return n;
}

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

/* ---- output helpers ---------------------------------------------------------------------- */

static int bits_digits(drift_format_t f) { return (f == DRIFT_TF32 ? 32 : drift_format_info(f)->bits) / 4; }

static int find_label(const value_t *v, int nv, const char *label)
{
    for (int i = 0; i < nv; i++)
        if (!strcmp(v[i].label, label)) return i;
    return -1;
}

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    /* -- options -- */
    const char *values_opt = NULL;
    long samples = 0; /* 0: not given, take the profile's */
    const drift_cli_opt_t opts[] = {
        {"values", DRIFT_OPT_LIST, &values_opt, "X,X,...",
         "extra values (decimal or hex, e.g. 0.3,0x1p-20), added to the teaching values (default none)", 0, 0, {0}},
        {"samples", DRIFT_OPT_INT, &samples, "N",
         "random reals for the relative-error plot", 1, 10000000, {"200", "1000", "20000"}},
    };
    const drift_cli_spec_t spec = {
        "formats",
        "What happens to a number when it is stored in each format: how much precision and range survive?",
        "fp64,fp32,tf32,fp16,bf16,fp8e4m3,fp8e5m2",
        "seq",
        opts, 2, "takes no orders (its one sum, a + b, has no order to choose)", "CPU only" /* cpu_only */, NULL /* summary: printed by the program */};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    long nrand = samples;

    value_t *vals = calloc(MAX_VALUES, sizeof *vals);
    if (!vals) drift_die("out of memory");
    int nv = 0;
    for (int i = 0; i < NTEACH; i++, nv++) {
        value_t *v = &vals[nv];
        snprintf(v->label, sizeof v->label, "%s", TEACH[i].label);
        v->kind = TEACH[i].kind;
        v->lesson = TEACH[i].lesson;
        mpfr_inits2(WITNESS_PREC, v->a, v->b, v->exact, (mpfr_ptr)0);
        read_exact(v->a, TEACH[i].a);
        if (v->kind == VALUE_SUM) {
            read_exact(v->b, TEACH[i].b);
            mpfr_add(v->exact, v->a, v->b, MPFR_RNDN); /* exact: same binade, 256 bits */
        } else {
            mpfr_set(v->exact, v->a, MPFR_RNDN);
        }
    }
    if (values_opt) {
        if (!*values_opt) drift_die("--values: empty list (accepted: X,X,...)");
        const char *p = values_opt;
        for (;;) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            char item[64];
            if (len == 0) drift_die("--values: empty item in list '%s'", values_opt);
            if (len >= sizeof item) drift_die("--values: item too long in '%s'", values_opt);
            if (nv == MAX_VALUES) drift_die("--values: more than %d values", MAX_VALUES - NTEACH);
            memcpy(item, p, len);
            item[len] = 0;
            value_t *v = &vals[nv];
            double d;
            mpfr_inits2(WITNESS_PREC, v->a, v->b, v->exact, (mpfr_ptr)0);
            /* Both readers must agree: strtod syntax is the lab's, MPFR gives the exact value. */
            if (drift_parse_double(&d, item) || !isfinite(d) || read_exact(v->exact, item) ||
                mpfr_get_d(v->exact, MPFR_RNDN) != d)
                drift_die("--values: '%s' is not a finite number (accepted: decimal or hex float, e.g. 0.3,0x1p-20)", item);
            snprintf(v->label, sizeof v->label, "%s", item);
            v->kind = VALUE_STORED;
            v->lesson = "your value";
            nv++;
            if (!comma) break;
            p = comma + 1;
        }
    }

    const int nf = cli.nformats;
    const drift_format_t *F = cli.formats;

    /* -- sweep and measure: (a) values -- */
    cell_t *cells = calloc((size_t)nv * nf, sizeof *cells);
    if (!cells) drift_die("out of memory");
    {
        mpfr_t diff, q;
        mpfr_init2(diff, DIFF_PREC);
        mpfr_init2(q, 53);
        for (int i = 0; i < nv; i++)
            for (int j = 0; j < nf; j++) measure_cell(&cells[i * nf + j], &vals[i], F[j], diff, q);
        mpfr_clears(diff, q, (mpfr_ptr)0);
    }

    /* -- (b) constants and (c) spacing -- */
    consts_t consts[DRIFT_NFORMATS];
    step_t *steps[DRIFT_NFORMATS];
    int nsteps[DRIFT_NFORMATS];
    for (int j = 0; j < nf; j++) {
        if (measure_constants(&consts[j], F[j]))
            drift_die("self-check failed: %s's measured constants disagree with format.h", drift_format_name(F[j]));
        const drift_format_info_t *fi = drift_format_info(F[j]);
        steps[j] = malloc((size_t)(fi->emax - fi->emin + fi->p + 1) * sizeof **steps);
        if (!steps[j]) drift_die("out of memory");
        if ((nsteps[j] = measure_spacing(steps[j], F[j])) < 0)
            drift_die("self-check failed: %s's measured spacing disagrees with drift_ulp", drift_format_name(F[j]));
    }

    /* -- (c) relative error of random reals: one stream per point, so the result does not
     * depend on --threads; every thread writes only its own rows. -- */
    double *rhi = malloc((size_t)nrand * sizeof *rhi), *rlo = malloc((size_t)nrand * sizeof *rlo);
    double *rres = malloc((size_t)nrand * nf * sizeof *rres), *rrel = malloc((size_t)nrand * nf * sizeof *rrel);
    if (!rhi || !rlo || !rres || !rrel) drift_die("out of memory");
    DRIFT_OMP("omp parallel")
    {
        mpfr_t x, d, q;
        mpfr_inits2(DIFF_PREC, x, d, (mpfr_ptr)0);
        mpfr_init2(q, 53);
        DRIFT_OMP("omp for schedule(static)")
        for (long i = 0; i < nrand; i++) {
            random_real(&rhi[i], &rlo[i], cli.seed, (uint32_t)i);
            mpfr_set_d(x, rhi[i], MPFR_RNDN);
            mpfr_add_d(x, x, rlo[i], MPFR_RNDN); /* exact: hi and lo span < 110 bits */
            for (int j = 0; j < nf; j++) {
                double r = drift_round_sum2(rhi[i], rlo[i], F[j], DRIFT_RNE);
                double rel = isnan(r) ? NAN : INFINITY;
                if (isfinite(r)) {
                    mpfr_set_d(d, r, MPFR_RNDN);
                    mpfr_sub(d, d, x, MPFR_RNDN); /* exact: span < 200 bits */
                    mpfr_abs(d, d, MPFR_RNDN);
                    mpfr_div(q, d, x, MPFR_RNDU);
                    rel = mpfr_get_d(q, MPFR_RNDU);
                }
                rres[i * nf + j] = r;
                rrel[i * nf + j] = rel;
            }
        }
        mpfr_clears(x, d, q, (mpfr_ptr)0);
        mpfr_free_cache();
    }
    relsum_t rs[DRIFT_NFORMATS];
    memset(rs, 0, sizeof rs);
    for (long i = 0; i < nrand; i++)
        for (int j = 0; j < nf; j++) {
            const drift_format_info_t *fi = drift_format_info(F[j]);
            double r = rres[i * nf + j], rel = rrel[i * nf + j];
            /* Classified by the stored value: "stored as a normal number" is what the
             * u = 2^-p bound is about. */
            if (!isfinite(r)) {
                rs[j].n_overflow++;
            } else if (r == 0) {
                rs[j].n_zero++;
            } else if (fabs(r) < fi->min_normal) {
                rs[j].n_subnormal++;
                if (rel > rs[j].max_rel_sub) rs[j].max_rel_sub = rel;
            } else {
                rs[j].n_normal++;
                if (rel > rs[j].max_rel_normal) rs[j].max_rel_normal = rel;
            }
        }

    /* -- write: every file to a temporary name, all renamed only when all are complete -- */
    enum { T_VALUES, T_CONST, T_SPACING, T_RELERR };
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
    static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, VALUES, 13},
                                                {"_constants.csv", NULL, 0, CONST, 17},
                                                {"_spacing.csv", NULL, 0, SPACING, 9},
                                                {"_relerr.csv", NULL, 0, RELERR, 8}};
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 4, 1);
    char b1[64], b2[64];

    drift_out_meta(&out, T_VALUES, "table", "teaching values stored in each format (round to nearest even)");
    drift_out_meta(&out, T_VALUES, "witness",
                     "the real number the label names (MPFR, %d bits); exact/exact_hex show it rounded to the "
                     "nearest double; kind=sum: a+b computed in the format from the rounded a and b",
                     WITNESS_PREC);
    drift_out_meta(&out, T_VALUES, "errors", "abs, rel, ulp errors against the witness, rounded up; ulp = spacing of the format at the witness");
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nf; j++) {
            const cell_t *c = &cells[i * nf + j];
            double ex = mpfr_get_d(vals[i].exact, MPFR_RNDN);
            snprintf(b1, sizeof b1, "0x%0*llx", bits_digits(F[j]), (unsigned long long)drift_encode(c->result, F[j]));
            drift_row(&out, T_VALUES, DRIFT_TXT(vals[i].label), DRIFT_TXT(vals[i].kind == VALUE_SUM ? "sum" : "stored"),
                      DRIFT_TXT(drift_format_name(F[j])), DRIFT_NUM(ex), DRIFT_NUM(ex), DRIFT_NUM(c->result),
                      DRIFT_NUM(c->result), DRIFT_TXT(b1), DRIFT_TXT(drift_class_name(c->cls)), DRIFT_TXT(c->dir),
                      DRIFT_NUM(c->abs_err), DRIFT_NUM(c->rel_err), DRIFT_NUM(c->ulp_err));
        }

    drift_out_meta(&out, T_CONST, "table", "constants of each format, measured through the rounder and checked against format.h");
    for (int j = 0; j < nf; j++) {
        const consts_t *k = &consts[j];
        drift_row(&out, T_CONST, DRIFT_TXT(drift_format_name(F[j])), DRIFT_INT(k->bits), DRIFT_INT(k->p), DRIFT_INT(k->emin),
                  DRIFT_INT(k->emax), DRIFT_INT(k->has_inf), DRIFT_NUM(k->u), DRIFT_NUM(k->u), DRIFT_NUM(k->eps),
                  DRIFT_NUM(k->eps), DRIFT_NUM(k->min_sub), DRIFT_NUM(k->min_sub), DRIFT_NUM(k->min_norm),
                  DRIFT_NUM(k->min_norm), DRIFT_NUM(k->max_fin), DRIFT_NUM(k->max_fin), DRIFT_NUM(k->digits));
    }

    drift_out_meta(&out, T_SPACING, "table",
                     "spacing of representable numbers in each binade [x, x_end): (next member above x) - x");
    for (int j = 0; j < nf; j++)
        for (int n = 0; n < nsteps[j]; n++) {
            const step_t *s = &steps[j][n];
            drift_row(&out, T_SPACING, DRIFT_TXT(drift_format_name(F[j])), DRIFT_INT(s->e), DRIFT_NUM(s->x), DRIFT_NUM(s->x),
                      DRIFT_NUM(s->x_end), DRIFT_NUM(s->spacing), DRIFT_NUM(s->spacing), DRIFT_NUM(s->spacing / s->x),
                      DRIFT_TXT(s->subnormal ? "subnormal" : "normal"));
        }

    drift_out_meta(&out, T_RELERR, "table",
                     "relative error |round(x) - x| / x (rounded up) of random reals x = x_hi + x_lo (exact sum)");
    drift_out_meta(&out, T_RELERR, "sampling",
                     "%ld points; exponent of x_hi uniform in [%d, %d), fraction uniform (52 bits); x_lo uniform in "
                     "[-ulp/2, ulp/2) of x_hi; Philox stream (seed, \"formats\", point, 0)",
                     nrand, RAND_EMIN, RAND_EMAX);
    for (long i = 0; i < nrand; i++)
        for (int j = 0; j < nf; j++) {
            double r = rres[i * nf + j];
            drift_row(&out, T_RELERR, DRIFT_INT(i), DRIFT_TXT(drift_format_name(F[j])), DRIFT_NUM(rhi[i]), DRIFT_NUM(rhi[i]),
                      DRIFT_NUM(rlo[i]), DRIFT_NUM(r), DRIFT_TXT(drift_class_name(drift_classify(r, F[j]))),
                      DRIFT_NUM(rrel[i * nf + j]));
        }

    /* The report fragment: every number below comes from the arrays written above. */
    FILE *fp = out.md;
    fprintf(fp, "**Question.** %s Each value is held against its exact witness (MPFR), so even fp64 shows "
                "its own rounding.\n\n",
            spec.question);
    char cmd[1024]; /* the user's own options too (issue 14: they were dropped) */
    drift_cli_reproduce(cmd, sizeof cmd, &cli);
    fprintf(fp, "Reproduce: `%s` (data/formats*.csv).\n\n", cmd);
    fprintf(fp, "**Teaching values as stored** (round to nearest even; `inf`/`NaN` = overflow; "
                "the hex values and errors are in data/formats.csv):\n\n| value |");
    for (int j = 0; j < nf; j++) fprintf(fp, " %s |", drift_format_name(F[j]));
    fprintf(fp, "\n|---|");
    for (int j = 0; j < nf; j++) fprintf(fp, "---:|");
    fprintf(fp, "\n");
    for (int i = 0; i < nv; i++) {
        fprintf(fp, "| %s |", vals[i].label);
        for (int j = 0; j < nf; j++) {
            double r = cells[i * nf + j].result;
            drift_fmt_num(b1, sizeof b1, r, "%.8g");
            fprintf(fp, " %s |", isnan(r) ? "NaN" : b1);
        }
        fprintf(fp, "\n");
    }
    fprintf(fp, "\n**Constants** (measured through the rounder; data/formats_constants.csv):\n\n"
                "| format | p | unit roundoff u | epsilon | min subnormal | min normal | max finite | decimal digits |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int j = 0; j < nf; j++) {
        const consts_t *k = &consts[j];
        fprintf(fp, "| %s | %d | %.3g | %.3g | %.3g | %.3g | %.5g | %.2f |\n", drift_format_name(F[j]), k->p, k->u,
                k->eps, k->min_sub, k->min_norm, k->max_fin, k->digits);
    }
    fprintf(fp, "\n**Takeaway.**\n\n");
    fprintf(fp, "- Precision: among %ld random reals (exponents 2^%d to 2^%d), the largest relative error of a value "
                "stored as a normal number was",
            nrand, RAND_EMIN, RAND_EMAX);
    for (int j = 0; j < nf; j++)
        fprintf(fp, "%s %s %.3g (%.3f u)", j ? (j + 1 == nf ? " and" : ",") : "", drift_format_name(F[j]),
                rs[j].max_rel_normal, rs[j].max_rel_normal / consts[j].u);
    double worst = 0; /* the largest max-relative-error / u over the formats */
    for (int j = 0; j < nf; j++)
        if (rs[j].max_rel_normal / consts[j].u > worst) worst = rs[j].max_rel_normal / consts[j].u;
    fprintf(fp, worst <= 1 ? ": never above the unit roundoff u = 2^-p.\n"
                           : ": ABOVE the unit roundoff u = 2^-p somewhere, which means a rounding bug.\n");
    fprintf(fp, "- Below the smallest normal the guarantee is gone:");
    int any = 0;
    for (int j = 0; j < nf; j++) {
        if (!rs[j].n_subnormal && !rs[j].n_zero) continue;
        fprintf(fp, "%s %s stored %ld of them as subnormals (relative error up to %.3g) and %ld as zero", any ? ";" : "",
                drift_format_name(F[j]), rs[j].n_subnormal, rs[j].max_rel_sub, rs[j].n_zero);
        any = 1;
    }
    fprintf(fp, "%s\n", any ? "." : " none of the sampled values fell there in these formats.");
    fprintf(fp, "- Range: overflowed (inf, or NaN in fp8e4m3) among the random values:");
    for (int j = 0; j < nf; j++)
        fprintf(fp, "%s %s %ld", j ? "," : "", drift_format_name(F[j]), rs[j].n_overflow);
    fprintf(fp, " of %ld. Teaching values that overflowed:", nrand);
    any = 0;
    for (int j = 0; j < nf; j++) {
        int first = 1;
        for (int i = 0; i < nv; i++) {
            drift_class_t c = cells[i * nf + j].cls;
            if (c != DRIFT_CLASS_INF && c != DRIFT_CLASS_NAN) continue;
            if (first) fprintf(fp, "%s %s: %s", any ? ";" : "", drift_format_name(F[j]), vals[i].label);
            else fprintf(fp, ", %s", vals[i].label);
            first = 0;
            any = 1;
        }
    }
    fprintf(fp, "%s\n", any ? "." : " none.");
    int i01 = find_label(vals, nv, "0.1");
    if (i01 >= 0) {
        fprintf(fp, "- 0.1 is stored as");
        for (int j = 0; j < nf; j++) {
            const cell_t *c = &cells[i01 * nf + j];
            drift_fmt_num(b1, sizeof b1, c->result, "%.17g");
            fprintf(fp, "%s %s (%s, relative error %.2e)", j ? (j + 1 == nf ? " and" : ",") : "", b1,
                    drift_format_name(F[j]), c->rel_err);
        }
        double w = 0;
        for (int j = 0; j < nf; j++)
            if (cells[i01 * nf + j].rel_err / consts[j].u > w) w = cells[i01 * nf + j].rel_err / consts[j].u;
        fprintf(fp, ": the fewer the bits, the larger the error; the largest is %.2f u.\n", w);
    }
    int isum = find_label(vals, nv, "0.1+0.2");
    if (isum >= 0) {
        fprintf(fp, "- 0.1 + 0.2 computed in the format:");
        for (int j = 0; j < nf; j++) {
            const cell_t *c = &cells[isum * nf + j];
            drift_fmt_num(b1, sizeof b1, c->result, "%.17g");
            drift_fmt_num(b2, sizeof b2, c->ulp_err, "%.3g");
            fprintf(fp, "%s %s %s (%s ulp from 0.3)", j ? "," : "", drift_format_name(F[j]), b1, b2);
        }
        int far = 0;
        for (int j = 0; j < nf; j++) far += cells[isum * nf + j].ulp_err > 0.5;
        fprintf(fp, ". In %d of %d formats the computed sum is more than half an ulp from 0.3, so it is not the "
                    "stored 0.3: the two input roundings and the sum's rounding add up.\n",
                far, nf);
    }

    drift_out_commit(&out);

    /* -- summary for people -- */
    if (!cli.quiet) {
        printf("\nvalue          ");
        for (int j = 0; j < nf; j++) printf(" %14s", drift_format_name(F[j]));
        printf("\n");
        for (int i = 0; i < nv; i++) {
            printf("%-15s", vals[i].label);
            for (int j = 0; j < nf; j++) {
                double r = cells[i * nf + j].result;
                drift_fmt_num(b1, sizeof b1, r, "%.8g");
                printf(" %14s", isnan(r) ? "NaN" : b1);
            }
            printf("   %s\n", vals[i].lesson);
        }
        int isum2 = find_label(vals, nv, "0.1+0.2");
        if (isum2 >= 0) {
            printf("\n0.1+0.2 in full:");
            for (int j = 0; j < nf; j++) {
                const cell_t *c = &cells[isum2 * nf + j];
                drift_fmt_num(b1, sizeof b1, c->result, "%.17g");
                drift_fmt_num(b2, sizeof b2, c->ulp_err, "%.2g");
                printf("%s %s %s (%s ulp from 0.3)", j ? "," : "", drift_format_name(F[j]), b1, b2);
            }
            printf("\n");
        }
        printf("\nformat      p   unit roundoff    min subnormal      min normal      max finite  digits  max rel err (random)\n");
        for (int j = 0; j < nf; j++) {
            const consts_t *k = &consts[j];
            printf("%-8s %4d %15.3g %16.3g %15.3g %15.5g %7.2f  %.3g = %.3f u\n", drift_format_name(F[j]), k->p, k->u,
                   k->min_sub, k->min_norm, k->max_fin, k->digits, rs[j].max_rel_normal,
                   rs[j].max_rel_normal / k->u);
        }
        printf("\nWhat you just saw: each format keeps p significant bits, so a stored value is off by at most\n"
               "u = 2^-p relative to the real number (last column: the worst of %ld random reals, always <= u)\n"
               "as long as it lies between the smallest normal and the largest finite value. Below, subnormals\n"
               "keep fewer bits and the relative error grows to 1 (the value becomes 0); above, the value\n"
               "overflows to inf (NaN in fp8e4m3). tf32 and fp16 have the same p = 11 but different ranges;\n"
               "bf16 has fp32's range with only p = 8. Files: %s/formats.csv, formats_constants.csv,\n"
               "formats_spacing.csv, formats_relerr.csv, formats.md; plots: ./lab plot formats.\n",
               nrand, cli.out_dir);
    }

    for (int i = 0; i < nv; i++) mpfr_clears(vals[i].a, vals[i].b, vals[i].exact, (mpfr_ptr)0);
    for (int j = 0; j < nf; j++) free(steps[j]);
    free(vals);
    free(cells);
    free(rhi);
    free(rlo);
    free(rres);
    free(rrel);
    mpfr_free_cache();
    return 0;
}
