/* errlaw_table.c — each configuration's logit error: its law per binade of the exact logit and
 * its gap error by thirds of the tokens (real_gaps_lab.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errlaw.h"
#include "real_gaps_lab.h"

/* one configuration's error law per binade (errlaw.h: each text held out in turn) into its
 * table; winner[b]: 'c' CONV, 'g' GAUSS, 'u' undecided, 0 no data */
static void errlaw_rows(drift_out_t *out, const char *name, drift_format_t of, const double *err, const double *val,
    const int *text, size_t ne, int R, char *winner, drift_rg_errlaw_t *sum)
{
    sum->sg_min = INFINITY, sum->sg_max = -INFINITY, sum->top_lo = sum->top_q = sum->top_power = sum->top_dll = NAN;
    sum->max_power = 0, sum->lo_min = NAN;
    drift_errlaw_bin_t bins[DRIFT_RG_NBIN];
    int nb = drift_errlaw_binades(bins, err, val, text, ne, R, DRIFT_RG_BIN_LO, DRIFT_RG_NBIN, of);
    if (nb < 0) drift_die("out of memory for the error law (%zu errors)", ne);
    memset(winner, 0, DRIFT_RG_NBIN);
    for (int j = 0; j < nb; j++) {
        const drift_errlaw_bin_t *b = &bins[j];
        winner[(int)lround(log2(b->lo)) - DRIFT_RG_BIN_LO] = b->winner;
        if (j == 0) sum->lo_min = b->lo;
        if (b->sigma_gauss < sum->sg_min) sum->sg_min = b->sigma_gauss;
        if (b->sigma_gauss > sum->sg_max) sum->sg_max = b->sigma_gauss;
        sum->top_lo = b->lo, sum->top_q = b->q, sum->top_dll = b->dloglik;
        sum->top_power = b->power_conv > b->power_gauss ? b->power_conv : b->power_gauss;
        if (sum->top_power > sum->max_power) sum->max_power = sum->top_power;
        drift_row(out, T_ERRLAW, DRIFT_TXT(name), DRIFT_NUM(b->lo), DRIFT_NUM(b->hi), DRIFT_INT(b->n),
            DRIFT_INT(b->folds), DRIFT_NUM(b->q), DRIFT_NUM(b->rms), DRIFT_NUM(b->sigma_gauss),
            DRIFT_NUM(b->sigma_conv), DRIFT_NUM(b->dloglik), DRIFT_INT(b->folds_conv), DRIFT_NUM(b->power_conv),
            DRIFT_NUM(b->power_gauss),
            DRIFT_TXT(b->winner == 'c'   ? "conv"
                      : b->winner == 'g' ? "gauss"
                                         : "undecided"));
    }
}

/* "conv at |logit| 2^2..2^5; undecided at 2^-3..2^1" from the per-binade winners */
static void errlaw_words(char *buf, size_t size, const char *winner)
{
    static const char *const NAME[] = {"conv", "gauss", "undecided"};
    static const char CODE[] = "cgu";
    size_t at = 0;
    buf[0] = 0;
    for (int w = 0; w < 3; w++) {
        int first = 1;
        for (int b = 0; b < DRIFT_RG_NBIN; b++) {
            if (winner[b] != CODE[w]) continue;
            int e = b;
            while (e + 1 < DRIFT_RG_NBIN && winner[e + 1] == CODE[w]) e++;
            at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s%s at [2^%d, 2^%d)",
                first ? (at ? "; " : "") : ",", first ? NAME[w] : "", DRIFT_RG_BIN_LO + b, DRIFT_RG_BIN_LO + e + 1);
            first = 0, b = e;
        }
    }
    if (!buf[0]) snprintf(buf, size, "too few logits in every binade");
}

void drift_rg_errlaw(drift_rg_errlaw_t *law, drift_out_t *out, const drift_rg_scores_t *S, int c, const char *name,
    drift_format_t of, const drift_rg_text_t *tx, int R)
{
    const size_t NP = S->NP, KSMAX = (size_t)S->KSMAX;
    size_t ne = 0;
    for (size_t i = 0; i < NP; i++) ne += (size_t)S->ks[i];
    double *ee = malloc(ne * sizeof(double)), *ev = malloc(ne * sizeof(double));
    int *et = malloc(ne * sizeof(int));
    if (!ee || !ev || !et) drift_die("out of memory for the error law (%zu errors)", ne);
    size_t n = 0;
    for (size_t i = 0; i < NP; i++)
        for (int k = 0; k < S->ks[i]; k++, n++)
            ee[n] = S->serr[((size_t)c * NP + i) * KSMAX + (size_t)k], ev[n] = S->sval[i * KSMAX + (size_t)k],
            et[n] = S->stext[i];
    char winner[DRIFT_RG_NBIN];
    errlaw_rows(out, name, of, ee, ev, et, n, R, winner, law);
    errlaw_words(law->words, sizeof law->words, winner);
    free(ee), free(ev), free(et);
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
                double eg = S->egap[(size_t)c * NP + (size_t)i], e1 = S->serr[((size_t)c * NP + (size_t)i) * KSMAX];
                sg += eg * eg, s1 += e1 * e1, np++;
            }
        if (!np) break;
        drift_row(out, T_ERRPOS, DRIFT_TXT(name), DRIFT_INT(lo), DRIFT_INT(hi), DRIFT_INT(np),
            DRIFT_NUM(sqrt(sg / (double)np)), DRIFT_NUM(sqrt(s1 / (double)np)));
        const double r = sqrt(sg / (double)np);
        if (r < law->pos_min) law->pos_min = r;
        if (r > law->pos_max) law->pos_max = r;
        if (hi == Tm) break;
    }
}
