/* outlock.c — one writer per experiment and output directory (outlock.h). */
#include "outlock.h"
#include "drift.h"
#include "manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    int fd; /* -1 when none is held; 0 in the zeroed state means "never taken" (see held()) */
    int taken;
    char path[2048];
    char dir[1024], name[96];
    dev_t dev;
    ino_t ino;
} lk;

static int held(void) { return lk.taken && lk.fd >= 0; }

int drift_out_locked(const char *dir, const char *name)
{
    return held() && !strcmp(lk.dir, dir) && !strcmp(lk.name, name);
}

void drift_out_unlock(void)
{
    if (!held()) return;
    /* Still ours (not replaced since): remove the name first, then drop the lock, so that a
     * waiting opener of the old file sees it unlinked and opens the name afresh. */
    struct stat st;
    if (stat(lk.path, &st) == 0 && st.st_dev == lk.dev && st.st_ino == lk.ino) unlink(lk.path);
    close(lk.fd);
    lk.fd = -1;
}

static void unlock_at_exit(void) { drift_out_unlock(); }

int drift_out_lock(char *err, size_t errsz, const char *dir, const char *name)
{
    if (held()) {
        if (drift_out_locked(dir, name)) return DRIFT_OK;
        snprintf(err, errsz, "'%s': this program already writes %s's files in '%s'", dir, lk.name, lk.dir);
        return DRIFT_EINVAL;
    }
    if (strlen(dir) >= sizeof lk.dir || strlen(name) >= sizeof lk.name) {
        snprintf(err, errsz, "'%s': path too long for its lock file", dir);
        return DRIFT_EINVAL;
    }
    char path[2048];
    drift_pathf(path, sizeof path, "%s/.%s.lock", dir, name);
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
        if (fd < 0) {
            snprintf(err, errsz, "cannot make the lock file '%s' (%s)", path, strerror(errno));
            return DRIFT_EIO;
        }
        struct stat fst, pst;
        if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {
            close(fd);
            snprintf(
                err, errsz, "'%s' is in the way (not a regular file; it is the lock file of %s's runs)", path, name);
            return DRIFT_EIO;
        }
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        int e = fcntl(fd, F_SETLK, &fl) == 0 ? 0 : errno;
        /* A file system without record locks (an NFS mount without lockd): the run goes on
         * unlocked, as every run did before the lock existed, rather than never. */
        if (e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS) e = 0;
        if (e) {
            struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
            long pid = fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK ? (long)q.l_pid : 0;
            close(fd);
            if (e != EACCES && e != EAGAIN) {
                snprintf(err, errsz, "cannot lock '%s' (%s)", path, strerror(e));
                return DRIFT_EIO;
            }
            if (pid > 0)
                snprintf(err, errsz,
                    "'%s' is in use: pid %ld is writing %s's files there (wait for it, or choose another --out)", dir,
                    pid, name);
            else
                snprintf(err, errsz, "'%s' is in use: another process holds %s (wait for it, or choose another --out)",
                    dir, path);
            return DRIFT_EIO;
        }
        /* Locked; but if the previous holder removed the name meanwhile, the lock is on a file
         * nobody else will open: open the name again. */
        if (stat(path, &pst) != 0 || pst.st_dev != fst.st_dev || pst.st_ino != fst.st_ino) {
            close(fd);
            continue;
        }
        static int registered;
        if (!registered) atexit(unlock_at_exit), registered = 1;
        lk.fd = fd;
        lk.taken = 1;
        lk.dev = fst.st_dev;
        lk.ino = fst.st_ino;
        snprintf(lk.path, sizeof lk.path, "%s", path);
        snprintf(lk.dir, sizeof lk.dir, "%s", dir);
        snprintf(lk.name, sizeof lk.name, "%s", name);
        return DRIFT_OK;
    }
    snprintf(err, errsz, "cannot lock '%s' (its lock file keeps being replaced)", path);
    return DRIFT_EIO;
}
