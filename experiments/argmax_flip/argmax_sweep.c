/* argmax_sweep.c — one sweep of the argmax-flip experiment (argmax_lab.h): the kernels and
 * hidden-state models per K, the planted pairs and ties, the realistic heads, then the fits and
 * the two references. main.c runs it once, and again per robustness seed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argmax_kernels.h"
#include "argmax_lab.h"
#include "drift.h"
#include "flips.h"
#include "format.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "metrics.h"
#include "philox.h"
#include "policy.h"

#define EXP "argmax_flip"

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
        drift_stream_init(&s, L->cli.seed, drift_fnv1a32(EXP ".model"), (uint32_t)L->Ks[ki], 0);
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
    L->progress_done = 0, L->progress_total = 0;
    for (int ki = 0; ki < L->nKs; ki++)
        L->progress_total += (nplant + (size_t)L->ties) * L->Ks[ki] / 256 + (size_t)L->rows * L->Ks[ki] / 64;
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
        if (drift_gen_head(NULL, W, l1, l2, (size_t)L->V, K, L->cli.seed, drift_fnv1a32(EXP ".W")))
            drift_die_oom(4.0 * (double)L->V * K, "generating the %ld x %zu head (--V, --K: smaller)", L->V, K);
        for (long r = 0; r < L->rows; r++) {
            drift_stream_t s;
            drift_stream_init(&s, L->cli.seed, drift_fnv1a32(EXP ".realistic"), (uint32_t)K, (uint32_t)r);
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

void drift_aflab_sweep(drift_aflab_t *L, const char *phase)
{
    choose_kernels(L); /* kernels, orders and the GEMM policies' picks */
    make_models(L);
    drift_progress_phase(&L->cli, phase);
    run_planted(L);   /* (1) planted gaps and exact ties */
    run_realistic(L); /* (2) realistic heads */
    drift_progress(&L->cli, L->progress_total, L->progress_total);
    /* Phi(-D/sigma) per kernel, with its predictions, and each mechanism's law */
    if (drift_aflab_fit(L))
        drift_die("fitting the flip laws at seed %llu: out of memory (--reps, --ties, --rows: fewer)",
            (unsigned long long)L->cli.seed);
    drift_aflab_two_references(L); /* realistic rows against exact(rounded) and exact(unrounded) */
}
