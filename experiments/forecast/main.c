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
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat_prompts.h"
#include "cli.h"
#include "drift.h"
#include "forecast_lab.h"
#include "llm_run.h"
#include "output.h"

static const char QUESTION[] =
    "Which prompts will give other text on deployment B, forecast from deployment A's run alone, and how good is that forecast on prompts it was not fitted on?";
static const char SUMMARY[] =
    "the law of two deployments' gap difference is fitted on some prompts' steps; on held-out prompts, A's top-2 gaps alone "
    "forecast whether B's greedy text parts, scored against the pair's constant rate and a gap threshold.";

#define BASE "vllm-like,card=a100"

static const drift_fc_pair_t PAIRS[] = {
    {"rerun-other", "other requests around (rerun)", BASE, BASE, 1},
    {"batch-alone", "continuous:64 -> alone", BASE, BASE ",batch=alone", 0},
    {"precision-fp16", "bf16 -> fp16 (weights, compute, activations, KV)", BASE,
        BASE ",weights=fp16,compute=fp16,act=fp16,kv=fp16", 0},
    {"card-rtx4090", "A100 -> RTX 4090", BASE, "vllm-like,card=rtx4090", 0},
    {"llamacpp-avx512", "llama.cpp AVX2 -> AVX-512 build", "llamacpp-cpu", "llamacpp-cpu-avx512", 0},
};
#define NPAIRS ((int)(sizeof PAIRS / sizeof PAIRS[0]))

/* ---- tables (their order: forecast_lab.h) ------------------------------------------------- */
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

static void progress(void *cli, size_t done, size_t total) { drift_progress(cli, done, total); }

int main(int argc, char **argv)
{
    static drift_fclab_t L; /* its runs are large */
    long N_ = 0, T_ = 0, S_ = 0, Z_ = 0, K_ = 0;
    const char *ckpt = NULL, *set = NULL, *dump = NULL, *pairs_opt = NULL;
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
            "the pairs of deployments compared (rerun-other, batch-alone, precision-fp16, card-rtx4090, llamacpp-avx512), or all",
            0, 0, {"batch-alone", "rerun-other,batch-alone,card-rtx4090", "all"}},
        {"tie-eps", DRIFT_OPT_DOUBLELIST, &L.ties, "EPS,...",
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
    drift_cli_parse(&L.cli, &spec, argc, argv);
    const int N = (int)N_, T = (int)T_, S = (int)S_, Z = (int)Z_, P = S * N, PT = Z * P, K = (int)K_;
    L.N = N, L.T = T, L.S = S, L.Z = Z, L.P = P, L.PT = PT, L.K = K, L.NT = Z * K * N;
    if (K > S) drift_die("--tie-samples: %d is more than the %d samples (--samples)", K, S);
    if (!ckpt) ckpt = drift_real_checkpoint();
    if (!ckpt) {
        fprintf(stderr, "forecast: skipped: no models/SmolLM2-135M-Instruct.Q4_1.gguf (./lab models get smollm2-135m), "
                        "or give --checkpoint FILE\n");
        return DRIFT_EXIT_SKIPPED;
    }
    if (dump) drift_fc_dump_check(dump); /* refused before anything is computed */
    drift_llm_run_open(&L.ck, &ckpt);
    if (!L.ck.gguf) drift_die("--checkpoint: %s: forecast needs a GGUF model (its tokenizer and chat template)", ckpt);
    if (T >= L.ck.cfg.seq_len) drift_die("--tokens: at most %d on this model (its context)", L.ck.cfg.seq_len - 1);
    drift_chat_prompt_t *pr = L.pr = calloc((size_t)PT, sizeof *pr);
    char perr[DRIFT_LLM_ERR_MAX];
    if (!pr) drift_die("out of memory for %d prompts", PT);
    for (int z = 0; z < Z; z++) { /* each seed's own draw, one after the other */
        drift_chat_prompt_t *pz;
        if (drift_chat_prompts_load(&pz, &L.ck, set ? set : DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt", P,
                L.cli.seed + (uint64_t)z, "forecast.prompts", L.ck.cfg.seq_len - T, perr, sizeof perr))
            drift_die("--prompt-set: %s", perr);
        memcpy(pr + (size_t)z * P, pz, (size_t)P * sizeof *pz);
        free(pz); /* its prompts now belong to pr */
    }
    /* the pairs, then the tie-breaker: llama.cpp's two builds, plain and with each EPS */
    drift_fc_choose_pairs(&L, PAIRS, NPAIRS, pairs_opt);
    drift_fc_tie_runs(&L);
    const char *base = strrchr(ckpt, '/') ? strrchr(ckpt, '/') + 1 : ckpt;
    char seeds[64];
    snprintf(seeds, sizeof seeds, Z == 1 ? "seed %llu" : "seeds %llu-%llu", (unsigned long long)L.cli.seed,
        (unsigned long long)(L.cli.seed + Z - 1));
    drift_out_t out;
    drift_out_open(&out, &L.cli, TABLES, L.ties.n ? 8 : 7, 1);
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
    if (L.ties.n)
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
        L.npair, base, Z, seeds, S, N, T);

    /* the plain runs, then the tie rule's, each decoding again only where the rule acts */
    const int workers = L.cli.threads > 0 ? L.cli.threads : omp_get_num_procs(),
              nplain = L.ties.n ? L.tie_a[0] : L.nrun;
    drift_fc_tie_plain_prompts(&L);
    drift_progress_phase(&L.cli, "decode");
    if (drift_deploy_runs(L.runs, nplain, &L.ck, pr, PT, T, "forecast.batch", workers, progress, &L.cli))
        drift_die("a deployment's decode failed (or out of memory for its model)");
    if (L.ties.n) {
        drift_fc_tie_again(&L, nplain);
        drift_progress_phase(&L.cli, "tie-breaker decodes");
        if (drift_deploy_runs(
                L.runs + nplain, L.nrun - nplain, &L.ck, pr, PT, T, "forecast.batch", workers, progress, &L.cli))
            drift_die("a deployment's decode failed (or out of memory for its model)");
    }
    if (dump) drift_fc_dump_logits(&L, dump);

    /* per pair: each prompt's steps, the folds, the held-out forecasts and their scores */
    if (!(L.risk = malloc((size_t)L.npair * (size_t)PT * sizeof *L.risk))) drift_die("out of memory for the forecasts");
    for (int q = 0; q < L.npair; q++) drift_fc_score_pair(&L, &out, q);
    drift_md_end(&out, T_MD_PAIRS);
    drift_fc_riskiest(&L, &out);
    if (L.ties.n) drift_fc_tie_measure(&L, &out);
    drift_fc_takeaway(&L, &out);
    drift_out_commit(&out);
    drift_deploy_runs_free(L.runs, L.nrun, PT);
    drift_chat_prompts_free(pr, PT);
    free(L.risk), free(L.allp), free(L.ally), free(L.again), free(L.tie_in), free(L.tie_plain);
    drift_checkpoint_free(&L.ck);
    return 0;
}
