/* file_read.h — a whole regular file in memory, bounded: the one reader of the checkpoint,
 * tokenizer and prompt-file loaders (a FIFO or a device would block or never end). */
#ifndef DRIFT_FILE_READ_H
#define DRIFT_FILE_READ_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The bytes of path, NUL-terminated (malloc'd; *size excludes the NUL), or NULL with *rc set:
 * DRIFT_EIO ("cannot open PATH: reason", "PATH: not a regular file", "cannot read PATH"),
 * DRIFT_EINVAL (larger than max bytes; what names the kind of file in the message) or
 * DRIFT_ENOMEM, the message in err. */
unsigned char *drift_file_read(
    const char *path, size_t max, const char *what, size_t *size, char *err, size_t errsz, int *rc);

#ifdef __cplusplus
}
#endif

#endif
