/* test_outlock.c — one writer per experiment and output directory (lib/run/outlock.h), and a
 * recovery that touches only what the manifests name (lib/run/manifest.h).
 *   - while another process holds formats' lock on D, a run of formats into D refuses: exit 2,
 *     one line naming D and the holder's pid, D exactly as it was; drift-manifest recover
 *     refuses too; another experiment into D is not held up;
 *   - the kill test: a holder killed with SIGKILL (a bare holder, and a real run killed inside
 *     its commit with DRIFT_FAULT_AT) leaves D usable: the next run gets through and D passes
 *     its check; no lock file is left after a run;
 *   - recovery with an empty or malformed experiment name is refused and removes nothing; it
 *     removes a dead run's temporaries only of the files its manifest names, never a user's
 *     "*.tmp.<pid>" file, and never a file a journal's .obsolete list names outside the set;
 *   - a FIFO where a listed file belongs is refused by drift-manifest check, not opened;
 *   - a fresh --out is locked from the option check too: a run parsed into a missing D/new (its
 *     lock then held while it would compute) refuses a second run into D/new, and what the
 *     parse created is gone at exit when nothing was written in it. */
#include "support.h"

#include <signal.h>

#include "cli.h"
#include "outlock.h"

#define BIN DRIFT_BIN_DIR

static char dir[64];
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_lock"); }
static void remove_dir(void) { tmpdir_remove(dir); }

/* A child that takes formats' lock on dir, says so through a pipe, then waits to be killed. */
static pid_t holder(void)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        char why[2048];
        char ok = drift_out_lock(why, sizeof why, dir, "formats") == 0 ? 'y' : 'n';
        (void)!write(fds[1], &ok, 1);
        for (;;) pause();
    }
    close(fds[1]);
    char ok = 0;
    cr_assert_eq(read(fds[0], &ok, 1), 1);
    close(fds[0]);
    cr_assert_eq(ok, 'y', "the holder could not take the lock");
    return pid;
}

static void kill_and_reap(pid_t pid)
{
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

static void listing(char *buf, size_t size)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cd '%s' && ls -lA --time-style=+%%s.%%N . && cat formats* 2>/dev/null | cksum", dir);
    run_stdout(cmd, buf, size);
}

static int run_formats(int seed)
{
    return sh("cd '%s' && '%s/formats' --profile quick --quiet --seed %d --out . 2>/dev/null", dir, BIN, seed);
}

Test(outlock, second_run_refuses_while_the_lock_is_held, .init = make_dir, .fini = remove_dir, .timeout = 120)
{
    cr_assert_eq(run_formats(1), 0);
    pid_t pid = holder();
    static char before[8192], after[8192], err[4096];
    listing(before, sizeof before);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/formats' --profile quick --quiet --seed 2 --out '%s'", dir, BIN, dir);
    int st = run_capture(cmd, NULL, 0, err, sizeof err);
    listing(after, sizeof after);
    char want_pid[32];
    snprintf(want_pid, sizeof want_pid, "pid %ld", (long)pid);
    cr_expect_eq(st, 2, "exit %d: %s", st, err);
    cr_expect(strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
    cr_expect(strstr(err, dir) && strstr(err, want_pid), "does not name the directory and %s: %s", want_pid, err);
    cr_expect_str_eq(after, before, "the refused run changed the directory");
    /* recovery waits its turn too */
    snprintf(cmd, sizeof cmd, "'%s/drift-manifest' recover '%s' formats", BIN, dir);
    cr_expect_eq(run_capture(cmd, NULL, 0, err, sizeof err), 1, "recover while locked: %s", err);
    cr_expect(strstr(err, want_pid), "%s", err);
    /* the lock is formats', not the directory's */
    cr_expect_eq(sh("cd '%s' && '%s/sum_order' --profile quick --quiet --out . 2>/dev/null", dir, BIN), 0);
    kill_and_reap(pid);
    cr_expect_eq(run_formats(2), 0, "after the holder died the run gets through");
    cr_expect_eq(sh("cd '%s' && test ! -e .formats.lock && test ! -e .sum_order.lock", dir), 0, "a lock file was left");
}

Test(outlock, killed_holders_leave_the_directory_usable, .init = make_dir, .fini = remove_dir, .timeout = 300)
{
    cr_assert_eq(run_formats(1), 0);
    kill_and_reap(holder()); /* leaves an unlocked .formats.lock */
    cr_expect_eq(sh("test -e '%s/.formats.lock'", dir), 0, "the killed holder's lock file stays (its lock does not)");
    cr_assert_eq(run_formats(2), 0, "a run after a killed holder");
    cr_assert_eq(sh("'%s/drift-manifest' check '%s' formats", BIN, dir), 0);
    /* a real run killed at each step of its commit, lock held; the next run always gets through */
    for (int step = 1; step <= 12; step++) {
        int st = sh("cd '%s' && DRIFT_FAULT_AT=%d '%s/formats' --profile quick --quiet --seed 3 --out . 2>/dev/null",
            dir, step, BIN);
        cr_assert(st == 137 || st == 0, "step %d: exit %d", step, st);
        cr_assert_eq(run_formats(4), 0, "step %d: the run after the kill was refused", step);
        cr_assert_eq(sh("'%s/drift-manifest' check '%s' formats", BIN, dir), 0, "step %d", step);
        cr_assert_eq(sh("test ! -e '%s/.formats.lock'", dir), 0, "step %d: lock file left", step);
    }
}

Test(outlock, recover_touches_only_what_the_manifests_name, .init = make_dir, .fini = remove_dir, .timeout = 120)
{
    cr_assert_eq(run_formats(1), 0);
    cr_assert_eq(sh("cd '%s' && echo mine > thesis.tmp.999999 && echo mine > formats_notes.txt.tmp.999999 && "
                    "echo dead > formats.csv.tmp.999999",
                     dir),
        0);
    char err[1024], cmd[512];
    snprintf(cmd, sizeof cmd, "'%s/drift-manifest' recover '%s' ''", BIN, dir);
    cr_expect_eq(run_capture(cmd, NULL, 0, err, sizeof err), 2, "empty name: %s", err);
    cr_expect(strstr(err, "EXPERIMENT") && strchr(err, '\n') == err + strlen(err) - 1, "%s", err);
    snprintf(cmd, sizeof cmd, "'%s/drift-manifest' recover '%s' '../x'", BIN, dir);
    cr_expect_eq(run_capture(cmd, NULL, 0, err, sizeof err), 2, "'../x': %s", err);
    cr_expect_eq(sh("cd '%s' && test -e thesis.tmp.999999 && test -e formats.csv.tmp.999999", dir), 0,
        "a refused recover removed files");
    cr_expect_eq(sh("'%s/drift-manifest' recover '%s' formats", BIN, dir), 0);
    cr_expect_eq(sh("cd '%s' && test -e thesis.tmp.999999 && test -e formats_notes.txt.tmp.999999", dir), 0,
        "recover removed a file no manifest names");
    cr_expect_eq(
        sh("cd '%s' && test ! -e formats.csv.tmp.999999", dir), 0, "a dead run's temporary of a listed file stays");
    /* a journal whose .obsolete names files outside the set: they stay */
    cr_assert_eq(
        sh("cd '%s' && mkdir .formats.commit && cp formats.manifest .formats.commit/ && echo x > keep.txt && "
           "printf 'keep.txt\\n../x\\nformats_old.csv\\n' > .formats.commit/.obsolete && echo old > formats_old.csv",
            dir),
        0);
    cr_expect_eq(sh("'%s/drift-manifest' recover '%s' formats", BIN, dir), 0);
    cr_expect_eq(sh("cd '%s' && test -e keep.txt && test ! -e formats_old.csv && test ! -e .formats.commit", dir), 0,
        "the obsolete list removed a file outside the set, or the set's obsolete file stayed");
    cr_expect_eq(sh("'%s/drift-manifest' check '%s' formats", BIN, dir), 0);
}

Test(outlock, fifo_in_place_of_a_listed_file_is_refused, .init = make_dir, .fini = remove_dir, .timeout = 60)
{
    cr_assert_eq(run_formats(1), 0);
    cr_assert_eq(sh("cd '%s' && rm formats.md && mkfifo formats.md", dir), 0);
    char err[1024], cmd[512];
    /* timeout: the check used to open the FIFO and wait for a writer forever (124 then) */
    snprintf(cmd, sizeof cmd, "timeout 10 '%s/drift-manifest' check '%s' formats", BIN, dir);
    int st = run_capture(cmd, NULL, 0, err, sizeof err);
    cr_expect_eq(st, 1, "exit %d: %s", st, err);
    cr_expect(strstr(err, "not a regular file") && strchr(err, '\n') == err + strlen(err) - 1, "%s", err);
    cr_assert_eq(sh("cd '%s' && rm formats.manifest && mkfifo formats.manifest", dir), 0);
    st = run_capture(cmd, NULL, 0, err, sizeof err);
    cr_expect_eq(st, 1, "a FIFO manifest: exit %d: %s", st, err);
}

/* A child that parses formats' options with --out OUT (the lock taken at the option check, as
 * in every experiment), says so through a pipe, then waits to be killed, or exits at once
 * (code 2, as a refusal after the option check would) when linger is 0. */
static pid_t parsed_holder(const char *out, int linger)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        static const drift_cli_spec_t spec = {
            .name = "formats", .question = "?", .default_formats = "fp32", .default_orders = "seq"};
        char *argv[] = {"formats", "--quiet", "--out", (char *)out, NULL};
        drift_cli_t cli;
        drift_cli_parse(&cli, &spec, 4, argv);
        char ok = drift_out_locked(out, "formats") ? 'y' : 'n';
        (void)!write(fds[1], &ok, 1);
        if (!linger || ok != 'y') exit(2); /* a failed case leaves no child holding the test's pipes */
        for (;;) pause();
    }
    close(fds[1]);
    char ok = 0;
    cr_assert_eq(read(fds[0], &ok, 1), 1);
    close(fds[0]);
    cr_assert_eq(ok, 'y', "the parse did not take the lock of a fresh --out");
    return pid;
}

Test(outlock, a_fresh_out_is_locked_from_the_option_check, .init = make_dir, .fini = remove_dir, .timeout = 120)
{
    char out[128], cmd[512], want_pid[32];
    static char err[4096];
    snprintf(out, sizeof out, "%s/new/sub", dir);
    pid_t pid = parsed_holder(out, 1);
    snprintf(want_pid, sizeof want_pid, "pid %ld", (long)pid);
    snprintf(cmd, sizeof cmd, "'%s/formats' --profile quick --quiet --seed 2 --out '%s' </dev/null", BIN, out);
    int st = run_capture(cmd, NULL, 0, err, sizeof err);
    cr_expect_eq(st, 2, "a second run into the fresh directory: exit %d: %s", st, err);
    cr_expect(strstr(err, out) && strstr(err, want_pid), "does not name %s and %s: %s", out, want_pid, err);
    cr_expect_eq(
        sh("cd '%s' && test \"$(ls -A)\" = .formats.lock", out), 0, "the refused run wrote into the fresh directory");
    kill_and_reap(pid);
    cr_expect_eq(sh("cd '%s' && '%s/formats' --profile quick --quiet --out new/sub 2>/dev/null", dir, BIN), 0,
        "after the holder died the run gets through");
    cr_expect_eq(sh("'%s/drift-manifest' check '%s' formats", BIN, out), 0);
    /* a run that ends after the option check without writing leaves no directory; a parent
     * that existed before stays */
    snprintf(out, sizeof out, "%s/new/gone/deeper/", dir);
    pid = parsed_holder(out, 0);
    int wst;
    waitpid(pid, &wst, 0);
    cr_assert(WIFEXITED(wst) && WEXITSTATUS(wst) == 2);
    cr_expect_eq(
        sh("cd '%s' && test -d new/sub && test ! -e new/gone", dir), 0, "the directories the run made are left");
}
