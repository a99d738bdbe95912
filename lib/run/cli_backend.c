/* cli_backend.c — --backend: which code the recipe dispatcher runs (backend.h), chosen once
 * per run, and drift_require_gpu for the experiments that measure a device. */
#include "cli_backend.h"
#include "backend.h"
#include "drift.h"

#include <stdio.h>
#include <stdlib.h>

/* A deterministic GPU kernel that disagrees with its CPU twin is a bug: one line, exit 2. */
static void backend_mismatch(const char *line) { drift_die("--backend cuda: %s", line); }

/* How much of the run the device computed, once at exit (not under --quiet). */
static void backend_report(void)
{
    drift_backend_stats_t s = drift_backend_stats();
    fprintf(stderr,
        "%s: backend cuda: %llu calls on the GPU checked bit for bit against their CPU twin, %llu measured"
        " (tensor cores, vendor and atomic paths), %llu on the CPU (no GPU path)\n",
        drift_program(), s.checked, s.measured, s.on_cpu);
}

void drift_cli_select_backend(drift_cli_t *cli, int explicit_auto)
{
    char why[320] = "";
    if (cli->backend == DRIFT_BACKEND_CPU || (cli->backend == DRIFT_BACKEND_AUTO && cli->spec->cpu_only)) {
        int rc = drift_backend_use(0, NULL, 0); /* the CPU is always there: cannot fail */
        (void)rc;
        if (cli->backend == DRIFT_BACKEND_AUTO && explicit_auto && !cli->quiet)
            fprintf(stderr, "%s: backend: cpu (%s runs on the %s)\n", drift_program(), cli->spec->name,
                cli->spec->cpu_only);
        cli->backend = DRIFT_BACKEND_CPU;
        return;
    }
    if (drift_backend_use(1, why, sizeof why)) {
        if (cli->backend == DRIFT_BACKEND_CUDA) drift_die("--backend: cuda: %s (accepted: auto, cpu)", why);
        if (explicit_auto && !cli->quiet) fprintf(stderr, "%s: backend: cpu (%s)\n", drift_program(), why);
        cli->backend = DRIFT_BACKEND_CPU;
        return;
    }
    drift_backend_on_mismatch(backend_mismatch);
    if (!cli->quiet) {
        char dev[320] = "";
        const drift_backend_ops_t *ops = drift_backend_registered();
        if (ops->describe) ops->describe(dev, sizeof dev);
        fprintf(stderr, "%s: backend: cuda (%s)\n", drift_program(), dev);
        atexit(backend_report);
    }
    cli->backend = DRIFT_BACKEND_CUDA;
}

void drift_require_gpu(const drift_cli_t *cli)
{
    if (cli->backend == DRIFT_BACKEND_CUDA) return;
    char why[320] = "";
    if (drift_backend_use(1, why, sizeof why) == DRIFT_OK) { /* a device, but --backend cpu asked for */
        int rc = drift_backend_use(0, NULL, 0);              /* the CPU is always there: cannot fail */
        (void)rc;
        snprintf(why, sizeof why, "--backend cpu was asked for");
    }
    fprintf(stderr, "%s: skipped: needs a CUDA device (%s); no file written\n", drift_program(), why);
    exit(DRIFT_EXIT_SKIPPED);
}
