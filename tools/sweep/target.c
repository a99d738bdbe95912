/* target.c — where a merge may go. The merge once emptied whatever --out named, recursively,
 * then renamed itself there: a thesis beside it, the sweep itself (--out DIR), or sweep.txt
 * (made a directory). Now a merge writes only into
 *   - a directory that does not exist yet (made, with its parents, by the merge), outside the
 *     sweep's own runs/, shares/, logs/ and slurm/, or
 *   - a directory that holds a previous merge of the same sweep and nothing else: its
 *     merge.manifest names this sweep's definition and every entry of the directory is a
 *     regular file it lists (a merge made before merge.manifest existed is recognised by its
 *     sweep_runs.csv, whose "# sweep-definition:" line names the sweep, and its file names);
 * anything else is refused with one line, exit 2, before anything is touched. The previous
 * merge is renamed aside, the new one renamed into place, and only then are the files the old
 * manifest lists removed. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "escape.h"
#include "manifest.h"
#include "sweep.h"

#define MERGE_MANIFEST "merge.manifest"

/* The absolute path `path` will have once made: realpath of its deepest existing ancestor,
 * then the rest appended ("." skipped). 0, or -1 with errno (ELOOP/EINVAL for ".." in the part
 * that does not exist yet: where it leads depends on what the merge would make). */
static int future_path(char *out, size_t size, const char *path)
{
    char buf[PATH_MAX], rest[PATH_MAX] = "";
    if (strlen(path) >= sizeof buf) return errno = ENAMETOOLONG, -1;
    snprintf(buf, sizeof buf, "%s", path);
    for (;;) {
        char real[PATH_MAX];
        if (realpath(*buf ? buf : ".", real)) {
            int n = snprintf(out, size, "%s%s%s", real, *rest && strcmp(real, "/") ? "/" : "", rest);
            return n < 0 || (size_t)n >= size ? (errno = ENAMETOOLONG, -1) : 0;
        }
        if (errno != ENOENT) return -1;
        size_t len = strlen(buf);
        while (len > 1 && buf[len - 1] == '/') buf[--len] = 0;
        char *slash = strrchr(buf, '/');
        const char *comp = slash ? slash + 1 : buf;
        if (!strcmp(comp, "..")) return errno = EINVAL, -1;
        if (strcmp(comp, ".")) {
            char t[PATH_MAX];
            snprintf(t, sizeof t, "%s%s%s", comp, *rest ? "/" : "", rest);
            snprintf(rest, sizeof rest, "%s", t);
        }
        if (!slash)
            buf[0] = 0;
        else if (slash == buf)
            buf[1] = 0;
        else
            *slash = 0;
    }
}

static int under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == 0);
}

/* A name a merge writes: sweep_runs.csv, EXP*.csv, EXP.md. */
static int merge_file(const char *f, const sweep_t *s)
{
    size_t fl = strlen(f), el = strlen(s->experiment);
    return !strcmp(f, "sweep_runs.csv") ||
           (!strncmp(f, s->experiment, el) && fl > 4 && (!strcmp(f + fl - 4, ".csv") || !strcmp(f + el, ".md")));
}

/* The names a previous merge lists: from merge.manifest, "file: NAME SIZE SHA" lines, each a
 * name a merge writes (a list edited to name another file cannot make it the merge's). */
static int manifest_names(char ***names, const char *path, const sweep_t *s, const char *def_sha)
{
    FILE *fp = drift_fopen_regular(path);
    if (!fp) return -1;
    char *line = NULL;
    size_t cap = 0;
    int n = 0, ok = 0;
    *names = NULL;
    while (getline(&line, &cap, fp) > 0) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "sweep: ", 7))
            ok = !strcmp(line + 7, def_sha);
        else if (!strncmp(line, "file: ", 6)) {
            size_t len = strcspn(line + 6, " ");
            char *name = sweep_xrealloc(NULL, len + 1);
            if (drift_unescape(name, len + 1, line + 6, len, " ") < 0 || !*name || strchr(name, '/') ||
                !merge_file(name, s)) {
                free(name);
                ok = 0;
                break;
            }
            *names = sweep_xrealloc(*names, (size_t)(n + 1) * sizeof **names);
            (*names)[n++] = name;
        }
    }
    free(line);
    fclose(fp);
    if (!ok) {
        sweep_free_names(*names, n);
        *names = NULL;
        return -1;
    }
    return n;
}

/* A merge made before merge.manifest: sweep_runs.csv names this sweep, and every file is
 * sweep_runs.csv or EXP*.csv / EXP.md. The names are the directory's own. */
static int legacy_names(char ***names, const char *dir, const sweep_t *s, const char *def_sha)
{
    char path[PATH_MAX + 32], want[128];
    snprintf(path, sizeof path, "%s/sweep_runs.csv", dir);
    snprintf(want, sizeof want, "# sweep-definition: %s", def_sha);
    FILE *fp = drift_fopen_regular(path);
    if (!fp) return -1;
    char *line = NULL;
    size_t cap = 0;
    int ok = 0;
    while (!ok && getline(&line, &cap, fp) > 0 && line[0] == '#') {
        line[strcspn(line, "\n")] = 0;
        ok = !strcmp(line, want);
    }
    free(line);
    fclose(fp);
    if (!ok) return -1;
    int others, n = sweep_list_files(dir, names, &others);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) others += !merge_file((*names)[i], s);
    if (others) {
        if (n > 0) sweep_free_names(*names, n);
        *names = NULL;
        return -2;
    }
    return n;
}

int sweep_merge_target(
    char *err, size_t errsz, const sweep_t *s, const sweep_ctx_t *c, const char *outdir, char ***old_names, int *nold)
{
    *old_names = NULL;
    *nold = 0;
    char sweep_real[PATH_MAX], out_real[PATH_MAX];
    if (!*outdir) return snprintf(err, errsz, "--out: empty directory name"), -1;
    if (!realpath(c->dir, sweep_real))
        return snprintf(err, errsz, "--merge: cannot resolve '%s': %s", c->dir, strerror(errno)), -1;
    struct stat st;
    if (lstat(outdir, &st) != 0) {
        if (errno != ENOENT) return snprintf(err, errsz, "--out: cannot use '%s': %s", outdir, strerror(errno)), -1;
        if (future_path(out_real, sizeof out_real, outdir) != 0)
            return snprintf(err, errsz,
                       "--out: cannot resolve '%s' (%s; accepted: a path without '..' after its existing part)", outdir,
                       strerror(errno)),
                   -1;
        static const char *const OWN[] = {"runs", "shares", "logs", "slurm", NULL};
        for (int i = 0; OWN[i]; i++) {
            char d[PATH_MAX + 16];
            snprintf(d, sizeof d, "%s/%s", sweep_real, OWN[i]);
            if (under(out_real, d))
                return snprintf(err, errsz,
                           "--out: '%s' is inside the sweep's %s/ (accepted: a new directory outside it, or a previous merge)",
                           outdir, OWN[i]),
                       -1;
        }
        return 0;
    }
    if (!S_ISDIR(st.st_mode))
        return snprintf(err, errsz,
                   "--out: '%s' is %s, not a directory a merge made (accepted: a new directory, or a previous merge of this sweep)",
                   outdir, S_ISLNK(st.st_mode) ? "a symbolic link" : "a file"),
               -1;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" MERGE_MANIFEST, outdir);
    char **names;
    int n;
    if (lstat(path, &st) == 0)
        n = manifest_names(&names, path, s, c->def_sha);
    else
        n = legacy_names(&names, outdir, s, c->def_sha);
    if (n < 0)
        return snprintf(err, errsz,
                   "--out: '%s' exists and is not a previous merge of this sweep (no %s naming it%s); "
                   "accepted: a new directory, or a previous merge of this sweep",
                   outdir, MERGE_MANIFEST, n == -2 ? ", and files of other origin" : ""),
               -1;
    /* Nothing but what the manifest lists (and the manifest) may be there. */
    char **have;
    int others, k = sweep_list_files(outdir, &have, &others), stranger = -1;
    for (int i = 0; i < k && stranger < 0; i++) {
        int listed = !strcmp(have[i], MERGE_MANIFEST);
        for (int j = 0; j < n && !listed; j++) listed = !strcmp(have[i], names[j]);
        if (!listed) stranger = i;
    }
    if (stranger >= 0 || others || k < 0) {
        snprintf(err, errsz,
            "--out: '%s' holds a previous merge and %s%s%s that the merge did not write (move it away, or choose another --out)",
            outdir, stranger >= 0 ? "'" : "",
            stranger >= 0 ? have[stranger]
            : others      ? "a directory or special file"
                          : "entries",
            stranger >= 0 ? "'" : "");
        if (k > 0) sweep_free_names(have, k);
        sweep_free_names(names, n);
        return -1;
    }
    if (k > 0) sweep_free_names(have, k);
    *old_names = names;
    *nold = n;
    return 0;
}

int sweep_write_merge_manifest(const sweep_t *s, const sweep_ctx_t *c, const char *part)
{
    char **names;
    int others, n = sweep_list_files(part, &names, &others);
    if (n < 0) return -1;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" MERGE_MANIFEST, part);
    FILE *fp = fopen(path, "w");
    if (!fp) {
        sweep_free_names(names, n);
        return -1;
    }
    fprintf(fp,
        "# drift-sweep merge, written last: --merge replaces this directory only while it holds these files alone\n");
    fprintf(fp, "sweep: %s\nexperiment: %s\n", c->def_sha, s->experiment);
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
        char full[PATH_MAX + 300], hex[65];
        long long size;
        snprintf(full, sizeof full, "%s/%s", part, names[i]);
        if (drift_sha256_regular(hex, &size, full) != 0) bad = 1;
        fputs("file: ", fp);
        drift_escape_fputs(fp, names[i], " ");
        fprintf(fp, " %lld %s\n", size, hex);
    }
    sweep_free_names(names, n);
    bad |= ferror(fp) != 0 || fflush(fp) != 0 || fsync(fileno(fp)) != 0;
    return (fclose(fp) != 0 || bad) ? -1 : 0;
}

int sweep_replace_merge(char *err, size_t errsz, const char *part, const char *outdir, char **old_names, int nold)
{
    char aside[PATH_MAX + 64];
    struct stat st;
    int had_old = lstat(outdir, &st) == 0;
    snprintf(aside, sizeof aside, "%s.old", part); /* part's name is unique (mkdtemp), so is this */
    if (had_old && rename(outdir, aside) != 0)
        return snprintf(err, errsz, "--merge: cannot move the previous merge '%s' aside: %s", outdir, strerror(errno)),
               -1;
    if (rename(part, outdir) != 0) {
        int e = errno;
        if (had_old) rename(aside, outdir);
        return snprintf(err, errsz, "--merge: cannot rename %s to %s: %s", part, outdir, strerror(e)), -1;
    }
    if (!had_old) return 0;
    for (int i = 0; i < nold; i++) {
        char p[PATH_MAX + 300];
        snprintf(p, sizeof p, "%s/%s", aside, old_names[i]);
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) unlink(p);
    }
    snprintf(aside + strlen(aside), sizeof aside - strlen(aside), "/" MERGE_MANIFEST);
    unlink(aside);
    aside[strlen(aside) - strlen("/" MERGE_MANIFEST)] = 0;
    if (rmdir(aside) != 0)
        fprintf(stderr, "drift-sweep: --merge: kept %s: it holds files the previous merge did not list\n", aside);
    return 0;
}
