/* backend.c — the registered accelerator, its selection, and the twin check's bookkeeping
 * (backend.h). */
#include "backend.h"
#include "drift.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const drift_backend_ops_t *registered;
static int active;
static drift_backend_mismatch_fn on_mismatch;
static char message[512];
static drift_backend_stats_t stats;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void drift_backend_register(const drift_backend_ops_t *ops)
{
    registered = ops;
    if (!ops) active = 0;
}

const drift_backend_ops_t *drift_backend_registered(void) { return registered; }

int drift_backend_use(int on, char *err, size_t errsz)
{
    if (!on) {
        active = 0;
        return DRIFT_OK;
    }
    if (!registered) {
        if (err && errsz)
            snprintf(err, errsz, "this build has no CUDA backend: it was built without nvcc or with -DDRIFT_CUDA=OFF");
        return DRIFT_EUNSUPPORTED;
    }
    char tmp[256] = "";
    if (!registered->available || registered->available(tmp, sizeof tmp) != 1) {
        if (err && errsz) snprintf(err, errsz, "%s", *tmp ? tmp : "no CUDA device found");
        return DRIFT_EUNSUPPORTED;
    }
    active = 1;
    return DRIFT_OK;
}

int drift_backend_active(void) { return active && registered; }

void drift_backend_on_mismatch(drift_backend_mismatch_fn fn) { on_mismatch = fn; }

const char *drift_backend_message(void) { return message; }

drift_backend_stats_t drift_backend_stats(void)
{
    pthread_mutex_lock(&lock);
    drift_backend_stats_t s = stats;
    pthread_mutex_unlock(&lock);
    return s;
}

/* Bits, not values: -0 and +0 differ, every NaN equals every NaN (a kernel's NaN payload is
 * not part of its contract). */
static int same_bits(double a, double b)
{
    if (a != a && b != b) return 1;
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

size_t drift_backend_first_diff(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!same_bits(a[i], b[i])) return i;
    return n;
}

int drift_backend_mismatch(const char *kernel, size_t i, size_t cols, double device, double cpu)
{
    pthread_mutex_lock(&lock);
    if (cols)
        snprintf(message, sizeof message,
            "%s: %s result differs from its CPU twin at [%zu,%zu]: device %a, cpu %a (a bug in one of them)", kernel,
            registered ? registered->name : "device", i / cols, i % cols, device, cpu);
    else
        snprintf(message, sizeof message,
            "%s: %s result differs from its CPU twin at [%zu]: device %a, cpu %a (a bug in one of them)", kernel,
            registered ? registered->name : "device", i, device, cpu);
    pthread_mutex_unlock(&lock);
    if (on_mismatch) on_mismatch(message);
    return DRIFT_ERANGE;
}

int drift_backend_failed(int rc, const char *what)
{
    pthread_mutex_lock(&lock);
    const char *m = registered && registered->message ? registered->message() : "";
    snprintf(message, sizeof message, "%s: %s", what, m && *m ? m : drift_strerror(rc));
    pthread_mutex_unlock(&lock);
    return rc;
}

void drift_backend_count(int checked, int measured, int on_cpu)
{
    pthread_mutex_lock(&lock);
    stats.checked += (unsigned)checked;
    stats.measured += (unsigned)measured;
    stats.on_cpu += (unsigned)on_cpu;
    pthread_mutex_unlock(&lock);
}

static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
void drift_backend_lock(void) { pthread_mutex_lock(&hook_lock); }
void drift_backend_unlock(void) { pthread_mutex_unlock(&hook_lock); }
