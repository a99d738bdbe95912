/* deploy_runs.c — deployments decoding a prompt sample side by side (deploy_runs.h). */
#include "deploy_runs.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drift.h"
#include "philox.h"

int drift_deploy_run_find(
    drift_deploy_run_t *runs, int *nrun, int cap, const char *spec, int other, char *err, size_t errsz)
{
    for (int i = 0; i < *nrun; i++)
        if (!strcmp(runs[i].spec, spec) && runs[i].other == other) return i;
    if (*nrun >= cap) {
        snprintf(err, errsz, "more than %d deployments", cap);
        return DRIFT_ERANGE;
    }
    drift_deploy_run_t *r = &runs[*nrun];
    memset(r, 0, sizeof *r);
    int rc = drift_deployment_parse(&r->dep, spec, err, errsz);
    if (rc) return rc;
    r->spec = spec, r->other = other;
    return (*nrun)++;
}

static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int drift_deploy_runs(drift_deploy_run_t *runs, int nrun, const drift_checkpoint_t *ck, const drift_chat_prompt_t *pr,
    int n, int ntokens, const char *stream, int workers, void (*progress)(void *ctx, size_t done, size_t total),
    void *ctx)
{
    if (workers > nrun) workers = nrun;
    if (workers < 1) workers = 1;
    const uint32_t sid = drift_fnv1a32(stream);
    int failed = 0;
#pragma omp parallel for num_threads(workers) schedule(dynamic, 1) reduction(| : failed)
    for (int r = 0; r < nrun; r++) {
        char err[256];
        drift_model_t *m = NULL;
        runs[r].g = calloc((size_t)n, sizeof(drift_gen_t));
        runs[r].tokens = 0;
        if (!runs[r].g || drift_model_create(&m, ck, &runs[r].dep.nx, 1, err, sizeof err)) {
            failed = 1;
            continue;
        }
        double t0 = thread_seconds();
        for (int i = 0; i < n && !failed; i++) {
            if (runs[r].only && !runs[r].only[i]) continue;
            if (progress && omp_get_thread_num() == 0)
                progress(ctx, (size_t)r * (size_t)n + (size_t)i, (size_t)nrun * (size_t)n);
            /* the batch's other requests: one stream per (the prompt's draw seed, prompt); `other` is a second run */
            drift_stream_t bs;
            drift_stream_init(&bs, pr[i].seed, sid, (uint32_t)pr[i].index, (uint32_t)runs[r].other);
            uint64_t sd = (uint64_t)drift_stream_u32(&bs) << 32 | drift_stream_u32(&bs);
            if (drift_deploy_generate(&runs[r].g[i], m, &runs[r].dep, pr[i].tok, pr[i].n, pr[i].prefix, ntokens, sd, 0))
                failed = 1;
            runs[r].tokens += runs[r].g[i].n;
        }
        runs[r].seconds = thread_seconds() - t0;
        drift_model_free(m);
    }
    /* thread 0 reports only its own runs' steps: the end is said once all are done */
    if (progress && !failed) progress(ctx, (size_t)nrun * (size_t)n, (size_t)nrun * (size_t)n);
    return failed ? DRIFT_ENOMEM : 0;
}

void drift_deploy_runs_free(drift_deploy_run_t *runs, int nrun, int n)
{
    for (int r = 0; r < nrun; r++) {
        if (runs[r].g)
            for (int i = 0; i < n; i++) drift_gen_free(&runs[r].g[i]);
        free(runs[r].g);
        runs[r].g = NULL;
    }
}
