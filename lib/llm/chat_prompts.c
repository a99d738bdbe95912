/* chat_prompts.c — a seeded sample of a prompt set in a chat model's template (chat_prompts.h). */
#include "chat_prompts.h"

#include <stdlib.h>
#include <string.h>

#include "chat_template.h"
#include "drift.h"
#include "prompt_file.h"
#include "prompt_sample.h"
#include "tokenizer.h"
#include "why.h"

#define CHAT_MAX ((size_t)1 << 16) /* a wrapped prompt longer than this cannot fit a context anyway */

void drift_chat_prompts_free(drift_chat_prompt_t *p, int n)
{
    if (!p) return;
    for (int i = 0; i < n; i++) free(p[i].tok), free(p[i].text);
    free(p);
}

int drift_chat_prompts_load(drift_chat_prompt_t **out, const drift_checkpoint_t *ck, const char *path, int n,
    uint64_t seed, const char *stream, int max_tokens, char *err, size_t errsz)
{
    return drift_prompts_load(out, ck, path, n, seed, stream, max_tokens, 1, err, errsz);
}

int drift_prompts_load(drift_chat_prompt_t **out, const drift_checkpoint_t *ck, const char *path, int n, uint64_t seed,
    const char *stream, int max_tokens, int wrap, char *err, size_t errsz)
{
    if (!out || !ck || !path || !stream || n < 1 || max_tokens < 1)
        return drift_why(err, errsz, DRIFT_EINVAL, "chat prompts: bad arguments");
    if (!ck->gguf)
        return drift_why(err, errsz, DRIFT_EINVAL, "a llama2.c checkpoint holds no tokenizer or chat template");
    *out = NULL;
    drift_prompt_file_t pf;
    int rc = drift_prompt_file_read(&pf, path, err, errsz);
    if (rc) return rc;
    drift_tokenizer_t tz;
    drift_chat_template_t tpl;
    drift_chat_prompt_t *p = NULL;
    int *idx = NULL, *head = NULL, nh = 0, tz_ok = 0;
    char *chat = NULL;
    if ((rc = drift_tokenizer_from_gguf(&tz, ck->gguf, err, errsz))) goto done;
    tz_ok = 1;
    tpl = (drift_chat_template_t){DRIFT_CHAT_NONE, ""}; /* without wrap: the text as written */
    if (wrap && (rc = drift_chat_template_from_gguf(&tpl, ck->gguf, err, errsz))) goto done;
    rc = DRIFT_ENOMEM;
    p = calloc((size_t)n, sizeof *p);
    idx = malloc((size_t)n * sizeof *idx);
    head = malloc((size_t)max_tokens * sizeof *head);
    chat = malloc(CHAT_MAX);
    if (!p || !idx || !head || !chat) {
        drift_why(err, errsz, rc, "out of memory for %d prompts", n);
        goto done;
    }
    if ((rc = drift_prompt_sample(idx, n, &pf, seed, stream, err, errsz))) goto done;
    size_t len;
    if ((rc = drift_chat_wrap(chat, CHAT_MAX, &tpl, "", &len, err, errsz)) ||
        (rc = drift_tokenizer_encode_ex(&tz, chat, 1, 1, head, max_tokens, &nh))) {
        drift_why(err, errsz, rc, "the chat template around an empty turn does not encode (%s)", drift_strerror(rc));
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const char *text = pf.text[idx[i]];
        rc = DRIFT_ENOMEM;
        p[i].tok = malloc((size_t)max_tokens * sizeof(int));
        p[i].text = malloc(strlen(text) + 1);
        if (!p[i].tok || !p[i].text) {
            drift_why(err, errsz, rc, "out of memory for prompt %d", idx[i]);
            goto done;
        }
        strcpy(p[i].text, text);
        if ((rc = drift_chat_wrap(chat, CHAT_MAX, &tpl, text, &len, err, errsz))) goto done;
        rc = drift_tokenizer_encode_ex(&tz, chat, 1, 1, p[i].tok, max_tokens, &p[i].n);
        if (rc) {
            drift_why(err, errsz, rc == DRIFT_ERANGE ? DRIFT_EINVAL : rc, "prompt %d of %s: %s", idx[i], path,
                rc == DRIFT_ERANGE ? "more tokens than fit beside the generated ones" : drift_strerror(rc));
            rc = rc == DRIFT_ERANGE ? DRIFT_EINVAL : rc;
            goto done;
        }
        int s = 0;
        while (s < nh && s < p[i].n && p[i].tok[s] == head[s]) s++;
        p[i].prefix = s, p[i].index = idx[i], p[i].seed = seed;
        p[i].kind = pf.kind ? pf.kind[idx[i]] : "-";
    }
    *out = p, p = NULL, rc = 0;
done:
    drift_chat_prompts_free(p, n);
    free(idx), free(head), free(chat);
    if (tz_ok) drift_tokenizer_free(&tz);
    drift_prompt_file_free(&pf);
    return rc;
}
