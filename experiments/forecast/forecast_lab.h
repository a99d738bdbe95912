/* forecast_lab.h — what one run of the forecast experiment knows (its sizes, prompts, the
 * deployments' runs, the pairs chosen, the tie-breaker's runs, the scores so far) and the steps
 * of its protocol that main.c calls, each in the file named beside it. */
#ifndef DRIFT_FORECAST_LAB_H
#define DRIFT_FORECAST_LAB_H

#include "chat_prompts.h"
#include "checkpoint.h"
#include "cli.h"
#include "deploy_runs.h"
#include "forecast.h"
#include "output.h"

/* main.c's tables, in the order of its TABLES; T_TIES last: its CSV exists only in a run with
 * --tie-eps */
enum { T_PROMPTS, T_PAIRS, T_SEEDS, T_REL, T_MD_PAIRS, T_MD_RISK, T_MD_TIES, T_TIES };

typedef struct {
    const char *id, *change;
    const char *a, *b;
    int other_b; /* B: the same deployment with other requests around (a second run) */
} drift_fc_pair_t;

#define DRIFT_FC_PAIRS_MAX 8
#define DRIFT_FC_RUNS_MAX (2 * DRIFT_FC_PAIRS_MAX + 2 * DRIFT_LIST_MAX)
#define DRIFT_FC_MIN_EVENTS 3 /* partings (and non-partings) a pair needs before its skill is stated */

/* one pair's pooled scores, for the takeaway */
typedef struct {
    long k;
    double sump, skill, lo, hi;
    int seeds_at_goal;
} drift_fc_pair_sum_t;

/* a held-out forecast, for the riskiest prompts */
typedef struct {
    int prompt, pair, step;
    double p, step_gap;
} drift_fc_risk_t;

typedef struct {
    drift_cli_t cli;
    /* P prompts per seed; prompt i of the Z * P is seed i / P's, sample (i % P) / N; the
     * tie-breaker decodes the NT prompts of the first K samples of every seed */
    int N, T, S, Z, P, PT, K, NT;
    drift_checkpoint_t ck;
    drift_chat_prompt_t *pr;
    /* the pairs chosen: their runs of A and B among runs[] */
    const drift_fc_pair_t *pair[DRIFT_FC_PAIRS_MAX];
    int npair, ra[DRIFT_FC_PAIRS_MAX], rb[DRIFT_FC_PAIRS_MAX];
    drift_deploy_run_t runs[DRIFT_FC_RUNS_MAX];
    int nrun;
    /* the tie-breaker: llama.cpp's two builds plain (tie_a0, tie_b0) and with each EPS */
    drift_dbllist_t ties;
    char tie_spec[2 * DRIFT_LIST_MAX][96];
    int tie_a0, tie_b0, tie_a[DRIFT_LIST_MAX], tie_b[DRIFT_LIST_MAX];
    unsigned char *tie_in;    /* tie_in[i]: prompt i is in the tie-breaker's first K samples of its seed */
    unsigned char *tie_plain; /* the plain builds' prompts when only the tie-breaker needs them */
    unsigned char *again;     /* per (EPS, build): the prompts the rule decodes again */
    long again_n[DRIFT_LIST_MAX];
    /* the scores, pair by pair */
    drift_fc_pair_sum_t sums[DRIFT_FC_PAIRS_MAX];
    drift_fc_risk_t *risk;
    int nrisk;
    double *allp; /* every pair's forecasts and outcomes, for the pooled reliability */
    unsigned char *ally;
    long tie_n, tie_k; /* held-out (prompt, pair) whose riskiest step is a tie of A's */
    double tie_p;
    /* the tie-breaker's measure, for the takeaway */
    char tie_text[512];
    long why_all[DRIFT_TIE_NCAUSE];
} drift_fclab_t;

/* pair_scores.c: B's gap of A's two tokens minus A's gap at step t, where B's top two are A's
 * two (in either order); NaN where B ranked another token among its top two (delta not 0, its
 * value unseen) */
double drift_fc_step_delta(const drift_gen_t *a, const drift_gen_t *b, int t);

/* run_choice.c: the pairs of table[0 .. ntable-1] named by --pairs, in the table's order, and
 * their runs, into L->pair, ra, rb and runs */
void drift_fc_choose_pairs(drift_fclab_t *L, const drift_fc_pair_t *table, int ntable, const char *pairs_opt);

/* run_choice.c: the tie-breaker's runs after the pairs' (none without --tie-eps) */
void drift_fc_tie_runs(drift_fclab_t *L);
/* tie_breaker.c: the prompts the plain builds decode when no pair chosen needs them all */
void drift_fc_tie_plain_prompts(drift_fclab_t *L);
/* tie_breaker.c: after the plain runs, the prompts each tie run decodes again (where the rule
 * acts); the tie runs are runs[nplain ..] */
void drift_fc_tie_again(drift_fclab_t *L, int nplain);
/* tie_breaker.c: partings measured and forecast with each EPS, into T_TIES and T_MD_TIES */
void drift_fc_tie_measure(drift_fclab_t *L, drift_out_t *out);

/* logits_dump.c: refuses a --dump-logits path that is not a writable .npy, before any work */
void drift_fc_dump_check(const char *path);
/* logits_dump.c: A's top-2 logits of every step into path, shape (prompts, tokens, 2) */
void drift_fc_dump_logits(const drift_fclab_t *L, const char *path);

/* pair_scores.c: pair q scored held out: its steps, folds, forecasts and scores into T_PROMPTS,
 * T_SEEDS, T_PAIRS, T_MD_PAIRS and T_REL, and its sums, risks and ties into L */
void drift_fc_score_pair(drift_fclab_t *L, drift_out_t *out, int q);

/* forecast_summary.c: the riskiest held-out prompts, all pairs together, into T_MD_RISK */
void drift_fc_riskiest(drift_fclab_t *L, drift_out_t *out);

/* forecast_summary.c: the fragment's takeaway, from the numbers above */
void drift_fc_takeaway(const drift_fclab_t *L, drift_out_t *out);

#endif
