/* escape.h — one line per value in the lab's line-oriented files (a run's manifest, the
 * `# key: value` lines of a CSV, a sweep's share manifest): a value holding a newline once
 * split its line in two, and the next reader refused the directory for good.
 *
 * The escape writes each byte that cannot stand in such a line as \xHH (two lowercase hex
 * digits): the control bytes 0x01..0x1f and 0x7f, the backslash itself, every byte of an
 * invalid UTF-8 sequence (a stray continuation byte, an overlong form, a surrogate, beyond
 * U+10FFFF, a cut sequence), and any ASCII byte of `also` (the argv line adds the blank that
 * separates its words). Everything else, valid UTF-8 included, is written as is, so a value
 * with nothing to escape is written byte for byte as before. The unescape is the exact
 * inverse (unescape(escape(x)) == x for every byte string x) and refuses what the escape never
 * writes: a raw byte it escapes, a malformed or uppercase \xHH, \x00. */
#ifndef DRIFT_ESCAPE_H
#define DRIFT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The escaped form of the NUL-terminated s into dst (always NUL-terminated when size > 0).
 * Returns the length the whole escaped text needs, like snprintf (cut when >= size). */
size_t drift_escape(char *dst, size_t size, const char *s, const char *also);
/* The same, written to fp. 0, or -1 on a write error. */
int drift_escape_fputs(FILE *fp, const char *s, const char *also);
/* Inverse of drift_escape: the first n bytes of s (no NUL among them) decoded into dst,
 * NUL-terminated. Returns the decoded length, or -1 when s is not an escape's output (a
 * backslash not followed by x and two lowercase hex digits, \x00, an escaped ASCII byte that
 * needs no escape, a raw byte that does, `also` bytes raw) or dst is too small. */
long drift_unescape(char *dst, size_t size, const char *s, size_t n, const char *also);

/* The words of an argv line, what follows "argv:": " w0 w1 ...", a blank before each word,
 * each escaped with the blank in `also` (so "a b" is one word "a\x20b"; an empty word is an
 * empty field). argv[0] is written as given (callers pass its base name). 0, or -1. */
int drift_argv_fputs(FILE *fp, int argc, const char *const *argv);
/* Splits and unescapes such a text back into at most max words, each malloc'd (free them).
 * Returns the count, or -1 when a word is malformed, the text does not start with a blank
 * (unless empty), there are more than max words, or memory runs out. */
DRIFT_MUST_CHECK int drift_argv_parse(char **words, int max, const char *text);

#ifdef __cplusplus
}
#endif

#endif
