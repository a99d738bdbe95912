/* argmax_report.c — the declared output of the argmax-flip experiment (argmax_lab.h): its CSV
 * tables, its Markdown fragment and its summary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "argmax_lab.h"
#include "drift.h"
#include "output.h"
#include "stats.h"

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

enum { F_BINS, F_FIT, F_TIES, F_REAL, F_GAPS, F_BELOW, F_BATCH, F_MIT, F_TIMING, F_TRIALS, F_LAWS, F_REFS, NTABLES };

/* ---- the tables, declared once (output.h) ----------------------------------------------------- */

#define HEAD DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("role")
static const drift_col_t C_BINS[] = {HEAD, DRIFT_C_TEXT("tag"), DRIFT_C_INT("bin"), DRIFT_C_NUM("rel_lo", "%.6e"),
    DRIFT_C_NUM("rel_hi", "%.6e"), DRIFT_C_NUM("rel_center", "%.6e"), DRIFT_C_NUM("mean_gap_abs", "%.6e"),
    DRIFT_C_NUM("mean_gap_ulp_in", "%.6g"), DRIFT_C_INT("pairs"), DRIFT_C_INT("flips"), DRIFT_C_NUM("rate", "%.6g"),
    DRIFT_C_NUM("lo", "%.6g"), DRIFT_C_NUM("hi", "%.6g"), DRIFT_C_NUM("fit_p", "%.6g")};
static const drift_col_t C_FIT[] = {HEAD, DRIFT_C_TEXT("tag"), DRIFT_C_TEXT("order"), DRIFT_C_TEXT("acc"),
    DRIFT_C_TEXT("logits"), DRIFT_C_INT("pairs"), DRIFT_C_INT("flips"), DRIFT_C_TEXT("status"),
    DRIFT_C_NUM("sigma_rel", "%.6e"), DRIFT_C_NUM("sigma_lo", "%.6e"), DRIFT_C_NUM("sigma_hi", "%.6e"),
    DRIFT_C_NUM("g2", "%.4f"), DRIFT_C_INT("df"), DRIFT_C_NUM("p_value", "%.4g"), DRIFT_C_NUM("nu", "%.6g"),
    DRIFT_C_NUM("c", "%.4f"), DRIFT_C_NUM("sigma_pred_rel", "%.6e"), DRIFT_C_NUM("fit_over_pred", "%.4f"),
    DRIFT_C_NUM("sigma_sums_rel", "%.6e"), DRIFT_C_NUM("fit_over_sums", "%.4f"), DRIFT_C_NUM("s_median", "%.6g"),
    DRIFT_C_NUM("l1_median", "%.6g"), DRIFT_C_NUM("gap_half_rel", "%.6e"), DRIFT_C_NUM("gap_half_abs", "%.6e"),
    DRIFT_C_NUM("gap_half_ulp_in", "%.4g"), DRIFT_C_NUM("gap_half_ulp_out", "%.4g"),
    DRIFT_C_NUM("gap_p001_rel", "%.6e"), DRIFT_C_NUM("gap_p001_abs", "%.6e"), DRIFT_C_NUM("gap_p001_ulp_in", "%.4g"),
    DRIFT_C_NUM("gap_p001_ulp_out", "%.4g")};
static const drift_col_t C_TIES[] = {HEAD, DRIFT_C_INT("ties"), DRIFT_C_INT("exact_ties_confirmed"),
    DRIFT_C_INT("distinguished"), DRIFT_C_INT("picked_higher_id"), DRIFT_C_INT("flips")};
static const drift_col_t C_REAL[] = {HEAD, DRIFT_C_INT("rows"), DRIFT_C_INT("exact_ties"), DRIFT_C_INT("flips"),
    DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo", "%.6g"), DRIFT_C_NUM("hi", "%.6g"),
    DRIFT_C_NUM("predicted_flips", "%.4g"), DRIFT_C_NUM("stage1_mean", "%.2f"), DRIFT_C_NUM("eval_mean", "%.2f")};
static const drift_col_t C_GAPS[] = {DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("bin"),
    DRIFT_C_TEXT("rel_lo"), DRIFT_C_NUM("rel_hi", "%.6e"), DRIFT_C_INT("rows"), DRIFT_C_INT("count"),
    DRIFT_C_NUM("fraction", "%.6g"), DRIFT_C_NUM("cum_fraction", "%.6g")};
static const drift_col_t C_BELOW[] = {HEAD, DRIFT_C_NUM("gap_half_rel", "%.6e"), DRIFT_C_INT("rows_below_half"),
    DRIFT_C_NUM("frac_half", "%.6g"), DRIFT_C_NUM("lo_half", "%.6g"), DRIFT_C_NUM("hi_half", "%.6g"),
    DRIFT_C_NUM("gap_p001_rel", "%.6e"), DRIFT_C_INT("rows_below_p001"), DRIFT_C_NUM("frac_p001", "%.6g"),
    DRIFT_C_NUM("lo_p001", "%.6g"), DRIFT_C_NUM("hi_p001", "%.6g")};
static const drift_col_t C_BATCH[] = {DRIFT_C_TEXT("mode"), DRIFT_C_INT("K"), DRIFT_C_TEXT("format"),
    DRIFT_C_TEXT("logits"), DRIFT_C_TEXT("policy"), DRIFT_C_INT("n_policy"), DRIFT_C_INT("batch"),
    DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("order"), DRIFT_C_INT("trials"), DRIFT_C_INT("flips"),
    DRIFT_C_INT("changed_vs_batch1"), DRIFT_C_NUM("modelled_cost", "%.6g")};
static const drift_col_t C_MIT[] = {DRIFT_C_TEXT("mode"), DRIFT_C_INT("K"), DRIFT_C_TEXT("format"),
    DRIFT_C_QUOTED("mitigation"), DRIFT_C_TEXT("kernel"), DRIFT_C_INT("trials"), DRIFT_C_INT("flips"),
    DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo", "%.6g"), DRIFT_C_NUM("hi", "%.6g"),
    DRIFT_C_INT("changed_across_batches")};
static const drift_col_t C_TIMING[] = {DRIFT_C_QUOTED("what"), DRIFT_C_TEXT("value"), DRIFT_C_TEXT("unit")};
static const drift_col_t C_TRIALS[] = {DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_INT("trial"),
    DRIFT_C_NUM("target_rel", "%.6e"), DRIFT_C_HEX("gap_hex"), DRIFT_C_NUM("gap", NULL), DRIFT_C_NUM("rel_gap", "%.6e"),
    DRIFT_C_NUM("s", "%.9g"), DRIFT_C_NUM("l1", "%.9g"), DRIFT_C_INT("steps"), DRIFT_C_INT("reached"),
    DRIFT_C_INT("exact_top1"), DRIFT_C_TEXT("flips")};
static const drift_col_t C_LAWS[] = {HEAD, DRIFT_C_TEXT("implied_law"), DRIFT_C_INT("pairs"), DRIFT_C_INT("flips"),
    DRIFT_C_TEXT("gauss_status"), DRIFT_C_NUM("gauss_sigma_rel", "%.6e"), DRIFT_C_NUM("gauss_loglik", "%.6f"),
    DRIFT_C_NUM("gauss_p", "%.4g"), DRIFT_C_TEXT("triangle_status"), DRIFT_C_NUM("triangle_kappa", "%.6g"),
    DRIFT_C_NUM("triangle_loglik", "%.6f"), DRIFT_C_NUM("triangle_p", "%.4g"), DRIFT_C_TEXT("conv_status"),
    DRIFT_C_NUM("conv_sigma_rel", "%.6e"), DRIFT_C_NUM("conv_loglik", "%.6f"), DRIFT_C_NUM("conv_p", "%.4g"),
    DRIFT_C_TEXT("rival"), DRIFT_C_NUM("dloglik_vs_rival", "%.4f"), DRIFT_C_NUM("power", "%.4g"),
    DRIFT_C_INT("informative_pairs"), DRIFT_C_INT("decided"), DRIFT_C_NUM("q_out_rel_median", "%.6e"),
    DRIFT_C_NUM("gap_p01_rel", "%.6e"), DRIFT_C_NUM("gap_p001_rel", "%.6e"), DRIFT_C_NUM("gap_p01_ulp_out", "%.4g"),
    DRIFT_C_NUM("gap_p001_ulp_out", "%.4g")};
static const drift_col_t C_REFS[] = {HEAD, DRIFT_C_INT("rows"), DRIFT_C_INT("input_rounding_flips"),
    DRIFT_C_INT("flips_vs_exact_rounded"), DRIFT_C_INT("accumulation_flips"), DRIFT_C_INT("output_rounding_changes"),
    DRIFT_C_INT("flips_vs_exact_unrounded")};
#undef HEAD
#define NCOL(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The "K, format, kernel, role" cells that open every per-kernel row; returns how many. */
static int head(drift_cell_t *cells, size_t K, const drift_kset_t *ks, int c)
{
    cells[0] = DRIFT_INT(K), cells[1] = DRIFT_TXT(drift_format_name(ks->f)), cells[2] = DRIFT_TXT(ks->k[c].name);
    cells[3] = DRIFT_TXT(drift_role_name[ks->k[c].role]);
    return 4;
}

/* Planted pairs: flip rate per gap bin. */
static void write_bins(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, F_BINS, "table",
        "planted pairs: flip rate per exact-gap bin (relative gap = exact gap / s, s = ||h||_2/sqrt(K))");
    drift_out_meta(o, F_BINS, "planted",
        "%d targets 1e-7..1 (%d per decade) x %ld pairs per K and format; V = %ld for the top-logit level", L->nT,
        DRIFT_AF_PER_DECADE, L->reps, L->V);
    drift_out_meta(o, F_BINS, "flip",
        "computed argmax (equal computed logits: the lower id) != exact argmax; exact ties are never flips (argmax_flip_ties.csv)");
    drift_out_meta(o, F_BINS, "interval", "Wilson 95%% score interval");
    drift_out_meta(o, F_BINS, "ulp", "gap_ulp_in: mean gap / ulp of the input format at |exact top logit|");
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                const drift_flip_fit_t *F = &L->FIT[ki][fi][c];
                for (int b = 0; b < L->bins.nbins; b++) {
                    drift_flip_bin_t B;
                    if (drift_flipset_bin(&B, &L->PL[ki][fi], c, &L->bins, b, ks->f)) drift_die("cannot bin the flips");
                    double ctr = drift_logbins_center(&L->bins, b);
                    drift_cell_t x[NCOL(C_BINS)];
                    int n = head(x, L->Ks[ki], ks, c);
                    x[n++] = DRIFT_TXT(drift_kset_tag(ks, c)), x[n++] = DRIFT_INT(b),
                    x[n++] = DRIFT_NUM(L->bins.edge[b]);
                    x[n++] = DRIFT_NUM(L->bins.edge[b + 1]), x[n++] = DRIFT_NUM(ctr), x[n++] = DRIFT_NUM(B.gap_abs);
                    x[n++] = DRIFT_NUM(B.gap_ulp), x[n++] = DRIFT_INT(B.n), x[n++] = DRIFT_INT(B.k),
                    x[n++] = DRIFT_NUM(B.rate);
                    x[n++] = DRIFT_NUM(B.lo), x[n++] = DRIFT_NUM(B.hi);
                    x[n++] = DRIFT_NUM(F->fit.status == DRIFT_FIT_OK ? drift_phi(-ctr / F->fit.sigma) : NAN);
                    drift_row_cells(o, F_BINS, x, n);
                }
            }
        }
}

/* The sigma fits, predictions and critical gaps. */
static void write_fits(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, F_FIT, "table",
        "maximum-likelihood sigma of P(flip | gap D) = Phi(-D/sigma), D = exact gap / s, on the planted pairs");
    drift_out_meta(
        o, F_FIT, "interval", "sigma_lo, sigma_hi: profile-likelihood 95%% interval (log-likelihood drop 1.92073)");
    drift_out_meta(o, F_FIT, "goodness",
        "g2: binned deviance 2 sum[O ln(O/E) + (n-O) ln((n-O)/(n-E))] over the %d gap bins, E = sum of fitted Phi; "
        "df = bins with pairs - 1; p = P(chi2_df > g2)",
        L->nT);
    drift_out_meta(o, F_FIT, "prediction",
        "sigma_pred (norm form) = RMS_i sqrt(c^2 K u_acc^2 P2_i + [logits stored narrower] 2 u_out^2 l1_i^2/(8 ln 2)) / s_i, "
        "c = sqrt(nu/(8 ln 2)), P2 = sum h^2 (w1^2 + w2^2) (= ||h||_rms^2 ||w1-w2||^2 in expectation); "
        "sigma_sums = the same random-rounding model on the kernel's actual partial sums (ulp^2/12 per rounding, summed over the reduction tree); see argmax_flip.c");
    drift_out_meta(o, F_FIT, "critical",
        "gap_half: P(flip) = 25%% (half the coin-toss limit, the '50%%' critical gap; P = 50%% only at gap 0); gap_p001: "
        "P(flip) = 0.1%%. From sigma when status = ok, from sigma_hi (upper bounds) otherwise. _rel: / s; _abs: x median s; _ulp_in/_ulp_out: "
        "/ ulp of the input/logit format at the median |top logit|");
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                const drift_flip_fit_t *F = &L->FIT[ki][fi][c];
                const drift_recipe_t *cf = &ks->k[c].c;
                char ord[DRIFT_ORDER_SPEC_MAX];
                drift_order_print(ord, sizeof ord, &cf->order);
                double uin = drift_ulp(F->l1_med, ks->f), uout = drift_ulp(F->l1_med, cf->out), s = F->s_med;
                drift_cell_t x[NCOL(C_FIT)];
                int n = head(x, L->Ks[ki], ks, c);
                x[n++] = DRIFT_TXT(drift_kset_tag(ks, c)), x[n++] = DRIFT_TXT(cf->exact ? "exact" : ord);
                x[n++] = DRIFT_TXT(cf->exact ? "-" : drift_format_name(cf->acc.acc)),
                x[n++] = DRIFT_TXT(drift_format_name(cf->out));
                x[n++] = DRIFT_INT(F->fit.n), x[n++] = DRIFT_INT(F->fit.k),
                x[n++] = DRIFT_TXT(drift_fit_status_name(F->fit.status));
                x[n++] = DRIFT_NUM(F->fit.sigma), x[n++] = DRIFT_NUM(F->fit.sigma_lo),
                x[n++] = DRIFT_NUM(F->fit.sigma_hi);
                x[n++] = DRIFT_NUM(F->fit.g2), x[n++] = DRIFT_INT(F->fit.df), x[n++] = DRIFT_NUM(F->fit.p_value);
                x[n++] = DRIFT_NUM(ks->k[c].nu), x[n++] = DRIFT_NUM(drift_flip_c(ks->k[c].nu)),
                x[n++] = DRIFT_NUM(F->sigma_pred);
                x[n++] = DRIFT_NUM(F->fit.sigma / F->sigma_pred), x[n++] = DRIFT_NUM(F->sigma_sums);
                x[n++] = DRIFT_NUM(F->fit.sigma / F->sigma_sums), x[n++] = DRIFT_NUM(s), x[n++] = DRIFT_NUM(F->l1_med);
                x[n++] = DRIFT_NUM(F->half), x[n++] = DRIFT_NUM(F->half * s), x[n++] = DRIFT_NUM(F->half * s / uin);
                x[n++] = DRIFT_NUM(F->half * s / uout), x[n++] = DRIFT_NUM(F->p001), x[n++] = DRIFT_NUM(F->p001 * s);
                x[n++] = DRIFT_NUM(F->p001 * s / uin), x[n++] = DRIFT_NUM(F->p001 * s / uout);
                drift_row_cells(o, F_FIT, x, n);
            }
        }
}

/* Planted exact ties. */
static void write_ties(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, F_TIES, "table",
        "planted exact ties (drift_plant_tie, 16 swapped channel pairs): the exact logits are equal, the terms sit at different positions");
    drift_out_meta(o, F_TIES, "columns",
        "distinguished: computed logits differ; picked_higher_id: the computed argmax is the higher id (a tie resolved by the "
        "numerics, not a flip); flips: always 0 by definition");
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[ki][fi];
            const drift_flipset_t *st = &L->TI[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                drift_flip_ties_t T = {0, 0, 0, 0};
                drift_flipset_ties(&T, st, c);
                drift_cell_t x[NCOL(C_TIES)];
                int n = head(x, L->Ks[ki], ks, c);
                x[n++] = DRIFT_INT(st->n), x[n++] = DRIFT_INT(T.confirmed), x[n++] = DRIFT_INT(T.distinguished);
                x[n++] = DRIFT_INT(T.picked_higher), x[n++] = DRIFT_INT(T.flips);
                drift_row_cells(o, F_TIES, x, n);
            }
        }
}

/* The realistic tables: per (K, format, kernel) the pruning could bound, the flip fraction
 * (F_REAL) and the rows below each critical gap (F_BELOW). */
static void write_realistic(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, F_REAL, "table",
        "realistic heads: fraction of hidden states whose computed argmax differs from the exact argmax");
    drift_out_meta(o, F_REAL, "head",
        "V = %ld tokens, weights N(0, 1/K) (fp32 master), hidden states N(0,1) with max(1, "
        "K/512) outlier channels of magnitude 20..100; %ld hidden states per K",
        L->V, L->rows);
    drift_out_meta(o, F_REAL, "pruning",
        "rigorous (gen_logits.h): stage1_mean = tokens surviving the first stage, "
        "eval_mean = tokens whose logit this kernel computed; own-format accumulation is left out (no finite bound)");
    drift_out_meta(o, F_REAL, "predicted",
        "sum over rows of Phi(-rel_gap/sigma_rel) with sigma_rel from the planted fit of the same (K, format, kernel)");
    drift_out_meta(o, F_BELOW, "table",
        "realistic heads: fraction of rows whose exact relative gap lies below each kernel's critical gaps (from the planted fits)");
    for (int ki = 0; ki < L->nK && L->rows > 0; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[ki][fi];
            const drift_flipset_t *st = &L->RE[ki][fi];
            double s1 = 0;
            long nt = 0;
            for (size_t i = 0; i < st->n; i++) s1 += (double)st->nstage1[i], nt += st->t[i].tie;
            for (int c = 0; c < ks->n; c++) {
                if (!L->real_ok[ki][fi][c]) continue;
                const drift_flip_fit_t *F = &L->FIT[ki][fi][c];
                drift_flip_real_t R;
                drift_flipset_realistic(&R, st, c, F);
                drift_cell_t x[NCOL(C_BELOW)];
                int n = head(x, L->Ks[ki], ks, c);
                x[n++] = DRIFT_INT(st->n), x[n++] = DRIFT_INT(nt), x[n++] = DRIFT_INT(R.flips),
                x[n++] = DRIFT_NUM(R.rate);
                x[n++] = DRIFT_NUM(R.lo), x[n++] = DRIFT_NUM(R.hi), x[n++] = DRIFT_NUM(R.predicted);
                x[n++] = DRIFT_NUM(s1 / (double)st->n), x[n++] = DRIFT_NUM(R.eval_mean);
                drift_row_cells(o, F_REAL, x, n);
                long a = R.below_half, b = R.below_p001;
                double l1_, h1_, l2_, h2_;
                if (drift_wilson(&l1_, &h1_, a, (long)st->n, DRIFT_Z95)) l1_ = h1_ = NAN;
                if (drift_wilson(&l2_, &h2_, b, (long)st->n, DRIFT_Z95)) l2_ = h2_ = NAN;
                n = head(x, L->Ks[ki], ks, c);
                x[n++] = DRIFT_NUM(F->half), x[n++] = DRIFT_INT(a), x[n++] = DRIFT_NUM((double)a / st->n),
                x[n++] = DRIFT_NUM(l1_);
                x[n++] = DRIFT_NUM(h1_), x[n++] = DRIFT_NUM(F->p001), x[n++] = DRIFT_INT(b),
                x[n++] = DRIFT_NUM((double)b / st->n);
                x[n++] = DRIFT_NUM(l2_), x[n++] = DRIFT_NUM(h2_);
                drift_row_cells(o, F_BELOW, x, n);
            }
        }
}

/* Realistic heads: the distribution of exact top-2 gaps. */
static void write_gaps(drift_out_t *o, const drift_aflab_t *L)
{
    drift_logbins_t gb;
    if (drift_logbins_init(&gb, 1e-9, 10, 40)) drift_die("cannot make the gap bins");
    drift_out_meta(o, F_GAPS, "table",
        "realistic heads: distribution of the exact top-1/top-2 gap relative to s (log bins, 4 per decade); below_lo: "
        "rows with a relative gap under 1e-9 (ties included)");
    for (int ki = 0; ki < L->nK && L->rows > 0; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_flipset_t *st = &L->RE[ki][fi];
            const char *fn = drift_format_name(L->KS[ki][fi].f);
            long cum = 0;
            for (size_t i = 0; i < st->n; i++) cum += st->t[i].rel < gb.edge[0];
            drift_row(o, F_GAPS, DRIFT_INT(L->Ks[ki]), DRIFT_TXT(fn), DRIFT_TXT("below_lo"), DRIFT_TXT("0"),
                DRIFT_NUM(gb.edge[0]), DRIFT_INT(st->n), DRIFT_INT(cum), DRIFT_NUM((double)cum / st->n),
                DRIFT_NUM((double)cum / st->n));
            for (int b = 0; b < gb.nbins; b++) {
                long cnt = 0;
                for (size_t i = 0; i < st->n; i++) cnt += drift_logbins_find(&gb, st->t[i].rel) == b;
                cum += cnt;
                char bin[16], lo[32];
                snprintf(bin, sizeof bin, "%d", b);
                snprintf(lo, sizeof lo, "%.6e", gb.edge[b]);
                drift_row(o, F_GAPS, DRIFT_INT(L->Ks[ki]), DRIFT_TXT(fn), DRIFT_TXT(bin), DRIFT_TXT(lo),
                    DRIFT_NUM(gb.edge[b + 1]), DRIFT_INT(st->n), DRIFT_INT(cnt), DRIFT_NUM((double)cnt / st->n),
                    DRIFT_NUM((double)cum / st->n));
            }
        }
}

/* The argmax across batch sizes under the two GEMM policies. */
static void write_batch(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, F_BATCH, "table",
        "the LM head as a GEMM of batch M x V: the kernel each policy picks (lib/ops/policy.h, device %s, %d SMs), "
        "and how often the argmax differs from the exact one and from the batch-1 result",
        L->dev.name, L->dev.sms);
    drift_out_meta(o, F_BATCH, "shape",
        "n_policy = N the policy sees: V, or V/%ld (a vocabulary-parallel head split over %ld devices)", L->shard,
        L->shard);
    for (int mode = 0; mode < 2; mode++)
        for (int ki = 0; ki < L->nK; ki++)
            for (int fi = 0; fi < L->nF; fi++) {
                const drift_kset_t *ks = &L->KS[ki][fi];
                const drift_flipset_t *st = mode ? &L->RE[ki][fi] : &L->PL[ki][fi];
                if (mode && L->rows == 0) continue;
                for (int out = 0; out < 2; out++) {
                    if (out && ks->f != DRIFT_BF16 && ks->f != DRIFT_FP16) continue;
                    for (int q = 0; q < L->npol; q++) {
                        int c = L->polcfg[ki][fi][q][out];
                        int c1 = L->polcfg[ki][fi][q - (int)(q % DRIFT_AF_NBATCH)]
                                          [out]; /* batch 1 of the same policy and shape */
                        long fl = 0, ch = 0;
                        for (size_t i = 0; i < st->n; i++) {
                            fl += st->flip[i * st->ncfg + c];
                            ch += st->pick[i * st->ncfg + c] != st->pick[i * st->ncfg + c1];
                        }
                        const drift_polrow_t *P = &L->polk[ki][q];
                        char ord[DRIFT_ORDER_SPEC_MAX];
                        drift_order_print(ord, sizeof ord, &P->order);
                        size_t N = P->shard ? ceil_div((size_t)L->V, (size_t)L->shard) : (size_t)L->V;
                        drift_row(o, F_BATCH, DRIFT_TXT(mode ? "realistic" : "planted"), DRIFT_INT(L->Ks[ki]),
                            DRIFT_TXT(drift_format_name(ks->f)), DRIFT_TXT(out ? drift_format_name(ks->f) : "fp32"),
                            DRIFT_TXT(drift_policy_name(P->pol)), DRIFT_INT(N), DRIFT_INT(P->batch),
                            DRIFT_TXT(P->kernel), DRIFT_TXT(ord), DRIFT_INT(st->n), DRIFT_INT(fl), DRIFT_INT(ch),
                            DRIFT_NUM(P->cost));
                    }
                }
            }
}

/* The mitigations table. */
static void write_mitigations(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, F_MIT, "table",
        "mitigations at K = %zu, input format %s: flip rate against the exact argmax (for (d): "
        "against the exact argmax under the same tie rule)",
        L->Ks[L->mk], drift_format_name(L->MKS->f));
    drift_out_meta(o, F_MIT, "baseline", "%s", L->MKS->k[L->MKS->engine].name);
    drift_out_meta(o, F_MIT, "eps",
        "(d) eps = %.6e times s (the baseline's D_0.1%% from the law of its mechanism, "
        "argmax_flip_laws.csv) and %.6e times s (10 sigma of its Phi fit, sigma_rel = %.6e)",
        L->eps_rel[0], L->eps_rel[1], L->base_sigma);
    drift_out_meta(o, F_MIT, "changed",
        "(c): trials whose argmax differs between batch sizes 1, 8, 64, 256, 1024 (N = V/%ld); -1: not applicable",
        L->shard);
    drift_out_meta(o, F_MIT, "cost", "cost ratios are wall-clock measurements and live in argmax_flip_timing.csv");
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 1 && L->rows == 0) break;
        for (int m = 0; m < L->nmit; m++) {
            const drift_mit_t *x = &L->MIT[mode][m];
            double lo = NAN, hi = NAN;
            if (x->flips >= 0 && drift_wilson(&lo, &hi, x->flips, x->n, DRIFT_Z95)) lo = hi = NAN;
            drift_row(o, F_MIT, DRIFT_TXT(mode ? "realistic" : "planted"), DRIFT_INT(L->Ks[L->mk]),
                DRIFT_TXT(drift_format_name(L->MKS->f)), DRIFT_TXT(x->name), DRIFT_TXT(L->MKS->k[x->cfg].name),
                DRIFT_INT(x->n), DRIFT_INT(x->flips), DRIFT_NUM(x->flips >= 0 ? (double)x->flips / x->n : NAN),
                DRIFT_NUM(lo), DRIFT_NUM(hi), DRIFT_INT(x->changed));
        }
    }
}

/* Timing: the one non-reproducible file. */
static void write_timing(drift_out_t *o, const drift_aflab_t *L)
{
    char v[32], unit[64];
    drift_out_meta(o, F_TIMING, "table", "wall-clock costs of this run: NOT reproducible (machine, load, threads)");
    snprintf(unit, sizeof unit, "us per logit (K = %zu)", L->Ks[L->mk]);
    for (int m = 0; m < L->ncost; m++) {
        snprintf(v, sizeof v, "%.4g", L->cost[m].us);
        drift_row(o, F_TIMING, DRIFT_TXT(L->cost[m].what), DRIFT_TXT(v), DRIFT_TXT(unit));
    }
    const char *what[] = {"planted phase", "realistic phase", "total"};
    const double t[] = {L->t_planted, L->t_real, L->t_total};
    for (int m = 0; m < 3; m++) {
        snprintf(v, sizeof v, "%.3f", t[m]);
        drift_row(o, F_TIMING, DRIFT_TXT(what[m]), DRIFT_TXT(v), DRIFT_TXT("s"));
    }
}

/* With --trials: every planted pair. */
static void write_trials(drift_out_t *o, const drift_aflab_t *L)
{
    if (!L->trials_csv) return;
    drift_out_meta(o, F_TRIALS, "table",
        "every planted pair: flips is one character per kernel, in the order of the kernels metadata line");
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            char names[DRIFT_AF_MAXC * 97] = "";
            for (int c = 0; c < L->KS[ki][fi].n; c++) {
                strcat(names, c ? " " : "");
                strcat(names, L->KS[ki][fi].k[c].name);
            }
            char key[64];
            snprintf(key, sizeof key, "kernels K=%zu %s", L->Ks[ki], drift_format_name(L->KS[ki][fi].f));
            drift_out_meta(o, F_TRIALS, key, "%s", names);
        }
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_flipset_t *st = &L->PL[ki][fi];
            char flips[DRIFT_AF_MAXC + 1];
            for (size_t i = 0; i < st->n; i++) {
                const drift_flip_trial_t *t = &st->t[i];
                for (int c = 0; c < st->ncfg && c < DRIFT_AF_MAXC; c++)
                    flips[c] = (char)('0' + st->flip[i * st->ncfg + c]);
                flips[st->ncfg < DRIFT_AF_MAXC ? st->ncfg : DRIFT_AF_MAXC] = 0;
                drift_row(o, F_TRIALS, DRIFT_INT(L->Ks[ki]), DRIFT_TXT(drift_format_name(L->KS[ki][fi].f)),
                    DRIFT_INT(i), DRIFT_NUM(t->target), DRIFT_NUM(t->gap), DRIFT_NUM(t->gap), DRIFT_NUM(t->rel),
                    DRIFT_NUM(t->s), DRIFT_NUM(t->l1), DRIFT_INT(t->steps), DRIFT_INT(t->reached), DRIFT_INT(t->top1),
                    DRIFT_TXT(flips));
            }
        }
}

/* Report: question, how to reproduce, the critical gaps at the largest K. */
static void md_critical(FILE *fp, const drift_aflab_t *L)
{
    const size_t KM = L->Ks[L->mk];
    char ks_list[128] = "";
    for (int ki = 0; ki < L->nK; ki++)
        snprintf(ks_list + strlen(ks_list), sizeof ks_list - strlen(ks_list), "%s%zu", ki ? "," : "", L->Ks[ki]);
    fprintf(fp,
        "**Question.** %s Each configuration's argmax is held against the exact argmax of the same rounded "
        "inputs (superaccumulator, MPFR-checked); exact ties are reported apart and never counted as flips.\n\n",
        L->question);
    char repro[1024];
    drift_cli_reproduce(repro, sizeof repro, &L->cli);
    fprintf(fp,
        "Reproduce: `%s` (K = %s, V = %ld, %ld planted pairs per target gap, %ld realistic hidden states per K; "
        "data/argmax_flip*.csv). Gaps are relative to the logit scale s = ||h||/sqrt(K), the standard deviation of "
        "a logit. The default kernel is `%s` (fp32 accumulation, fp32 logits); \"logits in the format\" means the "
        "tensor-core kernel's fp32 result stored in bf16/fp16, as a model running in that dtype returns it.\n\n",
        repro, ks_list, L->V, L->reps, L->rows, L->KS[L->mk][0].k[L->KS[L->mk][0].def].name);
    fprintf(fp,
        "**Critical gaps at K = %zu, kernels whose mechanism is accumulation noise** (rounded logits follow another law: next table; planted pairs; "
        "fit of P(flip | gap D) = Phi(-D/sigma); D_50 = 0.674 sigma, "
        "where flips are half as likely as a coin toss, P = 25%%, since P reaches 50%% only at D = 0; D_0.1%% = "
        "3.09 sigma; absolute values at the median s = %.3g, ulps of the input format at the median top logit):\n\n",
        KM, L->FIT[L->mk][0][L->KS[L->mk][0].def].s_med);
    fprintf(fp,
        "| format | kernel | sigma / s [95%% CI] | fit p | predicted: norm form / partial sums | D_50 / s | D_0.1%% / s | D_0.1%% absolute | D_0.1%% in ulps |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    /* only kernels whose mechanism is accumulation noise: for rounded logits the Phi curve is the
     * wrong law and its D_0.1% a gap where no flip can occur (their gaps: the next table) */
    for (int pass = 0; pass < 2; pass++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[L->mk][fi];
            int c = pass ? ks->engine : ks->def;
            if (pass && c == ks->def) continue;
            if (L->LAW[L->mk][fi][c].implied != DRIFT_FLIPLAW_GAUSS) continue;
            const drift_flip_fit_t *F = &L->FIT[L->mk][fi][c];
            int ok = F->fit.status == DRIFT_FIT_OK;
            double uin = drift_ulp(F->l1_med, ks->f);
            if (ok)
                fprintf(fp, "| %s | %s | %.3g [%.3g, %.3g] | %.2g | %.3g / %.3g | %.3g | %.3g | %.3g | %.3g |\n",
                    drift_format_name(ks->f), ks->k[c].name, F->fit.sigma, F->fit.sigma_lo, F->fit.sigma_hi,
                    F->fit.p_value, F->sigma_pred, F->sigma_sums, F->half, F->p001, F->p001 * F->s_med,
                    F->p001 * F->s_med / uin);
            else
                fprintf(fp, "| %s | %s | %s (< %.3g) | - | %.3g / %.3g | < %.3g | < %.3g | < %.3g | < %.3g |\n",
                    drift_format_name(ks->f), ks->k[c].name, drift_fit_status_name(F->fit.status), F->fit.sigma_hi,
                    F->sigma_pred, F->sigma_sums, F->half, F->p001, F->p001 * F->s_med, F->p001 * F->s_med / uin);
        }
}

/* Report: every kernel at the largest K, and the growth with K. */
static void md_kernels(FILE *fp, const drift_aflab_t *L)
{
    char b1[64], b2[64], b3[64], b4[64], b5[64];
    const size_t KM = L->Ks[L->mk];
    fprintf(fp,
        "\n**Every kernel, %s inputs, K = %zu** (fit p: binned-deviance goodness of fit; a small p means the "
        "Gaussian-noise curve is the wrong shape):\n\n| kernel | pairs | flips | sigma / s | fit p | predicted, "
        "norm form | fitted / norm form | predicted, partial sums | fitted / partial sums |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        drift_format_name(L->MKS->f), KM);
    for (int c = 0; c < L->MKS->n; c++) {
        const drift_flip_fit_t *F = &L->FIT[L->mk][L->mf][c];
        drift_fmt_num(b1, sizeof b1, F->fit.sigma, "%.3g");
        drift_fmt_num(b2, sizeof b2, F->fit.p_value, "%.2g");
        drift_fmt_num(b3, sizeof b3, F->fit.sigma / F->sigma_pred, "%.2f");
        drift_fmt_num(b5, sizeof b5, F->fit.sigma / F->sigma_sums, "%.2f");
        drift_fmt_num(b4, sizeof b4, F->fit.sigma_hi, "%.3g");
        int okf = F->fit.status == DRIFT_FIT_OK;
        fprintf(fp, "| %s | %ld | %ld | %s%s | %s | %.3g | %s | %.3g | %s |\n", L->MKS->k[c].name, F->fit.n, F->fit.k,
            okf ? "" : "< ", okf ? b1 : b4, b2, F->sigma_pred, okf ? b3 : "-", F->sigma_sums, okf ? b5 : "-");
    }
    if (L->nK > 1) {
        fprintf(fp, "\n**Growth with K** (default kernel, sigma / s):");
        for (int fi = 0; fi < L->nF; fi++) {
            fprintf(fp, "%s %s", fi ? ";" : "", drift_format_name(L->KS[0][fi].f));
            for (int ki = 0; ki < L->nK; ki++)
                fprintf(fp, " %.3g (K = %zu)", L->FIT[ki][fi][L->KS[ki][fi].def].fit.sigma, L->Ks[ki]);
        }
        fprintf(fp,
            ". Measured against the model rather than against sqrt(K) (%.2f from K = %zu to %zu, which assumes nothing "
            "else changes with K): the partial-sum model's prediction for the same pairs grows by",
            sqrt((double)L->Ks[L->nK - 1] / (double)L->Ks[0]), L->Ks[0], L->Ks[L->nK - 1]);
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_flip_fit_t *A = &L->FIT[0][fi][L->KS[0][fi].def],
                                   *B = &L->FIT[L->nK - 1][fi][L->KS[L->nK - 1][fi].def];
            fprintf(fp, "%s %s %.2f (measured %.2f)", fi ? "," : "", drift_format_name(L->KS[0][fi].f),
                B->sigma_sums / A->sigma_sums, B->fit.sigma / A->fit.sigma);
        }
        fprintf(fp, ".\n");
    }
}

/* Report: exact ties, and the realistic heads. */
static int md_ties_realistic(FILE *fp, const drift_aflab_t *L)
{
    char b1[64];
    const size_t KM = L->Ks[L->mk];
    {
        long nt = 0, conf = 0, cells = 0;
        drift_flip_ties_t T = {0, 0, 0, 0};
        for (int ki = 0; ki < L->nK; ki++)
            for (int fi = 0; fi < L->nF; fi++) {
                const drift_flipset_t *st = &L->TI[ki][fi];
                for (size_t i = 0; i < st->n; i++) conf += st->t[i].tie;
                for (int c = 0; c < st->ncfg; c++) drift_flipset_ties(&T, st, c);
                nt += (long)st->n;
                cells += (long)st->n * st->ncfg;
            }
        long dist = T.distinguished, hi = T.picked_higher, fl = T.flips;
        fprintf(fp,
            "\n**Exact ties.** %ld planted exact ties (all K and formats; %ld confirmed exact by the witness): over "
            "%ld (tie, kernel) cases the computed logits differed in %ld and the kernel picked the higher id in %ld; "
            "these are reported as ties, and the flip count is %ld.\n",
            nt, conf, cells, dist, hi, fl);
    }
    if (L->rows > 0) {
        fprintf(fp,
            "\n**Realistic heads, K = %zu, V = %ld, %ld hidden states** (rows whose computed argmax differs from the "
            "exact one; predicted = the expected number of flips, sum of Phi(-gap/sigma) with the planted sigma; last column: rows whose exact gap "
            "lies below the kernel's D_0.1%%):\n\n| format | kernel | flips | rate [95%% CI] | predicted | rows below D_0.1%% |\n"
            "|---|---|---:|---:|---:|---:|\n",
            KM, L->V, L->rows);
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[L->mk][fi];
            const drift_flipset_t *st = &L->RE[L->mk][fi];
            int cs[3] = {ks->def, ks->engine, ks->exact};
            for (int q = 0; q < 3; q++) {
                int c = cs[q];
                if (q == 1 && c == ks->def) continue;
                drift_flip_real_t R;
                drift_flipset_realistic(&R, st, c, &L->FIT[L->mk][fi][c]);
                /* an expected count of flips far below one is "below 0.001 flips", not 1.88e-166 of them */
                if (R.predicted < 1e-3)
                    snprintf(b1, sizeof b1, "%s", R.predicted == 0 ? "0" : "< 0.001");
                else
                    drift_fmt_num(b1, sizeof b1, R.predicted, "%.3g");
                fprintf(fp, "| %s | %s | %ld / %zu | %.3g [%.3g, %.3g] | %s | %ld (%.3g%%) |\n",
                    drift_format_name(ks->f), ks->k[c].name, R.flips, st->n, R.rate, R.lo, R.hi, b1, R.below_p001,
                    100.0 * R.below_p001 / st->n);
            }
        }
        /* the gap distribution in one line */
        const drift_flipset_t *st = &L->RE[L->mk][L->mf];
        double *g = malloc((st->n + 1) * sizeof *g);
        if (!g) return DRIFT_ENOMEM;
        for (size_t i = 0; i < st->n; i++) g[i] = st->t[i].rel;
        qsort(g, st->n, sizeof *g, drift_cmp_double);
        fprintf(fp,
            "\nExact top-2 gaps of the realistic rows (%s, K = %zu), relative to s: median %.3g, 10%% below %.3g, "
            "1%% below %.3g, smallest %.3g.\n",
            drift_format_name(L->MKS->f), KM, g[st->n / 2], g[st->n / 10], g[st->n / 100], g[0]);
        free(g);
    }
    return 0;
}

/* Report: the batch shape. */
static void md_batch(FILE *fp, const drift_aflab_t *L)
{
    {
        int narrow = L->MKS->f == DRIFT_BF16 || L->MKS->f == DRIFT_FP16;
        fprintf(fp,
            "\n**Batch shape.** For the LM head as a GEMM (batch x V) on %s (%d SMs), the vendor-like policy picks",
            L->dev.name, L->dev.sms);
        for (int sh = 0; sh < 2; sh++) {
            fprintf(
                fp, "%s for N = %zu:", sh ? "; and" : "", sh ? ceil_div((size_t)L->V, (size_t)L->shard) : (size_t)L->V);
            for (int b = 0; b < DRIFT_AF_NBATCH; b++) {
                const drift_polrow_t *r =
                    &L->polk[L->mk][DRIFT_POLICY_VENDOR_LIKE * 2 * DRIFT_AF_NBATCH + sh * DRIFT_AF_NBATCH + b];
                fprintf(fp, "%s `%s` (batch %ld)", b ? "," : "", r->kernel, r->batch);
            }
        }
        long ch[2][2] = {{0, 0}, {0, 0}}, n = 0; /* [logits fp32 | in the format][planted | realistic] */
        for (int o = 0; o < 2; o++)
            for (int mode = 0; mode < 2; mode++) {
                if ((mode == 1 && L->rows == 0) || (o == 1 && !narrow)) continue;
                const drift_flipset_t *st = mode ? &L->RE[L->mk][L->mf] : &L->PL[L->mk][L->mf];
                int cb[DRIFT_AF_NBATCH], q0 = DRIFT_POLICY_VENDOR_LIKE * 2 * DRIFT_AF_NBATCH + DRIFT_AF_NBATCH;
                for (int b = 0; b < DRIFT_AF_NBATCH; b++) cb[b] = L->polcfg[L->mk][L->mf][q0 + b][o];
                for (size_t i = 0; i < st->n; i++) ch[o][mode] += drift_flipset_changed(st, i, cb, DRIFT_AF_NBATCH);
                if (mode == 0) n = (long)st->n;
            }
        fprintf(fp,
            ". The batch-invariant policy always runs `tiled:128,128,32` (seq order). With the sharded shape the "
            "vendor-like argmax (%s inputs) changed with the batch size for %ld of %ld planted pairs and %ld of %ld "
            "realistic rows with fp32 logits",
            drift_format_name(L->MKS->f), ch[0][0], n, ch[0][1], L->rows);
        if (narrow)
            fprintf(fp, ", and for %ld and %ld with the logits stored in %s (the coarse logits hide the order change)",
                ch[1][0], ch[1][1], drift_format_name(L->MKS->f));
        fprintf(fp, "; batch-invariant: 0 by construction (one order for every batch). The planted pairs' gaps are "
                    "log-uniform from 1e-7 to 1 s, so they weight near-ties far more than real heads do.\n");
    }
}

/* Report: the mitigations. */
static void md_mitigations(FILE *fp, const drift_aflab_t *L)
{
    char b1[64];
    const size_t KM = L->Ks[L->mk];
    fprintf(fp,
        "\n**Mitigations, K = %zu, %s inputs** (flip rate against the exact argmax; for the tie-breaker against the "
        "exact argmax under the same rule; eps from the baseline's law (D_0.1%% = %.3g s) and its Phi fit (sigma / s = %.3g); cost ratio against the baseline: "
        "measured for CPU emulation in this run, or modelled by policy.h's roofline):\n\n"
        "| mitigation | kernel | realistic flip rate [95%% CI] | planted flip rate | changed across batch sizes | cost ratio |\n"
        "|---|---|---:|---:|---:|---:|\n",
        KM, drift_format_name(L->MKS->f), L->eps_rel[0], L->base_sigma);
    for (int m = 0; m < L->nmit; m++) {
        const drift_mit_t *P = &L->MIT[0][m], *R = &L->MIT[1][m];
        char rr[96] = "-", ch[64] = "-";
        if (L->rows > 0 && R->flips >= 0) {
            double lo, hi;
            if (drift_wilson(&lo, &hi, R->flips, R->n, DRIFT_Z95)) lo = hi = NAN;
            snprintf(rr, sizeof rr, "%.3g [%.3g, %.3g]", (double)R->flips / R->n, lo, hi);
        }
        if (P->changed >= 0) snprintf(ch, sizeof ch, "%ld / %ld planted%s", P->changed, P->n, L->rows > 0 ? "" : "");
        if (P->changed >= 0 && L->rows > 0)
            snprintf(ch + strlen(ch), sizeof ch - strlen(ch), ", %ld / %ld realistic", R->changed, R->n);
        drift_fmt_num(b1, sizeof b1, P->flips >= 0 ? (double)P->flips / P->n : NAN, "%.3g");
        fprintf(fp, "| %s | %s | %s | %s | %s | %.3g (%s) |\n", P->name, L->MKS->k[P->cfg].name, rr, b1, ch, P->cost,
            P->cost_src);
    }
    fprintf(fp,
        "\nCosts are wall-clock and not reproducible (data/argmax_flip_timing.csv); on a GPU the ratios differ "
        "(tensor cores are an order of magnitude faster than fp32 FMA, and an exact dot product has no hardware).\n");
}

/* Report: the takeaway. */
static void md_takeaway(FILE *fp, const drift_aflab_t *L)
{
    const size_t KM = L->Ks[L->mk];
    {
        const drift_kset_t *k0 = &L->KS[L->mk][0];
        double lo = INFINITY, hi = 0;
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_flip_fit_t *F = &L->FIT[L->mk][fi][L->KS[L->mk][fi].def];
            lo = fmin(lo, F->p001);
            hi = fmax(hi, F->p001);
        }
        fprintf(fp, "\n**Takeaway.**\n\n");
        fprintf(
            fp, "- With the default kernel (`%s`) at K = %zu, the critical gap D_0.1%% is", k0->k[k0->def].name, KM);
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_flip_fit_t *F = &L->FIT[L->mk][fi][L->KS[L->mk][fi].def];
            fprintf(fp, "%s %s %.3g s (D_50 = %.3g s)", fi ? (fi + 1 == L->nF ? " and" : ",") : "",
                drift_format_name(L->KS[L->mk][fi].f), F->p001, F->half);
        }
        fprintf(fp,
            ": within a factor %.2f of each other. Against exact(rounded inputs), with fp32 accumulation the input "
            "format hardly matters, because products of narrow inputs are exact in fp32 and only the accumulation "
            "rounds.",
            hi / lo);
        if (L->rows > 0 && L->fu >= 0 && L->ref_in[L->mk][L->mf] >= 0)
            fprintf(fp,
                " Against the unrounded fp32 inputs it matters most: rounding h and W to %s alone changes the exact "
                "argmax of %ld of %ld realistic rows, while the default kernel adds %ld flips against exact(rounded).",
                drift_format_name(L->MKS->f), L->ref_in[L->mk][L->mf], L->rows,
                drift_flipset_flips(&L->RE[L->mk][L->mf], L->MKS->def));
        fprintf(fp, "\n");
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[L->mk][fi];
            if (ks->engine == ks->def || (ks->f != DRIFT_BF16 && ks->f != DRIFT_FP16)) continue;
            const drift_flip_laws_t *E = &L->LAW[L->mk][fi][ks->engine];
            const drift_flip_fit_t *D = &L->FIT[L->mk][fi][ks->def];
            fprintf(fp,
                "- Logits stored in %s (`%s`): the mechanism (output rounding on top of accumulation noise) implies "
                "the %s law; fitted by it, D_0.1%% = %.3g s = %.2g %s ulps, %.0fx the default kernel's. Against the "
                "Gaussian curve the %s law leads by %.1f in log-likelihood at this seed (power %.3g over %ld pairs, "
                "%d informative): %s; which law the data prefer is not stable across seeds (the seeds table), "
                "so the law is the mechanism's, not a finding of the fit.\n",
                drift_format_name(ks->f), ks->k[ks->engine].name, drift_fliplaw_name(E->implied), E->d001, E->d001_ulp,
                drift_format_name(ks->k[ks->engine].c.out), E->d001 / D->p001, drift_fliplaw_name(E->implied),
                E->choice.dloglik, E->choice.power_a, E->pairs, E->choice.informative,
                E->choice.decided ? (E->choice.dloglik > 0 ? "the data decide for it" : "the data decide against it")
                                  : "the design cannot tell the two apart at this size");
        }
        if (L->MKS->tc32 >= 0) {
            const drift_flip_fit_t *T = &L->FIT[L->mk][L->mf][L->MKS->tc32];
            fprintf(fp,
                "- Tensor cores with fp32 logits (`%s`): sigma / s = %.3g, %.2fx the partial-sum prediction; that "
                "prediction treats every rounding as unbiased and independent, while the tensor-core model truncates "
                "(rounds toward zero) both the aligned terms and each block's result - biased errors the "
                "prediction leaves out (a plausible source of the excess, not one this run isolates).\n",
                L->MKS->k[L->MKS->tc32].name, T->fit.sigma, T->fit.sigma / T->sigma_sums);
        }
        {
            const drift_flip_laws_t *X = &L->LAW[L->mk][L->mf][L->MKS->exact];
            const drift_fliplaw_fit_t *T = &X->fit[DRIFT_FLIPLAW_TRIANGLE];
            if (T->status == DRIFT_FIT_OK)
                fprintf(fp,
                    "- Even the exact LM head, its logits rounded once to fp32 (`%s`), flips - but only below one fp32 "
                    "ulp of the top logit: two logits closer than that round to the same value and the tie goes to "
                    "the lower id, P = 1/2 (1 - D/q) (fitted scale kappa = %.3g [%.3g, %.3g], 1 predicted); D_0.1%% = "
                    "%.3g s = %.3g ulps.\n",
                    L->MKS->k[L->MKS->exact].name, T->theta, T->lo, T->hi, X->d001, X->d001_ulp);
        }
        const drift_flip_fit_t *D0 = &L->FIT[L->mk][L->mf][L->MKS->def];
        fprintf(fp,
            "- The random-rounding model in its norm form, sigma = c sqrt(K) u ||h||_rms ||w1 - w2|| with c = %.3f "
            "for `%s`, predicts sigma / s = %.3g; the fit gives %.3g (%.2fx). The same model applied to the kernel's "
            "actual partial sums predicts %.3g (%.2fx): a top logit's partial sums drift towards it instead of "
            "wandering, and that drift, not the random walk, sets the noise of a top-1/top-2 comparison.\n",
            drift_flip_c(L->MKS->k[L->MKS->def].nu), L->MKS->k[L->MKS->def].name, D0->sigma_pred, D0->fit.sigma,
            D0->fit.sigma / D0->sigma_pred, D0->sigma_sums, D0->fit.sigma / D0->sigma_sums);
        if (L->rows > 0) {
            const drift_flipset_t *st = &L->RE[L->mk][L->mf];
            long kd = drift_flipset_flips(st, L->MKS->def), ke = drift_flipset_flips(st, L->MKS->engine);
            fprintf(fp,
                "- On realistic heads (V = %ld, K = %zu, %s) %ld of %ld rows flipped with the default kernel and %ld "
                "with `%s`: for an isolated LM head, where the logits are rounded matters far more than how the sum was ordered "
                "(in a whole model the order changes hidden states too, and greedy_divergence and real_gaps show it "
                "changing text).\n",
                L->V, KM, drift_format_name(L->MKS->f), kd, L->rows, ke, L->MKS->k[L->MKS->engine].name);
        }
    }
}

/* The law each kernel's mechanism implies, all three fitted (fliplaw.h, flipfit.h). */
static void write_laws(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, F_LAWS, "table",
        "planted pairs: the flip law of each kernel's mechanism (gauss: accumulation noise; triangle: "
        "output rounding, 1/2 (1 - D/q)+; conv: both) fitted by maximum likelihood; q = the logit format's spacing at the exact top logit / s");
    drift_out_meta(o, F_LAWS, "choice",
        "dloglik = loglik(implied) - loglik(rival) (one parameter each); "
        "power = expected log-likelihood ratio if the implied law were true; decided = |dloglik| >= 3 and power >= 3 (a likelihood ratio of 20)");
    drift_out_meta(o, F_LAWS, "gaps",
        "gap_p01 / gap_p001: the gaps at which the implied law's flip probability is 1%% / 0.1%%, relative to s and in output ulps (q at the median)");
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                const drift_flip_laws_t *W = &L->LAW[ki][fi][c];
                const drift_fliplaw_fit_t *G = &W->fit[DRIFT_FLIPLAW_GAUSS], *T = &W->fit[DRIFT_FLIPLAW_TRIANGLE],
                                          *C = &W->fit[DRIFT_FLIPLAW_CONV];
                drift_cell_t cells[NCOL(C_LAWS)];
                int n = head(cells, L->Ks[ki], ks, c);
                cells[n++] = DRIFT_TXT(drift_fliplaw_name(W->implied));
                cells[n++] = DRIFT_INT(W->pairs), cells[n++] = DRIFT_INT(W->flips);
                cells[n++] = DRIFT_TXT(drift_fit_status_name(G->status)), cells[n++] = DRIFT_NUM(G->theta);
                cells[n++] = DRIFT_NUM(G->loglik), cells[n++] = DRIFT_NUM(G->p_value);
                cells[n++] = DRIFT_TXT(drift_fit_status_name(T->status)), cells[n++] = DRIFT_NUM(T->theta);
                cells[n++] = DRIFT_NUM(T->loglik), cells[n++] = DRIFT_NUM(T->p_value);
                cells[n++] = DRIFT_TXT(drift_fit_status_name(C->status)), cells[n++] = DRIFT_NUM(C->theta);
                cells[n++] = DRIFT_NUM(C->loglik), cells[n++] = DRIFT_NUM(C->p_value);
                cells[n++] = DRIFT_TXT(drift_fliplaw_name(W->rival)), cells[n++] = DRIFT_NUM(W->choice.dloglik);
                cells[n++] = DRIFT_NUM(W->choice.power_a), cells[n++] = DRIFT_INT(W->choice.informative);
                cells[n++] = DRIFT_INT(W->choice.decided), cells[n++] = DRIFT_NUM(W->q_med);
                cells[n++] = DRIFT_NUM(W->d01), cells[n++] = DRIFT_NUM(W->d001);
                cells[n++] = DRIFT_NUM(W->d01_ulp), cells[n++] = DRIFT_NUM(W->d001_ulp);
                drift_row_cells(o, F_LAWS, cells, n);
            }
        }
}

static void write_refs(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, F_REFS, "table",
        "realistic rows against two references: exact(rounded inputs) and exact(unrounded inputs) (the fp32 master values: "
        "the fp32 format's exact argmax); -1 = not available (no fp32 format in the run, or own-format accumulation, which the pruning cannot bound)");
    drift_out_meta(o, F_REFS, "columns",
        "input_rounding_flips: rows whose exact argmax changes when the inputs are rounded to the format; "
        "flips_vs_exact_rounded: the kernel's argmax against exact(rounded); accumulation_flips: "
        "the kernel's partner (same accumulation, logits kept in the accumulator) against exact(rounded); output_rounding_changes: "
        "the kernel's argmax against its partner's (for the exact head: against exact(rounded)); flips_vs_exact_unrounded: "
        "the kernel against exact(unrounded). Exact ties are never flips.");
    if (L->rows <= 0) return;
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                drift_cell_t cells[NCOL(C_REFS)];
                int n = head(cells, L->Ks[ki], ks, c);
                cells[n++] = DRIFT_INT(L->rows), cells[n++] = DRIFT_INT(L->ref_in[ki][fi]);
                cells[n++] = DRIFT_INT(L->real_ok[ki][fi][c] ? drift_flipset_flips(&L->RE[ki][fi], c) : -1);
                cells[n++] = DRIFT_INT(L->ref_acc[ki][fi][c]), cells[n++] = DRIFT_INT(L->ref_out[ki][fi][c]);
                cells[n++] = DRIFT_INT(L->ref_tot[ki][fi][c]);
                drift_row_cells(o, F_REFS, cells, n);
            }
        }
}

/* Report: critical gaps from the law of each mechanism. */
static void md_laws(FILE *fp, const drift_aflab_t *L)
{
    const size_t KM = L->Ks[L->mk];
    fprintf(fp,
        "\n**Critical gaps from the law of each mechanism, K = %zu** (planted pairs). Accumulation noise flips with "
        "P = Phi(-D/sigma); storing a logit (rounding it once) flips only when both logits round to one value, "
        "P = 1/2 (1 - D/q)+ with q the logit format's spacing at the top logit - exactly 0 beyond one ulp; with "
        "both, their convolution (lib/core/fliplaw.h). D_1%% and D_0.1%% are taken from the law the mechanism "
        "implies, fitted by maximum likelihood; \"vs rival\" is its log-likelihood lead over the other law "
        "(Gaussian, or the triangle for a Gaussian mechanism) with the expected lead if it were true (power; "
        "decided when both reach log 20 = 3.0):\n\n"
        "| format | kernel | law | parameter [95%% CI] | D_1%% / s | D_0.1%% / s | D_0.1%% in logit ulps | vs rival: lead (power), pairs, informative |\n"
        "|---|---|---|---:|---:|---:|---:|---:|\n",
        KM);
    for (int fi = 0; fi < L->nF; fi++) {
        const drift_kset_t *ks = &L->KS[L->mk][fi];
        int named[4], nn = drift_kset_named(named, ks);
        for (int j = 0; j < nn; j++) {
            int c = named[j];
            const drift_flip_laws_t *W = &L->LAW[L->mk][fi][c];
            const drift_fliplaw_fit_t *F = &W->fit[W->implied];
            const char *pn = W->implied == DRIFT_FLIPLAW_TRIANGLE ? "kappa" : "sigma / s";
            char b1[64], b2[64], b3[64], b4[64];
            drift_fmt_num(b1, sizeof b1, W->d01, "%.3g");
            drift_fmt_num(b2, sizeof b2, W->d001, "%.3g");
            drift_fmt_num(b3, sizeof b3, W->d001_ulp, "%.3g");
            drift_fmt_num(b4, sizeof b4, W->choice.power_a, "%.3g");
            const char *up = F->status == DRIFT_FIT_NO_FLIPS ? "< " : "";
            fprintf(fp, "| %s | %s | %s | %s %s%.3g [%.3g, %.3g] | %s%s | %s%s | %s%s | %+.1f (%s), %ld, %d%s |\n",
                drift_format_name(ks->f), ks->k[c].name, drift_fliplaw_name(W->implied), pn, up,
                F->status == DRIFT_FIT_NO_FLIPS ? F->hi : F->theta, F->lo, F->hi, up, b1, up, b2, up, b3,
                W->choice.dloglik, b4, W->pairs, W->choice.informative,
                W->choice.decided ? ", decided" : ", not decided");
        }
    }
}

/* Report: realistic rows against the two references. */
static void md_refs(FILE *fp, const drift_aflab_t *L)
{
    if (L->rows <= 0 || L->fu < 0) return;
    const size_t KM = L->Ks[L->mk];
    fprintf(fp,
        "\n**Two references, realistic heads, K = %zu** (%ld hidden states; exact(unrounded) = the exact argmax of the "
        "fp32 master h and W, exact(rounded) = that of the inputs rounded to the format; a kernel's accumulation "
        "flips are those of the same kernel with its logits kept in the accumulator, its output-rounding changes "
        "are where storing the logits changed its argmax):\n\n"
        "| format | kernel | input rounding | accumulation | output rounding | total vs exact(unrounded) |\n|---|---|---:|---:|---:|---:|\n",
        KM, L->rows);
    for (int fi = 0; fi < L->nF; fi++) {
        const drift_kset_t *ks = &L->KS[L->mk][fi];
        int named[4], nn = drift_kset_named(named, ks);
        for (int j = 0; j < nn; j++) {
            int c = named[j];
            if (L->ref_tot[L->mk][fi][c] < 0) continue;
            fprintf(fp, "| %s | %s | %ld | %ld | %ld | %ld |\n", drift_format_name(ks->f), ks->k[c].name,
                L->ref_in[L->mk][fi], L->ref_acc[L->mk][fi][c], L->ref_out[L->mk][fi][c], L->ref_tot[L->mk][fi][c]);
        }
    }
    fprintf(fp,
        "\nThe columns count rows, not an additive budget: a row can flip under two mechanisms, and one can undo "
        "another.\n");
}

/* The headline numbers of a finished run (largest K, bf16 or the first narrow format). */
void drift_aflab_rob_collect(drift_aflab_t *dst, const drift_aflab_t *L)
{
    if (dst->nROB >= 9) return;
    int i = dst->nROB++;
    const drift_kset_t *ks = L->MKS;
    const drift_flip_fit_t *D = &L->FIT[L->mk][L->mf][ks->def];
    const drift_flip_laws_t *E = &L->LAW[L->mk][L->mf][ks->engine], *X = &L->LAW[L->mk][L->mf][ks->exact];
    const drift_fliplaw_fit_t *T = &X->fit[DRIFT_FLIPLAW_TRIANGLE];
    dst->ROB[i].seed = L->cli.seed;
    dst->ROB[i].ok = 1;
    dst->ROB[i].def_sigma = D->fit.status == DRIFT_FIT_OK ? D->fit.sigma : NAN;
    dst->ROB[i].def_p001 = D->p001;
    dst->ROB[i].eng_d001 = E->d001, dst->ROB[i].eng_d001_ulp = E->d001_ulp;
    dst->ROB[i].eng_dll = E->choice.dloglik, dst->ROB[i].eng_power = E->choice.power_a;
    dst->ROB[i].eng_decided = E->choice.decided;
    dst->ROB[i].kap = T->theta, dst->ROB[i].kap_lo = T->lo, dst->ROB[i].kap_hi = T->hi;
    dst->ROB[i].ex_d001_ulp = X->d001_ulp;
    dst->ROB[i].real_def = L->rows > 0 ? drift_flipset_flips(&L->RE[L->mk][L->mf], ks->def) : -1;
    dst->ROB[i].real_eng = L->rows > 0 ? drift_flipset_flips(&L->RE[L->mk][L->mf], ks->engine) : -1;
    dst->ROB[i].in_flips = L->ref_in[L->mk][L->mf];
}

/* Report: the headline at every seed, and only what holds at all of them. */
static void md_robust(FILE *fp, const drift_aflab_t *L)
{
    if (L->nROB < 2) return;
    const drift_kset_t *ks = L->MKS;
    fprintf(fp,
        "\n**The headline at %d seeds** (K = %zu, %s inputs; seeds other than %llu rerun the planted pairs and the "
        "realistic rows at this K only, without the GEMM policies):\n\n"
        "| seed | `%s`: sigma / s | D_0.1%% / s | `%s`: law lead over Gaussian (power) | D_0.1%% in %s ulps | exact head: "
        "kappa [95%% CI] | realistic flips: default / stored logits | input rounding alone |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        L->nROB, L->Ks[L->mk], drift_format_name(ks->f), (unsigned long long)L->ROB[0].seed, ks->k[ks->def].name,
        ks->k[ks->engine].name, drift_format_name(ks->k[ks->engine].c.out));
    int all_dec = 1, all_in = 1, all_eng_gt = 1, all_kap = 1;
    double smin = INFINITY, smax = 0, umin = INFINITY, umax = 0;
    long inmin = 1L << 60, inmax = -1;
    for (int i = 0; i < L->nROB; i++) {
        const struct drift_afrob *r = &L->ROB[i];
        fprintf(fp, "| %llu | %.3g | %.3g | %+.1f (%.3g)%s | %.3g | %.3g [%.3g, %.3g] | %ld / %ld | %ld |\n",
            (unsigned long long)r->seed, r->def_sigma, r->def_p001, r->eng_dll, r->eng_power,
            r->eng_decided ? ", decided" : "", r->eng_d001_ulp, r->kap, r->kap_lo, r->kap_hi, r->real_def, r->real_eng,
            r->in_flips);
        all_dec &= r->eng_decided && r->eng_dll > 0;
        all_in &= r->in_flips > r->real_def;
        all_eng_gt &= r->real_eng > r->real_def;
        all_kap &= r->kap_lo <= 1 && 1 <= r->kap_hi;
        smin = fmin(smin, r->def_sigma), smax = fmax(smax, r->def_sigma);
        umin = fmin(umin, r->eng_d001_ulp), umax = fmax(umax, r->eng_d001_ulp);
        inmin = r->in_flips < inmin ? r->in_flips : inmin, inmax = r->in_flips > inmax ? r->in_flips : inmax;
    }
    fprintf(fp,
        "\nAt every seed: the default kernel's sigma / s lies in [%.3g, %.3g]; storing the logits in %s puts "
        "D_0.1%% at %.3g to %.3g ulps%s; ",
        smin, smax, drift_format_name(ks->k[ks->engine].c.out), umin, umax,
        umax <= 1 ? ", never beyond one ulp"
                  : " (beyond one ulp only where the fitted accumulation noise widens the triangle)");
    if (all_dec)
        fprintf(fp, "the %s law beats the Gaussian curve decisively at every seed; ",
            drift_fliplaw_name(L->LAW[L->mk][L->mf][ks->engine].implied));
    else
        fprintf(fp,
            "the choice between the %s law and the Gaussian curve is not decided at every seed (no claim is made); ",
            drift_fliplaw_name(L->LAW[L->mk][L->mf][ks->engine].implied));
    if (all_kap)
        fprintf(
            fp, "the exact head's kappa interval holds 1 (the triangle with the known fp32 spacing) at every seed; ");
    if (all_in)
        fprintf(fp,
            "rounding the inputs alone changes the exact argmax of %ld to %ld of %ld realistic rows, "
            "more than the default kernel's accumulation flips at every seed; ",
            inmin, inmax, L->rows);
    else
        fprintf(fp,
            "input rounding alone changes the exact argmax of %ld to %ld of %ld realistic rows (not more than the default kernel's flips at every seed); ",
            inmin, inmax, L->rows);
    fprintf(fp, "%s.\n",
        all_eng_gt ? "stored logits flip more realistic rows than fp32 logits at every seed"
                   : "stored logits do not flip more realistic rows than fp32 logits at every seed");
}

/* The summary for people. */
void drift_aflab_summary(FILE *fp, const drift_aflab_t *L)
{
    const size_t KM = L->Ks[L->mk];
    fputc('\n', fp);
    fprintf(fp, "critical gaps at K = %zu (relative to the logit scale s; planted pairs, Phi fit):\n", KM);
    fprintf(fp, "%-6s %-24s %10s %8s %10s %10s %10s %10s\n", "format", "kernel", "sigma/s", "fit p", "norm/s", "sums/s",
        "D_50/s", "D_0.1%/s");
    for (int pass = 0; pass < 2; pass++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[L->mk][fi];
            int c = pass ? ks->engine : ks->def;
            if (pass && c == ks->def) continue;
            const drift_flip_fit_t *F = &L->FIT[L->mk][fi][c];
            /* D_0.1% from the law the kernel's mechanism implies, as the report and its
                 * summary give it (the Phi fit's 3.09 sigma only for a Gaussian mechanism) */
            const drift_flip_laws_t *W = &L->LAW[L->mk][fi][c];
            int gauss = W->implied == DRIFT_FLIPLAW_GAUSS || !isfinite(W->d001);
            fprintf(fp, "%-6s %-24s %10.3g %8.2g %10.3g %10.3g %10.3g %10.3g%s%s\n", drift_format_name(ks->f),
                ks->k[c].name, F->fit.status == DRIFT_FIT_OK ? F->fit.sigma : F->fit.sigma_hi, F->fit.p_value,
                F->sigma_pred, F->sigma_sums, F->half, gauss ? F->p001 : W->d001,
                F->fit.status == DRIFT_FIT_OK ? "" : " (upper bounds)",
                gauss ? ""
                      : (W->implied == DRIFT_FLIPLAW_CONV ? " (D_0.1% from the conv law)"
                                                          : " (D_0.1% from the triangle law)"));
        }
    if (L->rows > 0) {
        fprintf(fp, "\nrealistic heads (K = %zu, V = %ld, %ld rows): flips", KM, L->V, L->rows);
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_kset_t *ks = &L->KS[L->mk][fi];
            const drift_flipset_t *st = &L->RE[L->mk][fi];
            long kd = drift_flipset_flips(st, ks->def), ke = drift_flipset_flips(st, ks->engine);
            fprintf(fp, "%s %s %ld", fi ? ";" : "", drift_format_name(ks->f), kd);
            if (ks->engine != ks->def) fprintf(fp, " (%ld with %s)", ke, ks->k[ks->engine].name);
        }
        fprintf(fp, "\n");
    }
    fprintf(fp, "\nmitigations (K = %zu, %s):\n", KM, drift_format_name(L->MKS->f));
    for (int m = 0; m < L->nmit; m++) {
        const drift_mit_t *P = &L->MIT[0][m], *R = &L->MIT[1][m];
        fprintf(fp, "  %-62s planted %5.3f", P->name, P->flips >= 0 ? (double)P->flips / P->n : NAN);
        if (L->rows > 0) fprintf(fp, "  realistic %6.4f", R->flips >= 0 ? (double)R->flips / R->n : NAN);
        fprintf(fp, "  cost x%.3g\n", P->cost);
    }
    fprintf(fp,
        "\nWhat you just saw: two logits closer than the LM head's rounding noise sigma swap places at random;\n"
        "the flip probability falls like Phi(-gap/sigma), from a coin toss at gap 0 to 0.1%% at 3.09 sigma. With fp32\n"
        "accumulation sigma is %.2g of the logit scale at K = %zu (%s, %s) whatever the input format (narrow products\n"
        "are exact in fp32), it grows like sqrt(K), and tree-like orders shrink it. Storing the logits in bf16 or fp16\n"
        "coarsens everything to the output grid (ties broken by token id) and makes flips common on realistic heads;\n"
        "fp32 logits or an exact LM head remove almost all of them, a batch-invariant kernel makes the choice\n"
        "independent of the batch but not correct, and a gap threshold only moves the coin toss to the threshold.\n"
        "Planted %.1f s, realistic %.1f s. Files: %s/argmax_flip*.csv, argmax_flip.md; plots: ./lab plot argmax_flip%s%s.\n",
        L->FIT[L->mk][L->mf][L->MKS->def].fit.sigma, KM, drift_format_name(L->MKS->f), L->MKS->k[L->MKS->def].name,
        L->t_planted, L->t_real, L->cli.out_dir, strcmp(L->cli.out_dir, "data") ? " --data " : "",
        strcmp(L->cli.out_dir, "data") ? L->cli.out_dir : "");
}

/* Every output file, written only after everything is computed (temporary file + rename). */
int drift_aflab_write(const drift_aflab_t *L)
{
    const drift_table_spec_t tables[NTABLES] = {{".csv", NULL, 0, C_BINS, NCOL(C_BINS)},
        {"_fit.csv", NULL, 0, C_FIT, NCOL(C_FIT)}, {"_ties.csv", NULL, 0, C_TIES, NCOL(C_TIES)},
        {"_realistic.csv", NULL, 0, C_REAL, NCOL(C_REAL)}, {"_gaps.csv", NULL, 0, C_GAPS, NCOL(C_GAPS)},
        {"_below.csv", NULL, 0, C_BELOW, NCOL(C_BELOW)}, {"_batch.csv", NULL, 0, C_BATCH, NCOL(C_BATCH)},
        {"_mitigations.csv", NULL, 0, C_MIT, NCOL(C_MIT)}, {"_timing.csv", NULL, 0, C_TIMING, NCOL(C_TIMING)},
        {L->trials_csv ? "_trials.csv" : NULL /* optional */, NULL, 0, C_TRIALS, NCOL(C_TRIALS)},
        {"_laws.csv", NULL, 0, C_LAWS, NCOL(C_LAWS)}, {"_refs.csv", NULL, 0, C_REFS, NCOL(C_REFS)}};
    drift_out_t out;
    drift_out_open(&out, &L->cli, tables, NTABLES, 1);
    write_bins(&out, L);
    write_fits(&out, L);
    write_ties(&out, L);
    write_realistic(&out, L);
    write_gaps(&out, L);
    write_batch(&out, L);
    write_mitigations(&out, L);
    write_timing(&out, L);
    write_trials(&out, L);
    write_laws(&out, L);
    write_refs(&out, L);
    /* the report fragment: every number comes from the arrays written above */
    FILE *md = out.md;
    md_critical(md, L);
    md_laws(md, L);
    md_kernels(md, L);
    if (md_ties_realistic(md, L)) return DRIFT_ENOMEM;
    md_refs(md, L);
    md_batch(md, L);
    md_mitigations(md, L);
    md_takeaway(md, L);
    md_robust(md, L);
    drift_out_commit(&out);
    return 0;
}
