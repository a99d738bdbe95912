/* test_progress.c — progress off a terminal (cli.h): named phases, a new count starting a new
 * phase (numbered "stage N" when the program gives it no name), and a count that never goes
 * back within one. DRIFT_PROGRESS_EVERY=0 prints a line at
 * every call (the default waits 10 s between lines), so the lines can be read back exactly,
 * less their clock and elapsed time. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* the lines drift_progress wrote to stderr (a file here), each without its "HH:MM:SS " and
 * from " elapsed" on */
static void lines(char *out, size_t size, const char *path)
{
    FILE *fp = fopen(path, "r");
    cr_assert(fp);
    char line[256];
    size_t at = 0;
    out[0] = 0;
    while (fgets(line, sizeof line, fp)) {
        char *e = strstr(line, " elapsed");
        if (e) *e = 0;
        at += (size_t)snprintf(out + at, size - at, "%s|", line + 9);
    }
    fclose(fp);
}

Test(progress, phases_are_named_and_never_go_back)
{
    char path[] = "/tmp/drift_progress_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert(freopen(path, "w", stderr));
    setenv("DRIFT_PROGRESS_EVERY", "0", 1);
    drift_cli_spec_t spec = {0};
    spec.name = "demo";
    drift_cli_t cli;
    memset(&cli, 0, sizeof cli);
    cli.spec = &spec;
    drift_progress_phase(&cli, "planted heads");
    drift_progress(&cli, 0, 4);
    drift_progress(&cli, 3, 4);
    drift_progress(&cli, 2, 4); /* a thread reporting late: stays at 3 */
    drift_progress(&cli, 4, 4);
    drift_progress(&cli, 1, 2); /* another count, not named: the run's second stage */
    drift_progress(&cli, 2, 2);
    drift_progress(&cli, 1, 3); /* and its third: numbered, so 33% after 100% is no step back */
    drift_progress_phase(&cli, "seed 2");
    drift_progress(&cli, 1, 4);
    cli.quiet = 1;
    drift_progress(&cli, 2, 4);
    fflush(stderr);
    char got[2048];
    lines(got, sizeof got, path);
    cr_expect_str_eq(got,
        "demo, planted heads:   0% (0/4)|demo, planted heads:  75% (3/4)|demo, planted heads:  75% (3/4)|"
        "demo, planted heads: 100% (4/4)|demo, stage 2:  50% (1/2)|demo, stage 2: 100% (2/2)|"
        "demo, stage 3:  33% (1/3)|demo, seed 2:  25% (1/4)|");
    remove(path);
}

/* A program that names no phase: its first count is the run's (no name), each later count a
 * numbered stage ("deployments" printed "76% (62/81)" and then "33% (3/9)": a new stage, read
 * as going back). */
Test(progress, unnamed_counts_after_the_first_are_numbered_stages)
{
    char path[] = "/tmp/drift_progress_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert(freopen(path, "w", stderr));
    setenv("DRIFT_PROGRESS_EVERY", "0", 1);
    drift_cli_spec_t spec = {0};
    spec.name = "demo";
    drift_cli_t cli;
    memset(&cli, 0, sizeof cli);
    cli.spec = &spec;
    drift_progress(&cli, 62, 81);
    drift_progress(&cli, 81, 81);
    drift_progress(&cli, 3, 9);
    fflush(stderr);
    char got[1024];
    lines(got, sizeof got, path);
    cr_expect_str_eq(got, "demo:  76% (62/81)|demo: 100% (81/81)|demo, stage 2:  33% (3/9)|");
    remove(path);
}
