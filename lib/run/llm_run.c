/* llm_run.c — what the language-model programs share: the checkpoint's opening (llm_run.h),
 * where the shipped and fetched checkpoints are, and the LM head's accepted input formats. */
#include "llm_run.h"
#include "cli.h"
#include "lmhead.h"

#include <stdio.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

int drift_llm_run_choose(const char **path, const drift_cli_t *cli, const char *more)
{
    if (!*path && cli->profile == DRIFT_PROFILE_QUICK) *path = drift_default_checkpoint();
    if (*path || (*path = drift_real_checkpoint())) return 0;
    fprintf(stderr,
        "%s: skipped: no models/SmolLM2-135M-Instruct.Q4_1.gguf (./lab models get smollm2-135m), or give "
        "--checkpoint FILE%s\n",
        cli->spec->name, more ? more : "");
    return DRIFT_EXIT_SKIPPED;
}

void drift_llm_run_open(drift_checkpoint_t *ck, const char **path)
{
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    if (!*path) *path = drift_default_checkpoint();
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_checkpoint_read(ck, *path, err, sizeof err)) drift_die("--checkpoint: %s", err);
}

/* The LM head experiments accept only these input formats: a program-level refusal, so it lives
 * here and not in lib/llm (library code never exits). */
void drift_lmhead_require_inputs(const drift_format_t *formats, int n)
{
    for (int i = 0; i < n; i++)
        if (!drift_lmhead_input_ok(formats[i]))
            drift_die("--formats: '%s' is not an LM head input format here (accepted: bf16, fp16, tf32, fp32)",
                drift_format_name(formats[i]));
}

#ifndef DRIFT_SOURCE_DIR
#define DRIFT_SOURCE_DIR "."
#endif

const char *drift_real_checkpoint(void)
{
    static const char *const here = "models/SmolLM2-135M-Instruct.Q4_1.gguf";
    static const char *const there = DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
    return access(here, R_OK) == 0 ? here : access(there, R_OK) == 0 ? there : NULL;
}

const char *drift_default_checkpoint(void)
{
    static const char *const here = "models/stories260K.bin";
    return access(here, R_OK) == 0 ? here : DRIFT_SOURCE_DIR "/models/stories260K.bin";
}
