/* argmax_tables.c — the CSV tables of the argmax-flip experiment (argmax_lab.h), declared once
 * (output.h) and written from a finished run. */
#include <math.h>
#include <string.h>

#include "argmax_lab.h"
#include "drift.h"
#include "output.h"
#include "stats.h"

size_t drift_aflab_sharded_n(const drift_aflab_t *L) { return (size_t)(L->V / L->shard + (L->V % L->shard != 0)); }

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
    DRIFT_C_NUM("gap_p001_ulp_out", "%.4g"), DRIFT_C_TEXT("tag")};
static const drift_col_t C_REFS[] = {HEAD, DRIFT_C_INT("rows"), DRIFT_C_INT("input_rounding_flips"),
    DRIFT_C_INT("flips_vs_exact_rounded"), DRIFT_C_INT("accumulation_flips"), DRIFT_C_INT("output_rounding_changes"),
    DRIFT_C_INT("flips_vs_exact_unrounded")};
#undef HEAD
#define NCOL(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The "K, format, kernel, role" cells that open every per-kernel row. */
#define HEAD_CELLS(K, ks, c)                                                         \
    DRIFT_INT(K), DRIFT_TXT(drift_format_name((ks)->f)), DRIFT_TXT((ks)->k[c].name), \
        DRIFT_TXT(drift_role_name[(ks)->k[c].role])
/* Every (K, format, kernel) of the run, with ks the kernel set and cl the cell. */
#define EACH_KERNEL(L)                                                          \
    for (int ki = 0; ki < (L)->nKs; ki++)                                       \
        for (int fi = 0; fi < (L)->nformats; fi++)                              \
            for (const drift_af_cell_t *cl = &(L)->cell[ki][fi]; cl; cl = NULL) \
                for (const drift_kset_t *ks = &cl->kernels; ks; ks = NULL)      \
                    for (int c = 0; c < ks->n; c++)

/* Planted pairs: flip rate per gap bin. */
static void write_bins(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AF_BINS, "table",
        "planted pairs: flip rate per exact-gap bin (relative gap = exact gap / s, s = ||h||_2/sqrt(K))");
    drift_out_meta(o, AF_BINS, "planted",
        "%d targets 1e-7..1 (%d per decade) x %ld pairs per K and format; V = %ld for the top-logit level", L->ntargets,
        DRIFT_AF_PER_DECADE, L->reps, L->V);
    drift_out_meta(o, AF_BINS, "flip",
        "computed argmax (equal computed logits: the lower id) != exact argmax; exact ties are never flips (argmax_flip_ties.csv)");
    drift_out_meta(o, AF_BINS, "interval", "Wilson 95%% score interval");
    drift_out_meta(o, AF_BINS, "ulp", "gap_ulp_in: mean gap / ulp of the input format at |exact top logit|");
    EACH_KERNEL(L)
    for (int b = 0; b < L->gap_bins.nbins; b++) {
        const drift_flip_fit_t *F = &cl->fits[c];
        drift_flip_bin_t B;
        if (drift_flipset_bin(&B, &cl->planted, c, &L->gap_bins, b, ks->f)) drift_die("cannot bin the flips");
        double ctr = drift_logbins_center(&L->gap_bins, b);
        drift_row(o, AF_BINS, HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_TXT(drift_kset_tag(ks, c)), DRIFT_INT(b),
            DRIFT_NUM(L->gap_bins.edge[b]), DRIFT_NUM(L->gap_bins.edge[b + 1]), DRIFT_NUM(ctr), DRIFT_NUM(B.gap_abs),
            DRIFT_NUM(B.gap_ulp), DRIFT_INT(B.n), DRIFT_INT(B.k), DRIFT_NUM(B.rate), DRIFT_NUM(B.lo), DRIFT_NUM(B.hi),
            DRIFT_NUM(F->fit.status == DRIFT_FIT_OK ? drift_phi(-ctr / F->fit.sigma) : NAN));
    }
}

/* The sigma fits, predictions and critical gaps. */
static void write_fits(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AF_FIT, "table",
        "maximum-likelihood sigma of P(flip | gap D) = Phi(-D/sigma), D = exact gap / s, on the planted pairs");
    drift_out_meta(
        o, AF_FIT, "interval", "sigma_lo, sigma_hi: profile-likelihood 95%% interval (log-likelihood drop 1.92073)");
    drift_out_meta(o, AF_FIT, "goodness",
        "g2: binned deviance 2 sum[O ln(O/E) + (n-O) ln((n-O)/(n-E))] over the %d gap bins, E = sum of fitted Phi; "
        "df = bins with pairs - 1; p = P(chi2_df > g2)",
        L->ntargets);
    drift_out_meta(o, AF_FIT, "prediction",
        "sigma_pred (norm form) = RMS_i sqrt(c^2 K u_acc^2 P2_i + [logits stored narrower] 2 u_out^2 l1_i^2/(8 ln 2)) / s_i, "
        "c = sqrt(nu/(8 ln 2)), P2 = sum h^2 (w1^2 + w2^2) (= ||h||_rms^2 ||w1-w2||^2 in expectation); "
        "sigma_sums = the same random-rounding model on the kernel's actual partial sums (ulp^2/12 per rounding, summed over the reduction tree); see argmax_flip.c");
    drift_out_meta(o, AF_FIT, "critical",
        "gap_half: P(flip) = 25%% (half the coin-toss limit, the '50%%' critical gap; P = 50%% only at gap 0); gap_p001: "
        "P(flip) = 0.1%%. From sigma when status = ok, from sigma_hi (upper bounds) otherwise. _rel: / s; _abs: x median s; _ulp_in/_ulp_out: "
        "/ ulp of the input/logit format at the median |top logit|");
    EACH_KERNEL(L)
    {
        const drift_flip_fit_t *F = &cl->fits[c];
        const drift_recipe_t *cf = &ks->k[c].c;
        char ord[DRIFT_ORDER_SPEC_MAX];
        drift_order_print(ord, sizeof ord, &cf->order);
        double uin = drift_ulp(F->l1_med, ks->f), uout = drift_ulp(F->l1_med, cf->out), s = F->s_med;
        drift_row(o, AF_FIT, HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_TXT(drift_kset_tag(ks, c)),
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
    drift_out_meta(o, AF_TIES, "table",
        "planted exact ties (drift_plant_tie, 16 swapped channel pairs): the exact logits are equal, the terms sit at different positions");
    drift_out_meta(o, AF_TIES, "columns",
        "distinguished: computed logits differ; picked_higher_id: the computed argmax is the higher id (a tie resolved by the "
        "numerics, not a flip); flips: always 0 by definition");
    EACH_KERNEL(L)
    {
        drift_flip_ties_t T = {0, 0, 0, 0};
        drift_flipset_ties(&T, &cl->ties, c);
        drift_row(o, AF_TIES, HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_INT(cl->ties.n), DRIFT_INT(T.confirmed),
            DRIFT_INT(T.distinguished), DRIFT_INT(T.picked_higher), DRIFT_INT(T.flips));
    }
}

/* A count of rows with its fraction and Wilson 95% interval. */
#define COUNT_CELLS(k, n) \
    DRIFT_INT(k), DRIFT_NUM((double)(k) / (n)), DRIFT_NUM(wilson_lo(k, n)), DRIFT_NUM(wilson_hi(k, n))
static double wilson_lo(long k, size_t n)
{
    double lo, hi;
    return drift_wilson(&lo, &hi, k, (long)n, DRIFT_Z95) ? NAN : lo;
}
static double wilson_hi(long k, size_t n)
{
    double lo, hi;
    return drift_wilson(&lo, &hi, k, (long)n, DRIFT_Z95) ? NAN : hi;
}

/* The realistic tables: per (K, format, kernel) the pruning could bound, the flip fraction
 * (AF_REAL) and the rows below each critical gap (AF_BELOW). */
static void write_realistic(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AF_REAL, "table",
        "realistic heads: fraction of hidden states whose computed argmax differs from the exact argmax");
    drift_out_meta(o, AF_REAL, "head",
        "V = %ld tokens, weights N(0, 1/K) (fp32 master), hidden states N(0,1) with max(1, "
        "K/512) outlier channels of magnitude 20..100; %ld hidden states per K",
        L->V, L->rows);
    drift_out_meta(o, AF_REAL, "pruning",
        "rigorous (gen_logits.h): stage1_mean = tokens surviving the first stage, "
        "eval_mean = tokens whose logit this kernel computed; own-format accumulation is left out (no finite bound)");
    drift_out_meta(o, AF_REAL, "predicted",
        "sum over rows of Phi(-rel_gap/sigma_rel) with sigma_rel from the planted fit of the same (K, format, kernel)");
    drift_out_meta(o, AF_BELOW, "table",
        "realistic heads: fraction of rows whose exact relative gap lies below each kernel's critical gaps (from the planted fits)");
    if (L->rows <= 0) return;
    EACH_KERNEL(L)
    {
        const drift_flipset_t *st = &cl->realistic;
        if (!cl->realistic_ok[c]) continue;
        double s1 = 0;
        long nt = 0;
        for (size_t i = 0; i < st->n; i++) s1 += (double)st->nstage1[i], nt += st->t[i].tie;
        const drift_flip_fit_t *F = &cl->fits[c];
        drift_flip_real_t R;
        drift_flipset_realistic(&R, st, c, F);
        drift_row(o, AF_REAL, HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_INT(st->n), DRIFT_INT(nt), DRIFT_INT(R.flips),
            DRIFT_NUM(R.rate), DRIFT_NUM(R.lo), DRIFT_NUM(R.hi), DRIFT_NUM(R.predicted), DRIFT_NUM(s1 / (double)st->n),
            DRIFT_NUM(R.eval_mean));
        drift_row(o, AF_BELOW, HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_NUM(F->half), COUNT_CELLS(R.below_half, st->n),
            DRIFT_NUM(F->p001), COUNT_CELLS(R.below_p001, st->n));
    }
}

/* Realistic heads: the distribution of exact top-2 gaps. */
static void write_gaps(drift_out_t *o, const drift_aflab_t *L)
{
    drift_logbins_t gb;
    if (drift_logbins_init(&gb, 1e-9, 10, 40)) drift_die("cannot make the gap bins");
    drift_out_meta(o, AF_GAPS, "table",
        "realistic heads: distribution of the exact top-1/top-2 gap relative to s (log bins, 4 per decade); below_lo: "
        "rows with a relative gap under 1e-9 (ties included)");
    for (int ki = 0; ki < L->nKs && L->rows > 0; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            const drift_flipset_t *st = &L->cell[ki][fi].realistic;
            long cum = 0;
            for (int b = -1; b < gb.nbins; b++) { /* b = -1: the rows below the first edge */
                long cnt = 0;
                for (size_t i = 0; i < st->n; i++)
                    cnt += b < 0 ? st->t[i].rel < gb.edge[0] : drift_logbins_find(&gb, st->t[i].rel) == b;
                cum += cnt;
                char bin[16], lo[32];
                snprintf(bin, sizeof bin, "%d", b);
                snprintf(lo, sizeof lo, "%.6e", gb.edge[b < 0 ? 0 : b]);
                drift_row(o, AF_GAPS, DRIFT_INT(L->Ks[ki]), DRIFT_TXT(drift_format_name(L->cell[ki][fi].kernels.f)),
                    DRIFT_TXT(b < 0 ? "below_lo" : bin), DRIFT_TXT(b < 0 ? "0" : lo), DRIFT_NUM(gb.edge[b + 1]),
                    DRIFT_INT(st->n), DRIFT_INT(cnt), DRIFT_NUM((double)cnt / st->n), DRIFT_NUM((double)cum / st->n));
            }
        }
}

/* The argmax across batch sizes under the two GEMM policies. */
static void write_batch(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AF_BATCH, "table",
        "the LM head as a GEMM of batch M x V: the kernel each policy picks (lib/ops/policy.h, device %s, %d SMs), "
        "and how often the argmax differs from the exact one and from the batch-1 result",
        L->device.name, L->device.sms);
    drift_out_meta(o, AF_BATCH, "shape",
        "n_policy = N the policy sees: V, or V/%ld (a vocabulary-parallel head split over %ld devices)", L->shard,
        L->shard);
    for (int mode = 0; mode < 2; mode++)
        for (int ki = 0; ki < L->nKs; ki++)
            for (int fi = 0; fi < L->nformats; fi++) {
                const drift_kset_t *ks = &L->cell[ki][fi].kernels;
                const drift_flipset_t *st = mode ? &L->cell[ki][fi].realistic : &L->cell[ki][fi].planted;
                if (mode && L->rows == 0) continue;
                for (int out = 0; out < 2; out++) {
                    if (out && ks->f != DRIFT_BF16 && ks->f != DRIFT_FP16) continue;
                    for (int q = 0; q < L->npolicy_rows; q++) {
                        int c = L->cell[ki][fi].policy_kernel[q][out];
                        /* batch 1 of the same policy and shape */
                        int c1 = L->cell[ki][fi].policy_kernel[q - (int)(q % DRIFT_AF_NBATCH)][out];
                        long fl = 0, ch = 0;
                        for (size_t i = 0; i < st->n; i++) {
                            fl += st->flip[i * st->ncfg + c];
                            ch += st->pick[i * st->ncfg + c] != st->pick[i * st->ncfg + c1];
                        }
                        const drift_polrow_t *P = &L->policy_pick[ki][q];
                        char ord[DRIFT_ORDER_SPEC_MAX];
                        drift_order_print(ord, sizeof ord, &P->order);
                        size_t N = P->shard ? drift_aflab_sharded_n(L) : (size_t)L->V;
                        drift_row(o, AF_BATCH, DRIFT_TXT(mode ? "realistic" : "planted"), DRIFT_INT(L->Ks[ki]),
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
    drift_out_meta(o, AF_MIT, "table",
        "mitigations at K = %zu, input format %s: flip rate against the exact argmax (for (d): "
        "against the exact argmax under the same tie rule)",
        L->Ks[L->headline.k], drift_format_name(L->headline.kernels->f));
    drift_out_meta(o, AF_MIT, "baseline", "%s", L->headline.kernels->k[L->headline.kernels->engine].name);
    drift_out_meta(o, AF_MIT, "eps",
        "(d) eps = %.6e times s (the baseline's D_0.1%% from the law of its mechanism, "
        "argmax_flip_laws.csv) and %.6e times s (10 sigma of its Phi fit, sigma_rel = %.6e)",
        L->mit.eps_rel[0], L->mit.eps_rel[1], L->mit.base_sigma);
    drift_out_meta(o, AF_MIT, "changed",
        "(c): trials whose argmax differs between batch sizes 1, 8, 64, 256, 1024 (N = V/%ld); -1: not applicable",
        L->shard);
    drift_out_meta(o, AF_MIT, "cost", "cost ratios are wall-clock measurements and live in argmax_flip_timing.csv");
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 1 && L->rows == 0) break;
        for (int m = 0; m < L->mit.n; m++) {
            const drift_mit_t *x = &L->mit.rows[mode][m];
            double lo = NAN, hi = NAN;
            if (x->flips >= 0 && drift_wilson(&lo, &hi, x->flips, x->n, DRIFT_Z95)) lo = hi = NAN;
            drift_row(o, AF_MIT, DRIFT_TXT(mode ? "realistic" : "planted"), DRIFT_INT(L->Ks[L->headline.k]),
                DRIFT_TXT(drift_format_name(L->headline.kernels->f)), DRIFT_TXT(x->name),
                DRIFT_TXT(L->headline.kernels->k[x->cfg].name), DRIFT_INT(x->n), DRIFT_INT(x->flips),
                DRIFT_NUM(x->flips >= 0 ? (double)x->flips / x->n : NAN), DRIFT_NUM(lo), DRIFT_NUM(hi),
                DRIFT_INT(x->changed));
        }
    }
}

/* Timing: the one non-reproducible file. */
static void write_timing(drift_out_t *o, const drift_aflab_t *L)
{
    char v[32], unit[64];
    drift_out_meta(o, AF_TIMING, "table", "wall-clock costs of this run: NOT reproducible (machine, load, threads)");
    snprintf(unit, sizeof unit, "us per logit (K = %zu)", L->Ks[L->headline.k]);
    for (int m = 0; m < L->mit.ncost; m++) {
        snprintf(v, sizeof v, "%.4g", L->mit.cost[m].us);
        drift_row(o, AF_TIMING, DRIFT_TXT(L->mit.cost[m].what), DRIFT_TXT(v), DRIFT_TXT(unit));
    }
    const char *what[] = {"planted phase", "realistic phase", "total"};
    const double t[] = {L->seconds.planted, L->seconds.realistic, L->seconds.total};
    for (int m = 0; m < 3; m++) {
        snprintf(v, sizeof v, "%.3f", t[m]);
        drift_row(o, AF_TIMING, DRIFT_TXT(what[m]), DRIFT_TXT(v), DRIFT_TXT("s"));
    }
}

/* With --trials: every planted pair. */
static void write_trials(drift_out_t *o, const drift_aflab_t *L)
{
    if (!L->trials_csv) return;
    drift_out_meta(o, AF_TRIALS, "table",
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
            drift_out_meta(o, AF_TRIALS, key, "%s", names);
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
                drift_row(o, AF_TRIALS, DRIFT_INT(L->Ks[ki]), DRIFT_TXT(drift_format_name(L->cell[ki][fi].kernels.f)),
                    DRIFT_INT(i), DRIFT_NUM(t->target), DRIFT_NUM(t->gap), DRIFT_NUM(t->gap), DRIFT_NUM(t->rel),
                    DRIFT_NUM(t->s), DRIFT_NUM(t->l1), DRIFT_INT(t->steps), DRIFT_INT(t->reached), DRIFT_INT(t->top1),
                    DRIFT_TXT(flips));
            }
        }
}

/* The law each kernel's mechanism implies, all three fitted (fliplaw.h, flipfit.h). */
static void write_laws(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AF_LAWS, "table",
        "planted pairs: the flip law of each kernel's mechanism (gauss: accumulation noise; triangle: "
        "output rounding, 1/2 (1 - D/q)+; conv: both) fitted by maximum likelihood; q = the logit format's spacing at the exact top logit / s");
    drift_out_meta(o, AF_LAWS, "choice",
        "dloglik = loglik(implied) - loglik(rival) (one parameter each); "
        "power = expected log-likelihood ratio if the implied law were true; decided = |dloglik| >= 3 and power >= 3 (a likelihood ratio of 20)");
    drift_out_meta(o, AF_LAWS, "gaps",
        "gap_p01 / gap_p001: the gaps at which the implied law's flip probability is 1%% / 0.1%%, relative to s and in output ulps (q at the median); "
        "tag: the kernel's part in the report, as in _fit.csv (default, engine, ...)");
    EACH_KERNEL(L)
    {
        const drift_flip_laws_t *W = &cl->laws[c];
        const drift_fliplaw_fit_t *G = &W->fit[DRIFT_FLIPLAW_GAUSS], *T = &W->fit[DRIFT_FLIPLAW_TRIANGLE],
                                  *C = &W->fit[DRIFT_FLIPLAW_CONV];
        drift_row(o, AF_LAWS, HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_TXT(drift_fliplaw_name(W->implied)),
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

/* Realistic rows against the two references. */
static void write_refs(drift_out_t *o, const drift_aflab_t *L)
{
    drift_out_meta(o, AF_REFS, "table",
        "realistic rows against two references: exact(rounded inputs) and exact(unrounded inputs) (the fp32 master values: "
        "the fp32 format's exact argmax); -1 = not available (no fp32 format in the run, or own-format accumulation, which the pruning cannot bound)");
    drift_out_meta(o, AF_REFS, "columns",
        "input_rounding_flips: rows whose exact argmax changes when the inputs are rounded to the format; "
        "flips_vs_exact_rounded: the kernel's argmax against exact(rounded); accumulation_flips: "
        "the kernel's partner (same accumulation, logits kept in the accumulator) against exact(rounded); output_rounding_changes: "
        "the kernel's argmax against its partner's (for the exact head: against exact(rounded)); flips_vs_exact_unrounded: "
        "the kernel against exact(unrounded). Exact ties are never flips.");
    if (L->rows <= 0) return;
    EACH_KERNEL(L)
    drift_row(o, AF_REFS, HEAD_CELLS(L->Ks[ki], ks, c), DRIFT_INT(L->rows), DRIFT_INT(cl->input_rounding_flips),
        DRIFT_INT(cl->realistic_ok[c] ? drift_flipset_flips(&cl->realistic, c) : -1),
        DRIFT_INT(cl->accumulation_flips[c]), DRIFT_INT(cl->output_rounding_changes[c]),
        DRIFT_INT(cl->flips_vs_unrounded[c]));
}

void drift_aflab_declare_tables(drift_table_spec_t *tables, const drift_aflab_t *L)
{
    const drift_table_spec_t t[AF_NCSV] = {{".csv", NULL, 0, C_BINS, NCOL(C_BINS)},
        {"_fit.csv", NULL, 0, C_FIT, NCOL(C_FIT)}, {"_ties.csv", NULL, 0, C_TIES, NCOL(C_TIES)},
        {"_realistic.csv", NULL, 0, C_REAL, NCOL(C_REAL)}, {"_gaps.csv", NULL, 0, C_GAPS, NCOL(C_GAPS)},
        {"_below.csv", NULL, 0, C_BELOW, NCOL(C_BELOW)}, {"_batch.csv", NULL, 0, C_BATCH, NCOL(C_BATCH)},
        {"_mitigations.csv", NULL, 0, C_MIT, NCOL(C_MIT)}, {"_timing.csv", NULL, 0, C_TIMING, NCOL(C_TIMING)},
        {L->trials_csv ? "_trials.csv" : NULL /* optional */, NULL, 0, C_TRIALS, NCOL(C_TRIALS)},
        {"_laws.csv", NULL, 0, C_LAWS, NCOL(C_LAWS)}, {"_refs.csv", NULL, 0, C_REFS, NCOL(C_REFS)}};
    memcpy(tables, t, sizeof t);
}

void drift_aflab_write_tables(drift_out_t *o, const drift_aflab_t *L)
{
    write_bins(o, L);
    write_fits(o, L);
    write_ties(o, L);
    write_realistic(o, L);
    write_gaps(o, L);
    write_batch(o, L);
    write_mitigations(o, L);
    write_timing(o, L);
    write_trials(o, L);
    write_laws(o, L);
    write_refs(o, L);
}
