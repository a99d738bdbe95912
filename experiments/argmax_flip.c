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
 *     argmax, made affordable by rigorous pruning (drift_lmhead_eval_pruned, gen_logits.h):
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
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "drift.h"
#include "exact.h"
#include "flipfit.h"
#include "flips.h"
#include "format.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "gemm.h"
#include "policy.h"
#include "tc_model.h"
#include "philox.h"
#include "stats.h"
#include "output.h"

#ifdef _OPENMP
#define DRIFT_OMP(x) _Pragma(x)
#else
#define DRIFT_OMP(x)
#endif

#define EXP "argmax_flip"
#define MAXK 8
#define MAXF 4
#define MAXC DRIFT_LMHEAD_MAXCFG
#define NTARGET_PER_DECADE 4
#define PRED_EVERY 4 /* the partial-sum prediction is evaluated on every 4th planted pair */
enum { F_BINS, F_FIT, F_TIES, F_REAL, F_GAPS, F_BELOW, F_BATCH, F_MIT, F_TIMING, F_TRIALS, F_LAWS, F_REFS, NTABLES };

/* ---- kernels ------------------------------------------------------------------------------- */

enum { ROLE_ORDER, ROLE_STORE, ROLE_OWN, ROLE_EXACT, ROLE_POLICY };
static const char *const ROLE_NAME[] = {"order", "logits-in-format", "own-accumulation", "exact", "policy"};

typedef struct {
    drift_lmhead_cfg_t c;
    char name[96];
    int role;
    double nu; /* mean rounded-partial-sum participation / K (the c of the prediction) */
} kern_t;

typedef struct {
    drift_format_t f;
    kern_t k[MAXC];
    int n;
    int def;    /* first order, fp32 accumulation, fp32 logits */
    int engine; /* tc:h100 with logits in the format (bf16/fp16); tc fp32 (tf32); def (fp32) */
    int tc32;   /* tc:h100/fp32/fp32, or -1 */
    int exact;
    int seq32;  /* seq/fp32/fp32, or -1 */
} kset_t;

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

static int add_kern(kset_t *ks, drift_format_t f, const drift_order_t *o, drift_format_t acc, drift_format_t out,
                    int exact, int role, size_t K)
{
    if (ks->n == MAXC) return -1;
    kern_t *k = &ks->k[ks->n];
    memset(k, 0, sizeof *k);
    k->c.in = f;
    k->c.order = *o;
    k->c.acc = (drift_acc_t){acc, DRIFT_RNE, 1};
    k->c.out = out;
    k->c.exact = exact;
    if (drift_lmhead_cfg_check(&k->c)) return -1;
    /* the same computation under another role is not added twice */
    for (int j = 0; j < ks->n; j++) {
        const drift_lmhead_cfg_t *c = &ks->k[j].c;
        if (c->exact == exact && c->out == out && (exact || (drift_order_equal(&c->order, o) && c->acc.acc == acc)))
            return j;
    }
    drift_lmhead_cfg_name(k->name, sizeof k->name, &k->c);
    k->role = role;
    k->nu = exact ? 0 : drift_flip_nu(o, f, K);
    return ks->n++;
}

/* ---- the GEMM policies ------------------------------------------------------------------- */

static const long BATCH[] = {1, 8, 64, 256, 1024};
#define NBATCH 5
typedef struct {
    drift_policy_t pol;
    int shard;   /* 0: N = V; 1: N = V / shard */
    long batch;
    char kernel[DRIFT_GEMM_KERNEL_SPEC_MAX];
    drift_order_t order;
    double cost; /* drift_policy_cost, modelled */
} polrow_t;

/* Row q of the policy table (policy, shard, batch: see the loop order below) for hidden size K:
 * the kernel the policy picks, its order and modelled cost. 0, or the policy's error. */
static int policy_row(polrow_t *r, int q, size_t V, size_t shard, size_t K, const drift_device_t *dev)
{
    drift_gemm_kernel_t k;
    r->pol = (drift_policy_t)(q / (2 * NBATCH));
    r->shard = q / NBATCH % 2;
    r->batch = BATCH[q % NBATCH];
    size_t N = r->shard ? ceil_div(V, shard) : V;
    int rc = drift_policy_choose(&k, r->pol, (size_t)r->batch, N, K, dev->sms);
    if (rc) return rc;
    drift_gemm_kernel_print(r->kernel, sizeof r->kernel, &k);
    drift_gemm_kernel_order(&r->order, &k);
    r->cost = drift_policy_cost(&k, (size_t)r->batch, N, K, dev->sms);
    return 0;
}

/* "default" (the first order, fp32 accumulation, fp32 logits), "engine" (tensor cores, logits in
 * the format), or "-": a column the plots select on. */
static const char *tag(const kset_t *ks, int c)
{
    return c == ks->def ? "default" : c == ks->engine ? "engine" : "-";
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    const char *what;
    double us; /* microseconds per logit */
} cost_t;

typedef struct {
    const char *name;
    int cfg;       /* kernel index, or -1 */
    long n, flips; /* per mode */
    long changed;  /* (c): trials whose argmax differs between batch sizes; -1 n/a */
    double cost;   /* cost ratio vs the baseline; NAN unknown */
    const char *cost_src;
} mit_t;

#define NPOL (DRIFT_NPOLICIES * 2 * NBATCH)

/* Everything one run knows: the options, the kernels, the measurements, the fits. */
typedef struct {
    drift_cli_t cli;
    drift_cli_opt_t opts[12];
    drift_cli_spec_t spec;
    const char *question;
    drift_device_t dev;
    size_t Ks[MAXK];
    int nK, nF, nT, npol, trials_csv;
    long V, rows, reps, ties, shard;
    polrow_t polk[MAXK][NPOL];        /* the kernel each GEMM policy picks, per K, (policy, shard, batch) */
    int polcfg[MAXK][MAXF][NPOL][2];  /* [..][out fp32, out format] -> cfg index */
    kset_t KS[MAXK][MAXF];
    drift_hidden_model_t model[MAXK];
    drift_flipset_t PL[MAXK][MAXF], TI[MAXK][MAXF], RE[MAXK][MAXF]; /* planted, ties, realistic */
    unsigned char real_ok[MAXK][MAXF][MAXC]; /* configurations the pruning can bound */
    drift_logbins_t bins;
    drift_flip_fit_t FIT[MAXK][MAXF][MAXC];
    drift_flip_laws_t LAW[MAXK][MAXF][MAXC]; /* the law each kernel's mechanism implies (flipfit.h) */
    /* Realistic rows against the two references (exact of the rounded inputs, exact of the
     * unrounded fp32 inputs = the fp32 format's exact argmax): rows whose exact argmax changes
     * with input rounding; per kernel, rows flipped against exact(unrounded), the flips of its
     * accumulation alone (its partner without output rounding against exact(rounded)) and the
     * changes output rounding adds (its argmax against the partner's). -1: not available. */
    int fu;                                   /* index of fp32 among the formats, or -1 */
    long ref_in[MAXK][MAXF];
    long ref_tot[MAXK][MAXF][MAXC], ref_acc[MAXK][MAXF][MAXC], ref_out[MAXK][MAXF][MAXC];
    int partner[MAXK][MAXF][MAXC];            /* same accumulation, no output rounding; -1 */
    /* Robustness: the headline again at seeds seed+1 .. seed+nrob (largest K, bf16 and fp32,
     * no policies); ROB[0] is this run's own seed. */
    long nrob;
    int robust; /* 1 in a robustness rerun: no GEMM policies */
    struct rob {
        uint64_t seed;
        double def_sigma, def_p001, eng_d001, eng_d001_ulp, eng_dll, eng_power, kap, kap_lo, kap_hi, ex_d001_ulp;
        int eng_decided, ok;
        long real_def, real_eng, in_flips;
    } ROB[9];
    int nROB;
    int mk, mf; /* the mitigations' point: the largest K, the first narrow format (bf16 if present) */
    const kset_t *MKS;
    double base_sigma, eps_rel[2];
    cost_t cost[6];
    int ncost;
    mit_t MIT[2][8];
    int nmit;
    size_t done, total; /* progress */
    double t_start, t_planted, t_real, t_total;
} lab_t;

/* Options, profile defaults and the hidden sizes. */
static void setup(lab_t *L, int argc, char **argv)
{
    drift_intlist_t Kopt = {{0}, 0};
    L->V = 0, L->rows = -1, L->reps = 0, L->ties = -1, L->shard = 8, L->nrob = -1; /* the profile values replace these (cli.h) */
    const char *device = "h100";
    L->trials_csv = 0;
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INTLIST, &Kopt, "N,N,...", "hidden sizes", 16, 65536, {"1024", "1024,4096", "1024,4096,8192"}},
        {"V", DRIFT_OPT_INT, &L->V, "N", "vocabulary of the realistic head", 2, 1000000, {"4000", "32000", "32000"}},
        {"rows", DRIFT_OPT_INT, &L->rows, "N", "realistic hidden states per K (0: no realistic mode)", 0, 1000000, {"32", "512", "2048"}},
        {"reps", DRIFT_OPT_INT, &L->reps, "N", "planted pairs per target gap (29 targets)", 1, 1000000, {"8", "96", "400"}},
        {"ties", DRIFT_OPT_INT, &L->ties, "N", "planted exact ties per K", 0, 1000000, {"8", "32", "128"}},
        {"shard", DRIFT_OPT_INT, &L->shard, "N", "the policy also sees N = V/shard (a vocabulary-parallel LM head; default 8)", 1, 4096, {0}},
        {"device", DRIFT_OPT_STRING, &device, "NAME", "device the policies size for: v100, a100, h100, b200 (default h100)", 0, 0, {0}},
        {"trials", DRIFT_OPT_FLAG, &L->trials_csv, "", "also write data/argmax_flip_trials.csv (every planted trial)", 0, 0, {0}},
        {"robust", DRIFT_OPT_INT, &L->nrob, "N", "also run seeds seed+1 .. seed+N at the largest K (bf16, fp32) for the headline's robustness", 0, 8, {"0", "2", "2"}},
    };
    _Static_assert(sizeof opts <= sizeof L->opts, "lab_t.opts holds every option");
    memcpy(L->opts, opts, sizeof opts); /* the parsed cli keeps pointers to its spec */
    L->spec = (drift_cli_spec_t){
        EXP,
        "How small a logit gap flips argmax: at which exact top-1/top-2 gap does greedy decoding pick another token, "
        "per format, kernel and K, and how often does it happen?",
        "bf16,fp16,tf32,fp32",
        "seq,splitk:16,pairwise,warp:32,tc:h100",
        L->opts,
        (int)(sizeof opts / sizeof opts[0]),
        NULL, /* no_orders */
        NULL, /* cpu_only: logits go through the dispatcher (--backend cuda) */
        NULL, /* summary: printed by the program itself */
    };
    drift_cli_parse(&L->cli, &L->spec, argc, argv);
    L->question = L->spec.question;
    if (drift_device_lookup(&L->dev, device)) drift_die("--device: unknown device '%s' (accepted: v100, a100, h100, b200)", device);
    if (L->cli.nformats > MAXF) drift_die("--formats: at most %d formats", MAXF);
    drift_lmhead_require_inputs(L->cli.formats, L->cli.nformats);
    L->nK = 0;
    if (Kopt.n > MAXK) drift_die("--K: at most %d values", MAXK);
    for (int i = 0; i < Kopt.n; i++) L->Ks[L->nK++] = (size_t)Kopt.v[i];
    drift_require_memory(&L->cli, L->rows ? 12.0 * (double)L->V * (double)drift_intlist_max(&Kopt) : 0, "--K, --V");
    L->nF = L->cli.nformats;
    L->nT = 7 * NTARGET_PER_DECADE + 1; /* 1e-7 .. 1 */
    L->t_start = now();
}

/* The kernel each GEMM policy picks for the LM head shape, and the kernel sets per (K, format). */
static void choose_kernels(lab_t *L)
{
    L->npol = L->robust ? 0 : DRIFT_NPOLICIES * 2 * NBATCH;
    for (int q = 0; q < L->npol; q++)
        if (policy_row(&L->polk[L->nK - 1][q], q, (size_t)L->V, (size_t)L->shard, L->Ks[L->nK - 1], &L->dev))
            drift_die("policy: cannot choose a kernel");
    for (int ki = 0; ki < L->nK - 1; ki++)
        for (int q = 0; q < L->npol; q++) policy_row(&L->polk[ki][q], q, (size_t)L->V, (size_t)L->shard, L->Ks[ki], &L->dev);

    /* -- kernel sets per (K, format) -- */
    for (int ki = 0; ki < L->nK; ki++) {
        size_t K = L->Ks[ki];
        for (int fi = 0; fi < L->nF; fi++) {
            drift_format_t f = L->cli.formats[fi];
            kset_t *ks = &L->KS[ki][fi];
            memset(ks, 0, sizeof *ks);
            ks->f = f;
            ks->tc32 = ks->seq32 = -1;
            int narrow = f == DRIFT_BF16 || f == DRIFT_FP16;
            drift_order_t seq, tc;
            drift_order_parse(&seq, "seq");
            drift_order_parse(&tc, "tc:h100");
            for (int o = 0; o < L->cli.norders; o++) {
                int j = add_kern(ks, f, &L->cli.orders[o], DRIFT_FP32, DRIFT_FP32, 0, ROLE_ORDER, K);
                if (o == 0) ks->def = j;
            }
            if (ks->n == 0)
                drift_die("--orders: none of the orders applies to %s inputs (tc:ARCH has no path for them; accepted: "
                          "seq, rev, pairwise, blocked:B, splitk:S, splitk:S:tree, warp:W, kahan, neumaier, random:SEED)",
                          drift_format_name(f));
            if (narrow)
                for (int o = 0; o < L->cli.norders; o++) add_kern(ks, f, &L->cli.orders[o], DRIFT_FP32, f, 0, ROLE_STORE, K);
            if (narrow)
                for (int o = 0; o < L->cli.norders; o++) {
                    if (drift_order_is_tc(&L->cli.orders[o])) {
                        if (f == DRIFT_FP16) add_kern(ks, f, &L->cli.orders[o], DRIFT_FP16, DRIFT_FP16, 0, ROLE_OWN, K);
                    } else {
                        add_kern(ks, f, &L->cli.orders[o], f, f, 0, ROLE_OWN, K);
                    }
                }
            ks->exact = add_kern(ks, f, &seq, DRIFT_FP32, DRIFT_FP32, 1, ROLE_EXACT, K);
            for (int q = 0; q < L->npol; q++) {
                L->polcfg[ki][fi][q][0] = add_kern(ks, f, &L->polk[ki][q].order, DRIFT_FP32, DRIFT_FP32, 0, ROLE_POLICY, K);
                L->polcfg[ki][fi][q][1] =
                    narrow ? add_kern(ks, f, &L->polk[ki][q].order, DRIFT_FP32, f, 0, ROLE_POLICY, K) : L->polcfg[ki][fi][q][0];
                if (L->polcfg[ki][fi][q][0] < 0 || L->polcfg[ki][fi][q][1] < 0) drift_die("too many configurations");
            }
            /* the named kernels used by the report (added if --orders lacks them) */
            ks->seq32 = add_kern(ks, f, &seq, DRIFT_FP32, DRIFT_FP32, 0, ROLE_ORDER, K);
            {
                drift_lmhead_cfg_t probe = {f, tc, {DRIFT_FP32, DRIFT_RNE, 1}, DRIFT_FP32, 0};
                if (!drift_lmhead_cfg_check(&probe)) {
                    ks->tc32 = add_kern(ks, f, &tc, DRIFT_FP32, DRIFT_FP32, 0, ROLE_ORDER, K);
                    ks->engine = narrow ? add_kern(ks, f, &tc, DRIFT_FP32, f, 0, ROLE_STORE, K) : ks->tc32;
                } else {
                    ks->engine = ks->def;
                }
            }
            if (ks->seq32 < 0 || ks->engine < 0 || ks->exact < 0) drift_die("too many configurations");
        }
    }
}

/* The hidden-state model, per K. */
static void make_models(lab_t *L)
{
    for (int ki = 0; ki < L->nK; ki++) {
        drift_stream_t s;
        drift_stream_init(&s, L->cli.seed, drift_fnv1a32(EXP ".model"), (uint32_t)L->Ks[ki], 0);
        drift_hidden_model(&L->model[ki], L->Ks[ki], &s);
    }
}

/* (1) Planted pairs and ties, every kernel. */
static void run_planted(lab_t *L)
{
    size_t nplant = (size_t)L->nT * (size_t)L->reps;
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            if (drift_flipset_alloc(&L->PL[ki][fi], nplant, L->KS[ki][fi].n)) drift_die("out of memory");
            if (drift_flipset_alloc(&L->TI[ki][fi], (size_t)L->ties, L->KS[ki][fi].n)) drift_die("out of memory");
        }
    L->done = 0, L->total = 0;
    for (int ki = 0; ki < L->nK; ki++) L->total += (nplant + (size_t)L->ties) * L->Ks[ki] / 256 + (size_t)L->rows * L->Ks[ki] / 64;
    size_t wmax = 0; /* the model's scratch holds 2 W lanes for warp:W */
    for (int o = 0; o < L->cli.norders; o++)
        if (L->cli.orders[o].kind == DRIFT_ORDER_WARP && (size_t)L->cli.orders[o].param > wmax) wmax = (size_t)L->cli.orders[o].param;
    for (int ki = 0; ki < L->nK; ki++) {
        const size_t K = L->Ks[ki];
        const size_t ntr = nplant + (size_t)L->ties;
        const size_t CH = 64;
        for (size_t c0 = 0; c0 < ntr; c0 += CH) {
            size_t c1 = c0 + CH < ntr ? c0 + CH : ntr;
            int err = 0;
            DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:err)")
            for (size_t i = c0; i < c1; i++) {
                double *h = malloc(K * sizeof *h), *w1 = malloc(K * sizeof *w1), *w2 = malloc(K * sizeof *w2);
                double *hf = malloc(K * sizeof *hf), *W2 = malloc(2 * K * sizeof *W2);
                double *pa = malloc(K * sizeof *pa), *pb = malloc(K * sizeof *pb);
                drift_flip_vv_t *vt = malloc(drift_flip_model_scratch(K, wmax) * sizeof *vt);
                if (!h || !w1 || !w2 || !hf || !W2 || !pa || !pb || !vt) {
                    err |= 1;
                    goto next;
                }
                int is_tie = i >= nplant;
                size_t tgt = is_tie ? 0 : i / (size_t)L->reps, rep = is_tie ? i - nplant : i % (size_t)L->reps;
                drift_stream_t s;
                drift_stream_init(&s, L->cli.seed, drift_fnv1a32(is_tie ? EXP ".tie" : EXP ".planted"),
                                  (uint32_t)(K * 64 + tgt), (uint32_t)rep);
                double sc, rel = pow(10.0, -7.0 + (double)tgt / NTARGET_PER_DECADE);
                int swap; /* where the top row sits */
                if (drift_gen_planted_pair(h, w1, w2, &sc, &swap, &L->model[ki], (size_t)L->V, rel, is_tie, &s)) err |= 1;
                for (int fi = 0; fi < L->nF && !err; fi++) {
                    double *a = W2 + (swap ? K : 0), *b = W2 + (swap ? 0 : K);
                    double p2 = 0;
                    drift_plant_t pt;
                    if (drift_plant_pair_in(&pt, hf, W2, h, w1, w2, K, rel * sc, swap, is_tie, L->KS[ki][fi].f)) err |= 1;
                    for (size_t q = 0; q < K; q++) p2 += hf[q] * hf[q] * (a[q] * a[q] + b[q] * b[q]);
                    drift_lmhead_result_t res;
                    drift_lmhead_cfg_t cfg[MAXC];
                    for (int c = 0; c < L->KS[ki][fi].n; c++) cfg[c] = L->KS[ki][fi].k[c].c;
                    if (drift_lmhead_eval_full(&res, hf, W2, 2, K, cfg, L->KS[ki][fi].n)) {
                        err |= 1;
                        break;
                    }
                    drift_flipset_t *st = is_tie ? &L->TI[ki][fi] : &L->PL[ki][fi];
                    size_t idx = is_tie ? rep : i;
                    drift_flipset_record(st, idx, &res);
                    drift_flip_trial_t *t = &st->t[idx];
                    t->s = sc;
                    t->rel = t->gap / sc;
                    t->p2 = p2;
                    /* the model's variance of the computed gap (the two logits' errors, independent),
                     * on every 4th pair: it only enters an average */
                    if (!is_tie && rep % PRED_EVERY == 0) {
                        for (size_t q = 0; q < K; q++) {
                            pa[q] = hf[q] * a[q]; /* exact: narrow (<= 24-bit) values multiply exactly in double */
                            pb[q] = hf[q] * b[q];
                        }
                        for (int c = 0; c < L->KS[ki][fi].n; c++)
                            st->pvar[idx * st->ncfg + c] = drift_flip_model_var(&cfg[c], pa, K, vt) + drift_flip_model_var(&cfg[c], pb, K, vt);
                    }
                    t->target = is_tie ? 0 : rel;
                    t->steps = pt.steps;
                    t->reached = is_tie ? 1 : pt.reached;
                }
            next:
                free(pa);
                free(pb);
                free(vt);
                free(h);
                free(w1);
                free(w2);
                free(hf);
                free(W2);
            }
            if (err) drift_die("planted trials failed (out of memory or an internal error)");
            L->done += (c1 - c0) * K / 256;
            drift_progress(&L->cli, L->done, L->total);
        }
    }
}

/* (2) Realistic heads: every kernel the pruning can bound, against the exact argmax. */
static void run_realistic(lab_t *L)
{
    double t_real0 = now();
    L->t_planted = t_real0 - L->t_start;
    for (int ki = 0; ki < L->nK && L->rows > 0; ki++) {
        const size_t K = L->Ks[ki];
        float *W = malloc((size_t)L->V * K * sizeof *W);
        double *l1 = malloc((size_t)L->V * sizeof *l1), *l2 = malloc((size_t)L->V * sizeof *l2);
        double *H = malloc((size_t)L->rows * K * sizeof *H);
        if (!W || !l1 || !l2 || !H) drift_die("out of memory (V x K = %ld x %zu)", L->V, K);
        /* weights (fp32 master, one stream per token) with the l1/l2 bounds the pruning needs */
        if (drift_gen_head(NULL, W, l1, l2, (size_t)L->V, K, L->cli.seed, drift_fnv1a32(EXP ".W"))) drift_die("out of memory");
        for (long r = 0; r < L->rows; r++) {
            drift_stream_t s;
            drift_stream_init(&s, L->cli.seed, drift_fnv1a32(EXP ".realistic"), (uint32_t)K, (uint32_t)r);
            drift_gen_hidden(H + (size_t)r * K, &L->model[ki], &s);
        }
        for (int fi = 0; fi < L->nF; fi++) {
            if (drift_flipset_alloc(&L->RE[ki][fi], (size_t)L->rows, L->KS[ki][fi].n)) drift_die("out of memory");
            /* own-format accumulation has no usable deterministic bound (k u ~ 1): it would need
             * all V x K logits emulated per row, so the realistic mode leaves it out */
            for (int c = 0; c < L->KS[ki][fi].n; c++) L->real_ok[ki][fi][c] = L->KS[ki][fi].k[c].role != ROLE_OWN;
        }
        const long CH = 128;
        double *ap = malloc((size_t)CH * (size_t)L->V * sizeof *ap);
        if (!ap) drift_die("out of memory");
        for (long r0 = 0; r0 < L->rows; r0 += CH) {
            long nr = L->rows - r0 < CH ? L->rows - r0 : CH;
            if (drift_lmhead_approx(ap, H + (size_t)r0 * K, (size_t)nr, W, (size_t)L->V, K)) drift_die("approx pass failed");
            int err = 0;
            DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:err)")
            for (long r = r0; r < r0 + nr; r++) {
                for (int fi = 0; fi < L->nF; fi++) {
                    const kset_t *ks = &L->KS[ki][fi];
                    drift_lmhead_cfg_t cfg[MAXC];
                    for (int c = 0; c < ks->n; c++) cfg[c] = ks->k[c].c;
                    drift_lmhead_result_t full; /* the left-out configurations stay flip = 0, n/a */
                    if (drift_lmhead_eval_pruned_some(&full, H + (size_t)r * K, W, (size_t)L->V, K, ap + (size_t)(r - r0) * L->V,
                                                      l1, l2, cfg, ks->n, L->real_ok[ki][fi])) {
                        err |= 1;
                        continue;
                    }
                    drift_flipset_t *st = &L->RE[ki][fi];
                    drift_flipset_record(st, (size_t)r, &full);
                    drift_flip_trial_t *t = &st->t[r];
                    t->s = drift_logit_scale(H + (size_t)r * K, K);
                    t->rel = t->gap / t->s;
                    t->target = NAN;
                    t->reached = 1;
                }
            }
            if (err) drift_die("realistic evaluation failed (out of memory or an internal error)");
            L->done += (size_t)nr * K / 64;
            drift_progress(&L->cli, L->done, L->total);
        }
        free(ap);
        free(W);
        free(l1);
        free(l2);
        free(H);
    }
    L->t_real = now() - t_real0;
}

/* Realistic rows against both references (lab_t). A kernel's partner is the kernel with the
 * same accumulation and logits kept in the accumulator; the exact head's "accumulation" is
 * exact, so all its flips are output rounding. */
static void two_references(lab_t *L)
{
    L->fu = -1;
    for (int fi = 0; fi < L->nF; fi++)
        if (L->KS[0][fi].f == DRIFT_FP32) L->fu = fi;
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                const drift_lmhead_cfg_t *r = &ks->k[c].c;
                L->partner[ki][fi][c] = -1;
                if (r->exact) continue;
                for (int p = 0; p < ks->n; p++)
                    if (!ks->k[p].c.exact && drift_recipe_same_acc(&ks->k[p].c, r) && ks->k[p].c.out == ks->k[p].c.acc.acc)
                        L->partner[ki][fi][c] = p;
            }
            L->ref_in[ki][fi] = -1;
            for (int c = 0; c < ks->n; c++) L->ref_tot[ki][fi][c] = L->ref_acc[ki][fi][c] = L->ref_out[ki][fi][c] = -1;
            if (L->rows <= 0 || L->fu < 0) continue;
            const drift_flipset_t *st = &L->RE[ki][fi], *su = &L->RE[ki][L->fu];
            long nin = 0;
            for (long r = 0; r < L->rows; r++) nin += st->t[r].top1 != su->t[r].top1 && !su->t[r].tie;
            L->ref_in[ki][fi] = nin;
            for (int c = 0; c < ks->n; c++) {
                if (!L->real_ok[ki][fi][c]) continue;
                int p = ks->k[c].c.exact ? -2 : L->partner[ki][fi][c];
                if (p == -1 || (p >= 0 && !L->real_ok[ki][fi][p])) continue;
                long tot = 0, acc = 0, out = 0;
                for (long r = 0; r < L->rows; r++) {
                    size_t pc = st->pick[(size_t)r * st->ncfg + c];
                    tot += pc != su->t[r].top1 && !su->t[r].tie;
                    if (p >= 0) {
                        acc += st->flip[(size_t)r * st->ncfg + p];
                        out += pc != st->pick[(size_t)r * st->ncfg + p];
                    } else {
                        out += st->flip[(size_t)r * st->ncfg + c];
                    }
                }
                L->ref_tot[ki][fi][c] = tot, L->ref_acc[ki][fi][c] = acc, L->ref_out[ki][fi][c] = out;
            }
        }
}

/* The sigma fits per (K, format, kernel) on the planted pairs, and the baseline sigma of the mitigations. */
static void fit_sigmas(lab_t *L)
{
    drift_logbins_init(&L->bins, pow(10.0, -7 - 0.5 / NTARGET_PER_DECADE), pow(10.0, 0.5 / NTARGET_PER_DECADE), L->nT);
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++)
            {
                if (drift_flipset_fit(&L->FIT[ki][fi][c], &L->PL[ki][fi], c, &ks->k[c].c, ks->k[c].nu, L->Ks[ki], &L->bins))
                    drift_die("out of memory");
                const drift_lmhead_cfg_t *r = &ks->k[c].c;
                drift_fliplaw_t law = drift_flip_implied_law(r->exact, r->acc.acc, r->out);
                if (drift_flipset_laws(&L->LAW[ki][fi][c], &L->PL[ki][fi], c, law, r->out, &L->bins)) drift_die("out of memory");
            }
        }

    /* -- the mitigations, at the largest K, on the first narrow format (bf16 if present) -- */
    L->mk = L->nK - 1, L->mf = 0;
    for (int fi = 0; fi < L->nF; fi++)
        if (L->cli.formats[fi] == DRIFT_BF16) L->mf = fi;
    L->MKS = &L->KS[L->mk][L->mf];
    const drift_flip_fit_t *base_fit = &L->FIT[L->mk][L->mf][L->MKS->engine];
    L->base_sigma = base_fit->fit.status == DRIFT_FIT_OK ? base_fit->fit.sigma : NAN;
    /* eps = the baseline's D_0.1% from the law of its mechanism (a gap where flips still occur);
     * the Phi fit's 3.09 sigma only when that law has no fit */
    const drift_flip_laws_t *base_law = &L->LAW[L->mk][L->mf][L->MKS->engine];
    L->eps_rel[0] = isfinite(base_law->d001) ? base_law->d001 : drift_phi_gap_at(L->base_sigma, 0.001);
    L->eps_rel[1] = 10 * L->base_sigma;
}

/* Measured costs (wall clock: not reproducible, kept out of every other file). */
static void measure_costs(lab_t *L)
{
    {
        size_t K = L->Ks[L->mk];
        const int NR = 8, REP = 8;
        drift_stream_t s;
        drift_stream_init(&s, L->cli.seed, drift_fnv1a32(EXP ".timing"), 0, 0);
        double *h = malloc(K * sizeof *h), *W = malloc((size_t)NR * K * sizeof *W), y = 0, sink = 0;
        if (!h || !W) drift_die("out of memory");
        drift_gen_hidden(h, &L->model[L->mk], &s);
        for (size_t i = 0; i < K; i++) h[i] = drift_rne(h[i], L->MKS->f);
        for (int r = 0; r < NR; r++) {
            drift_gen_weight_row(W + (size_t)r * K, K, &s);
            for (size_t i = 0; i < K; i++) W[(size_t)r * K + i] = drift_rne(W[(size_t)r * K + i], L->MKS->f);
        }
        const int which[4] = {L->MKS->engine, L->MKS->seq32, L->MKS->tc32, L->MKS->exact};
        const char *label[4] = {"baseline: tc:h100, logits in the format", "(a) upcast: seq fp32, fp32 logits",
                                "(a') tc:h100, fp32 logits", "(b) exact dot, rounded once to fp32"};
        for (int m = 0; m < 4; m++) {
            if (which[m] < 0) continue;
            double t0 = now();
            for (int rep = 0; rep < REP; rep++)
                for (int r = 0; r < NR; r++) {
                    drift_lmhead_dot(&y, h, W + (size_t)r * K, K, &L->MKS->k[which[m]].c);
                    sink += y;
                }
            L->cost[L->ncost++] = (cost_t){label[m], (now() - t0) / (REP * NR) * 1e6};
        }
        /* the tie-breaker: one more comparison after the argmax of V logits */
        double *lg = malloc((size_t)L->V * sizeof *lg);
        if (!lg) drift_die("out of memory");
        for (long v = 0; v < L->V; v++) lg[v] = drift_stream_normal(&s);
        double t0 = now();
        size_t pick = 0;
        for (int rep = 0; rep < 200; rep++) {
            drift_top2_t t2;
            drift_top2(&t2, lg, (size_t)L->V);
            pick += drift_flip_tiebreak(t2.top1, t2.top2, t2.gap, 0.1);
            lg[rep % L->V] += 1e-9;
        }
        L->cost[L->ncost++] = (cost_t){"(d) tie-breaker: top-2 of V logits + one comparison", (now() - t0) / 200 / (double)L->V * 1e6};
        if (sink == 12345.678 && pick == 7) printf(" "); /* keep the timed work observable */
        free(lg);
        free(h);
        free(W);
    }
}

/* The mitigations at (mk, mf): flip rates, batch changes and cost ratios. */
static void compute_mitigations(lab_t *L)
{
    for (int mode = 0; mode < 2; mode++) {
        const drift_flipset_t *st = mode ? &L->RE[L->mk][L->mf] : &L->PL[L->mk][L->mf];
        int n = 0;
        const double cbase = L->cost[0].us;
        struct {
            const char *name;
            int cfg;
            double cost;
        } simple[4] = {
            {"baseline: tensor cores (tc:h100), logits stored in the format", L->MKS->engine, 1.0},
            {"(a) upcast: fp32 logits from the format's values (seq, fp32 FMA)", L->MKS->seq32, L->cost[1].us / cbase},
            {"(a') same tensor cores, logits kept in fp32", L->MKS->tc32, L->cost[2].us / cbase},
            {"(b) exact dot product, rounded once to fp32", L->MKS->exact, L->cost[3].us / cbase},
        };
        for (int m = 0; m < 4; m++) {
            if (simple[m].cfg < 0) continue;
            mit_t *x = &L->MIT[mode][n++];
            *x = (mit_t){simple[m].name, simple[m].cfg, (long)st->n, 0, -1, simple[m].cost, "measured (CPU emulation)"};
            x->flips = drift_flipset_flips(st, x->cfg);
        }
        int narrow = L->MKS->f == DRIFT_BF16 || L->MKS->f == DRIFT_FP16;
        for (int p = 0; p < DRIFT_NPOLICIES; p++) {
            int q0 = p * 2 * NBATCH + NBATCH; /* the sharded shape, batch 1 */
            mit_t *x = &L->MIT[mode][n++];
            int c0 = L->polcfg[L->mk][L->mf][q0][narrow];
            double vend = L->polk[L->mk][DRIFT_POLICY_VENDOR_LIKE * 2 * NBATCH + NBATCH].cost;
            *x = (mit_t){p == DRIFT_POLICY_BATCH_INVARIANT ? "(c) batch-invariant GEMM policy (argmax at batch 1)"
                                                            : "(c) reference: vendor-like GEMM policy (argmax at batch 1)",
                         c0, (long)st->n, 0, 0, L->polk[L->mk][q0].cost / vend, "modelled (policy.h roofline)"};
            int cb[NBATCH];
            for (int b = 0; b < NBATCH; b++) cb[b] = L->polcfg[L->mk][L->mf][q0 + b][narrow];
            x->flips = drift_flipset_flips(st, c0);
            for (size_t i = 0; i < st->n; i++) x->changed += drift_flipset_changed(st, i, cb, NBATCH);
        }
        for (int e = 0; e < 2; e++) {
            mit_t *x = &L->MIT[mode][n++];
            *x = (mit_t){e ? "(d) gap-threshold tie-breaker, eps = 10 sigma (Phi fit)" : "(d) gap-threshold tie-breaker, eps = D_0.1% of the mechanism's law",
                         L->MKS->engine, (long)st->n, 0, -1, (L->cost[4].us * (double)L->V + cbase * (double)L->V) / (cbase * (double)L->V),
                         "measured (CPU)"};
            for (size_t i = 0; i < st->n && isfinite(L->eps_rel[e]); i++) {
                const drift_flip_trial_t *t = &st->t[i];
                size_t j = i * st->ncfg + L->MKS->engine;
                double eps = L->eps_rel[e] * t->s;
                size_t rc = drift_flip_tiebreak(st->pick[j], st->pick2[j], st->cgap[j], eps);
                size_t rx = drift_flip_tiebreak(t->top1, t->top2, t->gap, eps);
                x->flips += rc != rx;
            }
            if (!isfinite(L->eps_rel[e])) x->flips = -1;
        }
        L->nmit = n;
        if (mode == 1 && L->rows == 0) break;
    }
}

/* ---- the tables, declared once (output.h) ----------------------------------------------------- */

#define HEAD DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("role")
static const drift_col_t C_BINS[] = {
    HEAD, DRIFT_C_TEXT("tag"), DRIFT_C_INT("bin"), DRIFT_C_NUM("rel_lo", "%.6e"), DRIFT_C_NUM("rel_hi", "%.6e"),
    DRIFT_C_NUM("rel_center", "%.6e"), DRIFT_C_NUM("mean_gap_abs", "%.6e"), DRIFT_C_NUM("mean_gap_ulp_in", "%.6g"),
    DRIFT_C_INT("pairs"), DRIFT_C_INT("flips"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo", "%.6g"),
    DRIFT_C_NUM("hi", "%.6g"), DRIFT_C_NUM("fit_p", "%.6g")};
static const drift_col_t C_FIT[] = {
    HEAD, DRIFT_C_TEXT("tag"), DRIFT_C_TEXT("order"), DRIFT_C_TEXT("acc"), DRIFT_C_TEXT("logits"), DRIFT_C_INT("pairs"),
    DRIFT_C_INT("flips"), DRIFT_C_TEXT("status"), DRIFT_C_NUM("sigma_rel", "%.6e"), DRIFT_C_NUM("sigma_lo", "%.6e"),
    DRIFT_C_NUM("sigma_hi", "%.6e"), DRIFT_C_NUM("g2", "%.4f"), DRIFT_C_INT("df"), DRIFT_C_NUM("p_value", "%.4g"),
    DRIFT_C_NUM("nu", "%.6g"), DRIFT_C_NUM("c", "%.4f"), DRIFT_C_NUM("sigma_pred_rel", "%.6e"),
    DRIFT_C_NUM("fit_over_pred", "%.4f"), DRIFT_C_NUM("sigma_sums_rel", "%.6e"), DRIFT_C_NUM("fit_over_sums", "%.4f"),
    DRIFT_C_NUM("s_median", "%.6g"), DRIFT_C_NUM("l1_median", "%.6g"), DRIFT_C_NUM("gap_half_rel", "%.6e"),
    DRIFT_C_NUM("gap_half_abs", "%.6e"), DRIFT_C_NUM("gap_half_ulp_in", "%.4g"), DRIFT_C_NUM("gap_half_ulp_out", "%.4g"),
    DRIFT_C_NUM("gap_p001_rel", "%.6e"), DRIFT_C_NUM("gap_p001_abs", "%.6e"), DRIFT_C_NUM("gap_p001_ulp_in", "%.4g"),
    DRIFT_C_NUM("gap_p001_ulp_out", "%.4g")};
static const drift_col_t C_TIES[] = {HEAD, DRIFT_C_INT("ties"), DRIFT_C_INT("exact_ties_confirmed"),
                                     DRIFT_C_INT("distinguished"), DRIFT_C_INT("picked_higher_id"), DRIFT_C_INT("flips")};
static const drift_col_t C_REAL[] = {HEAD, DRIFT_C_INT("rows"), DRIFT_C_INT("exact_ties"), DRIFT_C_INT("flips"),
                                     DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo", "%.6g"), DRIFT_C_NUM("hi", "%.6g"),
                                     DRIFT_C_NUM("predicted_flips", "%.4g"), DRIFT_C_NUM("stage1_mean", "%.2f"),
                                     DRIFT_C_NUM("eval_mean", "%.2f")};
static const drift_col_t C_GAPS[] = {DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("bin"), DRIFT_C_TEXT("rel_lo"),
                                     DRIFT_C_NUM("rel_hi", "%.6e"), DRIFT_C_INT("rows"), DRIFT_C_INT("count"),
                                     DRIFT_C_NUM("fraction", "%.6g"), DRIFT_C_NUM("cum_fraction", "%.6g")};
static const drift_col_t C_BELOW[] = {
    HEAD, DRIFT_C_NUM("gap_half_rel", "%.6e"), DRIFT_C_INT("rows_below_half"), DRIFT_C_NUM("frac_half", "%.6g"),
    DRIFT_C_NUM("lo_half", "%.6g"), DRIFT_C_NUM("hi_half", "%.6g"), DRIFT_C_NUM("gap_p001_rel", "%.6e"),
    DRIFT_C_INT("rows_below_p001"), DRIFT_C_NUM("frac_p001", "%.6g"), DRIFT_C_NUM("lo_p001", "%.6g"),
    DRIFT_C_NUM("hi_p001", "%.6g")};
static const drift_col_t C_BATCH[] = {
    DRIFT_C_TEXT("mode"), DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("logits"), DRIFT_C_TEXT("policy"),
    DRIFT_C_INT("n_policy"), DRIFT_C_INT("batch"), DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("order"), DRIFT_C_INT("trials"),
    DRIFT_C_INT("flips"), DRIFT_C_INT("changed_vs_batch1"), DRIFT_C_NUM("modelled_cost", "%.6g")};
static const drift_col_t C_MIT[] = {
    DRIFT_C_TEXT("mode"), DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_QUOTED("mitigation"), DRIFT_C_TEXT("kernel"),
    DRIFT_C_INT("trials"), DRIFT_C_INT("flips"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo", "%.6g"),
    DRIFT_C_NUM("hi", "%.6g"), DRIFT_C_INT("changed_across_batches")};
static const drift_col_t C_TIMING[] = {DRIFT_C_QUOTED("what"), DRIFT_C_TEXT("value"), DRIFT_C_TEXT("unit")};
static const drift_col_t C_TRIALS[] = {
    DRIFT_C_INT("K"), DRIFT_C_TEXT("format"), DRIFT_C_INT("trial"), DRIFT_C_NUM("target_rel", "%.6e"), DRIFT_C_HEX("gap_hex"),
    DRIFT_C_NUM("gap", NULL), DRIFT_C_NUM("rel_gap", "%.6e"), DRIFT_C_NUM("s", "%.9g"), DRIFT_C_NUM("l1", "%.9g"),
    DRIFT_C_INT("steps"), DRIFT_C_INT("reached"), DRIFT_C_INT("exact_top1"), DRIFT_C_TEXT("flips")};
static const drift_col_t C_LAWS[] = {
    HEAD, DRIFT_C_TEXT("implied_law"), DRIFT_C_INT("pairs"), DRIFT_C_INT("flips"), DRIFT_C_TEXT("gauss_status"),
    DRIFT_C_NUM("gauss_sigma_rel", "%.6e"), DRIFT_C_NUM("gauss_loglik", "%.6f"), DRIFT_C_NUM("gauss_p", "%.4g"),
    DRIFT_C_TEXT("triangle_status"), DRIFT_C_NUM("triangle_kappa", "%.6g"), DRIFT_C_NUM("triangle_loglik", "%.6f"),
    DRIFT_C_NUM("triangle_p", "%.4g"), DRIFT_C_TEXT("conv_status"), DRIFT_C_NUM("conv_sigma_rel", "%.6e"),
    DRIFT_C_NUM("conv_loglik", "%.6f"), DRIFT_C_NUM("conv_p", "%.4g"), DRIFT_C_TEXT("rival"),
    DRIFT_C_NUM("dloglik_vs_rival", "%.4f"), DRIFT_C_NUM("power", "%.4g"), DRIFT_C_INT("informative_pairs"),
    DRIFT_C_INT("decided"), DRIFT_C_NUM("q_out_rel_median", "%.6e"), DRIFT_C_NUM("gap_p01_rel", "%.6e"),
    DRIFT_C_NUM("gap_p001_rel", "%.6e"), DRIFT_C_NUM("gap_p01_ulp_out", "%.4g"), DRIFT_C_NUM("gap_p001_ulp_out", "%.4g")};
static const drift_col_t C_REFS[] = {HEAD, DRIFT_C_INT("rows"), DRIFT_C_INT("input_rounding_flips"),
                                     DRIFT_C_INT("flips_vs_exact_rounded"), DRIFT_C_INT("accumulation_flips"),
                                     DRIFT_C_INT("output_rounding_changes"), DRIFT_C_INT("flips_vs_exact_unrounded")};
#undef HEAD
#define NCOL(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The "K, format, kernel, role" cells that open every per-kernel row; returns how many. */
static int head(drift_cell_t *cells, size_t K, const kset_t *ks, int c)
{
    cells[0] = DRIFT_INT(K), cells[1] = DRIFT_TXT(drift_format_name(ks->f)), cells[2] = DRIFT_TXT(ks->k[c].name);
    cells[3] = DRIFT_TXT(ROLE_NAME[ks->k[c].role]);
    return 4;
}

/* Planted pairs: flip rate per gap bin. */
static void write_bins(drift_out_t *o, const lab_t *L)
{
    drift_out_meta(o, F_BINS, "table", "planted pairs: flip rate per exact-gap bin (relative gap = exact gap / s, s = ||h||_2/sqrt(K))");
    drift_out_meta(o, F_BINS, "planted", "%d targets 1e-7..1 (%d per decade) x %ld pairs per K and format; V = %ld for the top-logit level", L->nT, NTARGET_PER_DECADE, L->reps, L->V);
    drift_out_meta(o, F_BINS, "flip", "computed argmax (equal computed logits: the lower id) != exact argmax; exact ties are never flips (argmax_flip_ties.csv)");
    drift_out_meta(o, F_BINS, "interval", "Wilson 95%% score interval");
    drift_out_meta(o, F_BINS, "ulp", "gap_ulp_in: mean gap / ulp of the input format at |exact top logit|");
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                const drift_flip_fit_t *F = &L->FIT[ki][fi][c];
                for (int b = 0; b < L->bins.nbins; b++) {
                    drift_flip_bin_t B;
                    drift_flipset_bin(&B, &L->PL[ki][fi], c, &L->bins, b, ks->f);
                    double ctr = drift_logbins_center(&L->bins, b);
                    drift_cell_t x[NCOL(C_BINS)];
                    int n = head(x, L->Ks[ki], ks, c);
                    x[n++] = DRIFT_TXT(tag(ks, c)), x[n++] = DRIFT_INT(b), x[n++] = DRIFT_NUM(L->bins.edge[b]);
                    x[n++] = DRIFT_NUM(L->bins.edge[b + 1]), x[n++] = DRIFT_NUM(ctr), x[n++] = DRIFT_NUM(B.gap_abs);
                    x[n++] = DRIFT_NUM(B.gap_ulp), x[n++] = DRIFT_INT(B.n), x[n++] = DRIFT_INT(B.k), x[n++] = DRIFT_NUM(B.rate);
                    x[n++] = DRIFT_NUM(B.lo), x[n++] = DRIFT_NUM(B.hi);
                    x[n++] = DRIFT_NUM(F->fit.status == DRIFT_FIT_OK ? drift_phi(-ctr / F->fit.sigma) : NAN);
                    drift_row_cells(o, F_BINS, x, n);
                }
            }
        }
}

/* The sigma fits, predictions and critical gaps. */
static void write_fits(drift_out_t *o, const lab_t *L)
{
    drift_out_meta(o, F_FIT, "table", "maximum-likelihood sigma of P(flip | gap D) = Phi(-D/sigma), D = exact gap / s, on the planted pairs");
    drift_out_meta(o, F_FIT, "interval", "sigma_lo, sigma_hi: profile-likelihood 95%% interval (log-likelihood drop 1.92073)");
    drift_out_meta(o, F_FIT, "goodness", "g2: binned deviance 2 sum[O ln(O/E) + (n-O) ln((n-O)/(n-E))] over the %d gap bins, E = sum of fitted Phi; df = bins with pairs - 1; p = P(chi2_df > g2)", L->nT);
    drift_out_meta(o, F_FIT, "prediction", "sigma_pred (norm form) = RMS_i sqrt(c^2 K u_acc^2 P2_i + [logits stored narrower] 2 u_out^2 l1_i^2/(8 ln 2)) / s_i, c = sqrt(nu/(8 ln 2)), P2 = sum h^2 (w1^2 + w2^2) (= ||h||_rms^2 ||w1-w2||^2 in expectation); sigma_sums = the same random-rounding model on the kernel's actual partial sums (ulp^2/12 per rounding, summed over the reduction tree); see argmax_flip.c");
    drift_out_meta(o, F_FIT, "critical", "gap_half: P(flip) = 25%% (half the coin-toss limit, the '50%%' critical gap; P = 50%% only at gap 0); gap_p001: P(flip) = 0.1%%. From sigma when status = ok, from sigma_hi (upper bounds) otherwise. _rel: / s; _abs: x median s; _ulp_in/_ulp_out: / ulp of the input/logit format at the median |top logit|");
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                const drift_flip_fit_t *F = &L->FIT[ki][fi][c];
                const drift_lmhead_cfg_t *cf = &ks->k[c].c;
                char ord[DRIFT_ORDER_SPEC_MAX];
                drift_order_print(ord, sizeof ord, &cf->order);
                double uin = drift_ulp(F->l1_med, ks->f), uout = drift_ulp(F->l1_med, cf->out), s = F->s_med;
                drift_cell_t x[NCOL(C_FIT)];
                int n = head(x, L->Ks[ki], ks, c);
                x[n++] = DRIFT_TXT(tag(ks, c)), x[n++] = DRIFT_TXT(cf->exact ? "exact" : ord);
                x[n++] = DRIFT_TXT(cf->exact ? "-" : drift_format_name(cf->acc.acc)), x[n++] = DRIFT_TXT(drift_format_name(cf->out));
                x[n++] = DRIFT_INT(F->fit.n), x[n++] = DRIFT_INT(F->fit.k), x[n++] = DRIFT_TXT(drift_fit_status_name(F->fit.status));
                x[n++] = DRIFT_NUM(F->fit.sigma), x[n++] = DRIFT_NUM(F->fit.sigma_lo), x[n++] = DRIFT_NUM(F->fit.sigma_hi);
                x[n++] = DRIFT_NUM(F->fit.g2), x[n++] = DRIFT_INT(F->fit.df), x[n++] = DRIFT_NUM(F->fit.p_value);
                x[n++] = DRIFT_NUM(ks->k[c].nu), x[n++] = DRIFT_NUM(drift_flip_c(ks->k[c].nu)), x[n++] = DRIFT_NUM(F->sigma_pred);
                x[n++] = DRIFT_NUM(F->fit.sigma / F->sigma_pred), x[n++] = DRIFT_NUM(F->sigma_sums);
                x[n++] = DRIFT_NUM(F->fit.sigma / F->sigma_sums), x[n++] = DRIFT_NUM(s), x[n++] = DRIFT_NUM(F->l1_med);
                x[n++] = DRIFT_NUM(F->half), x[n++] = DRIFT_NUM(F->half * s), x[n++] = DRIFT_NUM(F->half * s / uin);
                x[n++] = DRIFT_NUM(F->half * s / uout), x[n++] = DRIFT_NUM(F->p001), x[n++] = DRIFT_NUM(F->p001 * s);
                x[n++] = DRIFT_NUM(F->p001 * s / uin), x[n++] = DRIFT_NUM(F->p001 * s / uout);
                drift_row_cells(o, F_FIT, x, n);
            }
        }
}

/* Planted exact ties. */
static void write_ties(drift_out_t *o, const lab_t *L)
{
    drift_out_meta(o, F_TIES, "table", "planted exact ties (drift_plant_tie, 16 swapped channel pairs): the exact logits are equal, the terms sit at different positions");
    drift_out_meta(o, F_TIES, "columns", "distinguished: computed logits differ; picked_higher_id: the computed argmax is the higher id (a tie resolved by the numerics, not a flip); flips: always 0 by definition");
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[ki][fi];
            const drift_flipset_t *st = &L->TI[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                drift_flip_ties_t T = {0, 0, 0, 0};
                drift_flipset_ties(&T, st, c);
                drift_cell_t x[NCOL(C_TIES)];
                int n = head(x, L->Ks[ki], ks, c);
                x[n++] = DRIFT_INT(st->n), x[n++] = DRIFT_INT(T.confirmed), x[n++] = DRIFT_INT(T.distinguished);
                x[n++] = DRIFT_INT(T.picked_higher), x[n++] = DRIFT_INT(T.flips);
                drift_row_cells(o, F_TIES, x, n);
            }
        }
}

/* The realistic tables: per (K, format, kernel) the pruning could bound, the flip fraction
 * (F_REAL) and the rows below each critical gap (F_BELOW). */
static void write_realistic(drift_out_t *o, const lab_t *L)
{
    drift_out_meta(o, F_REAL, "table", "realistic heads: fraction of hidden states whose computed argmax differs from the exact argmax");
    drift_out_meta(o, F_REAL, "head", "V = %ld tokens, weights N(0, 1/K) (fp32 master), hidden states N(0,1) with max(1, K/512) outlier channels of magnitude 20..100; %ld hidden states per K", L->V, L->rows);
    drift_out_meta(o, F_REAL, "pruning", "rigorous (gen_logits.h): stage1_mean = tokens surviving the first stage, eval_mean = tokens whose logit this kernel computed; own-format accumulation is left out (no finite bound)");
    drift_out_meta(o, F_REAL, "predicted", "sum over rows of Phi(-rel_gap/sigma_rel) with sigma_rel from the planted fit of the same (K, format, kernel)");
    drift_out_meta(o, F_BELOW, "table", "realistic heads: fraction of rows whose exact relative gap lies below each kernel's critical gaps (from the planted fits)");
    for (int ki = 0; ki < L->nK && L->rows > 0; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[ki][fi];
            const drift_flipset_t *st = &L->RE[ki][fi];
            double s1 = 0;
            long nt = 0;
            for (size_t i = 0; i < st->n; i++) s1 += (double)st->nstage1[i], nt += st->t[i].tie;
            for (int c = 0; c < ks->n; c++) {
                if (!L->real_ok[ki][fi][c]) continue;
                const drift_flip_fit_t *F = &L->FIT[ki][fi][c];
                drift_flip_real_t R;
                drift_flipset_realistic(&R, st, c, F);
                drift_cell_t x[NCOL(C_BELOW)];
                int n = head(x, L->Ks[ki], ks, c);
                x[n++] = DRIFT_INT(st->n), x[n++] = DRIFT_INT(nt), x[n++] = DRIFT_INT(R.flips), x[n++] = DRIFT_NUM(R.rate);
                x[n++] = DRIFT_NUM(R.lo), x[n++] = DRIFT_NUM(R.hi), x[n++] = DRIFT_NUM(R.predicted);
                x[n++] = DRIFT_NUM(s1 / (double)st->n), x[n++] = DRIFT_NUM(R.eval_mean);
                drift_row_cells(o, F_REAL, x, n);
                long a = R.below_half, b = R.below_p001;
                double l1_, h1_, l2_, h2_;
                drift_wilson(&l1_, &h1_, a, (long)st->n, DRIFT_Z95);
                drift_wilson(&l2_, &h2_, b, (long)st->n, DRIFT_Z95);
                n = head(x, L->Ks[ki], ks, c);
                x[n++] = DRIFT_NUM(F->half), x[n++] = DRIFT_INT(a), x[n++] = DRIFT_NUM((double)a / st->n), x[n++] = DRIFT_NUM(l1_);
                x[n++] = DRIFT_NUM(h1_), x[n++] = DRIFT_NUM(F->p001), x[n++] = DRIFT_INT(b), x[n++] = DRIFT_NUM((double)b / st->n);
                x[n++] = DRIFT_NUM(l2_), x[n++] = DRIFT_NUM(h2_);
                drift_row_cells(o, F_BELOW, x, n);
            }
        }
}

/* Realistic heads: the distribution of exact top-2 gaps. */
static void write_gaps(drift_out_t *o, const lab_t *L)
{
    drift_logbins_t gb;
    drift_logbins_init(&gb, 1e-9, 10, 40);
    drift_out_meta(o, F_GAPS, "table", "realistic heads: distribution of the exact top-1/top-2 gap relative to s (log bins, 4 per decade); below_lo: rows with a relative gap under 1e-9 (ties included)");
    for (int ki = 0; ki < L->nK && L->rows > 0; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_flipset_t *st = &L->RE[ki][fi];
            const char *fn = drift_format_name(L->KS[ki][fi].f);
            long cum = 0;
            for (size_t i = 0; i < st->n; i++) cum += st->t[i].rel < gb.edge[0];
            drift_row(o, F_GAPS, DRIFT_INT(L->Ks[ki]), DRIFT_TXT(fn), DRIFT_TXT("below_lo"), DRIFT_TXT("0"), DRIFT_NUM(gb.edge[0]),
                      DRIFT_INT(st->n), DRIFT_INT(cum), DRIFT_NUM((double)cum / st->n), DRIFT_NUM((double)cum / st->n));
            for (int b = 0; b < gb.nbins; b++) {
                long cnt = 0;
                for (size_t i = 0; i < st->n; i++) cnt += drift_logbins_find(&gb, st->t[i].rel) == b;
                cum += cnt;
                char bin[16], lo[32];
                snprintf(bin, sizeof bin, "%d", b);
                snprintf(lo, sizeof lo, "%.6e", gb.edge[b]);
                drift_row(o, F_GAPS, DRIFT_INT(L->Ks[ki]), DRIFT_TXT(fn), DRIFT_TXT(bin), DRIFT_TXT(lo), DRIFT_NUM(gb.edge[b + 1]),
                          DRIFT_INT(st->n), DRIFT_INT(cnt), DRIFT_NUM((double)cnt / st->n), DRIFT_NUM((double)cum / st->n));
            }
        }
}

/* The argmax across batch sizes under the two GEMM policies. */
static void write_batch(drift_out_t *o, const lab_t *L)
{
    drift_out_meta(o, F_BATCH, "table", "the LM head as a GEMM of batch M x V: the kernel each policy picks (lib/ops/policy.h, device %s, %d SMs), and how often the argmax differs from the exact one and from the batch-1 result", L->dev.name, L->dev.sms);
    drift_out_meta(o, F_BATCH, "shape", "n_policy = N the policy sees: V, or V/%ld (a vocabulary-parallel head split over %ld devices)", L->shard, L->shard);
    for (int mode = 0; mode < 2; mode++)
        for (int ki = 0; ki < L->nK; ki++)
            for (int fi = 0; fi < L->nF; fi++) {
                const kset_t *ks = &L->KS[ki][fi];
                const drift_flipset_t *st = mode ? &L->RE[ki][fi] : &L->PL[ki][fi];
                if (mode && L->rows == 0) continue;
                for (int out = 0; out < 2; out++) {
                    if (out && ks->f != DRIFT_BF16 && ks->f != DRIFT_FP16) continue;
                    for (int q = 0; q < L->npol; q++) {
                        int c = L->polcfg[ki][fi][q][out];
                        int c1 = L->polcfg[ki][fi][q - (int)(q % NBATCH)][out]; /* batch 1 of the same policy and shape */
                        long fl = 0, ch = 0;
                        for (size_t i = 0; i < st->n; i++) {
                            fl += st->flip[i * st->ncfg + c];
                            ch += st->pick[i * st->ncfg + c] != st->pick[i * st->ncfg + c1];
                        }
                        const polrow_t *P = &L->polk[ki][q];
                        char ord[DRIFT_ORDER_SPEC_MAX];
                        drift_order_print(ord, sizeof ord, &P->order);
                        size_t N = P->shard ? ceil_div((size_t)L->V, (size_t)L->shard) : (size_t)L->V;
                        drift_row(o, F_BATCH, DRIFT_TXT(mode ? "realistic" : "planted"), DRIFT_INT(L->Ks[ki]),
                                  DRIFT_TXT(drift_format_name(ks->f)), DRIFT_TXT(out ? drift_format_name(ks->f) : "fp32"),
                                  DRIFT_TXT(drift_policy_name(P->pol)), DRIFT_INT(N), DRIFT_INT(P->batch), DRIFT_TXT(P->kernel),
                                  DRIFT_TXT(ord), DRIFT_INT(st->n), DRIFT_INT(fl), DRIFT_INT(ch), DRIFT_NUM(P->cost));
                    }
                }
            }
}

/* The mitigations table. */
static void write_mitigations(drift_out_t *o, const lab_t *L)
{
    drift_out_meta(o, F_MIT, "table", "mitigations at K = %zu, input format %s: flip rate against the exact argmax (for (d): against the exact argmax under the same tie rule)", L->Ks[L->mk], drift_format_name(L->MKS->f));
    drift_out_meta(o, F_MIT, "baseline", "%s", L->MKS->k[L->MKS->engine].name);
    drift_out_meta(o, F_MIT, "eps", "(d) eps = %.6e times s (the baseline's D_0.1%% from the law of its mechanism, argmax_flip_laws.csv) and %.6e times s (10 sigma of its Phi fit, sigma_rel = %.6e)", L->eps_rel[0], L->eps_rel[1], L->base_sigma);
    drift_out_meta(o, F_MIT, "changed", "(c): trials whose argmax differs between batch sizes 1, 8, 64, 256, 1024 (N = V/%ld); -1: not applicable", L->shard);
    drift_out_meta(o, F_MIT, "cost", "cost ratios are wall-clock measurements and live in argmax_flip_timing.csv");
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 1 && L->rows == 0) break;
        for (int m = 0; m < L->nmit; m++) {
            const mit_t *x = &L->MIT[mode][m];
            double lo = NAN, hi = NAN;
            if (x->flips >= 0) drift_wilson(&lo, &hi, x->flips, x->n, DRIFT_Z95);
            drift_row(o, F_MIT, DRIFT_TXT(mode ? "realistic" : "planted"), DRIFT_INT(L->Ks[L->mk]), DRIFT_TXT(drift_format_name(L->MKS->f)),
                      DRIFT_TXT(x->name), DRIFT_TXT(L->MKS->k[x->cfg].name), DRIFT_INT(x->n), DRIFT_INT(x->flips),
                      DRIFT_NUM(x->flips >= 0 ? (double)x->flips / x->n : NAN), DRIFT_NUM(lo), DRIFT_NUM(hi), DRIFT_INT(x->changed));
        }
    }
}

/* Timing: the one non-reproducible file. */
static void write_timing(drift_out_t *o, const lab_t *L)
{
    char v[32], unit[64];
    drift_out_meta(o, F_TIMING, "table", "wall-clock costs of this run: NOT reproducible (machine, load, threads)");
    snprintf(unit, sizeof unit, "us per logit (K = %zu)", L->Ks[L->mk]);
    for (int m = 0; m < L->ncost; m++) {
        snprintf(v, sizeof v, "%.4g", L->cost[m].us);
        drift_row(o, F_TIMING, DRIFT_TXT(L->cost[m].what), DRIFT_TXT(v), DRIFT_TXT(unit));
    }
    const char *what[] = {"planted phase", "realistic phase", "total"};
    const double t[] = {L->t_planted, L->t_real, L->t_total};
    for (int m = 0; m < 3; m++) {
        snprintf(v, sizeof v, "%.3f", t[m]);
        drift_row(o, F_TIMING, DRIFT_TXT(what[m]), DRIFT_TXT(v), DRIFT_TXT("s"));
    }
}

/* With --trials: every planted pair. */
static void write_trials(drift_out_t *o, const lab_t *L)
{
    if (!L->trials_csv) return;
    drift_out_meta(o, F_TRIALS, "table", "every planted pair: flips is one character per kernel, in the order of the kernels metadata line");
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            char names[MAXC * 97] = "";
            for (int c = 0; c < L->KS[ki][fi].n; c++) {
                strcat(names, c ? " " : "");
                strcat(names, L->KS[ki][fi].k[c].name);
            }
            char key[64];
            snprintf(key, sizeof key, "kernels K=%zu %s", L->Ks[ki], drift_format_name(L->KS[ki][fi].f));
            drift_out_meta(o, F_TRIALS, key, "%s", names);
        }
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_flipset_t *st = &L->PL[ki][fi];
            char flips[MAXC + 1];
            for (size_t i = 0; i < st->n; i++) {
                const drift_flip_trial_t *t = &st->t[i];
                for (int c = 0; c < st->ncfg && c < MAXC; c++) flips[c] = (char)('0' + st->flip[i * st->ncfg + c]);
                flips[st->ncfg < MAXC ? st->ncfg : MAXC] = 0;
                drift_row(o, F_TRIALS, DRIFT_INT(L->Ks[ki]), DRIFT_TXT(drift_format_name(L->KS[ki][fi].f)), DRIFT_INT(i),
                          DRIFT_NUM(t->target), DRIFT_NUM(t->gap), DRIFT_NUM(t->gap), DRIFT_NUM(t->rel), DRIFT_NUM(t->s),
                          DRIFT_NUM(t->l1), DRIFT_INT(t->steps), DRIFT_INT(t->reached), DRIFT_INT(t->top1), DRIFT_TXT(flips));
            }
        }
}

/* Report: question, how to reproduce, the critical gaps at the largest K. */
static void md_critical(FILE *fp, const lab_t *L)
{
    const size_t KM = L->Ks[L->mk];
    char ks_list[128] = "";
    for (int ki = 0; ki < L->nK; ki++) snprintf(ks_list + strlen(ks_list), sizeof ks_list - strlen(ks_list), "%s%zu", ki ? "," : "", L->Ks[ki]);
    fprintf(fp, "**Question.** %s Each configuration's argmax is held against the exact argmax of the same rounded "
                "inputs (superaccumulator, MPFR-checked); exact ties are reported apart and never counted as flips.\n\n",
            L->question);
    char repro[1024];
    drift_cli_reproduce(repro, sizeof repro, &L->cli);
    fprintf(fp, "Reproduce: `%s` (K = %s, V = %ld, %ld planted pairs per target gap, %ld realistic hidden states per K; "
                "data/argmax_flip*.csv). Gaps are relative to the logit scale s = ||h||/sqrt(K), the standard deviation of "
                "a logit. The default kernel is `%s` (fp32 accumulation, fp32 logits); \"logits in the format\" means the "
                "tensor-core kernel's fp32 result stored in bf16/fp16, as a model running in that dtype returns it.\n\n",
            repro, ks_list, L->V, L->reps, L->rows, L->KS[L->mk][0].k[L->KS[L->mk][0].def].name);
    fprintf(fp, "**Critical gaps at K = %zu, kernels whose mechanism is accumulation noise** (rounded logits follow another law: next table; planted pairs; fit of P(flip | gap D) = Phi(-D/sigma); D_50 = 0.674 sigma, "
                "where flips are half as likely as a coin toss, P = 25%%, since P reaches 50%% only at D = 0; D_0.1%% = "
                "3.09 sigma; absolute values at the median s = %.3g, ulps of the input format at the median top logit):\n\n",
            KM, L->FIT[L->mk][0][L->KS[L->mk][0].def].s_med);
    fprintf(fp, "| format | kernel | sigma / s [95%% CI] | fit p | predicted: norm form / partial sums | D_50 / s | D_0.1%% / s | D_0.1%% absolute | D_0.1%% in ulps |\n"
                "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    /* only kernels whose mechanism is accumulation noise: for rounded logits the Phi curve is the
     * wrong law and its D_0.1% a gap where no flip can occur (their gaps: the next table) */
    for (int pass = 0; pass < 2; pass++)
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[L->mk][fi];
            int c = pass ? ks->engine : ks->def;
            if (pass && c == ks->def) continue;
            if (L->LAW[L->mk][fi][c].implied != DRIFT_FLIPLAW_GAUSS) continue;
            const drift_flip_fit_t *F = &L->FIT[L->mk][fi][c];
            int ok = F->fit.status == DRIFT_FIT_OK;
            double uin = drift_ulp(F->l1_med, ks->f);
            if (ok)
                fprintf(fp, "| %s | %s | %.3g [%.3g, %.3g] | %.2g | %.3g / %.3g | %.3g | %.3g | %.3g | %.3g |\n", drift_format_name(ks->f),
                        ks->k[c].name, F->fit.sigma, F->fit.sigma_lo, F->fit.sigma_hi, F->fit.p_value, F->sigma_pred,
                        F->sigma_sums, F->half, F->p001, F->p001 * F->s_med, F->p001 * F->s_med / uin);
            else
                fprintf(fp, "| %s | %s | %s (< %.3g) | - | %.3g / %.3g | < %.3g | < %.3g | < %.3g | < %.3g |\n",
                        drift_format_name(ks->f), ks->k[c].name, drift_fit_status_name(F->fit.status), F->fit.sigma_hi,
                        F->sigma_pred, F->sigma_sums, F->half, F->p001, F->p001 * F->s_med, F->p001 * F->s_med / uin);
        }
}

/* Report: every kernel at the largest K, and the growth with K. */
static void md_kernels(FILE *fp, const lab_t *L)
{
    char b1[64], b2[64], b3[64], b4[64], b5[64];
    const size_t KM = L->Ks[L->mk];
    fprintf(fp, "\n**Every kernel, %s inputs, K = %zu** (fit p: binned-deviance goodness of fit; a small p means the "
                "Gaussian-noise curve is the wrong shape):\n\n| kernel | pairs | flips | sigma / s | fit p | predicted, norm form | fitted / norm form | predicted, partial sums | fitted / partial sums |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            drift_format_name(L->MKS->f), KM);
    for (int c = 0; c < L->MKS->n; c++) {
        const drift_flip_fit_t *F = &L->FIT[L->mk][L->mf][c];
        drift_fmt_num(b1, sizeof b1, F->fit.sigma, "%.3g");
        drift_fmt_num(b2, sizeof b2, F->fit.p_value, "%.2g");
        drift_fmt_num(b3, sizeof b3, F->fit.sigma / F->sigma_pred, "%.2f");
        drift_fmt_num(b5, sizeof b5, F->fit.sigma / F->sigma_sums, "%.2f");
        drift_fmt_num(b4, sizeof b4, F->fit.sigma_hi, "%.3g");
        int okf = F->fit.status == DRIFT_FIT_OK;
        fprintf(fp, "| %s | %ld | %ld | %s%s | %s | %.3g | %s | %.3g | %s |\n", L->MKS->k[c].name, F->fit.n, F->fit.k, okf ? "" : "< ",
                okf ? b1 : b4, b2, F->sigma_pred, okf ? b3 : "-", F->sigma_sums, okf ? b5 : "-");
    }
    if (L->nK > 1) {
        fprintf(fp, "\n**Growth with K** (default kernel, sigma / s):");
        for (int fi = 0; fi < L->nF; fi++) {
            fprintf(fp, "%s %s", fi ? ";" : "", drift_format_name(L->KS[0][fi].f));
            for (int ki = 0; ki < L->nK; ki++) fprintf(fp, " %.3g (K = %zu)", L->FIT[ki][fi][L->KS[ki][fi].def].fit.sigma, L->Ks[ki]);
        }
        fprintf(fp, ". Measured against the model rather than against sqrt(K) (%.2f from K = %zu to %zu, which assumes nothing "
                    "else changes with K): the partial-sum model's prediction for the same pairs grows by",
                sqrt((double)L->Ks[L->nK - 1] / (double)L->Ks[0]), L->Ks[0], L->Ks[L->nK - 1]);
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_flip_fit_t *A = &L->FIT[0][fi][L->KS[0][fi].def], *B = &L->FIT[L->nK - 1][fi][L->KS[L->nK - 1][fi].def];
            fprintf(fp, "%s %s %.2f (measured %.2f)", fi ? "," : "", drift_format_name(L->KS[0][fi].f), B->sigma_sums / A->sigma_sums,
                    B->fit.sigma / A->fit.sigma);
        }
        fprintf(fp, ".\n");
    }
}

/* Report: exact ties, and the realistic heads. */
static void md_ties_realistic(FILE *fp, const lab_t *L)
{
    char b1[64];
    const size_t KM = L->Ks[L->mk];
    {
        long nt = 0, conf = 0, cells = 0;
        drift_flip_ties_t T = {0, 0, 0, 0};
        for (int ki = 0; ki < L->nK; ki++)
            for (int fi = 0; fi < L->nF; fi++) {
                const drift_flipset_t *st = &L->TI[ki][fi];
                for (size_t i = 0; i < st->n; i++) conf += st->t[i].tie;
                for (int c = 0; c < st->ncfg; c++) drift_flipset_ties(&T, st, c);
                nt += (long)st->n;
                cells += (long)st->n * st->ncfg;
            }
        long dist = T.distinguished, hi = T.picked_higher, fl = T.flips;
        fprintf(fp, "\n**Exact ties.** %ld planted exact ties (all K and formats; %ld confirmed exact by the witness): over "
                    "%ld (tie, kernel) cases the computed logits differed in %ld and the kernel picked the higher id in %ld; "
                    "these are reported as ties, and the flip count is %ld.\n",
                nt, conf, cells, dist, hi, fl);
    }
    if (L->rows > 0) {
        fprintf(fp, "\n**Realistic heads, K = %zu, V = %ld, %ld hidden states** (rows whose computed argmax differs from the "
                    "exact one; predicted = sum of Phi(-gap/sigma) with the planted sigma; last column: rows whose exact gap "
                    "lies below the kernel's D_0.1%%):\n\n| format | kernel | flips | rate [95%% CI] | predicted | rows below D_0.1%% |\n"
                    "|---|---|---:|---:|---:|---:|\n",
                KM, L->V, L->rows);
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[L->mk][fi];
            const drift_flipset_t *st = &L->RE[L->mk][fi];
            int cs[3] = {ks->def, ks->engine, ks->exact};
            for (int q = 0; q < 3; q++) {
                int c = cs[q];
                if (q == 1 && c == ks->def) continue;
                drift_flip_real_t R;
                drift_flipset_realistic(&R, st, c, &L->FIT[L->mk][fi][c]);
                drift_fmt_num(b1, sizeof b1, R.predicted, "%.3g");
                fprintf(fp, "| %s | %s | %ld / %zu | %.3g [%.3g, %.3g] | %s | %ld (%.3g%%) |\n", drift_format_name(ks->f),
                        ks->k[c].name, R.flips, st->n, R.rate, R.lo, R.hi, b1, R.below_p001, 100.0 * R.below_p001 / st->n);
            }
        }
        /* the gap distribution in one line */
        const drift_flipset_t *st = &L->RE[L->mk][L->mf];
        double *g = malloc((st->n + 1) * sizeof *g);
        if (!g) drift_die("out of memory");
        for (size_t i = 0; i < st->n; i++) g[i] = st->t[i].rel;
        qsort(g, st->n, sizeof *g, drift_cmp_double);
        fprintf(fp, "\nExact top-2 gaps of the realistic rows (%s, K = %zu), relative to s: median %.3g, 10%% below %.3g, "
                    "1%% below %.3g, smallest %.3g.\n",
                drift_format_name(L->MKS->f), KM, g[st->n / 2], g[st->n / 10], g[st->n / 100], g[0]);
        free(g);
    }
}

/* Report: the batch shape. */
static void md_batch(FILE *fp, const lab_t *L)
{
    {
        int narrow = L->MKS->f == DRIFT_BF16 || L->MKS->f == DRIFT_FP16;
        fprintf(fp, "\n**Batch shape.** For the LM head as a GEMM (batch x V) on %s (%d SMs), the vendor-like policy picks",
                L->dev.name, L->dev.sms);
        for (int sh = 0; sh < 2; sh++) {
            fprintf(fp, "%s for N = %zu:", sh ? "; and" : "", sh ? ceil_div((size_t)L->V, (size_t)L->shard) : (size_t)L->V);
            for (int b = 0; b < NBATCH; b++) {
                const polrow_t *r = &L->polk[L->mk][DRIFT_POLICY_VENDOR_LIKE * 2 * NBATCH + sh * NBATCH + b];
                fprintf(fp, "%s `%s` (batch %ld)", b ? "," : "", r->kernel, r->batch);
            }
        }
        long ch[2][2] = {{0, 0}, {0, 0}}, n = 0; /* [logits fp32 | in the format][planted | realistic] */
        for (int o = 0; o < 2; o++)
            for (int mode = 0; mode < 2; mode++) {
                if ((mode == 1 && L->rows == 0) || (o == 1 && !narrow)) continue;
                const drift_flipset_t *st = mode ? &L->RE[L->mk][L->mf] : &L->PL[L->mk][L->mf];
                int cb[NBATCH], q0 = DRIFT_POLICY_VENDOR_LIKE * 2 * NBATCH + NBATCH;
                for (int b = 0; b < NBATCH; b++) cb[b] = L->polcfg[L->mk][L->mf][q0 + b][o];
                for (size_t i = 0; i < st->n; i++) ch[o][mode] += drift_flipset_changed(st, i, cb, NBATCH);
                if (mode == 0) n = (long)st->n;
            }
        fprintf(fp, ". The batch-invariant policy always runs `tiled:128,128,32` (seq order). With the sharded shape the "
                    "vendor-like argmax (%s inputs) changed with the batch size for %ld of %ld planted pairs and %ld of %ld "
                    "realistic rows with fp32 logits",
                drift_format_name(L->MKS->f), ch[0][0], n, ch[0][1], L->rows);
        if (narrow)
            fprintf(fp, ", and for %ld and %ld with the logits stored in %s (the coarse logits hide the order change)",
                    ch[1][0], ch[1][1], drift_format_name(L->MKS->f));
        fprintf(fp, "; batch-invariant: 0 by construction (one order for every batch). The planted pairs' gaps are "
                    "log-uniform from 1e-7 to 1 s, so they weight near-ties far more than real heads do.\n");
    }
}

/* Report: the mitigations. */
static void md_mitigations(FILE *fp, const lab_t *L)
{
    char b1[64];
    const size_t KM = L->Ks[L->mk];
    fprintf(fp, "\n**Mitigations, K = %zu, %s inputs** (flip rate against the exact argmax; for the tie-breaker against the "
                "exact argmax under the same rule; eps from the baseline's law (D_0.1%% = %.3g s) and its Phi fit (sigma / s = %.3g); cost ratio against the baseline: "
                "measured for CPU emulation in this run, or modelled by policy.h's roofline):\n\n"
                "| mitigation | kernel | realistic flip rate [95%% CI] | planted flip rate | changed across batch sizes | cost ratio |\n"
                "|---|---|---:|---:|---:|---:|\n",
            KM, drift_format_name(L->MKS->f), L->eps_rel[0], L->base_sigma);
    for (int m = 0; m < L->nmit; m++) {
        const mit_t *P = &L->MIT[0][m], *R = &L->MIT[1][m];
        char rr[96] = "-", ch[64] = "-";
        if (L->rows > 0 && R->flips >= 0) {
            double lo, hi;
            drift_wilson(&lo, &hi, R->flips, R->n, DRIFT_Z95);
            snprintf(rr, sizeof rr, "%.3g [%.3g, %.3g]", (double)R->flips / R->n, lo, hi);
        }
        if (P->changed >= 0) snprintf(ch, sizeof ch, "%ld / %ld planted%s", P->changed, P->n, L->rows > 0 ? "" : "");
        if (P->changed >= 0 && L->rows > 0) snprintf(ch + strlen(ch), sizeof ch - strlen(ch), ", %ld / %ld realistic", R->changed, R->n);
        drift_fmt_num(b1, sizeof b1, P->flips >= 0 ? (double)P->flips / P->n : NAN, "%.3g");
        fprintf(fp, "| %s | %s | %s | %s | %s | %.3g (%s) |\n", P->name, L->MKS->k[P->cfg].name, rr, b1, ch, P->cost, P->cost_src);
    }
    fprintf(fp, "\nCosts are wall-clock and not reproducible (data/argmax_flip_timing.csv); on a GPU the ratios differ "
                "(tensor cores are an order of magnitude faster than fp32 FMA, and an exact dot product has no hardware).\n");
}

/* Report: the takeaway. */
static void md_takeaway(FILE *fp, const lab_t *L)
{
    const size_t KM = L->Ks[L->mk];
    {
        const kset_t *k0 = &L->KS[L->mk][0];
        double lo = INFINITY, hi = 0;
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_flip_fit_t *F = &L->FIT[L->mk][fi][L->KS[L->mk][fi].def];
            lo = fmin(lo, F->p001);
            hi = fmax(hi, F->p001);
        }
        fprintf(fp, "\n**Takeaway.**\n\n");
        fprintf(fp, "- With the default kernel (`%s`) at K = %zu, the critical gap D_0.1%% is", k0->k[k0->def].name, KM);
        for (int fi = 0; fi < L->nF; fi++) {
            const drift_flip_fit_t *F = &L->FIT[L->mk][fi][L->KS[L->mk][fi].def];
            fprintf(fp, "%s %s %.3g s (D_50 = %.3g s)", fi ? (fi + 1 == L->nF ? " and" : ",") : "", drift_format_name(L->KS[L->mk][fi].f),
                    F->p001, F->half);
        }
        fprintf(fp, ": within a factor %.2f of each other. Against exact(rounded inputs), with fp32 accumulation the input "
                    "format hardly matters, because products of narrow inputs are exact in fp32 and only the accumulation "
                    "rounds.",
                hi / lo);
        if (L->rows > 0 && L->fu >= 0 && L->ref_in[L->mk][L->mf] >= 0)
            fprintf(fp, " Against the unrounded fp32 inputs it matters most: rounding h and W to %s alone changes the exact "
                        "argmax of %ld of %ld realistic rows, while the default kernel adds %ld flips against exact(rounded).",
                    drift_format_name(L->MKS->f), L->ref_in[L->mk][L->mf], L->rows, drift_flipset_flips(&L->RE[L->mk][L->mf], L->MKS->def));
        fprintf(fp, "\n");
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[L->mk][fi];
            if (ks->engine == ks->def || (ks->f != DRIFT_BF16 && ks->f != DRIFT_FP16)) continue;
            const drift_flip_laws_t *E = &L->LAW[L->mk][fi][ks->engine];
            const drift_flip_fit_t *D = &L->FIT[L->mk][fi][ks->def];
            fprintf(fp, "- Logits stored in %s (`%s`) flip by the %s law (output rounding on top of accumulation noise): "
                        "D_0.1%% = %.3g s = %.2g %s ulps, %.0fx the default kernel's; beyond about one ulp of the top logit "
                        "no flip can occur. Against the Gaussian curve the %s law leads by %.1f in log-likelihood (power "
                        "%.3g over %ld pairs, %d informative): %s.\n",
                    drift_format_name(ks->f), ks->k[ks->engine].name, drift_fliplaw_name(E->implied), E->d001, E->d001_ulp,
                    drift_format_name(ks->k[ks->engine].c.out), E->d001 / D->p001, drift_fliplaw_name(E->implied),
                    E->choice.dloglik, E->choice.power_a, E->pairs, E->choice.informative,
                    E->choice.decided ? (E->choice.dloglik > 0 ? "the data decide for it" : "the data decide against it")
                                      : "the design cannot tell the two apart at this size");
        }
        if (L->MKS->tc32 >= 0) {
            const drift_flip_fit_t *T = &L->FIT[L->mk][L->mf][L->MKS->tc32];
            fprintf(fp, "- Tensor cores with fp32 logits (`%s`): sigma / s = %.3g, %.2fx the partial-sum prediction; that "
                        "prediction treats every rounding as unbiased and independent, while the tensor-core model truncates "
                        "(rounds toward zero) both the aligned terms and each block's result - biased errors the "
                        "prediction leaves out (a plausible source of the excess, not one this run isolates).\n",
                    L->MKS->k[L->MKS->tc32].name, T->fit.sigma, T->fit.sigma / T->sigma_sums);
        }
        {
            const drift_flip_laws_t *X = &L->LAW[L->mk][L->mf][L->MKS->exact];
            const drift_fliplaw_fit_t *T = &X->fit[DRIFT_FLIPLAW_TRIANGLE];
            if (T->status == DRIFT_FIT_OK)
                fprintf(fp, "- Even the exact LM head, its logits rounded once to fp32 (`%s`), flips - but only below one fp32 "
                            "ulp of the top logit: two logits closer than that round to the same value and the tie goes to "
                            "the lower id, P = 1/2 (1 - D/q) (fitted scale kappa = %.3g [%.3g, %.3g], 1 predicted); D_0.1%% = "
                            "%.3g s = %.3g ulps.\n",
                        L->MKS->k[L->MKS->exact].name, T->theta, T->lo, T->hi, X->d001, X->d001_ulp);
        }
        const drift_flip_fit_t *D0 = &L->FIT[L->mk][L->mf][L->MKS->def];
        fprintf(fp, "- The random-rounding model in its norm form, sigma = c sqrt(K) u ||h||_rms ||w1 - w2|| with c = %.3f "
                    "for `%s`, predicts sigma / s = %.3g; the fit gives %.3g (%.2fx). The same model applied to the kernel's "
                    "actual partial sums predicts %.3g (%.2fx): a top logit's partial sums drift towards it instead of "
                    "wandering, and that drift, not the random walk, sets the noise of a top-1/top-2 comparison.\n",
                drift_flip_c(L->MKS->k[L->MKS->def].nu), L->MKS->k[L->MKS->def].name, D0->sigma_pred, D0->fit.sigma,
                D0->fit.sigma / D0->sigma_pred, D0->sigma_sums, D0->fit.sigma / D0->sigma_sums);
        if (L->rows > 0) {
            const drift_flipset_t *st = &L->RE[L->mk][L->mf];
            long kd = drift_flipset_flips(st, L->MKS->def), ke = drift_flipset_flips(st, L->MKS->engine);
            fprintf(fp, "- On realistic heads (V = %ld, K = %zu, %s) %ld of %ld rows flipped with the default kernel and %ld "
                        "with `%s`: what matters in practice is where the logits are rounded, not how the sum was ordered.\n",
                    L->V, KM, drift_format_name(L->MKS->f), kd, L->rows, ke, L->MKS->k[L->MKS->engine].name);
        }
    }
}

/* The law each kernel's mechanism implies, all three fitted (fliplaw.h, flipfit.h). */
static void write_laws(drift_out_t *o, const lab_t *L)
{
    drift_out_meta(o, F_LAWS, "table", "planted pairs: the flip law of each kernel's mechanism (gauss: accumulation noise; triangle: output rounding, 1/2 (1 - D/q)+; conv: both) fitted by maximum likelihood; q = the logit format's spacing at the exact top logit / s");
    drift_out_meta(o, F_LAWS, "choice", "dloglik = loglik(implied) - loglik(rival) (one parameter each); power = expected log-likelihood ratio if the implied law were true; decided = |dloglik| >= 3 and power >= 3 (a likelihood ratio of 20)");
    drift_out_meta(o, F_LAWS, "gaps", "gap_p01 / gap_p001: the gaps at which the implied law's flip probability is 1%% / 0.1%%, relative to s and in output ulps (q at the median)");
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                const drift_flip_laws_t *W = &L->LAW[ki][fi][c];
                const drift_fliplaw_fit_t *G = &W->fit[DRIFT_FLIPLAW_GAUSS], *T = &W->fit[DRIFT_FLIPLAW_TRIANGLE],
                                          *C = &W->fit[DRIFT_FLIPLAW_CONV];
                drift_cell_t cells[NCOL(C_LAWS)];
                int n = head(cells, L->Ks[ki], ks, c);
                cells[n++] = DRIFT_TXT(drift_fliplaw_name(W->implied));
                cells[n++] = DRIFT_INT(W->pairs), cells[n++] = DRIFT_INT(W->flips);
                cells[n++] = DRIFT_TXT(drift_fit_status_name(G->status)), cells[n++] = DRIFT_NUM(G->theta);
                cells[n++] = DRIFT_NUM(G->loglik), cells[n++] = DRIFT_NUM(G->p_value);
                cells[n++] = DRIFT_TXT(drift_fit_status_name(T->status)), cells[n++] = DRIFT_NUM(T->theta);
                cells[n++] = DRIFT_NUM(T->loglik), cells[n++] = DRIFT_NUM(T->p_value);
                cells[n++] = DRIFT_TXT(drift_fit_status_name(C->status)), cells[n++] = DRIFT_NUM(C->theta);
                cells[n++] = DRIFT_NUM(C->loglik), cells[n++] = DRIFT_NUM(C->p_value);
                cells[n++] = DRIFT_TXT(drift_fliplaw_name(W->rival)), cells[n++] = DRIFT_NUM(W->choice.dloglik);
                cells[n++] = DRIFT_NUM(W->choice.power_a), cells[n++] = DRIFT_INT(W->choice.informative);
                cells[n++] = DRIFT_INT(W->choice.decided), cells[n++] = DRIFT_NUM(W->q_med);
                cells[n++] = DRIFT_NUM(W->d01), cells[n++] = DRIFT_NUM(W->d001);
                cells[n++] = DRIFT_NUM(W->d01_ulp), cells[n++] = DRIFT_NUM(W->d001_ulp);
                drift_row_cells(o, F_LAWS, cells, n);
            }
        }
}

static void write_refs(drift_out_t *o, const lab_t *L)
{
    drift_out_meta(o, F_REFS, "table", "realistic rows against two references: exact(rounded inputs) and exact(unrounded inputs) (the fp32 master values: the fp32 format's exact argmax); -1 = not available (no fp32 format in the run, or own-format accumulation, which the pruning cannot bound)");
    drift_out_meta(o, F_REFS, "columns", "input_rounding_flips: rows whose exact argmax changes when the inputs are rounded to the format; flips_vs_exact_rounded: the kernel's argmax against exact(rounded); accumulation_flips: the kernel's partner (same accumulation, logits kept in the accumulator) against exact(rounded); output_rounding_changes: the kernel's argmax against its partner's (for the exact head: against exact(rounded)); flips_vs_exact_unrounded: the kernel against exact(unrounded). Exact ties are never flips.");
    if (L->rows <= 0) return;
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            const kset_t *ks = &L->KS[ki][fi];
            for (int c = 0; c < ks->n; c++) {
                drift_cell_t cells[NCOL(C_REFS)];
                int n = head(cells, L->Ks[ki], ks, c);
                cells[n++] = DRIFT_INT(L->rows), cells[n++] = DRIFT_INT(L->ref_in[ki][fi]);
                cells[n++] = DRIFT_INT(L->real_ok[ki][fi][c] ? drift_flipset_flips(&L->RE[ki][fi], c) : -1);
                cells[n++] = DRIFT_INT(L->ref_acc[ki][fi][c]), cells[n++] = DRIFT_INT(L->ref_out[ki][fi][c]);
                cells[n++] = DRIFT_INT(L->ref_tot[ki][fi][c]);
                drift_row_cells(o, F_REFS, cells, n);
            }
        }
}

/* Report: critical gaps from the law of each mechanism. */
static void md_laws(FILE *fp, const lab_t *L)
{
    const size_t KM = L->Ks[L->mk];
    fprintf(fp, "\n**Critical gaps from the law of each mechanism, K = %zu** (planted pairs). Accumulation noise flips with "
                "P = Phi(-D/sigma); storing a logit (rounding it once) flips only when both logits round to one value, "
                "P = 1/2 (1 - D/q)+ with q the logit format's spacing at the top logit - exactly 0 beyond one ulp; with "
                "both, their convolution (lib/core/fliplaw.h). D_1%% and D_0.1%% are taken from the law the mechanism "
                "implies, fitted by maximum likelihood; \"vs rival\" is its log-likelihood lead over the other law "
                "(Gaussian, or the triangle for a Gaussian mechanism) with the expected lead if it were true (power; "
                "decided when both reach log 20 = 3.0):\n\n"
                "| format | kernel | law | parameter [95%% CI] | D_1%% / s | D_0.1%% / s | D_0.1%% in logit ulps | vs rival: lead (power), pairs, informative |\n"
                "|---|---|---|---:|---:|---:|---:|---:|\n", KM);
    for (int fi = 0; fi < L->nF; fi++) {
        const kset_t *ks = &L->KS[L->mk][fi];
        int show[4] = {ks->def, ks->engine, ks->tc32, ks->exact}, seen[4] = {0};
        for (int j = 0; j < 4; j++) {
            int c = show[j];
            if (c < 0) continue;
            int dup = 0;
            for (int i = 0; i < j; i++) dup |= seen[i] == c + 1;
            seen[j] = c + 1;
            if (dup) continue;
            const drift_flip_laws_t *W = &L->LAW[L->mk][fi][c];
            const drift_fliplaw_fit_t *F = &W->fit[W->implied];
            const char *pn = W->implied == DRIFT_FLIPLAW_TRIANGLE ? "kappa" : "sigma / s";
            char b1[64], b2[64], b3[64], b4[64];
            drift_fmt_num(b1, sizeof b1, W->d01, "%.3g");
            drift_fmt_num(b2, sizeof b2, W->d001, "%.3g");
            drift_fmt_num(b3, sizeof b3, W->d001_ulp, "%.3g");
            drift_fmt_num(b4, sizeof b4, W->choice.power_a, "%.3g");
            const char *up = F->status == DRIFT_FIT_NO_FLIPS ? "< " : "";
            fprintf(fp, "| %s | %s | %s | %s %s%.3g [%.3g, %.3g] | %s%s | %s%s | %s%s | %+.1f (%s), %ld, %d%s |\n", drift_format_name(ks->f),
                    ks->k[c].name, drift_fliplaw_name(W->implied), pn, up, F->status == DRIFT_FIT_NO_FLIPS ? F->hi : F->theta,
                    F->lo, F->hi, up, b1, up, b2, up, b3, W->choice.dloglik, b4, W->pairs, W->choice.informative,
                    W->choice.decided ? ", decided" : ", not decided");
        }
    }
}

/* Report: realistic rows against the two references. */
static void md_refs(FILE *fp, const lab_t *L)
{
    if (L->rows <= 0 || L->fu < 0) return;
    const size_t KM = L->Ks[L->mk];
    fprintf(fp, "\n**Two references, realistic heads, K = %zu** (%ld hidden states; exact(unrounded) = the exact argmax of the "
                "fp32 master h and W, exact(rounded) = that of the inputs rounded to the format; a kernel's accumulation "
                "flips are those of the same kernel with its logits kept in the accumulator, its output-rounding changes "
                "are where storing the logits changed its argmax):\n\n"
                "| format | kernel | input rounding | accumulation | output rounding | total vs exact(unrounded) |\n|---|---|---:|---:|---:|---:|\n",
            KM, L->rows);
    for (int fi = 0; fi < L->nF; fi++) {
        const kset_t *ks = &L->KS[L->mk][fi];
        int show[4] = {ks->def, ks->engine, ks->tc32, ks->exact}, seen[4] = {0};
        for (int j = 0; j < 4; j++) {
            int c = show[j];
            if (c < 0) continue;
            int dup = 0;
            for (int i = 0; i < j; i++) dup |= seen[i] == c + 1;
            seen[j] = c + 1;
            if (dup || L->ref_tot[L->mk][fi][c] < 0) continue;
            fprintf(fp, "| %s | %s | %ld | %ld | %ld | %ld |\n", drift_format_name(ks->f), ks->k[c].name, L->ref_in[L->mk][fi],
                    L->ref_acc[L->mk][fi][c], L->ref_out[L->mk][fi][c], L->ref_tot[L->mk][fi][c]);
        }
    }
    fprintf(fp, "\nThe columns count rows, not an additive budget: a row can flip under two mechanisms, and one can undo "
                "another.\n");
}

/* The headline numbers of a finished run (largest K, bf16 or the first narrow format). */
static void rob_collect(lab_t *dst, const lab_t *L)
{
    if (dst->nROB >= 9) return;
    int i = dst->nROB++;
    const kset_t *ks = L->MKS;
    const drift_flip_fit_t *D = &L->FIT[L->mk][L->mf][ks->def];
    const drift_flip_laws_t *E = &L->LAW[L->mk][L->mf][ks->engine], *X = &L->LAW[L->mk][L->mf][ks->exact];
    const drift_fliplaw_fit_t *T = &X->fit[DRIFT_FLIPLAW_TRIANGLE];
    dst->ROB[i].seed = L->cli.seed;
    dst->ROB[i].ok = 1;
    dst->ROB[i].def_sigma = D->fit.status == DRIFT_FIT_OK ? D->fit.sigma : NAN;
    dst->ROB[i].def_p001 = D->p001;
    dst->ROB[i].eng_d001 = E->d001, dst->ROB[i].eng_d001_ulp = E->d001_ulp;
    dst->ROB[i].eng_dll = E->choice.dloglik, dst->ROB[i].eng_power = E->choice.power_a;
    dst->ROB[i].eng_decided = E->choice.decided;
    dst->ROB[i].kap = T->theta, dst->ROB[i].kap_lo = T->lo, dst->ROB[i].kap_hi = T->hi;
    dst->ROB[i].ex_d001_ulp = X->d001_ulp;
    dst->ROB[i].real_def = L->rows > 0 ? drift_flipset_flips(&L->RE[L->mk][L->mf], ks->def) : -1;
    dst->ROB[i].real_eng = L->rows > 0 ? drift_flipset_flips(&L->RE[L->mk][L->mf], ks->engine) : -1;
    dst->ROB[i].in_flips = L->ref_in[L->mk][L->mf];
}

/* Report: the headline at every seed, and only what holds at all of them. */
static void md_robust(FILE *fp, const lab_t *L)
{
    if (L->nROB < 2) return;
    const kset_t *ks = L->MKS;
    fprintf(fp, "\n**The headline at %d seeds** (K = %zu, %s inputs; seeds other than %llu rerun the planted pairs and the "
                "realistic rows at this K only, without the GEMM policies):\n\n"
                "| seed | `%s`: sigma / s | D_0.1%% / s | `%s`: law lead over Gaussian (power) | D_0.1%% in %s ulps | exact head: kappa [95%% CI] | realistic flips: default / stored logits | input rounding alone |\n"
                "|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            L->nROB, L->Ks[L->mk], drift_format_name(ks->f), (unsigned long long)L->ROB[0].seed, ks->k[ks->def].name,
            ks->k[ks->engine].name, drift_format_name(ks->k[ks->engine].c.out));
    int all_dec = 1, all_in = 1, all_eng_gt = 1, all_kap = 1;
    double smin = INFINITY, smax = 0, umin = INFINITY, umax = 0;
    long inmin = 1L << 60, inmax = -1;
    for (int i = 0; i < L->nROB; i++) {
        const struct rob *r = &L->ROB[i];
        fprintf(fp, "| %llu | %.3g | %.3g | %+.1f (%.3g)%s | %.3g | %.3g [%.3g, %.3g] | %ld / %ld | %ld |\n", (unsigned long long)r->seed,
                r->def_sigma, r->def_p001, r->eng_dll, r->eng_power, r->eng_decided ? ", decided" : "", r->eng_d001_ulp, r->kap,
                r->kap_lo, r->kap_hi, r->real_def, r->real_eng, r->in_flips);
        all_dec &= r->eng_decided && r->eng_dll > 0;
        all_in &= r->in_flips > r->real_def;
        all_eng_gt &= r->real_eng > r->real_def;
        all_kap &= r->kap_lo <= 1 && 1 <= r->kap_hi;
        smin = fmin(smin, r->def_sigma), smax = fmax(smax, r->def_sigma);
        umin = fmin(umin, r->eng_d001_ulp), umax = fmax(umax, r->eng_d001_ulp);
        inmin = r->in_flips < inmin ? r->in_flips : inmin, inmax = r->in_flips > inmax ? r->in_flips : inmax;
    }
    fprintf(fp, "\nAt every seed: the default kernel's sigma / s lies in [%.3g, %.3g]; storing the logits in %s puts "
                "D_0.1%% at %.3g to %.3g ulps%s; ",
            smin, smax, drift_format_name(ks->k[ks->engine].c.out), umin, umax,
            umax <= 1 ? ", never beyond one ulp" : " (beyond one ulp only where the fitted accumulation noise widens the triangle)");
    if (all_dec) fprintf(fp, "the %s law beats the Gaussian curve decisively at every seed; ", drift_fliplaw_name(L->LAW[L->mk][L->mf][ks->engine].implied));
    else fprintf(fp, "the choice between the %s law and the Gaussian curve is not decided at every seed (no claim is made); ", drift_fliplaw_name(L->LAW[L->mk][L->mf][ks->engine].implied));
    if (all_kap) fprintf(fp, "the exact head's kappa interval holds 1 (the triangle with the known fp32 spacing) at every seed; ");
    if (all_in) fprintf(fp, "rounding the inputs alone changes the exact argmax of %ld to %ld of %ld realistic rows, more than the default kernel's accumulation flips at every seed; ", inmin, inmax, L->rows);
    else fprintf(fp, "input rounding alone changes the exact argmax of %ld to %ld of %ld realistic rows (not more than the default kernel's flips at every seed); ", inmin, inmax, L->rows);
    fprintf(fp, "%s.\n", all_eng_gt ? "stored logits flip more realistic rows than fp32 logits at every seed"
                                     : "stored logits do not flip more realistic rows than fp32 logits at every seed");
}

/* The summary for people. */
static void print_summary(const lab_t *L)
{
    const size_t KM = L->Ks[L->mk];
        putchar('\n');
        printf("critical gaps at K = %zu (relative to the logit scale s; planted pairs, Phi fit):\n", KM);
        printf("%-6s %-24s %10s %8s %10s %10s %10s %10s\n", "format", "kernel", "sigma/s", "fit p", "norm/s", "sums/s", "D_50/s",
               "D_0.1%/s");
        for (int pass = 0; pass < 2; pass++)
            for (int fi = 0; fi < L->nF; fi++) {
                const kset_t *ks = &L->KS[L->mk][fi];
                int c = pass ? ks->engine : ks->def;
                if (pass && c == ks->def) continue;
                const drift_flip_fit_t *F = &L->FIT[L->mk][fi][c];
                printf("%-6s %-24s %10.3g %8.2g %10.3g %10.3g %10.3g %10.3g%s\n", drift_format_name(ks->f), ks->k[c].name,
                       F->fit.status == DRIFT_FIT_OK ? F->fit.sigma : F->fit.sigma_hi, F->fit.p_value, F->sigma_pred,
                       F->sigma_sums, F->half, F->p001, F->fit.status == DRIFT_FIT_OK ? "" : " (upper bounds)");
            }
        if (L->rows > 0) {
            printf("\nrealistic heads (K = %zu, V = %ld, %ld rows): flips", KM, L->V, L->rows);
            for (int fi = 0; fi < L->nF; fi++) {
                const kset_t *ks = &L->KS[L->mk][fi];
                const drift_flipset_t *st = &L->RE[L->mk][fi];
                long kd = drift_flipset_flips(st, ks->def), ke = drift_flipset_flips(st, ks->engine);
                printf("%s %s %ld", fi ? ";" : "", drift_format_name(ks->f), kd);
                if (ks->engine != ks->def) printf(" (%ld with %s)", ke, ks->k[ks->engine].name);
            }
            printf("\n");
        }
        printf("\nmitigations (K = %zu, %s):\n", KM, drift_format_name(L->MKS->f));
        for (int m = 0; m < L->nmit; m++) {
            const mit_t *P = &L->MIT[0][m], *R = &L->MIT[1][m];
            printf("  %-62s planted %5.3f", P->name, P->flips >= 0 ? (double)P->flips / P->n : NAN);
            if (L->rows > 0) printf("  realistic %6.4f", R->flips >= 0 ? (double)R->flips / R->n : NAN);
            printf("  cost x%.3g\n", P->cost);
        }
        printf("\nWhat you just saw: two logits closer than the LM head's rounding noise sigma swap places at random;\n"
               "the flip probability falls like Phi(-gap/sigma), from a coin toss at gap 0 to 0.1%% at 3.09 sigma. With fp32\n"
               "accumulation sigma is %.2g of the logit scale at K = %zu (%s, %s) whatever the input format (narrow products\n"
               "are exact in fp32), it grows like sqrt(K), and tree-like orders shrink it. Storing the logits in bf16 or fp16\n"
               "coarsens everything to the output grid (ties broken by token id) and makes flips common on realistic heads;\n"
               "fp32 logits or an exact LM head remove almost all of them, a batch-invariant kernel makes the choice\n"
               "independent of the batch but not correct, and a gap threshold only moves the coin toss to the threshold.\n"
               "Planted %.1f s, realistic %.1f s. Files: %s/argmax_flip*.csv, argmax_flip.md; plots: ./lab plot argmax_flip.\n",
               L->FIT[L->mk][L->mf][L->MKS->def].fit.sigma, KM, drift_format_name(L->MKS->f), L->MKS->k[L->MKS->def].name, L->t_planted, L->t_real,
               L->cli.out_dir);
}

/* Every output file, written only after everything is computed (temporary file + rename). */
static void write_files(const lab_t *L)
{
    const drift_table_spec_t tables[NTABLES] = {
        {".csv", NULL, 0, C_BINS, NCOL(C_BINS)},           {"_fit.csv", NULL, 0, C_FIT, NCOL(C_FIT)},
        {"_ties.csv", NULL, 0, C_TIES, NCOL(C_TIES)},      {"_realistic.csv", NULL, 0, C_REAL, NCOL(C_REAL)},
        {"_gaps.csv", NULL, 0, C_GAPS, NCOL(C_GAPS)},      {"_below.csv", NULL, 0, C_BELOW, NCOL(C_BELOW)},
        {"_batch.csv", NULL, 0, C_BATCH, NCOL(C_BATCH)},   {"_mitigations.csv", NULL, 0, C_MIT, NCOL(C_MIT)},
        {"_timing.csv", NULL, 0, C_TIMING, NCOL(C_TIMING)},
        {L->trials_csv ? "_trials.csv" : NULL /* optional */, NULL, 0, C_TRIALS, NCOL(C_TRIALS)},
        {"_laws.csv", NULL, 0, C_LAWS, NCOL(C_LAWS)},      {"_refs.csv", NULL, 0, C_REFS, NCOL(C_REFS)}};
    drift_out_t out;
    drift_out_open(&out, &L->cli, tables, NTABLES, 1);
    write_bins(&out, L);
    write_fits(&out, L);
    write_ties(&out, L);
    write_realistic(&out, L);
    write_gaps(&out, L);
    write_batch(&out, L);
    write_mitigations(&out, L);
    write_timing(&out, L);
    write_trials(&out, L);
    write_laws(&out, L);
    write_refs(&out, L);
    /* the report fragment: every number comes from the arrays written above */
    FILE *md = out.md;
    md_critical(md, L);
    md_laws(md, L);
    md_kernels(md, L);
    md_ties_realistic(md, L);
    md_refs(md, L);
    md_batch(md, L);
    md_mitigations(md, L);
    md_takeaway(md, L);
    md_robust(md, L);
    drift_out_commit(&out);
}

/* ---- main: the protocol -------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static lab_t lab;
    lab_t *L = &lab;

    setup(L, argc, argv);        /* question and options */
    static lab_t base_copy;      /* the options as parsed: the robustness reruns start from them */
    base_copy = *L;
    const lab_t *base = &base_copy;
    choose_kernels(L);           /* kernels, orders and the GEMM policies' picks */
    make_models(L);

    run_planted(L);              /* (1) planted gaps and exact ties */
    run_realistic(L);            /* (2) realistic heads */
    drift_progress(&L->cli, L->total, L->total);

    fit_sigmas(L);               /* Phi(-D/sigma) per kernel, with its predictions, and each mechanism's law */
    two_references(L);           /* realistic rows against exact(rounded) and exact(unrounded) */
    rob_collect(L, L);
    for (long e = 1; e <= L->nrob; e++) { /* the headline at further seeds (largest K, bf16 and fp32) */
        static lab_t R;
        R = *base;
        R.robust = 1;
        R.cli.seed = L->cli.seed + (uint64_t)e;
        R.Ks[0] = L->Ks[L->nK - 1], R.nK = 1;
        int nf = 0;
        for (int fi = 0; fi < L->nF; fi++)
            if (L->cli.formats[fi] == DRIFT_BF16 || L->cli.formats[fi] == DRIFT_FP32) R.cli.formats[nf++] = L->cli.formats[fi];
        if (nf == 0) break;
        R.cli.nformats = R.nF = nf;
        R.cli.norders = 1;
        choose_kernels(&R);
        make_models(&R);
        run_planted(&R);
        run_realistic(&R);
        fit_sigmas(&R);
        two_references(&R);
        rob_collect(L, &R);
        for (int fi = 0; fi < R.nF; fi++) {
            drift_flipset_free(&R.PL[0][fi]);
            drift_flipset_free(&R.TI[0][fi]);
            if (R.rows > 0) drift_flipset_free(&R.RE[0][fi]);
        }
    }
    measure_costs(L);            /* wall clock, reported apart */
    L->t_total = now() - L->t_start;
    compute_mitigations(L);      /* (3) what the mitigations buy */

    write_files(L);
    if (!L->cli.quiet) print_summary(L);

    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            drift_flipset_free(&L->PL[ki][fi]);
            drift_flipset_free(&L->TI[ki][fi]);
            if (L->rows > 0) drift_flipset_free(&L->RE[ki][fi]);
        }
    return 0;
}
