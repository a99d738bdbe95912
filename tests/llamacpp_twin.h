/* llamacpp_twin.h — shared body of test_llamacpp_twin.c and long_llamacpp_twin.c: greedy
 * decoding of the witness record's prompts with drift_llamacpp_step, held bit for bit against
 * llama.cpp's own records (tests/data/llamacpp_smollm2_avx2.csv, and _avx512.csv from the
 * AVX-512 build: for each prompt its token ids, then per step the greedy token, its logit, the
 * runner-up and its logit, logits in C99 hex).
 *
 * A record made with --threads N is replayed with drift_llamacpp_set_threads(N).
 * Each prompt is decoded as llama.cpp decoded it: the prompt in one step, then one step per
 * token, the next input being the record's token (so a late divergence is still measured step
 * by step). Per prompt it prints the first step whose top-2 logits differ and the first step
 * whose token differs (-1: none). The tolerance is 0: the twin's claim is bit-identity. */
#ifndef DRIFT_TESTS_LLAMACPP_TWIN_H
#define DRIFT_TESTS_LLAMACPP_TWIN_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drift.h"
#include "gguf.h"
#include "llamacpp_forward.h"

#define TWIN_MODEL DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
#define TWIN_RECORD DRIFT_SOURCE_DIR "/tests/data/llamacpp_smollm2_avx2.csv"
#define TWIN_RECORD512 DRIFT_SOURCE_DIR "/tests/data/llamacpp_smollm2_avx512.csv"
#define TWIN_MAX_PROMPTS 64
#define TWIN_MAX_PROMPT_TOKENS 512
#define TWIN_MAX_STEPS 512

typedef struct {
    int n_prompt, n_steps;
    int prompt[TWIN_MAX_PROMPT_TOKENS];
    int tok[TWIN_MAX_STEPS], second[TWIN_MAX_STEPS];
    float logit[TWIN_MAX_STEPS], second_logit[TWIN_MAX_STEPS];
} twin_prompt_t;

/* Reads a record; returns the number of prompts (0 when the file is absent). */
static inline int twin_read_record(twin_prompt_t *p, int max_prompts, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return 0;
    }
    char line[1024];
    int n = 0;
    memset(p, 0, sizeof *p * (size_t)max_prompts);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strncmp(line, "prompt_id", 9)) {
            /* a header line may be longer than the buffer (the decoded outputs): skip all of it */
            while (!strchr(line, '\n') && fgets(line, sizeof line, f)) {
            }
            continue;
        }
        char kind[16], lh[64], slh[64];
        int id, step, tok, sec;
        if (sscanf(line, "%d,%15[a-z],%d,%d", &id, kind, &step, &tok) != 4 || id < 0 || id >= max_prompts || step < 0) {
            cr_log_error("record: unreadable line: %s", line);
            continue;
        }
        twin_prompt_t *q = &p[id];
        if (!strcmp(kind, "prompt") && step < TWIN_MAX_PROMPT_TOKENS) {
            q->prompt[step] = tok;
            q->n_prompt = step + 1 > q->n_prompt ? step + 1 : q->n_prompt;
        } else if (!strcmp(kind, "gen") && step < TWIN_MAX_STEPS &&
                   sscanf(line, "%*d,%*[a-z],%*d,%*d,%63[^,],%*[^,],%d,%63[^,],", lh, &sec, slh) == 3) {
            q->tok[step] = tok;
            q->second[step] = sec;
            q->logit[step] = strtof(lh, NULL);
            q->second_logit[step] = strtof(slh, NULL);
            q->n_steps = step + 1 > q->n_steps ? step + 1 : q->n_steps;
        }
        n = id + 1 > n ? id + 1 : n;
    }
    fclose(f);
    return n;
}

/* argmax as the witness takes it: first index wins a tie; the second the same over the rest */
static inline void twin_top2(const float *l, int n, int *b1, int *b2)
{
    int a = 0;
    for (int i = 1; i < n; i++) {
        if (l[i] > l[a]) {
            a = i;
        }
    }
    int b = a == 0 ? 1 : 0;
    for (int i = 0; i < n; i++) {
        if (i != a && l[i] > l[b]) {
            b = i;
        }
    }
    *b1 = a;
    *b2 = b;
}

static inline int twin_same(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Decodes prompts[0 .. np) (ids into the record; np < 0: all) for at most max_steps steps each,
 * with the twin of the build that wrote the record (isa). */
static inline void twin_run_threads(
    const char *record, drift_llamacpp_isa_t isa, int threads, const int *prompts, int np, int max_steps)
{
    if (access(TWIN_MODEL, R_OK) != 0 || access(record, R_OK) != 0) {
        cr_skip_test("needs %s and %s", TWIN_MODEL, record);
    }
    static twin_prompt_t rec[TWIN_MAX_PROMPTS];
    const int nrec = twin_read_record(rec, TWIN_MAX_PROMPTS, record);
    int all[TWIN_MAX_PROMPTS];
    if (np < 0) {
        for (int i = 0; i < nrec; i++) {
            all[i] = i;
        }
        prompts = all;
        np = nrec;
    }
    char err[512];
    drift_gguf_t g;
    cr_assert_eq(drift_gguf_open(&g, TWIN_MODEL, err, sizeof err), 0, "%s", err);
    drift_llamacpp_t *e;
    cr_assert_eq(drift_llamacpp_create(&e, &g, 512, err, sizeof err), 0, "%s", err); /* the witness's n_ctx */
    cr_assert_eq(drift_llamacpp_set_isa(e, isa), 0);
    cr_assert_eq(drift_llamacpp_set_threads(e, threads), 0);
    const int nv = drift_llamacpp_n_vocab(e);
    float *logits = malloc((size_t)nv * sizeof *logits);
    cr_assert(logits);
    long steps = 0, equal = 0, tokens = 0;
    for (int k = 0; k < np; k++) {
        const int id = prompts[k];
        cr_assert(id < nrec && rec[id].n_prompt > 0 && rec[id].n_steps > 0, "record has no prompt %d", id);
        const twin_prompt_t *r = &rec[id];
        drift_llamacpp_reset(e);
        int first_logit = -1, first_token = -1, pos = 0;
        const int *in = r->prompt;
        int n_in = r->n_prompt;
        for (int s = 0; s < r->n_steps && s < max_steps; s++) {
            const int rc = drift_llamacpp_step(e, logits, pos, in, n_in);
            cr_assert_eq(rc, 0, "prompt %d step %d: %s", id, s, drift_strerror(rc));
            pos += n_in;
            int b1, b2;
            twin_top2(logits, nv, &b1, &b2);
            const int same = b1 == r->tok[s] && b2 == r->second[s] && twin_same(logits[b1], r->logit[s]) &&
                             twin_same(logits[b2], r->second_logit[s]);
            if (!same && first_logit < 0) {
                first_logit = s;
                cr_log_error("prompt %d step %d: twin %d %a / %d %a, llama.cpp %d %a / %d %a", id, s, b1,
                    (double)logits[b1], b2, (double)logits[b2], r->tok[s], (double)r->logit[s], r->second[s],
                    (double)r->second_logit[s]);
            }
            if (b1 != r->tok[s] && first_token < 0) {
                first_token = s;
            }
            steps++;
            equal += same;
            tokens += b1 == r->tok[s];
            in = &r->tok[s];
            n_in = 1;
        }
        printf(
            "llamacpp twin %s: prompt %d (%d tokens): first step with different logits %d, first different token %d\n",
            isa == DRIFT_LLAMACPP_AVX512 ? "avx512" : "avx2", id, r->n_prompt, first_logit, first_token);
    }
    printf("llamacpp twin %s: %ld of %ld steps with bit-equal top-1/top-2 logits, %ld tokens equal\n",
        isa == DRIFT_LLAMACPP_AVX512 ? "avx512" : "avx2", equal, steps, tokens);
    free(logits);
    drift_llamacpp_free(e);
    drift_gguf_close(&g);
    cr_expect_eq(equal, steps, "%ld of %ld steps differ from llama.cpp's record", steps - equal, steps);
}

static inline void twin_run(const char *record, drift_llamacpp_isa_t isa, const int *prompts, int np, int max_steps)
{
    twin_run_threads(record, isa, 1, prompts, np, max_steps);
}

#endif
