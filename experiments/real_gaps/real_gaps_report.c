/* real_gaps_report.c — each configuration's logit error (its law per binade of the exact logit,
 * its gap error by thirds of the tokens) and the fragment's takeaway (real_gaps_lab.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "real_gaps_lab.h"

static const char *const LAW[] = {"conv", "gauss", "undecided"};
static const char CODE[] = "cgu"; /* drift_errlaw_bin_t's winner for each of LAW */

/* "conv at [2^2, 2^5); undecided at [2^-3, 2^2)" from the binades' winners */
static void errlaw_words(char *buf, size_t size, const drift_rg_errlaw_t *law)
{
    char winner[DRIFT_RG_NBIN] = {0}; /* 0: no data */
    for (int j = 0; j < law->nbin; j++)
        winner[(int)lround(log2(law->bin[j].lo)) - DRIFT_RG_BIN_LO] = law->bin[j].winner;
    size_t at = 0;
    buf[0] = 0;
    for (int w = 0; w < 3; w++) {
        int first = 1;
        for (int b = 0; b < DRIFT_RG_NBIN; b++) {
            if (winner[b] != CODE[w]) continue;
            int e = b;
            while (e + 1 < DRIFT_RG_NBIN && winner[e + 1] == CODE[w]) e++;
            at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s%s at [2^%d, 2^%d)",
                first ? (at ? "; " : "") : ",", first ? LAW[w] : "", DRIFT_RG_BIN_LO + b, DRIFT_RG_BIN_LO + e + 1);
            first = 0, b = e;
        }
    }
    if (!buf[0]) snprintf(buf, size, "too few logits in every binade");
}

void drift_rg_errlaw(drift_rg_errlaw_t *law, drift_out_t *out, const drift_rg_scores_t *S, int c, const char *name,
    drift_format_t of, const drift_rg_text_t *tx, int R)
{
    const size_t NP = S->NP, NE = S->NE;
    law->nbin = drift_errlaw_binades(
        law->bin, S->serr + (size_t)c * NE, S->sval, S->stext, NE, R, DRIFT_RG_BIN_LO, DRIFT_RG_NBIN, of);
    if (law->nbin < 0) drift_die("out of memory for the error law (%zu errors)", NE);
    for (int j = 0; j < law->nbin; j++) {
        const drift_errlaw_bin_t *b = &law->bin[j];
        drift_row(out, T_ERRLAW, DRIFT_TXT(name), DRIFT_NUM(b->lo), DRIFT_NUM(b->hi), DRIFT_INT(b->n),
            DRIFT_INT(b->folds), DRIFT_NUM(b->q), DRIFT_NUM(b->rms), DRIFT_NUM(b->sigma_gauss),
            DRIFT_NUM(b->sigma_conv), DRIFT_NUM(b->dloglik), DRIFT_INT(b->folds_conv), DRIFT_NUM(b->power_conv),
            DRIFT_NUM(b->power_gauss), DRIFT_TXT(LAW[strchr(CODE, b->winner) - CODE]));
    }
    errlaw_words(law->words, sizeof law->words, law);
    /* by position: thirds of each text's generated positions */
    law->pos_min = INFINITY, law->pos_max = 0;
    int Tm = 0; /* positions measured per text */
    for (int s_ = 0; s_ < R; s_++) Tm = tx[s_].n - tx[s_].from > Tm ? tx[s_].n - tx[s_].from : Tm;
    const int third = Tm / 3 > 0 ? Tm / 3 : 1;
    for (int lo = 0; lo < Tm; lo += third) {
        int hi = lo + 2 * third > Tm ? Tm : lo + third;
        double sg = 0, s1 = 0;
        long np = 0;
        for (int s_ = 0, i = 0; s_ < R; s_++)
            for (int p = tx[s_].from; p < tx[s_].n; p++, i++) {
                int g = p - tx[s_].from;
                if (g < lo || g >= hi) continue;
                double eg = S->egap[(size_t)c * NP + (size_t)i], e1 = S->serr[(size_t)c * NE + S->off[i]];
                sg += eg * eg, s1 += e1 * e1, np++;
            }
        if (!np) break;
        const double r = sqrt(sg / (double)np);
        drift_row(out, T_ERRPOS, DRIFT_TXT(name), DRIFT_INT(lo), DRIFT_INT(hi), DRIFT_INT(np), DRIFT_NUM(r),
            DRIFT_NUM(sqrt(s1 / (double)np)));
        if (r < law->pos_min) law->pos_min = r;
        if (r > law->pos_max) law->pos_max = r;
        if (hi == Tm) break;
    }
}

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
        if (!l->nbin) continue;
        const drift_errlaw_bin_t *top = &l->bin[l->nbin - 1];                       /* the highest binade fitted */
        double sg_min = INFINITY, sg_max = -INFINITY, top_power = 0, max_power = 0; /* over the binades */
        for (int j = 0; j < l->nbin; j++) {
            const drift_errlaw_bin_t *b = &l->bin[j];
            if (b->sigma_gauss < sg_min) sg_min = b->sigma_gauss;
            if (b->sigma_gauss > sg_max) sg_max = b->sigma_gauss;
            top_power = b->power_conv > b->power_gauss ? b->power_conv : b->power_gauss; /* the larger power */
            if (top_power > max_power) max_power = top_power;
        }
        if (c0 >= 0 && strcmp(l->words, res[c0].law.words)) same = 0;
        if (c0 < 0 || max_power > power) power = max_power;
        c0 = c0 < 0 ? c : c0;
        if (sg_max / sg_min > spread) spread = sg_max / sg_min;
        if (top->lo / l->bin[0].lo < span) span = top->lo / l->bin[0].lo;
        if (l->pos_max > 0 && l->pos_max / l->pos_min > pspread) pspread = l->pos_max / l->pos_min;
        if (fabs(top->dloglik) >= DRIFT_ERRLAW_DECIDE && top_power < DRIFT_ERRLAW_DECIDE) {
            size_t at = strlen(tails);
            tail_lo = top->lo;
            snprintf(tails + at, sizeof tails - at, "%s%s %.2g", at ? ", " : "", res[c].name, top->dloglik);
        }
    }
    if (same && c0 >= 0)
        drift_md_text(out, "every configuration %s (power at most %.2g)", res[c0].law.words, power);
    else
        for (int c = 0, first = 1; c < nconf; c++)
            if (res[c].law.nbin)
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
