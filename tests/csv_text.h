/* csv_text.h — reading a program's CSV and Markdown output in a test: the text without its
 * metadata lines, one field by column name, and two runs' files compared. Static inline, as
 * support.h. */
#ifndef DRIFT_TESTS_CSV_TEXT_H
#define DRIFT_TESTS_CSV_TEXT_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* The text without the lines that start with one of skip[0..nskip) ("# date: ", ...), in a
 * malloc'd buffer (free it). */
static inline char *strip_lines(const char *text, const char *const *skip, int nskip)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
        int drop = 0;
        for (int k = 0; k < nskip; k++) drop |= !strncmp(p, skip[k], strlen(skip[k]));
        if (!drop) {
            memcpy(o, p, len);
            o += len;
        }
        p += len;
    }
    *o = 0;
    return out;
}

/* Splits a CSV line into fields (in place); returns the count. */
static inline int csv_split(char *line, char **f, int max)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == ',') {
            *p = 0;
            f[n++] = p + 1;
        }
    return n;
}

/* The column index of name in the header row of text (after its '#' lines). */
static inline int csv_column(const char *text, const char *name)
{
    const char *p = text;
    while (*p == '#') p = strchr(p, '\n') + 1;
    char header[1024];
    size_t n = strcspn(p, "\n");
    cr_assert(n < sizeof header);
    memcpy(header, p, n);
    header[n] = 0;
    char *f[64];
    int nf = csv_split(header, f, 64);
    for (int i = 0; i < nf; i++)
        if (!strcmp(f[i], name)) return i;
    cr_assert_fail("no column '%s'", name);
    return -1;
}

/* The field `want` of the first row whose fields key1 and key2 equal v1 and v2. */
static inline void csv_lookup(char *out, size_t size, const char *text, const char *key1, const char *v1,
    const char *key2, const char *v2, const char *want)
{
    int c1 = csv_column(text, key1), c2 = csv_column(text, key2), cw = csv_column(text, want);
    char *copy = strdup(text), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') continue;
        char *f[64];
        int nf = csv_split(line, f, 64);
        if (nf > c1 && nf > c2 && nf > cw && !strcmp(f[c1], v1) && !strcmp(f[c2], v2)) {
            snprintf(out, size, "%s", f[cw]);
            free(copy);
            return;
        }
    }
    free(copy);
    cr_assert_fail("no row %s=%s, %s=%s", key1, v1, key2, v2);
}

/* Each of files[0..nfiles) holds the same text in directories a and b once the lines that
 * start with one of skip[0..nskip) are dropped, and more than 100 bytes of it (a run that
 * wrote nearly nothing does not pass by agreeing with itself). */
static inline void assert_same_files(
    const char *a, const char *b, const char *const *files, int nfiles, const char *const *skip, int nskip)
{
    for (int i = 0; i < nfiles; i++) {
        char pa[256], pb[256];
        snprintf(pa, sizeof pa, "%s/%s", a, files[i]);
        snprintf(pb, sizeof pb, "%s/%s", b, files[i]);
        char *ta = slurp(pa), *tb = slurp(pb);
        char *sa = strip_lines(ta, skip, nskip), *sb = strip_lines(tb, skip, nskip);
        cr_assert(strlen(sa) > 100, "%s is nearly empty", pa);
        cr_assert(!strcmp(sa, sb), "%s and %s differ beyond the allowed metadata lines", pa, pb);
        free(ta);
        free(tb);
        free(sa);
        free(sb);
    }
}

#endif
