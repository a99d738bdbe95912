/* fuzz/calc_input.c — the calculator's reader (calc_input.h) on any file, as text and as .npy:
 * it returns 0 with n >= 1 values or 1 with nothing, within its bounds. */
#include "common.h"
#include "calc_input.h"
#include "drift.h"

#include <stdio.h>
#include <unistd.h>

static int read_as(const char *suffix, const uint8_t *data, size_t size)
{
    /* The reader takes a path (its .npy size check needs a regular file), so each input is a
     * file: in /dev/shm (memory) when there is one, not on disk (31,000 executions a second on
     * the loaded 2-core machine). */
    static const char *dir;
    if (!dir) dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    char path[64];
    snprintf(path, sizeof path, "%s/drift_fuzz_calc_%ld%s", dir, (long)getpid(), suffix);
    FILE *fp = fopen(path, "wb");
    if (!fp) return 0;
    fwrite(data, 1, size, fp);
    fclose(fp);
    double *v;
    size_t n;
    static FILE *devnull;
    if (!devnull) devnull = fopen("/dev/null", "w");
    FILE *err = stderr; /* the reader's one-line refusals: the FILE, not fd 2 (ASan's) */
    stderr = devnull;
    int rc = calc_read_values_as(path, (drift_format_t)(size % DRIFT_NFORMATS), &v, &n);
    stderr = err;
    unlink(path);
    if (rc == 0 && (n == 0 || !v)) abort();
    if (rc != 0 && (n != 0 || v)) abort();
    free(v);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_as(".txt", data, size);
    read_as(".npy", data, size);
    return 0;
}
