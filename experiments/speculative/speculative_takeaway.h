/* speculative_takeaway.h — the speculative experiment's takeaway: every number from its
 * summary and plan tables. */
#ifndef DRIFT_SPECULATIVE_TAKEAWAY_H
#define DRIFT_SPECULATIVE_TAKEAWAY_H

#include "output.h"
#include "policy.h"

typedef struct {
    const char *model;             /* the checkpoint's file name, or stories260K */
    long sms, min_slice;           /* the device the kernel policy fills */
    int scaled;                    /* the policy scaled to the tiny model (the quick profile) */
    int R, nk, kmax;               /* prompts, draft lengths, the longest draft */
    int first_change;              /* the first M whose kernels differ from M = 1's under vendor-like (-1: none) */
    int plan_search;               /* the largest M searched for it */
    long differ[DRIFT_NPOLICIES];  /* per policy: speculative completions that differ from plain greedy, */
    long runs[DRIFT_NPOLICIES];    /* of these, */
    long prompts[DRIFT_NPOLICIES]; /* and the prompts that have one */
    double acc_min, acc_max;       /* mean tokens accepted per pass as a share of k, over (configuration, k) */
} drift_spec_takeaway_t;

/* The takeaway's lines, into the Markdown fragment. */
void drift_spec_takeaway(drift_out_t *out, const drift_spec_takeaway_t *t);

#endif
