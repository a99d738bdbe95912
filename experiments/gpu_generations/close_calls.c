/* close_calls.c — planted close calls under several recipes (close_calls.h). */
#include <stdlib.h>

#include "close_calls.h"
#include "drift.h"
#include "lmhead.h"
#include "philox.h"

#define CLOSE_MAX DRIFT_LMHEAD_MAXCFG

int drift_close_call_picks(unsigned char *pick, unsigned char *missed, const drift_hidden_model_t *model, size_t V,
    size_t K, double gap, drift_format_t in, const drift_recipe_t *rec, const int *use, int n, uint64_t seed,
    uint32_t key, uint32_t point, size_t np)
{
    if (!pick || !missed || !model || !rec || !use || n < 1 || n > CLOSE_MAX) return DRIFT_EINVAL;
    int err = 0;
    DRIFT_OMP("omp parallel for schedule(dynamic, 4) reduction(|:err)")
    for (size_t i = 0; i < np; i++) {
        double *h = malloc(K * sizeof *h), *w1 = malloc(K * sizeof *w1), *w2 = malloc(K * sizeof *w2);
        double *hf = malloc(K * sizeof *hf), *W2 = malloc(2 * K * sizeof *W2);
        if (!h || !w1 || !w2 || !hf || !W2)
            err |= 1;
        else {
            drift_stream_t ps;
            drift_stream_init(&ps, seed, key, point, (uint32_t)i);
            double sc;
            int swap;
            drift_plant_t pt;
            drift_recipe_t cfg[CLOSE_MAX];
            int map[CLOSE_MAX], nc = 0;
            for (int c = 0; c < n; c++)
                if (use[c]) map[nc] = c, cfg[nc++] = rec[c];
            drift_lmhead_result_t res;
            if (drift_gen_planted_pair(h, w1, w2, &sc, &swap, model, V, gap, 0, &ps) ||
                drift_plant_pair_in(&pt, hf, W2, h, w1, w2, K, gap * sc, swap, 0, in) ||
                drift_lmhead_eval_full(&res, hf, W2, 2, K, cfg, nc))
                err |= 1;
            else {
                for (int c = 0; c < nc; c++)
                    pick[i * (size_t)(n + 1) + (size_t)map[c]] = (unsigned char)res.computed[c].top1;
                pick[i * (size_t)(n + 1) + (size_t)n] = (unsigned char)res.exact.top1;
                missed[i] = !pt.reached;
            }
        }
        free(h), free(w1), free(w2), free(hf), free(W2);
    }
    return err ? DRIFT_ENOMEM : 0;
}

int drift_close_call_counts(drift_count_t *cnt, long *missed, const drift_hidden_model_t *model, size_t V, size_t K,
    double gap, drift_format_t in, const drift_recipe_t *rec, const int *use, int n, uint64_t seed, uint32_t key,
    uint32_t point, size_t np)
{
    if (!cnt || !missed) return DRIFT_EINVAL;
    unsigned char *pick = calloc(np * (size_t)(n + 1) + 1, 1), *miss = calloc(np + 1, 1);
    int rc = pick && miss ? drift_close_call_picks(pick, miss, model, V, K, gap, in, rec, use, n, seed, key, point, np)
                          : DRIFT_ENOMEM;
    for (size_t i = 0; i < np && !rc; i++) {
        const unsigned char *x = pick + i * (size_t)(n + 1);
        *missed += miss[i];
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b <= n; b++)
                if (use[a] && (b == n || use[b])) {
                    drift_count_t *c = &cnt[drift_pair_index(a, b, n)];
                    c->n++, c->k += x[a] != x[b];
                }
    }
    free(pick), free(miss);
    return rc;
}
