/* why.c — an error's code and message (why.h). */
#include "why.h"
#include "drift.h"

#include <stdarg.h>
#include <stdio.h>

int drift_why(char *err, size_t errsz, int code, const char *fmt, ...)
{
    if (err && errsz) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsz, fmt, ap);
        va_end(ap);
    }
    return code;
}

void drift_bytes_text(char *buf, size_t size, double bytes)
{
    static const char *const UNIT[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
    int u = 0;
    while (bytes >= 999.5 && u < 6) bytes /= 1000, u++;
    snprintf(buf, size, bytes < 9.95 && u ? "%.1f %s" : "%.0f %s", bytes, UNIT[u]);
}

int drift_why_oom(char *err, size_t errsz, double bytes, const char *fmt, ...)
{
    if (err && errsz) {
        char what[256], b[32];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        drift_bytes_text(b, sizeof b, bytes);
        snprintf(err, errsz, "out of memory allocating %s (%s)", what, b);
    }
    return DRIFT_ENOMEM;
}
