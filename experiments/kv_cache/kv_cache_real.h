/* kv_cache_real.h — kv_cache's real-model part.
 *
 * SmolLM2-135M-Instruct decodes a sample of the lab's prompt set (chat template, drawn by the
 * seed) greedily under one deployment whose only changing field is the KV cache's storage:
 * REAL_PRESET with kv=F for every F of --real-kv, against the preset's own kv=bf16. That
 * baseline is the unrounded cache here: the preset rounds K and V to bf16 as they leave their
 * GEMM and RoPE (act=bf16), so a bf16 cache stores exactly what attention would read from an
 * fp32 one (a wider format, fp32 or fp64, gives the same bits and costs a decode; the test
 * holds fp32 against it). Per format: the prompts whose greedy text parts from the baseline's
 * within --real-tokens tokens, the parting step, and the top-1/top-2 gap of the baseline's own
 * logits there (the deployment's gap, not the exact model's: the exact fp64 pass costs about
 * three decodes per token, more than the experiment's time budget). */
#ifndef DRIFT_KV_CACHE_REAL_H
#define DRIFT_KV_CACHE_REAL_H

#include "chat_prompts.h"
#include "checkpoint.h"
#include "cli.h"
#include "deploy_runs.h"
#include "kv_run.h"
#include "output.h"
#include "parting.h"

/* the A100 alone: hf-eager is bf16 weights, compute (Ampere tensor-core model, fp32
 * accumulation) and activations, vendor-like GEMMs, standard attention, batch alone */
#define REAL_PRESET "hf-eager,card=a100"

typedef struct {
    int on; /* 0: no model file, or --real-prompts 0 */
    int N, T, nrun, nkv;
    char kvn[DRIFT_KV_MAX][32];                 /* the formats compared, canonical */
    char spec[DRIFT_KV_MAX][64], base_spec[64]; /* REAL_PRESET,kv=F; REAL_PRESET,kv=bf16 */
    int run_of[DRIFT_KV_MAX], base;             /* each format's run; the baseline's */
    drift_deploy_run_t runs[DRIFT_KV_MAX + 1];
    drift_checkpoint_t ck;
    drift_chat_prompt_t *pr;
    drift_parting_t *pt; /* nkv x N */
    const char *ckpt;
} kv_real_t;

/* Everything that can refuse input, before any measurement: the deployments, the model, the
 * prompts (none when N is 0; without a model file, one line on stderr and the part is off). */
void kv_real_prepare(
    kv_real_t *R, const drift_cli_t *cli, const char *list, long N, long T, const char *ckpt, const char *set);
/* Every run decodes every prompt, then each format's text is held against the baseline's. */
void kv_real_run(kv_real_t *R, drift_cli_t *cli);
/* The per-prompt and per-format CSVs (tables t_rows and t_sum) and the Markdown table t_md
 * (before the takeaway); a line saying why when the part did not run. */
void kv_real_write(kv_real_t *R, drift_out_t *out, int t_rows, int t_sum, int t_md);
/* The takeaway's line: which formats part texts from the baseline's, which never did, with bounds. */
void kv_real_takeaway(const kv_real_t *R, drift_out_t *out);
void kv_real_free(kv_real_t *R);

#endif
