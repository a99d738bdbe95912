/* real_gaps_lab.h — the steps of the real_gaps protocol that main.c calls, each in the file
 * named beside it: the texts, their scores by the exact model and each configuration, the law
 * of each configuration's logit error, and the takeaway. */
#ifndef DRIFT_REAL_GAPS_LAB_H
#define DRIFT_REAL_GAPS_LAB_H

#include <stdint.h>

#include "checkpoint.h"
#include "cli.h"
#include "drift.h"
#include "errlaw.h"
#include "model.h"
#include "output.h"

/* main.c's tables, in the order of its TABLES */
enum { T_GAPS, T_HIST, T_FLIPS, T_ERRLAW, T_ERRPOS, T_MD_GAPS, T_MD_FLIPS };

/* The texts: each a prompt and its fp32 greedy continuation; the gaps are measured at the
 * positions [from, n) of each (the logits after token p choose token p + 1). */
typedef struct {
    int *tok;
    int n, from;
} drift_rg_text_t;

/* texts.c: R texts of T greedy tokens: a GGUF model's prompts drawn by the seed from the prompt
 * set at path, else BOS and one random first token; their tokens are chosen by drift_rg_greedy */
void drift_rg_texts(drift_rg_text_t *tx, int R, int T, const drift_checkpoint_t *ck, const char *path, uint64_t seed);
/* texts.c: each text's tokens after its prompt (or after the first token): fp32 greedy, alone */
void drift_rg_greedy(drift_rg_text_t *tx, int R, const drift_checkpoint_t *ck);

/* The law of each configuration's logit error. At each position the errors of KS logits
 * against the exact ones: the exact top ES, then every STRIDE-th id of the rest (a sample of
 * the whole vocabulary's scale). They are grouped by the binade [2^k, 2^(k+1)) of |exact
 * logit|, k = BIN_LO .. BIN_LO + NBIN - 1 (each DRIFT_RG_), where the output format's spacing
 * q is one value; smaller logits are left out (their q varies within the group). */
#define DRIFT_RG_ES 32
#define DRIFT_RG_STRIDE 64
#define DRIFT_RG_BIN_LO (-3)
#define DRIFT_RG_NBIN 9

/* texts.c: every scored position i of every text (in order), by the exact model and by each
 * configuration c (its values at [c * NP + i]); position i's sampled logits are [off[i], off[i + 1]) */
typedef struct {
    size_t NP, NE;       /* positions, sampled logits */
    double *gap, *top;   /* exact top-1 minus top-2, and the exact top-1 logit */
    int *t1, *t2;        /* the exact top two */
    double *egap;        /* per configuration: its gap of the exact top pair minus the exact gap */
    unsigned char *flip; /* per configuration: its argmax differs from the exact one */
    size_t *off;         /* NP + 1 */
    int *sidx, *stext;   /* the sampled logits' ids (the exact top-1 first at each position), their text */
    double *sval, *serr; /* their exact values, and per configuration their errors (at [c * NE + k]) */
} drift_rg_scores_t;

/* texts.c: the exact model teacher-forced over every text (a T_GAPS row per position), then
 * the nconf configurations nxc, side by side on the cores */
void drift_rg_score(drift_rg_scores_t *S, drift_out_t *out, drift_cli_t *cli, const drift_checkpoint_t *ck,
    const drift_rg_text_t *tx, int R, const drift_numerics_t *nxc, int nconf);
void drift_rg_scores_free(drift_rg_scores_t *S);

/* One configuration's error law: its binades (errlaw.h: each text held out in turn), as words
 * and with its gap error by thirds of the tokens, for the takeaway */
typedef struct {
    drift_errlaw_bin_t bin[DRIFT_RG_NBIN]; /* the binades fitted, in increasing order */
    int nbin;
    char words[512];         /* which law each binade favours, in words */
    double pos_min, pos_max; /* the rms gap error's smallest and largest third of the tokens */
} drift_rg_errlaw_t;

/* real_gaps_report.c: configuration c's error law per binade into T_ERRLAW, and its gap error
 * by thirds of the tokens into T_ERRPOS */
void drift_rg_errlaw(drift_rg_errlaw_t *law, drift_out_t *out, const drift_rg_scores_t *S, int c, const char *name,
    drift_format_t of, const drift_rg_text_t *tx, int R);

/* per configuration, what the takeaway states */
typedef struct {
    const char *name;
    double sigma, pred_gauss, pred_conv;
    long observed;
    drift_rg_errlaw_t law;
} drift_rg_conf_result_t;

/* real_gaps_report.c: the fragment's takeaway: the gaps' median and shares below 0.1 and 0.01, then
 * the flips and the error law of the nconf configurations */
void drift_rg_takeaway(
    drift_out_t *out, size_t NP, double median, const long *below, const drift_rg_conf_result_t *res, int nconf, int R);

#endif
