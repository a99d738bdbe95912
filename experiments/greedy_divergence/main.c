/* greedy_divergence.c — R identical greedy requests, each decoded inside a different batch of a
 * continuously batching server: how many distinct completions come back, where do they part,
 * and how close to a tie was the exact logit gap where they did? (Thinking Machines
 * 2025: 80 distinct completions of 1000 on Qwen3-235B, 1 with batch-invariant kernels.)
 *
 * Setup: SmolLM2-135M-Instruct (GGUF) by default, one prompt of the lab's prompt set drawn by the
 * seed and wrapped in the model's chat template (stories260K with --checkpoint, and in the quick
 * profile, from BOS); the kernel policy fills an H100 (132 SMs, split-K slices of at least 256:
 * the lab's unscaled defaults).
 * Sweep: configurations (kernel policy, compute format, LayerCast, tensor parallelism with ring
 * or tree all-reduce, attention kernel) x R requests. Request r sits in a batch of B_r
 * sequences (B_r uniform in 1..--batch-max) whose random companions join with their prompts
 * and leave after random lengths (drift_batch_rows); its prompt is --prompt-ids (BOS by
 * default), it generates --tokens tokens greedily (no stop at BOS: every completion has the
 * same length).
 *
 * Measure: a request's bits depend only on its own tokens and on the choices its batch forces
 * on the kernels (split-K counts, ring chunks, split-KV counts: drift_model_plan), so each
 * request is decoded alone with drift_model_set_shape standing for its batch (tests/
 * test_model.c holds this bit for bit against the real batched run), and requests are sorted
 * by their sequence of plans: one that shares its first s plans with the previous request
 * resumes from step s, so each distinct shape sequence is computed once and shared prefixes
 * once. Divergence is against the request decoded alone (batch 1); at the first differing
 * step, the exact reference (fp64, correctly rounded dot products) teacher-forced on the
 * common prefix gives the exact logit gap between the two tokens.
 *
 * Run: ./lab run greedy_divergence [--requests R --tokens T --seed N]
 * Look for: vendor-like bf16 returns several completions, parting where the exact gap is tiny;
 * batch-invariant kernels with fixed-size split-KV return exactly one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "cli.h"
#include "llm_run.h"
#include "drift.h"
#include "metrics.h"
#include "model.h"
#include "greedy_divergence_lab.h"
#include "philox.h"
#include "plan_set.h"
#include "chat_prompts.h"
#include "policy.h"

static const drift_gd_conf_t CONFS[] = {
    {"vendor-fp32", "vendor-like", "fp32/seq/fp32/fp32", "fp32", "standard", 1, "ring"},
    {"vendor-bf16", "vendor-like", "bf16/tc:h100/fp32/bf16", "fp32", "standard", 1, "ring"},
    {"vendor-fp16", "vendor-like", "fp16/tc:h100/fp32/fp16", "fp32", "standard", 1, "ring"},
    {"vendor-layercast", "vendor-like", "fp32/seq/fp32/fp32", "bf16", "standard", 1, "ring"},
    {"vendor-bf16-tp2-ring", "vendor-like", "bf16/tc:h100/fp32/bf16", "fp32", "standard", 2, "ring"},
    {"vendor-bf16-tp2-tree", "vendor-like", "bf16/tc:h100/fp32/bf16", "fp32", "standard", 2, "tree"},
    {"vendor-bf16-tp4-ring", "vendor-like", "bf16/tc:h100/fp32/bf16", "fp32", "standard", 4, "ring"},
    {"vendor-bf16-flash", "vendor-like", "bf16/tc:h100/fp32/bf16", "fp32", "flash:16,16", 1, "ring"},
    {"invariant-fp32-splitkv-count", "batch-invariant", "fp32/seq/fp32/fp32", "fp32", "splitkv:auto,16", 1, "ring"},
    {"invariant-fp32-splitkv-size", "batch-invariant", "fp32/seq/fp32/fp32", "fp32", "splitkv:size=32,16", 1, "ring"},
    {"invariant-bf16-splitkv-count", "batch-invariant", "bf16/tc:h100/fp32/bf16", "fp32", "splitkv:auto,16", 1, "ring"},
    {"invariant-bf16-splitkv-size", "batch-invariant", "bf16/tc:h100/fp32/bf16", "fp32", "splitkv:size=32,16", 1,
        "ring"},
    {"invariant-bf16-tp2-ring", "batch-invariant", "bf16/tc:h100/fp32/bf16", "fp32", "splitkv:size=32,16", 2, "ring"},
};
#define NCONF ((int)(sizeof CONFS / sizeof CONFS[0]))

static void make_numerics(drift_numerics_t *nx, const drift_gd_conf_t *c, long sms, long min_slice)
{
    *nx = drift_numerics_fp32();
    drift_recipe_t r;
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_model_recipe_parse(&r, c->recipe)) drift_die("configuration %s: bad recipe %s", c->name, c->recipe);
    drift_numerics_set_mm(nx, &r);
    if (drift_format_parse(&nx->weights, c->weights)) drift_die("configuration %s: bad weights", c->name);
    if (drift_policy_parse(&nx->policy, c->policy)) drift_die("configuration %s: bad policy", c->name);
    if (drift_numerics_set_attention(nx, c->attention, err, sizeof err))
        drift_die("configuration %s: %s", c->name, err);
    if (drift_allreduce_parse(&nx->allreduce, c->allreduce)) drift_die("configuration %s: bad all-reduce", c->name);
    nx->tp = c->tp, nx->sms = (int)sms, nx->min_slice = (int)min_slice;
}

typedef struct {
    int batch;
    int *plan;     /* T plan ids */
    int *tok;      /* T tokens */
    int first_div; /* -1: same as alone */
    int cls;       /* completion class */
} req_t;

static const int *g_T; /* for the sort */
static int by_plan(const void *a, const void *b)
{
    const req_t *x = *(req_t *const *)a, *y = *(req_t *const *)b;
    for (int t = 0; t < *g_T; t++)
        if (x->plan[t] != y->plan[t]) return x->plan[t] < y->plan[t] ? -1 : 1;
    return x->batch != y->batch ? (x->batch < y->batch ? -1 : 1) : (x < y ? -1 : x > y);
}


int main(int argc, char **argv)
{
    long R_ = 0, T_ = 0, Bmax = 0, sms = 132, min_slice = DRIFT_POLICY_MIN_SLICE, bin = 0;
    const char *ckpt = NULL, *prompt_ids = NULL, *confs_opt = NULL, *set = NULL;
    const drift_cli_opt_t opts[] = {
        {"requests", DRIFT_OPT_INT, &R_, "R", "identical greedy requests per configuration", 1, 100000,
            {"4", "64", "1000"}},
        {"tokens", DRIFT_OPT_INT, &T_, "T", "tokens each request generates", 1, 4096, {"16", "32", "256"}},
        {"batch-max", DRIFT_OPT_INT, &Bmax, "B", "batch sizes uniform in 1..B", 1, 4096, {"64", "64", "64"}},
        {"sms", DRIFT_OPT_INT, &sms, "N", "multiprocessors the kernel policy fills (132: an H100)", 1, 100000, {0}},
        {"min-slice", DRIFT_OPT_INT, &min_slice, "N",
            "split-K minimum slice (256, the policy's own; 4 makes stories260K's tiny GEMMs split)", 1, 1 << 30, {0}},
        {"bin", DRIFT_OPT_INT, &bin, "N", "histogram bin width in steps", 1, 4096, {"4", "8", "16"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE",
            "checkpoint, llama2.c .bin or GGUF (default SmolLM2-135M-Instruct; stories260K in the quick profile)", 0, 0,
            {0}},
        {"prompt-ids", DRIFT_OPT_STRING, &prompt_ids, "IDS",
            "prompt token ids, comma-separated (default: a GGUF model's prompt drawn from --prompt-set; llama2.c: 1, BOS)",
            0, 0, {0}},
        {"prompt-set", DRIFT_OPT_STRING, &set, "FILE",
            "prompt set a GGUF model's prompt is drawn from (default prompts/lab-prompts.txt)", 0, 0, {0}},
        {"configs", DRIFT_OPT_STRING, &confs_opt, "LIST", "configurations to run, comma-separated, or all", 0, 0,
            {"vendor-bf16,invariant-bf16-splitkv-size",
                "vendor-fp32,vendor-bf16,invariant-fp32-splitkv-count,invariant-bf16-splitkv-size", "all"}},
    };
    const drift_cli_spec_t spec = {.name = "greedy_divergence",
        .question =
            "How many distinct completions do identical greedy requests get when each is batched with different companions, and where do they part?",
        .default_orders = "seq",
        DRIFT_CLI_OPTS(opts),
        .no_orders =
            "takes no formats or orders (each configuration fixes its formats and kernels; see the summary CSV)",
        .cpu_only = NULL, /* the decoder computes through the backend */
        .summary =
            "each request is the same prompt decoded greedily; only its companions in the batch differ. Under the "
            "vendor-like policy the batch decides how each GEMM splits K, so some requests compute other bits, and once "
            "a near tie flips one token the rest of the completion changes. The exact logit gap where they part is tiny. "
            "Batch-invariant kernels with a fixed split size give one completion; a split-KV count chosen from the batch "
            "brings the divergence back."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    const int R = (int)R_, T = (int)T_;

    /* -- options: configurations, checkpoint, prompt -- */
    int use[NCONF], nuse = 0;
    if (confs_opt && !strcmp(confs_opt, "all")) confs_opt = NULL;
    for (int c = 0; c < NCONF; c++) use[c] = !confs_opt;
    if (confs_opt) {
        char buf[1024];
        if (strlen(confs_opt) >= sizeof buf) drift_die("--configs: too long");
        strcpy(buf, confs_opt);
        for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
            int f = -1;
            for (int c = 0; c < NCONF; c++)
                if (!strcmp(s, CONFS[c].name)) f = c;
            if (f < 0)
                drift_die(
                    "--configs: unknown configuration '%s' (accepted: all, or names such as vendor-fp32, vendor-bf16, vendor-bf16-tp2-ring, "
                    "invariant-bf16-splitkv-size; see the source's table)",
                    s);
            use[f] = 1;
        }
    }
    for (int c = 0; c < NCONF; c++) nuse += use[c];
    if (!nuse) drift_die("--configs: no configuration named");
    if (drift_llm_run_choose(&ckpt, &cli, NULL)) return DRIFT_EXIT_SKIPPED;
    drift_checkpoint_t ck;
    drift_llm_run_open(&ck, &ckpt); /* and one thread: the model's GEMMs are too small for a parallel region each */
    char err[DRIFT_LLM_ERR_MAX];
    const int V = ck.cfg.vocab_size;
    int prompt[256], np = 0;
    char prompt_desc[512];
    if (!prompt_ids && ck.gguf) { /* one prompt of the set, drawn by the seed, in the chat template */
        if (!set) set = DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt";
        drift_chat_prompt_t *cp;
        if (drift_chat_prompts_load(&cp, &ck, set, 1, cli.seed, "greedy_divergence.prompt", 256, err, sizeof err))
            drift_die("--prompt-set: %s", err);
        np = cp[0].n;
        memcpy(prompt, cp[0].tok, (size_t)np * sizeof(int));
        snprintf(prompt_desc, sizeof prompt_desc, "prompt %d of %s (%s, %d tokens in the chat template: \"%.120s\")",
            cp[0].index, strrchr(set, '/') ? strrchr(set, '/') + 1 : set, cp[0].kind, np, cp[0].text);
        drift_chat_prompts_free(cp, 1);
    } else {
        if (set)
            drift_die("--prompt-set: %s", ck.gguf ? "give --prompt-set or --prompt-ids, not both"
                                                  : "a llama2.c checkpoint holds no tokenizer (give --prompt-ids)");
        if (!prompt_ids) prompt_ids = "1";
        np = drift_parse_ids("--prompt-ids", prompt_ids, prompt, 256, V - 1);
        snprintf(prompt_desc, sizeof prompt_desc, "prompt ids %s", prompt_ids);
    }
    if (np + T > ck.cfg.seq_len)
        drift_die("--tokens: prompt (%d) + tokens (%d) must fit the context of %d", np, T, ck.cfg.seq_len);
    for (int c = 0; c < NCONF; c++) {
        drift_numerics_t nx;
        if (!use[c]) continue;
        make_numerics(&nx, &CONFS[c], sms, min_slice);
        if (drift_numerics_check(&nx, &ck.cfg, err, sizeof err))
            drift_die("configuration %s on this checkpoint: %s", CONFS[c].name, err);
    }

    /* -- the batches: the same for every configuration -- */
    req_t *rq = calloc((size_t)R + 1, sizeof *rq); /* rq[R]: the request alone */
    int *rows = malloc((size_t)(R + 1) * (size_t)T * sizeof(int));
    int *plans = malloc((size_t)(R + 1) * (size_t)T * sizeof(int));
    int *toks = malloc((size_t)(R + 1) * (size_t)T * sizeof(int));
    req_t **order = malloc((size_t)(R + 1) * sizeof *order);
    drift_plan_set_t *in = malloc(sizeof *in);
    double *lg = malloc((size_t)V * sizeof(double));
    if (!rq || !rows || !plans || !toks || !order || !in || !lg)
        drift_die_oom((double)(R + 1) * (sizeof *rq + 3.0 * T * sizeof(int)) + sizeof *in,
            "the batches of %d requests x %d tokens (--requests, --tokens: fewer)", R + 1, T);
    drift_stream_t st;
    drift_stream_init(&st, cli.seed, drift_fnv1a32("greedy_divergence"), 0, 0);
    for (int r = 0; r <= R; r++) {
        drift_batching_t bt = {r == R ? 1 : 1 + (int)drift_stream_below(&st, (uint32_t)Bmax), 0, 32, 64};
        uint64_t hi = drift_stream_u32(&st);
        bt.seed = (hi << 32) | drift_stream_u32(&st);
        rq[r].batch = bt.batch;
        rq[r].plan = plans + (size_t)r * (size_t)T;
        rq[r].tok = toks + (size_t)r * (size_t)T;
        if (drift_batch_rows(rows + (size_t)r * (size_t)T, T, np, &bt, V, ck.cfg.seq_len))
            drift_die("batch schedule failed");
    }

    /* the exact model, teacher-forced on the alone completions (cached by prefix) */
    drift_numerics_t exn = drift_numerics_exact();
    drift_model_t *exm;
    if (drift_model_create(&exm, &ck, &exn, 1, err, sizeof err)) drift_die("exact model: %s", err);

    int *exseq = malloc((size_t)(np + T) * sizeof(int));
    double *exl = malloc((size_t)(np + T) * (size_t)V * sizeof(double));
    int exlen = 0; /* tokens of exseq scored into exl */
    drift_gd_result_t res[NCONF] = {{0}};
    drift_gd_div_t *divs = malloc((size_t)NCONF * (size_t)R * sizeof *divs); /* res[c].divs = divs + c R */
    if (!exseq || !exl || !divs)
        drift_die_oom((double)(np + T) * V * sizeof(double), "the exact logits of %d tokens x %zu (--tokens: fewer)",
            np + T, (size_t)V);
    for (int c = 0; c < NCONF; c++) {
        if (!use[c]) continue;
        const drift_gd_conf_t *cf = &CONFS[c];
        drift_progress(&cli, (size_t)c, (size_t)NCONF);
        drift_numerics_t nx;
        make_numerics(&nx, cf, sms, min_slice);
        drift_model_t *m;
        if (drift_model_create(&m, &ck, &nx, 1, err, sizeof err)) drift_die("%s: %s", cf->name, err);
        /* plans */
        drift_plan_set_clear(in);
        long p[DRIFT_PLAN_LEN_MAX];
        for (int r = 0; r <= R; r++)
            for (int t = 0; t < T; t++) {
                int n = drift_model_plan(
                    m, (size_t)rows[(size_t)r * (size_t)T + (size_t)t], rq[r].batch, np + t, p, DRIFT_PLAN_LEN_MAX);
                if (n < 0) drift_die("plan failed");
                if ((rq[r].plan[t] = drift_plan_number(in, p, n)) < 0)
                    drift_die("more than %d distinct kernel plans", DRIFT_PLAN_SET_MAX);
            }
        for (int r = 0; r <= R; r++) order[r] = &rq[r];
        g_T = &T;
        qsort(order, (size_t)R + 1, sizeof *order, by_plan);
        /* decode, resuming from the common plan prefix of the previous request */
        long computed = 0;
        int shapes = 0;
        const req_t *prev = NULL;
        for (int i = 0; i <= R; i++) {
            req_t *q = order[i];
            int s = 0;
            if (prev)
                while (s < T && prev->plan[s] == q->plan[s]) s++;
            if (!prev || s < T) shapes++;
            if (prev) memcpy(q->tok, prev->tok, (size_t)s * sizeof(int));
            for (int t = s; t < T; t++) {
                drift_seq_step_t sq = t == 0 ? (drift_seq_step_t){0, 0, np, prompt}
                                             : (drift_seq_step_t){0, np + t - 1, 1, &q->tok[t - 1]};
                drift_model_set_shape(m, (size_t)rows[(size_t)(q - rq) * (size_t)T + (size_t)t], q->batch);
                int rc = drift_model_step(m, lg, &sq, 1);
                if (rc) drift_die("%s: forward step failed: %s", cf->name, drift_strerror(rc));
                drift_top2_t tt;
                drift_top2(&tt, lg, (size_t)V);
                q->tok[t] = (int)tt.top1;
                computed++;
            }
            prev = q;
        }
        drift_model_free(m);
        /* distinct completions, divergence from the request alone */
        const req_t *al = &rq[R];
        int distinct = 0, ndiv = 0, maxdiv = -1;
        for (int r = 0; r < R; r++) {
            rq[r].cls = -1;
            for (int q = 0; q < r && rq[r].cls < 0; q++)
                if (!memcmp(rq[q].tok, rq[r].tok, (size_t)T * sizeof(int))) rq[r].cls = rq[q].cls;
            if (rq[r].cls < 0) rq[r].cls = distinct++;
            int t = 0;
            while (t < T && rq[r].tok[t] == al->tok[t]) t++;
            rq[r].first_div = t < T ? t : -1;
            if (t < T && t > maxdiv) maxdiv = t;
        }
        /* exact logits along the alone completion up to the last divergence */
        if (maxdiv >= 0) {
            int need = np + maxdiv; /* tokens fed: prompt + alone tokens 0 .. maxdiv-1 */
            int same = 0;
            while (same < exlen && same < need && exseq[same] == (same < np ? prompt[same] : al->tok[same - np]))
                same++;
            for (int k = 0; k < need; k++) exseq[k] = k < np ? prompt[k] : al->tok[k - np];
            for (int k = same; k < need; k++) {
                drift_seq_step_t sq = {0, k, 1, &exseq[k]};
                if (drift_model_step(exm, exl + (size_t)k * (size_t)V, &sq, 1)) drift_die("exact reference failed");
            }
            exlen = need;
        }
        drift_gd_div_t *dv = divs + (size_t)c * (size_t)R;
        for (int r = 0; r < R; r++) {
            int t = rq[r].first_div;
            if (t < 0) continue;
            const double *L = exl + (size_t)(np + t - 1) * (size_t)V;
            drift_top2_t tt;
            drift_top2(&tt, L, (size_t)V);
            dv[ndiv++] = (drift_gd_div_t){
                r, rq[r].batch, t, al->tok[t], rq[r].tok[t], L[al->tok[t]] - L[rq[r].tok[t]], L[tt.top1] - L[tt.top2]};
        }
        res[c] = (drift_gd_result_t){shapes, computed, distinct, ndiv, dv};
    }
    drift_progress(&cli, (size_t)NCONF, (size_t)NCONF);

    const drift_greedy_div_lab_t lab = {
        &cli, CONFS, NCONF, use, res, R, T, Bmax, sms, min_slice, bin, prompt_desc, ckpt, &ck.cfg};
    drift_greedy_div_write(&lab); /* greedy_divergence_report.c */
    drift_model_free(exm);
    drift_checkpoint_free(&ck);
    free(rq), free(rows), free(plans), free(toks), free(order), free(in), free(lg), free(divs);
    free(exseq), free(exl);
    return 0;
}
