/* arch_greedy.c — greedy texts on several GPU generations (arch_greedy.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_greedy.h"
#include "tc_model.h"
#include "drift.h"
#include "why.h"
#include "greedy_batch.h"
#include "model.h"
#include "pair_stats.h"

#define AG_MAX 16

struct drift_arch_greedy {
    int n, nprompts, V;
    const drift_checkpoint_t *ck;
    drift_numerics_t nx[AG_MAX];
    int ok[AG_MAX];
    int same_as[AG_MAX]; /* the first earlier architecture with the same tensor-core model for the input, or -1 */
    drift_model_t *exact;
    drift_prefix_logits_t ex;
};

void drift_arch_greedy_free(drift_arch_greedy_t *g)
{
    if (!g) return;
    drift_prefix_logits_free(&g->ex);
    drift_model_free(g->exact);
    free(g);
}

/* Two architectures whose rows of the tensor-core table agree compute every GEMM alike
 * (tc_model.c reads nothing else of the architecture), so one decode serves both. */
static int same_tc(drift_tc_arch_t a, drift_tc_arch_t b, drift_format_t in)
{
    drift_tc_model_t x, y;
    if (drift_tc_model(&x, a, in, DRIFT_FP32) || drift_tc_model(&y, b, in, DRIFT_FP32)) return 0;
    return x.algo == y.algo && x.block == y.block && x.neab == y.neab && x.min_exp == y.min_exp &&
           x.rounding == y.rounding && x.subnormals == y.subnormals;
}

int drift_arch_greedy_create(drift_arch_greedy_t **g, const drift_checkpoint_t *ck, drift_format_t in,
    const drift_tc_arch_t *arch, int n, int nprompts, int *ok, char *err, size_t errsz)
{
    if (!g || !ck || !arch || !ok || n < 1 || n > AG_MAX || nprompts < 1) return DRIFT_EINVAL;
    drift_arch_greedy_t *x = calloc(1, sizeof *x);
    if (!x) return DRIFT_ENOMEM;
    x->n = n, x->nprompts = nprompts, x->V = ck->cfg.vocab_size, x->ck = ck;
    int rc = 0;
    for (int a = 0; a < n && !rc; a++) {
        char spec[64];
        drift_recipe_t mm;
        snprintf(spec, sizeof spec, "%s/tc:%s/fp32/fp32", drift_format_name(in), drift_tc_arch_name(arch[a]));
        int prc = drift_model_recipe_parse(&mm, spec);
        x->ok[a] = ok[a] = prc == 0;
        x->same_as[a] = -1;
        if (prc == DRIFT_EUNSUPPORTED) continue; /* no tensor-core path for this input */
        if (prc) {
            snprintf(err, errsz, "recipe %s: not understood", spec);
            rc = prc;
            break;
        }
        drift_numerics_t nx = drift_numerics_fp32();
        drift_numerics_set_mm(&nx, &mm);
        nx.policy = DRIFT_POLICY_BATCH_INVARIANT;
        x->nx[a] = nx;
        rc = drift_numerics_check(&nx, &ck->cfg, err, errsz);
        for (int b = 0; b < a && x->same_as[a] < 0; b++)
            if (x->ok[b] && same_tc(arch[a], arch[b], in)) x->same_as[a] = b;
    }
    if (rc) {
        drift_arch_greedy_free(x);
        return rc;
    }
    *g = x;
    return 0;
}

long drift_arch_greedy_exact_steps(const drift_arch_greedy_t *g) { return g ? g->ex.steps : 0; }

int drift_arch_greedy_same_as(const drift_arch_greedy_t *g, int a)
{
    return g && a >= 0 && a < g->n ? g->same_as[a] : -1;
}

int drift_arch_greedy_run(drift_arch_greedy_t *g, drift_parting_t *part, double *topgap, const int *const *prompts,
    const int *np, int ntokens, char *err, size_t errsz)
{
    if (!g || !part || !prompts || !np || ntokens < 1) return DRIFT_EINVAL;
    const int n = g->n, R = g->nprompts, npair = drift_pair_count(n);
    drift_gen_t *gen = calloc((size_t)n * (size_t)R, sizeof *gen); /* [a][r] */
    if (!gen) return DRIFT_ENOMEM;
    int rc = 0, first = -1;
    /* one model at a time: a real model's weights, held per recipe, are the largest allocation */
    for (int a = 0; a < n && !rc; a++) {
        if (!g->ok[a] || g->same_as[a] >= 0) continue;
        drift_model_t *m;
        if ((rc = drift_model_create(&m, g->ck, &g->nx[a], R, err, errsz))) break;
        rc = drift_greedy_batch_var(gen + (size_t)a * (size_t)R, m, prompts, np, R, ntokens, 1);
        drift_model_free(m);
        if (first < 0) first = a;
    }
    /* the exact reference only when some pair parts: a real model's exact weights cost as much as a decode's */
    for (int r = 0; r < R && !rc && !g->exact; r++)
        for (int a = 0; a < n && !rc && !g->exact; a++)
            for (int b = a + 1; b < n && !rc && !g->exact; b++) {
                int ia = g->same_as[a] >= 0 ? g->same_as[a] : a, ib = g->same_as[b] >= 0 ? g->same_as[b] : b;
                if (!g->ok[a] || !g->ok[b] || ia == ib) continue;
                if (drift_first_difference(gen[(size_t)ia * R + r].token, gen[(size_t)ib * R + r].token, ntokens) < 0)
                    continue;
                drift_numerics_t exn = drift_numerics_exact();
                if ((rc = drift_model_create(&g->exact, g->ck, &exn, 1, err, errsz))) break;
                if ((rc = drift_prefix_logits_init(&g->ex, g->exact)))
                    drift_why_oom(err, errsz, (double)g->ck->cfg.seq_len * g->V * sizeof(double),
                        "the exact logits of %d positions x %d tokens", g->ck->cfg.seq_len, g->V);
            }
#define GEN(a, r) (&gen[(size_t)(g->same_as[a] >= 0 ? g->same_as[a] : (a)) * (size_t)R + (size_t)(r)])
    for (int r = 0; r < R && !rc; r++) {
        if (topgap && first >= 0)
            for (int t = 0; t < ntokens; t++) {
                const drift_gen_t *x = GEN(first, r);
                topgap[(size_t)r * (size_t)ntokens + (size_t)t] = x->top1_logit[t] - x->top2_logit[t];
            }
        for (int a = 0; a < n && !rc; a++)
            for (int b = a + 1; b < n && !rc; b++) {
                if (!g->ok[a] || !g->ok[b]) continue;
                const drift_gen_t *ga = GEN(a, r), *gb = GEN(b, r);
                rc = drift_parting(&part[(size_t)r * (size_t)npair + (size_t)drift_pair_index(a, b, n)], ga->token,
                    ga->logits, gb->token, gb->logits, ntokens, g->V, prompts[r], np[r], g->exact ? &g->ex : NULL);
            }
    }
#undef GEN
    for (int i = 0; i < n * R; i++) drift_gen_free(&gen[i]);
    free(gen);
    return rc;
}
