/* argmax_flip.c — how small a logit gap flips argmax.
 *
 * Question: greedy decoding takes the token with the largest logit h . w_v. When the exact
 * top-1 and top-2 logits are closer than the numerical error of the LM head, the chosen token
 * depends on the format, the kernel's reduction order and the batch shape. How close must two
 * logits be before they flip, how often does that happen on realistic heads, and what do the
 * usual mitigations buy?
 *
 * What it sweeps, for each hidden size K (--K) and input format (--formats):
 *   kernels: every order of --orders with fp32 accumulation and fp32 logits (the first order,
 *     seq by default, is "the default kernel"); the same with logits stored in the format
 *     (bf16, fp16: what a model running in that dtype returns); own-format accumulation
 *     (bf16, fp16; tc:h100 with fp16 output for fp16); the exact dot rounded once to fp32;
 *     and the orders the GEMM policies of lib/ops/policy.h pick for batch sizes 1..1024.
 *   (1) planted mode: pairs of weight rows whose EXACT gap h.w1 - h.w2 is planted at
 *     log-spaced values from 1e-7 to 1 logit scale s = ||h||_2/sqrt(K) (drift_plant_gap;
 *     binned by the gap actually achieved, verified exactly), the top row at a random one of
 *     the two positions; plus planted exact ties (drift_plant_tie).
 *   (2) realistic mode: a full head of V tokens (--V), weights N(0, 1/K), hidden states with
 *     outlier channels, --rows hidden states; every configuration's argmax against the exact
 *     argmax, made affordable by rigorous pruning (drift_lmhead_eval_pruned_head, lmhead.h):
 *     a float pass gives approximate logits with a proven error bound, every token whose upper
 *     bound lies below the second-best lower bound (for every configuration and for the exact
 *     value at once) is discarded, and only the survivors get exact and emulated logits.
 *   (3) mitigations at the largest K: bf16 logits from tensor cores (the baseline) against
 *     fp32 logits, an exact LM head, a batch-invariant kernel policy, and a gap-threshold
 *     tie-breaker with its threshold set from the measured sigma.
 *
 * Measured: flip rate per gap bin with Wilson 95% intervals; the maximum-likelihood sigma of
 * P(flip | gap D) = Phi(-D/sigma) with its binned-deviance goodness of fit (lib/core/stats.h), its
 * prediction from rounding-error analysis, and the critical gaps; in the realistic mode the
 * flip fraction and the distribution of exact top-2 gaps. Exact ties are reported apart and
 * never counted as flips.
 *
 * The two predictions of sigma (the norm form c sqrt(K) u ||h||_rms ||w1 - w2||, and the same
 * random-rounding model on the kernel's actual partial sums), and how they are derived: lib/llm/flips.h.
 *
 * Critical gaps: P(flip) = Phi(-D/sigma) is 50% only at D = 0 (a symmetric error makes a
 * flip at worst a coin toss), so "the 50% critical gap" is taken as the gap where flips are
 * half as likely as the coin toss, P = 25%: D_50 = 0.674 sigma; and D_0.1% = 3.09 sigma.
 *
 * How to run:
 *   ./lab run argmax_flip                          default profile (K = 1024, 4096; V = 32000)
 *   ./lab run argmax_flip --K 4096 --V 151936 --rows 256 --reps 64
 *   ./lab run argmax_flip --profile quick --formats bf16,fp32 --orders seq,tc:h100
 *   ./lab plot argmax_flip                         plots/argmax_flip_{formats,kernels,gaps}.png
 *
 * What to look for: with fp32 accumulation and fp32 logits the four input formats flip at
 * nearly the same gaps (products of narrow inputs are exact in fp32; only the accumulation
 * errs), around 1e-6 s at K = 4096; sigma grows like sqrt(K) and shrinks with tree-like
 * orders; storing logits in bf16 or fp16 moves the critical gap up by orders of magnitude, and
 * there the Phi model fits badly (the output grid, not Gaussian noise, decides); in the
 * realistic mode flips are rare with fp32 logits and common with bf16 logits.
 *
 * Outputs (all written only after everything is computed; temporary file + rename):
 *   data/argmax_flip.csv              planted: flip rate per (K, format, kernel, gap bin)
 *   data/argmax_flip_fit.csv          planted: sigma fit, goodness, prediction, critical gaps
 *   data/argmax_flip_ties.csv         planted exact ties: reported, never flips
 *   data/argmax_flip_realistic.csv    realistic: flip fraction per (K, format, kernel)
 *   data/argmax_flip_gaps.csv         realistic: distribution of exact top-2 gaps
 *   data/argmax_flip_below.csv        realistic: fraction of rows below each critical gap
 *   data/argmax_flip_batch.csv        argmax across batch sizes under the two GEMM policies
 *   data/argmax_flip_mitigations.csv  the mitigations table (flip rates)
 *   data/argmax_flip_timing.csv       measured costs: NOT reproducible (wall-clock times)
 *   data/argmax_flip_laws.csv         planted: each kernel's mechanism law (gauss / triangle / conv,
 *                                     lib/core/fliplaw.h) fitted, with critical gaps where flips occur
 *   data/argmax_flip_refs.csv         realistic: exact(rounded) vs exact(unrounded inputs): input
 *                                     rounding, accumulation and output rounding apart
 *   data/argmax_flip.md               the report fragment (with the headline at --robust more seeds)
 *   data/argmax_flip_trials.csv       with --trials: every planted trial */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "argmax_kernels.h"
#include "argmax_lab.h"
#include "cli.h"
#include "drift.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "policy.h"

#define EXP "argmax_flip"

/* Options, profile defaults and the hidden sizes. */
static void setup(drift_aflab_t *L, int argc, char **argv)
{
    drift_intlist_t Kopt = {{0}, 0};
    L->V = 0, L->rows = -1, L->reps = 0, L->ties = -1, L->shard = 8,
    L->robust_seeds = -1; /* the profile values replace these (cli.h) */
    const char *device = "h100";
    L->trials_csv = 0;
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INTLIST, &Kopt, "N,N,...", "hidden sizes", 16, 65536, {"1024", "1024,4096", "1024,4096,8192"}},
        {"V", DRIFT_OPT_INT, &L->V, "N", "vocabulary of the realistic head", 2, 1000000, {"4000", "32000", "32000"}},
        {"rows", DRIFT_OPT_INT, &L->rows, "N", "realistic hidden states per K (0: no realistic mode)", 0, 1000000,
            {"32", "512", "2048"}},
        {"reps", DRIFT_OPT_INT, &L->reps, "N", "planted pairs per target gap (29 targets)", 1, 1000000,
            {"8", "96", "400"}},
        {"ties", DRIFT_OPT_INT, &L->ties, "N", "planted exact ties per K", 0, 1000000, {"8", "32", "128"}},
        {"shard", DRIFT_OPT_INT, &L->shard, "N",
            "the policy also sees N = V/shard (a vocabulary-parallel LM head; default 8)", 1, 4096, {0}},
        {"device", DRIFT_OPT_STRING, &device, "NAME",
            "device the policies size for: a card of ./lab calc cards, e.g. v100, a100, h100, b200, l40s, rtx4090 (default h100)",
            0, 0, {0}},
        {"trials", DRIFT_OPT_FLAG, &L->trials_csv, "", "also write data/argmax_flip_trials.csv (every planted trial)",
            0, 0, {0}},
        {"robust", DRIFT_OPT_INT, &L->robust_seeds, "N",
            "also run seeds seed+1 .. seed+N at the largest K (bf16, fp32) for the headline's robustness", 0, 8,
            {"0", "2", "2"}},
    };
    _Static_assert(sizeof opts <= sizeof L->opts, "drift_aflab_t.opts holds every option");
    memcpy(L->opts, opts, sizeof opts); /* the parsed cli keeps pointers to its spec */
    L->spec = (drift_cli_spec_t){
        .name = EXP,
        .question =
            "How small a logit gap flips argmax: at which exact top-1/top-2 gap does greedy decoding pick another token, "
            "per format, kernel and K, and how often does it happen?",
        .default_formats = "bf16,fp16,tf32,fp32",
        .default_orders = "seq,splitk:16,pairwise,warp:32,tc:h100",
        .opts = L->opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
        .cpu_only = NULL, /* logits go through the dispatcher (--backend cuda) */
        .summary = NULL,  /* the run's own, from its numbers (drift_out_summary) */
    };
    drift_cli_parse(&L->cli, &L->spec, argc, argv);
    if (drift_device_lookup(&L->device, device))
        drift_die("--device: unknown device '%s' (accepted: a card of ./lab calc cards)", device);
    if (L->cli.nformats > DRIFT_AF_MAXF) drift_die("--formats: at most %d formats", DRIFT_AF_MAXF);
    drift_lmhead_require_inputs(L->cli.formats, L->cli.nformats);
    L->nKs = 0;
    if (Kopt.n > DRIFT_AF_MAXK) drift_die("--K: at most %d values", DRIFT_AF_MAXK);
    for (int i = 0; i < Kopt.n; i++) L->Ks[L->nKs++] = (size_t)Kopt.v[i];
    /* refused here, not by the first tie trial after the larger K's were computed */
    for (int i = 0; i < Kopt.n && L->ties > 0; i++)
        if (Kopt.v[i] < 2 * DRIFT_PLANT_TIE_PAIRS)
            drift_die("--K: %ld is too small for the planted ties (each swaps %d pairs of channels; accepted: K >= %d, "
                      "or --ties 0)",
                Kopt.v[i], DRIFT_PLANT_TIE_PAIRS, 2 * DRIFT_PLANT_TIE_PAIRS);
    drift_require_memory(&L->cli, L->rows ? 12.0 * (double)L->V * (double)drift_intlist_max(&Kopt) : 0, "--K, --V");
    L->nformats = L->cli.nformats;
    L->ntargets = 7 * DRIFT_AF_PER_DECADE + 1; /* 1e-7 .. 1 */
    L->seconds.start = drift_af_now();
}

/* ---- main: the protocol -------------------------------------------------------------------- */

/* The robustness rerun at seed + e: the options as parsed, the largest K, bf16 and fp32, the
 * first order, no GEMM policies. 0 when the run has neither bf16 nor fp32. */
static int robust_rerun(drift_aflab_t *R, const drift_aflab_t *base, const drift_aflab_t *L, long e)
{
    *R = *base;
    R->robust_rerun = 1;
    R->cli.seed = L->cli.seed + (uint64_t)e;
    R->Ks[0] = L->Ks[L->nKs - 1], R->nKs = 1;
    int nf = 0;
    for (int fi = 0; fi < L->nformats; fi++)
        if (L->cli.formats[fi] == DRIFT_BF16 || L->cli.formats[fi] == DRIFT_FP32)
            R->cli.formats[nf++] = L->cli.formats[fi];
    R->cli.nformats = R->nformats = nf;
    R->cli.norders = 1;
    return nf > 0;
}

int main(int argc, char **argv)
{
    static drift_aflab_t lab, base, rerun;
    drift_aflab_t *L = &lab;

    setup(L, argc, argv); /* question and options */
    base = *L;            /* the options as parsed: the robustness reruns start from them */
    /* (1) planted gaps and exact ties, (2) realistic heads, every kernel; fits and references */
    drift_aflab_sweep(L, "planted and realistic heads");
    drift_aflab_collect_headline(L, L);
    for (long e = 1; e <= L->robust_seeds && robust_rerun(&rerun, &base, L, e); e++) {
        char phase[96]; /* the headline at further seeds (largest K, bf16 and fp32) */
        snprintf(phase, sizeof phase, "the headline at seed %llu (%ld of %ld)", (unsigned long long)rerun.cli.seed, e,
            L->robust_seeds);
        drift_aflab_sweep(&rerun, phase);
        drift_aflab_collect_headline(L, &rerun);
        drift_aflab_free(&rerun);
    }
    if (drift_aflab_measure_costs(L))
        drift_die("measuring the kernels' costs: out of memory (--V, --K: smaller)"); /* wall clock, reported apart */
    L->seconds.total = drift_af_now() - L->seconds.start;
    drift_aflab_mitigations(L); /* (3) what the mitigations buy */

    /* every CSV table, the report fragment and the summary, committed together */
    if (drift_aflab_write(L)) drift_die("writing the results: out of memory (--reps, --ties, --rows: fewer)");
    drift_aflab_free(L);
    return 0;
}
