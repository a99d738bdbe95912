/* run_choice.c — the deployments' runs a run decodes (forecast_lab.h): the pairs chosen and the
 * tie-breaker's builds. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "forecast_lab.h"

/* the index of the run (spec, other) among L's runs, added when new; what names the option */
static int run_of(drift_fclab_t *L, const char *spec, int other, const char *what)
{
    char perr[DRIFT_LLM_ERR_MAX];
    int r = drift_deploy_run_find(L->runs, &L->nrun, DRIFT_FC_RUNS_MAX, spec, other, perr, sizeof perr);
    if (r < 0) drift_die("%s: %s", what, perr);
    return r;
}

void drift_fc_choose_pairs(drift_fclab_t *L, const drift_fc_pair_t *table, int ntable, const char *pairs_opt)
{
    int chosen[DRIFT_FC_PAIRS_MAX];
    const char *ids[DRIFT_FC_PAIRS_MAX] = {0};
    if (ntable > DRIFT_FC_PAIRS_MAX) drift_die("more than %d pairs", DRIFT_FC_PAIRS_MAX);
    for (int i = 0; i < ntable; i++) ids[i] = table[i].id;
    drift_name_set(chosen, "--pairs", pairs_opt, ids, ntable);
    for (int i = 0; i < ntable; i++) {
        const drift_fc_pair_t *p = &table[i];
        if (!chosen[i]) continue;
        L->pair[L->npair] = p;
        L->ra[L->npair] = run_of(L, p->a, 0, "deployment");
        L->rb[L->npair++] = run_of(L, p->b, p->other_b, "deployment");
    }
}

void drift_fc_tie_runs(drift_fclab_t *L)
{
    const drift_dbllist_t *ties = &L->ties;
    L->tie_a0 = L->tie_b0 = -1;
    for (int e = 0; e < ties->n; e++)
        if (!(ties->v[e] > 0)) drift_die("--tie-eps: %g is not a positive gap in logits", ties->v[e]);
    if (!ties->n) return;
    L->tie_a0 = run_of(L, "llamacpp-cpu", 0, "deployment");
    L->tie_b0 = run_of(L, "llamacpp-cpu-avx512", 0, "deployment");
    for (int e = 0; e < ties->n; e++) {
        char *sa = L->tie_spec[2 * e], *sb = L->tie_spec[2 * e + 1];
        snprintf(sa, sizeof L->tie_spec[0], "llamacpp-cpu,sampler=greedy-ties:%.17g", ties->v[e]);
        snprintf(sb, sizeof L->tie_spec[0], "llamacpp-cpu-avx512,sampler=greedy-ties:%.17g", ties->v[e]);
        L->tie_a[e] = run_of(L, sa, 0, "--tie-eps");
        L->tie_b[e] = run_of(L, sb, 0, "--tie-eps");
    }
}
