/* test_sweep.c — drift-sweep end to end, on the fastest experiment (formats --profile quick,
 * about 0.1 s a run) and a grid of 6 runs (seed=1..3 x formats=fp16,bf16):
 *   - one process, 3 local shares, 3 parallel jobs, a Slurm array run by hand and mpirun -n 2
 *     merge into byte-identical files (the "# share" lines, which name hosts, times and command
 *     lines, set aside);
 *   - a share whose worker is killed leaves no final file, --merge refuses it, and the rerun
 *     runs only that share and reproduces the same merge;
 *   - a corrupted, a foreign and another commit's share are refused with exit status 2;
 *   - the manifest's checksums are SHA-256 as coreutils' sha256sum computes it (an independent
 *     implementation of FIPS 180-4);
 *   - bad input: one line, exit status 2. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#include <signal.h>

#include "outlock.h"

#define SWEEP DRIFT_BIN_DIR "/drift-sweep"
#define GRID "'seed=1..3 formats=fp16,bf16'"
#define QUICK "-- --profile quick"

static char dir[64];

static void setup(void) { tmpdir_make(dir, sizeof dir, "drift_sweep"); }
static void teardown(void) { tmpdir_remove(dir); }

TestSuite(sweep, .init = setup, .fini = teardown, .timeout = 120);

/* A file's text without the lines that name the shares. */
static char *without_shares(const char *path)
{
    char *text = slurp(path), *out = malloc(strlen(text) + 1), *o = out;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line + 1) : strlen(line);
        if (strncmp(line, "# share", 7)) {
            memcpy(o, line, n);
            o += n;
        }
        line += n;
    }
    *o = 0;
    free(text);
    return out;
}

/* Every merged file of sweep a equals sweep b's, share lines aside; returns how many.
 * merge.manifest is set aside too: it holds the checksums of files whose share lines differ. */
static int same_merge(const char *a, const char *b)
{
    char da[256], db[256];
    snprintf(da, sizeof da, "%s/%s/merged", dir, a);
    snprintf(db, sizeof db, "%s/%s/merged", dir, b);
    cr_assert_eq(count_entries(da), count_entries(db), "%s and %s hold different file counts", da, db);
    DIR *d = opendir(da);
    cr_assert(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "merge.manifest")) continue;
        char pa[512], pb[512];
        snprintf(pa, sizeof pa, "%s/%s", da, e->d_name);
        snprintf(pb, sizeof pb, "%s/%s", db, e->d_name);
        char *x = without_shares(pa), *y = without_shares(pb);
        cr_assert(!strcmp(x, y), "%s differs from %s", pb, pa);
        free(x);
        free(y);
        n++;
    }
    closedir(d);
    return n;
}

/* The reference: the whole sweep in one process, one share. */
static void one_process(const char *name)
{
    cr_assert_eq(sh("cd %s && " SWEEP " formats --grid " GRID " --out %s --shares 1 --quiet " QUICK, dir, name), 0);
}

static int exists(const char *rel)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return stat(path, &st) == 0;
}

Test(sweep, one_process_three_shares_and_jobs_merge_identically)
{
    one_process("one");
    for (int i = 0; i < 3; i++)
        cr_assert_eq(
            sh("cd %s && " SWEEP " formats --grid " GRID " --out three --shard %d/3 --quiet " QUICK, dir, i), 0);
    cr_assert(!exists("three/merged"), "--shard must not merge");
    cr_assert_eq(sh("cd %s && " SWEEP " --merge three --quiet", dir), 0);
    cr_assert_eq(sh("cd %s && " SWEEP " formats --grid " GRID " --out jobs --jobs 3 --quiet " QUICK, dir), 0);
    /* 3 merged CSVs of formats, the fragment and sweep_runs.csv */
    cr_assert_eq(same_merge("one", "three"), 5);
    cr_assert_eq(same_merge("one", "jobs"), 5);

    /* Rows: run 0 (seed 1, fp16) first, grid values as leading columns. */
    char path[256];
    snprintf(path, sizeof path, "%s/one/merged/formats_constants.csv", dir);
    char *text = slurp(path);
    cr_assert(strstr(text, "\nrun,seed,formats,format,bits,"), "leading columns run and the axes");
    cr_assert(strstr(text, "\n0,1,fp16,fp16,16,11,") && strstr(text, "\n5,3,bf16,bf16,16,8,"));
    cr_assert(strstr(text, "\n0,1,fp16,") < strstr(text, "\n1,1,bf16,"), "run order");
    cr_assert(!strstr(text, "# date:") && !strstr(text, "# argv:"), "run times and paths are not merged");
    free(text);
}

Test(sweep, manifest_checksums_are_sha256)
{
    cr_assert_eq(sh("cd %s && " SWEEP " formats --grid 'seed=1 formats=fp16' --out s --quiet " QUICK, dir), 0);
    /* Each "file: PATH SIZE SHA" line, checked by coreutils: sha256sum -c reads "SHA  PATH". */
    cr_assert_eq(sh("cd %s/s && grep '^file: ' shares/share-0-of-1.manifest | awk '{print $4 \"  \" $2}' > sums"
                    " && test $(wc -l < sums) -eq 5 && sha256sum --quiet -c sums" /* 4 files and the run manifest */,
                     dir),
        0);
    /* The last line is the SHA-256 of every line before it. */
    cr_assert_eq(sh("cd %s/s && m=shares/share-0-of-1.manifest && "
                    "test \"$(head -n -1 $m | sha256sum | cut -c1-64)\" = \"$(tail -n 1 $m | cut -c8-)\"",
                     dir),
        0);
}

Test(sweep, killed_share_leaves_nothing_and_rerun_reproduces)
{
    one_process("one");
    /* A stand-in for formats that runs the real one, then kills its drift-sweep worker once, on
     * run 3 (seed=2 formats=bf16, share 0 of 3), after the run wrote its files. */
    cr_assert_eq(sh("mkdir %s/bin && printf '%%s\\n' '#!/bin/bash' '\"%s/formats\" \"$@\" || exit $?' "
                    "'case \" $* \" in *\" --seed 2 --formats bf16 \"*) if mkdir %s/killed 2>/dev/null; then "
                    "kill -9 $PPID; exit 137; fi;; esac' > %s/bin/formats && chmod +x %s/bin/formats",
                     dir, DRIFT_BIN_DIR, dir, dir, dir),
        0);
    int rc = sh("cd %s && " SWEEP " formats --grid " GRID " --out k --shares 3 --jobs 2 --bin bin --quiet " QUICK
                " 2>/dev/null",
        dir);
    cr_assert_eq(rc, 1, "a killed share fails the sweep");
    cr_assert(exists("killed"));
    cr_assert(!exists("k/runs/000003"), "no run directory under its final name");
    cr_assert(!exists("k/shares/share-0-of-3.manifest"), "no manifest for the killed share");
    cr_assert(exists("k/shares/share-1-of-3.manifest") && exists("k/shares/share-2-of-3.manifest"));

    char out[4096];
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd %s && " SWEEP " --merge k 2>&1", dir);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 2);
    cr_assert(
        strstr(out, "share 0/3 missing") && !strchr(strchr(out, '\n') + 1, '\n'), "one line naming the share: %s", out);

    /* The rerun runs share 0 only: the other two manifests are left as they were. */
    char m1[256];
    snprintf(m1, sizeof m1, "%s/k/shares/share-1-of-3.manifest", dir);
    char *before = slurp(m1);
    snprintf(cmd, sizeof cmd, "cd %s && " SWEEP " formats --grid " GRID " --out k --shares 3 " QUICK " 2>&1", dir);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 0);
    cr_assert(strstr(out, "2 of them done already, 1 to run"), "%s", out);
    char *after = slurp(m1);
    cr_assert_str_eq(before, after);
    free(before);
    free(after);
    cr_assert_eq(same_merge("one", "k"), 5);
}

/* Merging dir/name must fail with status 2 and one line holding `want`. */
static void refused(const char *name, const char *want)
{
    char out[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "cd %s && " SWEEP " --merge %s 2>&1", dir, name);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 2, "merge of %s: %s", name, out);
    cr_assert(strstr(out, want), "expected '%s' in: %s", want, out);
    cr_assert_eq(strchr(out, '\n'), out + strlen(out) - 1, "one line: %s", out);
    cr_assert(!exists("merged"));
}

Test(sweep, corrupted_foreign_and_other_commit_shares_are_refused)
{
    for (int i = 0; i < 3; i++)
        cr_assert_eq(
            sh("cd %s && " SWEEP " formats --grid " GRID " --out good --shard %d/3 --quiet " QUICK, dir, i), 0);
    /* Another sweep: the same grid with another option; its share 2 copied into a copy of good. */
    cr_assert_eq(
        sh("cd %s && " SWEEP " formats --grid " GRID " --out other --shard 2/3 --quiet -- --profile quick --values 0.3",
            dir),
        0);

    /* One flipped digit in one row of run 4 (share 1). */
    cr_assert_eq(sh("cd %s && cp -r good bad && sed -i '20s/1/2/' bad/runs/000004/formats_spacing.csv", dir), 0);
    refused("bad", "share 1/3 corrupted (runs/000004/formats_spacing.csv: checksum differs");
    /* An extra file slipped into a run. */
    cr_assert_eq(sh("cd %s && cp -r good extra && echo x > extra/runs/000001/formats_x.csv", dir), 0);
    refused("extra", "share 1/3 corrupted");
    /* A truncated manifest. */
    cr_assert_eq(
        sh("cd %s && cp -r good trunc && m=trunc/shares/share-0-of-3.manifest && head -n 3 $m > t && mv t $m", dir), 0);
    refused("trunc", "share 0/3 corrupted (manifest truncated)");
    /* A share of another sweep. */
    cr_assert_eq(sh("cd %s && cp -r good foreign && rm -r foreign/runs/000002 foreign/runs/000005 && "
                    "cp -r other/runs/000002 other/runs/000005 foreign/runs/ && cp other/shares/* foreign/shares/",
                     dir),
        0);
    refused("foreign", "share 2/3 foreign");
    /* A share made by another commit (its manifest re-signed, as a real one would be). */
    cr_assert_eq(sh("cd %s && cp -r good commit && m=commit/shares/share-1-of-3.manifest && "
                    "head -n -1 $m | sed 's/^commit: .*/commit: 0123456789ab/' > t && "
                    "echo \"check: $(sha256sum t | cut -c1-64)\" >> t && mv t $m",
                     dir),
        0);
    refused("commit", "share 1/3 from commit 0123456789ab");
    /* A missing share. */
    cr_assert_eq(sh("cd %s && cp -r good gone && rm gone/shares/share-2-of-3.manifest", dir), 0);
    refused("gone", "share 2/3 missing");
    /* The intact sweep merges; a rerun over the damaged copy repairs it. */
    cr_assert_eq(sh("cd %s && " SWEEP " --merge good --quiet", dir), 0);
    cr_assert_eq(sh("cd %s && " SWEEP " formats --grid " GRID " --out bad --shares 3 --quiet " QUICK, dir), 0);
    cr_assert_eq(same_merge("good", "bad"), 5);
}

Test(sweep, slurm_scripts_parse_and_their_tasks_run_locally)
{
    one_process("one");
    cr_assert_eq(sh("cd %s && " SWEEP " formats --grid " GRID
                    " --out sl --shares 3 --slurm --sbatch --time=00:10:00 " QUICK " > /dev/null",
                     dir),
        0);
    cr_assert(!exists("sl/runs/000000") && !exists("sl/shares/share-0-of-3.manifest"), "--slurm runs nothing");
    cr_assert_eq(sh("cd %s/sl/slurm && bash -n shares.sbatch && bash -n merge.sbatch && bash -n submit.sh", dir), 0);
    cr_assert_eq(
        sh("grep -q '^#SBATCH --array=0-2$' %s/sl/slurm/shares.sbatch && grep -q '^#SBATCH --time=00:10:00$' %s/sl/slurm/shares.sbatch"
           " && grep -q 'afterok' %s/sl/slurm/submit.sh",
            dir, dir, dir),
        0);
    /* Without SLURM_ARRAY_TASK_ID the task refuses to guess its share. */
    cr_assert_neq(sh("bash %s/sl/slurm/shares.sbatch 2>/dev/null", dir), 0);
    for (int i = 2; i >= 0; i--)
        cr_assert_eq(sh("cd / && SLURM_ARRAY_TASK_ID=%d bash %s/sl/slurm/shares.sbatch 2>/dev/null", i, dir), 0);
    cr_assert_eq(sh("bash %s/sl/slurm/merge.sbatch 2>/dev/null", dir), 0);
    cr_assert_eq(same_merge("one", "sl"), 5);
}

Test(sweep, mpirun_two_ranks_merges_identically)
{
    char out[4096];
    run_stdout(SWEEP " --help", out, sizeof out);
    if (!strstr(out, "engines: local, slurm, mpi\n"))
        cr_skip_test("drift-sweep built without MPI (install libopenmpi-dev, rebuild)");
    if (sh("command -v mpirun > /dev/null") != 0) cr_skip_test("no mpirun (install openmpi-bin)");
    one_process("one");
    /* Under the sanitizers, LeakSanitizer reports what Open MPI itself keeps after MPI_Finalize
     * (frames in libmpi's plugins): leak checking is off for this run only; every other test
     * runs drift-sweep leak-checked. */
    cr_assert_eq(sh("cd %s && ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "
                    "mpirun -n 2 --oversubscribe --allow-run-as-root " SWEEP " formats --grid " GRID
                    " --out mpi --quiet " QUICK " > mpi.log 2>&1 || { cat mpi.log; false; }",
                     dir),
        0);
    cr_assert_eq(same_merge("one", "mpi"), 5);
}

/* A bad command line: exit 2, one line on stderr, nothing written. */
static void bad(const char *args, const char *want)
{
    char out[4096], cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && " SWEEP " %s 2>&1", dir, args);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 2, "%s: %s", args, out);
    cr_assert(strstr(out, want), "%s: expected '%s' in: %s", args, want, out);
    cr_assert_eq(strchr(out, '\n'), out + strlen(out) - 1, "one line: %s", out);
}

Test(sweep, bad_input_is_one_line_and_status_2)
{
    bad("formats --grid 'seed=3..1'", "seed: malformed range '3..1'");
    bad("formats --grid 'seed'", "'seed' is not an axis");
    bad("formats --grid 'seed=1,1'", "value '1' given twice");
    bad("formats --grid 'seed=1 seed=2'", "axis 'seed' given twice");
    bad("formats --grid 'out=x'", "'out' cannot be swept");
    bad("formats --grid 'seed=1' -- --seed 2", "both an axis and a fixed option");
    bad("formats", "--grid: no axes");
    bad("nosuch --grid 'seed=1'", "unknown experiment 'nosuch'");
    bad("formats --grid 'seed=1..4' --shard 4/4", "--shard: '4/4'");
    bad("formats --grid 'seed=1..4' --shares 5", "--shares: 5 shares for 4 runs");
    bad("--merge nowhere", "not a sweep directory");
    cr_assert_eq(count_entries(dir), 0, "bad input writes nothing");
    /* A run that refuses its options stops the sweep with status 2 and names the run. */
    bad("formats --grid 'formats=fp16,bf17' --out r --quiet " QUICK, "run 1 (formats=bf17) failed with status 2");
    cr_assert(!exists("r/shares/share-1-of-2.manifest") && !exists("r/runs/000001"));
    /* Another sweep in the same directory. */
    bad("formats --grid 'formats=fp16' --out r " QUICK, "holds another sweep");
}

Test(sweep, sweep_file_and_grid_are_one_sweep)
{
    one_process("one");
    /* The same sweep spelled as a file ("1,2,3" for "1..3", options on their own line): its
     * shares and the --grid ones are interchangeable. */
    const char *file = tmpfile_with(0, "# formats over three seeds\nexperiment: formats\n"
                                       "grid: seed=1,2,3\ngrid: formats=fp16,bf16\noptions: --profile quick\n");
    cr_assert_eq(sh("cd %s && " SWEEP " formats --grid " GRID " --out mix --shard 0/2 --quiet " QUICK, dir), 0);
    cr_assert_eq(sh("cd %s && " SWEEP " --file %s --out mix --shard 1/2 --quiet", dir, file), 0);
    cr_assert_eq(sh("cd %s && " SWEEP " --merge mix --quiet", dir), 0);
    cr_assert_eq(same_merge("one", "mix"), 5);
    /* sweep.txt is itself a sweep file. */
    cr_assert_eq(sh("cd %s && " SWEEP " --file mix/sweep.txt --out again --quiet", dir), 0);
    cr_assert_eq(same_merge("one", "again"), 5);
    remove(file);
}

Test(sweep, gpus_map_workers_and_device_passes_through)
{
    one_process("one");
    /* A stand-in for formats that logs its CUDA_VISIBLE_DEVICES and its --device, and runs the
     * real one without --device (formats has none): worker w of --jobs 2 sees the w-th GPU of
     * "5,7", and --device is the experiment's own option, passed to every run. */
    cr_assert_eq(
        sh("mkdir %s/bin && printf '%%s\\n' '#!/bin/bash' 'a=(); while [ $# -gt 0 ]; do "
           "if [ \"$1\" = --device ]; then echo \"$CUDA_VISIBLE_DEVICES $2\" >> %s/devices; shift 2; else a+=(\"$1\"); shift; fi; done' "
           "'exec \"%s/formats\" \"${a[@]}\"' > %s/bin/formats && chmod +x %s/bin/formats",
            dir, dir, DRIFT_BIN_DIR, dir, dir),
        0);
    cr_assert_eq(sh("cd %s && " SWEEP " formats --grid " GRID " --out dev --jobs 2 --gpus 5,7 --bin bin --quiet " QUICK
                    " --device h100",
                     dir),
        0);
    cr_assert_eq(sh("test $(wc -l < %s/devices) -eq 6 && test -z \"$(grep -v '^[57] h100$' %s/devices)\"", dir, dir), 0,
        "every run got GPU 5 or 7 and --device h100");
    /* The data is the same (only the rows: --device is one more fixed option in the metadata and
     * in sweep_runs.csv's commands). */
    cr_assert_eq(
        sh("cd %s && for f in one/merged/formats*.csv; do grep -v '^#' $f > a; grep -v '^#' dev/merged/${f#one/merged/} > b; "
           "cmp -s a b || exit 1; done",
            dir),
        0);
}

/* ./lab sweep: listed in ./lab help, --mpi P launches mpirun itself (adding --allow-run-as-root
 * as root and --oversubscribe beyond the core count), and the result is the same sweep. */
#define LAB "DRIFT_BUILD_DIR=" DRIFT_BIN_DIR "/.. " DRIFT_SOURCE_DIR "/lab"

Test(sweep, lab_sweep_command)
{
    cr_assert_eq(sh(LAB " help | grep -q '^  sweep EXP --grid SPEC'"), 0, "./lab help lists sweep");
    cr_assert_eq(sh(LAB " sweep formats --grid 'seed=1' --mpi x 2>/dev/null"), 2);
    cr_assert_eq(sh(LAB " sweep nosuch --grid 'seed=1' 2>/dev/null"), 2);
    one_process("one");
    cr_assert_eq(sh(LAB " sweep formats --grid " GRID " --out %s/lab --jobs 2 --quiet " QUICK, dir), 0);
    cr_assert_eq(same_merge("one", "lab"), 5);
    char out[4096];
    run_stdout(SWEEP " --help", out, sizeof out);
    if (!strstr(out, "engines: local, slurm, mpi\n") || sh("command -v mpirun > /dev/null") != 0)
        cr_skip_test("no MPI engine or no mpirun: ./lab sweep --mpi not tried");
    cr_assert_eq(sh("ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 " LAB " sweep formats --grid " GRID
                    " --out %s/labmpi --mpi 3 --quiet " QUICK " > %s/labmpi.log 2>&1",
                     dir, dir),
        0);
    cr_assert_eq(same_merge("one", "labmpi"), 5);
}

/* --merge writes only where it may: a new directory (twice: the second merge replaces the
 * first, and nothing of the first is left beside it), never a directory of other origin. */
Test(sweep, merge_replaces_only_its_own_previous_merge)
{
    one_process("one");
    cr_assert_eq(sh("cd %s && " SWEEP " --merge one --out q --quiet", dir), 0);
    cr_assert(exists("q/merge.manifest") && exists("q/formats.csv") && exists("q/sweep_runs.csv"));
    cr_assert_eq(sh("cd %s && " SWEEP " --merge one --out q --quiet", dir), 0, "a previous merge is replaced");
    cr_assert_eq(
        sh("cd %s && test $(ls -A | grep -c '^q') = 1", dir), 0, "a .part or .old directory was left beside q");
    /* q/. is q: judged its previous merge, then its rename failed (EBUSY, exit 1) */
    cr_assert_eq(sh("cd %s && " SWEEP " --merge one --out q/./ --quiet", dir), 0, "q/./ is q");
    cr_assert_eq(sh("cd %s && test $(ls -A | grep -c '^q') = 1 && test -e q/merge.manifest", dir), 0,
        "q/./ left another directory");
    cr_assert_eq(sh("cd %s && mkdir p && echo x > p/thesis.txt && " SWEEP " --merge one --out p 2>/dev/null", dir), 2);
    cr_assert_eq(
        sh("cd %s && test \"$(cat p/thesis.txt)\" = x && test $(ls -A p | wc -l) = 1", dir), 0, "p was touched");
    cr_assert_eq(sh("cd %s && " SWEEP " --merge one --out one 2>/dev/null", dir), 2);
    cr_assert(exists("one/sweep.txt") && exists("one/runs/000000"), "the sweep itself was touched");
}

/* A share another process is running (its lock held) is not run again: the second process
 * said nothing and removed the first one's live run directory as a stale part. */
Test(sweep, a_share_being_run_elsewhere_is_left_alone)
{
    cr_assert_eq(sh("cd %s && " SWEEP " formats --grid seed=1,2 --out two --quiet " QUICK, dir), 0);
    cr_assert_eq(sh("cd %s && rm two/shares/share-0-of-2.manifest && mkdir two/runs/000000.part-elsewhere-1 && "
                    "touch two/runs/000000.part-elsewhere-1/live",
                     dir),
        0);
    char shares[256];
    snprintf(shares, sizeof shares, "%s/two/shares", dir);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        char why[1024];
        char ok = drift_out_lock(why, sizeof why, shares, "share-0-of-2") == 0 ? 'y' : 'n';
        (void)!write(fds[1], &ok, 1);
        for (;;) pause();
    }
    char ok = 0;
    cr_assert_eq(read(fds[0], &ok, 1), 1);
    cr_assert_eq(ok, 'y');
    char cmd[512], err[2048], want[32];
    snprintf(cmd, sizeof cmd, "cd %s && " SWEEP " formats --grid seed=1,2 --out two --quiet " QUICK, dir);
    int st = run_capture(cmd, NULL, 0, err, sizeof err);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    snprintf(want, sizeof want, "pid %ld", (long)pid);
    cr_expect_eq(st, 1, "exit %d: %s", st, err);
    cr_expect(strstr(err, "share 0/2") && strstr(err, want), "%s", err);
    cr_expect(exists("two/runs/000000.part-elsewhere-1/live"), "the other process's run directory was removed");
    cr_expect_eq(sh("cd %s && " SWEEP " formats --grid seed=1,2 --out two --quiet " QUICK, dir), 0,
        "after it died the share runs");
}

/* Two merges into one directory at once: the second refuses (exit 2, the holder's pid) before
 * it touches the target. */
Test(sweep, a_second_merge_into_one_directory_is_refused)
{
    one_process("one");
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    char parent[256];
    snprintf(parent, sizeof parent, "%s/one", dir);
    pid_t pid = fork();
    if (pid == 0) {
        char why[1024];
        char ok = drift_out_lock(why, sizeof why, parent, "merged") == 0 ? 'y' : 'n';
        (void)!write(fds[1], &ok, 1);
        for (;;) pause();
    }
    char ok = 0;
    cr_assert_eq(read(fds[0], &ok, 1), 1);
    cr_assert_eq(ok, 'y');
    char cmd[512], err[2048], want[32], before[256], after[256];
    snprintf(cmd, sizeof cmd, "cd %s && ls -l --time-style=+%%s.%%N one/merged | cksum", dir);
    run_stdout(cmd, before, sizeof before);
    snprintf(cmd, sizeof cmd, "cd %s && " SWEEP " --merge one", dir);
    int st = run_capture(cmd, NULL, 0, err, sizeof err);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    snprintf(cmd, sizeof cmd, "cd %s && ls -l --time-style=+%%s.%%N one/merged | cksum", dir);
    run_stdout(cmd, after, sizeof after);
    snprintf(want, sizeof want, "pid %ld", (long)pid);
    cr_expect_eq(st, 2, "exit %d: %s", st, err);
    cr_expect(strstr(err, want) && strchr(err, '\n') == err + strlen(err) - 1, "%s", err);
    cr_expect_str_eq(after, before, "the refused merge touched the previous one");
    cr_expect_eq(sh("cd %s && " SWEEP " --merge one --quiet", dir), 0, "after the holder died the merge runs");
}

/* Without --out each sweep gets a directory of its own, sweeps/EXP-YYYYMMDD-HHMMSS[-N] (the
 * second sweep of one experiment was refused as "another sweep" until the first was deleted):
 * two in a row, of different grids, both run and merge. ./lab plot DIR draws a merge, its
 * plots beside it in DIR-plots/, and leaves the merge as it was (a later --merge still takes it). */
Test(sweep, two_sweeps_without_out_and_plot_of_a_merge)
{
    cr_assert_eq(sh("cd %s && " SWEEP " formats --grid seed=1,2 --quiet " QUICK " && " SWEEP
                    " formats --grid seed=3 --quiet " QUICK,
                     dir),
        0);
    char out[4096];
    char cmd[512];
    snprintf(
        cmd, sizeof cmd, "cd %s/sweeps && ls -d formats-* | grep -cE '^formats-[0-9]{8}-[0-9]{6}(-[0-9]+)?$'", dir);
    run_stdout(cmd, out, sizeof out);
    cr_assert_eq(atoi(out), 2, "two sweep directories: %s", out);
    snprintf(cmd, sizeof cmd, "cd %s/sweeps && ls formats-*/merged/formats.csv | wc -l", dir);
    run_stdout(cmd, out, sizeof out);
    cr_assert_eq(atoi(out), 2, "both merged: %s", out);
    if (sh("command -v gnuplot >/dev/null") != 0) cr_skip_test("no gnuplot: ./lab plot DIR not tried");
    cr_assert_eq(sh("cd %s && m=$(ls -d sweeps/formats-*/merged | head -n1) && " LAB
                    " plot $m >/dev/null 2>&1 && ls $m-plots/formats_spacing.png "
                    ">/dev/null && " SWEEP " --merge ${m%%/merged} --quiet",
                     dir),
        0);
}

/* Progress: one line per share finished with done/total (of the shares this process runs) and
 * an estimate until the last, which says all are done ("share 15/16 done" was the last line
 * and read as 15 of 16). Shares are named as their manifests (share-I-of-N, I from 0). */
Test(sweep, progress_counts_done_of_total_with_an_estimate)
{
    cr_assert_eq(sh("cd %s && " SWEEP " formats --grid seed=1,2 --out p " QUICK " >/dev/null 2>p.err", dir), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/p.err", dir);
    char *e = slurp(path);
    cr_assert(e);
    cr_expect(strstr(e, "drift-sweep: 1 of 2 shares done (share-0-of-2), elapsed "), "%s", e);
    cr_expect(strstr(e, " s left\n"), "no estimate before the last share: %s", e);
    const char *last = strstr(e, "drift-sweep: 2 of 2 shares done (share-1-of-2), elapsed ");
    cr_expect(last && strstr(last, " s: all done\n"), "the last share does not say all are done: %s", e);
    cr_expect(!strstr(e, "share 1/2 done"), "%s", e);
    free(e);
}
