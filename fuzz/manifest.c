/* fuzz/manifest.c — the run manifest reader (manifest.h) and the escape it relies on
 * (escape.h) on any bytes. A manifest either parses into a set whose every name is plain and
 * the experiment's, with 64-hex-digit digests, and which written out again (escaped as the
 * writer escapes) parses into the same set; or it is refused. The escape round-trips the
 * bytes exactly, and the argv line splits into words that written again split the same. */
#include "common.h"
#include "escape.h"
#include "manifest.h"

#include <stdio.h>

static void fuzz_manifest(const uint8_t *data, size_t size)
{
    drift_manifest_t m, again;
    if (drift_manifest_parse(&m, (const char *)data, size) != 0) return;
    if (!drift_manifest_name_ok(m.experiment) || m.nfiles < 1 || m.nfiles > DRIFT_MANIFEST_FILES) abort();
    size_t el = strlen(m.experiment);
    for (int i = 0; i < m.nfiles; i++) {
        const drift_manifest_file_t *f = &m.files[i];
        if (strncmp(f->name, m.experiment, el) || strchr(f->name, '/') || strlen(f->sha) != 64 || f->size < 0) abort();
        for (int j = 0; j < 64; j++)
            if (!strchr("0123456789abcdef", f->sha[j])) abort();
    }
    /* Written again as table.c writes it, read again: the same set. */
    static char text[DRIFT_MANIFEST_FILES * 1200 + 4096];
    char esc[1100];
    size_t n = 0;
    drift_escape(esc, sizeof esc, m.experiment, NULL);
    n += (size_t)snprintf(text + n, sizeof text - n, "experiment: %s\n", esc);
    drift_escape(esc, sizeof esc, m.git, NULL);
    n += (size_t)snprintf(text + n, sizeof text - n, "git: %s\nargv: x\n", esc);
    for (int i = 0; i < m.nfiles; i++) {
        drift_escape(esc, sizeof esc, m.files[i].name, " ");
        n += (size_t)snprintf(text + n, sizeof text - n, "file: %lld %s %s\n", m.files[i].size, m.files[i].sha, esc);
    }
    if (n >= sizeof text || drift_manifest_parse(&again, text, n) != 0) abort();
    if (strcmp(again.experiment, m.experiment) || strcmp(again.git, m.git) || again.nfiles != m.nfiles) abort();
    for (int i = 0; i < m.nfiles; i++)
        if (strcmp(again.files[i].name, m.files[i].name) || strcmp(again.files[i].sha, m.files[i].sha) ||
            again.files[i].size != m.files[i].size)
            abort();
}

static void fuzz_escape(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s) return;
    size_t len = strlen(s); /* up to the first NUL */
    char *esc = malloc(4 * len + 1), *back = malloc(len + 1), *back2 = malloc(len + 1), *esc2 = malloc(4 * len + 1);
    if (!esc || !back || !back2 || !esc2) abort();
    /* every byte string: escape, then unescape, gives it back; the escape holds no separator */
    size_t n = drift_escape(esc, 4 * len + 1, s, " ");
    if (n > 4 * len || strchr(esc, '\n') || strchr(esc, ' ')) abort();
    if (drift_unescape(back, len + 1, esc, n, " ") != (long)len || memcmp(back, s, len)) abort();
    /* any text the unescape accepts is one the escape can write back, and that reads the same */
    long k = drift_unescape(back, len + 1, s, len, NULL);
    if (k >= 0) {
        size_t m = drift_escape(esc2, 4 * len + 1, back, NULL);
        if (m > 4 * len || drift_unescape(back2, len + 1, esc2, m, NULL) != k || memcmp(back, back2, (size_t)k))
            abort();
    }
    /* the argv words: split, written again, split again: the same words */
    char *words[64], *words2[64];
    int nw = drift_argv_parse(words, 64, s);
    if (nw > 0) {
        /* the line as drift_argv_fputs writes it: a blank, then the word escaped with the blank */
        char *line = malloc(5 * len + 2);
        if (!line) abort();
        size_t sz = 0;
        for (int i = 0; i < nw; i++) {
            line[sz++] = ' ';
            sz += drift_escape(line + sz, 5 * len + 2 - sz, words[i], " ");
        }
        if (drift_argv_parse(words2, 64, line) != nw) abort();
        for (int i = 0; i < nw; i++) {
            if (strcmp(words[i], words2[i])) abort();
            free(words[i]);
            free(words2[i]);
        }
        free(line);
    }
    free(esc);
    free(esc2);
    free(back);
    free(back2);
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_manifest(data, size);
    fuzz_escape(data, size);
    return 0;
}
