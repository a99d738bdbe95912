/* prompt_file.c — prompts one a line, with escapes (prompt_file.h). */
#include "prompt_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "file_read.h"
#include "why.h"

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Unescape line [s, e) into out (at least e - s + 1 bytes). */
static int unescape(char *out, const char *s, const char *e, const char *name, int lineno, char *err, size_t errsz)
{
    char *o = out;
    for (const char *p = s; p < e; p++) {
        if (*p == 0)
            return drift_why(err, errsz, DRIFT_EINVAL, "%s: line %d: a NUL byte (prompts are text)", name, lineno);
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        if (++p == e)
            return drift_why(err, errsz, DRIFT_EINVAL, "%s: line %d: a trailing backslash (write \\\\)", name, lineno);
        switch (*p) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'r': *o++ = '\r'; break;
        case '\\': *o++ = '\\'; break;
        case 'x': {
            int hi = p + 1 < e ? hexval(p[1]) : -1, lo = p + 2 < e ? hexval(p[2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return drift_why(
                    err, errsz, DRIFT_EINVAL, "%s: line %d: \\x needs two hex digits of a non-zero byte", name, lineno);
            *o++ = (char)(hi * 16 + lo);
            p += 2;
            break;
        }
        default:
            return drift_why(err, errsz, DRIFT_EINVAL,
                "%s: line %d: unknown escape '\\%c' (accepted: \\n \\t \\r \\\\ \\xHH)", name, lineno, *p);
        }
    }
    *o = 0;
    return 0;
}

const char *const drift_prompt_kinds[DRIFT_PROMPT_N_KINDS] = {
    "story", "fact", "code", "list", "arithmetic", "instruction", "dialogue", "chinese", "multilingual"};

int drift_prompt_kind_index(const char *name)
{
    for (int k = 0; name && k < DRIFT_PROMPT_N_KINDS; k++)
        if (!strcmp(name, drift_prompt_kinds[k])) return k;
    return -1;
}

#define FORMAT_TAG "#format:"
#define FORMAT_KINDS "#format: kind\ttext"

/* The kind named by [s, e), or -1. */
static int kind_of(const char *s, const char *e)
{
    for (int k = 0; k < DRIFT_PROMPT_N_KINDS; k++)
        if (strlen(drift_prompt_kinds[k]) == (size_t)(e - s) && !memcmp(s, drift_prompt_kinds[k], (size_t)(e - s)))
            return k;
    return -1;
}

static int starts(const char *s, const char *e, const char *tag)
{
    size_t n = strlen(tag);
    return (size_t)(e - s) >= n && !memcmp(s, tag, n);
}

/* Line [s, e) of a kinds file: KIND<TAB>TEXT into *kind and t (at least e - s + 1 bytes). */
static int kind_line(
    const char **kind, char *t, const char *s, const char *e, const char *name, int lineno, char *err, size_t errsz)
{
    const char *tab = memchr(s, '\t', (size_t)(e - s));
    if (!tab)
        return drift_why(err, errsz, DRIFT_EINVAL, "%s: line %d: no tab between kind and text (expected KIND<TAB>TEXT)",
            name, lineno);
    int k = kind_of(s, tab);
    if (k < 0) {
        char known[128] = "";
        for (int j = 0; j < DRIFT_PROMPT_N_KINDS; j++) {
            strcat(known, j ? " " : "");
            strcat(known, drift_prompt_kinds[j]);
        }
        int len = tab - s > 24 ? 24 : (int)(tab - s);
        return drift_why(err, errsz, DRIFT_EINVAL, "%s: line %d: kind '%.*s%s' is none of: %s", name, lineno, len, s,
            tab - s > 24 ? "..." : "", known);
    }
    if (tab + 1 == e)
        return drift_why(
            err, errsz, DRIFT_EINVAL, "%s: line %d: kind %s with an empty text", name, lineno, drift_prompt_kinds[k]);
    *kind = drift_prompt_kinds[k];
    return unescape(t, tab + 1, e, name, lineno, err, errsz);
}

int drift_prompt_file_parse(
    drift_prompt_file_t *p, const char *bytes, size_t size, const char *name, char *err, size_t errsz)
{
    if (!p || (!bytes && size)) return drift_why(err, errsz, DRIFT_EINVAL, "no prompt file");
    memset(p, 0, sizeof *p);
    size_t lines = 1;
    for (size_t i = 0; i < size; i++) lines += bytes[i] == '\n';
    p->text = calloc(lines, sizeof *p->text);
    if (!p->text) return drift_why(err, errsz, DRIFT_ENOMEM, "%s: out of memory", name);
    int lineno = 0, rc = 0;
    for (const char *s = bytes, *end = bytes + size; s < end;) {
        const char *e = memchr(s, '\n', (size_t)(end - s));
        if (!e) e = end;
        lineno++;
        if (starts(s, e, FORMAT_TAG)) {
            if (p->n > 0 || p->kind) {
                rc = drift_why(err, errsz, DRIFT_EINVAL,
                    "%s: line %d: a #format: line must come once, before the first prompt", name, lineno);
                goto fail;
            }
            if ((size_t)(e - s) != strlen(FORMAT_KINDS) || memcmp(s, FORMAT_KINDS, strlen(FORMAT_KINDS))) {
                rc = drift_why(err, errsz, DRIFT_EINVAL,
                    "%s: line %d: #format: expected 'kind<TAB>text' (one space, one tab byte)", name, lineno);
                goto fail;
            }
            p->kind = calloc(lines, sizeof *p->kind);
            if (!p->kind) goto nomem;
        } else if (e > s && *s != '#') {
            char *t = malloc((size_t)(e - s) + 1);
            if (!t) goto nomem;
            rc = p->kind ? kind_line(&p->kind[p->n], t, s, e, name, lineno, err, errsz)
                         : unescape(t, s, e, name, lineno, err, errsz);
            if (rc) {
                free(t);
                goto fail;
            }
            p->text[p->n++] = t;
        }
        s = e + 1;
    }
    if (p->n == 0) {
        rc = drift_why(err, errsz, DRIFT_EINVAL, "%s: no prompts (every line empty or a comment)", name);
        goto fail;
    }
    return 0;
nomem:
    rc = drift_why(err, errsz, DRIFT_ENOMEM, "%s: out of memory", name);
fail:
    drift_prompt_file_free(p);
    return rc;
}

int drift_prompt_file_read(drift_prompt_file_t *p, const char *path, char *err, size_t errsz)
{
    if (!p || !path) return drift_why(err, errsz, DRIFT_EINVAL, "no prompt file");
    memset(p, 0, sizeof *p);
    size_t size = 0;
    int rc;
    char *buf = (char *)drift_file_read(path, DRIFT_PROMPT_FILE_MAX_BYTES, "prompt set", &size, err, errsz, &rc);
    if (!buf) return rc;
    rc = drift_prompt_file_parse(p, buf, size, path, err, errsz);
    free(buf);
    return rc;
}

void drift_prompt_file_free(drift_prompt_file_t *p)
{
    if (!p) return;
    for (int i = 0; i < p->n; i++) free(p->text[i]);
    free(p->text);
    free(p->kind);
    memset(p, 0, sizeof *p);
}
