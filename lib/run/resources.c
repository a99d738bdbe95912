/* resources.c — what a run may ask of the machine: thread counts (--threads and
 * OMP_NUM_THREADS) and memory (drift_require_memory), refused in one line before any work. */
#include "cli.h"
#include "drift.h"
#include "escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

/* 256: the lab's parallel loops have at most a few hundred work items, so more threads only
 * wait; each OpenMP thread reserves a stack, and 1024 of them under a 4 GiB limit made libgomp
 * itself fail with its own message and exit 1. A fixed limit, not one per machine,
 * so that a command accepted on one machine is accepted on every one. */
int drift_threads_max(void) { return 256; }

/* libgomp reads OMP_NUM_THREADS when it is loaded and starts that many threads at the first
 * parallel loop: 100000 crashed every experiment (a segfault in libgomp), so the variable is
 * held to --threads' rule: a thread count 1..drift_threads_max(), or a comma list of them
 * (OpenMP's nested levels). libgomp itself ignores a value it cannot read (0, -1, abc) with a
 * warning of its own; refused here too, so that the run is never made under another thread
 * count than the one the user believes he set. */
void drift_env_threads_check(void)
{
    const char *v = getenv("OMP_NUM_THREADS");
    if (!v) return;
    const char *p = v;
    for (;;) {
        long n = 0;
        const char *start = p;
        while (*p >= '0' && *p <= '9' && n <= drift_threads_max()) n = n * 10 + (*p++ - '0');
        if (p == start || n < 1 || n > drift_threads_max() || (*p && *p != ',')) {
            char shown[80];
            drift_escape(shown, sizeof shown, v, NULL); /* one line whatever the variable holds */
            drift_die("OMP_NUM_THREADS: '%s' is not a thread count (accepted: 1..%d, or a comma list of them; "
                      "unset, one per core)",
                shown, drift_threads_max());
        }
        if (!*p++) break;
    }
}

/* What the machine can give one process: the smallest of physical memory, the address-space
 * limit (ulimit -v) and a cgroup v2 memory.max. */
static double machine_bytes(void)
{
    double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < have)
        have = (double)rl.rlim_cur;
    FILE *fp = fopen("/sys/fs/cgroup/memory.max", "r");
    if (fp) {
        unsigned long long m;
        if (fscanf(fp, "%llu", &m) == 1 && (double)m < have) have = (double)m;
        fclose(fp);
    }
    return have;
}

void drift_require_memory(const drift_cli_t *cli, double bytes, const char *options)
{
    (void)cli;
    double have = machine_bytes();
    if (bytes > have)
        drift_die(
            "%s: this run needs about %.1f GiB of memory, this machine gives a process %.1f GiB (accepted: smaller sizes)",
            options, bytes / 1073741824.0, have / 1073741824.0);
}
