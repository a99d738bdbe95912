/* chat_template.h — a model's chat template (GGUF `tokenizer.chat_template`, Jinja text) read as
 * the family it belongs to, and one user turn rendered the way the Jinja template renders
 * messages = [{role: user, content: TEXT}] with add_generation_prompt = true.
 *
 * Recognised, not interpreted: the template is lexed (Hugging Face's Jinja settings: trim_blocks,
 * lstrip_blocks; `{%-`/`-%}` trims; `{# #}` dropped), its tokens normalised (x['k'] is x.k;
 * 'a' + 'b' is 'ab' where + joins them first), and compared with known ChatML shapes:
 *  - ChatML with a default system turn (SmolLM2-Instruct, Qwen2-Instruct): when the first message
 *    is not a system one, the literal '<|im_start|>system\nSYSTEM<|im_end|>\n' comes first; then
 *    each message as '<|im_start|>' + role + '\n' + content + '<|im_end|>\n'; then
 *    '<|im_start|>assistant\n'. A user turn renders as
 *    "<|im_start|>system\nSYSTEM<|im_end|>\n<|im_start|>user\nTEXT<|im_end|>\n<|im_start|>assistant\n".
 *  - plain ChatML (the same without the system clause): the same without the system turn.
 * Any other template (Llama-3, Gemma, Zephyr, a ChatML with tools or other branches) is
 * DRIFT_EUNSUPPORTED: a guess at a template is a wrong prompt.
 *
 * Not llama.cpp's built-in "chatml" (llm_chat_apply_template without --jinja), which matches any
 * template holding <|im_start|> and writes no default system turn; llama.cpp with --jinja
 * renders the template itself and agrees with this one. */
#ifndef DRIFT_CHAT_TEMPLATE_H
#define DRIFT_CHAT_TEMPLATE_H

#include <stddef.h>

#include "drift.h"
#include "gguf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DRIFT_CHAT_NONE = 0, /* no template: text is used as it is */
    DRIFT_CHAT_CHATML
} drift_chat_family_t;

#define DRIFT_CHAT_LEAD_MAX 1024 /* the longest default system turn accepted, bytes */

typedef struct {
    drift_chat_family_t family;
    char lead[DRIFT_CHAT_LEAD_MAX]; /* what comes before the user turn: the default system turn or "" */
} drift_chat_template_t;

/* Read template text tmpl[0, len) (tmpl NULL: no template, family DRIFT_CHAT_NONE). 0,
 * DRIFT_EUNSUPPORTED (not a recognised shape; the one line says which family it resembles),
 * DRIFT_EINVAL (an unterminated string, tag or comment), DRIFT_ERANGE (a default system turn over
 * DRIFT_CHAT_LEAD_MAX - 1 bytes) or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_chat_template_parse(
    drift_chat_template_t *t, const char *tmpl, size_t len, char *err, size_t errsz);
/* The template of a GGUF file: `tokenizer.chat_template` (absent: DRIFT_CHAT_NONE; not a
 * string: DRIFT_EINVAL). */
DRIFT_MUST_CHECK int drift_chat_template_from_gguf(
    drift_chat_template_t *t, const drift_gguf_t *g, char *err, size_t errsz);

/* One user turn and the generation prompt into out (size bytes, NUL-terminated); DRIFT_CHAT_NONE:
 * user_text unchanged. *len (may be NULL) gets the rendered length, also when it does not fit
 * (DRIFT_ERANGE, out then holds ""). 0, DRIFT_EINVAL (no text, no template) or DRIFT_ERANGE. */
DRIFT_MUST_CHECK int drift_chat_wrap(char *out, size_t size, const drift_chat_template_t *t, const char *user_text,
    size_t *len, char *err, size_t errsz);

/* The two in one for a GGUF model: *wrapped (may be NULL) is 1 when a template was applied, 0
 * when the file has none and out is user_text unchanged. */
DRIFT_MUST_CHECK int drift_chat_wrap_gguf(
    char *out, size_t size, const drift_gguf_t *g, const char *user_text, int *wrapped, char *err, size_t errsz);

#ifdef __cplusplus
}
#endif

#endif
