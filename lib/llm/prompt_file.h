/* prompt_file.h — a file of prompts, one a line (tests/data/llamacpp_prompts.txt's format):
 * lines starting with '#' and empty lines are skipped; every other line is one prompt, byte for
 * byte, after the escapes \n \t \r \\ and \xHH (two hex digits). Any other backslash, a lone
 * trailing backslash or a NUL byte is refused with one line naming the line number. */
#ifndef DRIFT_PROMPT_FILE_H
#define DRIFT_PROMPT_FILE_H

#include <stddef.h>

typedef struct {
    int n;
    char **text; /* n NUL-terminated prompts */
} drift_prompt_file_t;

#define DRIFT_PROMPT_FILE_MAX_BYTES ((size_t)64 << 20) /* a prompt set larger than this is not one */

/* 0, DRIFT_EIO (unreadable, not a regular file), DRIFT_EINVAL (a malformed line; an empty set)
 * or DRIFT_ENOMEM, with the reason in err. */
int drift_prompt_file_read(drift_prompt_file_t *p, const char *path, char *err, size_t errsize);
/* The same from bytes in memory (name only labels the messages). */
int drift_prompt_file_parse(drift_prompt_file_t *p, const char *bytes, size_t size, const char *name, char *err,
                            size_t errsize);
void drift_prompt_file_free(drift_prompt_file_t *p);

#endif
