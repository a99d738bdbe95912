/* outlock.h — one writer per experiment and output directory.
 *
 * Two runs of one experiment into one --out used to interleave their staging, commit and
 * recovery steps, and each could roll back or remove what the other had written. A run now
 * holds an advisory POSIX record lock (fcntl F_SETLK, write lock on the whole file) on
 * "<out>/.<name>.lock" from the moment --out is validated (drift_out_lock_cli, which creates
 * a missing --out first) to the end of its commit; recovery
 * (drift-manifest recover) holds it too. A second run does not wait: it refuses with one line
 * naming the directory and the holder's pid, exit 2, before it touches anything.
 *
 * The kernel drops the lock when its holder dies, SIGKILL included, so a killed run never
 * jams the directory: the next run finds the file unlocked, takes it, and rolls the killed
 * commit forward. The lock file is removed when the lock is released; a run that opens a file
 * just removed by the previous holder sees that its inode is no longer the name's and opens
 * the name again, so two runs can never hold two different files of one name. On a file
 * system that has no record locks (ENOLCK: NFS without lockd) a run goes on unlocked. */
#ifndef DRIFT_OUTLOCK_H
#define DRIFT_OUTLOCK_H

#include <stddef.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Takes the lock of experiment name in the existing directory dir. 0, or DRIFT_EIO with err
 * (one line) when another process holds it ("'DIR' is in use by pid P, writing NAME's
 * files ...") or the lock file cannot be made. Taking the lock this process already holds
 * (same dir and name) is a no-op; a process holds at most one (another is DRIFT_EINVAL). */
DRIFT_MUST_CHECK int drift_out_lock(char *err, size_t errsz, const char *dir, const char *name);
/* Removes the lock file and drops the lock (also done at exit). Safe when none is held. */
void drift_out_unlock(void);
/* 1 when this process holds the lock of name in dir. */
int drift_out_locked(const char *dir, const char *name);

#ifdef __cplusplus
}
#endif

#endif
