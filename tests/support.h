/* support.h — helpers shared by the test programs. Each tests/test_*.c is its own executable,
 * so the helpers are static inline: every file gets its own copy, and one that a file does not
 * call raises no -Wunused-function warning. All of them fail the current test through
 * Criterion when the system itself lets them down (no temporary file, no shell). */
#ifndef DRIFT_TESTS_SUPPORT_H
#define DRIFT_TESTS_SUPPORT_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <math.h>
#include <stdint.h>

#include "philox.h"

/* Tests that run a built program build its command line with printf-style formatting: runs
 * it through the shell and returns its exit status. */
static inline int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int sh(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    cr_assert(st != -1 && WIFEXITED(st), "could not run: %s", cmd);
    return WEXITSTATUS(st);
}

/* Result files are compared whole: the file's bytes, NUL-terminated, in a malloc'd buffer
 * (free it); its length in *len unless len is NULL (for files that may hold a NUL). */
static inline char *slurp_len(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    cr_assert(fp, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert(buf && fread(buf, 1, (size_t)n, fp) == (size_t)n, "cannot read %s", path);
    buf[n] = 0;
    fclose(fp);
    if (len) *len = (size_t)n;
    return buf;
}

static inline char *slurp(const char *path) { return slurp_len(path, NULL); }

/* slurp of the file name (e.g. "run/x.csv") in directory dir. */
static inline char *slurp_in(const char *dir, const char *name)
{
    char path[1024];
    cr_assert((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) < sizeof path, "path too long: %s", name);
    return slurp(path);
}

/* The data rows of CSV text s (modified in place), one per pass of the body that follows, as
 * l: its `#` metadata lines and its header row (the line that starts with head) skipped. */
#define FOR_CSV_ROWS(l, s, head)                                 \
    for (char *l = strtok((s), "\n"); l; l = strtok(NULL, "\n")) \
        if (l[0] == '#' || !strncmp(l, (head), strlen(head)))    \
            continue;                                            \
        else

/* Experiments and result files write into a directory of their own: a fresh, private
 * /tmp/PREFIX_XXXXXX in dir (at least 64 bytes), for a suite's .init ... */
static inline void tmpdir_make(char *dir, size_t size, const char *prefix)
{
    snprintf(dir, size, "/tmp/%s_XXXXXX", prefix);
    cr_assert(mkdtemp(dir), "mkdtemp failed");
}

/* ... and its .fini: removes it with everything in it (best effort: cleanup never fails a test). */
static inline void tmpdir_remove(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)!system(cmd);
}

/* The experiment programs' bad-option contract: each of bad[] (options appended to exe) exits 2
 * with exactly one line on stderr and leaves no <dir>/bad/<csv>. */
static inline void expect_bad_options(
    const char *exe, const char *const *bad, size_t n, const char *dir, const char *csv)
{
    for (size_t i = 0; i < n; i++) {
        char err[256], p[256];
        snprintf(err, sizeof err, "%s/err", dir);
        cr_assert_eq(sh("%s %s --quiet --out %s/bad 2>%s", exe, bad[i], dir, err), 2, "%s", bad[i]);
        char *e = slurp(err), *nl = strchr(e, '\n');
        cr_assert(nl && nl[1] == 0, "%s: not one line: %s", bad[i], e);
        free(e);
        struct stat st;
        snprintf(p, sizeof p, "%s/bad/%s", dir, csv);
        cr_assert_neq(stat(p, &st), 0, "%s wrote a file", bad[i]);
    }
}

/* A failing run must leave nothing behind: the number of entries in path other than . and .. */
static inline int count_entries(const char *path)
{
    DIR *d = opendir(path);
    cr_assert(d, "cannot open %s", path);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* Command-line tests feed a program their input from a file: writes text to a fresh temporary
 * file and returns its path. Up to 4 live at once, one per slot (0..3); remove() them after. */
static inline const char *tmpfile_with(int slot, const char *text)
{
    static char paths[4][64];
    snprintf(paths[slot], sizeof paths[slot], "/tmp/drift_test_%d_%d_XXXXXX", (int)getpid(), slot);
    int fd = mkstemp(paths[slot]);
    cr_assert_geq(fd, 0);
    FILE *fp = fdopen(fd, "w");
    fputs(text, fp);
    fclose(fp);
    return paths[slot];
}

/* Command-line tests check what a program prints and how it exits: runs the shell command
 * line cmd through popen with its stdout in out (the whole lines that fit in size bytes,
 * NUL-terminated; NULL to discard). Returns the exit status, -1 if it did not exit. */
static inline int run_stdout(const char *cmd, char *out, size_t size)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "could not run: %s", cmd);
    size_t len = 0;
    char buf[1024];
    while (fgets(buf, sizeof buf, p)) {
        size_t l = strlen(buf);
        if (out && len + l < size) {
            memcpy(out + len, buf, l);
            len += l;
        }
    }
    if (out) out[len] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Bad-input tests check stdout and stderr apart: runs the shell command line cmd with stdout
 * in out and stderr in err (each NUL-terminated, truncated to its size; NULL to discard),
 * through temporary files. Returns the exit status. */
static inline int run_capture(const char *cmd, char *out, size_t outsz, char *err, size_t errsz)
{
    char fo[] = "/tmp/drift_test_out_XXXXXX", fe[] = "/tmp/drift_test_err_XXXXXX";
    char *paths[2] = {out ? fo : NULL, err ? fe : NULL};
    char *bufs[2] = {out, err};
    size_t sizes[2] = {outsz, errsz};
    for (int k = 0; k < 2; k++) {
        if (!paths[k]) continue;
        int fd = mkstemp(paths[k]);
        cr_assert(fd >= 0, "mkstemp failed");
        close(fd);
    }
    size_t len = strlen(cmd) + sizeof fo + sizeof fe + 16; /* cmd can be kilobytes of values */
    char *full = malloc(len);
    cr_assert(full);
    snprintf(full, len, "%s >%s 2>%s", cmd, out ? fo : "/dev/null", err ? fe : "/dev/null");
    int st = system(full);
    cr_assert(st != -1 && WIFEXITED(st), "could not run: %s", full);
    free(full);
    for (int k = 0; k < 2; k++) {
        if (!paths[k]) continue;
        FILE *fp = fopen(paths[k], "r");
        cr_assert(fp);
        size_t n = fread(bufs[k], 1, sizes[k] - 1, fp);
        bufs[k][n] = 0;
        fclose(fp);
        remove(paths[k]);
    }
    return WEXITSTATUS(st);
}

/* ---- bit-level comparison ------------------------------------------------------------ */

/* The encoding of a double, for bit-for-bit comparisons and for printing. */
static inline uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* Same result: bit-identical (so +0 and -0 differ), or both NaN (payloads and NaN signs are
 * not part of the lab's model). */
static inline int same(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return dbits(a) == dbits(b);
}

/* 64 random bits from a test's Philox stream (random bit patterns of doubles). */
static inline uint64_t u64(drift_stream_t *s)
{
    uint64_t hi = drift_stream_u32(s);
    return hi << 32 | drift_stream_u32(s);
}

#endif
