/* llm_run.h — what every experiment on a llama2.c checkpoint shares: the --checkpoint option
 * and opening the checkpoint under the model experiments' thread policy.
 *
 *     const char *ckpt = NULL;
 *     const drift_cli_opt_t opts[] = {..., DRIFT_CHECKPOINT_OPT(&ckpt)};
 *     const drift_cli_spec_t spec = DRIFT_LLM_SPEC("name", QUESTION, opts, "takes no orders (...)", SUMMARY);
 *     drift_cli_parse(&cli, &spec, argc, argv);
 *     drift_checkpoint_t ck;
 *     drift_llm_run_open(&ck, &ckpt); */
#ifndef DRIFT_LLM_RUN_H
#define DRIFT_LLM_RUN_H

#include "checkpoint.h"
#include "cli.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The --checkpoint option (a drift_cli_opt_t initialiser); dest is a const char ** holding NULL. */
#define DRIFT_CHECKPOINT_OPT(dest)                                                                                    \
    {                                                                                                                 \
        "checkpoint", DRIFT_OPT_STRING, (dest), "FILE", "llama2.c checkpoint (default models/stories260K.bin)", 0, 0, \
        {                                                                                                             \
            0                                                                                                         \
        }                                                                                                             \
    }

/* The spec of an experiment on a checkpoint (a drift_cli_spec_t initialiser): it takes no
 * formats (NULL: --formats is refused) and no orders (no_orders says why; its configurations
 * are its sweep), computing through the backend
 * (cpu_only NULL: --backend cuda sends the decoder's GEMMs and attention to the GPU, checked
 * against the CPU twins). opts_ is the experiment's array of options (the parameters end in _
 * so that they do not replace the designators). */
#define DRIFT_LLM_SPEC(name_, question_, opts_, no_orders_, summary_)                                        \
    {                                                                                                        \
        .name = (name_), .question = (question_), .default_orders = "seq", .opts = (opts_),                  \
        .nopts = (int)(sizeof(opts_) / sizeof((opts_)[0])), .no_orders = (no_orders_), .summary = (summary_) \
    }

/* The checkpoint a real-model experiment decodes, into *path: the --checkpoint given (*path
 * not NULL), else stories260K under --profile quick, else the fetched SmolLM2-135M-Instruct.
 * 0, or, when no real model was fetched, DRIFT_EXIT_SKIPPED after one line on stderr, "<name>:
 * skipped: no models/SmolLM2-135M-Instruct.Q4_1.gguf (./lab models get smollm2-135m), or give
 * --checkpoint FILE<more>" (more: NULL, or what to add), which the caller returns. */
DRIFT_MUST_CHECK int drift_llm_run_choose(const char **path, const drift_cli_t *cli, const char *more);

/* Sets one OpenMP thread for the model (its GEMMs are a few dozen wide: an OpenMP region per
 * GEMM costs more than the GEMM; the data do not depend on it), then reads the checkpoint at
 * *path, or at drift_default_checkpoint() when *path is NULL (stored back into *path for the
 * metadata). Dies with "--checkpoint: <reason>" (exit 2) when it cannot be read. */
void drift_llm_run_open(drift_checkpoint_t *ck, const char **path);

#ifdef __cplusplus
}
#endif

#endif
