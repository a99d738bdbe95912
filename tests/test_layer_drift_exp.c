/* test_layer_drift_exp.c — the layer_drift experiment end to end: bad options are one line,
 * exit 2 and no file; at the quick profile, the fp32 configuration's hidden-state error after
 * each MLP block stays near fp32's unit roundoff and bf16's near bf16's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#define EXP DRIFT_BIN_DIR "/layer_drift"

static char dir[64];
static void make_dir(void)
{
    tmpdir_make(dir, sizeof dir, "drift_layerdrift");
}
static void remove_dir(void)
{
    tmpdir_remove(dir);
}

TestSuite(layer_drift_exp, .init = make_dir, .fini = remove_dir, .timeout = 120);

Test(layer_drift_exp, bad_options_exit_2_one_line_no_file)
{
    const char *const bad[] = {"--layers 0", "--layers 33", "--tokens 0", "--tokens 257", "--checkpoint /nonexistent.bin",
                         "--orders seq"};
    expect_bad_options(EXP, bad, sizeof bad / sizeof bad[0], dir, "layer_drift.csv");
}

Test(layer_drift_exp, errors_sit_at_their_formats_roundoff)
{
    cr_assert_eq(sh("%s --profile quick --quiet --out %s/ok", EXP, dir), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/ok/layer_drift.csv", dir);
    char *s = slurp(p);
    int n32 = 0, n16 = 0;
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
        if (l[0] == '#' || !strncmp(l, "model,", 6)) continue;
        char model[32], config[32], block[32];
        int layers, layer, depth;
        double mean, mx;
        cr_assert_eq(sscanf(l, "%31[^,],%d,%31[^,],%d,%31[^,],%d,%lf,%lf", model, &layers, config, &layer, block, &depth, &mean, &mx), 8, "%s", l);
        if (strcmp(block, "mlp")) continue;
        /* fp32: u = 2^-24 = 6e-8; a few layers of ~100-term dots and residual adds stay far
         * below 1e-5 (a thousand ulps), and an exact forward pass is not bit-equal to fp32, so > 0. */
        if (!strcmp(config, "fp32")) { cr_assert(mean > 0 && mean < 1e-5, "%s", l); n32++; }
        /* bf16: u = 2^-9 = 2e-3 on every GEMM input and output: at least 1e-4, at most 0.1. */
        if (!strcmp(config, "bf16")) { cr_assert(mean > 1e-4 && mean < 0.1, "%s", l); n16++; }
    }
    cr_assert(n32 > 0 && n16 > 0);
    free(s);
}
