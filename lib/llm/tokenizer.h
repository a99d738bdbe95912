/* tokenizer.h — text <-> token ids. */
#ifndef DRIFT_TOKENIZER_H
#define DRIFT_TOKENIZER_H

#include <stddef.h>

/* ---- tokenizer.bin ---------------------------------------------------------------------
 * int32 max_token_length, then per token: float score, int32 len, len bytes (no NUL).
 * Pieces "<0xXX>" are raw bytes; decoding drops the leading space of the piece after BOS,
 * as run.c does. Encoding is run.c's: a dummy-prefix space, UTF-8 code points looked up
 * whole (byte fallback: byte + 3), then greedy merges of the adjacent pair whose merged
 * piece has the highest score. */
#define DRIFT_TOKEN_LENGTH_MAX 65536 /* the largest max_token_length a tokenizer header may state */
typedef struct {
    int vocab_size;
    int max_token_length;
    char **pieces;
    float *scores;
    int *sorted; /* token ids sorted by piece, for lookup */
} drift_tokenizer_t;

int drift_tokenizer_read(drift_tokenizer_t *t, const char *path, int vocab_size, char *err, size_t errsize);
/* The same from bytes in memory (the reader and the fuzz target share it); `path` only names the
 * data in messages. */
int drift_tokenizer_parse(drift_tokenizer_t *t, const void *bytes, size_t size, const char *path, int vocab_size,
                          char *err, size_t errsize);
void drift_tokenizer_free(drift_tokenizer_t *t);
/* The text of token `tok` following `prev` (a pointer into t or into a static byte table). */
const char *drift_tokenizer_decode(const drift_tokenizer_t *t, int prev, int tok);
/* Encode text into ids (BOS = 1 first when bos), at most cap ids; the count in *n.
 * 0, DRIFT_EINVAL (a character the vocabulary cannot express) or DRIFT_ERANGE (cap). */
int drift_tokenizer_encode(const drift_tokenizer_t *t, const char *text, int bos, int *ids, int cap, int *n);


#endif
