/* out_dir.c — --out: the directory checked before any work (drift_out_check), created with
 * its parents when the files are opened (drift_out_create, drift_out_path), and the
 * directories a failed run made removed at exit. */
#include "cli.h"
#include "drift.h"
#include "outlock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p: the docs promise --out is "created if missing", parents included. *top (when not
 * NULL) becomes the length of the shallowest prefix this call created, 0 when it created none. */
static int make_dirs(const char *dir, size_t *top)
{
    char path[4096];
    size_t len = strlen(dir);
    if (top) *top = 0;
    if (len == 0 || len >= sizeof path) return -1;
    memcpy(path, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != 0) continue;
        char c = path[i];
        path[i] = 0;
        struct stat st;
        if (stat(path, &st) != 0) {
            if (mkdir(path, 0777) == 0) {
                if (top && !*top) *top = i;
            } else if (errno != EEXIST) {
                return -1;
            }
        }
        path[i] = c;
    }
    return 0;
}

/* The directories drift_out_create made: the path and the length of its shallowest new prefix. */
static struct {
    char dir[4096];
    size_t top;
} made;

/* At exit: the lock file first (the directory is empty only without it), then each directory
 * this run made, deepest first, for as long as rmdir finds it empty. A run that wrote its files
 * keeps them (rmdir refuses a directory with entries); nothing else is ever removed. */
static void remove_made(void)
{
    drift_out_unlock();
    char path[4096];
    snprintf(path, sizeof path, "%s", made.dir);
    for (;;) {
        size_t n = strlen(path);
        while (n > 1 && path[n - 1] == '/') path[--n] = 0;
        if (n < made.top || rmdir(path) != 0) return;
        char *slash = strrchr(path, '/');
        if (!slash || (size_t)(slash - path) < made.top) return;
        *slash = 0;
    }
}

void drift_out_create(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0) return;
    size_t top;
    if (make_dirs(dir, &top) != 0) drift_die("--out: cannot create directory '%s'", dir);
    if (!top || made.top) return; /* made by another process meanwhile, or already registered */
    snprintf(made.dir, sizeof made.dir, "%s", dir);
    made.top = top;
    atexit(remove_made);
}

void drift_out_path(char *buf, size_t size, const drift_cli_t *cli, const char *suffix)
{
    struct stat st;
    if (stat(cli->out_dir, &st) != 0) {
        if (make_dirs(cli->out_dir, NULL) != 0) drift_die("--out: cannot create directory '%s'", cli->out_dir);
    } else if (!S_ISDIR(st.st_mode)) {
        drift_die("--out: '%s' is not a directory", cli->out_dir);
    }
    int n = snprintf(buf, size, "%s/%s%s", cli->out_dir, cli->spec->name, suffix);
    if (n < 0 || (size_t)n >= size) drift_die("--out: path too long");
}

/* The longest file name a run writes under --out: "<name><suffix>" and the staging names of
 * table.c; the path must leave room for them within table.h's 1024-byte paths. */
#define OUT_DIR_MAX 800

void drift_out_check(const char *dir)
{
    if (!*dir) drift_die("--out: empty directory name");
    if (strlen(dir) > OUT_DIR_MAX) drift_die("--out: path too long (accepted: at most %d characters)", OUT_DIR_MAX);
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) drift_die("--out: '%s' is not a directory", dir);
        /* The staging directory of table.c is made here first: a probe of exactly what the
         * commit needs (create and remove an entry), not a guess from permission bits. */
        char probe[1024];
        snprintf(probe, sizeof probe, "%s/.drift-probe.%ld", dir, (long)getpid());
        if (mkdir(probe, 0777) != 0) drift_die("--out: cannot write in '%s' (%s)", dir, strerror(errno));
        rmdir(probe);
        return;
    }
    if (errno != ENOENT) drift_die("--out: cannot use '%s' (%s)", dir, strerror(errno));
    /* Missing: it is created with its parents when the files are opened; its nearest existing
     * ancestor must be a directory we can create entries in. Nothing is left now, so a
     * later refusal leaves no empty directory behind. */
    char anc[1024];
    snprintf(anc, sizeof anc, "%s", dir);
    for (;;) {
        char *slash = strrchr(anc, '/');
        while (slash && slash > anc && slash[1] == 0) *slash = 0, slash = strrchr(anc, '/'); /* trailing '/' */
        if (!slash)
            snprintf(anc, sizeof anc, ".");
        else if (slash == anc)
            anc[1] = 0;
        else
            *slash = 0;
        if (stat(anc, &st) == 0) break;
        if (errno != ENOENT) drift_die("--out: cannot create '%s' (%s: %s)", dir, anc, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) drift_die("--out: cannot create '%s' ('%s' is not a directory)", dir, anc);
    /* tried, not guessed from permission bits: root passes access(2) on /proc */
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/.drift-probe.%ld", anc, (long)getpid());
    if (mkdir(probe, 0777) != 0) drift_die("--out: cannot create '%s' (%s: %s)", dir, anc, strerror(errno));
    rmdir(probe);
}
