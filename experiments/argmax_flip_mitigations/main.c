/* argmax_flip_mitigations.c — what the usual mitigations of argmax flips buy, and at what cost.
 *
 * Question: argmax_flip and argmax_flip_realistic find that logits stored in bf16 or fp16 flip
 * argmax far more often than fp32 logits, and that the batch shape changes the kernel. What do
 * fp32 logits, an exact LM head, a batch-invariant GEMM policy and a gap-threshold tie-breaker
 * buy against that, and what do they cost?
 *
 * What it sweeps: argmax_flip's kernels (argmax_run.h), with its planted pairs (no ties) and
 * argmax_flip_realistic's heads, every K and format, rerun from the same streams; then at the
 * headline's point (the largest K, bf16 or the first narrow format) bf16 logits from tensor cores
 * (the baseline) against (a) fp32 logits, (b) an exact LM head, (c) a batch-invariant kernel
 * policy (lib/ops/policy.h; the vendor-like policy for reference) and (d) a gap-threshold
 * tie-breaker with its threshold from the baseline's law or its Phi fit.
 *
 * Measured: each mitigation's flip rate on the planted pairs and the realistic rows with Wilson
 * 95% intervals, the trials whose argmax changes between batch sizes 1..1024 under each GEMM
 * policy (every K and format), the modelled cost of each policy's kernel, and the wall-clock cost
 * per logit of each mitigation (not reproducible: apart, in _timing.csv).
 *
 * How to run:
 *   ./lab run argmax_flip_mitigations              default profile (K = 1024, 4096; V = 32000)
 *   ./lab run argmax_flip_mitigations --device a100 --shard 4
 *
 * Outputs (all written only after everything is computed; temporary file + rename):
 *   data/argmax_flip_mitigations.csv         the mitigations table (flip rates)
 *   data/argmax_flip_mitigations_batch.csv   argmax across batch sizes under the two GEMM policies
 *   data/argmax_flip_mitigations_timing.csv  measured costs: NOT reproducible (wall-clock times)
 *   data/argmax_flip_mitigations.md          the report fragment */
#include "argmax_mitigations.h"
#include "argmax_run.h"
#include "drift.h"

int main(int argc, char **argv)
{
    static drift_aflab_t lab;
    static drift_afm_t mit;
    drift_aflab_t *L = &lab;

    drift_aflab_setup(L, argc, argv, "argmax_flip_mitigations",
        "What do fp32 logits, an exact LM head, a batch-invariant GEMM policy and a gap threshold buy against "
        "argmax flips, at what cost?",
        DRIFT_AF_OPT_ROWS);
    /* the planted pairs and the realistic heads, every kernel, with the fits the thresholds read */
    drift_aflab_sweep(L, "planted pairs and realistic heads");
    if (drift_afm_measure_costs(&mit, L))
        drift_die("measuring the kernels' costs: out of memory (--V, --K: smaller)"); /* wall clock, reported apart */
    L->seconds.total = drift_af_now() - L->seconds.start;
    drift_afm_mitigations(&mit, L); /* what the mitigations buy */

    /* every CSV table, the report fragment and the summary, committed together */
    drift_afm_write(&mit, L);
    drift_aflab_free(L);
    return 0;
}
