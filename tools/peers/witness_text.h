/* witness_text.h: the one escaping rule of the witness's input and output files.
 *
 * A string file holds one string per line. Lines starting with '#' are comments and empty
 * lines are skipped; everything else is kept byte for byte (leading and trailing spaces
 * included) after these escapes are resolved:
 *   \n newline   \t tab   \r carriage return   \\ backslash   \xHH the byte 0xHH
 * (so a string that starts with '#' is written \x23...). Any other backslash sequence is an
 * error. Output uses the same rule, and also writes control bytes and bytes that are not
 * part of valid UTF-8 as \xHH, so every record line is printable UTF-8 and round-trips. */
#ifndef DRIFT_PEERS_WITNESS_TEXT_H
#define DRIFT_PEERS_WITNESS_TEXT_H

#include <stddef.h>
#include <stdio.h>
#include "drift.h"

typedef struct {
    char *text; /* unescaped bytes, NUL-terminated (no NUL inside: \x00 is refused) */
    size_t len;
    int line;  /* 1-based line number in the file */
    char *raw; /* the line as written in the file, for the record's header */
} witness_string;

/* Reads FILE into *out (count in *n). 0 on success; -1 with a one-line message in err. */
DRIFT_MUST_CHECK int witness_read_strings(witness_string **out, int *n, const char *path, char *err, size_t errsz);
void witness_free_strings(witness_string *s, int n);

/* Writes bytes s[0..n) escaped as described above. */
void witness_escape(FILE *f, const char *s, size_t n);
/* The same for a table field that starts a line: a leading '#' is written \x23, so that the
 * line cannot be read as a comment. */
void witness_escape_field(FILE *f, const char *s, size_t n);

#endif
