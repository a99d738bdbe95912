/* sum_order.c — summation order changes the answer.
 *
 * Question: floating-point addition is not associative. How much does the ORDER of a sum
 * (left to right, pairwise, blocked, split-K, a GPU warp's butterfly, compensated) change
 * its result, how does the error grow with the length n, and how close do the textbook
 * error bounds come to what actually happens?
 *
 * What it sweeps (every result against the exact sum of the same rounded inputs, law 1):
 *   (a) classroom cases (10000 + 0.0001 - 9999.9, 1e16 + 1 - 1e16, 0.1 ten times,
 *       0.1 + 0.2 - 0.3, 1 + 1000 x 0.0001, 1 + 1e100 + 1 - 1e100) in every order of
 *       --orders and every accumulator setting, plus fp64;
 *   (b) error vs n, n = 2^4 .. 2^20 (quick: 2^4 .. 2^12; full: 2^4 .. 2^24), --trials
 *       vectors per point, for every order x accumulator setting x input distribution
 *       (uniform [0,1), normal, ill-conditioned, LLM-like; lib/core/gen.c). Accumulator
 *       settings: each input format of --formats (default fp32, bf16, fp16) accumulated
 *       in its own format, and the 16-bit ones also in fp32. Each error is set against
 *       the deterministic bound gamma_k sum|x| (Higham) and the probabilistic bound
 *       ~lambda sqrt(k) u sum|x| (Higham & Mary 2019; lambda and its probability are in
 *       the CSV metadata);
 *   (c) one vector per distribution and setting (n = 1000) summed in --perms random
 *       orders (random:SEED, a Philox Fisher-Yates shuffle): how many distinct results,
 *       and what fraction equals the correctly rounded sum (histogram).
 *
 * How to run:
 *   ./lab run sum_order                          default profile (~10 s on 2 cores)
 *   ./lab run sum_order --profile quick          a few seconds
 *   ./lab run sum_order --formats fp16 --orders seq,pairwise,kahan --trials 5
 *   ./lab plot sum_order                         plots/sum_order_{bounds,dists,perms}.png
 *
 * What to look for: on positive data (uniform) the seq error relative to sum|x| grows
 * like sqrt(n) (the slope in the tables, ~0.5), far below its worst-case bound that grows
 * like n; pairwise, blocked, split-K and warp cut the chain a term travels through and
 * grow much more slowly; Kahan and Neumaier stay near one rounding. Accumulating in fp16
 * or bf16 is a different world: the running sum outgrows the terms and swallows them
 * (stagnation), while the same 16-bit inputs accumulated in fp32 are nearly exact. On
 * zero-mean data the partial sums stay small and every order does better. Over random
 * permutations of one vector a low-precision sum takes dozens of different values, and
 * most of them are not the correctly rounded one.
 *
 * Outputs (all written to temporary names, renamed when complete):
 *   data/sum_order_classroom.csv  (a) one row per (case, setting, order)
 *   data/sum_order_error.csv      (b) one row per (dist, n, trial, setting, order)
 *   data/sum_order_summary.csv    (b) mean over trials per (dist, setting, order, n), with
 *                                 both bounds
 *   data/sum_order_perms.csv      (c) one row per distinct result: its count
 *   data/sum_order.md             report fragment: question, key tables, takeaway */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "drift.h"
#include "gen.h"
#include "sum_bounds.h"
#include "sum_order_lab.h"

#define MAX_SETTINGS (2 * DRIFT_NFORMATS)
#define PERM_N 1000        /* length of the permuted vector in (c) */
#define SLOPE_FROM_LOG2N 8 /* growth exponents are fitted over n >= 2^8 */
#define PROB_TARGET 0.99   /* lambda is chosen so the probabilistic bound holds with this */

/* ---- (a) classroom cases --------------------------------------------------------------- */

typedef struct {
    const char *name, *desc;
} case_t;

static const case_t CASES[] = {
    {"textbook", "10000.0 + 0.0001 - 9999.9"},
    {"1e16+1-1e16", "1e16 + 1 - 1e16"},
    {"0.1x10", "0.1 added ten times"},
    {"0.1+0.2-0.3", "0.1 + 0.2 - 0.3"},
    {"1+1000x1e-4", "1 followed by 1000 copies of 0.0001"},
    {"1+1e100+1-1e100", "1 + 1e100 + 1 - 1e100 (Neumaier's example)"},
};
#define NCASES (int)(sizeof CASES / sizeof CASES[0])

static size_t case_values(int c, double *x)
{
    switch (c) {
    case 0: x[0] = 10000.0, x[1] = 0.0001, x[2] = -9999.9; return 3;
    case 1: x[0] = 1e16, x[1] = 1, x[2] = -1e16; return 3;
    case 2:
        for (int i = 0; i < 10; i++) x[i] = 0.1;
        return 10;
    case 3: x[0] = 0.1, x[1] = 0.2, x[2] = -0.3; return 3;
    case 4:
        x[0] = 1;
        for (int i = 1; i <= 1000; i++) x[i] = 0.0001;
        return 1001;
    default: x[0] = 1, x[1] = 1e100, x[2] = 1, x[3] = -1e100; return 4;
    }
}

static void must(int st, const char *what)
{
    if (st != DRIFT_OK) drift_die("%s: %s", what, drift_strerror(st));
}

static void progress(void *cli, size_t done, size_t total) { drift_progress(cli, done, total); }

/* ---- main ------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    long trials = 0, perms = 0, log2_n = 0; /* 0: the profile's */
    const drift_cli_opt_t opts[] = {
        {"trials", DRIFT_OPT_INT, &trials, "N", "random vectors per (distribution, n) in (b)", 1, 1000,
            {"1", "3", "10"}},
        {"perms", DRIFT_OPT_INT, &perms, "R", "random permutations of one vector in (c)", 1, 1000000,
            {"200", "1000", "10000"}},
        {"log2-n", DRIFT_OPT_INT, &log2_n, "E", "the largest n in (b) is 2^E (from 2^4; slopes from 2^8)", 10, 24,
            {"12", "20", "24"}},
    };
    const drift_cli_spec_t spec = {.name = "sum_order",
        .question =
            "How much does the order of a floating-point sum change its result, and how does the error grow with n?",
        .default_formats = "fp32,bf16,fp16",
        .default_orders = "seq,pairwise,blocked:64,splitk:8,warp:32,kahan,neumaier",
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
        .cpu_only = "CPU only",
        .summary =
            "every addition rounds, and the order decides which partial sums the roundings are taken on. In seq a term "
            "early in the sum is rounded n-1 times, so the worst-case error grows like n u sum|x| (the deterministic "
            "bound); but the individual rounding errors have random signs and mostly cancel, so the actual error grows "
            "like sqrt(n) u sum|x| (the probabilistic bound, slope ~0.5 above). Pairwise, blocked, split-K and warp orders "
            "shorten the chain each term travels to ~log2 n or ~n/B additions, and compensated sums carry the lost low "
            "part along, so their errors barely grow. In a 16-bit accumulator the running sum soon dwarfs the terms and "
            "swallows them whole: the error is no longer a rounding effect but a stall. Plots: ./lab plot sum_order."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    for (int o = 0; o < cli.norders; o++)
        if (drift_order_is_tc(&cli.orders[o]))
            drift_die("--orders: tc orders are tensor-core dot products, not sums (accepted: seq, rev, pairwise, "
                      "blocked:B, splitk:S[:tree], warp:W, kahan, neumaier, random:SEED)");
    const int log2_min = 4, log2_max = (int)log2_n, nn = log2_max - log2_min + 1;
    const int no = cli.norders, nd = DRIFT_NDISTS;
    const drift_order_t *O = cli.orders;
    char ospec[DRIFT_MAX_ORDERS][DRIFT_ORDER_SPEC_MAX];
    const char *oname[DRIFT_MAX_ORDERS];
    for (int o = 0; o < no; o++) drift_order_print(ospec[o], sizeof ospec[o], &O[o]), oname[o] = ospec[o];

    /* settings: each input format in its own accumulator, and below fp32's precision also
     * accumulated in fp32 (the mixed-precision GPU default); (a) adds fp64 */
    drift_sum_setting_t SA[MAX_SETTINGS + 1], *S = SA + 1;
    int ns = 0, have64 = 0;
    double umax = 0;
    for (int i = 0; i < cli.nformats; i++) {
        drift_format_t f = cli.formats[i];
        if (drift_format_info(f)->p < drift_format_info(DRIFT_FP32)->p)
            S[ns++] = (drift_sum_setting_t){f, DRIFT_FP32, ""};
        S[ns++] = (drift_sum_setting_t){f, f, ""};
    }
    for (int s = 0; s < ns; s++) {
        snprintf(S[s].name, sizeof S[s].name, "%s/%s", drift_format_name(S[s].in), drift_format_name(S[s].acc));
        have64 |= S[s].acc == DRIFT_FP64;
        umax = fmax(umax, drift_format_info(S[s].acc)->unit_roundoff);
    }
    SA[0] = (drift_sum_setting_t){DRIFT_FP64, DRIFT_FP64, "fp64/fp64"};
    const drift_sum_setting_t *sa_ = have64 ? S : SA; /* (a)'s settings */
    const int nsa = ns + !have64;

    /* lambda: the probabilistic bound holds with PROB_TARGET at the largest n for the largest
     * unit roundoff used (and hence everywhere else) */
    const size_t nmax = (size_t)1 << log2_max;
    const double lambda = drift_sum_lambda(nmax, umax, PROB_TARGET);

    /* ---- (a) classroom: each case's decimal values rounded to the inputs, summed in every order ---- */
    drift_sum_err_t *cls = malloc((size_t)NCASES * nsa * no * sizeof *cls);
    double *cls_exact = malloc((size_t)NCASES * nsa * sizeof *cls_exact),
           *cls_cr = malloc((size_t)NCASES * nsa * sizeof *cls_cr);
    size_t cls_n[NCASES];
    if (!cls || !cls_exact || !cls_cr)
        drift_die_oom((double)NCASES * nsa * (no * sizeof *cls + 2 * sizeof *cls_exact),
            "the classroom's %d cases x %d formats x %d orders (--formats, --orders: fewer)", NCASES, (int)nsa,
            (int)no);
    for (int c = 0; c < NCASES; c++) {
        double raw[1001], xr[1001], sum_abs;
        size_t n = cls_n[c] = case_values(c, raw);
        for (int s = 0; s < nsa; s++) {
            for (size_t i = 0; i < n; i++) xr[i] = drift_rne(raw[i], sa_[s].in);
            drift_xacc_t ex;
            drift_exact_sum_abs(&ex, &sum_abs, xr, n);
            cls_exact[c * nsa + s] = drift_xacc_round(&ex, DRIFT_FP64, DRIFT_RNE);
            cls_cr[c * nsa + s] = drift_xacc_round(&ex, sa_[s].acc, DRIFT_RNE);
            drift_acc_t acc = {sa_[s].acc, DRIFT_RNE, 1};
            for (int o = 0; o < no; o++) {
                double r;
                must(drift_sum(&r, xr, n, &O[o], &acc), "classroom sum");
                drift_sum_error(&cls[((size_t)c * nsa + s) * no + o], &ex, r, sa_[s].acc);
            }
        }
    }

    /* ---- (b) error vs n, summarised against the bounds; (c) random orders of one vector ---- */
    const drift_sum_sweep_t W = {cli.seed, log2_min, log2_max, trials, S, ns, O, no, progress, &cli};
    drift_sum_cell_t *cells = calloc(drift_sum_sweep_ncells(&W), sizeof *cells);
    drift_sum_summary_t *sm = calloc((size_t)nd * ns * no * nn, sizeof *sm);
    double *slope = malloc((size_t)nd * ns * no * sizeof *slope);
    drift_sum_perm_t *P = calloc((size_t)nd * ns, sizeof *P);
    if (!cells || !sm || !slope || !P)
        drift_die_oom((double)drift_sum_sweep_ncells(&W) * sizeof *cells + (double)nd * ns * no * nn * sizeof *sm,
            "the cells of %zu sweep points (--trials, --formats, --orders: fewer)", (size_t)drift_sum_sweep_ncells(&W));
    must(drift_sum_sweep_run(cells, &W), "sum");
    drift_sum_tally_t tally;
    drift_sum_summarise(sm, slope, &tally, cells, &W, lambda, SLOPE_FROM_LOG2N);
    must(drift_sum_perms_run(P, cli.seed, S, ns, PERM_N, perms), "permuted sum");
#define SM(d, s, o, li) sm[(((size_t)(d)*ns + (s)) * no + (o)) * nn + (li)]
#define SLOPE(d, s, o) slope[((size_t)(d)*ns + (s)) * no + (o)]
    /* ---- declared output (sum_order_report.c) ---- */
    const char *case_name[NCASES], *case_desc[NCASES];
    for (int c = 0; c < NCASES; c++) case_name[c] = CASES[c].name, case_desc[c] = CASES[c].desc;
    const drift_sum_order_lab_t lab = {&cli, trials, perms, log2_min, log2_max, SLOPE_FROM_LOG2N, O, oname, no, S, sa_,
        ns, nsa, lambda, umax, case_name, case_desc, NCASES, cls_n, cls, cls_exact, cls_cr, &W, cells, sm, slope, tally,
        P, PERM_N};
    drift_sum_order_write(&lab);

    for (int t = 0; t < nd * ns; t++) free(P[t].bins);
    free(P);
    free(slope);
    free(sm);
    free(cells);
    free(cls);
    free(cls_exact);
    free(cls_cr);
    return 0;
}
