/* chat_prompts.h — a sample of a prompt set as a chat model reads it: drawn by the seed
 * (prompt_sample.h), wrapped in the model's chat template (chat_template.h), tokenized by its
 * own tokenizer, with the prefix every wrapped prompt shares (the template around an empty
 * turn: for SmolLM2, its default system turn and the user header) — what prefix caching
 * reuses. */
#ifndef DRIFT_CHAT_PROMPTS_H
#define DRIFT_CHAT_PROMPTS_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "checkpoint.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int *tok, n;      /* the wrapped prompt's ids */
    int prefix;       /* its first ids shared with the template around an empty turn */
    int index;        /* in the prompt set */
    uint64_t seed;    /* the seed whose draw it is */
    const char *kind; /* its kind, "-" for a set without kinds */
    char *text;       /* the prompt as written in the set */
} drift_chat_prompt_t;

/* n prompts of the set at path, drawn without replacement from the stream (seed, stream), in
 * draw order, for the GGUF model ck; each must fit max_tokens ids. *out (n entries) is freed
 * with drift_chat_prompts_free. 0, or DRIFT_EINVAL / DRIFT_EIO / DRIFT_EUNSUPPORTED /
 * DRIFT_ENOMEM with one line in err naming the prompt or the file. */
DRIFT_MUST_CHECK int drift_chat_prompts_load(drift_chat_prompt_t **out, const drift_checkpoint_t *ck, const char *path,
    int n, uint64_t seed, const char *stream, int max_tokens, char *err, size_t errsz);
/* The same with wrap 0: each prompt tokenized as written, without the template (as a GGUF file
 * without one reads it); prefix is then the ids of an empty text. */
DRIFT_MUST_CHECK int drift_prompts_load(drift_chat_prompt_t **out, const drift_checkpoint_t *ck, const char *path,
    int n, uint64_t seed, const char *stream, int max_tokens, int wrap, char *err, size_t errsz);
void drift_chat_prompts_free(drift_chat_prompt_t *p, int n);

#ifdef __cplusplus
}
#endif

#endif
