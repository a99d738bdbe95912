/* argmax_report.c — the declared output of the planted-pair experiment (argmax_lab.h): the CSV
 * tables (argmax_tables.c), the Markdown fragment and the summary, written through the kit
 * (output.h). Every number of the fragment comes from the arrays the CSV tables are written from. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "argmax_lab.h"
#include "argmax_run.h"
#include "drift.h"
#include "output.h"
#include "stats.h"

/* The fragment's tables: Markdown only, after the CSV tables. */
enum { M_CRIT = AFP_NCSV, M_LAWS, M_KERNELS, M_SEEDS, NTABLES };

#define TXT DRIFT_C_TEXT
#define CELL DRIFT_C_CELL
static const drift_col_t C_CRIT[] = {TXT("format"), TXT("kernel"), CELL("sigma / s [95% CI]"), CELL("fit p"),
    CELL("predicted: norm form / partial sums"), CELL("D_50 / s"), CELL("D_0.1% / s"), CELL("D_0.1% absolute"),
    CELL("D_0.1% in ulps")};
static const drift_col_t C_LAWS[] = {TXT("format"), TXT("kernel"), TXT("law"), CELL("parameter [95% CI]"),
    CELL("D_1% / s"), CELL("D_0.1% / s"), CELL("D_0.1% in logit ulps"),
    CELL("vs rival: lead (power), pairs, informative")};
static const drift_col_t C_KERNELS[] = {TXT("kernel"), CELL("pairs"), CELL("flips"), CELL("sigma / s"), CELL("fit p"),
    CELL("predicted, norm form"), CELL("fitted / norm form"), CELL("predicted, partial sums"),
    CELL("fitted / partial sums")};
#undef TXT
#undef CELL

#define num drift_af_num
#define AT_KMAX DRIFT_AF_AT_KMAX
#define HEADLINE DRIFT_AF_HEADLINE

/* Question, how to reproduce, the critical gaps at the largest K. */
static void md_critical(drift_out_t *o, const drift_aflab_t *L)
{
    const size_t KM = L->Ks[L->headline.k];
    const drift_af_cell_t *first = AT_KMAX(L, 0);
    char ks_list[128];
    drift_aflab_ks_list(ks_list, L);
    drift_md_question(o,
        "Each configuration's argmax is held against the exact argmax of the same rounded "
        "inputs (superaccumulator, MPFR-checked); exact ties are reported apart and never counted as flips.");
    drift_md_reproduce(o,
        "K = %s, V = %ld, %ld planted pairs per target gap, %ld exact ties per K; data/argmax_flip.csv, "
        "argmax_flip_{fit,ties,laws}.csv",
        ks_list, L->V, L->reps, L->ties);
    drift_md_text(o,
        "Gaps are relative to the logit scale s = ||h||/sqrt(K), the standard deviation of "
        "a logit. The default kernel is `%s` (fp32 accumulation, fp32 logits); \"logits in the format\" means the "
        "tensor-core kernel's fp32 result stored in bf16/fp16, as a model running in that dtype returns it.\n\n",
        first->kernels.k[first->kernels.def].name);
    drift_md_text(o,
        "**Critical gaps at K = %zu, kernels whose mechanism is accumulation noise** (rounded logits follow another law: next table; planted pairs; "
        "fit of P(flip | gap D) = Phi(-D/sigma); D_50 = 0.674 sigma, "
        "where flips are half as likely as a coin toss, P = 25%%, since P reaches 50%% only at D = 0; D_0.1%% = "
        "3.09 sigma; absolute values at the median s = %.3g, ulps of the input format at the median top logit):\n\n",
        KM, first->fits[first->kernels.def].s_med);
    /* only kernels whose mechanism is accumulation noise: for rounded logits the Phi curve is the
     * wrong law and its D_0.1% a gap where no flip can occur (their gaps: the next table) */
    for (int pass = 0; pass < 2; pass++)
        for (int fi = 0; fi < L->nformats; fi++) {
            const drift_kset_t *ks = &AT_KMAX(L, fi)->kernels;
            int c = pass ? ks->engine : ks->def;
            if ((pass && c == ks->def) || AT_KMAX(L, fi)->laws[c].implied != DRIFT_FLIPLAW_GAUSS) continue;
            const drift_flip_fit_t *F = &AT_KMAX(L, fi)->fits[c];
            double uin = drift_ulp(F->l1_med, ks->f);
            if (F->fit.status == DRIFT_FIT_OK)
                drift_row_fmt(o, M_CRIT, "%s | %s | %.3g [%.3g, %.3g] | %.2g | %.3g / %.3g | %.3g | %.3g | %.3g | %.3g",
                    drift_format_name(ks->f), ks->k[c].name, F->fit.sigma, F->fit.sigma_lo, F->fit.sigma_hi,
                    F->fit.p_value, F->sigma_pred, F->sigma_sums, F->half, F->p001, F->p001 * F->s_med,
                    F->p001 * F->s_med / uin);
            else
                drift_row_fmt(o, M_CRIT, "%s | %s | %s (< %.3g) | - | %.3g / %.3g | < %.3g | < %.3g | < %.3g | < %.3g",
                    drift_format_name(ks->f), ks->k[c].name, drift_fit_status_name(F->fit.status), F->fit.sigma_hi,
                    F->sigma_pred, F->sigma_sums, F->half, F->p001, F->p001 * F->s_med, F->p001 * F->s_med / uin);
        }
}

/* Critical gaps from the law of each mechanism. */
static void md_laws(drift_out_t *o, const drift_aflab_t *L)
{
    drift_md_text(o,
        "\n**Critical gaps from the law of each mechanism, K = %zu** (planted pairs). Accumulation noise flips with "
        "P = Phi(-D/sigma); storing a logit (rounding it once) flips only when both logits round to one value, "
        "P = 1/2 (1 - D/q)+ with q the logit format's spacing at the top logit - exactly 0 beyond one ulp; with "
        "both, their convolution (lib/core/fliplaw.h). D_1%% and D_0.1%% are taken from the law the mechanism "
        "implies, fitted by maximum likelihood; \"vs rival\" is its log-likelihood lead over the other law "
        "(Gaussian, or the triangle for a Gaussian mechanism) with the expected lead if it were true (power; "
        "decided when both reach log 20 = 3.0):\n\n",
        L->Ks[L->headline.k]);
    for (int fi = 0; fi < L->nformats; fi++) {
        const drift_kset_t *ks = &AT_KMAX(L, fi)->kernels;
        int named[4], nn = drift_kset_named(named, ks);
        for (int j = 0; j < nn; j++) {
            int c = named[j];
            const drift_flip_laws_t *W = &AT_KMAX(L, fi)->laws[c];
            const drift_fliplaw_fit_t *F = &W->fit[W->implied];
            char b[4][64];
            const char *up = F->status == DRIFT_FIT_NO_FLIPS ? "< " : "";
            drift_row_fmt(o, M_LAWS,
                "%s | %s | %s | %s %s%.3g [%.3g, %.3g] | %s%s | %s%s | %s%s | %+.1f (%s), %ld, %d%s",
                drift_format_name(ks->f), ks->k[c].name, drift_fliplaw_name(W->implied),
                W->implied == DRIFT_FLIPLAW_TRIANGLE ? "kappa" : "sigma / s", up,
                F->status == DRIFT_FIT_NO_FLIPS ? F->hi : F->theta, F->lo, F->hi, up, num(b[0], W->d01, "%.3g"), up,
                num(b[1], W->d001, "%.3g"), up, num(b[2], W->d001_ulp, "%.3g"), W->choice.dloglik,
                num(b[3], W->choice.power_a, "%.3g"), W->pairs, W->choice.informative,
                W->choice.decided ? ", decided" : ", not decided");
        }
    }
}

/* Every kernel at the largest K, and the growth with K. */
static void md_kernels(drift_out_t *o, const drift_aflab_t *L)
{
    drift_md_text(o,
        "\n**Every kernel, %s inputs, K = %zu** (fit p: binned-deviance goodness of fit; a small p means the "
        "Gaussian-noise curve is the wrong shape):\n\n",
        drift_format_name(L->headline.kernels->f), L->Ks[L->headline.k]);
    for (int c = 0; c < L->headline.kernels->n; c++) {
        const drift_flip_fit_t *F = &HEADLINE(L)->fits[c];
        char b[4][64];
        int okf = F->fit.status == DRIFT_FIT_OK;
        drift_row_fmt(o, M_KERNELS, "%s | %ld | %ld | %s%s | %s | %.3g | %s | %.3g | %s",
            L->headline.kernels->k[c].name, F->fit.n, F->fit.k, okf ? "" : "< ",
            num(b[0], okf ? F->fit.sigma : F->fit.sigma_hi, "%.3g"), num(b[1], F->fit.p_value, "%.2g"), F->sigma_pred,
            okf ? num(b[2], F->fit.sigma / F->sigma_pred, "%.2f") : "-", F->sigma_sums,
            okf ? num(b[3], F->fit.sigma / F->sigma_sums, "%.2f") : "-");
    }
    if (L->nKs < 2) return;
    drift_md_text(o, "\n**Growth with K** (default kernel, sigma / s):");
    for (int fi = 0; fi < L->nformats; fi++) {
        drift_md_text(o, "%s %s", fi ? ";" : "", drift_format_name(L->cell[0][fi].kernels.f));
        for (int ki = 0; ki < L->nKs; ki++)
            drift_md_text(o, " %.3g (K = %zu)", L->cell[ki][fi].fits[L->cell[ki][fi].kernels.def].fit.sigma, L->Ks[ki]);
    }
    drift_md_text(o,
        ". Measured against the model rather than against sqrt(K) (%.2f from K = %zu to %zu, which assumes nothing "
        "else changes with K): the partial-sum model's prediction for the same pairs grows by",
        sqrt((double)L->Ks[L->nKs - 1] / (double)L->Ks[0]), L->Ks[0], L->Ks[L->nKs - 1]);
    for (int fi = 0; fi < L->nformats; fi++) {
        const drift_af_cell_t *a = &L->cell[0][fi], *b = &L->cell[L->nKs - 1][fi];
        const drift_flip_fit_t *A = &a->fits[a->kernels.def], *B = &b->fits[b->kernels.def];
        drift_md_text(o, "%s %s %.2f (measured %.2f)", fi ? "," : "", drift_format_name(a->kernels.f),
            B->sigma_sums / A->sigma_sums, B->fit.sigma / A->fit.sigma);
    }
    drift_md_text(o, ".\n");
}

/* Exact ties. */
static void md_ties(drift_out_t *o, const drift_aflab_t *L)
{
    long nt = 0, conf = 0, cells = 0;
    drift_flip_ties_t T = {0, 0, 0, 0};
    for (int ki = 0; ki < L->nKs; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            const drift_flipset_t *st = &L->cell[ki][fi].ties;
            for (size_t i = 0; i < st->n; i++) conf += st->t[i].tie;
            for (int c = 0; c < st->ncfg; c++) drift_flipset_ties(&T, st, c);
            nt += (long)st->n;
            cells += (long)st->n * st->ncfg;
        }
    drift_md_text(o,
        "\n**Exact ties.** %ld planted exact ties (all K and formats; %ld confirmed exact by the witness): over "
        "%ld (tie, kernel) cases the computed logits differed in %ld and the kernel picked the higher id in %ld; "
        "these are reported as ties, and the flip count is %ld.\n",
        nt, conf, cells, T.distinguished, T.picked_higher, T.flips);
}

/* What the seeds table says of the stored-logit law's choice (the headline's engine kernel): at
 * how many seeds the data decide for it, or against it, into buf; *settled = 1 when they decide
 * for it at every seed. */
static void seeds_verdict(char *buf, size_t size, int *settled, const drift_aflab_t *L)
{
    *settled = 0;
    if (L->nseeds < 2) {
        snprintf(buf, size, "no other seed is run (--robust)");
        return;
    }
    int nfor = 0, nagainst = 0;
    for (int i = 0; i < L->nseeds; i++) {
        nfor += L->seeds[i].eng_decided && L->seeds[i].eng_dll > 0;
        nagainst += L->seeds[i].eng_decided && L->seeds[i].eng_dll < 0;
    }
    *settled = nfor == L->nseeds;
    if (nagainst)
        snprintf(buf, size, "the data decide for it at %d and against it at %d of %d seeds (seeds table)", nfor,
            nagainst, L->nseeds);
    else
        snprintf(buf, size, "the data decide for it at %d of %d seeds (seeds table)", nfor, L->nseeds);
}

/* The takeaway. */
static void md_takeaway(drift_out_t *o, const drift_aflab_t *L)
{
    const size_t KM = L->Ks[L->headline.k];
    const drift_kset_t *hk = L->headline.kernels, *k0 = &AT_KMAX(L, 0)->kernels;
    double lo = INFINITY, hi = 0;
    for (int fi = 0; fi < L->nformats; fi++) {
        const drift_flip_fit_t *F = &AT_KMAX(L, fi)->fits[AT_KMAX(L, fi)->kernels.def];
        lo = fmin(lo, F->p001), hi = fmax(hi, F->p001);
    }
    drift_md_text(o, "\n**Takeaway.**\n\n");
    drift_md_text(
        o, "- With the default kernel (`%s`) at K = %zu, the critical gap D_0.1%% is", k0->k[k0->def].name, KM);
    for (int fi = 0; fi < L->nformats; fi++) {
        const drift_flip_fit_t *F = &AT_KMAX(L, fi)->fits[AT_KMAX(L, fi)->kernels.def];
        drift_md_text(o, "%s %s %.3g s (D_50 = %.3g s)", fi ? (fi + 1 == L->nformats ? " and" : ",") : "",
            drift_format_name(AT_KMAX(L, fi)->kernels.f), F->p001, F->half);
    }
    drift_md_text(o,
        ": within a factor %.2f: products of narrow inputs are exact in fp32, so only the accumulation rounds.",
        hi / lo);
    drift_md_text(o, "\n");
    for (int fi = 0; fi < L->nformats; fi++) {
        const drift_kset_t *ks = &AT_KMAX(L, fi)->kernels;
        if (ks->engine == ks->def || (ks->f != DRIFT_BF16 && ks->f != DRIFT_FP16)) continue;
        const drift_flip_laws_t *E = &AT_KMAX(L, fi)->laws[ks->engine];
        const drift_flip_fit_t *D = &AT_KMAX(L, fi)->fits[ks->def];
        /* the extra seeds rerun bf16 and fp32 only (main.c): the seeds table speaks for bf16 */
        char seeds[128] = "the seeds table covers bf16 only";
        int settled = 0;
        if (ks->f == DRIFT_BF16) seeds_verdict(seeds, sizeof seeds, &settled, L);
        drift_md_text(o,
            "- Logits stored in %s (`%s`): output rounding on accumulation noise implies the %s law; by it "
            "D_0.1%% = %.3g s = %.2g %s ulps, %.0fx the default kernel's. It leads the Gaussian by %.1f in "
            "log-likelihood (power %.3g, %ld pairs, %d informative): %s; %s, so %s.\n",
            drift_format_name(ks->f), ks->k[ks->engine].name, drift_fliplaw_name(E->implied), E->d001, E->d001_ulp,
            drift_format_name(ks->k[ks->engine].c.out), E->d001 / D->p001, E->choice.dloglik, E->choice.power_a,
            E->pairs, E->choice.informative,
            E->choice.decided ? (E->choice.dloglik > 0 ? "decided for it" : "decided against it")
                              : "undecided at this size",
            seeds,
            settled ? "the fit agrees with the mechanism's law" : "the law is the mechanism's, not the fit's finding");
    }
    if (hk->tc32 >= 0) {
        const drift_flip_fit_t *T = &HEADLINE(L)->fits[hk->tc32];
        drift_md_text(o,
            "- Tensor cores with fp32 logits (`%s`): sigma / s = %.3g, %.2fx the partial-sum prediction, which "
            "assumes unbiased roundings; the tensor-core model truncates (a plausible cause, not isolated here).\n",
            hk->k[hk->tc32].name, T->fit.sigma, T->fit.sigma / T->sigma_sums);
    }
    const drift_flip_laws_t *X = &HEADLINE(L)->laws[hk->exact];
    const drift_fliplaw_fit_t *T = &X->fit[DRIFT_FLIPLAW_TRIANGLE];
    if (T->status == DRIFT_FIT_OK)
        drift_md_text(o,
            "- Even the exact LM head (`%s`, logits rounded once) flips, but only within one fp32 ulp of the top "
            "logit, where both round alike and the lower id wins: P = 1/2 (1 - D/q) "
            "(kappa = %.3g [%.3g, %.3g], 1 predicted); D_0.1%% = %.3g s = %.3g ulps.\n",
            hk->k[hk->exact].name, T->theta, T->lo, T->hi, X->d001, X->d001_ulp);
    const drift_flip_fit_t *D0 = &HEADLINE(L)->fits[hk->def];
    drift_md_text(o,
        "- The random-rounding model's norm form, sigma = c sqrt(K) u ||h||_rms ||w1 - w2|| (c = %.3f for `%s`), "
        "predicts sigma / s = %.3g; the fit gives %.3g (%.2fx). On the kernel's actual partial sums it predicts "
        "%.3g (%.2fx): partial sums drift towards the top logit, and that drift sets the noise.\n",
        drift_flip_c(hk->k[hk->def].nu), hk->k[hk->def].name, D0->sigma_pred, D0->fit.sigma,
        D0->fit.sigma / D0->sigma_pred, D0->sigma_sums, D0->fit.sigma / D0->sigma_sums);
}

/* The headline at every seed, and only what holds at all of them. */
static void md_robust(drift_out_t *o, const drift_aflab_t *L)
{
    if (L->nseeds < 2) return;
    const drift_kset_t *ks = L->headline.kernels;
    const char *eng_out = drift_format_name(ks->k[ks->engine].c.out);
    drift_md_text(o,
        "\n**The headline at %d seeds** (K = %zu, %s inputs; seeds other than %llu rerun the planted pairs at this "
        "K only, without the GEMM policies):\n\n",
        L->nseeds, L->Ks[L->headline.k], drift_format_name(ks->f), (unsigned long long)L->seeds[0].seed);
    int all_dec = 1, all_kap = 1;
    double smin = INFINITY, smax = 0, umin = INFINITY, umax = 0;
    for (int i = 0; i < L->nseeds; i++) {
        const drift_af_headline_t *r = &L->seeds[i];
        drift_row_fmt(o, M_SEEDS, "%llu | %.3g | %.3g | %+.1f (%.3g)%s | %.3g | %.3g [%.3g, %.3g]",
            (unsigned long long)r->seed, r->def_sigma, r->def_p001, r->eng_dll, r->eng_power,
            r->eng_decided ? ", decided" : "", r->eng_d001_ulp, r->kap, r->kap_lo, r->kap_hi);
        all_dec &= r->eng_decided && r->eng_dll > 0;
        all_kap &= r->kap_lo <= 1 && 1 <= r->kap_hi;
        smin = fmin(smin, r->def_sigma), smax = fmax(smax, r->def_sigma);
        umin = fmin(umin, r->eng_d001_ulp), umax = fmax(umax, r->eng_d001_ulp);
    }
    const char *law = drift_fliplaw_name(HEADLINE(L)->laws[ks->engine].implied);
    /* a range whose ends print alike is one value: "0.998 ulps", not "0.998 to 0.998 ulps" */
    char ulps[80], lo[32], hi[32];
    snprintf(lo, sizeof lo, "%.3g", umin), snprintf(hi, sizeof hi, "%.3g", umax);
    if (strcmp(lo, hi))
        snprintf(ulps, sizeof ulps, "%s to %s", lo, hi);
    else
        snprintf(ulps, sizeof ulps, "%s", lo);
    drift_md_text(o,
        "\nAt every seed: the default kernel's sigma / s lies in [%.3g, %.3g]; storing the logits in %s puts "
        "D_0.1%% at %s ulps%s; ",
        smin, smax, eng_out, ulps,
        umax <= 1 ? ", never beyond one ulp"
                  : " (beyond one ulp only where the fitted accumulation noise widens the triangle)");
    if (all_dec)
        drift_md_text(o, "the %s law beats the Gaussian curve decisively at every seed", law);
    else
        drift_md_text(o,
            "the choice between the %s law and the Gaussian curve is not decided at every seed (no claim is made)",
            law);
    if (all_kap)
        drift_md_text(
            o, "; the exact head's kappa interval holds 1 (the triangle with the known fp32 spacing) at every seed");
    drift_md_text(o, ".\n");
}

/* The summary for people ("What you just saw", drift_out_summary): the prose, then the critical
 * gaps at the largest K. */
static void summary(drift_out_t *o, const drift_aflab_t *L)
{
    const size_t KM = L->Ks[L->headline.k];
    const drift_kset_t *hk = L->headline.kernels;
    drift_out_summary(o,
        "two logits closer than the LM head's rounding noise sigma swap places at random;\n"
        "the flip probability falls like Phi(-gap/sigma), from a coin toss at gap 0 to 0.1%% at 3.09 sigma. With fp32\n"
        "accumulation sigma is %.2g of the logit scale at K = %zu (%s, %s) whatever the input format (narrow products\n"
        "are exact in fp32), it grows like sqrt(K), and tree-like orders shrink it. Storing the logits in bf16 or fp16\n"
        "coarsens everything to the output grid (ties broken by token id): the critical gap becomes about one ulp.\n"
        "Planted %.1f s. Files: data/argmax_flip.csv, argmax_flip_{fit,ties,laws}.csv, argmax_flip.md;\n"
        "plots: ./lab plot argmax_flip.\n",
        HEADLINE(L)->fits[hk->def].fit.sigma, KM, drift_format_name(hk->f), hk->k[hk->def].name, L->seconds.planted);
    drift_out_summary(o, "\ncritical gaps at K = %zu (relative to the logit scale s; planted pairs, Phi fit):\n", KM);
    drift_out_summary(o, "%-6s %-24s %10s %8s %10s %10s %10s %10s\n", "format", "kernel", "sigma/s", "fit p", "norm/s",
        "sums/s", "D_50/s", "D_0.1%/s");
    for (int pass = 0; pass < 2; pass++)
        for (int fi = 0; fi < L->nformats; fi++) {
            const drift_kset_t *ks = &AT_KMAX(L, fi)->kernels;
            int c = pass ? ks->engine : ks->def;
            if (pass && c == ks->def) continue;
            const drift_flip_fit_t *F = &AT_KMAX(L, fi)->fits[c];
            /* D_0.1% from the law the kernel's mechanism implies, as the report gives it (the Phi
             * fit's 3.09 sigma only for a Gaussian mechanism) */
            const drift_flip_laws_t *W = &AT_KMAX(L, fi)->laws[c];
            int gauss = W->implied == DRIFT_FLIPLAW_GAUSS || !isfinite(W->d001);
            drift_out_summary(o, "%-6s %-24s %10.3g %8.2g %10.3g %10.3g %10.3g %10.3g%s%s\n", drift_format_name(ks->f),
                ks->k[c].name, F->fit.status == DRIFT_FIT_OK ? F->fit.sigma : F->fit.sigma_hi, F->fit.p_value,
                F->sigma_pred, F->sigma_sums, F->half, gauss ? F->p001 : W->d001,
                F->fit.status == DRIFT_FIT_OK ? "" : " (upper bounds)",
                gauss ? ""
                      : (W->implied == DRIFT_FLIPLAW_CONV ? " (D_0.1% from the conv law)"
                                                          : " (D_0.1% from the triangle law)"));
        }
}

/* Every output file, written only after everything is computed (temporary file + rename). */
int drift_afp_write(const drift_aflab_t *L)
{
    const drift_kset_t *ks = L->headline.kernels;
    char sigma[64], law[96], ulps[64]; /* the seeds table's headers name its kernels */
    snprintf(sigma, sizeof sigma, "`%s`: sigma / s", ks->k[ks->def].name);
    snprintf(law, sizeof law, "`%s`: law lead over Gaussian (power)", ks->k[ks->engine].name);
    snprintf(ulps, sizeof ulps, "D_0.1%% in %s ulps", drift_format_name(ks->k[ks->engine].c.out));
    const drift_col_t seeds[] = {DRIFT_C_CELL("seed"), DRIFT_C_CELL(sigma), DRIFT_C_CELL("D_0.1% / s"),
        DRIFT_C_CELL(law), DRIFT_C_CELL(ulps), DRIFT_C_CELL("exact head: kappa [95% CI]")};
    drift_table_spec_t tables[NTABLES] = {[M_CRIT] = {NULL, NULL, DRIFT_SHOW_MD, C_CRIT, DRIFT_COUNTOF(C_CRIT)},
        [M_LAWS] = {NULL, NULL, DRIFT_SHOW_MD, C_LAWS, DRIFT_COUNTOF(C_LAWS)},
        [M_KERNELS] = {NULL, NULL, DRIFT_SHOW_MD, C_KERNELS, DRIFT_COUNTOF(C_KERNELS)},
        [M_SEEDS] = {NULL, NULL, DRIFT_SHOW_MD, seeds, DRIFT_COUNTOF(seeds)}};
    drift_afp_declare_tables(tables, L);
    drift_out_t out;
    drift_out_open(&out, &L->cli, tables, NTABLES, 1);
    drift_afp_write_tables(&out, L);
    md_critical(&out, L);
    md_laws(&out, L);
    md_kernels(&out, L);
    md_ties(&out, L);
    md_takeaway(&out, L);
    md_robust(&out, L);
    summary(&out, L);
    drift_out_commit(&out);
    return 0;
}
