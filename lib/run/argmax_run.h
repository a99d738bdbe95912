/* argmax_run.h — what the argmax-flip experiments share (argmax_flip, argmax_flip_realistic,
 * argmax_flip_mitigations): their options, the state of one run (kernel sets, planted pairs and
 * ties, realistic heads, fits), the sweep that fills it, and the headline numbers of a seed.
 *
 * Each experiment runs the parts of the sweep its question needs: the planted pairs give every
 * kernel's fits and critical gaps (argmax_flip), which the realistic heads' predictions and the
 * mitigations' thresholds read again. The Philox streams keep the names of the one experiment
 * these began as ("argmax_flip.planted", ...), so that every experiment draws the same pairs,
 * heads and hidden states, and the numbers they share agree. */
#ifndef DRIFT_ARGMAX_RUN_H
#define DRIFT_ARGMAX_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "argmax_kernels.h"
#include "cli.h"
#include "drift.h"
#include "flipfit.h"
#include "flips.h"
#include "gen_logits.h"
#include "output.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * the exact head's triangle scale with its interval (NAN without planted pairs), real_ the
 * realistic flips of both, in_flips the rows input rounding alone flips (-1 without realistic rows). */
typedef struct {
    uint64_t seed;
    double def_sigma, def_p001, eng_d001_ulp, eng_dll, eng_power, kap, kap_lo, kap_hi;
    int eng_decided;
    long real_def, real_eng, in_flips;
} drift_af_headline_t;

/* The options an experiment takes beyond --K, --V, --reps, --shard and --device. */
enum { DRIFT_AF_OPT_ROWS = 1, DRIFT_AF_OPT_TIES = 2, DRIFT_AF_OPT_TRIALS = 4, DRIFT_AF_OPT_ROBUST = 8 };

/* Everything one run knows: the options, the kernels, the measurements, the fits. */
typedef struct {
    drift_cli_t cli;
    drift_cli_opt_t opts[12];
    drift_cli_spec_t spec;
    drift_device_t device; /* the card the GEMM policies size for */
    /* options (cli.h fills them from the profile); 0 for those the experiment does not take */
    long V, rows, reps, ties, shard, robust_seeds;
    int trials_csv;
    int planted_on; /* 1: the sweep runs the planted pairs and ties and fits them */
    size_t Ks[DRIFT_AF_MAXK];
    int nKs, nformats, ntargets, npolicy_rows;
    drift_polrow_t policy_pick[DRIFT_AF_MAXK]
                              [DRIFT_AF_NPOL]; /* the kernel each GEMM policy picks, per K, (policy, shard, batch) */
    drift_hidden_model_t hidden_model[DRIFT_AF_MAXK];
    drift_af_cell_t cell[DRIFT_AF_MAXK][DRIFT_AF_MAXF];
    drift_logbins_t gap_bins;
    int fp32_index; /* index of fp32 among the formats, or -1 */
    /* The headline's point, where the reports and the mitigations look: the largest K and the
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
    size_t progress_done, progress_total;
    struct {
        double start, planted, realistic, total;
    } seconds;
} drift_aflab_t;

/* Parses the options of experiment `name` (those of `which`, DRIFT_AF_OPT_*, beside --K, --V,
 * --reps, --shard and --device), the profile's defaults and the hidden sizes into L; dies on a
 * bad option. */
void drift_aflab_setup(drift_aflab_t *L, int argc, char **argv, const char *name, const char *question, unsigned which);
/* One sweep: kernels and hidden-state models per K, the planted pairs and ties and their fits
 * (when L->planted_on), the realistic heads (when L->rows > 0), progress under the phase name.
 * Dies on a failure. */
void drift_aflab_sweep(drift_aflab_t *L, const char *phase);
/* Appends L's headline numbers to dst->seeds (the robustness table). */
void drift_aflab_collect_headline(drift_aflab_t *dst, const drift_aflab_t *L);
/* The robustness reruns of L (--robust): the headline at seeds seed+1 .. seed+robust_seeds from the
 * options as parsed (base), in rerun (static storage: a run is large), each swept with or without
 * its planted pairs, passed to after (NULL: nothing) and collected into L->seeds. */
void drift_aflab_robust(
    drift_aflab_t *L, const drift_aflab_t *base, drift_aflab_t *rerun, int planted_on, void (*after)(drift_aflab_t *));
/* "K1,K2,...": the run's hidden sizes, as the fragments' Reproduce lines give them, into buf. */
void drift_aflab_ks_list(char buf[128], const drift_aflab_t *L);
/* x in printf format fmt, nan and inf spelled the same on every libc (drift_fmt_num), into buf. */
const char *drift_af_num(char buf[64], double x, const char *fmt);
/* Frees the planted, tie and realistic trial sets of L. */
void drift_aflab_free(drift_aflab_t *L);
/* Seconds on the monotonic clock (the phases' wall-clock times, the costs). */
double drift_af_now(void);

/* ---- per-trial work (argmax_trial.c) ---- */
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

/* ---- the tables' shared cells ---- */
/* The columns that open every per-kernel table, and their cells. */
#define DRIFT_AF_HEAD_COLS DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("role")
#define DRIFT_AF_HEAD_CELLS(K, ks, c)                                                \
    DRIFT_INT(K), DRIFT_TXT(drift_format_name((ks)->f)), DRIFT_TXT((ks)->k[c].name), \
        DRIFT_TXT(drift_role_name[(ks)->k[c].role])
/* Every (K, format, kernel) of the run, with ks the kernel set and cl the cell. */
#define DRIFT_AF_EACH_KERNEL(L)                                                 \
    for (int ki = 0; ki < (L)->nKs; ki++)                                       \
        for (int fi = 0; fi < (L)->nformats; fi++)                              \
            for (const drift_af_cell_t *cl = &(L)->cell[ki][fi]; cl; cl = NULL) \
                for (const drift_kset_t *ks = &cl->kernels; ks; ks = NULL)      \
                    for (int c = 0; c < ks->n; c++)
/* The run's (format) cell at the largest K, and the headline's cell. */
#define DRIFT_AF_AT_KMAX(L, fi) (&(L)->cell[(L)->headline.k][fi])
#define DRIFT_AF_HEADLINE(L) DRIFT_AF_AT_KMAX(L, (L)->headline.f)

#ifdef __cplusplus
}
#endif

#endif
