/* forecast_summary.c — the fragment's closing, over every pair (forecast_lab.h): the riskiest
 * held-out prompts and the takeaway from the numbers above it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "forecast_lab.h"
#include "parting.h"

void drift_fc_riskiest(drift_fclab_t *L, drift_out_t *out)
{
    drift_fc_risk_t *risk = L->risk;
    const int nrisk = L->nrisk;
    /* highest forecast first; ties keep the sweep's order */
    for (int i = 1; i < nrisk; i++)
        for (int j = i; j > 0 && risk[j].p > risk[j - 1].p; j--) {
            drift_fc_risk_t t = risk[j];
            risk[j] = risk[j - 1], risk[j - 1] = t;
        }
    for (int j = 0; j < nrisk && j < 8; j++) {
        const drift_fc_risk_t *r = &risk[j];
        int i = r->prompt;
        char p[32], rs[64], at[32];
        snprintf(p, sizeof p, "%.3f", r->p);
        snprintf(rs, sizeof rs, r->step >= 0 ? "step %d (%.3g)" : "-", r->step, r->step_gap);
        const drift_gen_t *a = &L->runs[L->ra[r->pair]].g[i], *b = &L->runs[L->rb[r->pair]].g[i];
        int n = a->n < b->n ? a->n : b->n, st = drift_first_difference(a->token, b->token, n);
        snprintf(at, sizeof at, st >= 0 ? "step %d" : "no", st);
        drift_row(out, T_MD_RISK, DRIFT_TXT(L->pair[r->pair]->id), DRIFT_INT(L->pr[i].index), DRIFT_TXT(L->pr[i].kind),
            DRIFT_TXT(p), DRIFT_TXT(rs), DRIFT_TXT(at));
    }
    drift_md_end(out, T_MD_RISK);
}

void drift_fc_takeaway(const drift_fclab_t *L, drift_out_t *out)
{
    const int PT = L->PT, Z = L->Z, NT = L->NT;
    const long *why_all = L->why_all;
    drift_md_text(out, "**Takeaway.**\n\n");
    char scored[512] = "", none[512] = "", few[512] = "", cal[1024] = "";
    for (int q = 0; q < L->npair; q++) {
        const drift_fc_pair_sum_t *u = &L->sums[q];
        const char *id = L->pair[q]->id;
        /* a skill resting on one or two partings (or all but one or two) is not a measure: its
         * bootstrap keeps only the resamples that hold them */
        const int rare = !isnan(u->skill) && (u->k < DRIFT_FC_MIN_EVENTS || PT - u->k < DRIFT_FC_MIN_EVENTS);
        /* every scored pair on one line: whether its pooled skill lands above or below 0.3
         * changes with the seeds (batch-alone: 0.28 at seeds 1-3, 0.60 at 4-6), so the takeaway
         * gives the estimate and its interval, not a verdict against the goal */
        char *dst = isnan(u->skill) ? none : rare ? few : scored;
        size_t at = strlen(dst);
        if (isnan(u->skill))
            snprintf(dst + at, 512 - at, "%s%s", at ? ", " : "", id);
        else if (rare)
            snprintf(dst + at, 512 - at, "%s%s (%ld of %d parted)", at ? ", " : "", id, u->k, PT);
        else if (Z > 1)
            snprintf(dst + at, 512 - at, "%s%s %.2f [%.2f, %.2f] (0.3 at %d of %d seeds alone)", at ? ", " : "", id,
                u->skill, u->lo, u->hi, u->seeds_at_goal, Z);
        else
            snprintf(dst + at, 512 - at, "%s%s %.2f [%.2f, %.2f]", at ? ", " : "", id, u->skill, u->lo, u->hi);
        at = strlen(cal);
        snprintf(cal + at, sizeof cal - at, "%s%s %.2g against %ld", q ? ", " : "", id, u->sump, u->k);
    }
    if (scored[0])
        drift_md_text(out,
            "- Held out (%s), Brier skill over the constant rate (0: no better than it; 95 %% bootstrap, %d prompts): "
            "%s.\n",
            Z > 1 ? "seeds pooled" : "one seed", PT, scored);
    if (few[0])
        drift_md_text(
            out, "- Too few partings (or texts kept together) to score (under %d): %s.\n", DRIFT_FC_MIN_EVENTS, few);
    if (none[0])
        drift_md_text(out,
            "- No skill to measure on %s: no held-out prompt parted at any seed, so the constant rate makes no error; "
            "the forecast's own sum below says how close to none it came.\n",
            none);
    drift_md_text(out, "- Partings forecast (sum) against observed: %s.\n", cal);
    if (L->tie_n)
        drift_md_text(out,
            "- Where it errs: %ld held-out forecasts rest on a tie of A's bf16 logits (risk pi/2); they forecast %.2g partings, %ld happened.\n",
            L->tie_n, L->tie_p, L->tie_k);
    if (L->tie_text[0])
        drift_md_text(out,
            "- Tie-breaker (llama.cpp's two builds, %d prompts), parted (forecast) by EPS, 0 plain greedy: %s. "
            "Of the %ld partings under the rule %ld had the gaps either side of EPS, %ld another top two inside EPS, %ld a gap beyond it: the boundary moves to EPS.\n",
            NT, L->tie_text, why_all[0] + why_all[1] + why_all[2], why_all[0], why_all[1], why_all[2]);
    drift_md_text(out, "\n");
}
