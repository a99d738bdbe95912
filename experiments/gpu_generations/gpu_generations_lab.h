/* gpu_generations_lab.h — what one run of the gpu_generations experiment knows once its heads,
 * close calls and greedy texts are in: the architectures and their paths per format, the
 * counts per (seed, format, pair), every logit distance, the partings of greedy texts; and its
 * declared output (seven CSV tables, the fragment's four tables and takeaway, stdout). */
#ifndef DRIFT_GPU_GENERATIONS_LAB_H
#define DRIFT_GPU_GENERATIONS_LAB_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "pair_stats.h"
#include "parting.h"
#include "order.h"

#define DRIFT_GG_MAXA 8 /* architectures */
#define DRIFT_GG_MAXG 8 /* planted gaps */
#define DRIFT_GG_MAXS 8 /* seeds */

/* a pair of architectures a < b (b = na: exact) under format f; p its pair index; shown: in
 * the fragment's tables (b is exact or a's next generation) */
typedef struct {
    int f, a, b, p, shown;
} drift_gg_pair_t;

/* one parting of two generations' greedy completions of one prompt */
typedef struct {
    int si, f, r, a, b, tok0; /* tok0: the prompt's random first token */
    drift_parting_t p;
} drift_gg_part_t;

typedef struct {
    const drift_cli_t *cli;
    const char *archs_opt, *ckpt;      /* the options as given */
    size_t K, V, R, NP;                /* head shape, hidden states and planted pairs per seed */
    int nf, ns, ng, na, npair, NR, NT; /* formats, seeds, gaps, architectures, pairs, prompts, tokens */
    int dim, n_layers, VT;             /* the checkpoint's shape */
    const double *gaps;
    const drift_tc_arch_t *arch;
    const int (*ok)[DRIFT_GG_MAXA]; /* [f][a]: the architecture has a path for the format */
    const drift_gg_pair_t *fab;     /* the (format, a, b) with a path for both, in that order */
    int nfab;
    const drift_count_t *arg;     /* [seed][f][logits fp32/stored][pair] */
    const unsigned char *rowdiff; /* [seed][f][row][logits][pair]: 1 where the row's argmax differs */
    const drift_count_t *close;   /* [seed][f][gap (MAXG)][pair] */
    const drift_count_t *gcnt;    /* [seed][f][pair], greedy texts */
    const long *hist;             /* [f][pair][bin] */
    int64_t **ulps;               /* [f][pair]: all seeds' ulp distances (sorted in place by the summaries) */
    double **sdiff;               /* [f][pair]: the same in units of s */
    size_t nlog;                  /* logits per (f, pair): ns R V */
    const drift_gg_part_t *parts; /* in (seed, format, prompt, pair) order */
    size_t nparts;
    double *topgap;          /* computed top-1/top-2 gaps of every generated step (sorted in place) */
    const size_t *topgap_at; /* [seed .. ns]: where each seed's gaps start */
    long unreached;          /* planted pairs that missed their target gap */
    const int *text_f;       /* [f]: 1 where the greedy text was decoded */
    const char *prompt_desc; /* the prompts, in words ("BOS and a random first token") */
    int chat;                /* 1: chat prompts of a prompt set (parts' tok0 = the prompt's line in the set) */
} drift_gpu_gen_lab_t;

/* Every output file, committed together; stdout unless --quiet. */
void drift_gpu_gen_write(const drift_gpu_gen_lab_t *L);

#endif
