/* deploy_runs.h — several deployments, each decoding every prompt of a sample greedily: the
 * runs side by side on the cores, one model each (a model holds one deployment's weights as
 * it loads them), each run's prompts in order. What the experiments that compare deployments
 * (deployments, forecast) share. */
#ifndef DRIFT_DEPLOY_RUNS_H
#define DRIFT_DEPLOY_RUNS_H

#include <stdint.h>

#include "drift.h"
#include "chat_prompts.h"
#include "deployment.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    drift_deployment_t dep;
    const char *spec;          /* as parsed (not owned) */
    int other;                 /* 1: the batch's other requests drawn from a second stream (a second run) */
    const unsigned char *only; /* NULL: every prompt; else only the prompts i with only[i] (not owned);
                                * the others' records stay empty (n = 0) */
    drift_gen_t *g;            /* one per prompt, after drift_deploy_runs */
    double seconds;            /* thread CPU time of its decodes */
    long tokens;               /* tokens it generated */
} drift_deploy_run_t;

/* The index of the run (spec, other) among runs[0 .. *nrun-1], added at *nrun (parsed) when it
 * is not there yet; at most `cap` runs. The index, or DRIFT_EINVAL with the parser's line in
 * err (DRIFT_ERANGE when full). */
DRIFT_MUST_CHECK int drift_deploy_run_find(
    drift_deploy_run_t *runs, int *nrun, int cap, const char *spec, int other, char *err, size_t errsz);

/* Every run decodes the n prompts (those of its `only`), ntokens greedy tokens each (drift_deploy_generate): prompt
 * i's batch schedule comes from the Philox stream (the seed of its draw, stream, prompt index,
 * other), so two runs with the same `other` see the same companions, and a prompt drawn at two
 * seeds sees other companions at each. workers threads (at most nrun);
 * progress(ctx, done, total), when not NULL, is called by one thread as prompts finish. Frees
 * nothing on failure: drift_deploy_runs_free does. 0, or DRIFT_ENOMEM / the model's error. */
DRIFT_MUST_CHECK int drift_deploy_runs(drift_deploy_run_t *runs, int nrun, const drift_checkpoint_t *ck,
    const drift_chat_prompt_t *pr, int n, int ntokens, const char *stream, int workers,
    void (*progress)(void *ctx, size_t done, size_t total), void *ctx);
void drift_deploy_runs_free(drift_deploy_run_t *runs, int nrun, int n);

#ifdef __cplusplus
}
#endif

#endif
