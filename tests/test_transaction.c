/* test_transaction.c — a run's files are one transaction (lib/run/manifest.h).
 *
 * The kill test: D holds a complete run of formats at seed 1; a run at seed 2 is killed with
 * SIGKILL at every step of its commit path in turn (DRIFT_FAULT_AT=N, the hook of
 * drift_fault_point: after the manifest, after the commit-point rename, after removing the old
 * manifest, between every two file renames, after the manifest's rename, after the journal's
 * removal), until a run gets through. After each kill:
 *   - a reader either refuses D (drift-manifest check fails) or D is one whole set;
 *   - after recovery (drift-manifest recover, what the next run and ./lab plot do) D passes
 *     the check and is one whole set: every file of seed 1 (killed before the commit point) or
 *     every file of seed 2 (after it), never a mix, and nothing else of formats' is left. */
#include "support.h"

#include <sys/stat.h>

#define BIN DRIFT_BIN_DIR

static char dir[64];
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_tx"); }
static void remove_dir(void) { tmpdir_remove(dir); }

/* The seed every file of formats' set in D says it was run with: 1 or 2, 0 when the files
 * disagree (a mix) or a manifest-listed file is missing. Reads "# seed: N" in the CSVs and
 * "--seed N" in the .md's Reproduce line. */
static int set_seed(void)
{
    char cmd[512], out[256];
    snprintf(cmd, sizeof cmd,
        "cd '%s' && { grep -h '^# seed: ' formats*.csv | sed 's/^# seed: //'; grep -o -- '--seed [0-9]*' formats.md | "
        "sed 's/--seed //'; } 2>/dev/null | sort -u | tr '\\n' ' '",
        dir);
    run_stdout(cmd, out, sizeof out);
    if (!strcmp(out, "1 ")) return 1;
    if (!strcmp(out, "2 ")) return 2;
    return 0;
}

static int check(void) { return sh("'%s/drift-manifest' check '%s' formats 2>/dev/null", BIN, dir); }

/* Nothing but the set, its manifest and keep.txt: no staging, journal or temporary left. */
static int leftovers(void)
{
    char cmd[256], out[1024];
    snprintf(cmd, sizeof cmd,
        "cd '%s' && ls -A | grep -v '^formats.*\\.csv$\\|^formats\\.md$\\|^formats\\.manifest$\\|^keep\\.txt$'", dir);
    run_stdout(cmd, out, sizeof out);
    return out[0] != 0;
}

Test(transaction, kill_at_every_step_leaves_one_whole_set, .init = make_dir, .fini = remove_dir, .timeout = 300)
{
    cr_assert_eq(
        sh("cd '%s' && echo keep > keep.txt && '%s/formats' --profile quick --quiet --seed 1 --out .", dir, BIN), 0);
    cr_assert_eq(check(), 0, "a complete run passes its manifest check");
    cr_assert_eq(set_seed(), 1);
    int step, finished = 0, before = 0, after = 0;
    for (step = 1; step < 64 && !finished; step++) {
        /* 137: killed at step N (128 + SIGKILL, as the shell reports it); 0: fewer steps than N */
        int st = sh("cd '%s' && DRIFT_FAULT_AT=%d '%s/formats' --profile quick --quiet --seed 2 --out . 2>/dev/null",
            dir, step, BIN);
        cr_assert(st == 137 || st == 0, "step %d: exit %d", step, st);
        finished = st == 0;
        if (check() == 0) {
            int seen = set_seed();
            cr_assert(seen == 1 || seen == 2, "step %d: the check passed a mixed set", step);
        }
        cr_assert_eq(sh("'%s/drift-manifest' recover '%s' formats", BIN, dir), 0, "step %d: recovery failed", step);
        cr_assert_eq(check(), 0, "step %d: after recovery the set fails its manifest check", step);
        int s = set_seed();
        cr_assert(s == 1 || s == 2, "step %d: after recovery the set is a mix of two runs", step);
        cr_assert(!leftovers(), "step %d: staging, journal or temporary files left after recovery", step);
        if (finished)
            cr_assert_eq(s, 2, "the run that was not killed left its own set");
        else if (s == 1)
            before++;
        else
            after++;
        /* back to a complete seed-1 set for the next kill */
        cr_assert_eq(sh("cd '%s' && '%s/formats' --profile quick --quiet --seed 1 --out .", dir, BIN), 0);
        cr_assert_eq(set_seed(), 1);
    }
    cr_assert(finished, "a run with more steps than the commit path has got through");
    /* formats writes 4 files (formats.csv, _constants.csv, _spacing.csv, formats.md): 1 step before
     * the commit point, then 1 (the commit) + 2 (the old manifest, the obsolete files) + 4 (one
     * rename per file) + 1 (the manifest) + 1 (the journal) after it: lib/run/table.c, manifest.c */
    cr_assert_eq(before, 1, "kills before the commit point: %d", before);
    cr_assert_eq(after, 9, "kills after the commit point: %d", after);
}

/* A directory in the way of one result file: refused before any file moves (before, 2 of 5
 * files of the new run had replaced the old ones when the third rename failed). */
Test(transaction, failed_rename_moves_nothing, .init = make_dir, .fini = remove_dir, .timeout = 120)
{
    cr_assert_eq(sh("cd '%s' && '%s/formats' --profile quick --quiet --seed 1 --out .", dir, BIN), 0);
    cr_assert_eq(sh("cd '%s' && rm formats_spacing.csv && mkdir formats_spacing.csv", dir), 0);
    char before[256], after[256], cmd[256];
    snprintf(cmd, sizeof cmd, "cd '%s' && cat formats*.csv formats.md 2>/dev/null | cksum", dir);
    run_stdout(cmd, before, sizeof before);
    cr_assert_eq(sh("cd '%s' && '%s/formats' --profile quick --quiet --seed 2 --out . 2>/dev/null", dir, BIN), 2);
    run_stdout(cmd, after, sizeof after);
    cr_assert_str_eq(after, before, "no file of the failed run replaced one of the previous run");
    cr_assert_eq(set_seed(), 1);
}

/* What SIGKILL and SIGTERM left before (files "*.tmp.<pid>", staging directories of dead
 * processes) is removed by the next run; a live process's staging directory is not. */
Test(transaction, stale_files_cleaned_at_next_run, .init = make_dir, .fini = remove_dir, .timeout = 120)
{
    cr_assert_eq(
        sh("cd '%s' && touch formats.csv.tmp.999999 formats_spacing.csv.tmp.999998 && mkdir .formats.staging.999997 "
           "&& touch .formats.staging.999997/formats.csv && mkdir .formats.staging.1 && touch other.csv.tmp.999999",
            dir),
        0);
    cr_assert_eq(sh("cd '%s' && '%s/formats' --profile quick --quiet --out .", dir, BIN), 0);
    cr_assert_neq(
        sh("cd '%s' && ls -A | grep -q 'formats.*tmp\\|staging.99999'", dir), 0, "stale files of dead runs are gone");
    cr_assert_eq(sh("cd '%s' && test -d .formats.staging.1 && test -e other.csv.tmp.999999", dir), 0,
        "pid 1 is alive: its staging stays; another program's files stay");
}

/* The manifest lists every file with its size and SHA-256 (as sha256sum computes it), and a
 * changed byte makes the check fail. */
Test(transaction, manifest_matches_sha256sum_and_catches_a_change, .init = make_dir, .fini = remove_dir, .timeout = 120)
{
    cr_assert_eq(sh("cd '%s' && '%s/formats' --profile quick --quiet --out .", dir, BIN), 0);
    cr_assert_eq(
        sh("cd '%s' && grep '^file: ' formats.manifest | awk '{print $3\"  \"$4}' | sha256sum -c --quiet -", dir), 0);
    cr_assert_eq(
        sh("cd '%s' && test $(grep -c '^file: ' formats.manifest) = $(ls formats*.csv formats.md | wc -l)", dir), 0);
    cr_assert_eq(check(), 0);
    cr_assert_eq(sh("cd '%s' && sed -i '$s/.$/x/' formats.md", dir), 0);
    cr_assert_neq(check(), 0, "a changed byte fails the check");
}

/* ./lab plot reads only a set that matches its manifest: one changed byte, one line, exit 2. */
Test(transaction, plot_refuses_a_damaged_set, .init = make_dir, .fini = remove_dir, .timeout = 120)
{
    cr_assert_eq(
        sh("cd '%s' && '%s/formats' --profile quick --quiet --out . && sed -i '$s/.$/x/' formats.md", dir, BIN), 0);
    char err[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "DRIFT_BUILD_DIR='%s/..' '%s/lab' plot formats --data '%s'", BIN, DRIFT_SOURCE_DIR, dir);
    cr_assert_eq(run_capture(cmd, NULL, 0, err, sizeof err), 2);
    cr_assert(strstr(err, "formats.md: does not match the manifest") && strchr(err, '\n') == err + strlen(err) - 1,
        "%s", err);
}
