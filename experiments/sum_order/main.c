/* sum_order.c — the error of a sum against n, and against its bounds.
 *
 * Question: floating-point addition is not associative. How does the error of a sum grow
 * with its length n in each ORDER (left to right, pairwise, blocked, split-K, a GPU warp's
 * butterfly, compensated) and accumulator, and how close do the textbook error bounds come
 * to what actually happens? (sum_order_perms shows the classroom cases and one vector summed
 * in random orders.)
 *
 * What it sweeps (every result against the exact sum of the same rounded inputs, law 1):
 *   error vs n, n = 2^4 .. 2^20 (quick: 2^4 .. 2^12; full: 2^4 .. 2^24), --trials vectors
 *   per point, for every order x accumulator setting x input distribution (uniform [0,1),
 *   normal, ill-conditioned, LLM-like; lib/core/gen.c). Accumulator settings: each input
 *   format of --formats (default fp32, bf16, fp16) accumulated in its own format, and the
 *   16-bit ones also in fp32 (lib/core/sum_setting.h). Each error is set against the
 *   deterministic bound gamma_k sum|x| (Higham) and the probabilistic bound
 *   ~lambda sqrt(k) u sum|x| (Higham & Mary 2019; lambda and its probability are in the CSV
 *   metadata).
 *
 * How to run:
 *   ./lab run sum_order                          default profile (~10 s on 2 cores)
 *   ./lab run sum_order --profile quick          a few seconds
 *   ./lab run sum_order --formats fp16 --orders seq,pairwise,kahan --trials 5
 *   ./lab plot sum_order                         plots/sum_order_{bounds,dists}.png
 *
 * What to look for: on positive data (uniform) the seq error relative to sum|x| grows
 * like sqrt(n) (the slope in the tables, ~0.5), far below its worst-case bound that grows
 * like n; pairwise, blocked, split-K and warp cut the chain a term travels through and
 * grow much more slowly; Kahan and Neumaier stay near one rounding. Accumulating in fp16
 * or bf16 is a different world: the running sum outgrows the terms and swallows them
 * (stagnation), while the same 16-bit inputs accumulated in fp32 are nearly exact. On
 * zero-mean data the partial sums stay small and every order does better.
 *
 * Outputs (all written to temporary names, renamed when complete):
 *   data/sum_order_error.csv      one row per (dist, n, trial, setting, order)
 *   data/sum_order_summary.csv    mean over trials per (dist, setting, order, n), with both
 *                                 bounds
 *   data/sum_order.md             report fragment: question, key table, takeaway */
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
#define SLOPE_FROM_LOG2N 8 /* growth exponents are fitted over n >= 2^8 */
#define PROB_TARGET 0.99   /* lambda is chosen so the probabilistic bound holds with this */

static void must(int st, const char *what)
{
    if (st != DRIFT_OK) drift_die("%s: %s", what, drift_strerror(st));
}

static void progress(void *cli, size_t done, size_t total) { drift_progress(cli, done, total); }

/* ---- main ------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    long trials = 0, log2_n = 0; /* 0: the profile's */
    const drift_cli_opt_t opts[] = {
        {"trials", DRIFT_OPT_INT, &trials, "N", "random vectors per (distribution, n)", 1, 1000, {"1", "3", "10"}},
        {"log2-n", DRIFT_OPT_INT, &log2_n, "E", "the largest n is 2^E (from 2^4; slopes from 2^8)", 10, 24,
            {"12", "20", "24"}},
    };
    const drift_cli_spec_t spec = {.name = "sum_order",
        .question = "How does a floating-point sum's error grow with n, per order and accumulator, against its bounds?",
        .default_formats = "fp32,bf16,fp16",
        .default_orders = "seq,pairwise,blocked:64,splitk:8,warp:32,kahan,neumaier",
        DRIFT_CLI_OPTS(opts),
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

    drift_sum_setting_t S[MAX_SETTINGS];
    const int ns = drift_sum_settings(S, cli.formats, cli.nformats);
    double umax = 0;
    for (int s = 0; s < ns; s++) umax = fmax(umax, drift_format_info(S[s].acc)->unit_roundoff);

    /* lambda: the probabilistic bound holds with PROB_TARGET at the largest n for the largest
     * unit roundoff used (and hence everywhere else) */
    const size_t nmax = (size_t)1 << log2_max;
    const double lambda = drift_sum_lambda(nmax, umax, PROB_TARGET);

    /* ---- error vs n, summarised against the bounds ---- */
    const drift_sum_sweep_t W = {cli.seed, log2_min, log2_max, trials, S, ns, O, no, progress, &cli};
    drift_sum_cell_t *cells = calloc(drift_sum_sweep_ncells(&W), sizeof *cells);
    drift_sum_summary_t *sm = calloc((size_t)nd * ns * no * nn, sizeof *sm);
    double *slope = malloc((size_t)nd * ns * no * sizeof *slope);
    if (!cells || !sm || !slope)
        drift_die_oom((double)drift_sum_sweep_ncells(&W) * sizeof *cells + (double)nd * ns * no * nn * sizeof *sm,
            "the cells of %zu sweep points (--trials, --formats, --orders: fewer)", (size_t)drift_sum_sweep_ncells(&W));
    must(drift_sum_sweep_run(cells, &W), "sum");
    drift_sum_tally_t tally;
    drift_sum_summarise(sm, slope, &tally, cells, &W, lambda, SLOPE_FROM_LOG2N);
    /* ---- declared output (sum_order_report.c) ---- */
    const drift_sum_order_lab_t lab = {&cli, trials, log2_min, log2_max, SLOPE_FROM_LOG2N, O, oname, no, S, ns, lambda,
        umax, &W, cells, sm, slope, tally};
    drift_sum_order_write(&lab);

    free(slope);
    free(sm);
    free(cells);
    return 0;
}
