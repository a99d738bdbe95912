/* argmax_run.c — the sweep the argmax-flip experiments share (argmax_run.h): the kernels and
 * hidden-state models per K, the planted pairs and ties with their fits, the realistic heads. */
#include "argmax_run.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "argmax_kernels.h"
#include "drift.h"
#include "flips.h"
#include "format.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "metrics.h"
#include "philox.h"
#include "policy.h"
#include "stats.h"

/* The streams keep the name of the experiment they began in, so that every argmax-flip
 * experiment draws the same hidden states, heads and pairs. */
#define STREAM "argmax_flip"

/* Options, profile defaults and the hidden sizes. */
void drift_aflab_setup(drift_aflab_t *L, int argc, char **argv, const char *name, const char *question, unsigned which)
{
    drift_intlist_t Kopt = {{0}, 0};
    /* the profile values replace the -1s (cli.h); an option the experiment does not take stays 0 */
    L->V = 0, L->reps = 0, L->shard = 8;
    L->rows = which & DRIFT_AF_OPT_ROWS ? -1 : 0;
    L->ties = which & DRIFT_AF_OPT_TIES ? -1 : 0;
    L->robust_seeds = which & DRIFT_AF_OPT_ROBUST ? -1 : 0;
    L->planted_on = 1;
    const char *device = "h100";
    L->trials_csv = 0;
    const drift_cli_opt_t all[] = {
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
        {"robust", DRIFT_OPT_INT, &L->robust_seeds, "N",
            "also run seeds seed+1 .. seed+N at the largest K (bf16, fp32) for the headline's robustness", 0, 8,
            {"0", "2", "2"}},
    };
    const unsigned needs[] = {
        0, 0, DRIFT_AF_OPT_ROWS, 0, DRIFT_AF_OPT_TIES, 0, 0, DRIFT_AF_OPT_TRIALS, DRIFT_AF_OPT_ROBUST};
    _Static_assert(sizeof all / sizeof all[0] == sizeof needs / sizeof needs[0], "one need per option");
    _Static_assert(sizeof all <= sizeof L->opts, "drift_aflab_t.opts holds every option");
    int nopts = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!needs[i] || (which & needs[i])) L->opts[nopts++] = all[i]; /* the parsed cli keeps pointers to its spec */
    L->spec = (drift_cli_spec_t){
        .name = name,
        .question = question,
        .default_formats = "bf16,fp16,tf32,fp32",
        .default_orders = "seq,splitk:16,pairwise,warp:32,tc:h100",
        .opts = L->opts,
        .nopts = nopts,
        .cpu_only = NULL, /* logits go through the dispatcher (--backend cuda) */
        .summary = NULL,  /* the run's own, from its numbers (drift_out_summary) */
    };
    drift_cli_parse(&L->cli, &L->spec, argc, argv);
    if (drift_device_lookup(&L->device, device))
        drift_die("--device: unknown device '%s' (accepted: a card of ./lab calc cards)", device);
    if (L->cli.nformats > DRIFT_AF_MAXF) drift_die("--formats: at most %d formats", DRIFT_AF_MAXF);
    drift_lmhead_require_inputs(L->cli.formats, L->cli.nformats);
    L->nKs = 0;
    if (Kopt.n > DRIFT_AF_MAXK) drift_die("--K: at most %d values", DRIFT_AF_MAXK);
    for (int i = 0; i < Kopt.n; i++) L->Ks[L->nKs++] = (size_t)Kopt.v[i];
    /* refused here, not by the first tie trial after the larger K's were computed */
    for (int i = 0; i < Kopt.n && L->ties > 0; i++)
        if (Kopt.v[i] < 2 * DRIFT_PLANT_TIE_PAIRS)
            drift_die("--K: %ld is too small for the planted ties (each swaps %d pairs of channels; accepted: K >= %d, "
                      "or --ties 0)",
                Kopt.v[i], DRIFT_PLANT_TIE_PAIRS, 2 * DRIFT_PLANT_TIE_PAIRS);
    drift_require_memory(&L->cli, L->rows ? 12.0 * (double)L->V * (double)drift_intlist_max(&Kopt) : 0, "--K, --V");
    L->nformats = L->cli.nformats;
    L->ntargets = 7 * DRIFT_AF_PER_DECADE + 1; /* 1e-7 .. 1 */
    L->seconds.start = drift_af_now();
}

/* The robustness rerun at seed + e of the options as parsed (base), for the run L: the largest K,
 * bf16 and fp32, the first order, no GEMM policies. 0 when the run has neither bf16 nor fp32. */
static int robust_rerun(drift_aflab_t *R, const drift_aflab_t *base, const drift_aflab_t *L, long e)
{
    *R = *base;
    R->robust_rerun = 1;
    R->cli.seed = L->cli.seed + (uint64_t)e;
    R->Ks[0] = L->Ks[L->nKs - 1], R->nKs = 1;
    int nf = 0;
    for (int fi = 0; fi < L->nformats; fi++)
        if (L->cli.formats[fi] == DRIFT_BF16 || L->cli.formats[fi] == DRIFT_FP32)
            R->cli.formats[nf++] = L->cli.formats[fi];
    R->cli.nformats = R->nformats = nf;
    R->cli.norders = 1;
    return nf > 0;
}

/* The kernel each GEMM policy picks for the LM head shape, and the kernel sets per (K, format). */
static void choose_kernels(drift_aflab_t *L)
{
    L->npolicy_rows = L->robust_rerun ? 0 : DRIFT_NPOLICIES * 2 * DRIFT_AF_NBATCH;
    for (int q = 0; q < L->npolicy_rows; q++)
        if (drift_policy_row(
                &L->policy_pick[L->nKs - 1][q], q, (size_t)L->V, (size_t)L->shard, L->Ks[L->nKs - 1], &L->device))
            drift_die("policy: cannot choose a kernel");
    for (int ki = 0; ki < L->nKs - 1; ki++)
        for (int q = 0; q < L->npolicy_rows; q++)
            if (drift_policy_row(&L->policy_pick[ki][q], q, (size_t)L->V, (size_t)L->shard, L->Ks[ki], &L->device))
                drift_die("policy: cannot choose a kernel");

    /* -- kernel sets per (K, format) -- */
    for (int ki = 0; ki < L->nKs; ki++) {
        size_t K = L->Ks[ki];
        for (int fi = 0; fi < L->nformats; fi++) {
            drift_format_t f = L->cli.formats[fi];
            int rc = drift_kset_build(&L->cell[ki][fi].kernels, L->cell[ki][fi].policy_kernel, f, L->cli.orders,
                L->cli.norders, L->policy_pick[ki], L->npolicy_rows, K);
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
    for (int ki = 0; ki < L->nKs; ki++) {
        drift_stream_t s;
        drift_stream_init(&s, L->cli.seed, drift_fnv1a32(STREAM ".model"), (uint32_t)L->Ks[ki], 0);
        if (drift_hidden_model(&L->hidden_model[ki], L->Ks[ki], &s))
            drift_die("--K: no hidden-state model for K = %zu", L->Ks[ki]);
    }
}

/* (1) Planted pairs and ties, every kernel. */
static void run_planted(drift_aflab_t *L)
{
    size_t nplant = (size_t)L->ntargets * (size_t)L->reps;
    for (int ki = 0; ki < L->nKs; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            if (drift_flipset_alloc(&L->cell[ki][fi].planted, nplant, L->cell[ki][fi].kernels.n))
                drift_die("out of memory for the records of %zu planted trials x %d kernels (--reps: fewer)", nplant,
                    L->cell[ki][fi].kernels.n);
            if (drift_flipset_alloc(&L->cell[ki][fi].ties, (size_t)L->ties, L->cell[ki][fi].kernels.n))
                drift_die("out of memory for the records of %ld ties x %d kernels (--ties: fewer)", L->ties,
                    L->cell[ki][fi].kernels.n);
        }
    size_t wmax = 0; /* the model's scratch holds 2 W lanes for warp:W */
    for (int o = 0; o < L->cli.norders; o++)
        if (L->cli.orders[o].kind == DRIFT_ORDER_WARP && (size_t)L->cli.orders[o].param > wmax)
            wmax = (size_t)L->cli.orders[o].param;
    for (int ki = 0; ki < L->nKs; ki++) {
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
            L->progress_done += (c1 - c0) * K / 256;
            drift_progress(&L->cli, L->progress_done, L->progress_total);
        }
    }
}

/* (2) Realistic heads: every kernel the pruning can bound, against the exact argmax. */
static void run_realistic(drift_aflab_t *L)
{
    double t_real0 = drift_af_now();
    L->seconds.planted = t_real0 - L->seconds.start;
    for (int ki = 0; ki < L->nKs && L->rows > 0; ki++) {
        const size_t K = L->Ks[ki];
        float *W = malloc((size_t)L->V * K * sizeof *W);
        double *l1 = malloc((size_t)L->V * sizeof *l1), *l2 = malloc((size_t)L->V * sizeof *l2);
        double *H = malloc((size_t)L->rows * K * sizeof *H);
        if (!W || !l1 || !l2 || !H) drift_die("out of memory (V x K = %ld x %zu)", L->V, K);
        /* weights (fp32 master, one stream per token) with the l1/l2 bounds the pruning needs */
        if (drift_gen_head(NULL, W, l1, l2, (size_t)L->V, K, L->cli.seed, drift_fnv1a32(STREAM ".W")))
            drift_die_oom(4.0 * (double)L->V * K, "generating the %ld x %zu head (--V, --K: smaller)", L->V, K);
        for (long r = 0; r < L->rows; r++) {
            drift_stream_t s;
            drift_stream_init(&s, L->cli.seed, drift_fnv1a32(STREAM ".realistic"), (uint32_t)K, (uint32_t)r);
            drift_gen_hidden(H + (size_t)r * K, &L->hidden_model[ki], &s);
        }
        /* the first pruning stage's aids: the hidden states' largest channels bounded one by one
         * (K/256 of them: the outlier channels), and per format the norms of the weights'
         * rounding residuals (lmhead.h, drift_lmhead_head_t) */
        size_t nsplit = K / 256 < DRIFT_LMHEAD_MAXSPLIT ? K / 256 : DRIFT_LMHEAD_MAXSPLIT, split[DRIFT_LMHEAD_MAXSPLIT];
        float *cols = malloc(((size_t)L->V * nsplit + 1) * sizeof *cols);
        double *dl2 = malloc((size_t)L->nformats * (size_t)L->V * sizeof *dl2);
        if (!cols || !dl2)
            drift_die_oom(4.0 * (double)L->V * nsplit + 8.0 * L->nformats * L->V,
                "the split columns and norms of %ld rows (--V: smaller)", L->V);
        drift_lmhead_head_t hd[DRIFT_AF_MAXF]; /* per format */
        if (drift_lmhead_split_choose(split, nsplit, H, (size_t)L->rows, K) ||
            drift_lmhead_split_cols(cols, W, (size_t)L->V, K, split, nsplit))
            drift_die("split channels: internal error");
        for (int fi = 0; fi < L->nformats; fi++) {
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
            if (drift_flipset_alloc(&L->cell[ki][fi].realistic, (size_t)L->rows, L->cell[ki][fi].kernels.n))
                drift_die("out of memory for the records of %ld rows x %d kernels (--rows: fewer)", L->rows,
                    L->cell[ki][fi].kernels.n);
            /* own-format accumulation has no usable deterministic bound (k u ~ 1): it would need
             * all V x K logits emulated per row, so the realistic mode leaves it out */
            for (int c = 0; c < L->cell[ki][fi].kernels.n; c++)
                L->cell[ki][fi].realistic_ok[c] = L->cell[ki][fi].kernels.k[c].role != DRIFT_ROLE_OWN;
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
                for (int fi = 0; fi < L->nformats; fi++) {
                    const drift_kset_t *ks = &L->cell[ki][fi].kernels;
                    drift_recipe_t cfg[DRIFT_AF_MAXC];
                    for (int c = 0; c < ks->n; c++) cfg[c] = ks->k[c].c;
                    drift_lmhead_result_t full; /* the left-out configurations stay flip = 0, n/a */
                    if (drift_lmhead_eval_pruned_head(&full, H + (size_t)r * K, &hd[fi], ap + (size_t)(r - r0) * L->V,
                            cfg, ks->n, L->cell[ki][fi].realistic_ok)) {
                        err |= 1;
                        continue;
                    }
                    drift_flipset_t *st = &L->cell[ki][fi].realistic;
                    drift_flipset_record(st, (size_t)r, &full);
                    drift_flip_trial_t *t = &st->t[r];
                    t->s = drift_logit_scale(H + (size_t)r * K, K);
                    t->rel = t->gap / t->s;
                    t->target = NAN;
                    t->reached = 1;
                }
            }
            if (err) drift_die("realistic evaluation failed (out of memory or an internal error)");
            L->progress_done += (size_t)nr * K / 64;
            drift_progress(&L->cli, L->progress_done, L->progress_total);
        }
        free(ap);
        free(cols);
        free(dl2);
        free(W);
        free(l1);
        free(l2);
        free(H);
    }
    L->seconds.realistic = drift_af_now() - t_real0;
}

/* The headline's point: the largest K, on the first narrow format (bf16 if present). */
static void pick_headline(drift_aflab_t *L)
{
    L->headline.k = L->nKs - 1, L->headline.f = 0;
    for (int fi = 0; fi < L->nformats; fi++)
        if (L->cli.formats[fi] == DRIFT_BF16) L->headline.f = fi;
    L->headline.kernels = &L->cell[L->headline.k][L->headline.f].kernels;
}

/* The sigma fits and mechanism laws per (K, format, kernel) on the planted pairs. 0 or DRIFT_ENOMEM. */
static int fit(drift_aflab_t *L)
{
    int rc = drift_logbins_init(
        &L->gap_bins, pow(10.0, -7 - 0.5 / DRIFT_AF_PER_DECADE), pow(10.0, 0.5 / DRIFT_AF_PER_DECADE), L->ntargets);
    if (rc) return rc;
    for (int ki = 0; ki < L->nKs; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            const drift_kset_t *ks = &L->cell[ki][fi].kernels;
            for (int c = 0; c < ks->n; c++) {
                if (drift_flipset_fit(&L->cell[ki][fi].fits[c], &L->cell[ki][fi].planted, c, &ks->k[c].c, ks->k[c].nu,
                        L->Ks[ki], &L->gap_bins))
                    return DRIFT_ENOMEM;
                const drift_recipe_t *r = &ks->k[c].c;
                drift_fliplaw_t law = drift_flip_implied_law(r->exact, r->acc.acc, r->out);
                if (drift_flipset_laws(
                        &L->cell[ki][fi].laws[c], &L->cell[ki][fi].planted, c, law, r->out, &L->gap_bins))
                    return DRIFT_ENOMEM;
            }
        }

    return 0;
}

void drift_aflab_sweep(drift_aflab_t *L, const char *phase)
{
    choose_kernels(L); /* kernels, orders and the GEMM policies' picks */
    make_models(L);
    pick_headline(L);
    size_t nplant = L->planted_on ? (size_t)L->ntargets * (size_t)L->reps + (size_t)L->ties : 0;
    L->progress_done = 0, L->progress_total = 0;
    for (int ki = 0; ki < L->nKs; ki++)
        L->progress_total += nplant * L->Ks[ki] / 256 + (size_t)L->rows * L->Ks[ki] / 64;
    drift_progress_phase(&L->cli, phase);
    if (L->planted_on) run_planted(L); /* (1) planted gaps and exact ties */
    run_realistic(L);                  /* (2) realistic heads */
    drift_progress(&L->cli, L->progress_total, L->progress_total);
    /* Phi(-D/sigma) per kernel, with its predictions, and each mechanism's law */
    if (L->planted_on && fit(L))
        drift_die("fitting the flip laws at seed %llu: out of memory (--reps, --ties, --rows: fewer)",
            (unsigned long long)L->cli.seed);
}

/* The headline numbers of a finished run (largest K, bf16 or the first narrow format). */
void drift_aflab_collect_headline(drift_aflab_t *dst, const drift_aflab_t *L)
{
    if (dst->nseeds >= 9) return;
    const drift_kset_t *ks = L->headline.kernels;
    const drift_flip_fit_t *D = &DRIFT_AF_HEADLINE(L)->fits[ks->def];
    const drift_flip_laws_t *E = &DRIFT_AF_HEADLINE(L)->laws[ks->engine], *X = &DRIFT_AF_HEADLINE(L)->laws[ks->exact];
    const drift_fliplaw_fit_t *T = &X->fit[DRIFT_FLIPLAW_TRIANGLE];
    /* a run without planted pairs has no fits, one without realistic rows no flips to count */
    dst->seeds[dst->nseeds++] = (drift_af_headline_t){.seed = L->cli.seed,
        .def_sigma = D->fit.status == DRIFT_FIT_OK ? D->fit.sigma : NAN,
        .def_p001 = D->p001,
        .eng_d001_ulp = E->d001_ulp,
        .eng_dll = E->choice.dloglik,
        .eng_power = E->choice.power_a,
        .eng_decided = E->choice.decided,
        .kap = T->theta,
        .kap_lo = T->lo,
        .kap_hi = T->hi,
        .real_def = L->rows > 0 ? drift_flipset_flips(&DRIFT_AF_HEADLINE(L)->realistic, ks->def) : -1,
        .real_eng = L->rows > 0 ? drift_flipset_flips(&DRIFT_AF_HEADLINE(L)->realistic, ks->engine) : -1,
        .in_flips = L->rows > 0 ? DRIFT_AF_HEADLINE(L)->input_rounding_flips : -1};
    if (!L->planted_on) {
        drift_af_headline_t *h = &dst->seeds[dst->nseeds - 1];
        h->def_sigma = h->def_p001 = h->eng_d001_ulp = h->eng_dll = h->eng_power = h->kap = h->kap_lo = h->kap_hi = NAN;
        h->eng_decided = 0;
    }
}

void drift_aflab_robust(
    drift_aflab_t *L, const drift_aflab_t *base, drift_aflab_t *rerun, int planted_on, void (*after)(drift_aflab_t *))
{
    for (long e = 1; e <= L->robust_seeds && robust_rerun(rerun, base, L, e); e++) {
        char phase[96]; /* the headline at further seeds (largest K, bf16 and fp32) */
        snprintf(phase, sizeof phase, "the headline at seed %llu (%ld of %ld)", (unsigned long long)rerun->cli.seed, e,
            L->robust_seeds);
        rerun->planted_on = planted_on;
        drift_aflab_sweep(rerun, phase);
        if (after) after(rerun);
        drift_aflab_collect_headline(L, rerun);
        drift_aflab_free(rerun);
    }
}

void drift_aflab_ks_list(char buf[128], const drift_aflab_t *L)
{
    buf[0] = 0;
    for (int ki = 0; ki < L->nKs; ki++)
        snprintf(buf + strlen(buf), 128 - strlen(buf), "%s%zu", ki ? "," : "", L->Ks[ki]);
}

const char *drift_af_num(char buf[64], double x, const char *fmt)
{
    drift_fmt_num(buf, 64, x, fmt);
    return buf;
}

void drift_aflab_free(drift_aflab_t *L)
{
    for (int ki = 0; ki < L->nKs; ki++)
        for (int fi = 0; fi < L->nformats; fi++) {
            drift_flipset_free(&L->cell[ki][fi].planted);
            drift_flipset_free(&L->cell[ki][fi].ties);
            if (L->rows > 0) drift_flipset_free(&L->cell[ki][fi].realistic);
        }
}

double drift_af_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
