/* envinfo.c — what produced a data file: compiler, libraries, CPU, commit. */
#include "envinfo.h"
#include "drift_gitinfo.h"

#include <gmp.h>
#include <mpfr.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#ifndef DRIFT_COMPILER
#define DRIFT_COMPILER "unknown"
#endif
#ifndef DRIFT_CFLAGS
#define DRIFT_CFLAGS "unknown"
#endif
#ifndef DRIFT_SOURCE_DIR
#define DRIFT_SOURCE_DIR "."
#endif

/* The GPU description is a hook: lib/ never links to cuda/. A program built with the CUDA backend
 * registers cuda/describe.cu's function (tools/gpu_hook.c does it before main). */
static drift_env_gpu_hook_t gpu_hook;

void drift_env_set_gpu_hook(drift_env_gpu_hook_t fn) { gpu_hook = fn; }

static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = 0;
}

static void read_cpu(char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (!fp) return;
    char line[512];
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, "model name", 10)) {
            char *colon = strchr(line, ':');
            if (colon) {
                snprintf(out, size, "%s", colon + 2);
                chomp(out);
            }
            break;
        }
    fclose(fp);
}

/* The checkout's commit now (it may have moved on since the build). */
static void read_git(char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *p = popen("git -C '" DRIFT_SOURCE_DIR "' rev-parse --short=12 HEAD 2>/dev/null", "r");
    if (!p) return;
    char line[128];
    if (fgets(line, sizeof line, p)) {
        chomp(line);
        if (*line) snprintf(out, size, "%s", line);
    }
    pclose(p);
}

void drift_envinfo_collect(drift_envinfo_t *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->compiler, sizeof e->compiler, "%s", DRIFT_COMPILER);
    /* CMake joins "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_RELEASE} ..." and the first is often
     * empty: drop the leading blanks so the metadata line reads "# cflags: -O3 ...". */
    const char *cflags = DRIFT_CFLAGS;
    while (*cflags == ' ') cflags++;
    snprintf(e->cflags, sizeof e->cflags, "%s", cflags);
    snprintf(e->mpfr, sizeof e->mpfr, "%s", mpfr_get_version());
    snprintf(e->gmp, sizeof e->gmp, "%s", gmp_version);
    read_cpu(e->cpu, sizeof e->cpu);
    struct utsname u;
    if (uname(&u) == 0) snprintf(e->os, sizeof e->os, "%s %s %s", u.sysname, u.release, u.machine);
    /* The build's commit is compiled in (cmake/gitinfo.cmake, refreshed at every build): an
     * unchanged binary keeps reporting the commit it was built from after a `git commit`. */
    snprintf(e->git, sizeof e->git, "%s", DRIFT_BUILD_GIT);
    read_git(e->checkout, sizeof e->checkout);
    char base[64];
    snprintf(base, sizeof base, "%s", e->git);
    char *plus = strchr(base, '+');
    if (plus) *plus = 0;
    if (!strcmp(e->checkout, base) || !strcmp(e->checkout, "unknown")) e->checkout[0] = 0; /* the same: said once */
    if (gpu_hook)
        gpu_hook(e->cuda, sizeof e->cuda);
    else
        snprintf(e->cuda, sizeof e->cuda, "CUDA backend not built");
}
