/* speculative_takeaway.c — the speculative experiment's takeaway (speculative_takeaway.h). */
#include "speculative_takeaway.h"

#include "cli.h"
#include "stats.h"

void drift_spec_takeaway(drift_out_t *out, const drift_spec_takeaway_t *t)
{
    const int R = t->R;
    drift_md_text(out, "**Takeaway.**\n\n");
    if (t->first_change > 0)
        drift_md_text(out,
            "- Kernel plans: on %s with %ld SMs and split-K from %ld, the vendor-like policy first gives M rows other kernels than M = 1 at M = "
            "%d (k = %d); the longest verify pass here has M = %d, so %s. GEMV kernels for M = 1, as real libraries use, are not modelled.\n",
            t->model, t->sms, t->min_slice, t->first_change, t->first_change - 1, t->kmax + 1,
            t->kmax + 1 < t->first_change ? "no draft length of the sweep reaches it"
                                          : "the longer drafts of the sweep reach it");
    else
        drift_md_text(out,
            "- Kernel plans (data/speculative_plans.csv): on %s with %ld SMs and split-K from %ld, "
            "no pass of up to %d rows gets other kernels than M = 1 under the vendor-like policy, so no draft length of the sweep (up to M = %d) reaches a change.\n",
            t->model, t->sms, t->min_slice, t->plan_search, t->kmax + 1);
    for (int pi = 0; pi < DRIFT_NPOLICIES; pi++) {
        double lo, hi;
        if (drift_wilson(&lo, &hi, t->prompts[pi], R, DRIFT_Z95))
            drift_die("no Wilson interval for %ld of %d", (long)t->prompts[pi], R);
        const char *who = pi ? "Batch-invariant kernels" : "Vendor-like kernels";
        if (t->differ[pi])
            drift_md_text(out,
                "- %s: %ld of %ld speculative completions (2 recipes x %d draft lengths x %d prompts) differ from plain greedy decoding of the "
                "same configuration; %ld of %d prompts have one that differs (%.3g %% to %.3g %% at 95 %%, the prompt the unit).\n",
                who, t->differ[pi], t->runs[pi], t->nk, R, t->prompts[pi], R, 100 * lo, 100 * hi);
        else
            drift_md_text(out,
                "- %s: 0 of %ld speculative completions (2 recipes x %d draft lengths x %d prompts) differ from plain greedy: 0 of %d prompts, < %.3g %% at 95 %%%s.\n",
                who, t->runs[pi], t->nk, R, R, 100 * hi,
                pi ? " (by construction: a row's bits do not depend on M)" : "");
    }
    if (t->acc_min == t->acc_max)
        drift_md_text(out,
            "- The draft (LayerCast) has %.3g %% of its k tokens accepted per verify pass in every configuration and k (mean over prompts).\n",
            100 * t->acc_min);
    else
        drift_md_text(out,
            "- The draft (LayerCast) has %.3g %% to %.3g %% of its k tokens accepted per verify pass (mean over prompts, the range over configurations and k).\n",
            100 * t->acc_min, 100 * t->acc_max);
    if (t->scaled)
        drift_md_text(out,
            "- The policy here is scaled to the tiny model (%ld SMs, split-K from %ld); "
            "with the unscaled H100 policy (132 SMs, slice 256) no GEMM of stories260K splits and vendor-like is batch invariant on it.\n",
            t->sms, t->min_slice);
    drift_md_text(out, "\n");
}
