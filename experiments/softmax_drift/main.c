/* softmax_drift.c — how far does a kernel's softmax drift from the exact one, per variant
 * (naive, safe, online, online:B) and input format, as the vocabulary grows; where does naive
 * softmax fall off its overflow cliff; and how often does the top-1 token change?
 *
 * Sweeps: vocabulary sizes N (--N), rows of Gaussian logits (--rows, sigma --sigma), the input
 * formats (--formats), the variants of lib/ops/softmax.h. Arithmetic: logits rounded (RNE) to
 * the format, then max, exponentials (correctly rounded expf), sums (seq) and quotients in
 * fp32, probabilities kept in fp32 (what the fp32 registers hold), as GPU kernels do. Each row
 * is held against two references (law 1): the exact softmax of the unrounded logits (what
 * the model means) and of the logits rounded to the format (what the arithmetic could at best
 * do), computed in fp64 with a compensated sum (relative error below 1e-14, see
 * reference_fast) because MPFR's costs 8 s per 256k-logit row; MPFR checks it on every row
 * with N <= 8192. The cliff table computes everything in the format itself (fp16 arithmetic for fp16) on
 * N(0,1) logits with one planted peak, swept across ln(65504) = 11.09 and ln(fp32 max) = 88.72.
 *
 * Run: ./lab run softmax_drift [--profile quick|default|full]
 * Look for: the input rounding (bf16, fp16) outweighs the arithmetic error; a single running
 * sum (naive, safe, online) loses accuracy as N grows, online:B's blocked sums much less; naive
 * in fp16 gives NaN once the peak passes ~11.09. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dispatch.h"
#include "drift.h"
#include "format.h"
#include "metrics.h"
#include "softmax_drift_lab.h"
#include "philox.h"
#include "softmax.h"

#define NVAR DRIFT_SMX_NVAR
#define CROSSCHECK_MAX_N DRIFT_SMX_CROSSCHECK_MAX_N
#define MAX_PEAKS 32

/* The error measures of one computed probability vector p (and log-sum-exp) against the
 * references. */
static void measure(drift_smx_meas_t *m, const double *p, double lse, const double *rt, double lse_t, const double *rr,
    double lse_r, size_t n, size_t top_true)
{
    double l1t = 0, l1r = 0, rel = 0;
    int nan = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(p[i])) nan = 1;
        l1t += fabs(p[i] - rt[i]), l1r += fabs(p[i] - rr[i]);
        if (rt[i] >= 0x1p-126) rel = fmax(rel, fabs(p[i] - rt[i]) / rt[i]);
    }
    drift_top2_t t;
    drift_top2(&t, p, n);
    *m = (drift_smx_meas_t){nan ? NAN : l1t, nan ? NAN : l1r, nan ? NAN : rel, fabs(lse - lse_t) / fabs(lse_t),
        fabs(lse - lse_r) / fabs(lse_r), t.top1 != top_true, t.tie, nan};
}

/* The exact softmax and log-sum-exp of x, to within a relative error of (|x_i - m| + 4) u of
 * double (u = 2^-53; below 1e-14 for the logits here): m = max x (exact), e_i = exp(x_i - m)
 * (one rounding of the difference, glibc's exp below 1 ulp), s = Neumaier's compensated sum
 * of the positive e_i (relative error 2u), p_i = e_i / s, lse = m + log s. The MPFR reference
 * costs about 4 us per logit (8 s per 256k-logit row and format), this one 15 ns; it is held
 * against drift_softmax_reference on every row with N <= 8192 (the crosscheck metadata line),
 * and the run stops if they differ by more than 1e-13 relatively. */
static void reference_fast(double *p, double *lse, const double *x, size_t n)
{
    double m = -INFINITY;
    for (size_t i = 0; i < n; i++) m = fmax(m, x[i]);
    double s = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        double e = exp(x[i] - m), t = s + e;
        c += fabs(s) >= fabs(e) ? (s - t) + e : (e - t) + s;
        s = t, p[i] = e;
    }
    s += c;
    for (size_t i = 0; i < n; i++) p[i] /= s;
    *lse = m + log(s);
}

static double nanmax(double a, double b) { return isnan(a) || isnan(b) ? NAN : fmax(a, b); }

int main(int argc, char **argv)
{
    drift_intlist_t Ns = {{0}, 0};
    long rows_ = 0, block = 64;
    double sigma = 3;
    drift_dbllist_t peaks = {{0}, 0};
    const drift_cli_opt_t opts[] = {
        {"N", DRIFT_OPT_INTLIST, &Ns, "N,N,...", "vocabulary sizes (logits per row)", 2, 1L << 24,
            {"1024,16384", "1024,8192,65536,262144", "1024,8192,65536,262144,1048576"}},
        {"rows", DRIFT_OPT_INT, &rows_, "N", "rows of logits per N", 1, 100000, {"2", "6", "32"}},
        {"sigma", DRIFT_OPT_DOUBLE, &sigma, "X", "standard deviation of the Gaussian logits (default 3)", 0, 0, {0}},
        {"block", DRIFT_OPT_INT, &block, "B", "block of the online:B variant (default 64)", 1, 1L << 20, {0}},
        {"peaks", DRIFT_OPT_DOUBLELIST, &peaks, "X,X,...", "planted peak logits of the cliff table", 0, 0,
            {"8,11,11.05,11.08,11.1,12,88,89",
                "4,8,10,11,11.03,11.05,11.06,11.07,11.08,11.09,11.1,11.2,12,16,32,64,88,88.7,88.8,89,100",
                "4,8,10,11,11.03,11.05,11.06,11.07,11.08,11.09,11.1,11.2,12,16,32,64,88,88.7,88.8,89,100"}},
    };
    const drift_cli_spec_t spec = {.name = "softmax_drift",
        .question =
            "How far does a softmax kernel (naive, safe, online, online:B) drift from the exact softmax as the vocabulary grows, per input format; "
            "where does naive softmax overflow; how often does the top-1 token change?",
        .default_formats = "fp32,bf16,fp16",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders = "sweeps softmax variants, not reduction orders (the sums of exponentials are seq in fp32)",
        .cpu_only = NULL, /* probabilities go through the dispatcher (--backend cuda); log-sum-exp stays on the CPU */
        .summary =
            "with fp32 arithmetic the variants differ through their sums: one running sum of N exponentials (naive, safe, "
            "online) loses accuracy as N grows, online:B's blocked sums much less; in bf16 and fp16 the rounding of the "
            "logits to the input format outweighs the arithmetic, which the exact softmax of the rounded logits shows; naive "
            "softmax computed in fp16 returns NaN once the largest logit (or the sum of exponentials) passes 65504, i.e. a "
            "logit of about 11.09."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    if (!(sigma > 0 && sigma <= 1000)) drift_die("--sigma: must be a number in (0, 1000]");
    if (peaks.n > MAX_PEAKS) drift_die("--peaks: at most %d values", MAX_PEAKS);
    for (int i = 0; i < peaks.n; i++)
        if (!(fabs(peaks.v[i]) <= 1e4)) drift_die("--peaks: each peak must lie in [-10000, 10000]");
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] == DRIFT_FP64 || cli.formats[f] == DRIFT_TF32)
            drift_die(
                "--formats: fp64 and tf32 are not softmax input formats here (accepted: fp32, bf16, fp16, fp8e4m3, fp8e5m2)");
    const int nf = cli.nformats, nN = Ns.n;
    const size_t R = (size_t)rows_;
    size_t Nmax = 0;
    for (int t = 0; t < nN; t++) Nmax = (size_t)Ns.v[t] > Nmax ? (size_t)Ns.v[t] : Nmax;

    drift_softmax_variant_t var[NVAR];
    char vname[NVAR][DRIFT_SOFTMAX_SPEC_MAX], bspec[32];
    snprintf(bspec, sizeof bspec, "online:%ld", block);
    const char *vspecs[NVAR] = {"naive", "safe", "online", bspec};
    for (int v = 0; v < NVAR; v++) {
        char err[DRIFT_ERRMSG_MAX];
        if (drift_softmax_parse(&var[v], vspecs[v], err, sizeof err)) drift_die("--block: %s", err);
        drift_softmax_print(vname[v], sizeof vname[v], &var[v]);
    }

    /* -- sweep: meas[((ni * R + r) * nf + f) * NVAR + v] -- */
    size_t nmeas = 0;
    for (int ni = 0; ni < nN; ni++) nmeas += R;
    drift_smx_meas_t *meas = calloc(nmeas * (size_t)nf * NVAR, sizeof *meas);
    double *xdev = calloc(nmeas, sizeof *xdev); /* fast reference vs MPFR, per row */
    if (!meas || !xdev)
        drift_die_oom((double)nmeas * (double)nf * NVAR * sizeof *meas + (double)nmeas * sizeof *xdev,
            "the measurements of %zu rows x %d formats x %d variants", nmeas, nf, NVAR);
    const uint32_t exp_id = drift_fnv1a32("softmax_drift");
    int fail = 0;
    for (int ni = 0; ni < nN; ni++) {
        const size_t N = (size_t)Ns.v[ni];
        drift_progress(&cli, (size_t)ni, (size_t)nN);
        DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:fail)")
        for (size_t r = 0; r < R; r++) {
            double *x = malloc(N * sizeof *x), *xr = malloc(N * sizeof *xr), *rt = malloc(N * sizeof *rt),
                   *rr = malloc(N * sizeof *rr), *p = malloc(N * sizeof *p);
            if (!x || !xr || !rt || !rr || !p) {
                fail |= 2; /* said with the size below */
                free(x), free(xr), free(rt), free(rr), free(p);
                continue;
            }
            drift_stream_t st;
            drift_stream_init(&st, cli.seed, exp_id, (uint32_t)N, (uint32_t)r);
            for (size_t i = 0; i < N; i++) x[i] = sigma * drift_stream_normal(&st);
            double lse_t, lse_r, lse;
            reference_fast(rt, &lse_t, x, N);
            if (N <= CROSSCHECK_MAX_N) { /* the fast reference against MPFR */
                double lse_m, dev = 0;
                fail |= drift_softmax_reference(rr, x, N, DRIFT_FP64) != 0;
                fail |= drift_logsumexp_reference(&lse_m, x, N, DRIFT_FP64) != 0;
                for (size_t i = 0; i < N; i++)
                    if (rr[i] > 0) dev = fmax(dev, fabs(rt[i] - rr[i]) / rr[i]);
                dev = fmax(dev, fabs(lse_t - lse_m) / fabs(lse_m));
                xdev[ni * R + r] = dev;
            }
            drift_top2_t tt;
            drift_top2(&tt, rt, N);
            for (int f = 0; f < nf; f++) {
                drift_format_t in = cli.formats[f];
                for (size_t i = 0; i < N; i++) xr[i] = drift_rne(x[i], in);
                reference_fast(rr, &lse_r, xr, N);
                for (int v = 0; v < NVAR; v++) {
                    drift_softmax_opts_t o = drift_softmax_opts(in, DRIFT_FP32);
                    o.variant = var[v];
                    o.out = DRIFT_FP32;
                    fail |= drift_dispatch_softmax(p, x, N, 1, &o, NULL, 0) != 0;
                    fail |= drift_logsumexp(&lse, x, N, &o, NULL, 0) != 0;
                    measure(&meas[(((size_t)ni * R + r) * (size_t)nf + (size_t)f) * NVAR + (size_t)v], p, lse, rt,
                        lse_t, rr, lse_r, N, tt.top1);
                }
            }
            free(x), free(xr), free(rt), free(rr), free(p);
        }
        if (fail & 2)
            drift_die_oom(5.0 * (double)N * sizeof(double), "a thread's 5 rows of %zu logits (--N: smaller)", N);
        if (fail) drift_die("a softmax or its reference failed at N = %zu (out of memory?)", N);
    }
    double xdev_max = 0;
    long xrows = 0;
    for (int ni = 0; ni < nN; ni++)
        for (size_t r = 0; r < R; r++)
            if ((size_t)Ns.v[ni] <= CROSSCHECK_MAX_N) xdev_max = fmax(xdev_max, xdev[ni * R + r]), xrows++;
    if (!(xdev_max <= 1e-13)) drift_die("the fast reference differs from MPFR by %.3g relatively (a bug)", xdev_max);

    /* -- the cliff: N(0,1) logits, logit 0 replaced by the peak; arithmetic in the format -- */
    const size_t NC = 1024;
    const int np = peaks.n;
    drift_smx_meas_t *cm = calloc((size_t)nf * 2 * (size_t)(np ? np : 1), sizeof *cm);
    double *clse = calloc((size_t)nf * 2 * (size_t)(np ? np : 1), sizeof *clse);
    double *clse_ref = calloc((size_t)nf * (size_t)(np ? np : 1), sizeof *clse_ref);
    long *cnan = calloc((size_t)nf * 2 * (size_t)(np ? np : 1), sizeof *cnan);
    if (!cm || !clse || !clse_ref || !cnan)
        drift_die_oom((double)nf * 2 * (np ? np : 1) * (sizeof *cm + sizeof *clse + sizeof *cnan) +
                          (double)nf * (np ? np : 1) * sizeof *clse_ref,
            "the cliff's measurements of %d formats x %d peaks", nf, np);
    DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:fail)")
    for (int t = 0; t < nf * np; t++) {
        int f = t / np, k = t % np;
        drift_format_t in = cli.formats[f];
        double x[1024], rr[1024], p[1024], lse_r, lse;
        drift_stream_t st;
        drift_stream_init(&st, cli.seed, exp_id, 0xC11FFu, 0);
        for (size_t i = 0; i < NC; i++) x[i] = drift_rne(drift_stream_normal(&st), in);
        x[0] = drift_rne(peaks.v[k], in);
        fail |= drift_softmax_reference(rr, x, NC, DRIFT_FP64) != 0;
        fail |= drift_logsumexp_reference(&lse_r, x, NC, DRIFT_FP64) != 0;
        clse_ref[f * np + k] = lse_r;
        for (int v = 0; v < 2; v++) {
            drift_softmax_opts_t o = drift_softmax_opts(in, in);
            o.variant = var[v];
            fail |= drift_dispatch_softmax(p, x, NC, 1, &o, NULL, 0) != 0;
            fail |= drift_logsumexp(&lse, x, NC, &o, NULL, 0) != 0;
            long nn = 0;
            for (size_t i = 0; i < NC; i++) nn += isnan(p[i]) != 0;
            measure(&cm[(f * 2 + v) * np + k], p, lse, rr, lse_r, rr, lse_r, NC, 0);
            cnan[(f * 2 + v) * np + k] = nn;
            clse[(f * 2 + v) * np + k] = lse;
        }
    }
    if (fail) drift_die("a softmax or its reference failed (out of memory?)");
    drift_progress(&cli, (size_t)nN, (size_t)nN);

    /* -- aggregate -- */
    drift_smx_agg_t *agg = calloc((size_t)nN * (size_t)nf * NVAR, sizeof *agg);
    if (!agg)
        drift_die_oom((double)nN * nf * NVAR * sizeof *agg, "the aggregates of %d sizes x %d formats x %d variants", nN,
            nf, NVAR);
    for (int ni = 0; ni < nN; ni++)
        for (int f = 0; f < nf; f++)
            for (int v = 0; v < NVAR; v++) {
                drift_smx_agg_t *a = &agg[((size_t)ni * (size_t)nf + (size_t)f) * NVAR + (size_t)v];
                for (size_t r = 0; r < R; r++) {
                    const drift_smx_meas_t *m =
                        &meas[(((size_t)ni * R + r) * (size_t)nf + (size_t)f) * NVAR + (size_t)v];
                    a->l1_true_max = nanmax(a->l1_true_max, m->l1_true);
                    a->l1_round_max = nanmax(a->l1_round_max, m->l1_round);
                    a->rel_true_max = nanmax(a->rel_true_max, m->rel_true);
                    a->lse_true_max = nanmax(a->lse_true_max, m->lse_true);
                    a->lse_round_max = nanmax(a->lse_round_max, m->lse_round);
                    a->top1_changed += m->top1_changed, a->top1_tied += m->top1_tied, a->nan_rows += m->nan;
                }
            }

    const drift_softmax_lab_t lab = {&cli, R, NC, sigma, block, xrows, xdev_max, nf, nN, np, Ns.v, peaks.v,
        (const char(*)[DRIFT_SOFTMAX_SPEC_MAX])vname, agg, cm, cnan, clse, clse_ref};
    drift_softmax_write(&lab); /* softmax_drift_report.c */
    free(meas), free(xdev), free(agg), free(cm), free(clse), free(clse_ref), free(cnan);
    return 0;
}
