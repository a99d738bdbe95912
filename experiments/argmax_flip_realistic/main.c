/* argmax_flip_realistic.c — how often argmax flips on realistic LM heads.
 *
 * Question: argmax_flip finds the gap below which each kernel flips argmax on planted pairs.
 * How often does a realistic head have its exact top-1 and top-2 logits that close, how many
 * rows does each kernel flip there, and how much of it is input rounding, accumulation or
 * output rounding?
 *
 * What it sweeps, for each hidden size K (--K) and input format (--formats): argmax_flip's
 * kernels (argmax_run.h) on a full head of V tokens (--V), weights N(0, 1/K), hidden states with
 * outlier channels, --rows hidden states; every configuration's argmax against the exact argmax,
 * made affordable by rigorous pruning (drift_lmhead_eval_pruned_head, lmhead.h): a float pass
 * gives approximate logits with a proven error bound, every token whose upper bound lies below
 * the second-best lower bound (for every configuration and for the exact value at once) is
 * discarded, and only the survivors get exact and emulated logits. Own-format accumulation has
 * no usable bound and is left out. The planted pairs of argmax_flip (same streams, same pairs,
 * no ties) are rerun for the fits the predictions read: the expected flips from each kernel's
 * sigma, and the rows below each critical gap.
 *
 * Measured: the flip fraction per (K, format, kernel) with Wilson 95% intervals, the expected
 * flips, the distribution of exact top-2 gaps, and the rows against two references: exact of the
 * rounded inputs and exact of the unrounded fp32 inputs (input rounding, accumulation and output
 * rounding apart). With --robust N the realistic headline again at seeds seed+1 .. seed+N.
 *
 * How to run:
 *   ./lab run argmax_flip_realistic                default profile (K = 1024, 4096; V = 32000)
 *   ./lab run argmax_flip_realistic --K 4096 --V 151936 --rows 256
 *   ./lab plot argmax_flip_realistic               plots/argmax_flip_realistic_gaps.png
 *
 * What to look for: flips are rare with fp32 logits and common with bf16 logits; rounding the
 * inputs alone changes more exact argmaxes than fp32 accumulation flips.
 *
 * Outputs (all written only after everything is computed; temporary file + rename):
 *   data/argmax_flip_realistic.csv        flip fraction per (K, format, kernel)
 *   data/argmax_flip_realistic_gaps.csv   distribution of exact top-2 gaps
 *   data/argmax_flip_realistic_below.csv  fraction of rows below each critical gap
 *   data/argmax_flip_realistic_refs.csv   exact(rounded) vs exact(unrounded inputs): input rounding,
 *                                         accumulation and output rounding apart
 *   data/argmax_flip_realistic.md         the report fragment */
#include "argmax_realistic.h"
#include "argmax_run.h"
#include "drift.h"

int main(int argc, char **argv)
{
    static drift_aflab_t lab, base, rerun;
    drift_aflab_t *L = &lab;

    drift_aflab_setup(L, argc, argv, "argmax_flip_realistic",
        "How often does argmax flip on realistic LM heads, and how much is input rounding, accumulation or output "
        "rounding?",
        DRIFT_AF_OPT_ROWS | DRIFT_AF_OPT_ROBUST);
    base = *L; /* the options as parsed: the robustness reruns start from them */
    /* the planted pairs for the fits, then the realistic heads, every kernel */
    drift_aflab_sweep(L, "planted pairs and realistic heads");
    drift_afr_two_references(L);
    drift_aflab_collect_headline(L, L);
    /* the realistic headline at further seeds (largest K, bf16 and fp32): no fits needed */
    drift_aflab_robust(L, &base, &rerun, 0, drift_afr_two_references);
    L->seconds.total = drift_af_now() - L->seconds.start;

    /* every CSV table, the report fragment and the summary, committed together */
    if (drift_afr_write(L)) drift_die("writing the results: out of memory (--reps, --rows: fewer)");
    drift_aflab_free(L);
    return 0;
}
