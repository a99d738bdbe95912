/* argmax_lab.h — everything one run of the argmax-flip experiment knows (its options, kernel sets,
 * planted/realistic trials, fits, references, mitigations), the analyses that run on it once the
 * trials are in, and its declared output: the CSV tables, the Markdown fragment and the summary. */
#ifndef DRIFT_ARGMAX_LAB_H
#define DRIFT_ARGMAX_LAB_H

#include <stdint.h>
#include <stdio.h>

#include "drift.h"
#include "argmax_kernels.h"
#include "cli.h"
#include "flipfit.h"
#include "flips.h"
#include "gen_logits.h"

typedef struct {
    const char *what;
    double us; /* microseconds per logit */
} drift_afcost_t;

typedef struct {
    const char *name;
    int cfg;       /* kernel index, or -1 */
    long n, flips; /* per mode */
    long changed;  /* (c): trials whose argmax differs between batch sizes; -1 n/a */
    double cost;   /* cost ratio vs the baseline; NAN unknown */
    const char *cost_src;
} drift_mit_t;


/* Everything one run knows: the options, the kernels, the measurements, the fits. */
typedef struct {
    drift_cli_t cli;
    drift_cli_opt_t opts[12];
    drift_cli_spec_t spec;
    const char *question;
    drift_device_t dev;
    size_t Ks[DRIFT_AF_MAXK];
    int nK, nF, nT, npol, trials_csv;
    long V, rows, reps, ties, shard;
    drift_polrow_t polk[DRIFT_AF_MAXK]
                       [DRIFT_AF_NPOL]; /* the kernel each GEMM policy picks, per K, (policy, shard, batch) */
    int polcfg[DRIFT_AF_MAXK][DRIFT_AF_MAXF][DRIFT_AF_NPOL][2]; /* [..][out fp32, out format] -> cfg index */
    drift_kset_t KS[DRIFT_AF_MAXK][DRIFT_AF_MAXF];
    drift_hidden_model_t model[DRIFT_AF_MAXK];
    drift_flipset_t PL[DRIFT_AF_MAXK][DRIFT_AF_MAXF], TI[DRIFT_AF_MAXK][DRIFT_AF_MAXF],
        RE[DRIFT_AF_MAXK][DRIFT_AF_MAXF];                               /* planted, ties, realistic */
    unsigned char real_ok[DRIFT_AF_MAXK][DRIFT_AF_MAXF][DRIFT_AF_MAXC]; /* configurations the pruning can bound */
    drift_logbins_t bins;
    drift_flip_fit_t FIT[DRIFT_AF_MAXK][DRIFT_AF_MAXF][DRIFT_AF_MAXC];
    drift_flip_laws_t LAW[DRIFT_AF_MAXK][DRIFT_AF_MAXF]
                         [DRIFT_AF_MAXC]; /* the law each kernel's mechanism implies (flipfit.h) */
    /* Realistic rows against the two references (exact of the rounded inputs, exact of the
     * unrounded fp32 inputs = the fp32 format's exact argmax): rows whose exact argmax changes
     * with input rounding; per kernel, rows flipped against exact(unrounded), the flips of its
     * accumulation alone (its partner without output rounding against exact(rounded)) and the
     * changes output rounding adds (its argmax against the partner's). -1: not available. */
    int fu; /* index of fp32 among the formats, or -1 */
    long ref_in[DRIFT_AF_MAXK][DRIFT_AF_MAXF];
    long ref_tot[DRIFT_AF_MAXK][DRIFT_AF_MAXF][DRIFT_AF_MAXC], ref_acc[DRIFT_AF_MAXK][DRIFT_AF_MAXF][DRIFT_AF_MAXC],
        ref_out[DRIFT_AF_MAXK][DRIFT_AF_MAXF][DRIFT_AF_MAXC];
    int partner[DRIFT_AF_MAXK][DRIFT_AF_MAXF][DRIFT_AF_MAXC]; /* same accumulation, no output rounding; -1 */
    /* Robustness: the headline again at seeds seed+1 .. seed+nrob (largest K, bf16 and fp32,
     * no policies); ROB[0] is this run's own seed. */
    long nrob;
    int robust; /* 1 in a robustness rerun: no GEMM policies */
    struct drift_afrob {
        uint64_t seed;
        double def_sigma, def_p001, eng_d001, eng_d001_ulp, eng_dll, eng_power, kap, kap_lo, kap_hi, ex_d001_ulp;
        int eng_decided, ok;
        long real_def, real_eng, in_flips;
    } ROB[9];
    int nROB;
    int mk, mf; /* the mitigations' point: the largest K, the first narrow format (bf16 if present) */
    const drift_kset_t *MKS;
    double base_sigma, eps_rel[2];
    drift_afcost_t cost[6];
    int ncost;
    drift_mit_t MIT[2][8];
    int nmit;
    size_t done, total; /* progress */
    double t_start, t_planted, t_real, t_total;
} drift_aflab_t;

/* Realistic rows against both references (exact of the rounded inputs, exact of the unrounded fp32 inputs). */
void drift_aflab_two_references(drift_aflab_t *L);
/* The sigma fits and mechanism laws per (K, format, kernel), and the mitigations' baseline. 0 or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_aflab_fit(drift_aflab_t *L);
/* The mitigations at (mk, mf): flip rates, batch changes and cost ratios (needs L->cost). */
void drift_aflab_mitigations(drift_aflab_t *L);
/* Appends L's headline numbers to dst->ROB (the robustness table). */
void drift_aflab_rob_collect(drift_aflab_t *dst, const drift_aflab_t *L);
/* Every output file (CSV tables and the .md fragment), committed together. 0 or DRIFT_ENOMEM (nothing committed). */
DRIFT_MUST_CHECK int drift_aflab_write(const drift_aflab_t *L);
/* The summary for people, written to fp. */
void drift_aflab_summary(FILE *fp, const drift_aflab_t *L);
/* Frees the planted, tie and realistic trial sets of L. */
void drift_aflab_free(drift_aflab_t *L);

/* ---- per-trial work (argmax_trials.c) ---- */
/* One thread's buffers for planted trials at K (one set per thread and chunk, not per trial:
 * malloc/free and the page faults of fresh K-sized blocks were a tenth of the planted phase). */
typedef struct {
    double *h, *w1, *w2, *hf, *W2, *pa, *pb;
    drift_flip_vv_t *vt;
} drift_af_scratch_t;
DRIFT_MUST_CHECK int drift_af_scratch_alloc(
    drift_af_scratch_t *b, size_t K, size_t wmax); /* 0 or DRIFT_ENOMEM; free either way */
void drift_af_scratch_free(drift_af_scratch_t *b);
/* Planted trial i (a pair at a target gap, or an exact tie when i >= nplant) at K = Ks[ki], every
 * format and kernel, recorded into L's flip sets; 0, or nonzero when a step failed. */
DRIFT_MUST_CHECK int drift_aflab_planted_trial(
    drift_aflab_t *L, int ki, size_t i, size_t nplant, drift_af_scratch_t *b);
/* Wall-clock cost per logit of each mitigation (not reproducible: reported apart). 0 or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_aflab_measure_costs(drift_aflab_t *L);

#endif
