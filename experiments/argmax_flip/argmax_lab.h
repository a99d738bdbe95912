/* argmax_lab.h — everything one run of the argmax-flip experiment knows (its options, kernel sets,
 * planted/realistic trials, fits, references, mitigations), the analyses that run on it once the
 * trials are in, and its declared output: the CSV tables, the Markdown fragment and the summary. */
#ifndef DRIFT_ARGMAX_LAB_H
#define DRIFT_ARGMAX_LAB_H

#include <stdint.h>

#include "drift.h"
#include "argmax_kernels.h"
#include "cli.h"
#include "flipfit.h"
#include "flips.h"
#include "gen_logits.h"
#include "output.h"

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

/* One (K, format) point of the sweep: its kernels and everything measured with them. */
typedef struct {
    drift_kset_t kernels;
    int policy_kernel[DRIFT_AF_NPOL][2]; /* [policy row][out fp32, out format] -> kernel index */
    drift_flipset_t planted, ties, realistic;
    unsigned char realistic_ok[DRIFT_AF_MAXC]; /* kernels the pruning can bound */
    drift_flip_fit_t fits[DRIFT_AF_MAXC];
    drift_flip_laws_t laws[DRIFT_AF_MAXC]; /* the law each kernel's mechanism implies (flipfit.h) */
    /* Realistic rows against the two references (exact of the rounded inputs, exact of the
     * unrounded fp32 inputs = the fp32 format's exact argmax): rows whose exact argmax changes
     * with input rounding; per kernel, rows flipped against exact(unrounded), the flips of its
     * accumulation alone (its partner without output rounding against exact(rounded)) and the
     * changes output rounding adds (its argmax against the partner's). -1: not available. */
    long input_rounding_flips;
    long flips_vs_unrounded[DRIFT_AF_MAXC], accumulation_flips[DRIFT_AF_MAXC], output_rounding_changes[DRIFT_AF_MAXC];
    int partner[DRIFT_AF_MAXC]; /* same accumulation, no output rounding; -1 */
} drift_af_cell_t;

/* The headline numbers of one seed (largest K, bf16 or the first narrow format): def_ the default
 * kernel's Phi fit, eng_ the engine's (logits stored in the format) law against the Gaussian, kap
 * the exact head's triangle scale with its interval, real_ the realistic flips of both, in_flips
 * the rows input rounding alone flips. */
typedef struct {
    uint64_t seed;
    double def_sigma, def_p001, eng_d001_ulp, eng_dll, eng_power, kap, kap_lo, kap_hi;
    int eng_decided;
    long real_def, real_eng, in_flips;
} drift_af_headline_t;

/* Everything one run knows: the options, the kernels, the measurements, the fits. */
typedef struct {
    drift_cli_t cli;
    drift_cli_opt_t opts[12];
    drift_cli_spec_t spec;
    drift_device_t device; /* the card the GEMM policies size for */
    /* options (cli.h fills them from the profile) */
    long V, rows, reps, ties, shard, robust_seeds;
    int trials_csv;
    size_t Ks[DRIFT_AF_MAXK];
    int nKs, nformats, ntargets, npolicy_rows;
    drift_polrow_t policy_pick[DRIFT_AF_MAXK]
                              [DRIFT_AF_NPOL]; /* the kernel each GEMM policy picks, per K, (policy, shard, batch) */
    drift_hidden_model_t hidden_model[DRIFT_AF_MAXK];
    drift_af_cell_t cell[DRIFT_AF_MAXK][DRIFT_AF_MAXF];
    drift_logbins_t gap_bins;
    int fp32_index; /* index of fp32 among the formats, or -1 */
    /* The headline's point, where the report and the mitigations look: the largest K and the
     * first narrow format (bf16 if present). */
    struct {
        int k, f;
        const drift_kset_t *kernels;
    } headline;
    /* Robustness: the headline again at seeds seed+1 .. seed+robust_seeds (largest K, bf16 and
     * fp32, no policies); seeds[0] is this run's own seed. */
    int robust_rerun; /* 1 in a robustness rerun: no GEMM policies */
    drift_af_headline_t seeds[9];
    int nseeds;
    struct {
        double base_sigma, eps_rel[2];
        drift_afcost_t cost[6];
        int ncost;
        drift_mit_t rows[2][8]; /* [planted, realistic][mitigation] */
        int n;
    } mit;
    size_t progress_done, progress_total;
    struct {
        double start, planted, realistic, total;
    } seconds;
} drift_aflab_t;

/* One sweep (argmax_sweep.c): kernels and hidden-state models per K, planted pairs and ties, realistic
 * heads (progress under the phase name), the fits and the two references. Dies on a failure. */
void drift_aflab_sweep(drift_aflab_t *L, const char *phase);
/* Realistic rows against both references (exact of the rounded inputs, exact of the unrounded fp32 inputs). */
void drift_aflab_two_references(drift_aflab_t *L);
/* The sigma fits and mechanism laws per (K, format, kernel), and the mitigations' baseline. 0 or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_aflab_fit(drift_aflab_t *L);
/* The mitigations at the headline's point: flip rates, batch changes and cost ratios (needs L->mit.cost). */
void drift_aflab_mitigations(drift_aflab_t *L);
/* Appends L's headline numbers to dst->seeds (the robustness table). */
void drift_aflab_collect_headline(drift_aflab_t *dst, const drift_aflab_t *L);
/* Every output file (CSV tables and the .md fragment) and the summary, committed together. 0 or
 * DRIFT_ENOMEM (nothing committed). */
DRIFT_MUST_CHECK int drift_aflab_write(const drift_aflab_t *L);

/* ---- the CSV tables (argmax_tables.c) ---- */
enum {
    AF_BINS,
    AF_FIT,
    AF_TIES,
    AF_REAL,
    AF_GAPS,
    AF_BELOW,
    AF_BATCH,
    AF_MIT,
    AF_TIMING,
    AF_TRIALS,
    AF_LAWS,
    AF_REFS,
    AF_NCSV
};
/* The declarations of the CSV tables into tables[0 .. AF_NCSV). */
void drift_aflab_declare_tables(drift_table_spec_t *tables, const drift_aflab_t *L);
/* Their metadata and rows. */
void drift_aflab_write_tables(drift_out_t *o, const drift_aflab_t *L);
/* N = ceil(V / shard): the vocabulary one device holds in a vocabulary-parallel LM head. */
size_t drift_aflab_sharded_n(const drift_aflab_t *L);
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
/* Seconds on the monotonic clock (the phases' wall-clock times, the costs). */
double drift_af_now(void);
/* Wall-clock cost per logit of each mitigation (not reproducible: reported apart). 0 or DRIFT_ENOMEM. */
DRIFT_MUST_CHECK int drift_aflab_measure_costs(drift_aflab_t *L);

#endif
