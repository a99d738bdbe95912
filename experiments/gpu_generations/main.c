/* gpu_generations.c — does the same LM head pick a different token on different GPUs?
 *
 * Question: one LM head computed with the tensor-core model of each GPU generation (--archs,
 * default tc:v100, tc:a100, tc:h100, tc:b200 and AMD's tc:mi300x; tc:ada computes fp16/bf16
 * as tc:a100; recipes FORMAT/tc:ARCH/fp32/fp32, arch_set.h). How often does the argmax differ
 * between generations? (gpu_generations_greedy asks it of the whole model's greedy text.)
 *
 * What it measures, per seed (--seed, --seeds consecutive seeds) and input format (bf16,
 * fp16; V100 has no bf16 path, so it is absent from the bf16 rows):
 *   (1) realistic head: --rows hidden states (outlier channels, gen_logits.h) against a head
 *       of --V rows N(0, 1/K); every logit of every architecture (drift_recipe_gemm) and the
 *       exact logits of the same rounded inputs; argmax per architecture, with fp32 logits
 *       and with the logits stored in the input format; the logit differences between every
 *       two architectures in fp32 ulps and in units of the row's logit scale s = ||h||/sqrt(K);
 *   (2) close calls: --pairs planted top-2 pairs per gap (--gaps, in units of s; exact gaps,
 *       close_calls.h): per gap, how often two architectures (or one and exact) pick
 *       different tokens.
 * Rates carry Wilson 95% intervals.
 *
 * How to run:
 *   ./lab run gpu_generations
 *   build/bin/gpu_generations --profile quick --archs a100,h100
 *   ./lab plot gpu_generations    plots/gpu_generations_{ulps,closecalls}.png
 *
 * What to look for: most logits differ between generations that compute differently, by a
 * few to a few tens of fp32 ulps, and H100 and B200 agree bit for bit; yet on realistic heads
 * the argmax does not move. At planted gaps of 1e-7..1e-6 s the generations disagree often. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_head.h"
#include "arch_set.h"
#include "cli.h"
#include "close_calls.h"
#include "dispatch.h"
#include "drift.h"
#include "gen_logits.h"
#include "gpu_generations_lab.h"
#include "metrics.h"
#include "pair_stats.h"
#include "philox.h"
#include "stats.h"

#define EXP "gpu_generations"
#define MAXA DRIFT_GG_MAXA
#define MAXG DRIFT_GG_MAXG
#define MAXS DRIFT_GG_MAXS
#define NBIN DRIFT_ULP_NBIN

int main(int argc, char **argv)
{
    long K_ = 0, V_ = 0, R_ = 0, P_ = 0, nseeds = 3;
    const char *archs_opt = "v100,a100,h100,b200,mi300x";
    drift_dbllist_t gaps = {{0}, 0};
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INT, &K_, "N", "hidden size", 16, 1 << 16, {"256", "1024", "4096"}},
        {"V", DRIFT_OPT_INT, &V_, "N", "vocabulary (rows of the head)", 2, 1 << 20, {"256", "1024", "4096"}},
        {"rows", DRIFT_OPT_INT, &R_, "N", "hidden states per seed (realistic head)", 1, 1 << 16, {"16", "24", "64"}},
        {"pairs", DRIFT_OPT_INT, &P_, "N", "planted close calls per gap and seed", 1, 1 << 20, {"40", "150", "2000"}},
        {"gaps", DRIFT_OPT_DOUBLELIST, &gaps, "G,G,...", "planted exact top-2 gaps in units of s", 0, 0,
            {"1e-6,1e-4", "1e-7,1e-6,1e-5", "1e-7,3e-7,1e-6,3e-6,1e-5,1e-4"}},
        {"seeds", DRIFT_OPT_INT, &nseeds, "N", "consecutive seeds from --seed (default 3)", 1, MAXS, {0}},
        {"archs", DRIFT_OPT_STRING, &archs_opt, "LIST",
            "tensor-core architectures, in generation order (default v100,a100,h100,b200,mi300x; ada computes fp16/bf16 as a100)",
            0, 0, {0}},
    };
    const drift_cli_spec_t spec = {.name = EXP,
        .question =
            "Does the same LM head pick different tokens on different GPU generations (tensor-core models of V100 to B200 and MI300X)?",
        .default_formats = "bf16,fp16",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders = "sweeps GPU architectures (--archs), each a tc:ARCH order",
        .cpu_only = "CPU emulation of the tensor cores only",
        .summary =
            "the same LM head computed with each chosen GPU generation's tensor-core arithmetic (its block size, extra "
            "alignment bits and rounding): the tables count the fp32 logits that differ bit for bit between generations "
            "and how often the argmax follows, on realistic heads and on planted close calls. Generations that share a row "
            "of the architecture table (H100 and B200; Ada and A100 for fp16 and bf16) compute identically and cannot "
            "differ; the takeaway in the fragment states what this run found."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] != DRIFT_BF16 && cli.formats[f] != DRIFT_FP16 && cli.formats[f] != DRIFT_TF32)
            drift_die("--formats: %s has no tensor-core LM head here (accepted: bf16, fp16, tf32)",
                drift_format_name(cli.formats[f]));
    if (gaps.n > MAXG) drift_die("--gaps: at most %d values", MAXG);
    for (int g = 0; g < gaps.n; g++)
        if (!(gaps.v[g] > 0 && gaps.v[g] < 1)) drift_die("--gaps: %g is not in (0, 1) (gaps in units of s)", gaps.v[g]);
    drift_tc_arch_t arch[MAXA];
    int na = 0;
    char err[256];
    if (drift_arch_set_parse(arch, &na, MAXA, archs_opt, err, sizeof err)) drift_die("--archs: %s", err);
    const size_t K = (size_t)K_, V = (size_t)V_, R = (size_t)R_, NP = (size_t)P_;
    const int nf = cli.nformats, ns = (int)nseeds, ng = gaps.n;
    if (K <= DRIFT_PLANT_FINE + 1) drift_die("--K: at least %d", DRIFT_PLANT_FINE + 2);
    if (V * K > ((size_t)1 << 28)) drift_die("--V x --K: at most 2^28 weights (%zu x %zu)", V, K);
    /* every logit of every architecture and pair is held for the medians: bound what that takes */
    const int npair = drift_pair_count(na); /* (a, b) with b > a, b == na: exact */
    if ((size_t)(na + 1) * R * V > ((size_t)1 << 27) ||
        (size_t)ns * R * V * (size_t)nf * (size_t)npair > ((size_t)1 << 27))
        drift_die(
            "--rows x --V: too many logits to hold (%zu x %zu per seed, %d seeds, %d architectures; at most 2^27 in all)",
            R, V, ns, na);
    drift_require_memory(&cli, 8.0 * (na + 1) * (double)R * V * (2 + nf * ns), "--rows, --V");

    /* recipes per (format, arch); ok = the architecture has a path for the format */
    drift_recipe_t rec[4][MAXA];
    int ok[4][MAXA];
    for (int f = 0; f < nf; f++) {
        for (int a = 0; a < na; a++) ok[f][a] = drift_arch_head_recipe(&rec[f][a], cli.formats[f], arch[a]) == 0;
    }

    /* -- measure -- */
#define PIDX(a, b) drift_pair_index((a), (b), na)
#define OKP(f, a, b) (ok[f][a] && ((b) == na || ok[f][b]))
    /* the (format, a, b) with a path for both (b == na: exact), in that order; shown in the fragment's
     * head tables: each against exact and adjacent generations */
    drift_gg_pair_t fab[4 * (MAXA + 1) * MAXA / 2];
    int nfab = 0;
    for (int f = 0; f < nf; f++)
        for (int a = 0; a < na; a++)
            for (int b = a + 1; b <= na; b++)
                if (OKP(f, a, b)) fab[nfab] = (drift_gg_pair_t){f, a, b, PIDX(a, b), b == na || b == a + 1}, nfab++;
    drift_count_t *arg = calloc((size_t)ns * nf * 2 * npair, sizeof *arg);        /* [seed][f][logits][pair] */
    unsigned char *rowdiff = calloc((size_t)ns * nf * R * 2 * npair, 1);          /* [seed][f][row][logits][pair] */
    drift_count_t *close = calloc((size_t)ns * nf * MAXG * npair, sizeof *close); /* [seed][f][gap][pair] */
    long *hist = calloc((size_t)nf * npair * NBIN, sizeof *hist); /* [f][pair][bin], fp32 logits, all seeds */
    int64_t **ulps = calloc((size_t)nf * npair, sizeof *ulps);    /* [f][pair]: all seeds' ulp distances */
    double **sdiff = calloc((size_t)nf * npair, sizeof *sdiff);
    size_t nlog = (size_t)ns * R * V;
    double *Wd = malloc(V * K * sizeof *Wd);
    if (!arg || !rowdiff || !close || !hist || !ulps || !sdiff || !Wd)
        drift_die_oom(8.0 * (double)V * K + (double)ns * nf * R * 2 * npair,
            "the %zu x %zu head and the tables of %d seeds x %d formats x %d pairs (--V, --K, --rows: smaller)",
            (size_t)V, (size_t)K, ns, nf, npair);
    for (int t = 0; t < nf * npair; t++) {
        ulps[t] = malloc(nlog * sizeof **ulps), sdiff[t] = malloc(nlog * sizeof **sdiff);
        if (!ulps[t] || !sdiff[t])
            drift_die_oom(16.0 * (double)nlog, "the distances of %zu logits (--seeds, --rows, --V: smaller)", nlog);
    }
    size_t steps = (size_t)ns * nf * 2, done = 0;
    long unreached = 0; /* planted pairs whose exact gap missed the target by more than DRIFT_PLANT_TOL */
    for (int si = 0; si < ns; si++) {
        uint64_t seed = cli.seed + (uint64_t)si;
        drift_stream_t s;
        drift_hidden_model_t model;
        drift_stream_init(&s, seed, drift_fnv1a32(EXP ".model"), (uint32_t)K, 0);
        if (drift_hidden_model(&model, K, &s)) drift_die("hidden model failed");
        if (drift_gen_head(Wd, NULL, NULL, NULL, V, K, seed, drift_fnv1a32(EXP ".W")))
            drift_die_oom(
                8.0 * (double)V * K, "generating the %zu x %zu head (--V, --K: smaller)", (size_t)V, (size_t)K);
        double *H0 = malloc(R * K * sizeof *H0);
        if (!H0)
            drift_die_oom(
                (double)R * K * sizeof *H0, "%zu hidden rows of %zu (--rows, --K: smaller)", (size_t)R, (size_t)K);
        for (size_t r = 0; r < R; r++) {
            drift_stream_init(&s, seed, drift_fnv1a32(EXP ".h"), (uint32_t)K, (uint32_t)r);
            drift_gen_hidden(H0 + r * K, &model, &s);
        }
        for (int f = 0; f < nf; f++) {
            drift_format_t in = cli.formats[f];
            drift_progress(&cli, done++, steps);
            /* (1) realistic head: every logit of every architecture and the exact ones (arch_head.h) */
            drift_count_t *ca = &arg[((size_t)si * nf + f) * 2 * npair];
            int rc = drift_arch_head_compare(ca, rowdiff + ((size_t)si * nf + f) * R * 2 * npair, ulps + f * npair,
                sdiff + f * npair, (size_t)si * R * V, hist + (size_t)f * npair * NBIN, H0, Wd, R, V, K, in, rec[f],
                ok[f], na);
            if (rc) drift_die("%s logits: %s", drift_format_name(in), drift_strerror(rc));
            drift_progress(&cli, done++, steps);
            /* (2) close calls: planted pairs (close_calls.h) */
            for (int g = 0; g < ng; g++)
                if (drift_close_call_counts(&close[(((size_t)si * nf + f) * MAXG + g) * npair], &unreached, &model, V,
                        K, gaps.v[g], in, rec[f], ok[f], na, seed, drift_fnv1a32(EXP ".close"), (uint32_t)(g * 4 + f),
                        NP))
                    drift_die("planted close calls failed (out of memory or an unreachable gap)");
        }
        free(H0);
    }
    drift_progress(&cli, steps, steps);

    const drift_gpu_gen_lab_t lab = {&cli, archs_opt, K, V, R, NP, nf, ns, ng, na, npair, gaps.v, arch,
        (const int(*)[MAXA])ok, fab, nfab, arg, rowdiff, close, hist, ulps, sdiff, nlog, unreached};
    drift_gpu_gen_write(&lab); /* gpu_generations_report.c */
    for (int t = 0; t < nf * npair; t++) free(ulps[t]), free(sdiff[t]);
    free(ulps), free(sdiff), free(arg), free(rowdiff), free(close), free(hist), free(Wd);
    return 0;
}
