/* llm_run.c — the checkpoint experiments' shared opening (llm_run.h). */
#include "llm_run.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void drift_llm_run_open(drift_checkpoint_t *ck, const char **path)
{
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    if (!*path) *path = drift_default_checkpoint();
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_checkpoint_read(ck, *path, err, sizeof err)) drift_die("--checkpoint: %s", err);
}
