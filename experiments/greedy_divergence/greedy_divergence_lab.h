/* greedy_divergence_lab.h — what one run of the greedy_divergence experiment knows once its
 * requests are decoded: the configurations, the batches' shape, and per configuration the
 * distinct completions and every request's divergence from the request alone; and its
 * declared output (three CSV tables, the fragment's table and takeaway, stdout). */
#ifndef DRIFT_GREEDY_DIVERGENCE_LAB_H
#define DRIFT_GREEDY_DIVERGENCE_LAB_H

#include "checkpoint.h"
#include "cli.h"

/* one server configuration: kernel policy, recipe, weight format, attention kernel, tensor parallelism */
typedef struct {
    const char *name, *policy, *recipe, *weights, *attention;
    int tp;
    const char *allreduce;
} drift_gd_conf_t;

/* one request whose completion parts from the request alone */
typedef struct {
    int request, batch, step; /* step: first differing token (0-based) */
    int tok_alone, tok_batched;
    double gap, top12; /* exact l(alone) - l(batched) there, exact top-1/top-2 gap */
} drift_gd_div_t;

/* one configuration's requests */
typedef struct {
    int shapes;           /* distinct sequences of kernel plans */
    long computed;        /* forward steps run after sharing prefixes */
    int distinct;         /* distinct completions */
    int ndiv;             /* requests whose completion differs from the request alone */
    drift_gd_div_t *divs; /* [ndiv], in request order */
} drift_gd_result_t;

typedef struct {
    const drift_cli_t *cli;
    const drift_gd_conf_t *confs;
    int nconf;
    const int *use;               /* [nconf]: run */
    const drift_gd_result_t *res; /* [nconf]: valid where use */
    int R, T;                     /* requests, tokens each */
    long Bmax, sms, min_slice, bin;
    const char *prompt_ids, *ckpt;
    const drift_llm_config_t *cfg;
} drift_greedy_div_lab_t;

/* Every output file, committed together; stdout unless --quiet. */
void drift_greedy_div_write(const drift_greedy_div_lab_t *L);

#endif
