/* prompt_sample.c — seeded draws of prompts without replacement (prompt_sample.h). */
#include "prompt_sample.h"

#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "philox.h"
#include "why.h"

static int check(int n, const drift_prompt_file_t *p, const char *stream_name, char *err, size_t errsz)
{
    if (!p || p->n < 1 || !p->text) return drift_why(err, errsz, DRIFT_EINVAL, "prompt sample: no prompt set");
    if (!stream_name) return drift_why(err, errsz, DRIFT_EINVAL, "prompt sample: no stream name");
    if (n < 0 || n > p->n)
        return drift_why(
            err, errsz, DRIFT_EINVAL, "prompt sample: n expected 0 to %d (the prompts in the set), found %d", p->n, n);
    return 0;
}

/* The first n places of a partial Fisher-Yates shuffle of pool[0, m), in place. */
static void partial_shuffle(int *pool, int m, int n, drift_stream_t *st)
{
    for (int i = 0; i < n; i++) {
        int j = i + (int)drift_stream_below(st, (uint32_t)(m - i)), t = pool[i];
        pool[i] = pool[j], pool[j] = t;
    }
}

int drift_prompt_sample(
    int *idx, int n, const drift_prompt_file_t *p, uint64_t seed, const char *stream_name, char *err, size_t errsz)
{
    int rc = check(n, p, stream_name, err, errsz);
    if (rc) return rc;
    if (n && !idx) return drift_why(err, errsz, DRIFT_EINVAL, "prompt sample: no output array");
    int *pool = malloc((size_t)p->n * sizeof *pool);
    if (!pool) return drift_why(err, errsz, DRIFT_ENOMEM, "prompt sample: out of memory");
    for (int i = 0; i < p->n; i++) pool[i] = i;
    drift_stream_t st;
    drift_stream_init(&st, seed, drift_fnv1a32(stream_name), 0, 0);
    partial_shuffle(pool, p->n, n, &st);
    if (n) memcpy(idx, pool, (size_t)n * sizeof *idx);
    free(pool);
    return 0;
}

int drift_prompt_sample_by_kind(
    int *idx, int n, const drift_prompt_file_t *p, uint64_t seed, const char *stream_name, char *err, size_t errsz)
{
    int rc = check(n, p, stream_name, err, errsz);
    if (rc) return rc;
    if (!p->kind)
        return drift_why(err, errsz, DRIFT_EINVAL, "prompt sample by kind: the set has no kinds (no #format: line)");
    if (n && !idx) return drift_why(err, errsz, DRIFT_EINVAL, "prompt sample: no output array");
    int count[DRIFT_PROMPT_N_KINDS] = {0}, take[DRIFT_PROMPT_N_KINDS], start[DRIFT_PROMPT_N_KINDS];
    long long rem[DRIFT_PROMPT_N_KINDS];
    for (int i = 0; i < p->n; i++) {
        int k = drift_prompt_kind_index(p->kind[i]);
        if (k < 0) return drift_why(err, errsz, DRIFT_EINVAL, "prompt sample by kind: prompt %d has no known kind", i);
        count[k]++;
    }
    int given = 0;
    for (int k = 0, at = 0; k < DRIFT_PROMPT_N_KINDS; k++) {
        long long share = (long long)n * count[k];
        take[k] = (int)(share / p->n);
        rem[k] = share % p->n;
        given += take[k];
        start[k] = at;
        at += count[k];
    }
    for (; given < n; given++) { /* largest remainder; the earlier kind among equals */
        int best = -1;
        for (int k = 0; k < DRIFT_PROMPT_N_KINDS; k++)
            if (rem[k] >= 0 && (best < 0 || rem[k] > rem[best])) best = k;
        take[best]++;
        rem[best] = -1;
    }
    int *pool = malloc((size_t)p->n * sizeof *pool), fill[DRIFT_PROMPT_N_KINDS];
    if (!pool) return drift_why(err, errsz, DRIFT_ENOMEM, "prompt sample: out of memory");
    memcpy(fill, start, sizeof fill);
    for (int i = 0; i < p->n; i++) pool[fill[drift_prompt_kind_index(p->kind[i])]++] = i;
    int out = 0;
    for (int k = 0; k < DRIFT_PROMPT_N_KINDS; k++) {
        drift_stream_t st;
        drift_stream_init(&st, seed, drift_fnv1a32(stream_name), (uint32_t)k + 1, 0);
        partial_shuffle(pool + start[k], count[k], take[k], &st);
        for (int i = 0; i < take[k]; i++) idx[out++] = pool[start[k] + i];
    }
    free(pool);
    return 0;
}
