/* file_read.c — a whole regular file in memory (file_read.h). */
#include "file_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "drift.h"
#include "why.h"

unsigned char *drift_file_read(
    const char *path, size_t max, const char *what, size_t *size, char *err, size_t errsz, int *rc)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        *rc = drift_why(err, errsz, DRIFT_EIO, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        *rc = drift_why(err, errsz, DRIFT_EIO, "%s: not a regular file", path);
        return NULL;
    }
    if ((unsigned long long)st.st_size > (unsigned long long)max) {
        *rc = drift_why(
            err, errsz, DRIFT_EINVAL, "%s: %lld bytes, more than a %s of %zu", path, (long long)st.st_size, what, max);
        return NULL;
    }
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        *rc = drift_why(err, errsz, DRIFT_EIO, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t len = (size_t)st.st_size;
    unsigned char *buf = malloc(len + 1);
    if (!buf) {
        fclose(fp);
        *rc = drift_why(err, errsz, DRIFT_ENOMEM, "out of memory reading %s", path);
        return NULL;
    }
    size_t got = fread(buf, 1, len, fp);
    int bad = ferror(fp) || got != len || fgetc(fp) != EOF; /* the file changed under us */
    fclose(fp);
    if (bad) {
        free(buf);
        *rc = drift_why(err, errsz, DRIFT_EIO, "cannot read %s", path);
        return NULL;
    }
    buf[len] = 0;
    *size = len;
    *rc = 0;
    return buf;
}
