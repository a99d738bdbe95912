/* test_reproducible.c — law 4 for every registered experiment: the same command and seed
 * give byte-identical data files whatever the thread count.
 *
 * Each experiment of experiments/registry.tsv runs in the quick profile with --threads 1
 * and with --threads 2 into two fresh directories; every CSV must match byte for byte
 * except the `# date:`, `# argv:` and `# git-checkout:` metadata lines (the only lines
 * allowed to differ: the time of the run, the --threads/--out arguments themselves, and the
 * checkout's commit at run time, which moves when someone commits while the test runs; the
 * build's own `# git:` line must match). Files named
 * *_timing.csv hold wall-clock measurements and are exempt by name. The expected value is
 * the other run, so the test cannot pass by agreeing with the code: any dependence on
 * scheduling shows up as a difference. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define MAX_LINE 65536

static int run(const char *exp, const char *dir, int threads)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/%s' --profile quick --seed 7 --quiet --threads %d --out '%s' >/dev/null",
        DRIFT_BIN_DIR, exp, threads, dir);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int ignored_line(const char *line)
{
    return !strncmp(line, "# date:", 7) || !strncmp(line, "# argv:", 7) || !strncmp(line, "# git-checkout:", 15);
}

/* 0 when equal apart from ignored lines; else the 1-based line number of the first
 * difference (or -1 when a file is missing). */
static long compare(const char *a, const char *b)
{
    FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
    if (!fa || !fb) {
        if (fa) fclose(fa);
        if (fb) fclose(fb);
        return -1;
    }
    static char la[MAX_LINE], lb[MAX_LINE];
    long lineno = 0, diff = 0;
    for (;;) {
        char *ra = fgets(la, sizeof la, fa), *rb = fgets(lb, sizeof lb, fb);
        lineno++;
        if (!ra || !rb) {
            if (ra || rb) diff = lineno;
            break;
        }
        if (ignored_line(la) && ignored_line(lb) && !strncmp(la, lb, 7)) continue;
        if (strcmp(la, lb)) {
            diff = lineno;
            break;
        }
    }
    fclose(fa);
    fclose(fb);
    return diff;
}

static int is_data_csv(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".csv") && !(n > 11 && !strcmp(name + n - 11, "_timing.csv"));
}

Test(reproducible, every_experiment_any_thread_count, .timeout = 600)
{
    char reg[512];
    snprintf(reg, sizeof reg, "%s/experiments/registry.tsv", DRIFT_SOURCE_DIR);
    FILE *fp = fopen(reg, "r");
    cr_assert(fp, "cannot read %s", reg);
    char line[512];
    int experiments = 0;
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\t\n")] = 0;
        char d1[] = "/tmp/drift_repro1_XXXXXX", d2[] = "/tmp/drift_repro2_XXXXXX";
        cr_assert(mkdtemp(d1) && mkdtemp(d2));
        int rc1 = run(line, d1, 1);
        if (rc1 == 77) { /* a GPU experiment on a machine without one: skipped, nothing written */
            char cmd[256];
            snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", d1, d2);
            (void)!system(cmd);
            continue;
        }
        cr_assert_eq(rc1, 0, "%s --threads 1 failed", line);
        cr_assert_eq(run(line, d2, 2), 0, "%s --threads 2 failed", line);
        DIR *dir = opendir(d1);
        cr_assert(dir);
        int files = 0;
        struct dirent *e;
        while ((e = readdir(dir))) {
            if (!is_data_csv(e->d_name)) continue;
            char a[1024], b[1024];
            snprintf(a, sizeof a, "%s/%s", d1, e->d_name);
            snprintf(b, sizeof b, "%s/%s", d2, e->d_name);
            long diff = compare(a, b);
            cr_expect_eq(diff, 0, "%s: %s differs between --threads 1 and 2 (line %ld)", line, e->d_name, diff);
            files++;
        }
        closedir(dir);
        cr_expect_gt(files, 0, "%s wrote no CSV file", line);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", d1, d2);
        (void)!system(cmd);
        experiments++;
    }
    fclose(fp);
    cr_assert_gt(experiments, 0, "no experiment in %s", reg);
}
