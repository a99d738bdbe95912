/* takeaway.c — the real_gaps fragment's takeaway, from the numbers above it (real_gaps_lab.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "errlaw.h"
#include "real_gaps_lab.h"

void drift_rg_takeaway(
    drift_out_t *out, size_t NP, double median, const long *below, const drift_rg_conf_result_t *res, int nconf, int R)
{
    drift_md_text(out, "**Takeaway.**\n\n");
    drift_md_text(out,
        "- Over %zu positions the median exact gap is %.3g logits; %.3g of the gaps are below 0.1 and %.3g below 0.01.\n",
        NP, median, (double)below[1] / (double)NP, (double)below[0] / (double)NP);
    drift_md_text(
        out, "- sigma, and flips predicted by Phi / by the convolved law against observed, of %zu positions:", NP);
    for (int c = 0; c < nconf; c++)
        drift_md_text(out, "%s %s %.3g, %.3g / %.3g against %ld", c ? ";" : "", res[c].name, res[c].sigma,
            res[c].pred_gauss, res[c].pred_conv, res[c].observed);
    drift_md_text(out, ".\n");
    double worst = 1;
    int wc = -1;
    for (int c = 0; c < nconf; c++) {
        if (res[c].observed < 5) continue; /* too few flips to compare a rate */
        double r = res[c].pred_gauss > 0 ? (double)res[c].observed / res[c].pred_gauss : INFINITY;
        if (r < 1) r = 1 / r;
        if (r > worst || wc < 0) worst = r, wc = c;
    }
    if (wc >= 0)
        drift_md_text(out,
            "- Where at least 5 flips were observed, the Gaussian prediction from the exact gaps and the measured sigma is within a factor %.3g "
            "of the observed count (worst: %s).\n",
            worst, res[wc].name);
    drift_md_text(out,
        "- Error law (data/real_gaps_errlaw.csv; gauss: accumulation noise, conv: noise then rounding to the stored grid; "
        "by binade of the exact logit, %d texts held out in turn): ",
        R);
    char tails[256] = "";
    double tail_lo = NAN, spread = 1, span = INFINITY, pspread = 1, power = 0; /* over the configurations: the largest
                                  sigma_max / sigma_min, the smallest ratio of top and bottom binades, the largest
                                  rms ratio of two thirds, the largest power */
    int same = 1, c0 = -1;
    for (int c = 0; c < nconf; c++) {
        const drift_rg_errlaw_t *l = &res[c].law;
        if (!isfinite(l->sg_min)) continue;
        if (c0 >= 0 && strcmp(l->words, res[c0].law.words)) same = 0;
        if (c0 < 0 || l->max_power > power) power = l->max_power;
        c0 = c0 < 0 ? c : c0;
        if (l->sg_max / l->sg_min > spread) spread = l->sg_max / l->sg_min;
        if (l->top_lo / l->lo_min < span) span = l->top_lo / l->lo_min;
        if (l->pos_max > 0 && l->pos_max / l->pos_min > pspread) pspread = l->pos_max / l->pos_min;
        if (fabs(l->top_dll) >= DRIFT_ERRLAW_DECIDE && l->top_power < DRIFT_ERRLAW_DECIDE) {
            size_t at = strlen(tails);
            tail_lo = l->top_lo;
            snprintf(tails + at, sizeof tails - at, "%s%s %.2g", at ? ", " : "", res[c].name, l->top_dll);
        }
    }
    if (same && c0 >= 0)
        drift_md_text(out, "every configuration %s (power at most %.2g)", res[c0].law.words, power);
    else
        for (int c = 0, first = 1; c < nconf; c++)
            if (isfinite(res[c].law.sg_min))
                drift_md_text(out, "%s%s %s", first ? "" : "; ", res[c].name, res[c].law.words), first = 0;
    /* an error relative to the logit would scale sigma with the binade (by span from the lowest
     * to the highest); flat noise would not move it: the verdict takes the geometric middle */
    if (isfinite(span))
        drift_md_text(out, ". Over binades %g apart sigma varies at most %.2gx (a relative error: %gx)%s", span, spread,
            span, span > 1 && spread < sqrt(span) ? ": the noise does not follow the logit's size" : "");
    if (tails[0])
        drift_md_text(out,
            ". At [%g, %g) the held-out ratio conv - gauss (%s) exceeds the power: the tails differ from both laws",
            tail_lo, 2 * tail_lo, tails);
    drift_md_text(out,
        ". Over thirds of the tokens (data/real_gaps_errpos.csv) the rms gap error varies at most %.2gx.\n\n", pspread);
}
