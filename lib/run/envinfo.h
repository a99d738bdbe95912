/* envinfo.h — a snapshot of the environment, for every data file's metadata. */
#ifndef DRIFT_ENVINFO_H
#define DRIFT_ENVINFO_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char compiler[128]; /* e.g. "GCC 12.2.0" */
    char cflags[256];   /* the flags libdrift was built with */
    char mpfr[32], gmp[32];
    char cpu[160];     /* /proc/cpuinfo model name */
    char os[400];      /* uname -srm */
    char git[64];      /* the build's short commit, "+dirty" when its sources had changes; "unknown" */
    char checkout[64]; /* the checkout's commit at run time when it differs from the build's, else "" */
    char cuda[160];    /* "runtime X, driver Y, GPU Z" or "no device" or "not built" */
} drift_envinfo_t;

#include <stddef.h>

void drift_envinfo_collect(drift_envinfo_t *e);

/* Writes "runtime X, driver Y, GPU Z" (or why there is none) into buf. */
typedef void (*drift_env_gpu_hook_t)(char *buf, size_t size);
/* Registered by programs built with the CUDA backend (tools/gpu_hook.c); lib/ never calls cuda/. */
void drift_env_set_gpu_hook(drift_env_gpu_hook_t fn);

#ifdef __cplusplus
}
#endif

#endif
