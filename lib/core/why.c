/* why.c — an error's code and message (why.h). */
#include "why.h"

#include <stdarg.h>
#include <stdio.h>

int drift_why(char *why, size_t size, int code, const char *fmt, ...)
{
    if (why && size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
    }
    return code;
}
