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
 *     argmax, made affordable by rigorous pruning (drift_lmhead_eval_pruned_head, lmhead.h):
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

#include "argmax_kernels.h"
#include "argmax_lab.h"
#include "cli.h"
#include "drift.h"
#include "flips.h"
#include "format.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "metrics.h"
#include "philox.h"
#include "policy.h"

#ifdef _OPENMP
#define DRIFT_OMP(x) _Pragma(x)
#else
#define DRIFT_OMP(x)
#endif

#define EXP "argmax_flip"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Options, profile defaults and the hidden sizes. */
static void setup(drift_aflab_t *L, int argc, char **argv)
{
    drift_intlist_t Kopt = {{0}, 0};
    L->V = 0, L->rows = -1, L->reps = 0, L->ties = -1, L->shard = 8,
    L->nrob = -1; /* the profile values replace these (cli.h) */
    const char *device = "h100";
    L->trials_csv = 0;
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INTLIST, &Kopt, "N,N,...", "hidden sizes", 16, 65536, {"1024", "1024,4096", "1024,4096,8192"}},
        {"V", DRIFT_OPT_INT, &L->V, "N", "vocabulary of the realistic head", 2, 1000000, {"4000", "32000", "32000"}},
        {"rows", DRIFT_OPT_INT, &L->rows, "N", "realistic hidden states per K (0: no realistic mode)", 0, 1000000,
            {"32", "512", "2048"}},
        {"reps", DRIFT_OPT_INT, &L->reps, "N", "planted pairs per target gap (29 targets)", 1, 1000000,
            {"8", "96", "400"}},
        {"ties", DRIFT_OPT_INT, &L->ties, "N", "planted exact ties per K", 0, 1000000, {"8", "32", "128"}},
        {"shard", DRIFT_OPT_INT, &L->shard, "N",
            "the policy also sees N = V/shard (a vocabulary-parallel LM head; default 8)", 1, 4096, {0}},
        {"device", DRIFT_OPT_STRING, &device, "NAME",
            "device the policies size for: a card of ./lab calc cards, e.g. v100, a100, h100, b200, l40s, rtx4090 (default h100)",
            0, 0, {0}},
        {"trials", DRIFT_OPT_FLAG, &L->trials_csv, "", "also write data/argmax_flip_trials.csv (every planted trial)",
            0, 0, {0}},
        {"robust", DRIFT_OPT_INT, &L->nrob, "N",
            "also run seeds seed+1 .. seed+N at the largest K (bf16, fp32) for the headline's robustness", 0, 8,
            {"0", "2", "2"}},
    };
    _Static_assert(sizeof opts <= sizeof L->opts, "drift_aflab_t.opts holds every option");
    memcpy(L->opts, opts, sizeof opts); /* the parsed cli keeps pointers to its spec */
    L->spec = (drift_cli_spec_t){
        .name = EXP,
        .question =
            "How small a logit gap flips argmax: at which exact top-1/top-2 gap does greedy decoding pick another token, "
            "per format, kernel and K, and how often does it happen?",
        .default_formats = "bf16,fp16,tf32,fp32",
        .default_orders = "seq,splitk:16,pairwise,warp:32,tc:h100",
        .opts = L->opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
        .cpu_only = NULL, /* logits go through the dispatcher (--backend cuda) */
        .summary = NULL,  /* printed by the program itself */
    };
    drift_cli_parse(&L->cli, &L->spec, argc, argv);
    L->question = L->spec.question;
    if (drift_device_lookup(&L->dev, device))
        drift_die("--device: unknown device '%s' (accepted: a card of ./lab calc cards)", device);
    if (L->cli.nformats > DRIFT_AF_MAXF) drift_die("--formats: at most %d formats", DRIFT_AF_MAXF);
    drift_lmhead_require_inputs(L->cli.formats, L->cli.nformats);
    L->nK = 0;
    if (Kopt.n > DRIFT_AF_MAXK) drift_die("--K: at most %d values", DRIFT_AF_MAXK);
    for (int i = 0; i < Kopt.n; i++) L->Ks[L->nK++] = (size_t)Kopt.v[i];
    /* refused here, not by the first tie trial after the larger K's were computed */
    for (int i = 0; i < Kopt.n && L->ties > 0; i++)
        if (Kopt.v[i] < 2 * DRIFT_PLANT_TIE_PAIRS)
            drift_die("--K: %ld is too small for the planted ties (each swaps %d pairs of channels; accepted: K >= %d, "
                      "or --ties 0)",
                Kopt.v[i], DRIFT_PLANT_TIE_PAIRS, 2 * DRIFT_PLANT_TIE_PAIRS);
    drift_require_memory(&L->cli, L->rows ? 12.0 * (double)L->V * (double)drift_intlist_max(&Kopt) : 0, "--K, --V");
    L->nF = L->cli.nformats;
    L->nT = 7 * DRIFT_AF_PER_DECADE + 1; /* 1e-7 .. 1 */
    L->t_start = now();
}

/* The kernel each GEMM policy picks for the LM head shape, and the kernel sets per (K, format). */
static void choose_kernels(drift_aflab_t *L)
{
    L->npol = L->robust ? 0 : DRIFT_NPOLICIES * 2 * DRIFT_AF_NBATCH;
    for (int q = 0; q < L->npol; q++)
        if (drift_policy_row(&L->polk[L->nK - 1][q], q, (size_t)L->V, (size_t)L->shard, L->Ks[L->nK - 1], &L->dev))
            drift_die("policy: cannot choose a kernel");
    for (int ki = 0; ki < L->nK - 1; ki++)
        for (int q = 0; q < L->npol; q++)
            if (drift_policy_row(&L->polk[ki][q], q, (size_t)L->V, (size_t)L->shard, L->Ks[ki], &L->dev))
                drift_die("policy: cannot choose a kernel");

    /* -- kernel sets per (K, format) -- */
    for (int ki = 0; ki < L->nK; ki++) {
        size_t K = L->Ks[ki];
        for (int fi = 0; fi < L->nF; fi++) {
            drift_format_t f = L->cli.formats[fi];
            int rc = drift_kset_build(
                &L->KS[ki][fi], L->polcfg[ki][fi], f, L->cli.orders, L->cli.norders, L->polk[ki], L->npol, K);
            if (rc == DRIFT_EUNSUPPORTED)
                drift_die(
                    "--orders: none of the orders applies to %s inputs (tc:ARCH has no path for them; accepted: "
                    "seq, rev, pairwise, blocked:B, splitk:S, splitk:S:tree, warp:W, kahan, neumaier, random:SEED)",
                    drift_format_name(f));
            if (rc) drift_die("too many configurations");
        }
    }
}

/* The hidden-state model, per K. */
static void make_models(drift_aflab_t *L)
{
    for (int ki = 0; ki < L->nK; ki++) {
        drift_stream_t s;
        drift_stream_init(&s, L->cli.seed, drift_fnv1a32(EXP ".model"), (uint32_t)L->Ks[ki], 0);
        if (drift_hidden_model(&L->model[ki], L->Ks[ki], &s))
            drift_die("--K: no hidden-state model for K = %zu", L->Ks[ki]);
    }
}

/* (1) Planted pairs and ties, every kernel. */
static void run_planted(drift_aflab_t *L)
{
    size_t nplant = (size_t)L->nT * (size_t)L->reps;
    for (int ki = 0; ki < L->nK; ki++)
        for (int fi = 0; fi < L->nF; fi++) {
            if (drift_flipset_alloc(&L->PL[ki][fi], nplant, L->KS[ki][fi].n))
                drift_die("out of memory for the records of %zu planted trials x %d kernels (--reps: fewer)", nplant,
                    L->KS[ki][fi].n);
            if (drift_flipset_alloc(&L->TI[ki][fi], (size_t)L->ties, L->KS[ki][fi].n))
                drift_die(
                    "out of memory for the records of %ld ties x %d kernels (--ties: fewer)", L->ties, L->KS[ki][fi].n);
        }
    L->done = 0, L->total = 0;
    for (int ki = 0; ki < L->nK; ki++)
        L->total += (nplant + (size_t)L->ties) * L->Ks[ki] / 256 + (size_t)L->rows * L->Ks[ki] / 64;
    size_t wmax = 0; /* the model's scratch holds 2 W lanes for warp:W */
    for (int o = 0; o < L->cli.norders; o++)
        if (L->cli.orders[o].kind == DRIFT_ORDER_WARP && (size_t)L->cli.orders[o].param > wmax)
            wmax = (size_t)L->cli.orders[o].param;
    for (int ki = 0; ki < L->nK; ki++) {
        const size_t K = L->Ks[ki];
        const size_t ntr = nplant + (size_t)L->ties;
        const size_t CH = 64;
        for (size_t c0 = 0; c0 < ntr; c0 += CH) {
            size_t c1 = c0 + CH < ntr ? c0 + CH : ntr;
            int err = 0;
            /* one set of buffers per thread and chunk, not per trial (malloc/free and the page
             * faults of fresh K-sized blocks were a tenth of the planted phase's time) */
            DRIFT_OMP("omp parallel reduction(|:err)")
            {
                drift_af_scratch_t b;
                int ok = drift_af_scratch_alloc(&b, K, wmax) == 0;
                if (!ok) err |= 1;
                DRIFT_OMP("omp for schedule(dynamic, 1)")
                for (size_t i = c0; i < c1; i++)
                    if (ok && drift_aflab_planted_trial(L, ki, i, nplant, &b)) err |= 1;
                drift_af_scratch_free(&b);
            }
            if (err) drift_die("planted trials failed (out of memory or an internal error)");
            L->done += (c1 - c0) * K / 256;
            drift_progress(&L->cli, L->done, L->total);
        }
    }
}

/* (2) Realistic heads: every kernel the pruning can bound, against the exact argmax. */
static void run_realistic(drift_aflab_t *L)
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
        if (drift_gen_head(NULL, W, l1, l2, (size_t)L->V, K, L->cli.seed, drift_fnv1a32(EXP ".W")))
            drift_die_oom(4.0 * (double)L->V * K, "generating the %ld x %zu head (--V, --K: smaller)", L->V, K);
        for (long r = 0; r < L->rows; r++) {
            drift_stream_t s;
            drift_stream_init(&s, L->cli.seed, drift_fnv1a32(EXP ".realistic"), (uint32_t)K, (uint32_t)r);
            drift_gen_hidden(H + (size_t)r * K, &L->model[ki], &s);
        }
        /* the first pruning stage's aids: the hidden states' largest channels bounded one by one
         * (K/256 of them: the outlier channels), and per format the norms of the weights'
         * rounding residuals (lmhead.h, drift_lmhead_head_t) */
        size_t nsplit = K / 256 < DRIFT_LMHEAD_MAXSPLIT ? K / 256 : DRIFT_LMHEAD_MAXSPLIT, split[DRIFT_LMHEAD_MAXSPLIT];
        float *cols = malloc(((size_t)L->V * nsplit + 1) * sizeof *cols);
        double *dl2 = malloc((size_t)L->nF * (size_t)L->V * sizeof *dl2);
        if (!cols || !dl2)
            drift_die_oom(4.0 * (double)L->V * nsplit + 8.0 * L->nF * L->V,
                "the split columns and norms of %ld rows (--V: smaller)", L->V);
        drift_lmhead_head_t hd[DRIFT_AF_MAXF]; /* per format */
        if (drift_lmhead_split_choose(split, nsplit, H, (size_t)L->rows, K) ||
            drift_lmhead_split_cols(cols, W, (size_t)L->V, K, split, nsplit))
            drift_die("split channels: internal error");
        for (int fi = 0; fi < L->nF; fi++) {
            if (drift_lmhead_round_norms(dl2 + (size_t)fi * L->V, W, (size_t)L->V, K, L->cli.formats[fi]))
                drift_die("the residual norms of the %ld x %zu head: out of memory (--V, --K: smaller)", L->V, K);
            hd[fi] = (drift_lmhead_head_t){.W = W,
                .V = (size_t)L->V,
                .K = K,
                .row_l1 = l1,
                .row_l2 = l2,
                .row_dl2 = dl2 + (size_t)fi * L->V,
                .nsplit = nsplit,
                .split = split,
                .split_cols = cols};
            if (drift_lmhead_head_prepare(&hd[fi])) drift_die("pruning: internal error");
            if (drift_flipset_alloc(&L->RE[ki][fi], (size_t)L->rows, L->KS[ki][fi].n))
                drift_die(
                    "out of memory for the records of %ld rows x %d kernels (--rows: fewer)", L->rows, L->KS[ki][fi].n);
            /* own-format accumulation has no usable deterministic bound (k u ~ 1): it would need
             * all V x K logits emulated per row, so the realistic mode leaves it out */
            for (int c = 0; c < L->KS[ki][fi].n; c++) L->real_ok[ki][fi][c] = L->KS[ki][fi].k[c].role != DRIFT_ROLE_OWN;
        }
        const long CH = 128;
        double *ap = malloc((size_t)CH * (size_t)L->V * sizeof *ap);
        if (!ap) drift_die_oom((double)CH * L->V * sizeof *ap, "a block of %ld x %ld logits (--V: smaller)", CH, L->V);
        for (long r0 = 0; r0 < L->rows; r0 += CH) {
            long nr = L->rows - r0 < CH ? L->rows - r0 : CH;
            if (drift_lmhead_approx(ap, H + (size_t)r0 * K, (size_t)nr, W, (size_t)L->V, K))
                drift_die("approx pass failed");
            int err = 0;
            DRIFT_OMP("omp parallel for schedule(dynamic, 1) reduction(|:err)")
            for (long r = r0; r < r0 + nr; r++) {
                for (int fi = 0; fi < L->nF; fi++) {
                    const drift_kset_t *ks = &L->KS[ki][fi];
                    drift_recipe_t cfg[DRIFT_AF_MAXC];
                    for (int c = 0; c < ks->n; c++) cfg[c] = ks->k[c].c;
                    drift_lmhead_result_t full; /* the left-out configurations stay flip = 0, n/a */
                    if (drift_lmhead_eval_pruned_head(&full, H + (size_t)r * K, &hd[fi], ap + (size_t)(r - r0) * L->V,
                            cfg, ks->n, L->real_ok[ki][fi])) {
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
        free(cols);
        free(dl2);
        free(W);
        free(l1);
        free(l2);
        free(H);
    }
    L->t_real = now() - t_real0;
}

/* ---- main: the protocol -------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static drift_aflab_t lab;
    drift_aflab_t *L = &lab;

    setup(L, argc, argv);           /* question and options */
    static drift_aflab_t base_copy; /* the options as parsed: the robustness reruns start from them */
    base_copy = *L;
    const drift_aflab_t *base = &base_copy;
    choose_kernels(L); /* kernels, orders and the GEMM policies' picks */
    make_models(L);

    drift_progress_phase(&L->cli, "planted and realistic heads");
    run_planted(L);   /* (1) planted gaps and exact ties */
    run_realistic(L); /* (2) realistic heads */
    drift_progress(&L->cli, L->total, L->total);

    /* Phi(-D/sigma) per kernel, with its predictions, and each mechanism's law */
    if (drift_aflab_fit(L)) drift_die("fitting the flip laws: out of memory (--reps, --ties, --rows: fewer)");
    drift_aflab_two_references(L); /* realistic rows against exact(rounded) and exact(unrounded) */
    drift_aflab_rob_collect(L, L);
    for (long e = 1; e <= L->nrob; e++) { /* the headline at further seeds (largest K, bf16 and fp32) */
        static drift_aflab_t R;
        R = *base;
        R.robust = 1;
        R.cli.seed = L->cli.seed + (uint64_t)e;
        R.Ks[0] = L->Ks[L->nK - 1], R.nK = 1;
        int nf = 0;
        for (int fi = 0; fi < L->nF; fi++)
            if (L->cli.formats[fi] == DRIFT_BF16 || L->cli.formats[fi] == DRIFT_FP32)
                R.cli.formats[nf++] = L->cli.formats[fi];
        if (nf == 0) break;
        R.cli.nformats = R.nF = nf;
        R.cli.norders = 1;
        choose_kernels(&R);
        make_models(&R);
        char ph[64];
        snprintf(ph, sizeof ph, "the headline at seed %llu (%ld of %ld)", (unsigned long long)R.cli.seed, e, L->nrob);
        drift_progress_phase(&R.cli, ph);
        run_planted(&R);
        run_realistic(&R);
        drift_progress(&R.cli, R.total, R.total);
        if (drift_aflab_fit(&R))
            drift_die("fitting the flip laws at seed %llu: out of memory (--reps, --ties, --rows: fewer)",
                (unsigned long long)R.cli.seed);
        drift_aflab_two_references(&R);
        drift_aflab_rob_collect(L, &R);
        drift_aflab_free(&R);
    }
    if (drift_aflab_measure_costs(L))
        drift_die("measuring the kernels' costs: out of memory (--V, --K: smaller)"); /* wall clock, reported apart */
    L->t_total = now() - L->t_start;
    drift_aflab_mitigations(L); /* (3) what the mitigations buy */

    if (drift_aflab_write(L)) drift_die("writing the results: out of memory (--reps, --ties, --rows: fewer)");
    if (!L->cli.quiet) drift_aflab_summary(stdout, L);

    drift_aflab_free(L);
    return 0;
}
