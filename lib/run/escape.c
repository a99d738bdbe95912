/* escape.c — one value per line (escape.h). */
#include "escape.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (1..4; p[0] >= 0x80), or 0 when it is not one
 * (RFC 3629: no overlong forms, no surrogates, nothing beyond U+10FFFF). */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    int n;
    unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong below U+0800 */
        else if (c == 0xed)
            hi = 0x9f; /* surrogates U+D800..U+DFFF */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong below U+10000 */
        else if (c == 0xf4)
            hi = 0x8f; /* beyond U+10FFFF */
    } else
        return 0; /* continuation byte, C0, C1, F5..FF */
    if (p[1] < lo || p[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf) return 0;
    return n;
}

/* 1 when the ASCII byte c must be written as \xHH. */
static int must_escape(unsigned c, const char *also)
{
    return c < 0x20 || c == 0x7f || c == '\\' || (c && also && strchr(also, (int)c));
}

size_t drift_escape(char *dst, size_t size, const char *s, const char *also)
{
    static const char HEX[] = "0123456789abcdef";
    size_t len = 0;
#define PUT(ch)                                    \
    do {                                           \
        if (len + 1 < size) dst[len] = (char)(ch); \
        len++;                                     \
    } while (0)
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = *p < 0x80 ? (must_escape(*p, also) ? 0 : 1) : utf8_len(p);
        if (n == 0) {
            PUT('\\');
            PUT('x');
            PUT(HEX[*p >> 4]);
            PUT(HEX[*p & 15]);
            p++;
            continue;
        }
        for (int i = 0; i < n; i++) PUT(p[i]);
        p += n;
    }
#undef PUT
    if (size) dst[len < size ? len : size - 1] = 0;
    return len;
}

int drift_escape_fputs(FILE *fp, const char *s, const char *also)
{
    char small[512];
    size_t n = drift_escape(small, sizeof small, s, also);
    if (n < sizeof small) return fputs(small, fp) < 0 ? -1 : 0;
    char *big = malloc(n + 1);
    if (!big) return -1;
    drift_escape(big, n + 1, s, also);
    int rc = fputs(big, fp) < 0 ? -1 : 0;
    free(big);
    return rc;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1; /* the escape writes lowercase only: one spelling per value */
}

long drift_unescape(char *dst, size_t size, const char *s, size_t n, const char *also)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    size_t len = 0;
    while (p < end) {
        unsigned char b;
        if (*p == '\\') {
            int h, l;
            if (end - p < 4 || p[1] != 'x' || (h = hexval(p[2])) < 0 || (l = hexval(p[3])) < 0) return -1;
            b = (unsigned char)(h * 16 + l);
            if (b == 0) return -1;
            /* Only what the escape writes as \xHH: an escaped 'a' would be a second spelling. */
            if (b < 0x80 && !must_escape(b, also)) return -1;
            p += 4;
        } else if (*p < 0x80) {
            if (must_escape(*p, also)) return -1;
            b = *p++;
        } else {
            int k = end - p >= 4 ? utf8_len(p) : 0;
            if (!k && end - p < 4) { /* a sequence near the end: judge it on a padded copy */
                unsigned char pad[4] = {0, 0, 0, 0};
                memcpy(pad, p, (size_t)(end - p));
                k = utf8_len(pad);
            }
            if (!k) return -1; /* invalid UTF-8 is always escaped */
            if (len + (size_t)k >= size) return -1;
            memcpy(dst + len, p, (size_t)k);
            len += (size_t)k;
            p += k;
            continue;
        }
        if (len + 1 >= size) return -1;
        dst[len++] = (char)b;
    }
    if (!size) return -1;
    dst[len] = 0;
    return (long)len;
}

int drift_argv_fputs(FILE *fp, int argc, const char *const *argv)
{
    for (int i = 0; i < argc; i++)
        if (fputc(' ', fp) == EOF || drift_escape_fputs(fp, argv[i], " ") != 0) return -1;
    return 0;
}

int drift_argv_parse(char **words, int max, const char *text)
{
    int n = 0;
    if (!*text) return 0;
    if (*text != ' ') return -1;
    for (const char *p = text; *p == ' ';) {
        const char *w = p + 1;
        size_t len = strcspn(w, " ");
        char *d = n < max ? malloc(len + 1) : NULL;
        if (!d || drift_unescape(d, len + 1, w, len, " ") < 0) {
            free(d);
            while (n > 0) free(words[--n]);
            return -1;
        }
        words[n++] = d;
        p = w + len;
    }
    return n;
}
