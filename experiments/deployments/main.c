/* deployments.c — the same model, two deployments, different text: which knob of a serving
 * stack changes a real model's greedy text, how often, and how close to a tie was the model
 * where it did?
 *
 * Setup: SmolLM2-135M-Instruct (GGUF), prompts of the lab's prompt set wrapped in the model's
 * chat template, --samples disjoint samples of --prompts prompts each, drawn by the seed
 * (three samples are three different prompt sets, never one replayed).
 * Sweep: pairs of deployments (deployment.h) that differ in one knob from an A100 server
 * (`vllm-like,card=a100`: bf16 on the Ampere tensor-core model, continuous batching of 64,
 * split-KV attention from the batch, chunked prefill, prefix caching), plus the story's pair
 * (A100 vs RTX 4090), two reruns (same and other requests around) and llama.cpp's two builds.
 * Measure: each deployment decodes --tokens greedy tokens of every prompt; per pair and
 * prompt, whether the texts part within T tokens and where; at a parting the exact model
 * (fp64, correctly rounded dots) teacher-forced on the common context gives the exact top-1 /
 * top-2 gap and the gap between the two tokens chosen. Per pair: the share of prompts that
 * part (Wilson 95 % interval; a prompt is the unit: its tokens are not independent), per
 * sample and pooled, the parting steps, the exact gaps; the knobs ranked by that share.
 * Run: ./lab run deployments
 * Look for: which knobs part texts at all, how rarely, and that every parting sits at an exact
 * gap within the numerics' noise. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cli.h"
#include "deploy_runs.h"
#include "deployment.h"
#include "drift.h"
#include "llm_run.h"
#include "metrics.h"
#include "model.h"
#include "output.h"
#include "pair_stats.h"
#include "parting.h"
#include "chat_prompts.h"
#include "stats.h"

static const char QUESTION[] =
    "Which knob of a serving stack changes a real model's greedy text, how often, and how close to a tie was the model where it did?";
static const char SUMMARY[] =
    "pairs of deployments of SmolLM2-135M that differ in one knob decode the same prompts greedily; the share of prompts "
    "whose text parts ranks the knobs, and every parting sits where the exact model's top two logits are nearly tied.";

/* ---- the sweep: deployments and the pairs that compare them ------------------------------- */

#define BASE "vllm-like,card=a100"

typedef struct {
    const char *spec;
    int other; /* 1: the batch's other requests drawn from another stream (a second run) */
} dep_ref_t;

typedef struct {
    const char *id;            /* a short name for the data: "card-rtx4090" */
    const char *knob, *change; /* "card", "A100 -> RTX 4090" */
    dep_ref_t a, b;
} pair_t;

static const pair_t PAIRS[] = {
    {"rerun-same", "rerun, same requests around", "the same run twice", {BASE, 0}, {BASE, 0}},
    {"rerun-other", "rerun, other requests around", "other companions", {BASE, 0}, {BASE, 1}},
    {"rerun-other-invariant", "rerun, other requests, batch-invariant kernels", "other companions",
        {BASE ",gemm=batch-invariant", 0}, {BASE ",gemm=batch-invariant", 1}},
    {"card-rtx4090", "card", "A100 -> RTX 4090", {BASE, 0}, {"vllm-like,card=rtx4090", 0}},
    {"card-h100", "card", "A100 -> H100", {BASE, 0}, {"vllm-like,card=h100", 0}},
    {"batch-alone", "batch", "continuous:64 -> alone", {BASE, 0}, {BASE ",batch=alone", 0}},
    {"precision-fp16", "precision", "bf16 -> fp16 (weights, compute, activations, KV)", {BASE, 0},
        {BASE ",weights=fp16,compute=fp16,act=fp16,kv=fp16", 0}},
    {"kv-fp8", "KV cache", "bf16 -> fp8e4m3", {BASE, 0}, {BASE ",kv=fp8e4m3", 0}},
    {"attention-standard", "attention kernel", "split-KV from the batch -> standard", {BASE, 0},
        {BASE ",attention=standard", 0}},
    {"prefix-off", "prefix caching", "on -> off", {BASE, 0}, {BASE ",prefix-cache=off", 0}},
    {"chunk-16", "chunked prefill", "256 -> 16 tokens a step", {BASE, 0}, {BASE ",prefill-chunk=16", 0}},
    {"tp-3", "tensor parallel", "1 -> 3 ranks (ring all-reduce)", {BASE, 0}, {BASE ",tp=3", 0}},
    {"act-fp32", "activations", "bf16 -> fp32 residual stream", {BASE, 0}, {BASE ",act=fp32", 0}},
    {"llamacpp-avx512", "engine build", "llama.cpp AVX2 -> AVX-512", {"llamacpp-cpu", 0}, {"llamacpp-cpu-avx512", 0}},
    {"engine-llamacpp", "engine", "llama.cpp CPU (Q4_1 kept) -> A100 server (bf16)", {"llamacpp-cpu", 0}, {BASE, 0}},
};
#define NPAIRS ((int)(sizeof PAIRS / sizeof PAIRS[0]))

/* ---- tables -------------------------------------------------------------------------------- */

enum { T_PROMPTS, T_PAIRS, T_DEPS, T_MD_RANK, T_MD_DEPS };
static const drift_col_t PROMPTS[] = {DRIFT_C_INT("sample"), DRIFT_C_INT("prompt"), DRIFT_C_TEXT("kind"),
    DRIFT_C_INT("prompt_tokens"), DRIFT_C_TEXT("pair"), DRIFT_C_TEXT("change"), DRIFT_C_INT("parted"),
    DRIFT_C_INT("step"), DRIFT_C_INT("token_a"), DRIFT_C_INT("token_b"), DRIFT_C_NUM("gap_a", "%.9g"),
    DRIFT_C_NUM("gap_b", "%.9g"), DRIFT_C_NUM("exact_gap12", "%.9g"), DRIFT_C_NUM("exact_gap_ab", "%.9g"),
    DRIFT_C_INT("exact_top1")};
static const drift_col_t PAIRC[] = {DRIFT_C_TEXT("id"), DRIFT_C_TEXT("pair"), DRIFT_C_TEXT("change"),
    DRIFT_C_TEXT("deployment_a"), DRIFT_C_TEXT("deployment_b"), DRIFT_C_INT("prompts"), DRIFT_C_INT("parted"),
    DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("wilson_lo", "%.6g"), DRIFT_C_NUM("wilson_hi", "%.6g"),
    DRIFT_C_TEXT("per_sample"), DRIFT_C_NUM("step_median", "%.6g"), DRIFT_C_NUM("exact_gap12_median", "%.6g"),
    DRIFT_C_NUM("exact_gap12_max", "%.6g")};
static const drift_col_t DEPC[] = {
    DRIFT_C_INT("deployment"), DRIFT_C_TEXT("spec"), DRIFT_C_INT("other_requests"), DRIFT_C_INT("tokens")};
static const drift_col_t MDR[] = {DRIFT_C_INT("rank"), DRIFT_C_TEXT("knob"), DRIFT_C_TEXT("change"),
    DRIFT_C_TEXT("prompts whose text parts (95 % Wilson)"), DRIFT_C_TEXT("per sample"),
    DRIFT_C_TEXT("parting step (min / median / max)"), DRIFT_C_TEXT("exact top-2 gap there (median / max)")};
static const drift_col_t MDD[] = {DRIFT_C_INT("deployment"), DRIFT_C_TEXT("fields")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, PROMPTS, 15}, {"_pairs.csv", NULL, 0, PAIRC, 14},
    {"_deployments.csv", NULL, 0, DEPC, 4}, {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDR, 7},
    {NULL, NULL, DRIFT_SHOW_MD, MDD, 2}};

static void progress(void *cli, size_t done, size_t total) { drift_progress(cli, done, total); }

int main(int argc, char **argv)
{
    long N_ = 0, T_ = 0, S_ = 0;
    const char *ckpt = NULL, *set = NULL, *pairs_opt = NULL;
    const drift_cli_opt_t opts[] = {
        {"prompts", DRIFT_OPT_INT, &N_, "N", "prompts per sample", 1, 4096, {"1", "3", "64"}},
        {"samples", DRIFT_OPT_INT, &S_, "S", "disjoint prompt samples drawn by the seed", 1, 64, {"1", "3", "3"}},
        {"tokens", DRIFT_OPT_INT, &T_, "T", "greedy tokens per prompt", 1, 1024, {"8", "32", "256"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE", "a GGUF model with a tokenizer (default SmolLM2-135M-Instruct)",
            0, 0, {0}},
        {"prompt-set", DRIFT_OPT_STRING, &set, "FILE",
            "prompt set (default prompts/lab-prompts.txt, 585 prompts of 9 kinds)", 0, 0, {0}},
        /* quick: a smoke test of a minute, one lab pair and llama.cpp's */
        {"pairs", DRIFT_OPT_LIST, &pairs_opt, "ID,...", "the pairs of deployments compared (ids of _pairs.csv), or all",
            0, 0,
            {"rerun-other,llamacpp-avx512",
                "rerun-same,rerun-other,rerun-other-invariant,card-rtx4090,batch-alone,precision-fp16,llamacpp-avx512",
                "all"}},
    };
    const drift_cli_spec_t spec = DRIFT_LLM_SPEC(
        "deployments", QUESTION, opts, "takes no formats or orders (the deployments are the sweep)", SUMMARY);
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    const int N = (int)N_, T = (int)T_, S = (int)S_, P = S * N;
    if (!ckpt) ckpt = drift_real_checkpoint();
    if (!ckpt) {
        fprintf(stderr,
            "deployments: skipped: no models/SmolLM2-135M-Instruct.Q4_1.gguf (./lab models get smollm2-135m), "
            "or give --checkpoint FILE\n");
        return DRIFT_EXIT_SKIPPED;
    }
    drift_checkpoint_t ck;
    drift_llm_run_open(&ck, &ckpt);
    if (!ck.gguf) drift_die("--checkpoint: %s: deployments needs a GGUF model (its tokenizer and chat template)", ckpt);
    const size_t V = (size_t)ck.cfg.vocab_size;
    /* S disjoint samples of N prompts: one draw of S N without replacement, cut in order */
    drift_chat_prompt_t *pr;
    char perr[DRIFT_LLM_ERR_MAX];
    if (T >= ck.cfg.seq_len) drift_die("--tokens: at most %d on this model (its context)", ck.cfg.seq_len - 1);
    if (drift_chat_prompts_load(&pr, &ck, set ? set : DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt", P, cli.seed,
            "deployments.prompts", ck.cfg.seq_len - T, perr, sizeof perr))
        drift_die("--prompt-set: %s", perr);

    /* the pairs of this profile and the distinct runs they need */
    int pairs[NPAIRS], npair = 0, nrun = 0;
    drift_deploy_run_t runs[2 * NPAIRS];
    int ra[NPAIRS], rb[NPAIRS];
    char derr[DRIFT_LLM_ERR_MAX];
    const char *ids[NPAIRS];
    int chosen[NPAIRS];
    for (int i = 0; i < NPAIRS; i++) ids[i] = PAIRS[i].id;
    drift_name_set(chosen, "--pairs", pairs_opt, ids, NPAIRS);
    for (int i = 0; i < NPAIRS; i++) {
        if (!chosen[i]) continue;
        pairs[npair] = i;
        const dep_ref_t *ab[2] = {&PAIRS[i].a, &PAIRS[i].b};
        int *at[2] = {&ra[npair], &rb[npair]};
        for (int k = 0; k < 2; k++)
            if ((*at[k] = drift_deploy_run_find(
                     runs, &nrun, 2 * NPAIRS, ab[k]->spec, ab[k]->other, derr, sizeof derr)) < 0)
                drift_die("deployment %s: %s", ab[k]->spec, derr);
        npair++;
    }
    const char *base = strrchr(ckpt, '/') ? strrchr(ckpt, '/') + 1 : ckpt;
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 5, 1);
    drift_out_meta(&out, T_PROMPTS, "table",
        "per (sample, prompt, pair): %d samples of %d prompts of %s, chat-wrapped, %d greedy tokens per deployment", S,
        N, base, T);
    drift_out_meta(&out, T_PROMPTS, "columns",
        "parted = the two texts differ within T tokens; step = the first differing token (0-based, -1: none); "
        "gap_a/gap_b = each deployment's own top-1 minus top-2 logit there; exact_gap12 = the exact model's top-1 minus top-2 on the common context; "
        "exact_gap_ab = exact logit of token_a minus that of token_b; exact_top1 = the exact argmax there");
    drift_out_meta(&out, T_PAIRS, "table",
        "per pair: prompts pooled over the samples; rate with its Wilson 95%% interval (the prompt is the unit)");
    drift_out_meta(&out, T_DEPS, "table",
        "every deployment decoded, its fields, and the tokens it generated (its CPU cost per token is printed on stderr)");
    drift_md_intro(&out,
        "%d pairs of deployments of %s, each differing in one knob (pairs that start from `" BASE "`: an A100 server), "
        "decode %d disjoint samples of %d prompts (the lab's prompt set in the model's chat template), %d greedy tokens each. "
        "The exact model (fp64, correctly rounded dot products) gives the exact logit gap at every parting.",
        npair, base, S, N, T);

    /* -- every run decodes every prompt: runs side by side on the cores, one model each -- */
    drift_progress_phase(&cli, "decode");
    int failed = drift_deploy_runs(runs, nrun, &ck, pr, P, T, "deployments.batch",
                     cli.threads > 0 ? cli.threads : omp_get_num_procs(), progress, &cli) != 0;
    if (failed) drift_die("a deployment's decode failed (or out of memory for its model)");

    /* -- partings, and the exact gaps there: prompts side by side, one exact model per core;
     * within a prompt the exact model resumes the context its last parting shared -- */
    drift_numerics_t nxe = drift_numerics_exact();
    drift_parting_t *pt = calloc((size_t)npair * (size_t)P, sizeof *pt);
    if (!pt) drift_die("out of memory for %d x %d partings", npair, P);
    int xworkers = cli.threads > 0 ? cli.threads : omp_get_num_procs();
    if (xworkers > P) xworkers = P;
    drift_progress_phase(&cli, "exact gaps at the partings");
#pragma omp parallel num_threads(xworkers) reduction(| : failed)
    {
        char xerr[DRIFT_LLM_ERR_MAX];
        drift_model_t *mex = NULL;
        drift_prefix_logits_t ex;
        int ok = !drift_model_create(&mex, &ck, &nxe, 1, xerr, sizeof xerr) && !drift_prefix_logits_init(&ex, mex);
        failed |= !ok;
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < P; i++) {
            if (omp_get_thread_num() == 0) drift_progress(&cli, (size_t)i, (size_t)P);
            for (int q = 0; ok && q < npair; q++) {
                const drift_gen_t *a = &runs[ra[q]].g[i], *b = &runs[rb[q]].g[i];
                int n = a->n < b->n ? a->n : b->n;
                if (drift_parting(&pt[q * P + i], a->token, NULL, b->token, NULL, n, (int)V, pr[i].tok, pr[i].n, &ex))
                    failed = 1;
            }
        }
        if (ok) drift_prefix_logits_free(&ex);
        drift_model_free(mex);
    }
    if (failed) drift_die("the exact reference at a parting failed (or out of memory for an exact model)");
    drift_progress(&cli, (size_t)P, (size_t)P);

    for (int r = 0; r < nrun; r++) {
        char s[DRIFT_DEPLOY_SPEC_MAX];
        drift_deployment_print(s, sizeof s, &runs[r].dep);
        drift_row(&out, T_DEPS, DRIFT_INT(r), DRIFT_TXT(s), DRIFT_INT(runs[r].other), DRIFT_INT(runs[r].tokens));
        if (!cli.quiet) /* the cost is the machine's, not data: stderr only */
            fprintf(stderr, "deployments: deployment %d: %.3g s thread CPU per generated token\n", r,
                runs[r].tokens ? runs[r].seconds / (double)runs[r].tokens : NAN);
    }
    /* -- per prompt, per pair, then pooled -- */
    typedef struct {
        long k, n, ks[64], ns[64];
        double step_med, gap_med, gap_max;
        int step_min, step_max;
    } agg_t;
    agg_t *ag = calloc((size_t)npair, sizeof *ag);
    double *buf = malloc((size_t)P * sizeof(double)), *buf2 = malloc((size_t)P * sizeof(double));
    if (!ag || !buf || !buf2) drift_die("out of memory for the pair summaries");
    for (int q = 0; q < npair; q++) {
        const pair_t *pp = &PAIRS[pairs[q]];
        int nk = 0;
        ag[q].step_min = -1, ag[q].step_max = -1;
        for (int i = 0; i < P; i++) {
            const drift_parting_t *p = &pt[q * P + i];
            const drift_gen_t *a = &runs[ra[q]].g[i], *b = &runs[rb[q]].g[i];
            int parted = p->step >= 0, st = p->step;
            ag[q].n++, ag[q].ns[(i / N)]++;
            if (parted) {
                ag[q].k++, ag[q].ks[(i / N)]++;
                buf[nk] = st, buf2[nk] = p->gap12, nk++;
                if (ag[q].step_min < 0 || st < ag[q].step_min) ag[q].step_min = st;
                if (st > ag[q].step_max) ag[q].step_max = st;
            }
            drift_row(&out, T_PROMPTS, DRIFT_INT((i / N)), DRIFT_INT(pr[i].index), DRIFT_TXT(pr[i].kind),
                DRIFT_INT(pr[i].n), DRIFT_TXT(pp->id), DRIFT_TXT(pp->change), DRIFT_INT(parted), DRIFT_INT(st),
                DRIFT_INT(parted ? p->tok_a : -1), DRIFT_INT(parted ? p->tok_b : -1),
                DRIFT_NUM(parted ? a->top1_logit[st] - a->top2_logit[st] : NAN),
                DRIFT_NUM(parted ? b->top1_logit[st] - b->top2_logit[st] : NAN), DRIFT_NUM(parted ? p->gap12 : NAN),
                DRIFT_NUM(parted ? p->gap_ab : NAN), DRIFT_INT(parted ? p->exact_top1 : -1));
        }
        if (drift_median(&ag[q].step_med, buf, (size_t)nk)) drift_die("out of memory for a median");
        ag[q].gap_max = -INFINITY;
        for (int k = 0; k < nk; k++) ag[q].gap_max = buf2[k] > ag[q].gap_max ? buf2[k] : ag[q].gap_max;
        if (drift_median(&ag[q].gap_med, buf2, (size_t)nk)) drift_die("out of memory for a median");
        if (!nk) ag[q].gap_max = NAN;
    }
    /* ranked by the pooled share, the larger first; ties keep the sweep's order */
    int rank[NPAIRS];
    for (int q = 0; q < npair; q++) rank[q] = q;
    for (int i = 1; i < npair; i++)
        for (int j = i; j > 0 && ag[rank[j]].k * ag[rank[j - 1]].n > ag[rank[j - 1]].k * ag[rank[j]].n; j--) {
            int t = rank[j];
            rank[j] = rank[j - 1], rank[j - 1] = t;
        }
    drift_md_text(&out,
        "**The knobs ranked by how often they change the text** (a parting: the two greedy texts differ within %d tokens; "
        "pooled over the %d samples; the interval is Wilson's at 95 %%, the prompt the unit):\n\n",
        T, S);
    for (int j = 0; j < npair; j++) {
        int q = rank[j];
        const pair_t *pp = &PAIRS[pairs[q]];
        char rate[96], per[256] = "", steps[64] = "-", gaps[64] = "-";
        drift_rate_text(rate, sizeof rate, ag[q].k, ag[q].n);
        size_t at = 0;
        for (int s = 0; s < S; s++)
            at += (size_t)snprintf(per + at, sizeof per - at, "%s%ld/%ld", s ? ", " : "", ag[q].ks[s], ag[q].ns[s]);
        if (ag[q].k) {
            snprintf(steps, sizeof steps, "%d / %.3g / %d", ag[q].step_min, ag[q].step_med, ag[q].step_max);
            snprintf(gaps, sizeof gaps, "%.3g / %.3g", ag[q].gap_med, ag[q].gap_max);
        }
        drift_row(&out, T_MD_RANK, DRIFT_INT(j + 1), DRIFT_TXT(pp->knob), DRIFT_TXT(pp->change), DRIFT_TXT(rate),
            DRIFT_TXT(per), DRIFT_TXT(steps), DRIFT_TXT(gaps));
        char sa[DRIFT_DEPLOY_SPEC_MAX], sb[DRIFT_DEPLOY_SPEC_MAX];
        drift_deployment_print(sa, sizeof sa, &runs[ra[q]].dep);
        drift_deployment_print(sb, sizeof sb, &runs[rb[q]].dep);
        double lo, hi;
        if (drift_wilson(&lo, &hi, ag[q].k, ag[q].n, 1.959963984540054))
            drift_die("no Wilson interval for %ld of %ld", (long)ag[q].k, (long)ag[q].n);
        drift_row(&out, T_PAIRS, DRIFT_TXT(pp->id), DRIFT_TXT(pp->knob), DRIFT_TXT(pp->change), DRIFT_TXT(sa),
            DRIFT_TXT(sb), DRIFT_INT(ag[q].n), DRIFT_INT(ag[q].k), DRIFT_NUM((double)ag[q].k / (double)ag[q].n),
            DRIFT_NUM(lo), DRIFT_NUM(hi), DRIFT_TXT(per), DRIFT_NUM(ag[q].step_med), DRIFT_NUM(ag[q].gap_med),
            DRIFT_NUM(ag[q].gap_max));
    }
    drift_md_end(&out, T_MD_RANK);
    drift_md_text(&out,
        "**The deployments, spelled out** (deployment.h's fields; `other requests` = the batch's companions drawn from a second stream):\n\n");
    for (int r = 0; r < nrun; r++) {
        char s[DRIFT_DEPLOY_SPEC_MAX], f[DRIFT_DEPLOY_SPEC_MAX + 32];
        drift_deployment_print(s, sizeof s, &runs[r].dep);
        snprintf(f, sizeof f, "`%s`%s", s, runs[r].other ? " (other requests)" : "");
        drift_row(&out, T_MD_DEPS, DRIFT_INT(r), DRIFT_TXT(f));
    }
    drift_md_end(&out, T_MD_DEPS);
    drift_md_text(&out, "**Takeaway.**\n\n");
    /* the table has every rate and the per-sample counts; the takeaway only separates the pairs that
     * parted a text from those that did not: which of them parted in every sample and which in some
     * changes with the seed (three samples of three prompts), so it is not a finding */
    char parted[1024] = "", never[1024] = "";
    double gmax = -INFINITY;
    long nmin = 0; /* the smallest pair sample: its bound is the loosest */
    for (int q = 0; q < npair; q++) {
        const pair_t *pp = &PAIRS[pairs[q]];
        char *dst = ag[q].k == 0 ? never : parted;
        size_t at = strlen(dst);
        snprintf(dst + at, 1024 - at, "%s%s (%ld/%ld)", at ? ", " : "", pp->id, ag[q].k, ag[q].n);
        if (ag[q].k && ag[q].gap_max > gmax) gmax = ag[q].gap_max;
        if (!nmin || ag[q].n < nmin) nmin = ag[q].n;
    }
    if (parted[0]) drift_md_text(&out, "- Parted texts (prompts pooled over the samples): %s.\n", parted);
    if (never[0]) {
        double lo, hi;
        if (drift_wilson(&lo, &hi, 0, nmin, 1.959963984540054))
            drift_die("no Wilson interval for 0 of %ld", (long)nmin);
        drift_md_text(&out,
            "- No parting in these prompts: %s (each rate below %.3g %% at 95 %%). The same-requests rerun is 0 by construction; "
            "GPU atomics, autotuning and stream scheduling are not modelled.\n",
            never, 100 * hi);
    }
    if (gmax > -INFINITY)
        drift_md_text(&out, "- Every parting sat at an exact top-2 gap of at most %.3g logits.\n", gmax);
    for (int q = 0; q < npair; q++) {
        if (strcmp(PAIRS[pairs[q]].id, "card-rtx4090")) continue;
        const drift_deployment_t *da = &runs[ra[q]].dep, *db = &runs[rb[q]].dep;
        int f, l, nd = drift_model_kernels_differ(&ck.cfg, da->nx.sms, db->nx.sms, da->nx.min_slice, 1024, &f, &l);
        long rmax = 0; /* the largest batch a decode step of these runs saw */
        for (int i = 0; i < P; i++)
            for (int k = 0; k < runs[ra[q]].g[i].n; k++)
                rmax = runs[ra[q]].g[i].rows[k] > rmax ? runs[ra[q]].g[i].rows[k] : rmax;
        /* its rate is in the lines above: this one says what the pair can and cannot show */
        drift_md_text(&out,
            "- A100 against RTX 4090: the lab's two cards differ only in SM count (%d, %d; one bf16 tensor-core model): "
            "other GEMM kernels at %d row counts of 1 .. 1024 (from %d); decode steps here reached %ld rows. Per-architecture libraries are not modelled: a floor.\n",
            da->nx.sms, db->nx.sms, nd, f, rmax);
    }
    drift_md_text(&out, "\n");
    drift_out_commit(&out);
    drift_deploy_runs_free(runs, nrun, P);
    drift_chat_prompts_free(pr, P);
    free(pt), free(ag), free(buf), free(buf2);
    drift_checkpoint_free(&ck);
    return 0;
}
