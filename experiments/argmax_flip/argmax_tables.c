/* argmax_tables.c — the CSV tables of the planted pairs (argmax_lab.h): flip rates per gap bin,
 * the Phi fits, the ties, the mechanisms' laws and, with --trials, every trial; declared once
 * (output.h) and written from a finished run. */
#include <math.h>
#include <string.h>

#include "argmax_lab.h"
#include "argmax_run.h"
#include "drift.h"
#include "output.h"
#include "stats.h"

static const drift_col_t C_BINS[] = {DRIFT_AF_HEAD_COLS, DRIFT_C_TEXT("tag"), DRIFT_C_INT("bin"),
    DRIFT_C_NUM("rel_lo", "%.6e"), DRIFT_C_NUM("rel_hi", "%.6e"), DRIFT_C_NUM("rel_center", "%.6e"),
    DRIFT_C_NUM("mean_gap_abs", "%.6e"), DRIFT_C_NUM("mean_gap_ulp_in", "%.6g"), DRIFT_C_INT("pairs"),
    DRIFT_C_INT("flips"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo", "%.6g"), DRIFT_C_NUM("hi", "%.6g"),
    DRIFT_C_NUM("fit_p", "%.6g")};
static const drift_col_t C_FIT[] = {DRIFT_AF_HEAD_COLS, DRIFT_C_TEXT("tag"), DRIFT_C_TEXT("order"), DRIFT_C_TEXT("acc"),
    DRIFT_C_TEXT("logits"), DRIFT_C_INT("pairs"), DRIFT_C_INT("flips"), DRIFT_C_TEXT("status"),
    DRIFT_C_NUM("sigma_rel", "%.6e"), DRIFT_C_NUM("sigma_lo", "%.6e"), DRIFT_C_NUM("sigma_hi", "%.6e"),
    DRIFT_C_NUM("g2", "%.4f"), DRIFT_C_INT("df"), DRIFT_C_NUM("p_value", "%.4g"), DRIFT_C_NUM("nu", "%.6g"),
    DRIFT_C_NUM("c", "%.4f"), DRIFT_C_NUM("sigma_pred_rel", "%.6e"), DRIFT_C_NUM("fit_over_pred", "%.4f"),
    DRIFT_C_NUM("sigma_sums_rel", "%.6e"), DRIFT_C_NUM("fit_over_sums", "%.4f"), DRIFT_C_NUM("s_median", "%.6g"),
    DRIFT_C_NUM("l1_median", "%.6g"), DRIFT_C_NUM("gap_half_rel", "%.6e"), DRIFT_C_NUM("gap_half_abs", "%.6e"),
    DRIFT_C_NUM("gap_half_ulp_in", "%.4g"), DRIFT_C_NUM("gap_half_ulp_out", "%.4g"),
    DRIFT_C_NUM("gap_p001_rel", "%.6e"), DRIFT_C_NUM("gap_p001_abs", "%.6e"), DRIFT_C_NUM("gap_p001_ulp_in", "%.4g"),
    DRIFT_C_NUM("gap_p001_ulp_out", "%.4g")};
static const drift_col_t C_TIES[] = {DRIFT_AF_HEAD_COLS, DRIFT_C_INT("ties"), DRIFT_C_INT("exact_ties_confirmed"),
    DRIFT_C_INT("distinguished"), DRIFT_C_INT("picked_higher_id"), DRIFT_C_INT("flips")};
static const drift_col_t C_TRIALS[] = {DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_INT("trial"),
    DRIFT_C_NUM("target_rel", "%.6e"), DRIFT_C_HEX("gap_hex"), DRIFT_C_NUM("gap", NULL), DRIFT_C_NUM("rel_gap", "%.6e"),
    DRIFT_C_NUM("s", "%.9g"), DRIFT_C_NUM("l1", "%.9g"), DRIFT_C_INT("steps"), DRIFT_C_INT("reached"),
    DRIFT_C_INT("exact_top1"), DRIFT_C_TEXT("flips")};
static const drift_col_t C_LAWS[] = {DRIFT_AF_HEAD_COLS, DRIFT_C_TEXT("implied_law"), DRIFT_C_INT("pairs"),
    DRIFT_C_INT("flips"), DRIFT_C_TEXT("gauss_status"), DRIFT_C_NUM("gauss_sigma_rel", "%.6e"),
    DRIFT_C_NUM("gauss_loglik", "%.6f"), DRIFT_C_NUM("gauss_p", "%.4g"), DRIFT_C_TEXT("triangle_status"),
    DRIFT_C_NUM("triangle_kappa", "%.6g"), DRIFT_C_NUM("triangle_loglik", "%.6f"), DRIFT_C_NUM("triangle_p", "%.4g"),
    DRIFT_C_TEXT("conv_status"), DRIFT_C_NUM("conv_sigma_rel", "%.6e"), DRIFT_C_NUM("conv_loglik", "%.6f"),
    DRIFT_C_NUM("conv_p", "%.4g"), DRIFT_C_TEXT("rival"), DRIFT_C_NUM("dloglik_vs_rival", "%.4f"),
    DRIFT_C_NUM("power", "%.4g"), DRIFT_C_INT("informative_pairs"), DRIFT_C_INT("decided"),
    DRIFT_C_NUM("q_out_rel_median", "%.6e"), DRIFT_C_NUM("gap_p01_rel", "%.6e"), DRIFT_C_NUM("gap_p001_rel", "%.6e"),
    DRIFT_C_NUM("gap_p01_ulp_out", "%.4g"), DRIFT_C_NUM("gap_p001_ulp_out", "%.4g"), DRIFT_C_TEXT("tag")};

/* Planted pairs: flip rate per gap bin. */
static void write_bins(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AFP_BINS, "table",
        "planted pairs: flip rate per exact-gap bin (relative gap = exact gap / s, s = ||h||_2/sqrt(K))");
    drift_out_meta(o, AFP_BINS, "planted",
        "%d targets 1e-7..1 (%d per decade) x %ld pairs per K and format; V = %ld for the top-logit level", L->ntargets,
        DRIFT_AF_PER_DECADE, L->reps, L->V);
    drift_out_meta(o, AFP_BINS, "flip",
        "computed argmax (equal computed logits: the lower id) != exact argmax; exact ties are never flips (argmax_flip_ties.csv)");
    drift_out_meta(o, AFP_BINS, "interval", "Wilson 95%% score interval");
    drift_out_meta(o, AFP_BINS, "ulp", "gap_ulp_in: mean gap / ulp of the input format at |exact top logit|");
    DRIFT_AF_EACH_KERNEL(L)
    for (int b = 0; b < L->gap_bins.nbins; b++) {
        const drift_flip_fit_t *F = &cl->fits[c];
        drift_flip_bin_t B;
        if (drift_flipset_bin(&B, &cl->planted, c, &L->gap_bins, b, ks->f)) drift_die("cannot bin the flips");
        double ctr = drift_logbins_center(&L->gap_bins, b);
        drift_row(o, AFP_BINS, DRIFT_AF_HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_TXT(drift_kset_tag(ks, c)), DRIFT_INT(b),
            DRIFT_NUM(L->gap_bins.edge[b]), DRIFT_NUM(L->gap_bins.edge[b + 1]), DRIFT_NUM(ctr), DRIFT_NUM(B.gap_abs),
            DRIFT_NUM(B.gap_ulp), DRIFT_INT(B.n), DRIFT_INT(B.k), DRIFT_NUM(B.rate), DRIFT_NUM(B.lo), DRIFT_NUM(B.hi),
            DRIFT_NUM(F->fit.status == DRIFT_FIT_OK ? drift_phi(-ctr / F->fit.sigma) : NAN));
    }
}

/* The sigma fits, predictions and critical gaps. */
static void write_fits(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AFP_FIT, "table",
        "maximum-likelihood sigma of P(flip | gap D) = Phi(-D/sigma), D = exact gap / s, on the planted pairs");
    drift_out_meta(
        o, AFP_FIT, "interval", "sigma_lo, sigma_hi: profile-likelihood 95%% interval (log-likelihood drop 1.92073)");
    drift_out_meta(o, AFP_FIT, "goodness",
        "g2: binned deviance 2 sum[O ln(O/E) + (n-O) ln((n-O)/(n-E))] over the %d gap bins, E = sum of fitted Phi; "
        "df = bins with pairs - 1; p = P(chi2_df > g2)",
        L->ntargets);
    drift_out_meta(o, AFP_FIT, "prediction",
        "sigma_pred (norm form) = RMS_i sqrt(c^2 K u_acc^2 P2_i + [logits stored narrower] 2 u_out^2 l1_i^2/(8 ln 2)) / s_i, "
        "c = sqrt(nu/(8 ln 2)), P2 = sum h^2 (w1^2 + w2^2) (= ||h||_rms^2 ||w1-w2||^2 in expectation); "
        "sigma_sums = the same random-rounding model on the kernel's actual partial sums (ulp^2/12 per rounding, summed over the reduction tree); see argmax_flip.c");
    drift_out_meta(o, AFP_FIT, "critical",
        "gap_half: P(flip) = 25%% (half the coin-toss limit, the '50%%' critical gap; P = 50%% only at gap 0); gap_p001: "
        "P(flip) = 0.1%%. From sigma when status = ok, from sigma_hi (upper bounds) otherwise. _rel: / s; _abs: x median s; _ulp_in/_ulp_out: "
        "/ ulp of the input/logit format at the median |top logit|");
    DRIFT_AF_EACH_KERNEL(L)
    {
        const drift_flip_fit_t *F = &cl->fits[c];
        const drift_recipe_t *cf = &ks->k[c].c;
        char ord[DRIFT_ORDER_SPEC_MAX];
        drift_order_print(ord, sizeof ord, &cf->order);
        double uin = drift_ulp(F->l1_med, ks->f), uout = drift_ulp(F->l1_med, cf->out), s = F->s_med;
        drift_row(o, AFP_FIT, DRIFT_AF_HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_TXT(drift_kset_tag(ks, c)),
            DRIFT_TXT(cf->exact ? "exact" : ord), DRIFT_TXT(cf->exact ? "-" : drift_format_name(cf->acc.acc)),
            DRIFT_TXT(drift_format_name(cf->out)), DRIFT_INT(F->fit.n), DRIFT_INT(F->fit.k),
            DRIFT_TXT(drift_fit_status_name(F->fit.status)), DRIFT_NUM(F->fit.sigma), DRIFT_NUM(F->fit.sigma_lo),
            DRIFT_NUM(F->fit.sigma_hi), DRIFT_NUM(F->fit.g2), DRIFT_INT(F->fit.df), DRIFT_NUM(F->fit.p_value),
            DRIFT_NUM(ks->k[c].nu), DRIFT_NUM(drift_flip_c(ks->k[c].nu)), DRIFT_NUM(F->sigma_pred),
            DRIFT_NUM(F->fit.sigma / F->sigma_pred), DRIFT_NUM(F->sigma_sums), DRIFT_NUM(F->fit.sigma / F->sigma_sums),
            DRIFT_NUM(s), DRIFT_NUM(F->l1_med), DRIFT_NUM(F->half), DRIFT_NUM(F->half * s),
            DRIFT_NUM(F->half * s / uin), DRIFT_NUM(F->half * s / uout), DRIFT_NUM(F->p001), DRIFT_NUM(F->p001 * s),
            DRIFT_NUM(F->p001 * s / uin), DRIFT_NUM(F->p001 * s / uout));
    }
}

/* Planted exact ties. */
static void write_ties(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AFP_TIES, "table",
        "planted exact ties (drift_plant_tie, 16 swapped channel pairs): the exact logits are equal, the terms sit at different positions");
    drift_out_meta(o, AFP_TIES, "columns",
        "distinguished: computed logits differ; picked_higher_id: the computed argmax is the higher id (a tie resolved by the "
        "numerics, not a flip); flips: always 0 by definition");
    DRIFT_AF_EACH_KERNEL(L)
    {
        drift_flip_ties_t T = {0, 0, 0, 0};
        drift_flipset_ties(&T, &cl->ties, c);
        drift_row(o, AFP_TIES, DRIFT_AF_HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_INT(cl->ties.n), DRIFT_INT(T.confirmed),
            DRIFT_INT(T.distinguished), DRIFT_INT(T.picked_higher), DRIFT_INT(T.flips));
    }
}

/* With --trials: every planted pair. */
static void write_trials(drift_out_t *o, const drift_aflab_t *L)
{
    if (!L->trials_csv) return;
    drift_out_meta(o, AFP_TRIALS, "table",
        "every planted pair: flips is one character per kernel, in the order of the kernels metadata line");
    for (int ki = 0; ki < L->nKs; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            char names[DRIFT_AF_MAXC * 97] = "";
            for (int c = 0; c < L->cell[ki][fi].kernels.n; c++) {
                strcat(names, c ? " " : "");
                strcat(names, L->cell[ki][fi].kernels.k[c].name);
            }
            char key[64];
            snprintf(key, sizeof key, "kernels K=%zu %s", L->Ks[ki], drift_format_name(L->cell[ki][fi].kernels.f));
            drift_out_meta(o, AFP_TRIALS, key, "%s", names);
        }
    for (int ki = 0; ki < L->nKs; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            const drift_flipset_t *st = &L->cell[ki][fi].planted;
            char flips[DRIFT_AF_MAXC + 1];
            for (size_t i = 0; i < st->n; i++) {
                const drift_flip_trial_t *t = &st->t[i];
                for (int c = 0; c < st->ncfg && c < DRIFT_AF_MAXC; c++)
                    flips[c] = (char)('0' + st->flip[i * st->ncfg + c]);
                flips[st->ncfg < DRIFT_AF_MAXC ? st->ncfg : DRIFT_AF_MAXC] = 0;
                drift_row(o, AFP_TRIALS, DRIFT_INT(L->Ks[ki]), DRIFT_TXT(drift_format_name(L->cell[ki][fi].kernels.f)),
                    DRIFT_INT(i), DRIFT_NUM(t->target), DRIFT_NUM(t->gap), DRIFT_NUM(t->gap), DRIFT_NUM(t->rel),
                    DRIFT_NUM(t->s), DRIFT_NUM(t->l1), DRIFT_INT(t->steps), DRIFT_INT(t->reached), DRIFT_INT(t->top1),
                    DRIFT_TXT(flips));
            }
        }
}

/* The law each kernel's mechanism implies, all three fitted (fliplaw.h, flipfit.h). */
static void write_laws(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AFP_LAWS, "table",
        "planted pairs: the flip law of each kernel's mechanism (gauss: accumulation noise; triangle: "
        "output rounding, 1/2 (1 - D/q)+; conv: both) fitted by maximum likelihood; q = the logit format's spacing at the exact top logit / s");
    drift_out_meta(o, AFP_LAWS, "choice",
        "dloglik = loglik(implied) - loglik(rival) (one parameter each); "
        "power = expected log-likelihood ratio if the implied law were true; decided = |dloglik| >= 3 and power >= 3 (a likelihood ratio of 20)");
    drift_out_meta(o, AFP_LAWS, "gaps",
        "gap_p01 / gap_p001: the gaps at which the implied law's flip probability is 1%% / 0.1%%, relative to s and in output ulps (q at the median); "
        "tag: the kernel's part in the report, as in _fit.csv (default, engine, ...)");
    DRIFT_AF_EACH_KERNEL(L)
    {
        const drift_flip_laws_t *W = &cl->laws[c];
        const drift_fliplaw_fit_t *G = &W->fit[DRIFT_FLIPLAW_GAUSS], *T = &W->fit[DRIFT_FLIPLAW_TRIANGLE],
                                  *C = &W->fit[DRIFT_FLIPLAW_CONV];
        drift_row(o, AFP_LAWS, DRIFT_AF_HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_TXT(drift_fliplaw_name(W->implied)),
            DRIFT_INT(W->pairs), DRIFT_INT(W->flips), DRIFT_TXT(drift_fit_status_name(G->status)), DRIFT_NUM(G->theta),
            DRIFT_NUM(G->loglik), DRIFT_NUM(G->p_value), DRIFT_TXT(drift_fit_status_name(T->status)),
            DRIFT_NUM(T->theta), DRIFT_NUM(T->loglik), DRIFT_NUM(T->p_value),
            DRIFT_TXT(drift_fit_status_name(C->status)), DRIFT_NUM(C->theta), DRIFT_NUM(C->loglik),
            DRIFT_NUM(C->p_value), DRIFT_TXT(drift_fliplaw_name(W->rival)), DRIFT_NUM(W->choice.dloglik),
            DRIFT_NUM(W->choice.power_a), DRIFT_INT(W->choice.informative), DRIFT_INT(W->choice.decided),
            DRIFT_NUM(W->q_med), DRIFT_NUM(W->d01), DRIFT_NUM(W->d001), DRIFT_NUM(W->d01_ulp), DRIFT_NUM(W->d001_ulp),
            DRIFT_TXT(drift_kset_tag(ks, c)));
    }
}

void drift_afp_declare_tables(drift_table_spec_t *tables, const drift_aflab_t *L)
{
    const drift_table_spec_t t[AFP_NCSV] = {{".csv", NULL, 0, C_BINS, DRIFT_COUNTOF(C_BINS)},
        {"_fit.csv", NULL, 0, C_FIT, DRIFT_COUNTOF(C_FIT)}, {"_ties.csv", NULL, 0, C_TIES, DRIFT_COUNTOF(C_TIES)},
        {L->trials_csv ? "_trials.csv" : NULL /* optional */, NULL, 0, C_TRIALS, DRIFT_COUNTOF(C_TRIALS)},
        {"_laws.csv", NULL, 0, C_LAWS, DRIFT_COUNTOF(C_LAWS)}};
    memcpy(tables, t, sizeof t);
}

void drift_afp_write_tables(drift_out_t *o, const drift_aflab_t *L)
{
    write_bins(o, L);
    write_fits(o, L);
    write_ties(o, L);
    write_trials(o, L);
    write_laws(o, L);
}
