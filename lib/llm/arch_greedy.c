/* arch_greedy.c — greedy texts on several GPU generations (arch_greedy.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_greedy.h"
#include "drift.h"
#include "why.h"
#include "greedy_batch.h"
#include "model.h"
#include "pair_stats.h"

#define AG_MAX 16

struct drift_arch_greedy {
    int n, nprompts, V;
    drift_model_t *m[AG_MAX]; /* NULL: no path for the input format */
    drift_model_t *exact;
    drift_prefix_logits_t ex;
};

void drift_arch_greedy_free(drift_arch_greedy_t *g)
{
    if (!g) return;
    for (int a = 0; a < g->n; a++) drift_model_free(g->m[a]);
    drift_prefix_logits_free(&g->ex);
    drift_model_free(g->exact);
    free(g);
}

int drift_arch_greedy_create(drift_arch_greedy_t **g, const drift_checkpoint_t *ck, drift_format_t in,
                             const drift_tc_arch_t *arch, int n, int nprompts, int *ok, char *err, size_t errsize)
{
    if (!g || !ck || !arch || !ok || n < 1 || n > AG_MAX || nprompts < 1) return DRIFT_EINVAL;
    drift_arch_greedy_t *x = calloc(1, sizeof *x);
    if (!x) return DRIFT_ENOMEM;
    x->n = n, x->nprompts = nprompts, x->V = ck->cfg.vocab_size;
    int rc = 0;
    for (int a = 0; a < n && !rc; a++) {
        char spec[64];
        drift_recipe_t mm;
        snprintf(spec, sizeof spec, "%s/tc:%s/fp32/fp32", drift_format_name(in), drift_tc_arch_name(arch[a]));
        int prc = drift_model_recipe_parse(&mm, spec);
        ok[a] = prc == 0;
        if (prc == DRIFT_EUNSUPPORTED) continue; /* no tensor-core path for this input */
        if (prc) {
            snprintf(err, errsize, "recipe %s: not understood", spec);
            rc = prc;
            break;
        }
        drift_numerics_t nx = drift_numerics_fp32();
        drift_numerics_set_mm(&nx, &mm);
        nx.policy = DRIFT_POLICY_BATCH_INVARIANT;
        rc = drift_model_create(&x->m[a], ck, &nx, nprompts, err, errsize);
    }
    drift_numerics_t exn = drift_numerics_exact();
    if (!rc) rc = drift_model_create(&x->exact, ck, &exn, 1, err, errsize);
    if (!rc && (rc = drift_prefix_logits_init(&x->ex, x->exact)))
        drift_why_oom(err, errsize, (double)ck->cfg.seq_len * ck->cfg.vocab_size * sizeof(double), "the exact logits of %d positions x %d tokens",
                      ck->cfg.seq_len, ck->cfg.vocab_size);
    if (rc) {
        drift_arch_greedy_free(x);
        return rc;
    }
    *g = x;
    return 0;
}

long drift_arch_greedy_exact_steps(const drift_arch_greedy_t *g) { return g ? g->ex.steps : 0; }

int drift_arch_greedy_run(drift_arch_greedy_t *g, drift_parting_t *part, double *topgap, const int *prompts, int np,
                          int ntokens)
{
    if (!g || !part || !prompts || np < 1 || ntokens < 1) return DRIFT_EINVAL;
    const int n = g->n, R = g->nprompts, npair = drift_pair_count(n);
    drift_gen_t *gen = calloc((size_t)n * (size_t)R, sizeof *gen); /* [a][r] */
    if (!gen) return DRIFT_ENOMEM;
    int rc = 0, first = -1;
    for (int a = 0; a < n && !rc; a++)
        if (g->m[a]) {
            rc = drift_greedy_batch(gen + (size_t)a * (size_t)R, g->m[a], prompts, R, np, ntokens, 1);
            if (first < 0) first = a;
        }
    for (int r = 0; r < R && !rc; r++) {
        if (topgap && first >= 0)
            for (int t = 0; t < ntokens; t++) {
                const drift_gen_t *x = &gen[(size_t)first * (size_t)R + (size_t)r];
                topgap[(size_t)r * (size_t)ntokens + (size_t)t] = x->top1_logit[t] - x->top2_logit[t];
            }
        for (int a = 0; a < n && !rc; a++)
            for (int b = a + 1; b < n && !rc; b++) {
                if (!g->m[a] || !g->m[b]) continue;
                const drift_gen_t *ga = &gen[(size_t)a * (size_t)R + (size_t)r], *gb = &gen[(size_t)b * (size_t)R + (size_t)r];
                rc = drift_parting(&part[(size_t)r * (size_t)npair + (size_t)drift_pair_index(a, b, n)], ga->token, ga->logits,
                                   gb->token, gb->logits, ntokens, g->V, prompts + (size_t)r * (size_t)np, np, &g->ex);
            }
    }
    for (int i = 0; i < n * R; i++) drift_gen_free(&gen[i]);
    free(gen);
    return rc;
}
