/* test_layer_drift_exp.c — the layer_drift experiment end to end: bad options are one line,
 * exit 2 and no file; at the quick profile (stories260K and the synthetic model, whatever
 * models/ holds) the fp32 configuration's hidden-state error after each MLP block stays near
 * fp32's unit roundoff and bf16's near bf16's, and the fits of layer_drift_fit.csv are the
 * least-squares lines through the CSV's own errors after each layer. The default profile (the
 * real model, SmolLM2, when fetched) takes seconds and gigabytes even at one token: not run
 * here; the fits themselves are checked on hand-solved cases in test_sum_error.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#define EXP DRIFT_BIN_DIR "/layer_drift"

static char dir[64];
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_layerdrift"); }
static void remove_dir(void) { tmpdir_remove(dir); }

TestSuite(layer_drift_exp, .init = make_dir, .fini = remove_dir, .timeout = 120);

Test(layer_drift_exp, bad_options_exit_2_one_line_no_file)
{
    const char *const bad[] = {"--layers 0", "--layers 257", "--tokens 0", "--tokens 257",
        "--checkpoint /nonexistent.bin", "--orders seq", "--profile quick --prompt-set /dev/null"};
    expect_bad_options(EXP, bad, sizeof bad / sizeof bad[0], dir, "layer_drift.csv");
}

Test(layer_drift_exp, errors_sit_at_their_formats_roundoff)
{
    cr_assert_eq(sh("%s --profile quick --quiet --out %s/ok", EXP, dir), 0);
    char *s = slurp_in(dir, "ok/layer_drift.csv");
    int n32 = 0, n16 = 0, nreal = 0;
    FOR_CSV_ROWS (l, s, "model,") {
        char model[32], config[32], block[32];
        int layers, layer, depth;
        double mean, mx;
        cr_assert_eq(sscanf(l, "%31[^,],%d,%31[^,],%d,%31[^,],%d,%lf,%lf", model, &layers, config, &layer, block,
                         &depth, &mean, &mx),
            8, "%s", l);
        cr_assert(!strcmp(model, "stories260K") || !strcmp(model, "synthetic"),
            "quick runs stories260K and the synthetic model: %s", l);
        nreal += !strcmp(model, "stories260K");
        if (strcmp(block, "mlp")) continue;
        /* fp32: u = 2^-24 = 6e-8; a few layers of ~100-term dots and residual adds stay far
         * below 1e-5 (a thousand ulps), and an exact forward pass is not bit-equal to fp32, so > 0. */
        if (!strcmp(config, "fp32")) {
            cr_assert(mean > 0 && mean < 1e-5, "%s", l);
            n32++;
        }
        /* bf16: u = 2^-9 = 2e-3 on every GEMM input and output: at least 1e-4, at most 0.1. */
        if (!strcmp(config, "bf16")) {
            cr_assert(mean > 1e-4 && mean < 0.1, "%s", l);
            n16++;
        }
    }
    cr_assert(n32 > 0 && n16 > 0 && nreal > 0);
    free(s);
}

/* The fit table against the CSV: for each (model, config) the mean errors after each layer's
 * MLP residual (block mlp, layer index i, fitted at l = i + 1), read back at the CSV's 7
 * digits, give the least-squares factor per layer and power of the fit table to 1e-4 relative
 * (the CSV's rounding moves log y by 5e-7 at most; the slopes move by less than that over
 * the layers' spread), and growth is the last over the first. */
Test(layer_drift_exp, fits_are_the_lines_through_the_csv)
{
    cr_assert_eq(sh("%s --profile quick --quiet --out %s/fit", EXP, dir), 0);
    char *s = slurp_in(dir, "fit/layer_drift.csv");
    enum { MAXR = 8, MAXL = 8 };
    char key[MAXR][64];
    double y[MAXR][MAXL];
    int nl[MAXR] = {0}, nk = 0;
    FOR_CSV_ROWS (l, s, "model,") {
        char model[32], config[32], block[32], k[64];
        int layers, layer, depth;
        double mean, mx;
        cr_assert_eq(sscanf(l, "%31[^,],%d,%31[^,],%d,%31[^,],%d,%lf,%lf", model, &layers, config, &layer, block,
                         &depth, &mean, &mx),
            8, "%s", l);
        if (strcmp(block, "mlp")) continue;
        snprintf(k, sizeof k, "%s,%s", model, config);
        int r = 0;
        while (r < nk && strcmp(key[r], k)) r++;
        if (r == nk) {
            cr_assert(nk < MAXR);
            strcpy(key[nk++], k);
        }
        cr_assert(layer == nl[r] && layer < MAXL, "layers in order: %s", l);
        y[r][nl[r]++] = mean;
    }
    free(s);
    s = slurp_in(dir, "fit/layer_drift_fit.csv");
    int nfit = 0;
    FOR_CSV_ROWS (l, s, "model,") {
        char model[32], config[32], k[64];
        int layers, from, to;
        double g, ge, pw, pe, growth;
        cr_assert_eq(sscanf(l, "%31[^,],%d,%31[^,],%d,%d,%lf,%lf,%lf,%lf,%lf", model, &layers, config, &from, &to, &g,
                         &ge, &pw, &pe, &growth),
            10, "%s", l);
        snprintf(k, sizeof k, "%s,%s", model, config);
        int r = 0;
        while (r < nk && strcmp(key[r], k)) r++;
        cr_assert(r < nk && from == 1 && to == layers && nl[r] == layers, "%s", l);
        /* least squares by hand: slope = sum (t - mean t)(log y - mean log y) / sum (t - mean t)^2 */
        for (int law = 0; law < 2; law++) {
            double mt = 0, ml = 0, stt = 0, stl = 0;
            for (int i = 0; i < layers; i++) mt += law ? log(i + 1.0) : i + 1.0, ml += log(y[r][i]);
            mt /= layers, ml /= layers;
            for (int i = 0; i < layers; i++) {
                double dt = (law ? log(i + 1.0) : i + 1.0) - mt;
                stt += dt * dt, stl += dt * (log(y[r][i]) - ml);
            }
            double want = law ? stl / stt : exp(stl / stt), got = law ? pw : g;
            cr_assert(fabs(got - want) <= 1e-4 * fabs(want), "%s: %s %.9g, by hand %.9g", l, law ? "power" : "factor",
                got, want);
        }
        cr_assert(ge >= 1 && pe >= 1, "a misfit factor is exp(rms) >= 1: %s", l);
        cr_assert(fabs(growth - y[r][layers - 1] / y[r][0]) <= 1e-4 * growth, "%s", l);
        nfit++;
    }
    free(s);
    cr_assert_eq(nfit, nk, "one fit per (model, config)");
    cr_assert_eq(nk, 8, "2 models x 4 configurations");
}
