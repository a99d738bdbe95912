/* prompt_file.h — a file of prompts, one a line (tests/data/llamacpp_prompts.txt's format):
 * lines starting with '#' and empty lines are skipped; every other line is one prompt, byte for
 * byte, after the escapes \n \t \r \\ and \xHH (two hex digits). Any other backslash, a lone
 * trailing backslash or a NUL byte is refused with one line naming the line number.
 *
 * A file with kinds (prompts/lab-prompts.txt) declares it in a line `#format: kind<TAB>text`
 * (`#format:`, one space, `kind`, one tab byte, `text`) before its first prompt; every prompt
 * line is then KIND, a tab, TEXT: KIND one of drift_prompt_kinds (exactly, lower case), TEXT the
 * prompt as above (later tabs are part of it; it may start with '#'; it must not be empty).
 * Another `#format:` value, or a `#format:` line after the first prompt, is refused: a typo must
 * not silently read as the plain format. Without the declaration the file reads as before and
 * kind is NULL. */
#ifndef DRIFT_PROMPT_FILE_H
#define DRIFT_PROMPT_FILE_H

#include <stddef.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int n;
    char **text;       /* n NUL-terminated prompts */
    const char **kind; /* n names from drift_prompt_kinds (not owned); NULL: a file without kinds */
} drift_prompt_file_t;

/* The kinds of prompt a kinds file may name, in this order (drift_prompt_kind_index's numbering):
 * story (an opening to continue, a story to write), fact (geography, science, history
 * questions), code (write, explain, fix or complete code), list ("name five ..."), arithmetic
 * (sums and word problems), instruction (rewrite, summarise, translate, format), dialogue (a
 * role to play, a conversation to continue), chinese (a prompt written in Chinese), multilingual
 * (written in another language than English or Chinese). */
#define DRIFT_PROMPT_N_KINDS 9
extern const char *const drift_prompt_kinds[DRIFT_PROMPT_N_KINDS];
/* The index of kind `name` in drift_prompt_kinds, or -1. */
int drift_prompt_kind_index(const char *name);

#define DRIFT_PROMPT_FILE_MAX_BYTES ((size_t)64 << 20) /* a prompt set larger than this is not one */

/* 0, DRIFT_EIO (unreadable, not a regular file), DRIFT_EINVAL (a malformed line; an empty set)
 * or DRIFT_ENOMEM, with the reason in err. */
DRIFT_MUST_CHECK int drift_prompt_file_read(drift_prompt_file_t *p, const char *path, char *err, size_t errsz);
/* The same from bytes in memory (name only labels the messages). */
DRIFT_MUST_CHECK int drift_prompt_file_parse(
    drift_prompt_file_t *p, const char *bytes, size_t size, const char *name, char *err, size_t errsz);
void drift_prompt_file_free(drift_prompt_file_t *p);

#ifdef __cplusplus
}
#endif

#endif
