/* manifest.c — a run's files as one unit (manifest.h): the manifest reader and checker, the
 * roll-forward of an interrupted commit, the cleaning of what dead runs left, and the fault
 * hook the transaction test kills the commit with. */
#include "manifest.h"
#include "digest.h"
#include "drift.h"
#include "escape.h"
#include "outlock.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

int drift_manifest_name_ok(const char *name)
{
    if (!isalpha((unsigned char)name[0]) || strlen(name) >= 96) return 0;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-') return 0;
    return 1;
}

/* A file name inside <out>: no directory part, not "." or "..", nothing a reader could be led
 * out of the directory with. */
static int plain_name(const char *s) { return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, ".."); }

/* Opens path for reading only when it is a regular file: O_NONBLOCK so that a FIFO in its
 * place cannot block the open, O_NOFOLLOW so that a symlink is not taken for the file. */
FILE *drift_fopen_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *fp = fdopen(fd, "rb");
    if (!fp) close(fd);
    return fp;
}

int drift_sha256_regular(char hex[65], long long *size, const char *path)
{
    return drift_sha256_stream(hex, size, drift_fopen_regular(path));
}

/* The whole of a regular file, NUL-terminated (malloc'd), at most max bytes. 0, DRIFT_EIO or
 * DRIFT_EINVAL (larger than max). */
static int slurp_regular(char **text, size_t *len, const char *path, long max)
{
    *text = NULL;
    *len = 0;
    FILE *fp = drift_fopen_regular(path);
    if (!fp) return DRIFT_EIO;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? DRIFT_OK : DRIFT_ENOMEM;
    while (rc == DRIFT_OK) {
        if (n + 1 >= cap) {
            char *p = cap > (size_t)max ? NULL : realloc(buf, cap * 2);
            if (!p) {
                rc = cap > (size_t)max ? DRIFT_EINVAL : DRIFT_ENOMEM;
                break;
            }
            buf = p;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, fp);
        n += got;
        if (got == 0) break;
    }
    if (rc == DRIFT_OK && ferror(fp)) rc = DRIFT_EIO;
    if (rc == DRIFT_OK && n > (size_t)max) rc = DRIFT_EINVAL;
    fclose(fp);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return DRIFT_OK;
}

/* "key: VALUE" -> VALUE unescaped into dst; 0 or -1. */
static int value(char *dst, size_t size, const char *v, size_t n)
{
    return drift_unescape(dst, size, v, n, NULL) < 0 ? -1 : 0;
}

/* "SIZE SHA NAME": the size in decimal digits, 64 lowercase hex digits, the escaped name (blanks
 * escaped too). */
static int file_line(drift_manifest_file_t *f, const char *v, size_t n, const char *experiment)
{
    const char *end = v + n, *p = v;
    if (p == end || !isdigit((unsigned char)*p)) return -1;
    long long size = 0;
    for (; p < end && isdigit((unsigned char)*p); p++) {
        if (size > (0x7fffffffffffffffLL - 9) / 10) return -1;
        size = size * 10 + (*p - '0');
    }
    if (p == end || *p++ != ' ' || end - p < 66) return -1;
    for (int i = 0; i < 64; i++)
        if (!isxdigit((unsigned char)p[i]) || isupper((unsigned char)p[i])) return -1;
    memcpy(f->sha, p, 64);
    f->sha[64] = 0;
    p += 64;
    if (*p++ != ' ') return -1;
    if (drift_unescape(f->name, sizeof f->name, p, (size_t)(end - p), " ") < 0) return -1;
    f->size = size;
    /* The set's files are "<experiment><suffix>": a name outside that is not the set's. */
    return plain_name(f->name) && !strncmp(f->name, experiment, strlen(experiment)) ? 0 : -1;
}

int drift_manifest_parse(drift_manifest_t *m, const char *text, size_t n)
{
    memset(m, 0, sizeof *m);
    if (n == 0 || text[n - 1] != '\n' || memchr(text, 0, n)) return DRIFT_EINVAL;
    int have_exp = 0, have_git = 0, have_argv = 0;
    for (const char *line = text, *end; line < text + n; line = end + 1) {
        end = memchr(line, '\n', (size_t)(text + n - line));
        size_t len = (size_t)(end - line);
        if (len && line[0] == '#') continue;
#define KEY(k) (len >= sizeof(k) - 1 && !memcmp(line, k, sizeof(k) - 1))
        if (KEY("argv:")) {
            /* read by drift_manifest_argv; here only its form matters */
            if (have_argv++ || (len > 5 && line[5] != ' ')) return DRIFT_EINVAL;
        } else if (KEY("experiment: ")) {
            if (have_exp++ || value(m->experiment, sizeof m->experiment, line + 12, len - 12)) return DRIFT_EINVAL;
        } else if (KEY("git: ")) {
            if (have_git++ || value(m->git, sizeof m->git, line + 5, len - 5)) return DRIFT_EINVAL;
        } else if (KEY("file: ")) {
            /* the experiment line comes first (the writer's order), so a name can be judged */
            if (!have_exp || m->nfiles == DRIFT_MANIFEST_FILES) return DRIFT_EINVAL;
            drift_manifest_file_t *f = &m->files[m->nfiles];
            if (file_line(f, line + 6, len - 6, m->experiment)) return DRIFT_EINVAL;
            for (int i = 0; i < m->nfiles; i++)
                if (!strcmp(m->files[i].name, f->name)) return DRIFT_EINVAL; /* listed twice */
            m->nfiles++;
        } else
            return DRIFT_EINVAL;
#undef KEY
    }
    if (!have_exp || !drift_manifest_name_ok(m->experiment) || m->nfiles == 0) return DRIFT_EINVAL;
    return DRIFT_OK;
}

int drift_manifest_read(drift_manifest_t *m, const char *path)
{
    memset(m, 0, sizeof *m);
    char *text;
    size_t n;
    int rc = slurp_regular(&text, &n, path, DRIFT_MANIFEST_MAX_BYTES);
    if (rc == DRIFT_ENOMEM) return DRIFT_EIO;
    if (rc) return rc;
    rc = drift_manifest_parse(m, text, n);
    free(text);
    return rc;
}

int drift_manifest_argv(char **words, int max, const char *path)
{
    char *text;
    size_t n;
    if (slurp_regular(&text, &n, path, DRIFT_MANIFEST_MAX_BYTES) != DRIFT_OK) return DRIFT_EIO;
    int rc = DRIFT_EINVAL;
    for (char *line = text, *end; (end = strchr(line, '\n')); line = end + 1) {
        *end = 0;
        if (!strncmp(line, "argv:", 5)) {
            rc = drift_argv_parse(words, max, line + 5);
            if (rc < 0) rc = DRIFT_EINVAL;
            break;
        }
    }
    free(text);
    return rc;
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Paths here are built in 2048-byte buffers from dir, a journal name and a file name of at
 * most 255 bytes: a longer dir would cut them, and a cut path is a real, shorter one. */
#define DIR_MAX 1024

static int dir_ok(char *err, size_t errsz, const char *dir)
{
    if (strlen(dir) <= DIR_MAX) return 1;
    snprintf(err, errsz, "DIR: path too long (%zu characters; accepted: at most %d)", strlen(dir), DIR_MAX);
    return 0;
}

int drift_manifest_check(char *err, size_t errsz, const char *dir, const char *name)
{
    if (!dir_ok(err, errsz, dir)) return DRIFT_EINVAL;
    if (!drift_manifest_name_ok(name)) {
        snprintf(err, errsz, "'%s' is not an experiment name (letters, digits, '_', '-')", name);
        return DRIFT_EINVAL;
    }
    char path[2048];
    drift_pathf(path, sizeof path, "%s/.%s.commit", dir, name);
    if (exists(path)) {
        snprintf(err, errsz, "%s: a commit of %s's files was interrupted (drift-manifest recover '%s' completes it)",
            dir, name, dir);
        return DRIFT_EIO;
    }
    drift_pathf(path, sizeof path, "%s/%s" DRIFT_MANIFEST_SUFFIX, dir, name);
    drift_manifest_t m;
    int rc = drift_manifest_read(&m, path);
    if (rc == DRIFT_EIO) {
        struct stat st;
        if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
            snprintf(err, errsz, "%s: not a regular file (a run's manifest is one)", path);
        else
            snprintf(
                err, errsz, "%s: no manifest %s%s (not a complete run of %s)", dir, name, DRIFT_MANIFEST_SUFFIX, name);
        return rc;
    }
    if (rc) {
        snprintf(err, errsz, "%s: malformed manifest", path);
        return rc;
    }
    if (strcmp(m.experiment, name)) {
        snprintf(err, errsz, "%s: the manifest is %s's, not %s's", path, m.experiment, name);
        return DRIFT_EINVAL;
    }
    for (int i = 0; i < m.nfiles; i++) {
        char hex[65];
        long long n;
        struct stat st;
        drift_pathf(path, sizeof path, "%s/%s", dir, m.files[i].name);
        if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            snprintf(err, errsz, "%s: not a regular file (listed in %s%s as one)", path, name, DRIFT_MANIFEST_SUFFIX);
            return DRIFT_EINVAL;
        }
        if (drift_sha256_regular(hex, &n, path) != 0) {
            snprintf(err, errsz, "%s: missing or unreadable (listed in %s%s)", path, name, DRIFT_MANIFEST_SUFFIX);
            return DRIFT_EIO;
        }
        if (n != m.files[i].size || strcmp(hex, m.files[i].sha)) {
            snprintf(err, errsz, "%s: does not match the manifest (%s, not the run's file)", path,
                n != m.files[i].size ? "size differs" : "SHA-256 differs");
            return DRIFT_EINVAL;
        }
    }
    return DRIFT_OK;
}

/* Removes a staging or journal directory of name: only what a commit puts there (the set's
 * files "<name>*", its manifest, ".obsolete"); anything else keeps the directory, and 0 says
 * so. 1 when it is gone. */
static int remove_set_dir(const char *path, const char *name)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        char p[2048];
        size_t nl = strlen(name);
        while ((e = readdir(d)))
            if (!strncmp(e->d_name, name, nl) || !strcmp(e->d_name, ".obsolete")) {
                drift_pathf(p, sizeof p, "%s/%s", path, e->d_name);
                struct stat st;
                if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode)) unlink(p);
            }
        closedir(d);
    }
    return rmdir(path) == 0 || errno == ENOENT;
}

static int pid_dead(const char *digits)
{
    char *end;
    if (!isdigit((unsigned char)*digits)) return 0;
    long pid = strtol(digits, &end, 10);
    if (*end || pid <= 0) return 0; /* not ours to judge: left alone */
    return pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* One name of the journal's ".obsolete" list: escaped, plain, the set's. */
static int obsolete_name(char *dst, size_t size, const char *line, const char *name)
{
    return drift_unescape(dst, size, line, strlen(line), NULL) >= 0 && plain_name(dst) &&
           !strncmp(dst, name, strlen(name));
}

/* Steps 2..6 of manifest.h on the journal "<dir>/.<name>.commit". */
static int roll_forward(char *err, size_t errsz, const char *dir, const char *name)
{
    char journal[2048], from[2048], to[2048];
    drift_pathf(journal, sizeof journal, "%s/.%s.commit", dir, name);
    if (!exists(journal)) return DRIFT_OK;
    drift_manifest_t m;
    drift_pathf(from, sizeof from, "%s/%s" DRIFT_MANIFEST_SUFFIX, journal, name);
    int have_manifest = exists(from);
    if (have_manifest) { /* steps 5 and 6 not yet done */
        if (drift_manifest_read(&m, from) != DRIFT_OK || strcmp(m.experiment, name)) {
            snprintf(err, errsz,
                "%s: malformed manifest in the commit journal (it is not %s's: move the journal away to use the directory)",
                journal, name);
            return DRIFT_EIO;
        }
        drift_pathf(to, sizeof to, "%s/%s" DRIFT_MANIFEST_SUFFIX, dir, name);
        if (unlink(to) != 0 && errno != ENOENT) goto fail; /* 2 */
        drift_fault_point();
        drift_pathf(from, sizeof from, "%s/.obsolete", journal); /* 3 */
        FILE *ob = drift_fopen_regular(from);
        if (ob) {
            char line[1200], nm[256];
            while (fgets(line, sizeof line, ob)) {
                line[strcspn(line, "\n")] = 0;
                if (!obsolete_name(nm, sizeof nm, line, name)) continue;
                int listed = 0; /* a file the new set has is replaced in step 4, never removed */
                for (int i = 0; i < m.nfiles && !listed; i++) listed = !strcmp(m.files[i].name, nm);
                drift_pathf(to, sizeof to, "%s/%s", dir, nm);
                struct stat st;
                if (!listed && lstat(to, &st) == 0 && S_ISREG(st.st_mode)) unlink(to);
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
    if (!remove_set_dir(journal, name)) { /* 6 */
        snprintf(err, errsz,
            "%s: the commit is complete, but the journal holds entries no commit put there (move them away)", journal);
        return DRIFT_EIO;
    }
    drift_fault_point();
    return DRIFT_OK;
fail:
    snprintf(
        err, errsz, "cannot move '%s' to '%s' (%s); the commit journal %s is kept", from, to, strerror(errno), journal);
    return DRIFT_EIO;
}

/* "F.tmp.<dead pid>" for F in names: a temporary of the one-file writer (table.c) whose process
 * died before renaming it. */
static void remove_dead_temporaries(const char *dir, const char *s, const char *const *names, int n)
{
    const char *t = strstr(s, ".tmp.");
    if (!t || !pid_dead(t + 5)) return;
    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == (size_t)(t - s) && !strncmp(s, names[i], (size_t)(t - s))) {
            char path[2048];
            struct stat st;
            drift_pathf(path, sizeof path, "%s/%s", dir, s);
            if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
            return;
        }
}

int drift_manifest_recover_with(
    char *err, size_t errsz, const char *dir, const char *name, const char *const *own, int nown)
{
    if (!dir_ok(err, errsz, dir)) return DRIFT_EINVAL;
    if (!drift_manifest_name_ok(name)) {
        snprintf(err, errsz, "'%s' is not an experiment name (letters, digits, '_', '-'): nothing recovered", name);
        return DRIFT_EINVAL;
    }
    struct stat st;
    if (stat(dir, &st) != 0) return DRIFT_OK; /* nothing there yet */
    int mine = !drift_out_locked(dir, name);
    char path[2048];
    if (mine && access(dir, W_OK) != 0) {
        /* A read-only directory (a shared results tree) cannot hold a lock file, nor be
         * changed by a recovery: fine unless a commit is pending there. */
        drift_pathf(path, sizeof path, "%s/.%s.commit", dir, name);
        if (!exists(path)) return DRIFT_OK;
        snprintf(err, errsz, "%s: a commit of %s's files was interrupted, and '%s' is not writable (%s)", path, name,
            dir, strerror(EACCES));
        return DRIFT_EIO;
    }
    if (mine && drift_out_lock(err, errsz, dir, name) != DRIFT_OK) return DRIFT_EIO;
    /* The names this recovery may clean up after: the current set's, the journal's, the caller's. */
    drift_manifest_t cur, jr;
    drift_pathf(path, sizeof path, "%s/%s" DRIFT_MANIFEST_SUFFIX, dir, name);
    if (drift_manifest_read(&cur, path) != DRIFT_OK) cur.nfiles = 0;
    drift_pathf(path, sizeof path, "%s/.%s.commit/%s" DRIFT_MANIFEST_SUFFIX, dir, name, name);
    if (drift_manifest_read(&jr, path) != DRIFT_OK || strcmp(jr.experiment, name)) jr.nfiles = 0;
    const char *names[2 * DRIFT_MANIFEST_FILES + 64];
    int nn = 0;
    for (int i = 0; i < cur.nfiles; i++) names[nn++] = cur.files[i].name;
    for (int i = 0; i < jr.nfiles; i++) names[nn++] = jr.files[i].name;
    for (int i = 0; i < nown && nn < (int)(sizeof names / sizeof names[0]); i++) names[nn++] = own[i];

    int rc = roll_forward(err, errsz, dir, name);
    DIR *d = rc ? NULL : opendir(dir);
    if (d) {
        char staging[160];
        int sn = snprintf(staging, sizeof staging, ".%s.staging.", name);
        struct dirent *e;
        while ((e = readdir(d))) {
            const char *s = e->d_name;
            if (!strncmp(s, staging, (size_t)sn) && pid_dead(s + sn)) {
                drift_pathf(path, sizeof path, "%s/%s", dir, s);
                if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) remove_set_dir(path, name);
            } else
                remove_dead_temporaries(dir, s, names, nn);
        }
        closedir(d);
    }
    if (mine) drift_out_unlock();
    return rc;
}

int drift_manifest_recover(char *err, size_t errsz, const char *dir, const char *name)
{
    return drift_manifest_recover_with(err, errsz, dir, name, NULL, 0);
}

int drift_manifest_commit_journal(char *err, size_t errsz, const char *dir, const char *name)
{
    return roll_forward(err, errsz, dir, name);
}
