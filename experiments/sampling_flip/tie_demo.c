/* tie_demo.c — a planted exact tie at T = 1e-8 (tie_demo.h). */
#include "tie_demo.h"
#include "sampler.h"
#include "drift.h"
#include "exact.h"
#include "philox.h"

#include <math.h>
#include <stdlib.h>

int drift_tie_demo(drift_tie_demo_t *t, const drift_hidden_model_t *model, size_t K, drift_format_t f, uint64_t seed,
    uint32_t tie_stream, uint32_t u_stream, long q, long draws)
{
    const size_t VT = DRIFT_TIE_DEMO_V;
    drift_stream_t s;
    drift_stream_init(&s, seed, tie_stream, (uint32_t)K, (uint32_t)q);
    double *h = malloc(K * sizeof *h), *Wt = malloc(VT * K * sizeof *Wt), l[DRIFT_TIE_DEMO_V], w[DRIFT_TIE_DEMO_V];
    if (!h || !Wt) {
        free(h), free(Wt);
        return DRIFT_ENOMEM;
    }
    drift_gen_hidden(h, model, &s);
    for (size_t v = 0; v < VT; v++) drift_gen_weight_row(Wt + v * K, K, &s);
    size_t a = drift_stream_below(&s, (uint32_t)VT), b;
    do b = drift_stream_below(&s, (uint32_t)VT);
    while (b == a);
    if (a > b) {
        size_t x = a;
        a = b;
        b = x;
    }
    double sc = drift_logit_scale(h, K);
    drift_gen_row_with_logit(Wt + a * K, h, K, 5 * sc, &s); /* well above the 64 others */
    int rc = drift_plant_tie(h, Wt + b * K, Wt + a * K, K, 16, &s);
    for (size_t i = 0; i < K; i++) h[i] = drift_rne(h[i], f);
    for (size_t i = 0; i < VT * K; i++) Wt[i] = drift_rne(Wt[i], f);
    for (size_t v = 0; v < VT && !rc; v++) rc = drift_exact_dot(&l[v], h, Wt + v * K, K, DRIFT_FP64, DRIFT_RNE);
    if (rc) {
        free(h), free(Wt);
        return rc;
    }
    double sum = 0, lmax = l[drift_cdf_argmax(l, VT)];
    for (size_t v = 0; v < VT; v++) sum += (w[v] = exp((l[v] - lmax) / 1e-8));
    *t = (drift_tie_demo_t){a, b, l[a], l[b], w[a] / sum, w[b] / sum, 0, drift_cdf_argmax(l, VT)};
    for (long j = 0; j < draws; j++) {
        drift_stream_t su;
        drift_stream_init(&su, seed, u_stream, (uint32_t)q, (uint32_t)j);
        t->n_b += drift_cdf_draw(w, VT, sum, drift_stream_uniform(&su)) == b;
    }
    free(h);
    free(Wt);
    return DRIFT_OK;
}
