/* layer_drift_report.c — the takeaway and summary of the layer_drift experiment
 * (layer_drift_lab.h): every number from the run's errors and fits. */
#include "layer_drift_lab.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "a" or "a to b" with fmt, as printed (a range whose ends print alike is one number). */
static void range_text(char *buf, size_t size, const char *fmt, double lo, double hi)
{
    char a[40], b[40];
    snprintf(a, sizeof a, fmt, lo);
    snprintf(b, sizeof b, fmt, hi);
    if (strcmp(a, b))
        snprintf(buf, size, "%s to %s", a, b);
    else
        snprintf(buf, size, "%s", a);
}

/* One model's growth with depth, as fitted over the configurations run (fe: the factor per
 * layer, fp: the power of the layer; each a least-squares line through log rel_err after each
 * layer's MLP residual): the ranges over the configurations, their rms misfits, and where the
 * fitted power p sits against the two additive laws, sqrt(L) (p = 1/2) and L (p = 1). */
static void law_text(drift_out_t *out, const drift_logfit_t *fe, const drift_logfit_t *fp, const int *use)
{
    double g[2] = {INFINITY, -INFINITY}, p[2] = {INFINITY, -INFINITY}, re[2] = {INFINITY, -INFINITY},
           rp[2] = {INFINITY, -INFINITY};
    int ok = 1;
    for (int c = 0; c < DRIFT_NCONFS; c++) {
        if (!use[c]) continue;
        if (fe[c].n < 2 || !isfinite(fe[c].slope) || !isfinite(fp[c].slope)) ok = 0;
        g[0] = fmin(g[0], exp(fe[c].slope)), g[1] = fmax(g[1], exp(fe[c].slope));
        p[0] = fmin(p[0], fp[c].slope), p[1] = fmax(p[1], fp[c].slope);
        re[0] = fmin(re[0], exp(fe[c].rms)), re[1] = fmax(re[1], exp(fe[c].rms));
        rp[0] = fmin(rp[0], exp(fp[c].rms)), rp[1] = fmax(rp[1], exp(fp[c].rms));
    }
    if (!ok) {
        drift_md_text(out, "; one layer: no growth to fit");
        return;
    }
    char tg[96], tp[96], tre[96], trp[96];
    range_text(tg, sizeof tg, "%.3f", g[0], g[1]);
    range_text(tp, sizeof tp, "%.2f", p[0], p[1]);
    range_text(tre, sizeof tre, "%.2f", re[0], re[1]);
    range_text(trp, sizeof trp, "%.2f", rp[0], rp[1]);
    drift_md_text(out, "; fitted g^l, g = %s (rms misfit x%s), or l^p, p = %s (x%s): ", tg, tre, tp, trp);
    /* where p sits: below, above or holding each law's exponent */
    const int s = p[1] < 0.5 ? -1 : p[0] > 0.5 ? 1 : 0, l = p[1] < 1 ? -1 : p[0] > 1 ? 1 : 0;
    if (s < 0)
        drift_md_text(out, "slower than sqrt(L) and L");
    else if (l > 0)
        drift_md_text(out, "faster than sqrt(L) and L: the network amplifies earlier layers' errors");
    else if (s > 0 && l < 0)
        drift_md_text(out, "between sqrt(L) and L");
    else if (s == 0 && l == 0)
        drift_md_text(out, "p's range holds both 1/2 (sqrt(L)) and 1 (L)");
    else if (s == 0)
        drift_md_text(out, "p's range holds 1/2 (sqrt(L)), all below 1 (L)");
    else
        drift_md_text(out, "p's range holds 1 (L), all above 1/2 (sqrt(L))");
}

void drift_layer_drift_write(drift_out_t *out, const drift_layer_lab_t *L)
{
    const int *use = L->use;
    const int nuse = L->nuse;
    /* Takeaway from the data: the growth over depth and the ranking of the configurations. */
    drift_md_text(out, "**Takeaway.**\n\n");
    double gmin[2], gmax[2];
    for (int mi = 0; mi < 2; mi++) {
        gmin[mi] = INFINITY, gmax[mi] = -INFINITY;
        for (int ci = 0; ci < DRIFT_NCONFS; ci++)
            if (use[ci]) gmin[mi] = fmin(gmin[mi], L->growth[mi][ci]), gmax[mi] = fmax(gmax[mi], L->growth[mi][ci]);
        char grows[96];
        range_text(grows, sizeof grows, "%.3g", gmin[mi], gmax[mi]);
        drift_md_text(out, "- %s (%d layers): mean error x%s from layer 1 to %d", L->model[mi], L->layers[mi], grows,
            L->layers[mi]);
        law_text(
            out, L->fexp[mi], L->fpow[mi], use); /* the configurations against fp32: the table, and the summary below */
        drift_md_text(out, ".\n");
    }
    drift_md_text(out, "- Fits: least squares of log rel_err on l or log l (l = 1 .. L); sqrt(L) is p = 1/2 "
                       "(independent errors adding), L is p = 1 (errors adding in step). Sample: ");
    if (strcmp(L->brief[0], L->brief[1]))
        drift_md_text(out, "%s; synthetic: %s", L->brief[0], L->brief[1]);
    else
        drift_md_text(out, "%s and synthetic: %s each", L->model[0], L->brief[0]);
    drift_md_text(out, ". Reference: exact fp64 pass (correctly rounded dots).\n\n");

    /* What you just saw, from this run's data and configurations only. */
    char r[96];
    drift_out_summary(out, "after the first layer the relative error of the hidden state is");
    for (int ci = 0, k = 0; ci < DRIFT_NCONFS; ci++) {
        if (!use[ci]) continue;
        range_text(r, sizeof r, "%.2g", fmin(L->first_u[0][ci], L->first_u[1][ci]),
            fmax(L->first_u[0][ci], L->first_u[1][ci]));
        drift_out_summary(out, "%s%s u for %s", k ? drift_list_sep(k, nuse) : " ", r, drift_model_configs[ci].shown);
        k++;
    }
    drift_out_summary(out,
        " (u = the unit roundoff of the configuration's format%s; both models); by the last layer it has grown",
        use[DRIFT_CONF_LAYERCAST] ? ", bf16's for LayerCast's weights" : "");
    for (int mi = 0; mi < 2; mi++) {
        range_text(r, sizeof r, "%.3g", gmin[mi], gmax[mi]);
        drift_out_summary(out, "%s %s times on %s (%d layers)", mi ? " and" : "", r,
            mi ? "the synthetic model" : L->model[mi], L->layers[mi]);
    }
    if (use[DRIFT_CONF_FP32] && nuse > 1) {
        drift_out_summary(
            out, "; after the last layer"); /* "bf16 sits 4.0 decades above fp32, fp16 3.2 and LayerCast 4.0" */
        for (int ci = 0, k = 0; ci < DRIFT_NCONFS; ci++) {
            if (ci == DRIFT_CONF_FP32 || !use[ci]) continue;
            double d0 = log10(L->last[0][ci] / L->last[0][DRIFT_CONF_FP32]),
                   d1 = log10(L->last[1][ci] / L->last[1][DRIFT_CONF_FP32]);
            range_text(r, sizeof r, "%.1f", fmin(d0, d1), fmax(d0, d1));
            drift_out_summary(out, "%s%s %s%s%s", k ? drift_list_sep(k, nuse - 1) : " ", drift_model_configs[ci].shown,
                k ? "" : "sits ", r, k ? "" : " decades above fp32");
            k++;
        }
    }
    if (use[DRIFT_CONF_BF16] && use[DRIFT_CONF_LAYERCAST]) {
        double q0 = L->last[0][DRIFT_CONF_LAYERCAST] / L->last[0][DRIFT_CONF_BF16],
               q1 = L->last[1][DRIFT_CONF_LAYERCAST] / L->last[1][DRIFT_CONF_BF16];
        double lo = fmin(q0, q1), hi = fmax(q0, q1);
        range_text(r, sizeof r, "%.2g", lo, hi);
        /* within a factor of two either way: the weights' rounding alone gives the error of
         * rounding every GEMM's inputs and outputs */
        if (lo >= 0.5 && hi <= 2)
            drift_out_summary(out,
                ". LayerCast (bf16 weights, fp32 compute) sits with bf16 (%s times its error after the last layer): "
                "measured against the fp32 model, rounding the weights to bf16 is a change of the model, not a rounding of its arithmetic",
                r);
        else
            drift_out_summary(
                out, ". LayerCast (bf16 weights, fp32 compute) has %s times bf16's error after the last layer", r);
    }
    drift_out_summary(out, ".");
}
