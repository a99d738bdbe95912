/* fuzz/checkpoint.c — the llama2.c checkpoint and tokenizer loaders (checkpoint.h) on any bytes.
 * A checkpoint either parses into tensors that lie inside its data, with a configuration the
 * validator accepts, or is refused with a message; the tokenizer the same, and a parsed
 * tokenizer must encode and decode its own pieces without reading outside them. */
#include "common.h"
#include "checkpoint.h"
#include "drift.h"

static void fuzz_checkpoint(const uint8_t *data, size_t size)
{
    drift_checkpoint_t ck;
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_checkpoint_parse(&ck, data, size, err, sizeof err) != DRIFT_OK) {
        if (!err[0]) abort(); /* a refusal always says why */
        return;
    }
    size_t n;
    if (drift_llm_config_check(&ck.cfg, &n, err, sizeof err) != DRIFT_OK || n != ck.nfloats) abort();
    const float *end = ck.data + ck.nfloats;
    if (ck.wcls < ck.data || ck.wcls >= end) abort(); /* the classifier lies inside the data */
    drift_checkpoint_free(&ck);
}

static void fuzz_tokenizer(const uint8_t *data, size_t size)
{
    if (size < 1) return;
    int vocab = 1 + data[0] % 64; /* the first byte chooses the vocabulary the file must hold */
    drift_tokenizer_t t;
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_tokenizer_parse(&t, data + 1, size - 1, "fuzz", vocab, err, sizeof err) != DRIFT_OK) {
        if (!err[0]) abort();
        return;
    }
    int ids[512], nids = 0;
    for (int i = 0; i < t.vocab_size; i++) {
        (void)drift_tokenizer_decode(&t, i ? i - 1 : 1, i);
        /* any code is an answer here (clang, the only compiler of fuzz/, honours the cast): the target looks for crashes */
        if (strlen(t.pieces[i]) < 64) (void)drift_tokenizer_encode(&t, t.pieces[i], 1, ids, 512, &nids);
    }
    drift_tokenizer_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_checkpoint(data, size);
    fuzz_tokenizer(data, size);
    return 0;
}
