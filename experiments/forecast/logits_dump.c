/* logits_dump.c — --dump-logits: deployment A's top-2 logits of every step, the input of
 * ./lab forecast --logits (forecast_lab.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "forecast_lab.h"
#include "npy_write.h"
#include "table.h"

void drift_fc_dump_check(const char *path)
{
    size_t l = strlen(path);
    drift_file_t f;
    if (l < 5 || strcmp(path + l - 4, ".npy")) drift_die("--dump-logits: '%s' must name a .npy file", path);
    if (drift_file_open(&f, path)) drift_die("--dump-logits: %s: cannot write there", path);
    drift_file_abort(&f);
}

void drift_fc_dump_logits(const drift_fclab_t *L, const char *path)
{
    const int PT = L->PT, T = L->T;
    const drift_deploy_run_t *runs = L->runs;
    /* A: the same deployment in every pair chosen */
    for (int q = 1; q < L->npair; q++)
        if (strcmp(runs[L->ra[q]].spec, runs[L->ra[0]].spec))
            drift_die(
                "--dump-logits: the pairs chosen start from different deployments (%s, %s): choose pairs with one A (--pairs)",
                runs[L->ra[0]].spec, runs[L->ra[q]].spec);
    double *x = malloc((size_t)PT * (size_t)T * 2 * sizeof(double));
    if (!x) drift_die("out of memory for the --dump-logits array (%d x %d x 2)", PT, T);
    const drift_gen_t *ga = runs[L->ra[0]].g;
    for (int i = 0; i < PT; i++)
        for (int t = 0; t < T; t++) {
            x[((size_t)i * T + t) * 2] = t < ga[i].n ? ga[i].top1_logit[t] : NAN;
            x[((size_t)i * T + t) * 2 + 1] = t < ga[i].n ? ga[i].top2_logit[t] : NAN;
        }
    const size_t shape[3] = {(size_t)PT, (size_t)T, 2};
    char err[512];
    if (drift_npy_write_f64(path, x, shape, 3, err, sizeof err)) drift_die("--dump-logits: %s", err);
    free(x);
}
