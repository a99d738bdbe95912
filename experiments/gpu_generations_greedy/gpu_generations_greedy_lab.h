/* gpu_generations_greedy_lab.h — what one run of the gpu_generations_greedy experiment knows
 * once every generation has decoded its prompts: the architectures and their paths per
 * format, the counts per (seed, format, pair), the partings of greedy texts and the computed
 * top-1/top-2 gaps; and its declared output (two CSV tables, the fragment's table and
 * takeaway, stdout). */
#ifndef DRIFT_GPU_GENERATIONS_GREEDY_LAB_H
#define DRIFT_GPU_GENERATIONS_GREEDY_LAB_H

#include <stddef.h>

#include "cli.h"
#include "format.h"
#include "order.h"
#include "pair_stats.h"
#include "parting.h"

#define DRIFT_GGG_MAXA 8 /* architectures */
#define DRIFT_GGG_MAXF 3 /* formats: bf16, fp16, tf32 */
#define DRIFT_GGG_MAXS 8 /* seeds */

/* one parting of two generations' greedy completions of one prompt */
typedef struct {
    int si, f, r, a, b, tok0; /* tok0: the prompt's random first token */
    drift_parting_t p;
} drift_ggg_part_t;

typedef struct {
    const drift_cli_t *cli;
    const char *archs_opt, *ckpt;  /* the options as given */
    int nf, ns, na, npair, NR, NT; /* formats, seeds, architectures, pairs, prompts, tokens */
    int dim, n_layers, VT;         /* the checkpoint's shape */
    const drift_format_t *formats; /* [f]: the input formats decoded (--text-formats) */
    const drift_tc_arch_t *arch;
    const int (*ok)[DRIFT_GGG_MAXA]; /* [f][a]: the architecture has a path for the format */
    const drift_count_t *gcnt;       /* [seed][f][pair] */
    const drift_ggg_part_t *parts;   /* in (seed, format, prompt, pair) order */
    size_t nparts;
    double *topgap;          /* computed top-1/top-2 gaps of every generated step (sorted in place) */
    const size_t *topgap_at; /* [seed .. ns]: where each seed's gaps start */
    const char *prompt_desc; /* the prompts, in words ("BOS and a random first token") */
    int chat;                /* 1: chat prompts of a prompt set (parts' tok0 = the prompt's line in the set) */
} drift_gpu_gen_greedy_lab_t;

/* Every output file, committed together; stdout unless --quiet. */
void drift_gpu_gen_greedy_write(const drift_gpu_gen_greedy_lab_t *L);

#endif
