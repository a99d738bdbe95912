/* pretok.h — pre-tokenizers of byte-level BPE vocabularies: the split of a text into words
 * before merges, as llama.cpp does it (src/llama-vocab.cpp picks the expressions by
 * `tokenizer.ggml.pre`, src/unicode.cpp applies them).
 *
 *   gpt-2   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
 *           with llama.cpp's hand-written matcher (unicode_regex_split_custom_gpt2): a run of
 *           whitespace followed by more text gives all but its last codepoint; a run at the end
 *           of the text is one word; a codepoint no branch takes is a word of its own.
 *   smollm  first \p{N}: every number codepoint is a word by itself and the runs between them
 *           are split apart from it (so " 123" is " ", "1", "2", "3"); then gpt-2 inside each
 *           run (a whitespace run that ends where a digit starts ends its run: "a  1" is
 *           "a", "  ", "1").
 *
 * Lengths are in codepoints, as llama.cpp counts them; the caller decodes UTF-8 first
 * (drift_utf8_next). */
#ifndef DRIFT_PRETOK_H
#define DRIFT_PRETOK_H

#include <stddef.h>
#include <stdint.h>
#include "drift.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DRIFT_PRETOK_NONE = 0, DRIFT_PRETOK_GPT2, DRIFT_PRETOK_SMOLLM } drift_pretok_t;

/* The pre-tokenizer named by a `tokenizer.ggml.pre` value (len bytes at name): 0, or
 * DRIFT_EUNSUPPORTED with one line naming the value and the accepted ones. */
DRIFT_MUST_CHECK int drift_pretok_from_name(drift_pretok_t *out, const char *name, size_t len, char *err, size_t errsz);

/* Split cps[0..n) into words: ends[k] is the end (exclusive) of word k; ends must hold n
 * entries (every word is at least one codepoint). Returns the number of words. */
size_t drift_pretok_split(drift_pretok_t pre, const uint32_t *cps, size_t n, size_t *ends);

#ifdef __cplusplus
}
#endif

#endif
