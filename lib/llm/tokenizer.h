/* tokenizer.h — text <-> token ids: llama2.c's tokenizer.bin and the vocabularies GGUF files
 * carry (byte-level BPE, `tokenizer.ggml.model` gpt2; SentencePiece, `llama`). One type for all.
 *
 * ---- tokenizer.bin (kind DRIFT_TOKENIZER_LLAMA2C) ---------------------------------------
 * int32 max_token_length, then per token: float score, int32 len, len bytes (no NUL).
 * Pieces "<0xXX>" are raw bytes; decoding drops the leading space of the piece after BOS,
 * as run.c does. Encoding is run.c's: a dummy-prefix space, UTF-8 code points looked up
 * whole (byte fallback: byte + 3), then greedy merges of the adjacent pair whose merged
 * piece has the highest score.
 *
 * ---- GGUF vocabularies (kinds DRIFT_TOKENIZER_BPE, DRIFT_TOKENIZER_SPM) -------------------
 * Encoding is llama.cpp's llama_tokenize (src/llama-vocab.cpp):
 *  1. special tokens: with parse_special, every control and unknown token's text found in the
 *     input is that token, whole; user-defined tokens always are. Longest texts first; each
 *     token's occurrences are cut out of the remaining text before the next token is looked for.
 *  2. BPE: each remaining fragment is split into words by the pre-tokenizer (pretok.h) on its
 *     codepoints (each invalid UTF-8 byte becomes U+FFFD, as in llama.cpp, so those bytes do not
 *     come back from decode; also a 4-byte form above U+10FFFF, on which llama.cpp aborts; an
 *     overlong form is read as its codepoint, C0 AF as '/'), each word's bytes are mapped to
 *     GPT-2's printable alphabet, and the adjacent pair of lowest merge rank (the leftmost of
 *     equals) is merged until none is in `tokenizer.ggml.merges`; each piece is then looked up
 *     (a piece not in the vocabulary gives the tokens of its single bytes, when there are such).
 *     SPM: a fragment after a special token or at the start gets a space first when
 *     add_space_prefix; spaces become U+2581; the adjacent pair whose concatenation is a token
 *     of the highest score (the leftmost of equals) is merged until none is; a piece that is
 *     no token gives its bytes as <0xXX> tokens (DRIFT_EINVAL when the vocabulary has none).
 *  3. add_special: BOS first when the vocabulary says add_bos_token (llama.cpp's defaults:
 *     SPM yes, BPE no), EOS last when add_eos_token.
 * Decoding a token gives llama.cpp's token_to_piece(special = true): a normal BPE token's
 * characters mapped back to bytes (a character outside the alphabet is copied as its UTF-8),
 * an SPM token with U+2581 turned into spaces, a byte token its byte, special tokens their text.
 * Ends of generation (drift_tokenizer_is_eog) are llama.cpp's: the EOS and EOT ids and every
 * token whose text is one llama.cpp lists as ending a turn (<|im_end|>, <|endoftext|>, <|eot_id|>,
 * </s>, ...) or as a FIM pad/repo/separator (SmolLM2's <reponame> is one); those texts and
 * the FIM begin/hole/end ones become control tokens, as llama.cpp overrides them.
 * Not modelled: llama.cpp's per-model token attributes (lstrip/rstrip for phi-3 and a few
 * encoders, set by model name, not stored in GGUF), its detokenizer's clean_spaces pass (a
 * whole-text decode; pieces here are per token), and pre-tokenizers other than gpt-2/smollm. */
#ifndef DRIFT_TOKENIZER_H
#define DRIFT_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "drift.h"
#include "gguf.h"
#include "pretok.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DRIFT_TOKEN_LENGTH_MAX 65536 /* the largest max_token_length a tokenizer header may state */

typedef enum { DRIFT_TOKENIZER_LLAMA2C = 0, DRIFT_TOKENIZER_BPE, DRIFT_TOKENIZER_SPM } drift_tokenizer_kind_t;

/* `tokenizer.ggml.token_type` values (llama.cpp's llama_token_type) */
enum {
    DRIFT_TOKEN_UNDEFINED = 0,
    DRIFT_TOKEN_NORMAL = 1,
    DRIFT_TOKEN_UNKNOWN = 2,
    DRIFT_TOKEN_CONTROL = 3,
    DRIFT_TOKEN_USER_DEFINED = 4,
    DRIFT_TOKEN_UNUSED = 5,
    DRIFT_TOKEN_BYTE = 6
};

typedef struct {
    int vocab_size;
    int max_token_length;
    char **pieces; /* the vocabulary's text of each token, NUL-terminated (GGUF: piece_len bytes) */
    float *scores;
    int *sorted; /* llama2.c: token ids sorted by piece, for lookup */
    drift_tokenizer_kind_t kind;
    /* GGUF vocabularies only (zero / NULL for llama2.c) */
    drift_pretok_t pre;
    uint32_t *piece_len;
    unsigned char *type; /* DRIFT_TOKEN_* of each token */
    unsigned char *eog;  /* 1: the token ends generation */
    char **text;         /* what decode returns, NUL-terminated, text_len bytes */
    uint32_t *text_len;
    int bos_id, eos_id, eot_id, unk_id, pad_id; /* -1: none */
    int add_bos, add_eos, add_space_prefix;
    int *special; /* ids split out of text before pre-tokenization, longest text first */
    int n_special;
    int byte_token[256]; /* BPE: the token whose text is that one byte; SPM: <0xXX>; -1 */
    /* lookups (tokenizer_vocab.c): pieces by the bytes they stand for, merges by pair */
    const char **key;
    uint32_t *key_len;
    uint32_t *piece_slot, piece_mask;
    const char **merge; /* left bytes then right bytes */
    uint32_t *merge_left, *merge_right;
    uint32_t *merge_slot, merge_mask;
    int n_merges;
    char *arena;
} drift_tokenizer_t;

/* A vocabulary given as arrays (what a GGUF file holds; tests build small ones). */
typedef struct {
    const char *model; /* "gpt2" or "llama" */
    const char *pre;   /* BPE: a pretok.h name; NULL: "gpt-2" */
    int n_tokens;
    const char *const *tokens;
    const size_t *token_len; /* NULL: strlen */
    const float *scores;     /* NULL: all 0 */
    const int32_t *types;    /* NULL: all DRIFT_TOKEN_NORMAL */
    int n_merges;            /* BPE: "left right", rank = index */
    const char *const *merges;
    const size_t *merge_len; /* NULL: strlen */
    /* DRIFT_TOKENIZER_DEFAULT: llama.cpp's default for the model (SPM: bos 1, eos 2, unk 0, add_bos 1,
     * add_space_prefix 1; BPE: bos = eos = 11, add_bos 0); -1 for ids: none */
    int bos_id, eos_id, eot_id, unk_id, pad_id;
    int fim_ids[3]; /* FIM pad, repo, separator: they end generation too (llama.cpp) */
    int add_bos, add_eos, add_space_prefix;
} drift_vocab_t;
#define DRIFT_TOKENIZER_DEFAULT (-2)
/* Every field zero, the ids and flags DRIFT_TOKENIZER_DEFAULT. */
void drift_vocab_init(drift_vocab_t *v);

/* llama2.c */
DRIFT_MUST_CHECK int drift_tokenizer_read(
    drift_tokenizer_t *t, const char *path, int vocab_size, char *err, size_t errsz);
/* The same from bytes in memory (the reader and the fuzz target share it); `path` only names the
 * data in messages. */
DRIFT_MUST_CHECK int drift_tokenizer_parse(
    drift_tokenizer_t *t, const void *bytes, size_t size, const char *path, int vocab_size, char *err, size_t errsz);

/* A GGUF-style vocabulary (copied: v's arrays need not outlive t). 0, DRIFT_EINVAL (a bad
 * field: err names it, what was expected and found), DRIFT_EUNSUPPORTED (another model or
 * pre-tokenizer) or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_tokenizer_build(drift_tokenizer_t *t, const drift_vocab_t *v, char *err, size_t errsz);

/* The vocabulary of a GGUF file: tokenizer.ggml.{model, pre, tokens, scores, token_type,
 * merges, bos_token_id, eos_token_id, eot_token_id, unknown_token_id, padding_token_id,
 * fim_pad/fim_rep/fim_sep_token_id, add_bos_token, add_eos_token, add_space_prefix}; g may be
 * closed afterwards. Errors as drift_tokenizer_build, each naming the key. */
DRIFT_MUST_CHECK int drift_tokenizer_from_gguf(drift_tokenizer_t *t, const drift_gguf_t *g, char *err, size_t errsz);

void drift_tokenizer_free(drift_tokenizer_t *t);

/* The text of token `tok` following `prev`, NUL-terminated (a pointer into t or into a static
 * byte table; "" for an id out of range). llama2.c: the space after BOS is dropped. GGUF kinds
 * ignore prev; a token whose bytes hold a NUL is cut there: drift_tokenizer_piece has them all. */
const char *drift_tokenizer_decode(const drift_tokenizer_t *t, int prev, int tok);
/* The same with its length in *len (every byte, NUL included). */
const char *drift_tokenizer_piece(const drift_tokenizer_t *t, int prev, int tok, size_t *len);

/* Encode text into ids (BOS = 1 first when bos), at most cap ids; the count in *n.
 * 0, DRIFT_EINVAL (a character the vocabulary cannot express) or DRIFT_ERANGE (cap).
 * GGUF kinds: drift_tokenizer_encode_ex(t, text, bos, 0, ids, cap, n). */
DRIFT_MUST_CHECK int drift_tokenizer_encode(
    const drift_tokenizer_t *t, const char *text, int bos, int *ids, int cap, int *n);
/* llama.cpp's llama_tokenize(text, add_special, parse_special) (see above); llama2.c: add_special
 * is encode's bos, parse_special is ignored. 0, DRIFT_EINVAL, DRIFT_ERANGE (more than cap ids),
 * DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_tokenizer_encode_ex(
    const drift_tokenizer_t *t, const char *text, int add_special, int parse_special, int *ids, int cap, int *n);

/* 1 when tok ends generation (EOS, <|im_end|>, <|endoftext|>, ...; llama2.c: BOS or EOS = 1 or 2, as
 * run.c stops on BOS), else 0. */
int drift_tokenizer_is_eog(const drift_tokenizer_t *t, int tok);

#ifdef __cplusplus
}
#endif

#endif
