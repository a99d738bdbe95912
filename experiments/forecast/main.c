/* forecast.c — which prompts will give other text on deployment B, forecast from deployment
 * A's run alone, and how good is that forecast on prompts it was not fitted on?
 *
 * Setup: SmolLM2-135M-Instruct (GGUF), --samples disjoint samples of --prompts prompts of the
 * lab's prompt set in the model's chat template, drawn by each of --seeds seeds (each its own
 * draw and companions: a replication of the whole protocol); pairs of deployments that differ
 * in one knob from an A100 server (`vllm-like,card=a100`), as in `deployments`.
 * Sweep: the pairs; per seed, each sample held out in turn.
 * Measure: both deployments decode --tokens greedy tokens of every prompt. While the texts
 * agree both computed each step on the same context, so delta_t = B's top-1 minus top-2 gap of
 * A's two tokens minus A's own gap is the pair's numerics alone: the law of delta (a share pi
 * of steps where it is not 0, then Gaussian or Laplace, forecast.h) is fitted on the other
 * samples' steps of the same seed. The held-out sample's prompts are forecast from A's gaps only:
 * P(part within T) = 1 - prod_t (1 - pi Prob(delta < -gap_t)). Scores on the held-out prompts:
 * Brier score and log loss against the pair's constant parting rate and a fitted gap
 * threshold (both from the fit samples), the Brier skill score with a bootstrap interval over
 * prompts, per seed and pooled over the seeds; a reliability table.
 * Run: ./lab run forecast
 * Look for: whether the forecast beats the constant rate, on which pairs, and where it fails. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat_prompts.h"
#include "checkpoint.h"
#include "cli.h"
#include "deploy_runs.h"
#include "drift.h"
#include "forecast.h"
#include "llm_run.h"
#include "npy_write.h"
#include "output.h"
#include "pair_stats.h"
#include "parting.h"
#include "stats.h"
#include "table.h"

static const char QUESTION[] =
    "Which prompts will give other text on deployment B, forecast from deployment A's run alone, and how good is that forecast on prompts it was not fitted on?";
static const char SUMMARY[] =
    "the law of two deployments' gap difference is fitted on some prompts' steps; on held-out prompts, A's top-2 gaps alone "
    "forecast whether B's greedy text parts, scored against the pair's constant rate and a gap threshold.";

#define BASE "vllm-like,card=a100"

typedef struct {
    const char *id, *change;
    const char *a, *b;
    int other_b;    /* B: the same deployment with other requests around (a second run) */
    int in_default; /* 0: full profile only */
} pair_t;

static const pair_t PAIRS[] = {
    {"rerun-other", "other requests around (rerun)", BASE, BASE, 1, 1},
    {"batch-alone", "continuous:64 -> alone", BASE, BASE ",batch=alone", 0, 1},
    {"precision-fp16", "bf16 -> fp16 (weights, compute, activations, KV)", BASE,
        BASE ",weights=fp16,compute=fp16,act=fp16,kv=fp16", 0, 0},
    {"card-rtx4090", "A100 -> RTX 4090", BASE, "vllm-like,card=rtx4090", 0, 1},
    {"llamacpp-avx512", "llama.cpp AVX2 -> AVX-512 build", "llamacpp-cpu", "llamacpp-cpu-avx512", 0, 0},
};
#define MIN_EVENTS 3 /* partings (and non-partings) a pair needs before its skill is stated */
#define RUNS_MAX (2 * NPAIRS + 2 * DRIFT_LIST_MAX)
#define NPAIRS ((int)(sizeof PAIRS / sizeof PAIRS[0]))

/* ---- tables -------------------------------------------------------------------------------- */

/* T_TIES last: its CSV exists only in a run with --tie-eps */
enum { T_PROMPTS, T_PAIRS, T_SEEDS, T_REL, T_MD_PAIRS, T_MD_RISK, T_MD_TIES, T_TIES };
static const drift_col_t PROMPTC[] = {DRIFT_C_INT("seed"), DRIFT_C_INT("sample"), DRIFT_C_INT("prompt"),
    DRIFT_C_TEXT("kind"), DRIFT_C_TEXT("pair"), DRIFT_C_TEXT("law"), DRIFT_C_NUM("p_forecast", "%.6g"),
    DRIFT_C_NUM("p_constant", "%.6g"), DRIFT_C_NUM("p_threshold", "%.6g"), DRIFT_C_INT("risk_step"),
    DRIFT_C_NUM("risk_gap", "%.9g"), DRIFT_C_NUM("risk_p", "%.6g"), DRIFT_C_NUM("min_gap", "%.9g"),
    DRIFT_C_INT("parted"), DRIFT_C_INT("step"), DRIFT_C_NUM("p_all_samples", "%.6g"),
    DRIFT_C_NUM("p_empirical", "%.6g")};
static const drift_col_t PAIRC[] = {DRIFT_C_TEXT("id"), DRIFT_C_TEXT("change"), DRIFT_C_INT("prompts"),
    DRIFT_C_INT("parted"), DRIFT_C_NUM("predicted", "%.6g"), DRIFT_C_TEXT("law"), DRIFT_C_NUM("sigma", "%.6g"),
    DRIFT_C_NUM("b", "%.6g"), DRIFT_C_NUM("pi", "%.6g"), DRIFT_C_NUM("pi_other_kernels", "%.6g"), DRIFT_C_INT("steps"),
    DRIFT_C_INT("nonzero"), DRIFT_C_INT("gauss_wins"), DRIFT_C_NUM("heldout_dloglik", "%.6g"),
    DRIFT_C_NUM("brier_forecast", "%.6g"), DRIFT_C_NUM("brier_constant", "%.6g"),
    DRIFT_C_NUM("brier_threshold", "%.6g"), DRIFT_C_NUM("logloss_forecast", "%.6g"),
    DRIFT_C_NUM("logloss_constant", "%.6g"), DRIFT_C_NUM("logloss_threshold", "%.6g"), DRIFT_C_NUM("skill", "%.6g"),
    DRIFT_C_NUM("skill_lo", "%.6g"), DRIFT_C_NUM("skill_hi", "%.6g"), DRIFT_C_NUM("skill_vs_threshold", "%.6g"),
    DRIFT_C_NUM("brier_empirical", "%.6g"), DRIFT_C_NUM("skill_empirical", "%.6g"),
    DRIFT_C_NUM("skill_empirical_lo", "%.6g"), DRIFT_C_NUM("skill_empirical_hi", "%.6g")};
static const drift_col_t SEEDC[] = {DRIFT_C_INT("seed"), DRIFT_C_TEXT("pair"), DRIFT_C_INT("prompts"),
    DRIFT_C_INT("parted"), DRIFT_C_NUM("predicted", "%.6g"), DRIFT_C_NUM("brier_forecast", "%.6g"),
    DRIFT_C_NUM("brier_constant", "%.6g"), DRIFT_C_NUM("brier_threshold", "%.6g"), DRIFT_C_NUM("skill", "%.6g"),
    DRIFT_C_NUM("skill_lo", "%.6g"), DRIFT_C_NUM("skill_hi", "%.6g")};
static const drift_col_t RELC[] = {DRIFT_C_TEXT("pair"), DRIFT_C_NUM("bin_lo", "%.3g"), DRIFT_C_NUM("bin_hi", "%.3g"),
    DRIFT_C_INT("prompts"), DRIFT_C_NUM("mean_forecast", "%.6g"), DRIFT_C_INT("parted"), DRIFT_C_NUM("rate", "%.6g"),
    DRIFT_C_NUM("wilson_lo", "%.6g"), DRIFT_C_NUM("wilson_hi", "%.6g")};
static const drift_col_t MDP[] = {DRIFT_C_TEXT("pair"), DRIFT_C_TEXT("held-out prompts parted"),
    DRIFT_C_TEXT("forecast sum"), DRIFT_C_TEXT("law of delta (sd or scale, share of steps != 0)"),
    DRIFT_C_TEXT("Brier: forecast / constant / threshold"), DRIFT_C_TEXT("skill vs constant (95 % bootstrap)"),
    DRIFT_C_TEXT("skill per seed (parted)"), DRIFT_C_TEXT("empirical law: Brier, skill")};
static const drift_col_t MDR[] = {DRIFT_C_TEXT("pair"), DRIFT_C_INT("prompt"), DRIFT_C_TEXT("kind"),
    DRIFT_C_TEXT("P(part)"), DRIFT_C_TEXT("riskiest step (A's gap)"), DRIFT_C_TEXT("parted at")};
static const drift_col_t TIEC[] = {DRIFT_C_NUM("eps", "%.6g"), DRIFT_C_INT("prompts"), DRIFT_C_INT("parted"),
    DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("wilson_lo", "%.6g"), DRIFT_C_NUM("wilson_hi", "%.6g"),
    DRIFT_C_NUM("predicted", "%.6g"), DRIFT_C_INT("at_boundary"), DRIFT_C_INT("other_pair"), DRIFT_C_INT("crossed"),
    DRIFT_C_INT("decoded_again")};
static const drift_col_t MDT[] = {DRIFT_C_TEXT("tie below (logits)"),
    DRIFT_C_TEXT("prompts whose text parts (95 % Wilson)"), DRIFT_C_TEXT("forecast (sum of P)"),
    DRIFT_C_TEXT("partings: gaps either side of EPS / other top two / gap crossed")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, PROMPTC, 17}, {"_pairs.csv", NULL, 0, PAIRC, 28},
    {"_seeds.csv", NULL, 0, SEEDC, 11}, {"_reliability.csv", NULL, 0, RELC, 9},
    {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDP, 8},
    {NULL, "The riskiest held-out prompts (highest forecast first)", DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDR, 6},
    {NULL,
        "The tie-breaker (llama.cpp's AVX2 and AVX-512 builds, both with sampler=greedy-ties:EPS; EPS = 0: plain greedy)",
        DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDT, 4},
    {"_ties.csv", NULL, 0, TIEC, 11}};

/* ---- one pair's steps ------------------------------------------------------------------------ */

/* B's gap of A's two tokens minus A's gap at step t, where B's top two are A's two (in either
 * order); NaN where B ranked another token among its top two (delta not 0, its value unseen). */
static double step_delta(const drift_gen_t *a, const drift_gen_t *b, int t)
{
    double ga = a->top1_logit[t] - a->top2_logit[t], gb = b->top1_logit[t] - b->top2_logit[t];
    if (b->token[t] == a->token[t] && b->top2[t] == a->top2[t]) return gb - ga;
    if (b->token[t] == a->top2[t] && b->top2[t] == a->token[t]) return -gb - ga;
    return NAN;
}

typedef struct {
    int step;           /* parting step, -1 none */
    int n;              /* steps of A's text */
    double *gap;        /* A's gaps, n */
    unsigned char *cls; /* A's step classes, n */
    double *delta;      /* observed steps 0 .. nobs-1 (up to the parting, included) */
    unsigned char *dcls;
    int nobs;
    double min_gap;
} prompt_steps_t;

static void free_steps(prompt_steps_t *s) { free(s->gap), free(s->cls), free(s->delta), free(s->dcls); }

/* whether the llama.cpp pair is among the n pairs chosen (its builds then decode every prompt) */
static int chosen_llama(const int *pairs, int n)
{
    for (int q = 0; q < n; q++)
        if (!strcmp(PAIRS[pairs[q]].id, "llamacpp-avx512")) return 1;
    return 0;
}

/* prompt i's text under the tie rule: its own run where it decoded again, else the plain one */
static const drift_gen_t *tie_gen(const drift_deploy_run_t *runs, int plain, int tie, int i)
{
    return tie >= 0 && runs[tie].only[i] ? &runs[tie].g[i] : &runs[plain].g[i];
}

static void progress(void *cli, size_t done, size_t total) { drift_progress(cli, done, total); }

/* per-step class: whether the vendor-like policy picks other kernels on the two cards at this
 * step's row count (0 when the cards have the same SM count) */
static unsigned char step_class(
    const drift_llm_config_t *c, const drift_deployment_t *a, const drift_deployment_t *b, int rows)
{
    if (a->nx.sms == b->nx.sms || rows < 1) return 0;
    int f, l;
    return drift_model_kernels_differ(c, a->nx.sms, b->nx.sms, a->nx.min_slice, rows, &f, &l) >
           drift_model_kernels_differ(c, a->nx.sms, b->nx.sms, a->nx.min_slice, rows - 1, &f, &l);
}

int main(int argc, char **argv)
{
    long N_ = 0, T_ = 0, S_ = 0, Z_ = 0, K_ = 0;
    const char *ckpt = NULL, *set = NULL, *dump = NULL, *pairs_opt = NULL;
    drift_dbllist_t ties = {{0}, 0};
    const drift_cli_opt_t opts[] = {
        {"prompts", DRIFT_OPT_INT, &N_, "N", "prompts per sample", 1, 4096, {"1", "3", "64"}},
        {"samples", DRIFT_OPT_INT, &S_, "S", "disjoint prompt samples drawn by each seed, each held out in turn", 2, 64,
            {"2", "3", "3"}},
        {"seeds", DRIFT_OPT_INT, &Z_, "Z",
            "replications: seeds seed .. seed+Z-1, each drawing its own samples and companions, fitted and scored apart, then pooled",
            1, 16, {"1", "3", "3"}},
        {"tokens", DRIFT_OPT_INT, &T_, "T", "greedy tokens per prompt", 1, 1024, {"4", "24", "64"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE", "a GGUF model with a tokenizer (default SmolLM2-135M-Instruct)",
            0, 0, {0}},
        {"prompt-set", DRIFT_OPT_STRING, &set, "FILE",
            "prompt set (default prompts/lab-prompts.txt, 585 prompts of 9 kinds)", 0, 0, {0}},
        {"pairs", DRIFT_OPT_LIST, &pairs_opt, "ID,...",
            "the pairs to run (default: the profile's; rerun-other, batch-alone, precision-fp16, card-rtx4090, llamacpp-avx512)",
            0, 0, {0}},
        {"tie-eps", DRIFT_OPT_DOUBLELIST, &ties, "EPS,...",
            "also decode llama.cpp's two builds with the tie-breaker sampler=greedy-ties:EPS (a gap below EPS logits is a tie given to the lower id) for each EPS "
            "> 0: the share of prompts that part, measured and forecast",
            0, 0, {NULL, "0.01,0.05,0.25", "0.01,0.05,0.25"}},
        {"tie-samples", DRIFT_OPT_INT, &K_, "K",
            "the tie-breaker decodes the first K samples of every seed (at most --samples)", 1, 64, {"1", "1", "3"}},
        {"dump-logits", DRIFT_OPT_STRING, &dump, "FILE.npy",
            "also write deployment A's top-2 logits of every step, shape (prompts, tokens, 2), NaN past a text's end: the input of ./lab forecast --logits",
            0, 0, {0}},
    };
    const drift_cli_spec_t spec = DRIFT_LLM_SPEC(
        "forecast", QUESTION, opts, "takes no formats or orders (the deployments are the sweep)", SUMMARY);
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    /* P prompts per seed; prompt i of the Z * P is seed i / P's, sample (i % P) / N */
    const int N = (int)N_, T = (int)T_, S = (int)S_, Z = (int)Z_, P = S * N, PT = Z * P, K = (int)K_, NT = Z * K * N;
    if (K > S) drift_die("--tie-samples: %d is more than the %d samples (--samples)", K, S);
    if (!ckpt) ckpt = drift_real_checkpoint();
    if (!ckpt) {
        fprintf(stderr, "forecast: skipped: no models/SmolLM2-135M-Instruct.Q4_1.gguf (./lab models get smollm2-135m), "
                        "or give --checkpoint FILE\n");
        return DRIFT_EXIT_SKIPPED;
    }
    if (dump) { /* refused before anything is computed: a .npy the user can write */
        size_t l = strlen(dump);
        drift_file_t f;
        if (l < 5 || strcmp(dump + l - 4, ".npy")) drift_die("--dump-logits: '%s' must name a .npy file", dump);
        if (drift_file_open(&f, dump)) drift_die("--dump-logits: %s: cannot write there", dump);
        drift_file_abort(&f);
    }
    drift_checkpoint_t ck;
    drift_llm_run_open(&ck, &ckpt);
    if (!ck.gguf) drift_die("--checkpoint: %s: forecast needs a GGUF model (its tokenizer and chat template)", ckpt);
    if (T >= ck.cfg.seq_len) drift_die("--tokens: at most %d on this model (its context)", ck.cfg.seq_len - 1);
    drift_chat_prompt_t *pr = calloc((size_t)PT, sizeof *pr);
    char perr[DRIFT_LLM_ERR_MAX];
    if (!pr) drift_die("out of memory for %d prompts", PT);
    for (int z = 0; z < Z; z++) { /* each seed's own draw, one after the other */
        drift_chat_prompt_t *pz;
        if (drift_chat_prompts_load(&pz, &ck, set ? set : DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt", P,
                cli.seed + (uint64_t)z, "forecast.prompts", ck.cfg.seq_len - T, perr, sizeof perr))
            drift_die("--prompt-set: %s", perr);
        memcpy(pr + (size_t)z * P, pz, (size_t)P * sizeof *pz);
        free(pz); /* its prompts now belong to pr */
    }

    int pairs[NPAIRS], npair = 0, nrun = 0, ra[NPAIRS], rb[NPAIRS];
    static drift_deploy_run_t runs[RUNS_MAX];
    int chosen[NPAIRS] = {0};
    if (pairs_opt) { /* the pairs named, in the table's order */
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", pairs_opt);
        for (char *save, *id = strtok_r(buf, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
            int found = -1;
            char ids[256] = "";
            for (int i = 0; i < NPAIRS; i++) {
                if (!strcmp(id, PAIRS[i].id)) found = i;
                size_t l = strlen(ids);
                snprintf(ids + l, sizeof ids - l, "%s%s", i ? ", " : "", PAIRS[i].id);
            }
            if (found < 0) drift_die("--pairs: unknown pair '%s' (accepted: %s)", id, ids);
            chosen[found] = 1;
        }
    }
    for (int i = 0; i < NPAIRS; i++) {
        if (pairs_opt && !chosen[i]) continue;
        if (!pairs_opt && cli.profile != DRIFT_PROFILE_FULL && !PAIRS[i].in_default) continue;
        if (!pairs_opt && cli.profile == DRIFT_PROFILE_QUICK && strcmp(PAIRS[i].id, "batch-alone"))
            continue; /* a smoke test */
        pairs[npair] = i;
        if ((ra[npair] = drift_deploy_run_find(runs, &nrun, RUNS_MAX, PAIRS[i].a, 0, perr, sizeof perr)) < 0 ||
            (rb[npair] =
                    drift_deploy_run_find(runs, &nrun, RUNS_MAX, PAIRS[i].b, PAIRS[i].other_b, perr, sizeof perr)) < 0)
            drift_die("deployment: %s", perr);
        npair++;
    }
    /* the tie-breaker: llama.cpp's two builds, plain and with each EPS */
    static char tie_spec[2 * DRIFT_LIST_MAX][96];
    int tie_a0 = -1, tie_b0 = -1, tie_a[DRIFT_LIST_MAX], tie_b[DRIFT_LIST_MAX];
    for (int e = 0; e < ties.n; e++)
        if (!(ties.v[e] > 0)) drift_die("--tie-eps: %g is not a positive gap in logits", ties.v[e]);
    if (ties.n) {
        if ((tie_a0 = drift_deploy_run_find(runs, &nrun, RUNS_MAX, "llamacpp-cpu", 0, perr, sizeof perr)) < 0 ||
            (tie_b0 = drift_deploy_run_find(runs, &nrun, RUNS_MAX, "llamacpp-cpu-avx512", 0, perr, sizeof perr)) < 0)
            drift_die("deployment: %s", perr);
        for (int e = 0; e < ties.n; e++) {
            snprintf(tie_spec[2 * e], sizeof tie_spec[0], "llamacpp-cpu,sampler=greedy-ties:%.17g", ties.v[e]);
            snprintf(
                tie_spec[2 * e + 1], sizeof tie_spec[0], "llamacpp-cpu-avx512,sampler=greedy-ties:%.17g", ties.v[e]);
            if ((tie_a[e] = drift_deploy_run_find(runs, &nrun, RUNS_MAX, tie_spec[2 * e], 0, perr, sizeof perr)) < 0 ||
                (tie_b[e] = drift_deploy_run_find(runs, &nrun, RUNS_MAX, tie_spec[2 * e + 1], 0, perr, sizeof perr)) <
                    0)
                drift_die("--tie-eps: %s", perr);
        }
    }
    const char *base = strrchr(ckpt, '/') ? strrchr(ckpt, '/') + 1 : ckpt;
    char seeds[64];
    if (Z == 1)
        snprintf(seeds, sizeof seeds, "seed %llu", (unsigned long long)cli.seed);
    else
        snprintf(seeds, sizeof seeds, "seeds %llu-%llu", (unsigned long long)cli.seed,
            (unsigned long long)(cli.seed + Z - 1));
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, ties.n ? 8 : 7, 1);
    drift_out_meta(&out, T_PROMPTS, "table",
        "per (seed, held-out sample, prompt, pair): at each of %d seeds, %d samples of %d prompts of %s, chat-wrapped, %d greedy tokens; "
        "each sample forecast by the law fitted on the seed's other samples",
        Z, S, N, base, T);
    drift_out_meta(&out, T_PROMPTS, "columns",
        "p_forecast = P(B parts from A within T) from A's gaps and the fitted law; p_constant = the fit samples' parting rate; "
        "p_threshold = the fit samples' rate below or above the fitted threshold on the prompt's smallest gap; "
        "risk_step, risk_gap, risk_p = the step of the largest risk, A's top-1 minus top-2 logit there, the risk; min_gap = A's smallest gap; "
        "parted, step = what B did (step 0-based, -1 none); p_all_samples = the forecast under the law fitted on every sample of every seed (the "
        "pairs table's; not held out), from A's gaps without step classes, as ./lab forecast --logits computes it; "
        "p_empirical = the forecast with the fit samples' own deltas as the law (forecast.h: their symmetrized tail, pi as for p_forecast)");
    drift_out_meta(&out, T_PAIRS, "table",
        "per pair, every seed pooled: the law of delta fitted on all samples (law, sigma, b, pi per step class; "
        "gauss_wins = folds whose held-out deltas favour the Gaussian, heldout_dloglik = their summed log-likelihood, Gaussian minus Laplace); "
        "scores over the held-out prompts; skill = 1 - Brier(forecast) / Brier(constant), 95%% percentile bootstrap over prompts; *_empirical: "
        "the same for the empirical law");
    drift_out_meta(&out, T_SEEDS, "table",
        "per (seed, pair): the held-out scores of that seed's prompts alone (forecasts as in the prompts table; "
        "skill with its 95%% percentile bootstrap over the seed's prompts)");
    if (ties.n)
        drift_out_meta(&out, T_TIES, "table",
            "the tie-breaker (--tie-eps): llama.cpp's AVX2 and AVX-512 builds decode the prompts of the first --tie-samples samples of every "
            "seed with sampler=greedy-ties:EPS (eps 0: plain greedy); parted = prompts whose two texts differ within T (Wilson 95%%); "
            "predicted = the sum over prompts of the forecast from the plain AVX2 run and the plain pair's law fitted on those prompts' "
            "steps (per step pi P(|delta| beyond |gap - EPS|) when the runner-up has the lower id, "
            "pi P(delta < -(gap + EPS)) when the top one has); at the partings: at_boundary = the two gaps on either side of EPS, "
            "other_pair = both below EPS but another top two, crossed = both at or above EPS (the top one changed); "
            "decoded_again = (prompt, build) decodes run with the rule: the others' texts are the plain ones, "
            "since the rule picks the plain token at every step of them");
    drift_out_meta(&out, T_REL, "table",
        "reliability of the held-out forecasts of every seed, per pair and pooled (all): "
        "bins of the forecast, their mean forecast and the observed share (Wilson 95%%)");
    drift_md_intro(&out,
        "%d pairs of deployments of %s (one knob changed from `" BASE
        "`, an A100 server) decode, at each of %d seeds (%s: "
        "each its own draw of prompts and batch companions), %d disjoint samples of %d prompts, %d greedy tokens each. "
        "Per seed, each sample in turn is held out: the law of the pair's gap difference is fitted on the seed's other samples' steps, "
        "and each held-out prompt is forecast from deployment A's top-2 gaps alone.",
        npair, base, Z, seeds, S, N, T);

    /* the plain runs, then the tie rule's, each decoding again only where the rule acts */
    const int workers = cli.threads > 0 ? cli.threads : omp_get_num_procs(), nplain = ties.n ? tie_a[0] : nrun;
    static unsigned char *tie_plain; /* the plain builds' prompts when only the tie-breaker needs them */
    if (ties.n && K < S && !chosen_llama(pairs, npair)) {
        if (!(tie_plain = malloc((size_t)PT))) drift_die("out of memory for the tie runs' prompts (%d)", PT);
        for (int i = 0; i < PT; i++) tie_plain[i] = (i % P) / N < K;
        runs[tie_a0].only = runs[tie_b0].only = tie_plain;
    }
    drift_progress_phase(&cli, "decode");
    if (drift_deploy_runs(runs, nplain, &ck, pr, PT, T, "forecast.batch", workers, progress, &cli))
        drift_die("a deployment's decode failed (or out of memory for its model)");
    unsigned char *again = NULL,
                  *tie_in = NULL; /* tie_in[i]: prompt i is in the tie-breaker's first K samples of its seed */
    long again_n[DRIFT_LIST_MAX] = {0};
    if (ties.n) {
        if (!(again = malloc((size_t)ties.n * 2 * (size_t)PT)) || !(tie_in = malloc((size_t)PT)))
            drift_die("out of memory for the tie runs' prompts (%d)", PT);
        for (int i = 0; i < PT; i++) tie_in[i] = (i % P) / N < K;
        for (int e = 0; e < ties.n; e++)
            for (int side = 0; side < 2; side++) {
                unsigned char *m = again + (size_t)(2 * e + side) * PT;
                for (int i = 0; i < PT; i++) {
                    const drift_gen_t *g = &runs[side ? tie_b0 : tie_a0].g[i];
                    again_n[e] += m[i] = tie_in[i] && drift_tie_rule_acts(g->top1_logit, g->top2_logit, g->token,
                                                          g->top2, g->n, ties.v[e]);
                }
                if ((side ? tie_b[e] : tie_a[e]) != nplain + 2 * e + side)
                    drift_die("the tie runs are not the last runs");
                runs[nplain + 2 * e + side].only = m;
            }
        drift_progress_phase(&cli, "tie-breaker decodes");
        if (drift_deploy_runs(runs + nplain, nrun - nplain, &ck, pr, PT, T, "forecast.batch", workers, progress, &cli))
            drift_die("a deployment's decode failed (or out of memory for its model)");
    }

    if (dump) { /* A: the same deployment in every pair chosen */
        for (int q = 1; q < npair; q++)
            if (strcmp(runs[ra[q]].spec, runs[ra[0]].spec))
                drift_die(
                    "--dump-logits: the pairs chosen start from different deployments (%s, %s): choose pairs with one A (--pairs)",
                    runs[ra[0]].spec, runs[ra[q]].spec);
        double *x = malloc((size_t)PT * (size_t)T * 2 * sizeof(double));
        if (!x) drift_die("out of memory for the --dump-logits array (%d x %d x 2)", PT, T);
        const drift_gen_t *ga = runs[ra[0]].g;
        for (int i = 0; i < PT; i++)
            for (int t = 0; t < T; t++) {
                x[((size_t)i * T + t) * 2] = t < ga[i].n ? ga[i].top1_logit[t] : NAN;
                x[((size_t)i * T + t) * 2 + 1] = t < ga[i].n ? ga[i].top2_logit[t] : NAN;
            }
        const size_t shape[3] = {(size_t)PT, (size_t)T, 2};
        char err[512];
        if (drift_npy_write_f64(dump, x, shape, 3, err, sizeof err)) drift_die("--dump-logits: %s", err);
        free(x);
    }

    /* -- per pair: steps, folds, forecasts, scores -- */
    double *pf = malloc((size_t)PT * sizeof(double)), *pc = malloc((size_t)PT * sizeof(double)),
           *pt = malloc((size_t)PT * sizeof(double)), *mg = malloc((size_t)PT * sizeof(double)),
           *pe = malloc((size_t)PT * sizeof(double));
    unsigned char *y = malloc((size_t)PT);
    prompt_steps_t *ps = calloc((size_t)PT, sizeof *ps);
    double *allp = malloc((size_t)npair * (size_t)PT * sizeof(double));
    unsigned char *ally = malloc((size_t)npair * (size_t)PT);
    double *dl = malloc((size_t)PT * (size_t)T * sizeof(double));
    unsigned char *dc = malloc((size_t)PT * (size_t)T), *fy = malloc((size_t)PT);
    double *fmg = malloc((size_t)PT * sizeof(double));
    if (!pf || !pc || !pt || !mg || !pe || !y || !ps || !allp || !ally || !dl || !dc || !fy || !fmg)
        drift_die("out of memory for the forecasts");
    typedef struct {
        int prompt, pair, step;
        double p, step_gap;
    } risk_t;
    risk_t *risk = malloc((size_t)npair * (size_t)PT * sizeof *risk);
    if (!risk) drift_die("out of memory for the forecasts");
    int nrisk = 0;
    typedef struct {
        long k;
        double sump, sume, skill, lo, hi, skill_e;
        int gauss_wins, seeds_at_goal, seeds_scored;
    } pair_sum_t;
    pair_sum_t sums[NPAIRS];
    long tie_n = 0, tie_k = 0; /* held-out (prompt, pair) whose riskiest step is a tie of A's */
    double tie_p = 0;
    for (int q = 0; q < npair; q++) {
        const pair_t *pp = &PAIRS[pairs[q]];
        const drift_deployment_t *da = &runs[ra[q]].dep, *db = &runs[rb[q]].dep;
        for (int i = 0; i < PT; i++) {
            const drift_gen_t *a = &runs[ra[q]].g[i], *b = &runs[rb[q]].g[i];
            prompt_steps_t *s = &ps[i];
            int n = a->n < b->n ? a->n : b->n;
            s->step = drift_first_difference(a->token, b->token, n);
            s->n = a->n;
            s->gap = malloc((size_t)a->n * sizeof(double)), s->cls = malloc((size_t)a->n);
            s->delta = malloc((size_t)a->n * sizeof(double)), s->dcls = malloc((size_t)a->n);
            if (!s->gap || !s->cls || !s->delta || !s->dcls) drift_die("out of memory for the steps");
            s->min_gap = INFINITY;
            for (int t = 0; t < a->n; t++) {
                s->gap[t] = a->top1_logit[t] - a->top2_logit[t];
                s->cls[t] = step_class(&ck.cfg, da, db, a->rows[t]);
                if (s->gap[t] < s->min_gap) s->min_gap = s->gap[t];
            }
            s->nobs = s->step >= 0 ? s->step + 1 : n;
            for (int t = 0; t < s->nobs; t++) s->delta[t] = step_delta(a, b, t), s->dcls[t] = s->cls[t];
            y[i] = s->step >= 0;
            mg[i] = s->min_gap;
        }
        /* the law on every seed's steps: what the pairs table states, and what a user's own
         * dump is forecast with (./lab forecast --logits) */
        size_t nall = 0;
        for (int i = 0; i < PT; i++)
            for (int t = 0; t < ps[i].nobs; t++) dl[nall] = ps[i].delta[t], dc[nall] = ps[i].dcls[t], nall++;
        drift_delta_fit_t all;
        if (drift_delta_fit(&all, dl, dc, nall)) drift_die("the fit of the pair's law failed");
        /* folds: per seed, each sample held out, the law and the baselines fitted on the
         * seed's other samples */
        int gauss_wins = 0;
        double dll = 0;
        for (int z = 0; z < Z; z++)
            for (int h = 0; h < S; h++) {
                const int h0 = z * P + h * N, h1 = h0 + N;
                size_t nd = 0, nh = 0;
                int nf = 0;
                for (int i = z * P; i < (z + 1) * P; i++) {
                    if (i >= h0 && i < h1) continue;
                    for (int t = 0; t < ps[i].nobs; t++) dl[nd] = ps[i].delta[t], dc[nd] = ps[i].dcls[t], nd++;
                    fmg[nf] = ps[i].min_gap, fy[nf] = y[i], nf++;
                }
                drift_delta_fit_t fit;
                drift_delta_ecdf_t ecdf;
                if (drift_delta_fit(&fit, dl, dc, nd)) drift_die("the fit of the pair's law failed");
                if (drift_delta_ecdf(&ecdf, dl, nd)) drift_die("out of memory for the empirical law (%zu steps)", nd);
                long kf = 0;
                for (int i = 0; i < nf; i++) kf += fy[i];
                drift_gap_threshold_t th = drift_gap_threshold_fit(fmg, fy, nf);
                /* held-out deltas: which law predicts them better */
                for (int i = h0; i < h1; i++)
                    for (int t = 0; t < ps[i].nobs; t++) dl[nh++] = ps[i].delta[t];
                double lg = drift_delta_loglik(&fit, DRIFT_DELTA_GAUSS, dl, nh),
                       ll = drift_delta_loglik(&fit, DRIFT_DELTA_LAPLACE, dl, nh);
                if (isfinite(lg) && isfinite(ll)) gauss_wins += lg > ll, dll += lg - ll;
                for (int i = h0; i < h1; i++) {
                    drift_forecast_t fc;
                    if (drift_forecast_text(&fc, &fit, -1, ps[i].gap, ps[i].cls, ps[i].n))
                        drift_die("a forecast failed (a NaN gap)");
                    pf[i] = fc.p, pc[i] = (double)kf / (double)nf, pt[i] = ps[i].min_gap < th.tau ? th.below : th.above;
                    drift_forecast_t fa, fe;
                    if (drift_forecast_text(&fa, &all, -1, ps[i].gap, NULL, ps[i].n) ||
                        drift_forecast_text_ecdf(&fe, &fit, &ecdf, ps[i].gap, ps[i].cls, ps[i].n))
                        drift_die("a forecast failed (a NaN gap)");
                    pe[i] = fe.p;
                    drift_row(&out, T_PROMPTS, DRIFT_INT((long)(cli.seed + z)), DRIFT_INT(h), DRIFT_INT(pr[i].index),
                        DRIFT_TXT(pr[i].kind), DRIFT_TXT(pp->id), DRIFT_TXT(drift_delta_law_name(fit.law)),
                        DRIFT_NUM(pf[i]), DRIFT_NUM(pc[i]), DRIFT_NUM(pt[i]), DRIFT_INT(fc.step),
                        DRIFT_NUM(fc.step_gap), DRIFT_NUM(fc.step_p), DRIFT_NUM(ps[i].min_gap), DRIFT_INT(y[i]),
                        DRIFT_INT(ps[i].step), DRIFT_NUM(fa.p), DRIFT_NUM(fe.p));
                    risk[nrisk++] = (risk_t){i, q, fc.step, pf[i], fc.step_gap};
                    if (fc.step >= 0 && fc.step_gap == 0) tie_n++, tie_k += y[i], tie_p += pf[i];
                }
                drift_delta_ecdf_free(&ecdf);
            }
        /* each seed's scores alone: the replications */
        char per_seed[256] = "";
        int at_goal = 0, scored = 0;
        for (int z = 0; z < Z; z++) {
            const size_t o = (size_t)z * P;
            long kz = 0;
            double sz = 0, skz, loz, hiz;
            for (int i = 0; i < P; i++) kz += y[o + i], sz += pf[o + i];
            double bfz = drift_brier(pf + o, y + o, (size_t)P), bcz = drift_brier(pc + o, y + o, (size_t)P),
                   btz = drift_brier(pt + o, y + o, (size_t)P);
            if (drift_brier_skill(&skz, &loz, &hiz, pf + o, pc + o, y + o, (size_t)P, cli.seed + z, 2000, 0.95))
                drift_die("out of memory for the bootstrap");
            drift_row(&out, T_SEEDS, DRIFT_INT((long)(cli.seed + z)), DRIFT_TXT(pp->id), DRIFT_INT(P), DRIFT_INT(kz),
                DRIFT_NUM(sz), DRIFT_NUM(bfz), DRIFT_NUM(bcz), DRIFT_NUM(btz), DRIFT_NUM(skz), DRIFT_NUM(loz),
                DRIFT_NUM(hiz));
            if (!isnan(skz)) scored++, at_goal += skz >= 0.3;
            size_t at = strlen(per_seed);
            if (isnan(skz))
                snprintf(per_seed + at, sizeof per_seed - at, "%s- (%ld)", z ? ", " : "", kz);
            else
                snprintf(per_seed + at, sizeof per_seed - at, "%s%.2f (%ld)", z ? ", " : "", skz, kz);
        }
        long k = 0;
        double sump = 0;
        for (int i = 0; i < PT; i++) k += y[i], sump += pf[i];
        double bf = drift_brier(pf, y, (size_t)PT), bc = drift_brier(pc, y, (size_t)PT),
               bt = drift_brier(pt, y, (size_t)PT);
        double sk, lo, hi, ske, loe, hie, be = drift_brier(pe, y, (size_t)PT), skt = bt > 0 ? 1 - bf / bt : NAN;
        if (drift_brier_skill(&sk, &lo, &hi, pf, pc, y, (size_t)PT, cli.seed, 2000, 0.95) ||
            drift_brier_skill(&ske, &loe, &hie, pe, pc, y, (size_t)PT, cli.seed, 2000, 0.95))
            drift_die("out of memory for the bootstrap");
        double sume = 0;
        for (int i = 0; i < PT; i++) sume += pe[i];
        sums[q] = (pair_sum_t){k, sump, sume, sk, lo, hi, ske, gauss_wins, at_goal, scored};
        drift_row(&out, T_PAIRS, DRIFT_TXT(pp->id), DRIFT_TXT(pp->change), DRIFT_INT(PT), DRIFT_INT(k), DRIFT_NUM(sump),
            DRIFT_TXT(drift_delta_law_name(all.law)), DRIFT_NUM(all.sigma), DRIFT_NUM(all.b), DRIFT_NUM(all.pi[0]),
            DRIFT_NUM(all.steps[1] ? all.pi[1] : NAN), DRIFT_INT(all.steps[0] + all.steps[1]),
            DRIFT_INT(all.nonzero[0] + all.nonzero[1]), DRIFT_INT(gauss_wins), DRIFT_NUM(dll), DRIFT_NUM(bf),
            DRIFT_NUM(bc), DRIFT_NUM(bt), DRIFT_NUM(drift_log_loss(pf, y, (size_t)PT)),
            DRIFT_NUM(drift_log_loss(pc, y, (size_t)PT)), DRIFT_NUM(drift_log_loss(pt, y, (size_t)PT)), DRIFT_NUM(sk),
            DRIFT_NUM(lo), DRIFT_NUM(hi), DRIFT_NUM(skt), DRIFT_NUM(be), DRIFT_NUM(ske), DRIFT_NUM(loe),
            DRIFT_NUM(hie));
        char parted[96], fsum[32], law[128], br[96], skill[96], emp[96];
        snprintf(emp, sizeof emp,
            isnan(ske)   ? "%.3f, -"
            : isnan(loe) ? "%.3f, %.2f"
                         : "%.3f, %.2f [%.2f, %.2f]",
            be, ske, loe, hie);
        drift_rate_text(parted, sizeof parted, k, PT);
        snprintf(fsum, sizeof fsum, "%.3g", sump);
        snprintf(law, sizeof law, "%s %.3g, %.3g", drift_delta_law_name(all.law),
            all.law == DRIFT_DELTA_GAUSS ? all.sigma : all.b, all.pi[0]);
        snprintf(br, sizeof br, "%.3f / %.3f / %.3f", bf, bc, bt);
        if (isnan(sk))
            snprintf(skill, sizeof skill, "- (the constant rate makes no error)");
        else if (k < MIN_EVENTS || PT - k < MIN_EVENTS)
            snprintf(skill, sizeof skill, "- (%.2f, resting on %ld)", sk, k < MIN_EVENTS ? k : PT - k);
        else if (isnan(lo))
            snprintf(skill, sizeof skill, "%.2f", sk);
        else
            snprintf(skill, sizeof skill, "%.2f [%.2f, %.2f]", sk, lo, hi);
        drift_row(&out, T_MD_PAIRS, DRIFT_TXT(pp->id), DRIFT_TXT(parted), DRIFT_TXT(fsum), DRIFT_TXT(law),
            DRIFT_TXT(br), DRIFT_TXT(skill), DRIFT_TXT(per_seed), DRIFT_TXT(emp));
        memcpy(allp + (size_t)q * PT, pf, (size_t)PT * sizeof(double));
        memcpy(ally + (size_t)q * PT, y, (size_t)PT);
        /* reliability, this pair */
        static const double edges[] = {0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0000001};
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1 && q != npair - 1) break;
            drift_rel_bin_t bins[6];
            int nb = drift_reliability(
                bins, edges, 7, pass ? allp : pf, pass ? ally : y, pass ? (size_t)npair * PT : (size_t)PT);
            for (int e = 0; e < nb; e++)
                drift_row(&out, T_REL, DRIFT_TXT(pass ? "all" : pp->id), DRIFT_NUM(bins[e].lo),
                    DRIFT_NUM(bins[e].hi > 1 ? 1 : bins[e].hi), DRIFT_INT(bins[e].n), DRIFT_NUM(bins[e].mean_p),
                    DRIFT_INT(bins[e].k), DRIFT_NUM(bins[e].rate), DRIFT_NUM(bins[e].wilson_lo),
                    DRIFT_NUM(bins[e].wilson_hi));
        }
        for (int i = 0; i < PT; i++) free_steps(&ps[i]), memset(&ps[i], 0, sizeof ps[i]);
    }
    drift_md_end(&out, T_MD_PAIRS);
    /* the riskiest held-out prompts, all pairs together; ties keep the sweep's order */
    for (int i = 1; i < nrisk; i++)
        for (int j = i; j > 0 && risk[j].p > risk[j - 1].p; j--) {
            risk_t t = risk[j];
            risk[j] = risk[j - 1], risk[j - 1] = t;
        }
    for (int j = 0; j < nrisk && j < 8; j++) {
        const risk_t *r = &risk[j];
        int i = r->prompt;
        char p[32], rs[64], at[32];
        snprintf(p, sizeof p, "%.3f", r->p);
        if (r->step >= 0)
            snprintf(rs, sizeof rs, "step %d (%.3g)", r->step, r->step_gap);
        else
            snprintf(rs, sizeof rs, "-");
        const drift_gen_t *a = &runs[ra[r->pair]].g[i], *b = &runs[rb[r->pair]].g[i];
        int n = a->n < b->n ? a->n : b->n, st = drift_first_difference(a->token, b->token, n);
        if (st >= 0)
            snprintf(at, sizeof at, "step %d", st);
        else
            snprintf(at, sizeof at, "no");
        drift_row(&out, T_MD_RISK, DRIFT_TXT(PAIRS[pairs[r->pair]].id), DRIFT_INT(pr[i].index), DRIFT_TXT(pr[i].kind),
            DRIFT_TXT(p), DRIFT_TXT(rs), DRIFT_TXT(at));
    }
    drift_md_end(&out, T_MD_RISK);
    /* the tie-breaker: measured with each EPS, forecast from the plain run of A (its gaps along
     * its plain text) and the plain pair's law (drift_tie_step_risk); the partings counted by
     * cause (drift_tie_parting_cause), a third token inside EPS being the one not forecast */
    char tie_text[512] = "";
    long why_all[DRIFT_TIE_NCAUSE] = {0};
    if (ties.n) {
        const drift_gen_t *ga = runs[tie_a0].g, *gb = runs[tie_b0].g;
        size_t nd = 0;
        for (int i = 0; i < PT; i++) {
            if (!tie_in[i]) continue;
            int n = ga[i].n < gb[i].n ? ga[i].n : gb[i].n, st = drift_first_difference(ga[i].token, gb[i].token, n);
            for (int t = 0; t < (st >= 0 ? st + 1 : n); t++) dl[nd++] = step_delta(&ga[i], &gb[i], t);
        }
        drift_delta_fit_t lf;
        if (drift_delta_fit(&lf, dl, NULL, nd)) drift_die("the fit of the tie pair's law failed");
        for (int e = -1; e < ties.n; e++) {
            double eps = e < 0 ? 0 : ties.v[e], pred = 0;
            long k = 0, why[DRIFT_TIE_NCAUSE] = {0}; /* partings by cause (forecast.h) */
            for (int i = 0; i < PT; i++) {
                if (!tie_in[i]) continue;
                const drift_gen_t *ta = tie_gen(runs, tie_a0, e < 0 ? -1 : tie_a[e], i),
                                  *tb = tie_gen(runs, tie_b0, e < 0 ? -1 : tie_b[e], i);
                int n = ta->n < tb->n ? ta->n : tb->n, st = drift_first_difference(ta->token, tb->token, n);
                if (st >= 0)
                    k++,
                        why[drift_tie_parting_cause(ta->top1_logit[st] - ta->top2_logit[st], ta->token[st],
                            ta->top2[st], tb->top1_logit[st] - tb->top2_logit[st], tb->token[st], tb->top2[st], eps)]++;
                double logq = 0;
                for (int t = 0; t < ga[i].n; t++) {
                    double r = drift_tie_step_risk(
                        &lf, ga[i].top1_logit[t] - ga[i].top2_logit[t], ga[i].top2[t] < ga[i].token[t], eps);
                    logq += r < 1 ? log1p(-r) : -INFINITY;
                }
                pred += logq < 0 ? -expm1(logq) : 0;
            }
            double lo, hi;
            if (drift_wilson(&lo, &hi, k, NT, 1.959963984540054))
                drift_die("no Wilson interval for %ld of %ld", (long)k, (long)NT);
            drift_row(&out, T_TIES, DRIFT_NUM(eps), DRIFT_INT(NT), DRIFT_INT(k), DRIFT_NUM((double)k / NT),
                DRIFT_NUM(lo), DRIFT_NUM(hi), DRIFT_NUM(pred), DRIFT_INT(why[0]), DRIFT_INT(why[1]), DRIFT_INT(why[2]),
                DRIFT_INT(e < 0 ? 2L * NT : again_n[e]));
            char ep[32], rate[96], pr_s[32], ws[64];
            if (e < 0)
                snprintf(ep, sizeof ep, "0 (plain greedy)");
            else
                snprintf(ep, sizeof ep, "%g", eps);
            drift_rate_text(rate, sizeof rate, k, NT);
            snprintf(pr_s, sizeof pr_s, "%.3g", pred);
            if (e < 0)
                snprintf(ws, sizeof ws, "-");
            else
                snprintf(ws, sizeof ws, "%ld / %ld / %ld", why[0], why[1], why[2]);
            drift_row(&out, T_MD_TIES, DRIFT_TXT(ep), DRIFT_TXT(rate), DRIFT_TXT(pr_s), DRIFT_TXT(ws));
            if (e >= 0)
                for (int c = 0; c < DRIFT_TIE_NCAUSE; c++) why_all[c] += why[c];
            size_t at = strlen(tie_text);
            snprintf(tie_text + at, sizeof tie_text - at, "%s%g: %ld (%.2g)", e < 0 ? "" : ", ", eps, k, pred);
        }
        drift_md_end(&out, T_MD_TIES);
    }
    /* the takeaway, from the numbers above */
    drift_md_text(&out, "**Takeaway.**\n\n");
    char good[512] = "", weak[512] = "", none[512] = "", few[512] = "", cal[1024] = "";
    for (int q = 0; q < npair; q++) {
        const pair_sum_t *u = &sums[q];
        const char *id = PAIRS[pairs[q]].id;
        /* a skill resting on one or two partings (or all but one or two) is not a measure: its
         * bootstrap keeps only the resamples that hold them */
        const int rare = !isnan(u->skill) && (u->k < MIN_EVENTS || PT - u->k < MIN_EVENTS);
        char *dst = isnan(u->skill) ? none : rare ? few : u->skill >= 0.3 ? good : weak;
        size_t at = strlen(dst);
        if (isnan(u->skill))
            snprintf(dst + at, 512 - at, "%s%s", at ? ", " : "", id);
        else if (rare)
            snprintf(dst + at, 512 - at, "%s%s (%ld of %d parted)", at ? ", " : "", id, u->k, PT);
        else if (Z > 1)
            snprintf(dst + at, 512 - at, "%s%s %.2f [%.2f, %.2f] (0.3 at %d of %d seeds alone)", at ? ", " : "", id,
                u->skill, u->lo, u->hi, u->seeds_at_goal, Z);
        else
            snprintf(dst + at, 512 - at, "%s%s %.2f [%.2f, %.2f]", at ? ", " : "", id, u->skill, u->lo, u->hi);
        at = strlen(cal);
        snprintf(cal + at, sizeof cal - at, "%s%s %.2g against %ld", q ? ", " : "", id, u->sump, u->k);
    }
    if (good[0])
        drift_md_text(&out,
            "- Held out (%s), Brier skill over the constant rate (95 %% bootstrap, %d prompts) reached 0.3 on: %s.\n",
            Z > 1 ? "seeds pooled" : "one seed", PT, good);
    if (weak[0]) drift_md_text(&out, "- Below 0.3 on: %s.\n", weak);
    if (few[0])
        drift_md_text(&out, "- Too few partings (or texts kept together) to score (under %d): %s.\n", MIN_EVENTS, few);
    if (none[0])
        drift_md_text(&out,
            "- No skill to measure on %s: no held-out prompt parted at any seed, so the constant rate makes no error; "
            "the forecast's own sum below says how close to none it came.\n",
            none);
    drift_md_text(&out, "- Partings forecast (sum) against observed: %s.\n", cal);
    if (tie_n)
        drift_md_text(&out,
            "- Where it errs: %ld held-out forecasts rest on a tie of A's bf16 logits (risk pi/2); they forecast %.2g partings, %ld happened.\n",
            tie_n, tie_p, tie_k);
    if (tie_text[0])
        drift_md_text(&out,
            "- Tie-breaker (llama.cpp's two builds, %d prompts), parted (forecast) by EPS, 0 plain greedy: %s. "
            "Of the %ld partings under the rule %ld had the gaps either side of EPS, %ld another top two inside EPS, %ld a gap beyond it: the boundary moves to EPS.\n",
            NT, tie_text, why_all[0] + why_all[1] + why_all[2], why_all[0], why_all[1], why_all[2]);
    drift_md_text(&out, "\n");
    drift_out_commit(&out);
    drift_deploy_runs_free(runs, nrun, PT);
    drift_chat_prompts_free(pr, PT);
    free(pf), free(pc), free(pt), free(mg), free(pe), free(y), free(ps), free(allp), free(ally), free(dl), free(dc),
        free(fy), free(fmg), free(risk), free(again), free(tie_in), free(tie_plain);
    drift_checkpoint_free(&ck);
    return 0;
}
