/* tokenizer_impl.h — what the tokenizer's files share and no caller needs: the lookups built by
 * tokenizer_vocab.c and the GGUF encoder of tokenizer_encode.c. */
#ifndef DRIFT_TOKENIZER_IMPL_H
#define DRIFT_TOKENIZER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GPT-2's byte alphabet: fwd[b] is the codepoint byte b is written as; inv[cp] the byte, or -1.
 * Bytes 0x21..0x7E, 0xA1..0xAC, 0xAE..0xFF stand for themselves; the other 68, in order, for
 * U+0100..U+0143 (so a space is U+0120). */
#define DRIFT_TOK_ALPHABET_END 0x144
void drift_tok_alphabet(uint32_t fwd[256], int inv[DRIFT_TOK_ALPHABET_END]);
/* The id of the token whose bytes (BPE: after the byte map; SPM: its text) are s[0..len), or -1. */
int drift_tok_lookup(const drift_tokenizer_t *t, const unsigned char *s, size_t len);
/* The rank of the merge of s[0..left) with s[left..left+right) (BPE, bytes), or -1. */
int drift_tok_merge_rank(const drift_tokenizer_t *t, const unsigned char *s, size_t left, size_t right);
/* drift_tokenizer_encode_ex for the GGUF kinds. */
DRIFT_MUST_CHECK int drift_tok_encode_gguf(
    const drift_tokenizer_t *t, const char *text, int add_special, int parse_special, int *ids, int cap, int *n);
/* Free what drift_tokenizer_build allocated. */
void drift_tok_free_gguf(drift_tokenizer_t *t);

#ifdef __cplusplus
}
#endif

#endif
