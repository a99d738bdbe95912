/* progress.c — a run's progress on stderr: a bar on a terminal, timestamped lines with an
 * estimate otherwise, per named phase (drift_progress_phase), never going back. */
#include "cli.h"
#include "drift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The progress of the current phase: its name (empty: the run's one phase), when it started,
 * when a line was printed last, the most work reported done (progress never goes back). */
static struct {
    char name[64];
    double start, last;
    int printed, started;
    int fresh; /* named by drift_progress_phase, no progress reported yet */
    int count; /* phases begun so far, named or not */
    size_t max_done, total;
} phase;

void drift_progress_phase(const drift_cli_t *cli, const char *name)
{
    if (cli->quiet) return;
    snprintf(phase.name, sizeof phase.name, "%s", name ? name : "");
    phase.count++;
    phase.start = phase.last = now_s();
    phase.printed = 0, phase.max_done = 0, phase.started = 1, phase.fresh = 1, phase.total = 0;
}

/* Not a terminal (a log, ./lab report): a timestamped line at most every 10 s, with the
 * elapsed time and a linear estimate of what is left, so a long run is never silent. */
static void progress_line(const drift_cli_t *cli, size_t done, size_t total)
{
    static double every = -1; /* seconds between lines: 10, or DRIFT_PROGRESS_EVERY (tests set 0) */
    if (every < 0) {
        const char *e = getenv("DRIFT_PROGRESS_EVERY");
        char *end;
        double v = e ? strtod(e, &end) : 10;
        every = e && *end == 0 && v >= 0 && v <= 3600 ? v : 10;
    }
    double t = now_s();
    if (!phase.started) phase.start = phase.last = t, phase.started = 1;
    if (done < total && t - phase.last < every) return;
    if (done == total && !phase.printed && every > 0) return; /* a phase under 10 s needs no progress report */
    phase.last = t;
    phase.printed = 1;
    double el = t - phase.start, left = done ? el * (double)(total - done) / (double)done : 0;
    time_t wall = time(NULL);
    struct tm tm;
    gmtime_r(&wall, &tm);
    fprintf(stderr, "%02d:%02d:%02d %s%s%s: %3d%% (%zu/%zu) elapsed %.0f s%s", tm.tm_hour, tm.tm_min, tm.tm_sec,
        cli->spec->name, phase.name[0] ? ", " : "", phase.name, (int)(100 * done / total), done, total, el,
        done == total ? ", done\n" : "");
    if (done < total) {
        if (done)
            fprintf(stderr, ", about %.0f s left\n", left);
        else
            fputc('\n', stderr);
    }
    fflush(stderr);
}

void drift_progress(const drift_cli_t *cli, size_t done, size_t total)
{
    if (cli->quiet || total == 0) return;
    if (done > total) done = total;
    if (total != phase.total) { /* another count: a new stage of the run */
        if (!phase.fresh) {
            /* not named by the program: numbered after the first, so that a count starting
             * again from 0 reads as the next stage, never as the run going back */
            if (++phase.count > 1)
                snprintf(phase.name, sizeof phase.name, "stage %d", phase.count);
            else
                phase.name[0] = 0;
            phase.start = phase.last = now_s(), phase.started = 1, phase.printed = 0;
        }
        phase.total = total, phase.max_done = 0;
    }
    phase.fresh = 0;
    if (done < phase.max_done) done = phase.max_done; /* threads report out of order: never back */
    phase.max_done = done;
    if (!isatty(STDERR_FILENO)) {
        progress_line(cli, done, total);
        return;
    }
    int width = 40, fill = (int)(width * done / total);
    fprintf(stderr, "\r%s%s%s [%.*s%*s] %3d%%", cli->spec->name, phase.name[0] ? ", " : "", phase.name, fill,
        "########################################", width - fill, "", (int)(100 * done / total));
    if (done == total) fputc('\n', stderr);
    fflush(stderr);
}
