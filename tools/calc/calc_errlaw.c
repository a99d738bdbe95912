/* calc_errlaw.c — `drift-calc errlaw --format F EXACT COMPUTED`: which mechanism a computed
 * dump's error shows against an exact one: accumulation noise alone (GAUSS) or that noise and
 * then the result rounded to F's grid (CONV), per binade of the exact value (errlaw.h, the law
 * real_gaps fits to SmolLM2's logits).
 *
 * EXACT and COMPUTED hold the same shape, (N, V) or (V,): e.g. the logits of N positions from a
 * reference run (fp64, or a wider engine) and from the engine under test. F is the format the
 * computed values were stored in: in each binade [2^k, 2^(k+1)) of |exact| its spacing q is one
 * value, and a stored value's rounding adds a uniform error on [-q/2, q/2] to the noise. The
 * errors of one row share that row's hidden state, so rows are not independent: the N rows are
 * cut into U contiguous blocks (--units, default min(N, 10)), and each block is held out in turn
 * (both laws fitted on the others, tested on it). A binade's law is decided when it predicted
 * better on every block and both the held-out log-likelihood ratio and its power reach log 20;
 * where q is small against the noise the two laws coincide and no data can decide.
 * CSV on stdout, one row per binade with at least 100 errors (exact values of 0 lie in none):
 *   lo,hi,q,n,units_tested,units_conv,rms,sigma_gauss,sigma_conv,dloglik,power_conv,power_gauss,law
 * Bad input (shapes that differ, a non-finite value, a missing --format): one line, exit 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"
#include "calc_input.h"
#include "cli.h"
#include "drift.h"
#include "errlaw.h"
#include "format.h"
#include "output.h"

static void usage(FILE *to)
{
    fprintf(to,
        "usage: drift-calc errlaw --format F [--units U] EXACT COMPUTED\n"
        "  EXACT, COMPUTED  dumps of the same shape, (N, V) or (V,): exact (reference) values and computed ones,\n"
        "                   as a NumPy .npy array (float64/32/16) or a CSV of N rows of V values; '-' reads stdin\n"
        "  --format F       the format COMPUTED was stored in: its spacing q in each binade of |exact| is the\n"
        "                   output grid whose rounding the CONV law adds to the noise\n"
        "  --units U        the N rows cut into U contiguous blocks, each held out in turn (default min(N, 10));\n"
        "                   the errors of one row share its hidden state, so rows are the smallest units\n"
        "prints CSV, one row per binade [lo, hi) of |exact| holding at least 100 errors:\n"
        "  lo,hi,q,n,units_tested,units_conv,rms,sigma_gauss,sigma_conv,dloglik,power_conv,power_gauss,law\n"
        "error = computed - exact. GAUSS: N(0, sigma^2), accumulation noise alone. CONV: that noise, then\n"
        "  rounded to a grid of spacing q: density (1/q)[Phi((e + q/2)/sigma) - Phi((e - q/2)/sigma)].\n"
        "dloglik: held out, summed over the units, loglik(CONV) - loglik(GAUSS); power_*: the expected\n"
        "  dloglik under each law fitted on all (n KL). law: conv or gauss when every unit tested (at least\n"
        "  two) favoured it and dloglik and its power reach log 20; undecided otherwise (where q is small\n"
        "  against sigma the two laws coincide).\n");
}

/* A dump's (N, V), (V,) being one row; nonzero with the refusal in why when its shape or a value
 * is not accepted (the caller frees both dumps before it dies: nothing is left allocated). */
static int dims(size_t *N, size_t *V, const char *what, const char *file, const calc_shape_t *sh, const double *x,
    size_t n, char *why, size_t size)
{
    char shape[96];
    calc_shape_print(shape, sizeof shape, sh);
    if (sh->ndim == 1)
        *N = 1, *V = sh->dim[0];
    else if (sh->ndim == 2)
        *N = sh->dim[0], *V = sh->dim[1];
    else
        return snprintf(why, size, "%s: %s has shape %s (accepted: (N, V) or (V,))", what, file, shape);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return snprintf(why, size, "%s: %s: row %zu, column %zu is %g (accepted: finite values)", what, file,
                i / *V, i % *V, x[i]);
    return 0;
}

int calc_errlaw(int argc, char **argv)
{
    const char *format_s = NULL, *units_s = NULL, *files[2];
    const drift_arg_opt_t opts[] = {{"format", &format_s, NULL, 0, "F"}, {"units", &units_s, NULL, 0, "U"}};
    int nfiles = drift_args_parse(opts, 2, files, 2, argc, argv, usage);
    if (!format_s) drift_die("--format: missing (accepted: fp64, fp32, tf32, fp16, bf16, fp8e4m3, fp8e5m2)");
    if (nfiles != 2) drift_die("expected two files EXACT COMPUTED, got %d", nfiles);
    if (!strcmp(files[0], "-") && !strcmp(files[1], "-")) drift_die("EXACT and COMPUTED cannot both be stdin");
    const drift_format_t fmt = drift_format_arg("--format", format_s);
    double *ex = NULL, *co = NULL;
    size_t ne = 0, nc = 0, N = 0, V = 0, N2 = 0, V2 = 0;
    calc_shape_t se, sc;
    if (calc_read_array(files[0], DRIFT_FP64, &ex, &ne, &se) != 0) return 2;
    if (calc_read_array(files[1], DRIFT_FP64, &co, &nc, &sc) != 0) {
        free(ex);
        return 2;
    }
    char why[512] = "";
    long units = 0;
    if (!dims(&N, &V, "EXACT", files[0], &se, ex, ne, why, sizeof why) &&
        !dims(&N2, &V2, "COMPUTED", files[1], &sc, co, nc, why, sizeof why)) {
        units = N < 10 ? (long)N : 10;
        if (N != N2 || V != V2)
            snprintf(why, sizeof why, "COMPUTED: %zu x %zu values, EXACT %zu x %zu (accepted: the same shape)", N2, V2,
                N, V);
        else if (units_s && (drift_parse_long(&units, units_s) || units < 1 || (size_t)units > N))
            snprintf(why, sizeof why, "--units: '%s' (accepted: 1..%zu, the rows)", units_s, N);
    }
    if (*why) {
        free(ex), free(co);
        drift_die("%s", why);
    }

    const size_t n = N * V;
    int *unit = malloc(n * sizeof *unit);
    if (!unit) {
        free(ex), free(co);
        drift_die("the units of %zu values: out of memory", n);
    }
    double amin = INFINITY, amax = 0;
    for (size_t i = 0; i < n; i++) {
        unit[i] = (int)(i / V * (size_t)units / N); /* row r in block floor(r U / N) */
        co[i] -= ex[i];                             /* the error, rounded once to double */
        if (ex[i] != 0) amin = fmin(amin, fabs(ex[i])), amax = fmax(amax, fabs(ex[i]));
    }
    printf("lo,hi,q,n,units_tested,units_conv,rms,sigma_gauss,sigma_conv,dloglik,power_conv,power_gauss,law\n");
    if (amax > 0) {
        int e_lo, e_hi;
        frexp(amin, &e_lo), frexp(amax, &e_hi); /* |x| in [2^(e-1), 2^e) */
        const int nbin = e_hi - e_lo + 1;
        drift_errlaw_bin_t *bins = malloc((size_t)nbin * sizeof *bins);
        int nb = bins ? drift_errlaw_binades(bins, co, ex, unit, n, (int)units, e_lo - 1, nbin, fmt) : DRIFT_ENOMEM;
        if (nb < 0) {
            free(bins), free(unit), free(ex), free(co);
            drift_die("the error law of %zu values: %s", n, drift_strerror(nb));
        }
        for (int b = 0; b < nb; b++) {
            const drift_errlaw_bin_t *o = &bins[b];
            printf("%a,%a,%a,%ld,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s\n", o->lo, o->hi, o->q, o->n, o->folds,
                o->folds_conv, o->rms, o->sigma_gauss, o->sigma_conv, o->dloglik, o->power_conv, o->power_gauss,
                o->winner == 'c'   ? "conv"
                : o->winner == 'g' ? "gauss"
                                   : "undecided");
        }
        free(bins);
    }
    free(unit), free(ex), free(co);
    return drift_stdout_close_check();
}
