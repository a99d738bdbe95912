/* sum_bounds.c — the sweep against its error bounds (sum_bounds.h). */
#include "sum_bounds.h"
#include "format.h"
#include "gen.h"

#include <math.h>
#include <string.h>

double drift_sum_lambda(size_t n, double u, double target)
{
    double lambda = 0.01;
    while (drift_bound_prob(lambda, n, u) < target) lambda += 0.01;
    return round(lambda * 100) / 100;
}

void drift_sum_summarise(drift_sum_summary_t *sm, double *slope, drift_sum_tally_t *tally,
    const drift_sum_cell_t *cells, const drift_sum_sweep_t *w, double lambda, int slope_from)
{
    const int nd = DRIFT_NDISTS, ns = w->ns, no = w->no, nn = w->log2_max - w->log2_min + 1;
    const long trials = w->trials;
    memset(tally, 0, sizeof *tally);
    for (int d = 0; d < nd; d++)
        for (int s = 0; s < ns; s++) {
            double u = drift_format_info(w->S[s].acc)->unit_roundoff;
            for (int o = 0; o < no; o++)
                for (int li = 0; li < nn; li++) {
                    size_t n = (size_t)1 << (w->log2_min + li);
                    drift_sum_summary_t *q = &sm[(((size_t)d * ns + s) * no + o) * nn + li];
                    memset(q, 0, sizeof *q);
                    q->det = drift_order_bound(&w->O[o], n, u, 1.0);
                    q->prob = drift_order_bound_prob(&w->O[o], n, u, 1.0, lambda);
                    q->p = drift_bound_prob(lambda, n, u);
                    for (long tr = 0; tr < trials; tr++) {
                        const drift_sum_cell_t *c = &cells[drift_sum_sweep_at(w, d, li, tr, s, o)];
                        double e = c->m.abs_err / c->sum_abs;
                        if (!isfinite(c->m.result)) {
                            q->overflow++;
                            tally->overflow++;
                        } else {
                            tally->det_total++;
                            tally->det_ok += c->m.abs_err <= drift_order_bound(&w->O[o], n, u, c->sum_abs);
                            tally->prob_total++;
                            int ok = c->m.abs_err <= drift_order_bound_prob(&w->O[o], n, u, c->sum_abs, lambda);
                            tally->prob_ok += ok;
                            if (!ok && drift_format_info(w->S[s].acc)->p <= 11) {
                                tally->prob_fail_narrow++;
                                tally->prob_fail_stagnant += c->m.rel_err >= 0.25;
                            }
                        }
                        q->mean_e += e / trials;
                        q->mean_rel += c->m.rel_err / trials;
                        if (!(e <= q->max_e)) q->max_e = e; /* NaN and inf propagate */
                    }
                }
        }
    for (int d = 0; d < nd; d++)
        for (int s = 0; s < ns; s++)
            for (int o = 0; o < no; o++) {
                double sx = 0, sy = 0, sxx = 0, sxy = 0;
                int k = 0;
                for (int li = 0; li < nn; li++) {
                    int l2 = w->log2_min + li;
                    double e = sm[(((size_t)d * ns + s) * no + o) * nn + li].mean_e;
                    if (l2 < slope_from || !isfinite(e) || e <= 0) continue;
                    double y = log2(e);
                    sx += l2, sy += y, sxx += (double)l2 * l2, sxy += l2 * y;
                    k++;
                }
                slope[((size_t)d * ns + s) * no + o] = k >= 3 ? (k * sxy - sx * sy) / (k * sxx - sx * sx) : NAN;
            }
}
