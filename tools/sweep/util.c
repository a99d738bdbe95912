/* util.c — what the sweep's files share: allocation that dies rather than returns NULL, a
 * growing text buffer, and the directory operations (mkdir -p, rm -r, a sorted listing). */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sweep.h"

void *sweep_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    /* What grows with the sweep is its runs: the size says how far off this machine is. */
    if (!q) sweep_die("out of memory (%zu bytes wanted; a smaller --grid, or --shares, needs less)", n);
    return q;
}

char *sweep_xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) sweep_die("out of memory (%zu bytes wanted; a smaller --grid needs less)", strlen(s) + 1);
    return d;
}

void sweep_text_add(sweep_text_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = (t->len + (size_t)n + 1) * 2;
        t->p = sweep_xrealloc(t->p, t->cap);
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int sweep_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

void sweep_mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                sweep_die("--out: cannot create '%s': %s", buf, strerror(errno));
            *p = c;
            if (!c) break;
        }
    }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The regular files of dir, sorted bytewise (so a manifest does not depend on readdir order).
 * Returns the count (-1: unreadable); *names malloc'd, each malloc'd. *others counts the
 * entries that are not regular files. */
int sweep_list_files(const char *dir, char ***names, int *others)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0, cap = 0;
    *names = NULL;
    *others = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            (*others)++;
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            *names = sweep_xrealloc(*names, (size_t)cap * sizeof **names);
        }
        (*names)[n++] = sweep_xstrdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(*names, (size_t)n, sizeof **names, cmp_str);
    return n;
}

void sweep_free_names(char **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}
