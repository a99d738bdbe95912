/* sum_order_perms.c — the order of a sum changes its answer.
 *
 * Question: floating-point addition is not associative. How much does the ORDER of a sum
 * (left to right, pairwise, blocked, split-K, a GPU warp's butterfly, compensated, or a
 * random shuffle) change its result? (sum_order measures how the error grows with n, against
 * the error bounds.)
 *
 * What it computes (every result against the exact sum of the same rounded inputs, law 1):
 *   (a) classroom cases (10000 + 0.0001 - 9999.9, 1e16 + 1 - 1e16, 0.1 ten times,
 *       0.1 + 0.2 - 0.3, 1 + 1000 x 0.0001, 1 + 1e100 + 1 - 1e100) in every order of
 *       --orders and every accumulator setting (lib/core/sum_setting.h), plus fp64;
 *   (b) one vector per distribution and setting (n = 1000) summed in --perms random
 *       orders (random:SEED, a Philox Fisher-Yates shuffle): how many distinct results,
 *       and what fraction equals the correctly rounded sum (histogram).
 *
 * How to run:
 *   ./lab run sum_order_perms                    default profile (a few seconds on 2 cores)
 *   ./lab run sum_order_perms --formats fp16 --orders seq,pairwise,kahan --perms 5000
 *   ./lab plot sum_order_perms                   plots/sum_order_perms.png
 *
 * What to look for: the classroom cases give a different answer in nearly every order, and
 * compensated sums are not all equal (1e16 + 1 - 1e16). Over random permutations of one
 * vector a low-precision sum takes dozens of different values, and most of them are not the
 * correctly rounded one.
 *
 * Outputs (all written to temporary names, renamed when complete):
 *   data/sum_order_perms_classroom.csv  (a) one row per (case, setting, order)
 *   data/sum_order_perms.csv            (b) one row per distinct result: its count
 *   data/sum_order_perms.md             report fragment: question, key tables, takeaway */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "drift.h"
#include "gen.h"
#include "perm_sweep.h"
#include "perms_lab.h"
#include "sum_error.h"

#define MAX_SETTINGS (2 * DRIFT_NFORMATS)
#define PERM_N 1000 /* length of the permuted vector in (b) */

/* ---- classroom cases ------------------------------------------------------------------- */

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

/* ---- main ------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    long perms = 0; /* 0: the profile's */
    const drift_cli_opt_t opts[] = {
        {"perms", DRIFT_OPT_INT, &perms, "R", "random permutations of one vector in (b)", 1, 1000000,
            {"200", "1000", "10000"}},
    };
    const drift_cli_spec_t spec = {.name = "sum_order_perms",
        .question = "How much does the order of a floating-point sum change its result?",
        .default_formats = "fp32,bf16,fp16",
        .default_orders = "seq,pairwise,blocked:64,splitk:8,warp:32,kahan,neumaier",
        DRIFT_CLI_OPTS(opts),
        .cpu_only = "CPU only",
        .summary =
            "every addition rounds, and the order decides which partial sums the roundings are taken on, so the same "
            "terms in another order give another sum: the classroom cases differ from order to order, and one vector "
            "in random orders takes many values, most of them not the correctly rounded sum; the narrower the "
            "accumulator, the more. Plots: ./lab plot sum_order_perms."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    for (int o = 0; o < cli.norders; o++)
        if (drift_order_is_tc(&cli.orders[o]))
            drift_die("--orders: tc orders are tensor-core dot products, not sums (accepted: seq, rev, pairwise, "
                      "blocked:B, splitk:S[:tree], warp:W, kahan, neumaier, random:SEED)");
    const int no = cli.norders, nd = DRIFT_NDISTS;
    const drift_order_t *O = cli.orders;
    char ospec[DRIFT_MAX_ORDERS][DRIFT_ORDER_SPEC_MAX];
    const char *oname[DRIFT_MAX_ORDERS];
    for (int o = 0; o < no; o++) drift_order_print(ospec[o], sizeof ospec[o], &O[o]), oname[o] = ospec[o];

    /* settings as sum_order's; (a) adds fp64 */
    drift_sum_setting_t SA[MAX_SETTINGS + 1], *S = SA + 1;
    const int ns = drift_sum_settings(S, cli.formats, cli.nformats);
    int have64 = 0;
    for (int s = 0; s < ns; s++) have64 |= S[s].acc == DRIFT_FP64;
    SA[0] = (drift_sum_setting_t){DRIFT_FP64, DRIFT_FP64, "fp64/fp64"};
    const drift_sum_setting_t *sa_ = have64 ? S : SA; /* (a)'s settings */
    const int nsa = ns + !have64;

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

    /* ---- (b) random orders of one vector ---- */
    drift_sum_perm_t *P = calloc((size_t)nd * ns, sizeof *P);
    if (!P) drift_die_oom((double)nd * ns * sizeof *P, "the permutation results (--formats: fewer)");
    must(drift_sum_perms_run(P, cli.seed, S, ns, PERM_N, perms), "permuted sum");
    /* ---- declared output (perms_report.c) ---- */
    const char *case_name[NCASES], *case_desc[NCASES];
    for (int c = 0; c < NCASES; c++) case_name[c] = CASES[c].name, case_desc[c] = CASES[c].desc;
    const drift_sum_perms_lab_t lab = {&cli, perms, oname, no, S, sa_, ns, nsa, case_name, case_desc, NCASES, cls_n,
        cls, cls_exact, cls_cr, P, PERM_N};
    drift_sum_perms_write(&lab);

    for (int t = 0; t < nd * ns; t++) free(P[t].bins);
    free(P);
    free(cls);
    free(cls_exact);
    free(cls_cr);
    return 0;
}
