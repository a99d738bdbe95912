/* test_parting.c — where two greedy completions part (parting.h): a hand case, and the exact
 * prefix logits against a fresh model's teacher-forced scores (drift_model_score) on the
 * shipped stories260K checkpoint. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "drift.h"
#include "model.h"
#include "parting.h"
#include "shipped_model.h"

static drift_checkpoint_t ck;
static void setup(void) { shipped_checkpoint_read(&ck); }
static void teardown(void) { drift_checkpoint_free(&ck); }
TestSuite(parting, .init = setup, .fini = teardown, .timeout = 300);

/* The prefix cache gives what a fresh exact model gives teacher-forced (drift_model_score),
 * and computes each step of a shared prefix once. */
Test(parting, prefix_logits_reuse_and_match_teacher_forcing)
{
    drift_numerics_t ex = drift_numerics_exact();
    drift_model_t *m, *f;
    char err[256];
    cr_assert_eq(drift_model_create(&m, &ck, &ex, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_model_create(&f, &ck, &ex, 1, err, sizeof err), 0, "%s", err);
    const int V = ck.cfg.vocab_size;
    drift_prefix_logits_t p;
    cr_assert_eq(drift_prefix_logits_init(&p, m), 0);
    const int s1[] = {1, 5, 9, 30}, s2[] = {1, 5, 9, 31, 2};
    const double *o;
    cr_assert_eq(drift_prefix_logits(&o, &p, s1, 4), 0);
    cr_assert_eq(p.steps, 4);
    cr_assert_eq(drift_prefix_logits(&o, &p, s2, 5), 0);
    cr_assert_eq(p.steps, 6, "the shared prefix 1,5,9 is not recomputed");
    double *ref = malloc(5 * (size_t)V * sizeof *ref);
    cr_assert_eq(drift_model_score(f, ref, s2, 5), 0);
    cr_assert_eq(memcmp(o, ref + 4 * (size_t)V, (size_t)V * sizeof *o), 0, "exact logits are exact: same bits");
    cr_assert_eq(drift_prefix_logits(&o, &p, s1, 3), 0);
    cr_assert_eq(p.steps, 6, "a prefix already scored costs nothing");
    cr_assert_eq(memcmp(o, ref + 2 * (size_t)V, (size_t)V * sizeof *o), 0);
    const int bad[] = {1, 100000};
    cr_assert_eq(drift_prefix_logits(&o, &p, bad, 2), DRIFT_EINVAL);
    cr_assert_eq(drift_prefix_logits(&o, &p, s1, 0), DRIFT_EINVAL);
    free(ref);
    drift_prefix_logits_free(&p);
    drift_model_free(m), drift_model_free(f);
}

/* Hand case: parting step, tokens and spread of two made-up completions. */
Test(parting, parting_by_hand)
{
    enum { V = 3, N = 4 };
    const int ta[N] = {2, 0, 1, 1}, tb[N] = {2, 0, 2, 1}, prompt[1] = {1};
    double la[N * V] = {0}, lb[N * V] = {0};
    la[2 * V + 0] = 0.5, lb[2 * V + 0] = 0.25;  /* step 2: |0.5 - 0.25| = 0.25 */
    la[2 * V + 2] = -1, lb[2 * V + 2] = -1.125; /* 0.125 */
    la[3 * V + 1] = 7;                          /* after the parting: not looked at */
    drift_parting_t p;
    cr_assert_eq(drift_parting(&p, ta, la, tb, lb, N, V, prompt, 1, NULL), 0);
    cr_assert_eq(p.step, 2);
    cr_assert_eq(p.tok_a, 1);
    cr_assert_eq(p.tok_b, 2);
    cr_assert_eq(p.spread, 0.25);
    cr_assert(isnan(p.gap_ab) && isnan(p.gap12) && p.exact_top1 == -1, "no exact model: no exact gap");
    cr_assert_eq(drift_parting(&p, ta, la, ta, la, N, V, prompt, 1, NULL), 0);
    cr_assert_eq(p.step, -1);
    cr_assert_eq(drift_parting(&p, ta, NULL, tb, lb, 2, V, prompt, 1, NULL), 0);
    cr_assert_eq(p.step, -1, "identical over the first 2 tokens");
    cr_assert_eq(drift_parting(&p, ta, la, tb, lb, N, 0, prompt, 1, NULL), DRIFT_EINVAL);
    cr_assert_eq(drift_first_difference(ta, tb, N), 2);
}
