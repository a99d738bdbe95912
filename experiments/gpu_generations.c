/* gpu_generations.c — does the same model give different answers on different GPUs?
 *
 * Question: one LM head (the same hidden states, the same weights, the same input format) is
 * computed with the tensor-core model of each GPU generation (--archs, default tc:v100,
 * tc:a100, tc:h100, tc:b200 and AMD's tc:mi300x; tc:ada computes fp16/bf16 as tc:a100, so it
 * adds nothing here; recipes FORMAT/tc:ARCH/fp32/fp32, through the recipe dispatcher). How often does the argmax differ between generations, and how far apart
 * are their logits? Every result is also held against the exact reference (the exact dot
 * product of the same rounded inputs).
 *
 * What it measures, per seed (--seed, --seeds consecutive seeds) and input format (bf16,
 * fp16; V100 has no bf16 path, so it is absent from the bf16 rows):
 *   (1) realistic head: --rows hidden states (outlier channels, gen_logits.h) against a head
 *       of --V rows N(0, 1/K); every logit of every architecture (drift_recipe_gemm) and the
 *       exact logits; argmax per architecture, with fp32 logits and with the logits stored in
 *       the input format (what a model running in bf16/fp16 returns); the logit differences
 *       between every two architectures in fp32 ulps (steps between the two fp32 values) and
 *       in units of the row's logit scale s = ||h||_2 / sqrt(K);
 *   (2) close calls: --pairs planted top-2 pairs per gap (--gaps, in units of s; exact gaps,
 *       drift_plant_gap), where the argmax can actually move: per gap, how often two
 *       architectures pick different tokens and how often each differs from the exact argmax.
 * Rates carry Wilson 95% intervals.
 *
 * How to run:
 *   ./lab run gpu_generations
 *   build/bin/gpu_generations --profile quick --archs a100,h100
 *   ./lab plot gpu_generations        plots/gpu_generations_{ulps,closecalls}.png
 *
 * What to look for: most logits differ between generations that compute differently, by a
 * few to a few tens of fp32 ulps (up to about 1e-5 s), and H100 and B200 agree bit for bit;
 * yet on realistic heads the argmax does not move: the top-2 gaps are orders of magnitude
 * larger. At planted gaps of 1e-7..1e-6 s the generations disagree often; at 1e-5 s rarely. The greedy-text comparison needs the transformer (not
 * merged yet): a TODO in the fragment, no number. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dispatch.h"
#include "drift.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "metrics.h"
#include "output.h"
#include "philox.h"
#include "stats.h"

#ifdef _OPENMP
#define DRIFT_OMP(x) _Pragma(x)
#else
#define DRIFT_OMP(x)
#endif

#define EXP "gpu_generations"
#define MAXA 8
#define MAXG 8
#define MAXS 8
#define NBIN 9
static const char *BIN_NAME[NBIN] = {"0", "1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", ">64"};
static int bin_of(int64_t d)
{
    if (d <= 2) return (int)d;
    int b = 3;
    for (int64_t hi = 4; d > hi && b < NBIN - 1; hi *= 2) b++;
    return b;
}

enum { T_ARG, T_DIFF, T_HIST, T_CLOSE, T_CLOSEP, T_MDARG, T_MDDIFF, T_MDCLOSE };
static const drift_col_t ARG[] = {
    DRIFT_C_INT("seed"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("logits"), DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"),
    DRIFT_C_INT("rows"), DRIFT_C_INT("differ"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo95", "%.6g"), DRIFT_C_NUM("hi95", "%.6g")};
static const drift_col_t DIFF[] = {
    DRIFT_C_INT("seed"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"), DRIFT_C_INT("logits"),
    DRIFT_C_NUM("identical_frac", "%.6f"), DRIFT_C_INT("median_ulps"), DRIFT_C_INT("p99_ulps"), DRIFT_C_INT("max_ulps"),
    DRIFT_C_NUM("p99_s", "%.4g"), DRIFT_C_NUM("max_s", "%.4g")};
static const drift_col_t HIST[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("pair"), DRIFT_C_INT("adjacent"), DRIFT_C_INT("bin"), DRIFT_C_TEXT("ulps"),
                                   DRIFT_C_INT("count"), DRIFT_C_NUM("fraction", "%.6g")};
static const drift_col_t CLOSE[] = {
    DRIFT_C_INT("seed"), DRIFT_C_TEXT("format"), DRIFT_C_NUM("gap_s", "%g"), DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"),
    DRIFT_C_INT("pairs"), DRIFT_C_INT("differ"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo95", "%.6g"), DRIFT_C_NUM("hi95", "%.6g")};
static const drift_col_t CLOSEP[] = {
    DRIFT_C_TEXT("format"), DRIFT_C_NUM("gap_s", "%g"), DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"), DRIFT_C_INT("adjacent"),
    DRIFT_C_INT("pairs"), DRIFT_C_INT("differ"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo95", "%.6g"), DRIFT_C_NUM("hi95", "%.6g")};
static const drift_col_t MDARG[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("logits"), DRIFT_C_TEXT("a vs b"), DRIFT_C_TEXT("per seed (differ/rows)"),
                                    DRIFT_C_TEXT("all seeds: rate [95% interval]")};
static const drift_col_t MDDIFF[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a vs b"), DRIFT_C_TEXT("identical"),
                                     DRIFT_C_INT("median ulps"), DRIFT_C_INT("p99 ulps"), DRIFT_C_INT("max ulps"), DRIFT_C_NUM("max / s", "%.3g")};
static const drift_col_t MDCLOSE[] = {DRIFT_C_TEXT("format"), DRIFT_C_NUM("gap / s", "%g"), DRIFT_C_TEXT("a vs b"),
                                      DRIFT_C_TEXT("per seed (differ/pairs)"), DRIFT_C_TEXT("all seeds: rate [95% interval]")};
static const drift_table_spec_t TABLES[] = {
    {"_argmax.csv", NULL, 0, ARG, 10},
    {"_diff.csv", NULL, 0, DIFF, 11},
    {"_hist.csv", NULL, 0, HIST, 7},
    {"_closecalls.csv", NULL, 0, CLOSE, 10},
    {"_closecalls_pooled.csv", NULL, 0, CLOSEP, 10},
    {NULL, "Realistic head: rows whose argmax differs", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDARG, 5},
    {NULL, "Logit differences between generations (fp32 logits, all seeds)", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDDIFF, 7},
    {NULL, "Close calls: planted top-2 gaps, pairs whose argmax differs", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDCLOSE, 5}};

/* counts per (seed, format, a, b); b == na means the exact reference */
typedef struct {
    long n, k;
} count_t;

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}
static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void rate_text(char *buf, size_t size, long k, long n)
{
    double lo, hi;
    drift_wilson(&lo, &hi, k, n, DRIFT_Z95);
    snprintf(buf, size, "%ld/%ld = %.3g%% [%.3g%%, %.3g%%]", k, n, 100.0 * (double)k / (double)n, 100 * lo, 100 * hi);
}

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
        {"archs", DRIFT_OPT_STRING, &archs_opt, "LIST", "tensor-core architectures, in generation order (default v100,a100,h100,b200,mi300x; ada computes fp16/bf16 as a100)", 0, 0, {0}},
    };
    const drift_cli_spec_t spec = {
        EXP, "Does the same LM head give different answers on different GPU generations (tensor-core models of V100 to B200 and MI300X)?",
        "bf16,fp16", "seq", opts, (int)(sizeof opts / sizeof opts[0]),
        "sweeps GPU architectures (--archs), each a tc:ARCH order", "CPU emulation of the tensor cores only",
        "the same LM head computed with each GPU generation's tensor-core arithmetic gives different fp32 logits in a large "
        "share of outputs (a few to a few tens of fp32 ulps, up to about 1e-5 of the logit scale s), because the block size, the extra alignment "
        "bits and the rounding differ. On realistic heads the argmax still agrees, since top-2 gaps are far larger than "
        "those differences; with planted close calls of 1e-7 to 1e-6 s the generations pick different tokens often. "
        "Greedy text across generations waits for the transformer."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    for (int f = 0; f < cli.nformats; f++)
        if (cli.formats[f] != DRIFT_BF16 && cli.formats[f] != DRIFT_FP16 && cli.formats[f] != DRIFT_TF32)
            drift_die("--formats: %s has no tensor-core LM head here (accepted: bf16, fp16, tf32)", drift_format_name(cli.formats[f]));
    if (gaps.n > MAXG) drift_die("--gaps: at most %d values", MAXG);
    for (int g = 0; g < gaps.n; g++)
        if (!(gaps.v[g] > 0 && gaps.v[g] < 1)) drift_die("--gaps: %g is not in (0, 1) (gaps in units of s)", gaps.v[g]);
    drift_tc_arch_t arch[MAXA];
    int na = 0;
    {
        char buf[256];
        if (strlen(archs_opt) >= sizeof buf) drift_die("--archs: too long");
        strcpy(buf, archs_opt);
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
            char spec_s[64];
            drift_order_t o;
            snprintf(spec_s, sizeof spec_s, "tc:%s", t);
            if (drift_order_parse(&o, spec_s) || o.kind != DRIFT_ORDER_TC)
                drift_die("--archs: unknown architecture '%s' (accepted: v100, a100, a2, a30, ada, l40s, h100, h200, b200, rtxpro6000, mi100, mi250, mi300x)", t);
            if (na == MAXA) drift_die("--archs: at most %d", MAXA);
            for (int i = 0; i < na; i++)
                if (arch[i] == o.arch) drift_die("--archs: %s given twice", t);
            arch[na++] = o.arch;
        }
        if (na < 2) drift_die("--archs: give at least two architectures to compare");
    }
    const size_t K = (size_t)K_, V = (size_t)V_, R = (size_t)R_, NP = (size_t)P_;
    const int nf = cli.nformats, ns = (int)nseeds, ng = gaps.n;
    if (K <= DRIFT_PLANT_FINE + 1) drift_die("--K: at least %d", DRIFT_PLANT_FINE + 2);
    if (V * K > ((size_t)1 << 28)) drift_die("--V x --K: at most 2^28 weights (%zu x %zu)", V, K);
    /* every logit of every architecture and pair is held for the medians: bound what that takes */
    const size_t npair_ = (size_t)(na + 1) * (size_t)na / 2;
    if ((size_t)(na + 1) * R * V > ((size_t)1 << 27) || (size_t)ns * R * V * (size_t)nf * npair_ > ((size_t)1 << 27))
        drift_die("--rows x --V: too many logits to hold (%zu x %zu per seed, %d seeds, %d architectures; at most 2^27 in all)", R, V, ns, na);

    /* recipes per (format, arch); ok = the architecture has a path for the format */
    drift_recipe_t rec[4][MAXA];
    int ok[4][MAXA];
    for (int f = 0; f < nf; f++)
        for (int a = 0; a < na; a++) {
            drift_order_t o = {0};
            char s[64];
            snprintf(s, sizeof s, "tc:%s", drift_tc_arch_name(arch[a]));
            drift_order_parse(&o, s);
            rec[f][a] = drift_recipe(cli.formats[f], &o, DRIFT_FP32, DRIFT_FP32);
            ok[f][a] = drift_recipe_check(&rec[f][a], NULL, 0) == 0;
        }

    /* -- measure -- */
    const int npair = (na + 1) * na / 2; /* (a, b) with b > a, b == na: exact */
#define PIDX(a, b) ((a) * (2 * na + 1 - (a)) / 2 + (b) - (a) - 1)
    count_t *arg = calloc((size_t)ns * nf * 2 * npair, sizeof *arg);          /* [seed][f][logits][pair] */
    count_t *close = calloc((size_t)ns * nf * MAXG * npair, sizeof *close);   /* [seed][f][gap][pair] */
    long *hist = calloc((size_t)nf * npair * NBIN, sizeof *hist);             /* [f][pair][bin], fp32 logits, all seeds */
    int64_t **ulps = calloc((size_t)nf * npair, sizeof *ulps);                 /* [f][pair]: all seeds' ulp distances */
    double **sdiff = calloc((size_t)nf * npair, sizeof *sdiff);
    size_t nlog = (size_t)ns * R * V;
    double *Wd = malloc(V * K * sizeof *Wd), *Bt = malloc(K * V * sizeof *Bt), *H = malloc(R * K * sizeof *H);
    double *L = malloc((size_t)(na + 1) * R * V * sizeof *L), *scale = malloc(R * sizeof *scale);
    if (!arg || !close || !hist || !ulps || !sdiff || !Wd || !Bt || !H || !L || !scale) drift_die("out of memory");
    for (int t = 0; t < nf * npair; t++) {
        ulps[t] = malloc(nlog * sizeof **ulps), sdiff[t] = malloc(nlog * sizeof **sdiff);
        if (!ulps[t] || !sdiff[t]) drift_die("out of memory");
    }
    size_t steps = (size_t)ns * nf * 2, done = 0;
    long unreached = 0; /* planted pairs whose exact gap missed the target by more than DRIFT_PLANT_TOL */
    for (int si = 0; si < ns; si++) {
        uint64_t seed = cli.seed + (uint64_t)si;
        drift_stream_t s;
        drift_hidden_model_t model;
        drift_stream_init(&s, seed, drift_fnv1a32(EXP ".model"), (uint32_t)K, 0);
        if (drift_hidden_model(&model, K, &s)) drift_die("hidden model failed");
        if (drift_gen_head(Wd, NULL, NULL, NULL, V, K, seed, drift_fnv1a32(EXP ".W"))) drift_die("out of memory");
        double *H0 = malloc(R * K * sizeof *H0);
        if (!H0) drift_die("out of memory");
        for (size_t r = 0; r < R; r++) {
            drift_stream_init(&s, seed, drift_fnv1a32(EXP ".h"), (uint32_t)K, (uint32_t)r);
            drift_gen_hidden(H0 + r * K, &model, &s);
        }
        for (int f = 0; f < nf; f++) {
            drift_format_t in = cli.formats[f];
            drift_progress(&cli, done++, steps);
            /* (1) realistic head: inputs rounded to the format, every logit of every architecture */
            for (size_t r = 0; r < R; r++) {
                for (size_t k = 0; k < K; k++) H[r * K + k] = drift_rne(H0[r * K + k], in);
                scale[r] = drift_logit_scale(H + r * K, K);
            }
            for (size_t v = 0; v < V; v++)
                for (size_t k = 0; k < K; k++) Bt[k * V + v] = drift_rne(Wd[v * K + k], in);
            drift_recipe_t ex = drift_recipe_exact(in, DRIFT_FP64);
            int rc = drift_recipe_gemm(L + (size_t)na * R * V, H, Bt, R, V, K, &ex, 1, 0);
            if (rc) drift_die("exact logits: %s", drift_strerror(rc));
            for (int a = 0; a < na; a++) {
                if (!ok[f][a]) continue;
                rc = drift_recipe_gemm(L + (size_t)a * R * V, H, Bt, R, V, K, &rec[f][a], 1, 0);
                if (rc) drift_die("%s logits: %s", drift_tc_arch_name(arch[a]), drift_strerror(rc));
            }
            double *st = malloc(V * sizeof *st);
            size_t top[2][MAXA + 1];
            if (!st) drift_die("out of memory");
            for (size_t r = 0; r < R; r++) {
                for (int lg = 0; lg < 2; lg++) /* 0: fp32 logits; 1: stored in the input format */
                    for (int a = 0; a <= na; a++) {
                        if (a < na && !ok[f][a]) continue;
                        const double *x = L + ((size_t)a * R + r) * V;
                        for (size_t v = 0; v < V; v++) st[v] = lg && a < na ? drift_rne(x[v], in) : x[v];
                        drift_top2_t t2;
                        drift_top2(&t2, st, V);
                        top[lg][a] = t2.top1;
                    }
                for (int lg = 0; lg < 2; lg++)
                    for (int a = 0; a < na; a++)
                        for (int b = a + 1; b <= na; b++) {
                            if (!ok[f][a] || (b < na && !ok[f][b])) continue;
                            count_t *c = &arg[(((size_t)si * nf + f) * 2 + lg) * npair + PIDX(a, b)];
                            c->n++, c->k += top[lg][a] != top[lg][b];
                        }
                for (int a = 0; a < na; a++)
                    for (int b = a + 1; b <= na; b++) {
                        if (!ok[f][a] || (b < na && !ok[f][b])) continue;
                        int p = PIDX(a, b);
                        for (size_t v = 0; v < V; v++) {
                            double xa = L[((size_t)a * R + r) * V + v], xb = L[((size_t)b * R + r) * V + v];
                            if (b == na) xb = drift_rne(xb, DRIFT_FP32); /* the exact logit's fp32 value */
                            int64_t d = drift_ulp_distance(xa, xb, DRIFT_FP32);
                            size_t idx = ((size_t)si * R + r) * V + v;
                            ulps[f * npair + p][idx] = d;
                            sdiff[f * npair + p][idx] = fabs(L[((size_t)a * R + r) * V + v] - L[((size_t)b * R + r) * V + v]) / scale[r];
                            hist[((size_t)f * npair + p) * NBIN + bin_of(d)]++;
                        }
                    }
            }
            free(st);
            drift_progress(&cli, done++, steps);
            /* (2) close calls: planted pairs, OpenMP over pairs (each from its own stream) */
            for (int g = 0; g < ng; g++) {
                unsigned char *pick = calloc(NP * (size_t)(na + 1), 1), *missed = calloc(NP, 1);
                int err = 0;
                if (!pick || !missed) drift_die("out of memory");
                DRIFT_OMP("omp parallel for schedule(dynamic, 4) reduction(|:err)")
                for (size_t i = 0; i < NP; i++) {
                    double *h = malloc(K * sizeof *h), *w1 = malloc(K * sizeof *w1), *w2 = malloc(K * sizeof *w2);
                    double *hf = malloc(K * sizeof *hf), *W2 = malloc(2 * K * sizeof *W2);
                    if (!h || !w1 || !w2 || !hf || !W2) err |= 1;
                    else {
                        drift_stream_t ps;
                        drift_stream_init(&ps, seed, drift_fnv1a32(EXP ".close"), (uint32_t)(g * 4 + f), (uint32_t)i);
                        double sc;
                        int swap;
                        drift_plant_t pt;
                        drift_lmhead_cfg_t cfg[MAXA];
                        int map[MAXA], nc = 0;
                        for (int a = 0; a < na; a++)
                            if (ok[f][a]) map[nc] = a, cfg[nc++] = rec[f][a];
                        drift_lmhead_result_t res;
                        if (drift_gen_planted_pair(h, w1, w2, &sc, &swap, &model, V, gaps.v[g], 0, &ps) ||
                            drift_plant_pair_in(&pt, hf, W2, h, w1, w2, K, gaps.v[g] * sc, swap, 0, in) ||
                            drift_lmhead_eval_full(&res, hf, W2, 2, K, cfg, nc))
                            err |= 1;
                        else {
                            for (int c = 0; c < nc; c++) pick[i * (na + 1) + map[c]] = (unsigned char)res.computed[c].top1;
                            pick[i * (na + 1) + na] = (unsigned char)res.exact.top1;
                            missed[i] = !pt.reached; /* the format could not plant the gap within DRIFT_PLANT_TOL */
                        }
                    }
                    free(h), free(w1), free(w2), free(hf), free(W2);
                }
                if (err) drift_die("planted close calls failed (out of memory or an unreachable gap)");
                for (size_t i = 0; i < NP; i++) unreached += missed[i];
                free(missed);
                for (size_t i = 0; i < NP; i++)
                    for (int a = 0; a < na; a++)
                        for (int b = a + 1; b <= na; b++) {
                            if (!ok[f][a] || (b < na && !ok[f][b])) continue;
                            count_t *c = &close[(((size_t)si * nf + f) * MAXG + g) * npair + PIDX(a, b)];
                            c->n++, c->k += pick[i * (na + 1) + a] != pick[i * (na + 1) + b];
                        }
                free(pick);
            }
        }
        free(H0);
    }
    drift_progress(&cli, steps, steps);

    /* -- write -- */
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 8, 1);
    const char *fm = "seeds %llu..%llu; K = %zu, V = %zu, %zu hidden states per seed; architectures %s";
    unsigned long long s0 = (unsigned long long)cli.seed, s1 = s0 + (unsigned long long)ns - 1;
    drift_out_meta(&out, T_ARG, "setup", fm, s0, s1, K, V, R, archs_opt);
    drift_out_meta(&out, T_ARG, "table", "per (seed, format, logits, a, b): hidden states whose argmax differs between a and b (b = exact: the exact logits of the same rounded inputs, rounded once to fp64); logits fp32 = the tensor core's fp32 output, stored = rounded (RNE) to the input format; equal logits go to the lower token id; Wilson 95%% interval");
    drift_out_meta(&out, T_DIFF, "setup", fm, s0, s1, K, V, R, archs_opt);
    drift_out_meta(&out, T_DIFF, "table", "per (seed, format, a, b): every logit's distance between a and b in fp32 steps (b = exact: the exact logit rounded to fp32) and |a - b| / s, s = ||h||_2/sqrt(K) of the row");
    drift_out_meta(&out, T_HIST, "table", "per (format, pair): histogram of fp32-step distances over all seeds' logits (the plot's data)");
    drift_out_meta(&out, T_CLOSE, "setup", "seeds %llu..%llu; K = %zu; %zu planted pairs per (gap, seed): the exact top-2 gap planted at gap_s * s (drift_plant_gap), the top row at a random one of the two positions", s0, s1, K, NP);
    drift_out_meta(&out, T_CLOSE, "table", "per (seed, format, gap, a, b): pairs whose argmax differs between a and b (b = exact), fp32 logits; Wilson 95%% interval");
    drift_out_meta(&out, T_CLOSE, "planting", "%ld of %zu planted pairs missed their target gap by more than %g relative (counted under the target's gap)", unreached,
                   (size_t)ns * nf * ng * NP, DRIFT_PLANT_TOL);
    drift_out_meta(&out, T_CLOSEP, "table", "per (format, gap, a, b), adjacent generations and each against exact: _closecalls.csv summed over seeds %llu..%llu; Wilson 95%% interval", s0, s1);
    drift_out_meta(&out, T_HIST, "columns", "adjacent = 1: a and b are neighbours in --archs order, or b is exact (the pairs the fragment shows)");
    char name_a[MAXA + 1][16];
    for (int a = 0; a < na; a++) snprintf(name_a[a], sizeof name_a[a], "%s", drift_tc_arch_name(arch[a]));
    snprintf(name_a[na], sizeof name_a[na], "exact");
    double lo, hi;
    for (int si = 0; si < ns; si++)
        for (int f = 0; f < nf; f++) {
            for (int lg = 0; lg < 2; lg++)
                for (int a = 0; a < na; a++)
                    for (int b = a + 1; b <= na; b++) {
                        const count_t *c = &arg[(((size_t)si * nf + f) * 2 + lg) * npair + PIDX(a, b)];
                        if (!c->n) continue;
                        drift_wilson(&lo, &hi, c->k, c->n, DRIFT_Z95);
                        drift_row(&out, T_ARG, DRIFT_INT(cli.seed + (uint64_t)si), DRIFT_TXT(drift_format_name(cli.formats[f])),
                                  DRIFT_TXT(lg ? "stored" : "fp32"), DRIFT_TXT(name_a[a]), DRIFT_TXT(name_a[b]), DRIFT_INT(c->n),
                                  DRIFT_INT(c->k), DRIFT_NUM((double)c->k / (double)c->n), DRIFT_NUM(lo), DRIFT_NUM(hi));
                    }
            for (int a = 0; a < na; a++)
                for (int b = a + 1; b <= na; b++) {
                    if (!ok[f][a] || (b < na && !ok[f][b])) continue;
                    size_t n = R * V;
                    int64_t *u = malloc(n * sizeof *u);
                    double *d = malloc(n * sizeof *d);
                    if (!u || !d) drift_die("out of memory");
                    memcpy(u, ulps[f * npair + PIDX(a, b)] + (size_t)si * n, n * sizeof *u);
                    memcpy(d, sdiff[f * npair + PIDX(a, b)] + (size_t)si * n, n * sizeof *d);
                    qsort(u, n, sizeof *u, cmp_i64), qsort(d, n, sizeof *d, cmp_dbl);
                    size_t same = 0;
                    while (same < n && u[same] == 0) same++;
                    drift_row(&out, T_DIFF, DRIFT_INT(cli.seed + (uint64_t)si), DRIFT_TXT(drift_format_name(cli.formats[f])),
                              DRIFT_TXT(name_a[a]), DRIFT_TXT(name_a[b]), DRIFT_INT(n), DRIFT_NUM((double)same / (double)n),
                              DRIFT_INT(u[n / 2]), DRIFT_INT(u[n - 1 - n / 100]), DRIFT_INT(u[n - 1]), DRIFT_NUM(d[n - 1 - n / 100]),
                              DRIFT_NUM(d[n - 1]));
                    free(u), free(d);
                }
            for (int g = 0; g < ng; g++)
                for (int a = 0; a < na; a++)
                    for (int b = a + 1; b <= na; b++) {
                        const count_t *c = &close[(((size_t)si * nf + f) * MAXG + g) * npair + PIDX(a, b)];
                        if (!c->n) continue;
                        drift_wilson(&lo, &hi, c->k, c->n, DRIFT_Z95);
                        drift_row(&out, T_CLOSE, DRIFT_INT(cli.seed + (uint64_t)si), DRIFT_TXT(drift_format_name(cli.formats[f])),
                                  DRIFT_NUM(gaps.v[g]), DRIFT_TXT(name_a[a]), DRIFT_TXT(name_a[b]), DRIFT_INT(c->n), DRIFT_INT(c->k),
                                  DRIFT_NUM((double)c->k / (double)c->n), DRIFT_NUM(lo), DRIFT_NUM(hi));
                    }
        }
    for (int f = 0; f < nf; f++)
        for (int a = 0; a < na; a++)
            for (int b = a + 1; b <= na; b++) {
                if (!ok[f][a] || (b < na && !ok[f][b])) continue;
                char pr[40];
                snprintf(pr, sizeof pr, "%s-%s", name_a[a], name_a[b]);
                long tot = 0;
                for (int k = 0; k < NBIN; k++) tot += hist[((size_t)f * npair + PIDX(a, b)) * NBIN + k];
                for (int k = 0; k < NBIN; k++) {
                    long c = hist[((size_t)f * npair + PIDX(a, b)) * NBIN + k];
                    drift_row(&out, T_HIST, DRIFT_TXT(drift_format_name(cli.formats[f])), DRIFT_TXT(pr), DRIFT_INT(b == a + 1 || b == na), DRIFT_INT(k),
                              DRIFT_TXT(BIN_NAME[k]), DRIFT_INT(c), DRIFT_NUM((double)c / (double)tot));
                }
            }

    /* -- the fragment: every architecture against exact, then each generation against the next -- */
    drift_md_intro(&out, "One LM head (K = %zu, V = %zu; hidden states with outlier channels, weights N(0, 1/K), gen_logits.h) is computed with each architecture's tensor-core model (recipes FORMAT/tc:ARCH/fp32/fp32: %s) and held against the exact logits of the same rounded inputs, at seeds %llu..%llu (%zu hidden states each); then planted close calls (%zu pairs per gap and seed) whose exact top-2 gap is a given fraction of s = ||h||_2/sqrt(K).",
                   K, V, archs_opt, s0, s1, R, NP);
    int any_v100_bf16 = 0;
    for (int f = 0; f < nf; f++)
        for (int a = 0; a < na; a++) any_v100_bf16 |= !ok[f][a];
    long tot32_k = 0, tot32_n = 0, gen_k = 0, gen_n = 0, st_k = 0, st_n = 0, stg_k = 0, stg_n = 0;
    char cellS[MAXS * 24 + 8], cellR[96], pr[40];
    for (int f = 0; f < nf; f++)
        for (int lg = 0; lg < 2; lg++)
            for (int a = 0; a < na; a++)
                for (int b = a + 1; b <= na; b++) {
                    if (!(b == na || b == a + 1)) continue; /* vs exact, and adjacent generations */
                    if (!ok[f][a] || (b < na && !ok[f][b])) continue;
                    long K_all = 0, N_all = 0;
                    cellS[0] = 0;
                    for (int si = 0; si < ns; si++) {
                        const count_t *c = &arg[(((size_t)si * nf + f) * 2 + lg) * npair + PIDX(a, b)];
                        size_t l = strlen(cellS);
                        snprintf(cellS + l, sizeof cellS - l, "%s%ld/%ld", si ? ", " : "", c->k, c->n);
                        K_all += c->k, N_all += c->n;
                    }
                    if (!lg) {
                        if (b == na) tot32_k += K_all, tot32_n += N_all;
                        else gen_k += K_all, gen_n += N_all;
                    } else if (b == na) st_k += K_all, st_n += N_all;
                    else stg_k += K_all, stg_n += N_all;
                    rate_text(cellR, sizeof cellR, K_all, N_all);
                    snprintf(pr, sizeof pr, "%s vs %s", name_a[a], name_a[b]);
                    drift_row(&out, T_MDARG, DRIFT_TXT(drift_format_name(cli.formats[f])),
                              DRIFT_TXT(lg ? "stored in format" : "fp32"), DRIFT_TXT(pr), DRIFT_TXT(cellS), DRIFT_TXT(cellR));
                }
    drift_md_end(&out, T_MDARG);
    double frac_min = 1, frac_max = 0, max_s = 0;
    int64_t med_max = 0, p99_max = 0;
    char same_pairs[256] = "";
    unsigned char identical[4][MAXA] = {{0}}; /* [f][a]: a and a + 1 give bit-identical logits */
    for (int f = 0; f < nf; f++)
        for (int a = 0; a < na; a++)
            for (int b = a + 1; b <= na; b++) {
                if (!(b == na || b == a + 1) || !ok[f][a] || (b < na && !ok[f][b])) continue;
                int64_t *u = ulps[f * npair + PIDX(a, b)];
                double *d = sdiff[f * npair + PIDX(a, b)];
                qsort(u, nlog, sizeof *u, cmp_i64), qsort(d, nlog, sizeof *d, cmp_dbl);
                size_t same = 0;
                while (same < nlog && u[same] == 0) same++;
                char id[32];
                snprintf(id, sizeof id, "%.1f%%", 100.0 * (double)same / (double)nlog);
                snprintf(pr, sizeof pr, "%s vs %s", name_a[a], name_a[b]);
                drift_row(&out, T_MDDIFF, DRIFT_TXT(drift_format_name(cli.formats[f])), DRIFT_TXT(pr), DRIFT_TXT(id),
                          DRIFT_INT(u[nlog / 2]), DRIFT_INT(u[nlog - 1 - nlog / 100]), DRIFT_INT(u[nlog - 1]), DRIFT_NUM(d[nlog - 1]));
                if (b == na) continue;
                if (same == nlog) { /* bit-identical generations: named, not averaged in */
                    identical[f][a] = 1;
                    size_t l = strlen(same_pairs);
                    snprintf(same_pairs + l, sizeof same_pairs - l, "%s%s %s/%s", l ? ", " : "", drift_format_name(cli.formats[f]), name_a[a], name_a[b]);
                    continue;
                }
                double fr = (double)same / (double)nlog;
                frac_min = fmin(frac_min, fr), frac_max = fmax(frac_max, fr);
                if (u[nlog / 2] > med_max) med_max = u[nlog / 2];
                if (u[nlog - 1 - nlog / 100] > p99_max) p99_max = u[nlog - 1 - nlog / 100];
                max_s = fmax(max_s, d[nlog - 1]);
            }
    drift_md_end(&out, T_MDDIFF);
    long cl_k[MAXG] = {0}, cl_n[MAXG] = {0};
    for (int f = 0; f < nf; f++)
        for (int g = 0; g < ng; g++)
            for (int a = 0; a < na; a++)
                for (int b = a + 1; b <= na; b++) {
                    if (!(b == na || b == a + 1) || !ok[f][a] || (b < na && !ok[f][b])) continue;
                    long K_all = 0, N_all = 0;
                    cellS[0] = 0;
                    for (int si = 0; si < ns; si++) {
                        const count_t *c = &close[(((size_t)si * nf + f) * MAXG + g) * npair + PIDX(a, b)];
                        size_t l = strlen(cellS);
                        snprintf(cellS + l, sizeof cellS - l, "%s%ld/%ld", si ? ", " : "", c->k, c->n);
                        K_all += c->k, N_all += c->n;
                    }
                    if (b < na && !identical[f][a]) cl_k[g] += K_all, cl_n[g] += N_all;
                    rate_text(cellR, sizeof cellR, K_all, N_all);
                    snprintf(pr, sizeof pr, "%s vs %s", name_a[a], name_a[b]);
                    drift_row(&out, T_MDCLOSE, DRIFT_TXT(drift_format_name(cli.formats[f])), DRIFT_NUM(gaps.v[g]), DRIFT_TXT(pr),
                              DRIFT_TXT(cellS), DRIFT_TXT(cellR));
                }
    drift_md_end(&out, T_MDCLOSE);
    for (int f = 0; f < nf; f++)
        for (int a = 0; a < na; a++)
            for (int b = a + 1; b <= na; b++) {
                if (!(b == na || b == a + 1) || !ok[f][a] || (b < na && !ok[f][b])) continue;
                for (int g = 0; g < ng; g++) {
                    long K_all = 0, N_all = 0;
                    for (int si = 0; si < ns; si++) {
                        const count_t *c = &close[(((size_t)si * nf + f) * MAXG + g) * npair + PIDX(a, b)];
                        K_all += c->k, N_all += c->n;
                    }
                    drift_wilson(&lo, &hi, K_all, N_all, DRIFT_Z95);
                    drift_row(&out, T_CLOSEP, DRIFT_TXT(drift_format_name(cli.formats[f])), DRIFT_NUM(gaps.v[g]), DRIFT_TXT(name_a[a]),
                              DRIFT_TXT(name_a[b]), DRIFT_INT(1), DRIFT_INT(N_all), DRIFT_INT(K_all),
                              DRIFT_NUM((double)K_all / (double)N_all), DRIFT_NUM(lo), DRIFT_NUM(hi));
                }
            }

    FILE *fp = out.md;
    fprintf(fp, "**Takeaway.**\n\n");
    if (gen_n) {
        rate_text(cellR, sizeof cellR, gen_k, gen_n);
        fprintf(fp, "- Realistic head, fp32 logits: adjacent generations pick a different token in %s of (hidden state, pair) cases over seeds %llu..%llu; against the exact argmax: ", cellR, s0, s1);
        rate_text(cellR, sizeof cellR, tot32_k, tot32_n);
        fprintf(fp, "%s. %s\n", cellR,
                gen_k == 0 ? "So on these heads \"the same model gives different answers on different GPUs\" is not observed at the argmax: the top-2 gaps are far larger than the generations' differences." : "So the same model does give different answers on different GPUs, at the rate above.");
    }
    if (st_n) {
        rate_text(cellR, sizeof cellR, st_k, st_n);
        fprintf(fp, "- With the logits stored in the input format (what a bf16/fp16 model returns), the argmax differs from the exact one in %s (ties in the coarse format go to the lower token id, and the exact argmax need not be the lower one); between adjacent generations: ", cellR);
        rate_text(cellR, sizeof cellR, stg_k, stg_n);
        fprintf(fp, "%s.\n", cellR);
    }
    if (frac_min <= frac_max)
        fprintf(fp, "- The logits themselves differ: between adjacent generations that compute differently only %.1f%% to %.1f%% of the fp32 logits are bit-identical; the median distance is at most %lld fp32 ulps and the 99th percentile at most %lld (the largest counts come from logits near zero, where an ulp is tiny); in units of the logit scale the largest difference is %.3g s.\n",
                100 * frac_min, 100 * frac_max, (long long)med_max, (long long)p99_max, max_s);
    if (same_pairs[0])
        fprintf(fp, "- Bit-identical logits: %s. The models share one row of the architecture table there (H100 and B200: blocks of 16, 2 extra bits, RZ; likewise Ada computes fp16/bf16 as A100), so these generations cannot be told apart by this head.\n", same_pairs);
    for (int g = 0; g < ng; g++)
        if (cl_n[g]) {
            rate_text(cellR, sizeof cellR, cl_k[g], cl_n[g]);
            fprintf(fp, "- Close calls at an exact gap of %g s: adjacent generations that compute differently disagree in %s (all formats and seeds).\n", gaps.v[g], cellR);
        }
    if (unreached)
        fprintf(fp, "- %ld of %zu planted pairs could not reach their target gap within %g relative in their format; they are counted under the target.\n",
                unreached, (size_t)ns * nf * ng * NP, DRIFT_PLANT_TOL);
    if (any_v100_bf16) fprintf(fp, "- V100 (Volta) has no bf16 tensor-core path: it is absent from the bf16 rows.\n");
    fprintf(fp, "- TODO (needs the transformer, branch `llm`, not merged yet): the same greedy generation on each architecture, and the first token where the texts part. No number is given here until it is measured.\n");
    drift_out_commit(&out);
    for (int t = 0; t < nf * npair; t++) free(ulps[t]), free(sdiff[t]);
    free(ulps), free(sdiff), free(arg), free(close), free(hist), free(Wd), free(Bt), free(H), free(L), free(scale);
    return 0;
}
