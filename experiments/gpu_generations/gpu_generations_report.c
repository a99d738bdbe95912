/* gpu_generations_report.c — the declared output of the gpu_generations experiment
 * (gpu_generations_lab.h): every number from the lab's counts, distances and partings. */
#include "gpu_generations_lab.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_head.h"
#include "drift.h"
#include "gen_logits.h"
#include "output.h"
#include "stats.h"

#define MAXA DRIFT_GG_MAXA
#define MAXG DRIFT_GG_MAXG
#define MAXS DRIFT_GG_MAXS
#define NBIN DRIFT_ULP_NBIN

enum { T_ARG, T_DIFF, T_HIST, T_CLOSE, T_CLOSEP, T_GREEDY, T_PART, T_MDARG, T_MDDIFF, T_MDCLOSE, T_MDGREEDY };
static const drift_col_t ARG[] = {DRIFT_C_INT("seed"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("logits"),
    DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"), DRIFT_C_INT("rows"), DRIFT_C_INT("differ"), DRIFT_C_NUM("rate", "%.6g"),
    DRIFT_C_NUM("lo95", "%.6g"), DRIFT_C_NUM("hi95", "%.6g")};
static const drift_col_t DIFF[] = {DRIFT_C_INT("seed"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"),
    DRIFT_C_INT("logits"), DRIFT_C_NUM("identical_frac", "%.6f"), DRIFT_C_INT("median_ulps"), DRIFT_C_INT("p99_ulps"),
    DRIFT_C_INT("max_ulps"), DRIFT_C_NUM("p99_s", "%.4g"), DRIFT_C_NUM("max_s", "%.4g")};
static const drift_col_t HIST[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("pair"), DRIFT_C_INT("adjacent"),
    DRIFT_C_INT("bin"), DRIFT_C_TEXT("ulps"), DRIFT_C_INT("count"), DRIFT_C_NUM("fraction", "%.6g")};
static const drift_col_t CLOSE[] = {DRIFT_C_INT("seed"), DRIFT_C_TEXT("format"), DRIFT_C_NUM("gap_s", "%g"),
    DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"), DRIFT_C_INT("pairs"), DRIFT_C_INT("differ"), DRIFT_C_NUM("rate", "%.6g"),
    DRIFT_C_NUM("lo95", "%.6g"), DRIFT_C_NUM("hi95", "%.6g")};
static const drift_col_t CLOSEP[] = {DRIFT_C_TEXT("format"), DRIFT_C_NUM("gap_s", "%g"), DRIFT_C_TEXT("a"),
    DRIFT_C_TEXT("b"), DRIFT_C_INT("adjacent"), DRIFT_C_INT("pairs"), DRIFT_C_INT("differ"),
    DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo95", "%.6g"), DRIFT_C_NUM("hi95", "%.6g")};
static const drift_col_t GREEDY[] = {DRIFT_C_INT("seed"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"),
    DRIFT_C_INT("prompts"), DRIFT_C_INT("tokens"), DRIFT_C_INT("differ"), DRIFT_C_NUM("rate", "%.6g"),
    DRIFT_C_NUM("lo95", "%.6g"), DRIFT_C_NUM("hi95", "%.6g")};
static const drift_col_t PART[] = {DRIFT_C_INT("seed"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"),
    DRIFT_C_INT("prompt"), DRIFT_C_INT("first_token"), DRIFT_C_INT("step"), DRIFT_C_INT("token_a"),
    DRIFT_C_INT("token_b"), DRIFT_C_INT("exact_top1"), DRIFT_C_NUM("exact_gap_ab", "%.6e"),
    DRIFT_C_NUM("exact_gap12", "%.6e"), DRIFT_C_NUM("spread", "%.6e"), DRIFT_C_NUM("deviation", "%.6e")};
static const drift_col_t MDARG[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("logits"), DRIFT_C_TEXT("a vs b"),
    DRIFT_C_TEXT("per seed (differ/rows)"), DRIFT_C_TEXT("all seeds: rate [95% interval]")};
static const drift_col_t MDDIFF[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a vs b"), DRIFT_C_TEXT("identical"),
    DRIFT_C_INT("median ulps"), DRIFT_C_INT("p99 ulps"), DRIFT_C_INT("max ulps"), DRIFT_C_NUM("max / s", "%.3g")};
static const drift_col_t MDCLOSE[] = {DRIFT_C_TEXT("format"), DRIFT_C_NUM("gap / s", "%g"), DRIFT_C_TEXT("a vs b"),
    DRIFT_C_TEXT("per seed (differ/pairs)"), DRIFT_C_TEXT("all seeds: rate [95% interval]")};
static const drift_col_t MDGREEDY[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a vs b"),
    DRIFT_C_TEXT("per seed (differ/prompts)"), DRIFT_C_TEXT("all seeds: rate [95% interval]"),
    DRIFT_C_TEXT("first differing step (min / median / max)"),
    DRIFT_C_TEXT("exact top-1/top-2 gap there (median / max)"),
    DRIFT_C_TEXT("a-b spread / deviation from exact there (medians)")};
static const drift_table_spec_t TABLES[] = {{"_argmax.csv", NULL, 0, ARG, 10}, {"_diff.csv", NULL, 0, DIFF, 11},
    {"_hist.csv", NULL, 0, HIST, 7}, {"_closecalls.csv", NULL, 0, CLOSE, 10},
    {"_closecalls_pooled.csv", NULL, 0, CLOSEP, 10}, {"_greedy.csv", NULL, 0, GREEDY, 10},
    {"_greedy_partings.csv", NULL, 0, PART, 14},
    {NULL, "Realistic head: rows whose argmax differs", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDARG, 5},
    {NULL, "Logit differences between generations (fp32 logits, all seeds)", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDDIFF,
        7},
    {NULL, "Close calls: planted top-2 gaps, pairs whose argmax differs", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDCLOSE,
        5},
    {NULL, "Greedy text: completions that differ between generations", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDGREEDY, 7}};

static double median_of(double *x, size_t n)
{
    double m = NAN;
    if (drift_median(&m, x, n)) drift_die("out of memory for a median");
    return m;
}

void drift_gpu_gen_write(const drift_gpu_gen_lab_t *L)
{
    const drift_cli_t *cli = L->cli;
    const char *archs_opt = L->archs_opt, *ckpt = L->ckpt;
    const size_t K = L->K, V = L->V, R = L->R, NP = L->NP, nlog = L->nlog, nparts = L->nparts;
    const int nf = L->nf, ns = L->ns, ng = L->ng, na = L->na, npair = L->npair, NR = L->NR, NT = L->NT, VT = L->VT,
              nfab = L->nfab;
    const double *gaps = L->gaps;
    const drift_gg_pair_t *fab = L->fab;
    const drift_gg_part_t *parts = L->parts;
    const drift_count_t *arg = L->arg, *close = L->close, *gcnt = L->gcnt;
    const long *hist = L->hist, unreached = L->unreached;
    int64_t **ulps = L->ulps;
    double **sdiff = L->sdiff, *topgap = L->topgap;
    const size_t *topgap_at = L->topgap_at;
#define EACH(q, F)                                            \
    for (const drift_gg_pair_t *q = fab; q < fab + nfab; q++) \
        if (q->f == (F))

    /* -- write -- */
    drift_out_t out;
    /* the greedy table's title names the model it decoded (the checkpoint's file name, less its extension) */
    drift_table_spec_t tables[11];
    char gtitle[160], model[96];
    const char *base = strrchr(ckpt, '/') ? strrchr(ckpt, '/') + 1 : ckpt;
    snprintf(model, sizeof model, "%s", base);
    if (strrchr(model, '.')) *strrchr(model, '.') = 0;
    snprintf(gtitle, sizeof gtitle, "Greedy text (%s): completions that differ between generations", model);
    memcpy(tables, TABLES, sizeof tables);
    tables[T_MDGREEDY].title = gtitle;
    drift_out_open(&out, cli, tables, 11, 1);
    const char *fm = "seeds %llu..%llu; K = %zu, V = %zu, %zu hidden states per seed; architectures %s";
    unsigned long long s0 = (unsigned long long)cli->seed, s1 = s0 + (unsigned long long)ns - 1;
    drift_out_meta(&out, T_ARG, "setup", fm, s0, s1, K, V, R, archs_opt);
    drift_out_meta(&out, T_ARG, "table",
        "per (seed, format, logits, a, b): hidden states whose argmax differs between a and b (b = exact: "
        "the exact logits of the same rounded inputs, rounded once to fp64); logits fp32 = the tensor core's fp32 output, "
        "stored = rounded (RNE) to the input format; equal logits go to the lower token id; Wilson 95%% interval");
    drift_out_meta(&out, T_DIFF, "setup", fm, s0, s1, K, V, R, archs_opt);
    drift_out_meta(&out, T_DIFF, "table",
        "per (seed, format, a, b): every logit's distance between a and b in fp32 steps (b = exact: "
        "the exact logit rounded to fp32) and |a - b| / s, s = ||h||_2/sqrt(K) of the row");
    drift_out_meta(&out, T_HIST, "table",
        "per (format, pair): histogram of fp32-step distances over all seeds' logits (the plot's data)");
    drift_out_meta(&out, T_CLOSE, "setup",
        "seeds %llu..%llu; K = %zu; %zu planted pairs per (gap, seed): "
        "the exact top-2 gap planted at gap_s * s (drift_plant_gap), the top row at a random one of the two positions",
        s0, s1, K, NP);
    drift_out_meta(&out, T_CLOSE, "table",
        "per (seed, format, gap, a, b): pairs whose argmax differs between a and b (b = exact), fp32 logits; Wilson 95%% interval");
    drift_out_meta(&out, T_CLOSE, "planting",
        "%ld of %zu planted pairs missed their target gap by more than %g relative (counted under the target's gap)",
        unreached, (size_t)ns * nf * ng * NP, DRIFT_PLANT_TOL);
    drift_out_meta(&out, T_CLOSEP, "table",
        "per (format, gap, a, b), adjacent generations and each against exact: _closecalls.csv summed over seeds %llu..%llu; Wilson 95%% interval",
        s0, s1);
    drift_out_meta(&out, T_HIST, "columns",
        "adjacent = 1: a and b are neighbours in --archs order, or b is exact (the pairs the fragment shows)");
    const char *gm =
        "seeds %llu..%llu; %s (dim %d, layers %d, vocab %d); %d prompts per seed (%s), %d greedy tokens each (no stop at BOS); "
        "every matmul (qkv, attn-out, mlp-up, mlp-down, lmhead) FORMAT/tc:ARCH/fp32/fp32, the rest fp32 (model.h), batch-invariant policy; architectures %s";
    drift_out_meta(
        &out, T_GREEDY, "setup", gm, s0, s1, ckpt, L->dim, L->n_layers, VT, NR, L->prompt_desc, NT, archs_opt);
    drift_out_meta(&out, T_GREEDY, "table",
        "per (seed, format, a, b): prompts whose greedy completions differ between a and b; Wilson 95%% interval");
    drift_out_meta(&out, T_PART, "setup", gm, s0, s1, ckpt, L->dim, L->n_layers, VT, NR, L->prompt_desc, NT, archs_opt);
    if (L->chat)
        drift_out_meta(&out, T_PART, "prompts",
            "first_token = the prompt's line in the prompt set (its number in the set, from 0), not a token");
    drift_out_meta(&out, T_PART, "table",
        "one row per (seed, format, a, b, prompt) whose completions differ: "
        "step = first differing generated token (0-based), the two tokens; exact_* = the exact reference (fp64, "
        "correctly rounded dot products) teacher-forced on the common context: exact_gap_ab = E[token_a] - E[token_b], "
        "exact_gap12 = its top-1 - top-2 gap; spread = max over the vocabulary of |logit_a - logit_b| at that step; "
        "deviation = max over the vocabulary of |logit_a - E| and |logit_b - E| there, the numerics' error (|exact_gap_ab| <= 2 deviation whenever a "
        "and b part: parting.h)");
    char name_a[MAXA + 1][16];
    for (int a = 0; a < na; a++) snprintf(name_a[a], sizeof name_a[a], "%s", drift_tc_arch_name(L->arch[a]));
    snprintf(name_a[na], sizeof name_a[na], "exact");
    double lo, hi;
#define FN(f) DRIFT_TXT(drift_format_name(cli->formats[f]))
#define RATE_CELLS(c) \
    DRIFT_INT((c)->n), DRIFT_INT((c)->k), DRIFT_NUM((double)(c)->k / (double)(c)->n), DRIFT_NUM(lo), DRIFT_NUM(hi)
#define WILSON(c) drift_wilson(&lo, &hi, (c)->k, (c)->n, DRIFT_Z95)
    for (int si = 0; si < ns; si++)
        for (int f = 0; f < nf; f++) {
            drift_cell_t sd = DRIFT_INT(cli->seed + (uint64_t)si);
            for (int lg = 0; lg < 2; lg++) EACH(q, f)
                {
                    const drift_count_t *c = &arg[(((size_t)si * nf + f) * 2 + lg) * npair + q->p];
                    if (!WILSON(c))
                        drift_row(&out, T_ARG, sd, FN(f), DRIFT_TXT(lg ? "stored" : "fp32"), DRIFT_TXT(name_a[q->a]),
                            DRIFT_TXT(name_a[q->b]), RATE_CELLS(c));
                }
            EACH(q, f)
            {
                drift_distance_summary_t ds;
                const size_t n = R * V;
                if (drift_distance_summary_of(
                        &ds, ulps[f * npair + q->p] + (size_t)si * n, sdiff[f * npair + q->p] + (size_t)si * n, n))
                    drift_die_oom(
                        16.0 * (double)n, "the sorted copies of %zu x %zu logit distances", (size_t)R, (size_t)V);
                drift_row(&out, T_DIFF, sd, FN(f), DRIFT_TXT(name_a[q->a]), DRIFT_TXT(name_a[q->b]), DRIFT_INT(n),
                    DRIFT_NUM((double)ds.same / (double)n), DRIFT_INT(ds.median), DRIFT_INT(ds.p99), DRIFT_INT(ds.max),
                    DRIFT_NUM(ds.d_p99), DRIFT_NUM(ds.d_max));
            }
            for (int g = 0; g < ng; g++) EACH(q, f)
                {
                    const drift_count_t *c = &close[(((size_t)si * nf + f) * MAXG + g) * npair + q->p];
                    if (!WILSON(c))
                        drift_row(&out, T_CLOSE, sd, FN(f), DRIFT_NUM(gaps[g]), DRIFT_TXT(name_a[q->a]),
                            DRIFT_TXT(name_a[q->b]), RATE_CELLS(c));
                }
            EACH(q, f)
            {
                const drift_count_t *c = &gcnt[((size_t)si * nf + f) * npair + q->p];
                if (q->b < na && !WILSON(c))
                    drift_row(&out, T_GREEDY, sd, FN(f), DRIFT_TXT(name_a[q->a]), DRIFT_TXT(name_a[q->b]),
                        DRIFT_INT(NR), DRIFT_INT(NT), DRIFT_INT(c->k), DRIFT_NUM((double)c->k / (double)c->n),
                        DRIFT_NUM(lo), DRIFT_NUM(hi));
            }
        }
    for (size_t i = 0; i < nparts; i++) {
        const drift_gg_part_t *q = &parts[i];
        drift_row(&out, T_PART, DRIFT_INT(cli->seed + (uint64_t)q->si), FN(q->f), DRIFT_TXT(name_a[q->a]),
            DRIFT_TXT(name_a[q->b]), DRIFT_INT(q->r), DRIFT_INT(q->tok0), DRIFT_INT(q->p.step), DRIFT_INT(q->p.tok_a),
            DRIFT_INT(q->p.tok_b), DRIFT_INT(q->p.exact_top1), DRIFT_NUM(q->p.gap_ab), DRIFT_NUM(q->p.gap12),
            DRIFT_NUM(q->p.spread), DRIFT_NUM(q->p.dev));
    }
    char cellS[MAXS * 24 + 8], cellR[96], pr[320], c3[64], c4[64], c5[64];
    for (int f = 0; f < nf; f++) EACH(q, f)
        {
            const long *h = hist + ((size_t)f * npair + q->p) * NBIN;
            long tot = 0;
            for (int k = 0; k < NBIN; k++) tot += h[k];
            snprintf(pr, sizeof pr, "%s-%s", name_a[q->a], name_a[q->b]);
            for (int k = 0; k < NBIN; k++)
                drift_row(&out, T_HIST, FN(f), DRIFT_TXT(pr), DRIFT_INT(q->shown), DRIFT_INT(k),
                    DRIFT_TXT(drift_ulp_bin_name(k)), DRIFT_INT(h[k]), DRIFT_NUM((double)h[k] / (double)tot));
        }

    /* -- the fragment: every architecture against exact, then each generation against the next -- */
    drift_md_intro(&out,
        "One LM head (K = %zu, V = %zu; hidden states with outlier channels, weights N(0, 1/K), "
        "gen_logits.h) is computed with each architecture's tensor-core model (recipes FORMAT/tc:ARCH/fp32/fp32: "
        "%s) and held against the exact logits of the same rounded inputs, at seeds %llu..%llu (%zu hidden states each); "
        "then planted close calls (%zu pairs per gap and seed) whose exact top-2 gap is a given fraction of s = ||h||_2/sqrt(K).",
        K, V, archs_opt, s0, s1, R, NP);
    int any_v100_bf16 = 0;
    for (int f = 0; f < nf; f++)
        for (int a = 0; a < na; a++) any_v100_bf16 |= !L->ok[f][a];
    drift_count_t t32 = {0, 0}, gen32 = {0, 0}, tst = {0, 0}, gst = {0, 0}, all;
#define PAIR_TEXT(q) (snprintf(pr, sizeof pr, "%s vs %s", name_a[(q)->a], name_a[(q)->b]), DRIFT_TXT(pr))
    for (int f = 0; f < nf; f++)
        for (int lg = 0; lg < 2; lg++) EACH(q, f) if (q->shown)
            {
                drift_counts_text(
                    cellS, sizeof cellS, &arg[((size_t)f * 2 + lg) * npair + q->p], ns, (size_t)nf * 2 * npair, &all);
                drift_count_t *sum = lg ? (q->b == na ? &tst : &gst) : (q->b == na ? &t32 : &gen32);
                sum->k += all.k, sum->n += all.n;
                drift_rate_text(cellR, sizeof cellR, all.k, all.n);
                drift_row(&out, T_MDARG, FN(f), DRIFT_TXT(lg ? "stored in format" : "fp32"), PAIR_TEXT(q),
                    DRIFT_TXT(cellS), DRIFT_TXT(cellR));
            }
    drift_md_end(&out, T_MDARG);
    /* The hidden state (seed, row) is the independent unit of these comparisons: one state
     * whose top-2 is a near tie flips under every pair at once, so the intervals count states,
     * a state once whatever number of its (format, pair) cases differ. [logits][0 vs exact, 1
     * between generations] */
    long unit_k[2][2] = {{0, 0}, {0, 0}}, unit_n = (long)ns * (long)R;
    for (int si = 0; si < ns; si++)
        for (size_t r = 0; r < R; r++)
            for (int lg = 0; lg < 2; lg++) {
                int hit[2] = {0, 0};
                for (int f = 0; f < nf; f++) EACH(q, f)
                if (q->shown && L->rowdiff[((((size_t)si * nf + f) * R + r) * 2 + lg) * npair + q->p])
                    hit[q->b == na ? 0 : 1] = 1;
                unit_k[lg][0] += hit[0], unit_k[lg][1] += hit[1];
            }
    char cellU[96];
#define UNIT_TEXT(lg, kind) (drift_rate_text(cellU, sizeof cellU, unit_k[lg][kind], unit_n), cellU)
    double frac_min = 1, frac_max = 0, max_s = 0;
    int64_t med_max = 0, p99_max = 0;
    char same_pairs[256] = "";
    unsigned char identical[4][MAXA] = {{0}}; /* [f][a]: a and a + 1 give bit-identical logits */
    for (int f = 0; f < nf; f++) EACH(q, f) if (q->shown)
        {
            drift_distance_summary_t ds;
            if (drift_distance_summary(&ds, ulps[f * npair + q->p], sdiff[f * npair + q->p], nlog))
                drift_die("cannot summarize the logit differences");
            snprintf(c3, sizeof c3, "%.1f%%", 100.0 * (double)ds.same / (double)nlog);
            drift_row(&out, T_MDDIFF, FN(f), PAIR_TEXT(q), DRIFT_TXT(c3), DRIFT_INT(ds.median), DRIFT_INT(ds.p99),
                DRIFT_INT(ds.max), DRIFT_NUM(ds.d_max));
            if (q->b == na) continue;
            if (ds.same == nlog) { /* bit-identical generations: named, not averaged in */
                identical[f][q->a] = 1;
                size_t l = strlen(same_pairs);
                snprintf(same_pairs + l, sizeof same_pairs - l, "%s%s %s/%s", l ? ", " : "",
                    drift_format_name(cli->formats[f]), name_a[q->a], name_a[q->b]);
                continue;
            }
            frac_min = fmin(frac_min, (double)ds.same / (double)nlog),
            frac_max = fmax(frac_max, (double)ds.same / (double)nlog);
            med_max = ds.median > med_max ? ds.median : med_max, p99_max = ds.p99 > p99_max ? ds.p99 : p99_max;
            max_s = fmax(max_s, ds.d_max);
        }
    drift_md_end(&out, T_MDDIFF);
    long cl_k[MAXG] = {0}, cl_n[MAXG] = {0};
    for (int f = 0; f < nf; f++)
        for (int g = 0; g < ng; g++) EACH(q, f) if (q->shown)
            {
                drift_counts_text(cellS, sizeof cellS, &close[((size_t)f * MAXG + g) * npair + q->p], ns,
                    (size_t)nf * MAXG * npair, &all);
                if (q->b < na && !identical[f][q->a]) cl_k[g] += all.k, cl_n[g] += all.n;
                drift_rate_text(cellR, sizeof cellR, all.k, all.n);
                drift_row(&out, T_MDCLOSE, FN(f), DRIFT_NUM(gaps[g]), PAIR_TEXT(q), DRIFT_TXT(cellS), DRIFT_TXT(cellR));
            }
    drift_md_end(&out, T_MDCLOSE);
    for (int f = 0; f < nf; f++) EACH(q, f) if (q->shown) for (int g = 0; g < ng; g++)
        {
            drift_counts_text(cellS, sizeof cellS, &close[((size_t)f * MAXG + g) * npair + q->p], ns,
                (size_t)nf * MAXG * npair, &all);
            if (WILSON(&all)) lo = hi = NAN;
            drift_row(&out, T_CLOSEP, FN(f), DRIFT_NUM(gaps[g]), DRIFT_TXT(name_a[q->a]), DRIFT_TXT(name_a[q->b]),
                DRIFT_INT(1), RATE_CELLS(&all));
        }
    /* the greedy part: per pair, over all seeds; partings are in parts[] (seed, format, pair order) */
    drift_md_text(&out,
        "Greedy text: %s (%d layers, dim %d, vocab %d) with every matmul under the architecture's recipe FORMAT/tc:ARCH/fp32/fp32 (the rest "
        "fp32, model.h) decodes %d prompts per seed (%s) for %d greedy tokens, at seeds %llu..%llu. "
        "Where two generations' completions part, the exact reference (fp64, correctly rounded dot products) teacher-forced on their common context "
        "gives the top-1/top-2 gap there; the spread is the largest difference between the two generations' logits at that step, "
        "the deviation the largest difference between either generation's logits and the exact ones there.\n\n",
        ckpt, L->n_layers, L->dim, VT, NR, L->prompt_desc, NT, s0, s1);
    {
        char tfs[64] = "";
        int ntf = 0;
        for (int f = 0; f < nf; f++)
            if (L->text_f[f]) {
                size_t l = strlen(tfs);
                snprintf(tfs + l, sizeof tfs - l, "%s%s", l ? ", " : "", drift_format_name(cli->formats[f]));
                ntf++;
            }
        /* a real model's decode is the run's cost: the greedy text may cover fewer formats than the head */
        if (ntf < nf)
            drift_md_text(&out,
                "The greedy text is decoded in %s only (--text-formats); the head and the close calls cover every format.\n\n",
                ntf ? tfs : "no format");
    }
    const drift_parting_t **sel = malloc((nparts + 1) * sizeof *sel);
    if (!sel) drift_die_oom((double)(nparts + 1) * sizeof *sel, "the list of %zu partings", nparts);
    char every[512] = "", never[512] = "", mixed[512] = "";
    int nnever = 0; /* pairs that never parted: counted in the takeaway, named in the table */
    drift_parting_summary_t ps;
    for (int f = 0; f < nf; f++) EACH(q, f) if (q->b < na && L->text_f[f])
        {
            drift_counts_text(cellS, sizeof cellS, &gcnt[(size_t)f * npair + q->p], ns, (size_t)nf * npair, &all);
            drift_rate_text(cellR, sizeof cellR, all.k, all.n);
            int seeds_with = 0; /* a pair is named only by what holds at every seed */
            for (int si = 0; si < ns; si++) seeds_with += gcnt[((size_t)si * nf + f) * npair + q->p].k > 0;
            char *list = seeds_with == ns ? every : seeds_with == 0 ? never : mixed;
            nnever += seeds_with == 0;
            size_t l = strlen(list), n = 0;
            snprintf(list + l, 512 - l, "%s%s %s/%s", l ? ", " : "", drift_format_name(cli->formats[f]), name_a[q->a],
                name_a[q->b]);
            for (size_t i = 0; i < nparts; i++)
                if (parts[i].f == f && parts[i].a == q->a && parts[i].b == q->b) sel[n++] = &parts[i].p;
            if (drift_parting_summary(&ps, sel, n)) drift_die("out of memory for a median");
            snprintf(c3, sizeof c3, n ? "%d / %.1f / %d" : "-", ps.step_min, ps.step_median, ps.step_max);
            snprintf(c4, sizeof c4, n ? "%.2g / %.2g" : "-", ps.gap12_median, ps.gap12_max);
            snprintf(c5, sizeof c5, n ? "%.2g / %.2g" : "-", ps.spread_median, ps.dev_median);
            drift_row(&out, T_MDGREEDY, FN(f), PAIR_TEXT(q), DRIFT_TXT(cellS), DRIFT_TXT(cellR), DRIFT_TXT(c3),
                DRIFT_TXT(c4), DRIFT_TXT(c5));
        }
    drift_md_end(&out, T_MDGREEDY);

    drift_md_text(&out, "**Takeaway.**\n\n");
    if (gen32.n) {
        /* the pairs of one hidden state share it: the interval counts hidden states, not cases */
        drift_md_text(&out,
            "- Realistic head, fp32 logits: adjacent generations pick a different token in %ld of %ld (hidden state, pair) cases over seeds %llu..%llu, ",
            gen32.k, gen32.n, s0, s1);
        drift_md_text(&out, "that is in %s of the hidden states; against the exact argmax: ", UNIT_TEXT(0, 1));
        drift_md_text(&out, "%ld of %ld cases, %s of hidden states. %s\n", t32.k, t32.n, UNIT_TEXT(0, 0),
            gen32.k == 0 ? "The top-2 gaps are far larger than the generations' differences."
                         : "So the same model does give different answers on different GPUs, at the rate above.");
    }
    if (tst.n) {
        drift_md_text(&out,
            "- With the logits stored in the input format, the argmax differs from the exact one in %ld of %ld (hidden state, pair) cases, ",
            tst.k, tst.n);
        drift_md_text(&out, "which are %s of the hidden states; between adjacent generations: ", UNIT_TEXT(1, 0));
        drift_md_text(&out, "%ld of %ld cases, %s of hidden states.\n", gst.k, gst.n, UNIT_TEXT(1, 1));
    }
    if (frac_min <= frac_max)
        drift_md_text(&out,
            "- Adjacent generations that compute differently share only %.1f%% to %.1f%% of their fp32 logits bit for bit; "
            "median distance at most %lld ulps, 99th percentile %lld; largest %.3g s.\n",
            100 * frac_min, 100 * frac_max, (long long)med_max, (long long)p99_max, max_s);
    if (same_pairs[0])
        drift_md_text(&out,
            "- Bit-identical logits: %s (one row of the architecture table: H100 and B200 both blocks of 16, 2 extra bits, RZ; Ada computes as A100).\n",
            same_pairs);
    /* the close calls in one line: the rate at each planted gap */
    for (int g = 0, said = 0; g < ng; g++)
        if (cl_n[g]) {
            /* a planted pair is shared by every generation pair: a count, not an interval */
            drift_md_text(&out, "%s%ld of %ld at an exact gap of %g s",
                said++ ? "; "
                       : "- Close calls, counted in (planted pair, generation pair) cases: adjacent generations that "
                         "compute differently disagree in ",
                cl_k[g], cl_n[g], gaps[g]);
            if (g == ng - 1 || !cl_n[g + 1]) drift_md_text(&out, ".\n");
        }
    if (unreached)
        drift_md_text(&out,
            "- %ld of %zu planted pairs could not reach their target gap within %g relative in their format; they are counted under the target.\n",
            unreached, (size_t)ns * nf * ng * NP, DRIFT_PLANT_TOL);
    if (any_v100_bf16) drift_md_text(&out, "- V100 has no bf16 path: it is absent from the bf16 rows.\n");
    /* greedy text: a statement about a pair is made only when it holds at every seed */
    /* "never parted" is a count, not a proof: at other seeds such pairs do part (bf16 a100/h100
     * at seeds 5 and 6, 2 of 8 each), so the line says how few completions it rests on */
    drift_md_text(&out,
        "- Greedy text (%d prompt%s x %d tokens per seed): %s%s; no completion differed at seeds %llu..%llu for the %d other pairs (%d "
        "completions a pair: a bounded rate, not identity)%s%s.\n",
        NR, NR == 1 ? "" : "s", NT,
        every[0] ? "the completions differ for some prompt at every seed between "
                 : "no pair's completions differ at every seed",
        every, s0, s1, nnever, NR * ns, mixed[0] ? "; not at every seed (no claim): " : "", mixed);
    for (int a = 0; a < na; a++)
        if (!strcmp(name_a[a], "mi300x")) {
            drift_md_text(&out,
                "- The MI300X model has no hardware data (tc_conformance validates NVIDIA only): its rows are predictions.\n");
            break;
        }
    if (nparts) {
        for (size_t i = 0; i < nparts; i++) sel[i] = &parts[i].p;
        if (drift_parting_summary(&ps, sel, nparts)) drift_die("out of memory for a median");
        drift_md_text(&out,
            "- Where two generations' texts part, the exact top-1/top-2 gap is at most %.2g over all %zu (pair, prompt) partings (per seed at most",
            ps.gap12_max, nparts);
        for (int si = 0, i0 = 0; si < ns; si++) { /* parts[] is in seed order */
            drift_parting_summary_t pss;
            int i1 = i0;
            while ((size_t)i1 < nparts && parts[i1].si == si) i1++;
            if (drift_parting_summary(&pss, sel + i0, (size_t)(i1 - i0))) drift_die("out of memory for a median");
            i0 = i1;
            drift_md_text(&out, pss.n ? "%s %.2g" : "%s none", si ? "," : "", pss.gap12_max);
        }
        drift_md_text(&out, "), against a median top-1/top-2 gap over all generated steps of");
        for (int si = 0; si < ns; si++)
            drift_md_text(
                &out, "%s %.2g", si ? "," : "", median_of(topgap + topgap_at[si], topgap_at[si + 1] - topgap_at[si]));
        /* whose tie flips depends on the two medians: say it only when the data show it */
        drift_md_text(&out,
            " (per seed): texts part only at near ties. There the generations' logits differ by a median %.2g and each deviates from the exact "
            "ones by %.2g%s. The exact gap is within twice that deviation at %zu of %zu partings; the exact argmax is one of the two tokens at %zu.\n",
            ps.spread_median, ps.dev_median,
            ps.spread_median < 0.5 * ps.dev_median ? ": the tie that flips is the input format's"
                                                   : ": the generations' own differences are as large as "
                                                     "their error, so the tensor-core arithmetic itself moves the tie",
            ps.within, nparts, ps.exact_among);
    }
    drift_out_commit(&out);
    free(sel);
}
