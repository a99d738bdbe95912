/* gpu_generations_report.c — the declared output of the gpu_generations experiment
 * (gpu_generations_lab.h): every number from the lab's counts and distances. */
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

enum { T_ARG, T_DIFF, T_HIST, T_CLOSE, T_CLOSEP, T_MDARG, T_MDDIFF, T_MDCLOSE };
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
static const drift_col_t MDARG[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("logits"), DRIFT_C_TEXT("a vs b"),
    DRIFT_C_TEXT("per seed (differ/rows)"), DRIFT_C_TEXT("all seeds: rate [95% interval]")};
static const drift_col_t MDDIFF[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a vs b"), DRIFT_C_TEXT("identical"),
    DRIFT_C_INT("median ulps"), DRIFT_C_INT("p99 ulps"), DRIFT_C_INT("max ulps"), DRIFT_C_NUM("max / s", "%.3g")};
static const drift_col_t MDCLOSE[] = {DRIFT_C_TEXT("format"), DRIFT_C_NUM("gap / s", "%g"), DRIFT_C_TEXT("a vs b"),
    DRIFT_C_TEXT("per seed (differ/pairs)"), DRIFT_C_TEXT("all seeds: rate [95% interval]")};
static const drift_table_spec_t TABLES[] = {{"_argmax.csv", NULL, 0, ARG, 10}, {"_diff.csv", NULL, 0, DIFF, 11},
    {"_hist.csv", NULL, 0, HIST, 7}, {"_closecalls.csv", NULL, 0, CLOSE, 10},
    {"_closecalls_pooled.csv", NULL, 0, CLOSEP, 10},
    {NULL, "Realistic head: rows whose argmax differs", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDARG, 5},
    {NULL, "Logit differences between generations (fp32 logits, all seeds)", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDDIFF,
        7},
    {NULL, "Close calls: planted top-2 gaps, pairs whose argmax differs", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDCLOSE,
        5}};

void drift_gpu_gen_write(const drift_gpu_gen_lab_t *L)
{
    const drift_cli_t *cli = L->cli;
    const char *archs_opt = L->archs_opt;
    const size_t K = L->K, V = L->V, R = L->R, NP = L->NP, nlog = L->nlog;
    const int nf = L->nf, ns = L->ns, ng = L->ng, na = L->na, npair = L->npair, nfab = L->nfab;
    const double *gaps = L->gaps;
    const drift_gg_pair_t *fab = L->fab;
    const drift_count_t *arg = L->arg, *close = L->close;
    const long *hist = L->hist, unreached = L->unreached;
    int64_t **ulps = L->ulps;
    double **sdiff = L->sdiff;
#define EACH(q, F)                                            \
    for (const drift_gg_pair_t *q = fab; q < fab + nfab; q++) \
        if (q->f == (F))

    /* -- write -- */
    drift_out_t out;
    drift_out_open(&out, cli, TABLES, 8, 1);
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
        }
    char cellS[MAXS * 24 + 8], cellR[96], pr[320], c3[64];
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

    drift_md_text(&out, "**Takeaway.**\n\n");
    if (gen32.n) {
        /* the pairs of one hidden state share it: the interval counts hidden states, not cases */
        drift_md_text(&out,
            "- Realistic head, fp32 logits: adjacent generations pick a different token in %ld of %ld (hidden state, pair) cases over seeds %llu..%llu, ",
            gen32.k, gen32.n, s0, s1);
        drift_md_text(&out, "in %s of hidden states; against the exact argmax: ", UNIT_TEXT(0, 1));
        drift_md_text(&out, "%ld of %ld cases, %s. %s\n", t32.k, t32.n, UNIT_TEXT(0, 0),
            gen32.k == 0 ? "The top-2 gaps far exceed the generations' differences."
                         : "So the same head does pick different tokens on different GPUs, at the rate above.");
    }
    if (tst.n) {
        drift_md_text(&out,
            "- Logits stored in the input format: the argmax differs from the exact one in %ld of %ld cases, ", tst.k,
            tst.n);
        drift_md_text(&out, "%s of hidden states; between adjacent generations: ", UNIT_TEXT(1, 0));
        drift_md_text(&out, "%ld of %ld cases, %s.\n", gst.k, gst.n, UNIT_TEXT(1, 1));
    }
    if (frac_min <= frac_max)
        drift_md_text(&out,
            "- Adjacent generations that compute differently share %.1f%% to %.1f%% of fp32 logits bit for bit; "
            "median distance at most %lld ulps, 99th percentile %lld; largest %.3g s.\n",
            100 * frac_min, 100 * frac_max, (long long)med_max, (long long)p99_max, max_s);
    if (same_pairs[0])
        drift_md_text(&out,
            "- Bit-identical logits: %s (H100 and B200 share a tc_model row: blocks of 16, 2 extra bits, RZ; Ada computes as A100).\n",
            same_pairs);
    /* the close calls in one line: the rate at each planted gap */
    for (int g = 0, said = 0; g < ng; g++)
        if (cl_n[g]) {
            /* a planted pair is shared by every generation pair: a count, not an interval */
            drift_md_text(&out, "%s%ld of %ld at %s%g s",
                said ? "; "
                     : "- Close calls, counted in (planted pair, generation pair) cases: adjacent generations that "
                       "compute differently disagree in ",
                cl_k[g], cl_n[g], said ? "" : "an exact gap of ", gaps[g]);
            said++;
            if (g == ng - 1 || !cl_n[g + 1]) drift_md_text(&out, ".\n");
        }
    if (unreached)
        drift_md_text(&out,
            "- %ld of %zu planted pairs could not reach their target gap within %g relative in their format; they are counted under the target.\n",
            unreached, (size_t)ns * nf * ng * NP, DRIFT_PLANT_TOL);
    if (any_v100_bf16) drift_md_text(&out, "- V100 has no bf16 path (no bf16 rows).\n");
    for (int a = 0; a < na; a++)
        if (!strcmp(name_a[a], "mi300x")) {
            drift_md_text(&out, "- MI300X's model is unvalidated (no hardware data): its rows are predictions.\n");
            break;
        }
    drift_out_commit(&out);
}
