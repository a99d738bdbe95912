/* manifest.c — a run's files as one unit (manifest.h): the manifest reader and checker, the
 * roll-forward of an interrupted commit, the cleaning of what dead runs left, and the fault
 * hook the transaction test kills the commit with. */
#include "manifest.h"
#include "digest.h"
#include "drift.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void drift_pathf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

void drift_fault_point(void)
{
    static long step, at = -1;
    if (at < 0) {
        const char *s = getenv("DRIFT_FAULT_AT");
        at = s ? atol(s) : 0;
    }
    if (at > 0 && ++step == at) {
        fflush(NULL);
        raise(SIGKILL);
    }
}

/* A file name inside <out>: no directory part, not "." or "..", nothing a reader could be led
 * out of the directory with. */
static int plain_name(const char *s)
{
    return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

int drift_manifest_read(drift_manifest_t *m, const char *path)
{
    memset(m, 0, sizeof *m);
    FILE *fp = fopen(path, "r");
    if (!fp) return DRIFT_EIO;
    char line[4096];
    int rc = DRIFT_OK;
    while (rc == DRIFT_OK && fgets(line, sizeof line, fp)) {
        size_t n = strlen(line);
        if (n == 0 || line[n - 1] != '\n') { rc = DRIFT_EINVAL; break; } /* too long, or no end */
        line[n - 1] = 0;
        if (line[0] == '#' || !strncmp(line, "argv: ", 6)) continue;
        if (!strncmp(line, "experiment: ", 12)) drift_pathf(m->experiment, sizeof m->experiment, "%.95s", line + 12);
        else if (!strncmp(line, "git: ", 5)) drift_pathf(m->git, sizeof m->git, "%.63s", line + 5);
        else if (!strncmp(line, "file: ", 6)) {
            if (m->nfiles == DRIFT_MANIFEST_FILES) { rc = DRIFT_EINVAL; break; }
            drift_manifest_file_t *f = &m->files[m->nfiles];
            int used = 0;
            if (sscanf(line + 6, "%lld %64s %255s%n", &f->size, f->sha, f->name, &used) != 3 || line[6 + used] ||
                strlen(f->sha) != 64 || !plain_name(f->name) || f->size < 0)
                rc = DRIFT_EINVAL;
            else m->nfiles++;
        } else rc = DRIFT_EINVAL;
    }
    if (ferror(fp)) rc = DRIFT_EIO;
    fclose(fp);
    if (rc == DRIFT_OK && (!m->experiment[0] || m->nfiles == 0)) rc = DRIFT_EINVAL;
    return rc;
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int drift_manifest_check(char *why, size_t size, const char *dir, const char *name)
{
    char path[2048];
    drift_pathf(path, sizeof path, "%s/.%s.commit", dir, name);
    if (exists(path)) {
        snprintf(why, size, "%s: a commit of %s's files was interrupted (drift-manifest recover '%s' completes it)", dir, name, dir);
        return DRIFT_EIO;
    }
    drift_pathf(path, sizeof path, "%s/%s" DRIFT_MANIFEST_SUFFIX, dir, name);
    drift_manifest_t m;
    int rc = drift_manifest_read(&m, path);
    if (rc == DRIFT_EIO) {
        snprintf(why, size, "%s: no manifest %s%s (not a complete run of %s)", dir, name, DRIFT_MANIFEST_SUFFIX, name);
        return rc;
    }
    if (rc) {
        snprintf(why, size, "%s: malformed manifest", path);
        return rc;
    }
    if (strcmp(m.experiment, name)) {
        snprintf(why, size, "%s: the manifest is %s's, not %s's", path, m.experiment, name);
        return DRIFT_EINVAL;
    }
    for (int i = 0; i < m.nfiles; i++) {
        char hex[65];
        long long n;
        drift_pathf(path, sizeof path, "%s/%s", dir, m.files[i].name);
        if (drift_sha256_file(hex, &n, path) != 0) {
            snprintf(why, size, "%s: missing or unreadable (listed in %s%s)", path, name, DRIFT_MANIFEST_SUFFIX);
            return DRIFT_EIO;
        }
        if (n != m.files[i].size || strcmp(hex, m.files[i].sha)) {
            snprintf(why, size, "%s: does not match the manifest (%s, not the run's file)", path,
                     n != m.files[i].size ? "size differs" : "SHA-256 differs");
            return DRIFT_EINVAL;
        }
    }
    return DRIFT_OK;
}

/* Removes a directory holding only files (a staging or journal directory). */
static void remove_flat_dir(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        char p[2048];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                drift_pathf(p, sizeof p, "%s/%s", path, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(path);
}

static int pid_dead(const char *digits)
{
    char *end;
    long pid = strtol(digits, &end, 10);
    if (*end || pid <= 0) return 0;                       /* not ours to judge: left alone */
    return pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Steps 2..6 of manifest.h on the journal "<dir>/.<name>.commit". */
static int roll_forward(char *why, size_t size, const char *dir, const char *name)
{
    char journal[2048], from[2048], to[2048];
    drift_pathf(journal, sizeof journal, "%s/.%s.commit", dir, name);
    if (!exists(journal)) return DRIFT_OK;
    drift_manifest_t m;
    drift_pathf(from, sizeof from, "%s/%s" DRIFT_MANIFEST_SUFFIX, journal, name);
    int have_manifest = exists(from);
    if (have_manifest) { /* steps 5 and 6 not yet done */
        if (drift_manifest_read(&m, from) != DRIFT_OK) {
            snprintf(why, size, "%s: malformed manifest in the commit journal", journal);
            return DRIFT_EIO;
        }
        drift_pathf(to, sizeof to, "%s/%s" DRIFT_MANIFEST_SUFFIX, dir, name);
        if (unlink(to) != 0 && errno != ENOENT) goto fail; /* 2 */
        drift_fault_point();
        drift_pathf(from, sizeof from, "%s/.obsolete", journal); /* 3 */
        FILE *ob = fopen(from, "r");
        if (ob) {
            char line[512];
            while (fgets(line, sizeof line, ob)) {
                line[strcspn(line, "\n")] = 0;
                if (!plain_name(line)) continue;
                drift_pathf(to, sizeof to, "%s/%s", dir, line);
                unlink(to);
            }
            fclose(ob);
        }
        drift_fault_point();
        for (int i = 0; i < m.nfiles; i++) { /* 4 */
            drift_pathf(from, sizeof from, "%s/%s", journal, m.files[i].name);
            drift_pathf(to, sizeof to, "%s/%s", dir, m.files[i].name);
            if (!exists(from)) continue; /* moved before the interruption */
            if (rename(from, to) != 0) goto fail;
            drift_fault_point();
        }
        drift_pathf(from, sizeof from, "%s/%s" DRIFT_MANIFEST_SUFFIX, journal, name); /* 5 */
        drift_pathf(to, sizeof to, "%s/%s" DRIFT_MANIFEST_SUFFIX, dir, name);
        if (rename(from, to) != 0) goto fail;
        drift_fault_point();
    }
    remove_flat_dir(journal); /* 6 */
    drift_fault_point();
    return DRIFT_OK;
fail:
    snprintf(why, size, "cannot move '%s' to '%s' (%s); the commit journal %s is kept", from, to, strerror(errno), journal);
    return DRIFT_EIO;
}

int drift_manifest_recover(char *why, size_t size, const char *dir, const char *name)
{
    int rc = roll_forward(why, size, dir, name);
    if (rc) return rc;
    DIR *d = opendir(dir);
    if (!d) return DRIFT_OK; /* nothing there yet */
    char staging[160], path[2048];
    int sn = snprintf(staging, sizeof staging, ".%s.staging.", name);
    size_t nl = strlen(name);
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *s = e->d_name;
        if (!strncmp(s, staging, (size_t)sn) && pid_dead(s + sn)) {
            drift_pathf(path, sizeof path, "%s/%s", dir, s);
            remove_flat_dir(path);
        } else if (!strncmp(s, name, nl)) { /* "<name>...tmp.<pid>" of the earlier file-by-file writer */
            const char *t = strstr(s, ".tmp.");
            if (t && pid_dead(t + 5)) {
                drift_pathf(path, sizeof path, "%s/%s", dir, s);
                unlink(path);
            }
        }
    }
    closedir(d);
    return DRIFT_OK;
}

int drift_manifest_commit_journal(char *why, size_t size, const char *dir, const char *name)
{
    return roll_forward(why, size, dir, name);
}
