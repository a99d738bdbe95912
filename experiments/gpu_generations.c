/* gpu_generations.c — does the same model give different answers on different GPUs?
 *
 * Question: one LM head, and one whole transformer, computed with the tensor-core model of
 * each GPU generation (--archs, default tc:v100, tc:a100, tc:h100, tc:b200 and AMD's
 * tc:mi300x; tc:ada computes fp16/bf16 as tc:a100; recipes FORMAT/tc:ARCH/fp32/fp32,
 * arch_set.h). How often does the argmax, and the greedy text, differ between generations?
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
 *       different tokens;
 *   (3) greedy text: stories260K (--checkpoint) with every matmul (QKV, attention output, MLP,
 *       LM head) under the architecture's recipe decodes --prompts prompts (BOS and a random
 *       first token, by seed) for --tokens greedy tokens (greedy_batch.h); per pair of
 *       architectures, the completions that differ, the first differing step, and there the
 *       exact (fp64 reference, teacher-forced on the common context) top-1/top-2 gap and the
 *       two generations' largest logit difference (parting.h).
 * Rates carry Wilson 95% intervals.
 *
 * How to run:
 *   ./lab run gpu_generations
 *   build/bin/gpu_generations --profile quick --archs a100,h100
 *   ./lab plot gpu_generations    plots/gpu_generations_{ulps,closecalls,greedy}.png
 *
 * What to look for: most logits differ between generations that compute differently, by a
 * few to a few tens of fp32 ulps, and H100 and B200 agree bit for bit; yet on realistic heads
 * the argmax does not move. At planted gaps of 1e-7..1e-6 s the generations disagree often.
 * Greedy texts part only where the exact top-1/top-2 gap is as small as the generations'
 * logit differences there. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_greedy.h"
#include "arch_head.h"
#include "arch_set.h"
#include "checkpoint.h"
#include "cli.h"
#include "close_calls.h"
#include "dispatch.h"
#include "drift.h"
#include "gen_logits.h"
#include "metrics.h"
#include "output.h"
#include "pair_stats.h"
#include "philox.h"
#include "stats.h"

#define EXP "gpu_generations"
#define MAXA 8
#define MAXG 8
#define MAXS 8
#define NBIN DRIFT_ULP_NBIN

enum { T_ARG, T_DIFF, T_HIST, T_CLOSE, T_CLOSEP, T_GREEDY, T_PART, T_MDARG, T_MDDIFF, T_MDCLOSE, T_MDGREEDY };
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
static const drift_col_t GREEDY[] = {
    DRIFT_C_INT("seed"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"), DRIFT_C_INT("prompts"), DRIFT_C_INT("tokens"),
    DRIFT_C_INT("differ"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo95", "%.6g"), DRIFT_C_NUM("hi95", "%.6g")};
static const drift_col_t PART[] = {
    DRIFT_C_INT("seed"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a"), DRIFT_C_TEXT("b"), DRIFT_C_INT("prompt"), DRIFT_C_INT("first_token"),
    DRIFT_C_INT("step"), DRIFT_C_INT("token_a"), DRIFT_C_INT("token_b"), DRIFT_C_INT("exact_top1"), DRIFT_C_NUM("exact_gap_ab", "%.6e"),
    DRIFT_C_NUM("exact_gap12", "%.6e"), DRIFT_C_NUM("spread", "%.6e"), DRIFT_C_NUM("deviation", "%.6e")};
static const drift_col_t MDARG[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("logits"), DRIFT_C_TEXT("a vs b"), DRIFT_C_TEXT("per seed (differ/rows)"),
                                    DRIFT_C_TEXT("all seeds: rate [95% interval]")};
static const drift_col_t MDDIFF[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a vs b"), DRIFT_C_TEXT("identical"),
                                     DRIFT_C_INT("median ulps"), DRIFT_C_INT("p99 ulps"), DRIFT_C_INT("max ulps"), DRIFT_C_NUM("max / s", "%.3g")};
static const drift_col_t MDCLOSE[] = {DRIFT_C_TEXT("format"), DRIFT_C_NUM("gap / s", "%g"), DRIFT_C_TEXT("a vs b"),
                                      DRIFT_C_TEXT("per seed (differ/pairs)"), DRIFT_C_TEXT("all seeds: rate [95% interval]")};
static const drift_col_t MDGREEDY[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("a vs b"), DRIFT_C_TEXT("per seed (differ/prompts)"),
                                       DRIFT_C_TEXT("all seeds: rate [95% interval]"), DRIFT_C_TEXT("first differing step (min / median / max)"),
                                       DRIFT_C_TEXT("exact top-1/top-2 gap there (median / max)"), DRIFT_C_TEXT("a-b spread / deviation from exact there (medians)")};
static const drift_table_spec_t TABLES[] = {
    {"_argmax.csv", NULL, 0, ARG, 10},
    {"_diff.csv", NULL, 0, DIFF, 11},
    {"_hist.csv", NULL, 0, HIST, 7},
    {"_closecalls.csv", NULL, 0, CLOSE, 10},
    {"_closecalls_pooled.csv", NULL, 0, CLOSEP, 10},
    {"_greedy.csv", NULL, 0, GREEDY, 10},
    {"_greedy_partings.csv", NULL, 0, PART, 14},
    {NULL, "Realistic head: rows whose argmax differs", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDARG, 5},
    {NULL, "Logit differences between generations (fp32 logits, all seeds)", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDDIFF, 7},
    {NULL, "Close calls: planted top-2 gaps, pairs whose argmax differs", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDCLOSE, 5},
    {NULL, "Greedy text (stories260K): completions that differ between generations", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDGREEDY, 7}};

/* a pair of architectures a < b (b = the count: exact) under format f; p its pair index */
typedef struct {
    int f, a, b, p, shown;
} fab_t;

/* one parting of two generations' greedy completions of one prompt */
typedef struct {
    int si, f, r, a, b, tok0; /* tok0: the prompt's random first token */
    drift_parting_t p;
} part_t;

static double median_of(double *x, size_t n)
{
    double m = NAN;
    drift_median(&m, x, n);
    return m;
}

int main(int argc, char **argv)
{
    long K_ = 0, V_ = 0, R_ = 0, P_ = 0, nseeds = 3, NR_ = 0, NT_ = 0;
    const char *archs_opt = "v100,a100,h100,b200,mi300x", *ckpt = NULL;
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
        {"prompts", DRIFT_OPT_INT, &NR_, "N", "greedy text: prompts per seed (BOS and a random first token)", 1, 4096, {"2", "8", "64"}},
        {"tokens", DRIFT_OPT_INT, &NT_, "N", "greedy text: tokens each prompt generates", 1, 4096, {"8", "64", "128"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE", "greedy text: llama2.c checkpoint (default models/stories260K.bin)", 0, 0, {0}},
    };
    const drift_cli_spec_t spec = {
        EXP, "Does the same model give different answers on different GPU generations (tensor-core models of V100 to B200 and MI300X)?",
        "bf16,fp16", "seq", opts, (int)(sizeof opts / sizeof opts[0]),
        "sweeps GPU architectures (--archs), each a tc:ARCH order", "CPU emulation of the tensor cores only",
        "the same LM head computed with each GPU generation's tensor-core arithmetic gives different fp32 logits in a large "
        "share of outputs (a few to a few tens of fp32 ulps, up to about 1e-5 of the logit scale s), because the block size, the extra alignment "
        "bits and the rounding differ. On realistic heads the argmax still agrees, since top-2 gaps are far larger than "
        "those differences; with planted close calls of 1e-7 to 1e-6 s the generations pick different tokens often. "
        "Greedy texts of stories260K (every matmul on the generation's tensor-core model) part between generations that "
        "compute differently in a minority of 64-token completions (default profile: 0 to 3 of 8 per seed and pair, too few "
        "to rank the pairs; H100 and B200 never: one row of the table), more often with bf16 inputs than fp16. Where texts "
        "part, the exact top-1/top-2 gap is 0.05 to 0.12 logits at seeds 1-3 (at most 0.24 at seeds 4-6), against a typical "
        "gap above one, and within the format's own deviation from the exact logits."};
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
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_arch_set_parse(arch, &na, MAXA, archs_opt, err, sizeof err)) drift_die("--archs: %s", err);
    const size_t K = (size_t)K_, V = (size_t)V_, R = (size_t)R_, NP = (size_t)P_;
    const int nf = cli.nformats, ns = (int)nseeds, ng = gaps.n, NR = (int)NR_, NT = (int)NT_;
    if (K <= DRIFT_PLANT_FINE + 1) drift_die("--K: at least %d", DRIFT_PLANT_FINE + 2);
    if (V * K > ((size_t)1 << 28)) drift_die("--V x --K: at most 2^28 weights (%zu x %zu)", V, K);
    /* every logit of every architecture and pair is held for the medians: bound what that takes */
    const int npair = drift_pair_count(na); /* (a, b) with b > a, b == na: exact */
    if ((size_t)(na + 1) * R * V > ((size_t)1 << 27) || (size_t)ns * R * V * (size_t)nf * (size_t)npair > ((size_t)1 << 27))
        drift_die("--rows x --V: too many logits to hold (%zu x %zu per seed, %d seeds, %d architectures; at most 2^27 in all)", R, V, ns, na);
    if (!ckpt) ckpt = drift_default_checkpoint();
    drift_checkpoint_t ck;
    if (drift_checkpoint_read(&ck, ckpt, err, sizeof err)) drift_die("--checkpoint: %s", err);
    const int VT = ck.cfg.vocab_size;
    if (1 + NT > ck.cfg.seq_len) drift_die("--tokens: the prompt (2) and %d tokens must fit the context of %d", NT, ck.cfg.seq_len);
    if (VT < 4) drift_die("--checkpoint: a vocabulary of %d has no token to prompt with", VT);
    /* kept logits of the greedy texts, the models' KV caches (a slot per prompt, the whole context), the head's logits */
    drift_require_memory(&cli, 8.0 * na * NR * ((double)(NT + 1) * VT + 2.0 * nf * ck.cfg.n_layers * ck.cfg.seq_len * ck.cfg.dim) + 8.0 * (na + 1) * (double)R * V * (2 + nf * ns),
                         "--prompts, --tokens, --rows, --V");

    /* recipes and greedy models per (format, arch); ok = the architecture has a path for the format */
    drift_recipe_t rec[4][MAXA];
    int ok[4][MAXA], gok[MAXA];
    drift_arch_greedy_t *ag[4];
    for (int f = 0; f < nf; f++) {
        if (drift_arch_greedy_create(&ag[f], &ck, cli.formats[f], arch, na, NR, gok, err, sizeof err))
            drift_die("%s greedy models: %s", drift_format_name(cli.formats[f]), err);
        for (int a = 0; a < na; a++)
            if ((ok[f][a] = drift_arch_head_recipe(&rec[f][a], cli.formats[f], arch[a]) == 0) != gok[a])
                drift_die("%s on %s: the LM head and the transformer disagree on the tensor-core path", drift_format_name(cli.formats[f]), drift_tc_arch_name(arch[a]));
    }

    /* -- measure -- */
#define PIDX(a, b) drift_pair_index((a), (b), na)
#define OKP(f, a, b) (ok[f][a] && ((b) == na || ok[f][b]))
    /* the (format, a, b) with a path for both (b == na: exact), in that order; shown in the fragment's
     * head tables: each against exact and adjacent generations */
    fab_t fab[4 * (MAXA + 1) * MAXA / 2];
    int nfab = 0;
    for (int f = 0; f < nf; f++)
        for (int a = 0; a < na; a++)
            for (int b = a + 1; b <= na; b++)
                if (OKP(f, a, b)) fab[nfab] = (fab_t){f, a, b, PIDX(a, b), b == na || b == a + 1}, nfab++;
#define EACH(q, F) for (const fab_t *q = fab; q < fab + nfab; q++) if (q->f == (F))
    drift_count_t *arg = calloc((size_t)ns * nf * 2 * npair, sizeof *arg);        /* [seed][f][logits][pair] */
    drift_count_t *close = calloc((size_t)ns * nf * MAXG * npair, sizeof *close); /* [seed][f][gap][pair] */
    drift_count_t *gcnt = calloc((size_t)ns * nf * npair, sizeof *gcnt);          /* [seed][f][pair], greedy */
    long *hist = calloc((size_t)nf * npair * NBIN, sizeof *hist);                 /* [f][pair][bin], fp32 logits, all seeds */
    int64_t **ulps = calloc((size_t)nf * npair, sizeof *ulps);                     /* [f][pair]: all seeds' ulp distances */
    double **sdiff = calloc((size_t)nf * npair, sizeof *sdiff);
    size_t nlog = (size_t)ns * R * V, nparts = 0;
    double *Wd = malloc(V * K * sizeof *Wd);
    part_t *parts = malloc((size_t)ns * nf * npair * NR * sizeof *parts);
    drift_parting_t *pbuf = malloc((size_t)NR * npair * sizeof *pbuf); /* [prompt][pair] */
    double *topgap = malloc((size_t)ns * nf * NR * NT * sizeof *topgap); /* computed top-1/top-2 gaps, all steps */
    int *prompts = malloc((size_t)NR * 2 * sizeof *prompts);
    if (!arg || !close || !gcnt || !hist || !ulps || !sdiff || !Wd || !parts || !pbuf ||
        !topgap || !prompts)
        drift_die("out of memory");
    for (int t = 0; t < nf * npair; t++) {
        ulps[t] = malloc(nlog * sizeof **ulps), sdiff[t] = malloc(nlog * sizeof **sdiff);
        if (!ulps[t] || !sdiff[t]) drift_die("out of memory");
    }
    size_t steps = (size_t)ns * nf * 3, done = 0, ntopgap = 0, topgap_at[MAXS + 1];
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
        topgap_at[si] = ntopgap;
        for (int r = 0; r < NR; r++) { /* the greedy prompts: BOS and a random first token (not 0-2: unk, bos, eos) */
            drift_stream_init(&s, seed, drift_fnv1a32(EXP ".prompt"), (uint32_t)r, 0);
            prompts[2 * r] = 1, prompts[2 * r + 1] = 3 + (int)drift_stream_below(&s, (uint32_t)VT - 3);
        }
        for (int f = 0; f < nf; f++) {
            drift_format_t in = cli.formats[f];
            drift_progress(&cli, done++, steps);
            /* (1) realistic head: every logit of every architecture and the exact ones (arch_head.h) */
            drift_count_t *ca = &arg[((size_t)si * nf + f) * 2 * npair];
            int rc = drift_arch_head_compare(ca, ulps + f * npair, sdiff + f * npair, (size_t)si * R * V, hist + (size_t)f * npair * NBIN,
                                             H0, Wd, R, V, K, in, rec[f], ok[f], na);
            if (rc) drift_die("%s logits: %s", drift_format_name(in), drift_strerror(rc));
            drift_progress(&cli, done++, steps);
            /* (2) close calls: planted pairs (close_calls.h) */
            for (int g = 0; g < ng; g++)
                if (drift_close_call_counts(&close[(((size_t)si * nf + f) * MAXG + g) * npair], &unreached, &model, V, K, gaps.v[g], in, rec[f],
                                            ok[f], na, seed, drift_fnv1a32(EXP ".close"), (uint32_t)(g * 4 + f), NP))
                    drift_die("planted close calls failed (out of memory or an unreachable gap)");
            drift_progress(&cli, done++, steps);
            /* (3) greedy text: every architecture decodes the seed's prompts; where do pairs part? */
            if ((rc = drift_arch_greedy_run(ag[f], pbuf, topgap + ntopgap, prompts, 2, NT)))
                drift_die("%s greedy decoding: %s", drift_format_name(in), drift_strerror(rc));
            for (int a = 0, any = 0; a < na && !any; a++) /* the gaps were written when some architecture has a path */
                if ((any = ok[f][a])) ntopgap += (size_t)NR * NT;
            for (int r = 0; r < NR; r++)
                EACH(q, f) if (q->b < na) {
                    const drift_parting_t *p = &pbuf[(size_t)r * npair + q->p];
                    drift_count_t *c = &gcnt[((size_t)si * nf + f) * npair + q->p];
                    c->n++, c->k += p->step >= 0;
                    if (p->step >= 0) parts[nparts++] = (part_t){si, f, r, q->a, q->b, prompts[2 * r + 1], *p};
                }
        }
        free(H0);
    }
    topgap_at[ns] = ntopgap;
    drift_progress(&cli, steps, steps);

    /* -- write -- */
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 11, 1);
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
    const char *gm = "seeds %llu..%llu; %s (dim %d, layers %d, vocab %d); %d prompts per seed (BOS and a random first token), %d greedy tokens each (no stop at BOS); every matmul (qkv, attn-out, mlp-up, mlp-down, lmhead) FORMAT/tc:ARCH/fp32/fp32, the rest fp32 (model.h), batch-invariant policy; architectures %s";
    drift_out_meta(&out, T_GREEDY, "setup", gm, s0, s1, ckpt, ck.cfg.dim, ck.cfg.n_layers, VT, NR, NT, archs_opt);
    drift_out_meta(&out, T_GREEDY, "table", "per (seed, format, a, b): prompts whose greedy completions differ between a and b; Wilson 95%% interval");
    drift_out_meta(&out, T_PART, "setup", gm, s0, s1, ckpt, ck.cfg.dim, ck.cfg.n_layers, VT, NR, NT, archs_opt);
    drift_out_meta(&out, T_PART, "table", "one row per (seed, format, a, b, prompt) whose completions differ: step = first differing generated token (0-based), the two tokens; exact_* = the exact reference (fp64, correctly rounded dot products) teacher-forced on the common context: exact_gap_ab = E[token_a] - E[token_b], exact_gap12 = its top-1 - top-2 gap; spread = max over the vocabulary of |logit_a - logit_b| at that step; deviation = max over the vocabulary of |logit_a - E| and |logit_b - E| there, the numerics' error (|exact_gap_ab| <= 2 deviation whenever a and b part: parting.h)");
    char name_a[MAXA + 1][16];
    for (int a = 0; a < na; a++) snprintf(name_a[a], sizeof name_a[a], "%s", drift_tc_arch_name(arch[a]));
    snprintf(name_a[na], sizeof name_a[na], "exact");
    double lo, hi;
#define FN(f) DRIFT_TXT(drift_format_name(cli.formats[f]))
#define RATE_CELLS(c) DRIFT_INT((c)->n), DRIFT_INT((c)->k), DRIFT_NUM((double)(c)->k / (double)(c)->n), DRIFT_NUM(lo), DRIFT_NUM(hi)
#define WILSON(c) drift_wilson(&lo, &hi, (c)->k, (c)->n, DRIFT_Z95)
    for (int si = 0; si < ns; si++)
        for (int f = 0; f < nf; f++) {
            drift_cell_t sd = DRIFT_INT(cli.seed + (uint64_t)si);
            for (int lg = 0; lg < 2; lg++)
                EACH(q, f) {
                    const drift_count_t *c = &arg[(((size_t)si * nf + f) * 2 + lg) * npair + q->p];
                    if (!WILSON(c)) drift_row(&out, T_ARG, sd, FN(f), DRIFT_TXT(lg ? "stored" : "fp32"), DRIFT_TXT(name_a[q->a]), DRIFT_TXT(name_a[q->b]), RATE_CELLS(c));
                }
            EACH(q, f) {
                drift_distance_summary_t ds;
                const size_t n = R * V;
                if (drift_distance_summary_of(&ds, ulps[f * npair + q->p] + (size_t)si * n, sdiff[f * npair + q->p] + (size_t)si * n, n)) drift_die("out of memory");
                drift_row(&out, T_DIFF, sd, FN(f), DRIFT_TXT(name_a[q->a]), DRIFT_TXT(name_a[q->b]), DRIFT_INT(n), DRIFT_NUM((double)ds.same / (double)n),
                          DRIFT_INT(ds.median), DRIFT_INT(ds.p99), DRIFT_INT(ds.max), DRIFT_NUM(ds.d_p99), DRIFT_NUM(ds.d_max));
            }
            for (int g = 0; g < ng; g++)
                EACH(q, f) {
                    const drift_count_t *c = &close[(((size_t)si * nf + f) * MAXG + g) * npair + q->p];
                    if (!WILSON(c)) drift_row(&out, T_CLOSE, sd, FN(f), DRIFT_NUM(gaps.v[g]), DRIFT_TXT(name_a[q->a]), DRIFT_TXT(name_a[q->b]), RATE_CELLS(c));
                }
            EACH(q, f) {
                const drift_count_t *c = &gcnt[((size_t)si * nf + f) * npair + q->p];
                if (q->b < na && !WILSON(c))
                    drift_row(&out, T_GREEDY, sd, FN(f), DRIFT_TXT(name_a[q->a]), DRIFT_TXT(name_a[q->b]), DRIFT_INT(NR), DRIFT_INT(NT), DRIFT_INT(c->k),
                              DRIFT_NUM((double)c->k / (double)c->n), DRIFT_NUM(lo), DRIFT_NUM(hi));
            }
        }
    for (size_t i = 0; i < nparts; i++) {
        const part_t *q = &parts[i];
        drift_row(&out, T_PART, DRIFT_INT(cli.seed + (uint64_t)q->si), FN(q->f), DRIFT_TXT(name_a[q->a]), DRIFT_TXT(name_a[q->b]), DRIFT_INT(q->r),
                  DRIFT_INT(q->tok0), DRIFT_INT(q->p.step), DRIFT_INT(q->p.tok_a), DRIFT_INT(q->p.tok_b), DRIFT_INT(q->p.exact_top1),
                  DRIFT_NUM(q->p.gap_ab), DRIFT_NUM(q->p.gap12), DRIFT_NUM(q->p.spread), DRIFT_NUM(q->p.dev));
    }
    char cellS[MAXS * 24 + 8], cellR[96], pr[320], c3[64], c4[64], c5[64];
    for (int f = 0; f < nf; f++)
        EACH(q, f) {
            const long *h = hist + ((size_t)f * npair + q->p) * NBIN;
            long tot = 0;
            for (int k = 0; k < NBIN; k++) tot += h[k];
            snprintf(pr, sizeof pr, "%s-%s", name_a[q->a], name_a[q->b]);
            for (int k = 0; k < NBIN; k++)
                drift_row(&out, T_HIST, FN(f), DRIFT_TXT(pr), DRIFT_INT(q->shown), DRIFT_INT(k), DRIFT_TXT(drift_ulp_bin_name(k)), DRIFT_INT(h[k]),
                          DRIFT_NUM((double)h[k] / (double)tot));
        }

    /* -- the fragment: every architecture against exact, then each generation against the next -- */
    drift_md_intro(&out, "One LM head (K = %zu, V = %zu; hidden states with outlier channels, weights N(0, 1/K), gen_logits.h) is computed with each architecture's tensor-core model (recipes FORMAT/tc:ARCH/fp32/fp32: %s) and held against the exact logits of the same rounded inputs, at seeds %llu..%llu (%zu hidden states each); then planted close calls (%zu pairs per gap and seed) whose exact top-2 gap is a given fraction of s = ||h||_2/sqrt(K).",
                   K, V, archs_opt, s0, s1, R, NP);
    int any_v100_bf16 = 0;
    for (int f = 0; f < nf; f++)
        for (int a = 0; a < na; a++) any_v100_bf16 |= !ok[f][a];
    drift_count_t t32 = {0, 0}, gen32 = {0, 0}, tst = {0, 0}, gst = {0, 0}, all;
#define PAIR_TEXT(q) (snprintf(pr, sizeof pr, "%s vs %s", name_a[(q)->a], name_a[(q)->b]), DRIFT_TXT(pr))
    for (int f = 0; f < nf; f++)
        for (int lg = 0; lg < 2; lg++)
            EACH(q, f) if (q->shown) {
                drift_counts_text(cellS, sizeof cellS, &arg[((size_t)f * 2 + lg) * npair + q->p], ns, (size_t)nf * 2 * npair, &all);
                drift_count_t *sum = lg ? (q->b == na ? &tst : &gst) : (q->b == na ? &t32 : &gen32);
                sum->k += all.k, sum->n += all.n;
                drift_rate_text(cellR, sizeof cellR, all.k, all.n);
                drift_row(&out, T_MDARG, FN(f), DRIFT_TXT(lg ? "stored in format" : "fp32"), PAIR_TEXT(q), DRIFT_TXT(cellS), DRIFT_TXT(cellR));
            }
    drift_md_end(&out, T_MDARG);
    double frac_min = 1, frac_max = 0, max_s = 0;
    int64_t med_max = 0, p99_max = 0;
    char same_pairs[256] = "";
    unsigned char identical[4][MAXA] = {{0}}; /* [f][a]: a and a + 1 give bit-identical logits */
    for (int f = 0; f < nf; f++)
        EACH(q, f) if (q->shown) {
            drift_distance_summary_t ds;
            drift_distance_summary(&ds, ulps[f * npair + q->p], sdiff[f * npair + q->p], nlog);
            snprintf(c3, sizeof c3, "%.1f%%", 100.0 * (double)ds.same / (double)nlog);
            drift_row(&out, T_MDDIFF, FN(f), PAIR_TEXT(q), DRIFT_TXT(c3), DRIFT_INT(ds.median), DRIFT_INT(ds.p99), DRIFT_INT(ds.max), DRIFT_NUM(ds.d_max));
            if (q->b == na) continue;
            if (ds.same == nlog) { /* bit-identical generations: named, not averaged in */
                identical[f][q->a] = 1;
                size_t l = strlen(same_pairs);
                snprintf(same_pairs + l, sizeof same_pairs - l, "%s%s %s/%s", l ? ", " : "", drift_format_name(cli.formats[f]), name_a[q->a], name_a[q->b]);
                continue;
            }
            frac_min = fmin(frac_min, (double)ds.same / (double)nlog), frac_max = fmax(frac_max, (double)ds.same / (double)nlog);
            med_max = ds.median > med_max ? ds.median : med_max, p99_max = ds.p99 > p99_max ? ds.p99 : p99_max;
            max_s = fmax(max_s, ds.d_max);
        }
    drift_md_end(&out, T_MDDIFF);
    long cl_k[MAXG] = {0}, cl_n[MAXG] = {0};
    for (int f = 0; f < nf; f++)
        for (int g = 0; g < ng; g++)
            EACH(q, f) if (q->shown) {
                drift_counts_text(cellS, sizeof cellS, &close[((size_t)f * MAXG + g) * npair + q->p], ns, (size_t)nf * MAXG * npair, &all);
                if (q->b < na && !identical[f][q->a]) cl_k[g] += all.k, cl_n[g] += all.n;
                drift_rate_text(cellR, sizeof cellR, all.k, all.n);
                drift_row(&out, T_MDCLOSE, FN(f), DRIFT_NUM(gaps.v[g]), PAIR_TEXT(q), DRIFT_TXT(cellS), DRIFT_TXT(cellR));
            }
    drift_md_end(&out, T_MDCLOSE);
    for (int f = 0; f < nf; f++)
        EACH(q, f) if (q->shown) for (int g = 0; g < ng; g++) {
            drift_counts_text(cellS, sizeof cellS, &close[((size_t)f * MAXG + g) * npair + q->p], ns, (size_t)nf * MAXG * npair, &all);
            WILSON(&all);
            drift_row(&out, T_CLOSEP, FN(f), DRIFT_NUM(gaps.v[g]), DRIFT_TXT(name_a[q->a]), DRIFT_TXT(name_a[q->b]), DRIFT_INT(1), RATE_CELLS(&all));
        }
    /* the greedy part: per pair, over all seeds; partings are in parts[] (seed, format, pair order) */
    fprintf(out.md, "Greedy text: %s (%d layers, dim %d, vocab %d) with every matmul under the architecture's recipe FORMAT/tc:ARCH/fp32/fp32 (the rest fp32, model.h) decodes %d prompts per seed (BOS and a random first token) for %d greedy tokens, at seeds %llu..%llu. Where two generations' completions part, the exact reference (fp64, correctly rounded dot products) teacher-forced on their common context gives the top-1/top-2 gap there; the spread is the largest difference between the two generations' logits at that step, the deviation the largest difference between either generation's logits and the exact ones there.\n\n",
            ckpt, ck.cfg.n_layers, ck.cfg.dim, VT, NR, NT, s0, s1);
    const drift_parting_t **sel = malloc((nparts + 1) * sizeof *sel);
    if (!sel) drift_die("out of memory");
    char every[512] = "", never[512] = "", mixed[512] = "";
    drift_parting_summary_t ps;
    for (int f = 0; f < nf; f++)
        EACH(q, f) if (q->b < na) {
            drift_counts_text(cellS, sizeof cellS, &gcnt[(size_t)f * npair + q->p], ns, (size_t)nf * npair, &all);
            drift_rate_text(cellR, sizeof cellR, all.k, all.n);
            int seeds_with = 0; /* a pair is named only by what holds at every seed */
            for (int si = 0; si < ns; si++) seeds_with += gcnt[((size_t)si * nf + f) * npair + q->p].k > 0;
            char *list = seeds_with == ns ? every : seeds_with == 0 ? never : mixed;
            size_t l = strlen(list), n = 0;
            snprintf(list + l, 512 - l, "%s%s %s/%s", l ? ", " : "", drift_format_name(cli.formats[f]), name_a[q->a], name_a[q->b]);
            for (size_t i = 0; i < nparts; i++)
                if (parts[i].f == f && parts[i].a == q->a && parts[i].b == q->b) sel[n++] = &parts[i].p;
            drift_parting_summary(&ps, sel, n);
            snprintf(c3, sizeof c3, n ? "%d / %.1f / %d" : "-", ps.step_min, ps.step_median, ps.step_max);
            snprintf(c4, sizeof c4, n ? "%.2g / %.2g" : "-", ps.gap12_median, ps.gap12_max);
            snprintf(c5, sizeof c5, n ? "%.2g / %.2g" : "-", ps.spread_median, ps.dev_median);
            drift_row(&out, T_MDGREEDY, FN(f), PAIR_TEXT(q), DRIFT_TXT(cellS), DRIFT_TXT(cellR), DRIFT_TXT(c3), DRIFT_TXT(c4), DRIFT_TXT(c5));
        }
    drift_md_end(&out, T_MDGREEDY);

    FILE *fp = out.md;
    fprintf(fp, "**Takeaway.**\n\n");
    if (gen32.n) {
        drift_rate_text(cellR, sizeof cellR, gen32.k, gen32.n);
        fprintf(fp, "- Realistic head, fp32 logits: adjacent generations pick a different token in %s of (hidden state, pair) cases over seeds %llu..%llu; against the exact argmax: ", cellR, s0, s1);
        drift_rate_text(cellR, sizeof cellR, t32.k, t32.n);
        fprintf(fp, "%s. %s\n", cellR,
                gen32.k == 0 ? "So on these heads \"the same model gives different answers on different GPUs\" is not observed at the argmax: the top-2 gaps are far larger than the generations' differences." : "So the same model does give different answers on different GPUs, at the rate above.");
    }
    if (tst.n) {
        drift_rate_text(cellR, sizeof cellR, tst.k, tst.n);
        fprintf(fp, "- With the logits stored in the input format (what a bf16/fp16 model returns), the argmax differs from the exact one in %s (ties in the coarse format go to the lower token id, and the exact argmax need not be the lower one); between adjacent generations: ", cellR);
        drift_rate_text(cellR, sizeof cellR, gst.k, gst.n);
        fprintf(fp, "%s.\n", cellR);
    }
    if (frac_min <= frac_max)
        fprintf(fp, "- The logits themselves differ: between adjacent generations that compute differently only %.1f%% to %.1f%% of the fp32 logits are bit-identical; the median distance is at most %lld fp32 ulps and the 99th percentile at most %lld (the largest counts come from logits near zero, where an ulp is tiny); in units of the logit scale the largest difference is %.3g s.\n",
                100 * frac_min, 100 * frac_max, (long long)med_max, (long long)p99_max, max_s);
    if (same_pairs[0])
        fprintf(fp, "- Bit-identical logits: %s. The models share one row of the architecture table there (H100 and B200: blocks of 16, 2 extra bits, RZ; likewise Ada computes fp16/bf16 as A100), so these generations cannot be told apart by this head.\n", same_pairs);
    for (int g = 0; g < ng; g++)
        if (cl_n[g]) {
            drift_rate_text(cellR, sizeof cellR, cl_k[g], cl_n[g]);
            fprintf(fp, "- Close calls at an exact gap of %g s: adjacent generations that compute differently disagree in %s (all formats and seeds).\n", gaps.v[g], cellR);
        }
    if (unreached)
        fprintf(fp, "- %ld of %zu planted pairs could not reach their target gap within %g relative in their format; they are counted under the target.\n",
                unreached, (size_t)ns * nf * ng * NP, DRIFT_PLANT_TOL);
    if (any_v100_bf16) fprintf(fp, "- V100 (Volta) has no bf16 tensor-core path: it is absent from the bf16 rows.\n");
    /* greedy text: a statement about a pair is made only when it holds at every seed */
    fprintf(fp, "- Greedy text (%d prompts x %d tokens per seed): the completions differ for some prompt at every seed %llu..%llu between %s; they are identical for every prompt at every seed between %s%s%s.\n",
            NR, NT, s0, s1, every[0] ? every : "no pair", never[0] ? never : "no pair", mixed[0] ? "; not at every seed (no claim): " : "", mixed);
    if (nparts) {
        for (size_t i = 0; i < nparts; i++) sel[i] = &parts[i].p;
        drift_parting_summary(&ps, sel, nparts);
        fprintf(fp, "- Where two generations' texts part, the exact top-1/top-2 gap is at most %.2g over all %zu (pair, prompt) partings (per seed at most", ps.gap12_max, nparts);
        for (int si = 0, i0 = 0; si < ns; si++) { /* parts[] is in seed order */
            drift_parting_summary_t pss;
            int i1 = i0;
            while ((size_t)i1 < nparts && parts[i1].si == si) i1++;
            drift_parting_summary(&pss, sel + i0, (size_t)(i1 - i0)), i0 = i1;
            fprintf(fp, pss.n ? "%s %.2g" : "%s none", si ? "," : "", pss.gap12_max);
        }
        fprintf(fp, "), against a median top-1/top-2 gap over all generated steps of");
        for (int si = 0; si < ns; si++)
            fprintf(fp, "%s %.2g", si ? "," : "", median_of(topgap + topgap_at[si], topgap_at[si + 1] - topgap_at[si]));
        fprintf(fp, " (per seed): texts part only at near ties. There the two generations' logits differ by a median %.2g (largest over the vocabulary), but each deviates from the exact logits by a median %.2g: both round the same activations to the input format, so the tie that flips is the format's, not the exact model's. The exact gap is within twice that deviation at %zu of %zu partings (necessarily all: each generation picked its own token); the exact argmax is one of the two tokens at %zu.\n",
                ps.spread_median, ps.dev_median, ps.within, nparts, ps.exact_among);
    }
    drift_out_commit(&out);
    for (int t = 0; t < nf * npair; t++) free(ulps[t]), free(sdiff[t]);
    for (int f = 0; f < nf; f++) drift_arch_greedy_free(ag[f]);
    drift_checkpoint_free(&ck);
    free(ulps), free(sdiff), free(arg), free(close), free(gcnt), free(hist), free(Wd);
    free(parts), free(pbuf), free(topgap), free(prompts), free(sel);
    return 0;
}
