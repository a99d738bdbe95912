/* argmax_flip.c — how small a logit gap flips argmax.
 *
 * Question: greedy decoding takes the token with the largest logit h . w_v. When the exact
 * top-1 and top-2 logits are closer than the numerical error of the LM head, the chosen token
 * depends on the format, the kernel's reduction order and the batch shape. How close must two
 * logits be before they flip? (How often that happens on realistic heads: argmax_flip_realistic;
 * what the usual mitigations buy: argmax_flip_mitigations. Both rerun these planted pairs for
 * the fits they read.)
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
 *
 * Measured: flip rate per gap bin with Wilson 95% intervals; the maximum-likelihood sigma of
 * P(flip | gap D) = Phi(-D/sigma) with its binned-deviance goodness of fit (lib/core/stats.h), its
 * prediction from rounding-error analysis, and the critical gaps; the law each kernel's
 * mechanism implies (flipfit.h). Exact ties are reported apart and never counted as flips.
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
 *   ./lab run argmax_flip --K 4096 --V 151936 --reps 64
 *   ./lab run argmax_flip --profile quick --formats bf16,fp32 --orders seq,tc:h100
 *   ./lab plot argmax_flip                         plots/argmax_flip_{formats,kernels}.png
 *
 * What to look for: with fp32 accumulation and fp32 logits the four input formats flip at
 * nearly the same gaps (products of narrow inputs are exact in fp32; only the accumulation
 * errs), around 1e-6 s at K = 4096; sigma grows like sqrt(K) and shrinks with tree-like
 * orders; storing logits in bf16 or fp16 moves the critical gap up by orders of magnitude, and
 * there the Phi model fits badly (the output grid, not Gaussian noise, decides).
 *
 * Outputs (all written only after everything is computed; temporary file + rename):
 *   data/argmax_flip.csv              planted: flip rate per (K, format, kernel, gap bin)
 *   data/argmax_flip_fit.csv          planted: sigma fit, goodness, prediction, critical gaps
 *   data/argmax_flip_ties.csv         planted exact ties: reported, never flips
 *   data/argmax_flip_laws.csv         planted: each kernel's mechanism law (gauss / triangle / conv,
 *                                     lib/core/fliplaw.h) fitted, with critical gaps where flips occur
 *   data/argmax_flip.md               the report fragment (with the headline at --robust more seeds)
 *   data/argmax_flip_trials.csv       with --trials: every planted trial */
#include "argmax_lab.h"
#include "argmax_run.h"
#include "drift.h"

int main(int argc, char **argv)
{
    static drift_aflab_t lab, base, rerun;
    drift_aflab_t *L = &lab;

    drift_aflab_setup(L, argc, argv, "argmax_flip",
        "At which exact top-1/top-2 logit gap does greedy decoding pick another token, per format, kernel and K?",
        DRIFT_AF_OPT_TIES | DRIFT_AF_OPT_TRIALS | DRIFT_AF_OPT_ROBUST);
    base = *L; /* the options as parsed: the robustness reruns start from them */
    /* planted gaps and exact ties, every kernel, and their fits */
    drift_aflab_sweep(L, "planted pairs");
    drift_aflab_collect_headline(L, L);
    drift_aflab_robust(L, &base, &rerun, 1, NULL); /* the headline at further seeds (largest K, bf16 and fp32) */
    L->seconds.total = drift_af_now() - L->seconds.start;

    /* every CSV table, the report fragment and the summary, committed together */
    if (drift_afp_write(L)) drift_die("writing the results: out of memory (--reps, --ties: fewer)");
    drift_aflab_free(L);
    return 0;
}
