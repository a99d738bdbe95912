/* bench/threads.c — do two threads help? Runs an experiment (default matmul_drift
 * --profile quick) with --threads 1 and --threads 2, interleaved, R rounds, and prints
 * wall-clock t(2)/t(1) and the children's CPU time ratio, min and median. On a busy 2-core
 * machine the goal is t(2)/t(1) <= 1: no slower with two threads than one.
 * Wall time is the point here (a second thread can only help the wall clock); both runs
 * of a round see the same neighbours, which is what keeps the ratio meaningful.
 * OMP_WAIT_POLICY: as ./lab does, passive unless the user set it (set it to active to see
 * what spinning waiters cost: 12-15x on a loaded 2-core machine); the line printed says
 * which.
 *
 * The line printed first also says the load average and whether the kernel groups processes
 * by session (sched_autogroup): with autogroup on, the CPU is shared between sessions first,
 * so a second thread only gains the share that the other sessions leave (with G sessions busy
 * on both cores, one thread gets about 2/(G+2) of a core and two about 2/(G+1) of one: a
 * fully parallel program could reach t(2)/t(1) = (G+1)/(G+2), not 1/2). A busy loop started in
 * another session (setsid) on one core is the neighbour the goal speaks of.
 *
 * Usage: bench_threads [ROUNDS [EXPERIMENT [PROFILE]]]   (default 5 matmul_drift quick); the
 * experiment binary is looked up next to this one. Output goes to a temporary directory,
 * removed. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "cli.h"

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs exe --profile PROFILE --quiet --out dir --threads t; wall and CPU seconds. */
static int run(const char *exe, const char *profile, const char *dir, int threads, double *wall, double *cpu)
{
    char tb[16];
    snprintf(tb, sizeof tb, "%d", threads);
    double t0 = wall_now();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execl(exe, exe, "--profile", profile, "--quiet", "--out", dir, "--threads", tb, (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return -1;
    *wall = wall_now() - t0;
    *cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *pos[3];
    int np = bench_args(NULL, 0, pos, 3, argc, argv,
        "usage: bench_threads [ROUNDS [EXPERIMENT [PROFILE]]]   (ROUNDS 1..100, default 5; matmul_drift; quick)");
    int rounds = np > 0 ? (int)bench_long("ROUNDS", pos[0], 1, 100) : 5;
    const char *name = np > 1 ? pos[1] : "matmul_drift";
    const char *profile = np > 2 ? pos[2] : "quick";
    static const char *const PROFILES[] = {"quick", "default", "full"};
    drift_name_pick("PROFILE", profile, PROFILES, 3);
    char self[PATH_MAX], exe[PATH_MAX + 64];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len < 0) {
        fprintf(stderr, "bench_threads: cannot find my own directory\n");
        return 2;
    }
    self[len] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    snprintf(exe, sizeof exe, "%s/%s", self, name);
    if (access(exe, X_OK) != 0) {
        fprintf(stderr, "bench_threads: no experiment binary %s (build it first)\n", exe);
        return 2;
    }
    char dir[] = "/tmp/bench_threads.XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "bench_threads: cannot make a temporary directory\n");
        return 2;
    }
    if (!getenv("OMP_WAIT_POLICY")) setenv("OMP_WAIT_POLICY", "passive", 1); /* the children read it */
    const char *wp = getenv("OMP_WAIT_POLICY");
    printf("threads: %s --profile %s, --threads 1 vs 2 interleaved, %d rounds, OMP_WAIT_POLICY=%s\n", name, profile,
        rounds, wp ? wp : "(unset: libgomp spins a while before sleeping)");
    double load[3] = {0, 0, 0};
    int autogroup = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = load[1] = load[2] = 0;
        fclose(f);
    }
    if ((f = fopen("/proc/sys/kernel/sched_autogroup_enabled", "r"))) {
        if (fscanf(f, "%d", &autogroup) != 1) autogroup = -1;
        fclose(f);
    }
    printf("machine: load average %.2f %.2f %.2f, sched_autogroup %s\n", load[0], load[1], load[2],
        autogroup < 0 ? "unknown"
        : autogroup   ? "on (CPU shared by session first)"
                      : "off");
    double w1[100], w2[100], c1[100], c2[100], rw[100];
    int bad = 0;
    for (int r = 0; r < rounds && !bad; r++) {
        /* alternate which goes first, so that a neighbour's burst does not always hit one */
        if (r % 2 == 0)
            bad = run(exe, profile, dir, 1, &w1[r], &c1[r]) || run(exe, profile, dir, 2, &w2[r], &c2[r]);
        else
            bad = run(exe, profile, dir, 2, &w2[r], &c2[r]) || run(exe, profile, dir, 1, &w1[r], &c1[r]);
        rw[r] = w2[r] / w1[r];
        if (!bad) printf("  round %d: wall %.2f s (1 thread) %.2f s (2 threads)\n", r + 1, w1[r], w2[r]);
    }
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_threads: could not remove %s\n", dir);
    if (bad) {
        fprintf(stderr, "bench_threads: %s failed\n", name);
        return 1;
    }
    bench_stat_t s1 = bench_stat(w1, rounds), s2 = bench_stat(w2, rounds), sr = bench_stat(rw, rounds);
    bench_stat_t k1 = bench_stat(c1, rounds), k2 = bench_stat(c2, rounds);
    printf("wall t(2)/t(1): %.2f (min/min) %.2f (median/median), per-round median %.2f   (goal: <= 1)\n",
        s2.min / s1.min, s2.med / s1.med, sr.med);
    printf("cpu  c(2)/c(1): %.2f (min/min) %.2f (median/median)\n", k2.min / k1.min, k2.med / k1.med);
    return 0;
}
