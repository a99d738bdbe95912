/* witness_text.c: string files and escaping (rules in witness_text.h). */
#include "witness_text.h"

#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Unescapes src into dst (dst has room for strlen(src)+1). Returns length or -1. */
static long unescape(char *dst, const char *src, const char *path, int line, char *err, size_t errsz)
{
    size_t o = 0;
    for (size_t i = 0; src[i]; i++) {
        if (src[i] != '\\') {
            dst[o++] = src[i];
            continue;
        }
        char c = src[++i];
        if (c == '\0') {
            snprintf(err, errsz, "%s:%d: escape: expected a character after the backslash, found the end of the line",
                path, line);
            return -1;
        }
        switch (c) {
        case 'n': dst[o++] = '\n'; break;
        case 't': dst[o++] = '\t'; break;
        case 'r': dst[o++] = '\r'; break;
        case '\\': dst[o++] = '\\'; break;
        case 'x': {
            int hi = src[i + 1] ? hexval(src[i + 1]) : -1;
            int lo = hi >= 0 && src[i + 2] ? hexval(src[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                snprintf(err, errsz, "%s:%d: escape: expected \\xHH with HH a nonzero hex byte, found \\x%.2s", path,
                    line, src + i + 1);
                return -1;
            }
            dst[o++] = (char)(hi * 16 + lo);
            i += 2;
            break;
        }
        default:
            snprintf(err, errsz, "%s:%d: escape: expected one of \\n \\t \\r \\\\ \\xHH, found \\%c", path, line, c);
            return -1;
        }
    }
    dst[o] = '\0';
    return (long)o;
}

int witness_read_strings(witness_string **out, int *n, const char *path, char *err, size_t errsz)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsz, "%s: cannot open for reading", path);
        return -1;
    }
    witness_string *v = NULL;
    int count = 0, cap = 0, line = 0;
    size_t bufcap = 256;
    char *buf = malloc(bufcap); /* allocated up front: an empty first line still writes its NUL */
    int rc = 0;
    if (!buf) {
        fclose(f);
        snprintf(err, errsz, "%s: out of memory", path);
        return -1;
    }
    for (;;) {
        size_t len = 0;
        int c;
        while ((c = fgetc(f)) != EOF && c != '\n') {
            if (len + 2 > bufcap) {
                bufcap *= 2;
                char *nb = realloc(buf, bufcap);
                if (!nb) {
                    snprintf(err, errsz, "%s: out of memory", path);
                    rc = -1;
                    goto done;
                }
                buf = nb;
            }
            if (c == '\0') {
                snprintf(err, errsz, "%s:%d: byte: expected text, found a NUL byte", path, line + 1);
                rc = -1;
                goto done;
            }
            buf[len++] = (char)c;
        }
        if (c == EOF && len == 0) break;
        line++;
        if (len > 0 && buf[len - 1] == '\r') len--; /* tolerate CRLF files */
        buf[len] = '\0';
        if (len == 0 || buf[0] == '#') continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 16;
            witness_string *nv = realloc(v, (size_t)cap * sizeof *nv);
            if (!nv) {
                snprintf(err, errsz, "%s: out of memory", path);
                rc = -1;
                goto done;
            }
            v = nv;
        }
        witness_string *s = &v[count];
        s->raw = malloc(len + 1);
        s->text = malloc(len + 1);
        if (!s->raw || !s->text) {
            free(s->raw);
            free(s->text);
            snprintf(err, errsz, "%s: out of memory", path);
            rc = -1;
            goto done;
        }
        memcpy(s->raw, buf, len + 1);
        long ul = unescape(s->text, buf, path, line, err, errsz);
        if (ul < 0) {
            free(s->raw);
            free(s->text);
            rc = -1;
            goto done;
        }
        s->len = (size_t)ul;
        s->line = line;
        count++;
        if (c == EOF) break;
    }
    if (ferror(f)) {
        snprintf(err, errsz, "%s: read error", path);
        rc = -1;
    }
done:
    fclose(f);
    free(buf);
    if (rc != 0) {
        witness_free_strings(v, count);
        return rc;
    }
    *out = v;
    *n = count;
    return 0;
}

void witness_free_strings(witness_string *s, int n)
{
    for (int i = 0; i < n; i++) {
        free(s[i].text);
        free(s[i].raw);
    }
    free(s);
}

/* Length of the valid UTF-8 sequence starting at s (1..4), or 0 if it is not valid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t need;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else
        return 0;
    if (n < need) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t k = 2; k < need; k++)
        if (s[k] < 0x80 || s[k] > 0xBF) return 0;
    return need;
}

void witness_escape(FILE *f, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        if (c == '\n') {
            fputs("\\n", f);
            i++;
            continue;
        }
        if (c == '\t') {
            fputs("\\t", f);
            i++;
            continue;
        }
        if (c == '\r') {
            fputs("\\r", f);
            i++;
            continue;
        }
        if (c == '\\') {
            fputs("\\\\", f);
            i++;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\x%02x", c);
            i++;
            continue;
        }
        size_t k = utf8_len(u + i, n - i);
        if (k == 0) {
            fprintf(f, "\\x%02x", c);
            i++;
            continue;
        }
        fwrite(u + i, 1, k, f);
        i += k;
    }
}

void witness_escape_field(FILE *f, const char *s, size_t n)
{
    if (n > 0 && s[0] == '#') {
        fputs("\\x23", f);
        s++;
        n--;
    }
    witness_escape(f, s, n);
}
