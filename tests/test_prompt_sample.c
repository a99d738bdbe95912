/* test_prompt_sample.c — seeded draws of prompts without replacement (prompt_sample.h):
 *   - the draw is the partial Fisher-Yates of its definition, replayed here on the Philox
 *     stream by hand (the loop the header writes out), for several sizes and seeds;
 *   - a sample has no repeats and only indices of the set; different seeds (and names) give
 *     different samples; n = 0 and n = the set size work; n > the set size is refused;
 *   - by kind: each kind's count is the largest-remainder share, worked out by hand below. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "philox.h"
#include "prompt_file.h"
#include "prompt_sample.h"

/* A set of n prompts; kinds cycle through `kinds` (NULL: no kinds). */
static drift_prompt_file_t set_of(int n, const char *const *kinds, int nk)
{
    drift_prompt_file_t p = {n, calloc((size_t)n, sizeof(char *)), kinds ? calloc((size_t)n, sizeof(char *)) : NULL};
    cr_assert(p.text);
    for (int i = 0; i < n; i++) {
        p.text[i] = malloc(16);
        cr_assert(p.text[i]);
        snprintf(p.text[i], 16, "p%d", i);
        if (kinds) p.kind[i] = drift_prompt_kinds[drift_prompt_kind_index(kinds[i % nk])];
    }
    return p;
}

Test(prompt_sample, is_the_partial_fisher_yates_of_its_definition)
{
    static const struct {
        int size, n;
        uint64_t seed;
    } C[] = {{10, 3, 1}, {10, 10, 2}, {585, 64, 7}, {1, 1, 0}, {2, 1, 0xffffffffffULL}};
    for (size_t c = 0; c < sizeof C / sizeof C[0]; c++) {
        drift_prompt_file_t p = set_of(C[c].size, NULL, 0);
        int got[600], pool[600];
        char err[128];
        cr_assert_eq(drift_prompt_sample(got, C[c].n, &p, C[c].seed, "test.prompts", err, sizeof err), 0, "%s", err);
        for (int i = 0; i < C[c].size; i++) pool[i] = i;
        drift_stream_t st;
        drift_stream_init(&st, C[c].seed, drift_fnv1a32("test.prompts"), 0, 0);
        for (int i = 0; i < C[c].n; i++) {
            int j = i + (int)drift_stream_below(&st, (uint32_t)(C[c].size - i)), t = pool[i];
            pool[i] = pool[j], pool[j] = t;
            cr_expect_eq(got[i], pool[i], "case %zu, place %d", c, i);
        }
        drift_prompt_file_free(&p);
    }
}

Test(prompt_sample, no_repeats_and_seeds_differ)
{
    drift_prompt_file_t p = set_of(585, NULL, 0);
    char err[128];
    int a[64], b[64], c[64];
    cr_assert_eq(drift_prompt_sample(a, 64, &p, 1, "deployments.prompts", err, sizeof err), 0);
    cr_assert_eq(drift_prompt_sample(b, 64, &p, 2, "deployments.prompts", err, sizeof err), 0);
    cr_assert_eq(drift_prompt_sample(c, 64, &p, 1, "real_gaps.prompts", err, sizeof err), 0);
    char seen[585] = {0};
    for (int i = 0; i < 64; i++) {
        cr_assert(a[i] >= 0 && a[i] < 585);
        cr_expect(!seen[a[i]], "index %d drawn twice", a[i]);
        seen[a[i]] = 1;
    }
    /* two independent draws of 64 agree in every place with probability far below 1e-100 */
    cr_expect(memcmp(a, b, sizeof a), "seeds 1 and 2 drew the same sample");
    cr_expect(memcmp(a, c, sizeof a), "two stream names drew the same sample");
    /* the whole set: a permutation */
    int all[585];
    memset(seen, 0, sizeof seen);
    cr_assert_eq(drift_prompt_sample(all, 585, &p, 3, "x", err, sizeof err), 0);
    for (int i = 0; i < 585; i++) seen[all[i]]++;
    for (int i = 0; i < 585; i++) cr_expect_eq(seen[i], 1, "index %d", i);
    cr_expect_eq(drift_prompt_sample(NULL, 0, &p, 3, "x", err, sizeof err), 0); /* nothing drawn */
    drift_prompt_file_free(&p);
}

Test(prompt_sample, bad_requests)
{
    drift_prompt_file_t p = set_of(5, NULL, 0);
    char err[128];
    int idx[8];
    cr_expect_eq(drift_prompt_sample(idx, 6, &p, 1, "x", err, sizeof err), DRIFT_EINVAL);
    cr_expect(strstr(err, "n expected 0 to 5 (the prompts in the set), found 6"), "%s", err);
    cr_expect_eq(drift_prompt_sample(idx, -1, &p, 1, "x", err, sizeof err), DRIFT_EINVAL);
    cr_expect_eq(drift_prompt_sample(idx, 1, &p, 1, NULL, err, sizeof err), DRIFT_EINVAL);
    cr_expect_eq(drift_prompt_sample(idx, 1, NULL, 1, "x", err, sizeof err), DRIFT_EINVAL);
    cr_expect_eq(drift_prompt_sample_by_kind(idx, 1, &p, 1, "x", err, sizeof err), DRIFT_EINVAL); /* no kinds */
    cr_expect(strstr(err, "no kinds"), "%s", err);
    drift_prompt_file_free(&p);
}

Test(prompt_sample, by_kind_shares)
{
    /* 10 prompts: story 0 3 6 9 (4), fact 1 4 7 (3), code 2 5 8 (3). n = 5: shares 5*4/10 = 2.0,
     * 5*3/10 = 1.5, 1.5: floors 2, 1, 1 (4 places), remainders 0, 5, 5: the fifth goes to fact
     * (the earlier of equals). So story 2, fact 2, code 1, in that order. */
    static const char *const K[] = {"story", "fact", "code"};
    drift_prompt_file_t p = set_of(10, K, 3);
    char err[128];
    int idx[10];
    cr_assert_eq(drift_prompt_sample_by_kind(idx, 5, &p, 4, "strata", err, sizeof err), 0, "%s", err);
    static const int want_kind[] = {0, 0, 1, 1, 2};
    char seen[10] = {0};
    for (int i = 0; i < 5; i++) {
        cr_expect_eq(drift_prompt_kind_index(p.kind[idx[i]]), want_kind[i], "place %d: index %d", i, idx[i]);
        cr_expect(!seen[idx[i]], "index %d twice", idx[i]);
        seen[idx[i]] = 1;
    }
    /* kind k's draw is its own partial Fisher-Yates on point k + 1: story's pool is 0 3 6 9 */
    drift_stream_t st;
    drift_stream_init(&st, 4, drift_fnv1a32("strata"), 1, 0);
    int pool[] = {0, 3, 6, 9};
    for (int i = 0; i < 2; i++) {
        int j = i + (int)drift_stream_below(&st, (uint32_t)(4 - i)), t = pool[i];
        pool[i] = pool[j], pool[j] = t;
        cr_expect_eq(idx[i], pool[i], "story place %d", i);
    }
    /* n = the set: every prompt once */
    cr_assert_eq(drift_prompt_sample_by_kind(idx, 10, &p, 4, "strata", err, sizeof err), 0);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 10; i++) seen[idx[i]]++;
    for (int i = 0; i < 10; i++) cr_expect_eq(seen[i], 1);
    drift_prompt_file_free(&p);
}
