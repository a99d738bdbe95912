/* unicode_class.c — codepoint classes and lenient UTF-8 (see unicode_class.h). */
#include "unicode_class.h"

unsigned drift_unicode_class(uint32_t cp)
{
    if (cp > DRIFT_UNICODE_MAX) return DRIFT_UC_UNDEFINED;
    size_t lo = 0, hi = drift_unicode_nranges; /* the last entry whose start <= cp */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((drift_unicode_ranges[mid] >> 4) <= cp)
            lo = mid;
        else
            hi = mid;
    }
    return drift_unicode_ranges[lo] & 15u;
}

uint32_t drift_utf8_next(const unsigned char *s, size_t n, size_t *used)
{
    unsigned c = s[0];
    *used = 1;
    if (c < 0x80) return c;
    size_t len = c >= 0xF8 ? 0 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (!len || len > n) return DRIFT_UNICODE_REPLACEMENT;
    uint32_t cp = c & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return DRIFT_UNICODE_REPLACEMENT;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if (cp > DRIFT_UNICODE_MAX) return DRIFT_UNICODE_REPLACEMENT;
    *used = len;
    return cp;
}

size_t drift_utf8_put(uint32_t cp, unsigned char out[4])
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | cp >> 6);
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | cp >> 18);
    out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}
