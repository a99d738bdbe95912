/* test_paths.c — the lab's paths are the caller's: `./lab run X --out rel/dir`
 * from another directory writes there (creating the missing parents), never into the
 * repository, and so does `./lab sweep X --out rel/dir`; `./lab plot X --data DIR` renders
 * DIR's CSVs into DIR; a bad --data exits 2. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "support.h"

#define LAB DRIFT_SOURCE_DIR "/lab"
/* the build under test, whatever its name (the lab's default is build/) */
#define ENV "DRIFT_BUILD_DIR=" DRIFT_BIN_DIR "/.. "

static int exists(const char *dir, const char *name)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return stat(p, &st) == 0;
}

Test(paths, run_out_is_relative_to_the_caller_and_plot_data_renders_there, .timeout = 120)
{
    char dir[64];
    tmpdir_make(dir, sizeof dir, "paths");
    /* a relative --out whose parents do not exist yet */
    cr_assert_eq(
        sh("cd '%s' && " ENV LAB " run formats --profile quick --quiet --out rel/deep/out 2>/dev/null", dir), 0);
    cr_assert(exists(dir, "rel/deep/out/formats.csv"), "--out rel/deep/out did not write under the caller's directory");
    cr_assert(!exists(DRIFT_SOURCE_DIR, "rel"), "--out rel/... wrote into the repository");
    /* the plots of that run, into that run's directory; --data relative to the caller too */
    cr_assert_eq(sh("cd '%s' && " ENV LAB " plot formats --data rel/deep/out 2>/dev/null", dir), 0);
    cr_assert(exists(dir, "rel/deep/out/formats_spacing.png"));
    cr_assert(exists(dir, "rel/deep/out/formats_spacing.svg"));
    /* a directory with no data, or none at all: one line, exit 2 */
    cr_assert_eq(sh("cd '%s' && " ENV LAB " plot formats --data rel 2>/dev/null", dir), 2);
    cr_assert_eq(sh("cd '%s' && " ENV LAB " plot formats --data nowhere 2>/dev/null", dir), 2);
    tmpdir_remove(dir);
}

Test(paths, calc_input_files_are_relative_to_the_caller, .timeout = 60)
{
    char dir[64];
    tmpdir_make(dir, sizeof dir, "paths");
    char out[256];
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd '%s' && printf '0.5\\n0.25\\n' > v.txt && " ENV LAB " calc exact v.txt", dir);
    cr_assert_eq(run_stdout(cmd, out, sizeof out), 0);
    cr_assert_str_eq(out, "n,exact_hex,exact\n2,0x1.8p-1,0.75\n"); /* 0.5 + 0.25 = 0.75 = 0x1.8p-1, exact */
    tmpdir_remove(dir);
}

Test(paths, sweep_out_is_relative_to_the_caller, .timeout = 120)
{
    char dir[64];
    tmpdir_make(dir, sizeof dir, "paths");
    cr_assert_eq(
        sh("cd '%s' && " ENV LAB " sweep formats --grid seed=1 --profile quick --quiet --out rel/sw 2>/dev/null", dir),
        0);
    cr_assert(exists(dir, "rel/sw/merged/formats.csv"), "--out rel/sw did not write under the caller's directory");
    cr_assert(!exists(DRIFT_SOURCE_DIR, "rel"), "--out rel/... wrote into the repository");
    tmpdir_remove(dir);
}
