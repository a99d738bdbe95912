/* speculative.c — does speculative decoding, whose verify pass runs the target model on k+1
 * tokens at once, accept a different text than plain greedy decoding of the same model?
 *
 * Setup: SmolLM2-135M-Instruct (GGUF) by default, --prompts prompts of the lab's prompt set drawn
 * by the seed (without replacement) and wrapped in the model's chat template; the kernel policy
 * fills an H100 as it is (132 SMs, split-K slices of at least 256: the lab's unscaled defaults).
 * stories260K in the quick profile and with a llama2.c --checkpoint: prompts of BOS and one
 * random first token from the seed's Philox stream, and (quick profile) the policy on a device
 * scaled to the tiny model (16 SMs, split-K from a slice of 4, so its GEMMs split as a big
 * model's do; on an unscaled H100 none of them splits).
 * Sweep: target configurations: vendor-like and batch-invariant kernel policy, fp32 and bf16
 * (H100 tensor-core model) recipes; draft lengths k in --draft.
 * Measure: plain greedy decoding of --tokens tokens (one row per step, M = 1) against greedy
 * speculative decoding: a draft (the same model under LayerCast, bf16 weights and fp32 compute,
 * decoding one token at a time with its own KV cache) proposes k tokens; the target verifies
 * them in one pass of M = k+1 rows (emulated row by row with drift_model_set_shape(k+1, k+1):
 * each row gets the bits it gets inside the k+1-row pass, the LM head included), accepts the
 * longest prefix that matches its own argmax, then adds its own token. Per (configuration, k,
 * prompt): the first token where the accepted text differs from plain greedy decoding, and the
 * mean tokens accepted per verify pass. Per (policy, M = 2 .. the larger of 129 and twice the
 * first M that changes them): whether a pass of M rows gets other kernels than M = 1
 * (drift_model_plan), for this model's GEMM shapes.
 * Run: ./lab run speculative
 * Look for: batch-invariant kernels never part from plain greedy; the vendor-like policy keeps the
 * same kernels while M = k+1 stays below the first M of the plan table that changes them, so
 * drafts shorter than that do not part either. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chat_prompts.h"
#include "checkpoint.h"
#include "cli.h"
#include "draft.h"
#include "drift.h"
#include "greedy_step.h"
#include "kernel_plans.h"
#include "llm_run.h"
#include "model.h"
#include "output.h"
#include "philox.h"
#include "policy.h"
#include "speculative_takeaway.h"

static const char QUESTION[] =
    "Does speculative decoding, whose verify pass runs the target on k+1 tokens at once, accept a different text than plain greedy decoding of the same model?";
static const char SUMMARY[] =
    "greedy speculative decoding is meant to give exactly the target's greedy text, but the verify pass runs M = k+1 "
    "rows where plain decoding runs one. Under batch-invariant kernels the accepted text is exactly the plain greedy "
    "text whatever the draft; under the lab's vendor-like policy it is too as long as M = k+1 keeps the kernels "
    "of M = 1 (the same split counts), and the plan table says from which M they change on this model.";

enum { T_RUN, T_SUM, T_PLAN, T_MD };
static const drift_col_t RUN[] = {DRIFT_C_TEXT("config"), DRIFT_C_INT("k"), DRIFT_C_INT("prompt"),
    DRIFT_C_INT("first_token"), DRIFT_C_INT("tokens"), DRIFT_C_INT("verify_passes"),
    DRIFT_C_NUM("accepted_per_pass", "%.6g"), DRIFT_C_INT("first_div_vs_plain"), DRIFT_C_INT("same_as_plain")};
/* a chat model's prompts are named by their place in the set */
static const drift_col_t RUN_CHAT[] = {DRIFT_C_TEXT("config"), DRIFT_C_INT("k"), DRIFT_C_INT("prompt"),
    DRIFT_C_INT("set_index"), DRIFT_C_TEXT("kind"), DRIFT_C_INT("prompt_tokens"), DRIFT_C_INT("tokens"),
    DRIFT_C_INT("verify_passes"), DRIFT_C_NUM("accepted_per_pass", "%.6g"), DRIFT_C_INT("first_div_vs_plain"),
    DRIFT_C_INT("same_as_plain")};
static const drift_col_t SUM[] = {DRIFT_C_TEXT("config"), DRIFT_C_TEXT("policy"), DRIFT_C_TEXT("recipe"),
    DRIFT_C_INT("k"), DRIFT_C_INT("M"), DRIFT_C_INT("prompts"), DRIFT_C_INT("differ"),
    DRIFT_C_NUM("frac_differ", "%.6g"), DRIFT_C_INT("first_div_min"), DRIFT_C_NUM("accepted_per_pass", "%.6g")};
static const drift_col_t PLAN[] = {DRIFT_C_TEXT("policy"), DRIFT_C_INT("M"), DRIFT_C_INT("kernels_differ_from_M1")};
static const drift_col_t MD[] = {DRIFT_C_TEXT("config"), DRIFT_C_INT("k"), DRIFT_C_INT("prompts"),
    DRIFT_C_INT("texts differing from plain greedy"), DRIFT_C_INT("earliest divergence"),
    DRIFT_C_NUM("accepted per verify", "%.3g")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, RUN, 9}, {"_summary.csv", NULL, 0, SUM, 10},
    {"_plans.csv", NULL, 0, PLAN, 3}, {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 6}};

typedef struct {
    const char *name, *policy, *recipe;
} conf_t;
static const conf_t CONFS[] = {
    {"vendor-fp32", "vendor-like", "fp32/seq/fp32/fp32"},
    {"vendor-bf16", "vendor-like", "bf16/tc:h100/fp32/bf16"},
    {"invariant-fp32", "batch-invariant", "fp32/seq/fp32/fp32"},
    {"invariant-bf16", "batch-invariant", "bf16/tc:h100/fp32/bf16"},
};
#define NCONF ((int)(sizeof CONFS / sizeof CONFS[0]))
#define DRAFT_RECIPE "fp32/seq/fp32/fp32" /* with bf16 weights: LayerCast */
#define PLAN_MAX 129                      /* the plan table's M reach at least here (two 64-row tiles and one row), */
#define PLAN_SEARCH 4096                  /* and twice the first M that changes the kernels, searched up to here */

static void numerics(drift_numerics_t *nx, const char *policy, const char *recipe, long sms, long min_slice)
{
    *nx = drift_numerics_fp32();
    if (drift_numerics_set_recipe(nx, recipe)) drift_die("bad recipe %s", recipe);
    if (drift_policy_parse(&nx->policy, policy)) drift_die("bad policy %s", policy);
    nx->sms = (int)sms, nx->min_slice = (int)min_slice;
}

int main(int argc, char **argv)
{
    long R_ = 0, T_ = 0, sms = 0, min_slice = 0;
    drift_intlist_t K = {{0}, 0};
    const char *ckpt = NULL, *set = NULL;
    const drift_cli_opt_t opts[] = {
        {"prompts", DRIFT_OPT_INT, &R_, "R",
            "prompts (a GGUF model's drawn from --prompt-set; llama2.c: BOS and one random first token each)", 1, 4096,
            {"2", "2", "16"}},
        {"tokens", DRIFT_OPT_INT, &T_, "T", "greedy tokens per completion", 1, 4096, {"16", "10", "64"}},
        {"draft", DRIFT_OPT_INTLIST, &K, "K,K,...", "draft lengths k (the verify pass has M = k+1 rows)", 1, 256,
            {"4", "2,8", "1,2,3,4,6,8"}},
        {"sms", DRIFT_OPT_INT, &sms, "N",
            "multiprocessors the kernel policy fills (132: an H100; quick: 16, scaled to stories260K)", 1, 100000,
            {"16", "132", "132"}},
        {"min-slice", DRIFT_OPT_INT, &min_slice, "N",
            "split-K minimum slice (256, the policy's own; quick: 4, scaled to stories260K)", 1, 1 << 30,
            {"4", "256", "256"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE",
            "checkpoint, llama2.c .bin or GGUF (default SmolLM2-135M-Instruct; stories260K in the quick profile)", 0, 0,
            {0}},
        {"prompt-set", DRIFT_OPT_STRING, &set, "FILE",
            "prompt set a GGUF model's prompts are drawn from (default prompts/lab-prompts.txt)", 0, 0, {0}},
    };
    const drift_cli_spec_t spec = DRIFT_LLM_SPEC("speculative", QUESTION, opts,
        "takes no formats or orders (the configurations are the sweep: vendor-like and batch-invariant, fp32 and bf16)",
        SUMMARY);
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    const int R = (int)R_, T = (int)T_;
    if (drift_llm_run_choose(&ckpt, &cli, NULL)) return DRIFT_EXIT_SKIPPED;
    drift_checkpoint_t ck;
    drift_llm_run_open(&ck, &ckpt); /* and one thread: the model's GEMMs are too small for a parallel region each */
    char err[DRIFT_LLM_ERR_MAX];
    int kmax = 0;
    for (int i = 0; i < K.n; i++) kmax = K.v[i] > kmax ? (int)K.v[i] : kmax;
    const size_t V = (size_t)ck.cfg.vocab_size;
    const char *base = strrchr(ckpt, '/') ? strrchr(ckpt, '/') + 1 : ckpt;
    const int h100 = sms == 132 && min_slice == DRIFT_POLICY_MIN_SLICE; /* the policy unscaled */
    const int scaled = !ck.gguf && !h100;                               /* the quick profile's stories260K */
    const char *device =
        h100     ? " (an H100 as it is)"
        : scaled ? " (scaled to the tiny model as greedy_divergence: on an unscaled H100 no GEMM of this model splits)"
                 : "";

    /* -- the prompts: a chat model's from the set, a llama2.c model's BOS and a random token -- */
    drift_chat_prompt_t *cp = NULL;
    int npmax = 2;
    if (ck.gguf) {
        if (T + kmax + 2 > ck.cfg.seq_len)
            drift_die("--tokens: at most %d with --draft up to %d on this model", ck.cfg.seq_len - 2 - kmax, kmax);
        if (drift_chat_prompts_load(&cp, &ck, set ? set : DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt", R, cli.seed,
                "speculative.prompts", ck.cfg.seq_len - T - kmax - 1, err, sizeof err))
            drift_die("--prompt-set: %s", err);
        for (int r = 0; r < R; r++) npmax = cp[r].n > npmax ? cp[r].n : npmax;
    } else {
        if (set)
            drift_die(
                "--prompt-set: a llama2.c checkpoint holds no tokenizer (its prompts are BOS and a random token)");
        if (2 + T + kmax > ck.cfg.seq_len)
            drift_die("--tokens: at most %d with --draft up to %d on this checkpoint", ck.cfg.seq_len - 2 - kmax, kmax);
    }
    const int cap = npmax + T + kmax + 1;

    drift_table_spec_t tables[4];
    memcpy(tables, TABLES, sizeof tables);
    if (ck.gguf) tables[T_RUN].cols = RUN_CHAT, tables[T_RUN].ncols = (int)(sizeof RUN_CHAT / sizeof RUN_CHAT[0]);
    drift_out_t out;
    drift_out_open(&out, &cli, tables, 4, 1);
    if (ck.gguf)
        drift_out_meta(&out, T_RUN, "table",
            "per (config, k, prompt): %s, %d prompts of the lab's prompt set drawn by the seed in the chat template, "
            "%d greedy tokens; draft = the same model with bf16 weights under %s (LayerCast); "
            "kernel policy on %ld SMs with split-K minimum slice %ld%s",
            base, R, T, DRAFT_RECIPE, sms, min_slice, device);
    else
        drift_out_meta(&out, T_RUN, "table",
            "per (config, k, prompt): stories260K, %d tokens after BOS and a random first token; "
            "draft = the same model with bf16 weights under %s (LayerCast); kernel policy on %ld SMs with split-K minimum slice %ld%s",
            T, DRAFT_RECIPE, sms, min_slice, scaled ? " (scaled to the tiny model as greedy_divergence)" : device);
    drift_out_meta(&out, T_RUN, "columns",
        "verify_passes = target passes of M = k+1 rows; accepted_per_pass = draft tokens accepted per pass (0..k); "
        "first_div_vs_plain = first generated token that differs from plain greedy (M = 1 per step) of the same configuration (-1: none)");
    drift_out_meta(
        &out, T_SUM, "table", "per (config, k): differ = prompts whose accepted text differs from plain greedy");
    drift_out_meta(&out, T_PLAN, "table",
        "per (policy, M): whether a pass of M rows (the LM head's included) gets other GEMM kernels, "
        "split counts or ring chunks than M = 1 (drift_model_plan), on %s",
        scaled ? "the scaled device"
        : h100 ? "an H100 as it is"
               : "the device of --sms and --min-slice");
    const char *decode =
        "decoded plainly (one row per step) and speculatively (a draft, the same model under LayerCast: "
        "bf16 weights, fp32 compute, proposes k tokens; the target verifies them in one pass of M = k+1 rows)";
    if (ck.gguf)
        drift_md_intro(&out,
            "%d prompts of %s (the lab's prompt set in the model's chat template, drawn by the seed), %d greedy tokens each, %s; "
            "kernel policy on %ld SMs with split-K from a %ld slice%s.",
            R, base, T, decode, sms, min_slice, device);
    else
        drift_md_intro(&out,
            "%d prompts of stories260K (BOS and a random first token), %d greedy tokens each, %s; "
            "kernel policy on %ld SMs with split-K from a %ld slice%s.",
            R, T, decode, sms, min_slice, device);

    const size_t nres = (size_t)NCONF * (size_t)K.n;
    int *plain = malloc((size_t)cap * sizeof(int)), *txt = malloc((size_t)cap * sizeof(int)),
        *vin = malloc((size_t)(kmax + 1) * sizeof(int));
    double *lg = malloc(V * sizeof(double));
    long *differ = calloc(nres, sizeof(long)), *fdmin = malloc(nres * sizeof(long));
    double *acc = calloc(nres, sizeof(double));
    int *pdiff = calloc((size_t)R * DRIFT_NPOLICIES, sizeof(int)); /* per prompt and policy: some completion differs */
    if (!plain || !txt || !vin || !lg || !differ || !fdmin || !acc || !pdiff)
        drift_die_oom((double)V * sizeof(double) + 2.0 * cap * sizeof(int) + (double)nres * 3 * sizeof(double),
            "a row of %zu logits, two texts of %d tokens and %d x %d results (--draft: fewer)", (size_t)V, (int)cap,
            NCONF, K.n);
    for (size_t i = 0; i < nres; i++) fdmin[i] = -1;
    /* the prefix every prompt shares (a chat template's system turn): computed once per model,
     * as a prefix cache does; the KV cache keeps it while later steps start after it */
    int shared = 0;
    if (cp) {
        shared = cp[0].prefix;
        for (int r = 1; r < R; r++) {
            int q = 0;
            while (q < shared && q < cp[r].prefix && cp[r].tok[q] == cp[0].tok[q]) q++;
            shared = q;
        }
    }
    drift_numerics_t nxd;
    numerics(&nxd, "vendor-like", DRAFT_RECIPE, sms, min_slice);
    nxd.weights = DRIFT_BF16;
    drift_draft_t D;
    drift_draft_open(&D, &ck, &nxd, cap, lg, V);
    int first_change[DRIFT_NPOLICIES] = {-1, -1}, plan_max = -1;
    long target_rows = 0;
    drift_model_t *m; /* reused: a step at an earlier position cuts the KV cache back */
    for (int c = 0; c < NCONF; c++) {
        drift_numerics_t nx;
        numerics(&nx, CONFS[c].policy, CONFS[c].recipe, sms, min_slice);
        if (drift_model_create(&m, &ck, &nx, 1, err, sizeof err)) drift_die("model: %s", err);
        if (shared) {
            drift_model_set_shape(m, 0, 0);
            drift_greedy_step(m, lg, 0, shared, cp[0].tok, V);
            target_rows += shared;
        }
        for (int r = 0; r < R; r++) {
            drift_progress(&cli, (size_t)(c * R + r), (size_t)(NCONF * R));
            int bos_prompt[2], np = 2, first_token = -1;
            const int *prompt = bos_prompt;
            if (cp)
                prompt = cp[r].tok, np = cp[r].n;
            else {
                drift_stream_t st;
                drift_stream_init(&st, cli.seed, drift_fnv1a32("speculative.prompt"), (uint32_t)r, 0);
                bos_prompt[0] = 1, bos_prompt[1] = first_token = 3 + (int)drift_stream_below(&st, (uint32_t)V - 3);
            }
            /* plain greedy: the prompt after the shared prefix in one step, then one row per step */
            drift_model_set_shape(m, 0, 0);
            memcpy(plain, prompt, (size_t)np * sizeof(int));
            plain[np] = drift_greedy_step(m, lg, shared, np - shared, prompt + shared, V);
            for (int t = 1; t < T; t++) plain[np + t] = drift_greedy_step(m, lg, np + t - 1, 1, &plain[np + t - 1], V);
            target_rows += np - shared + T - 1;
            for (int ki = 0; ki < K.n; ki++) {
                const int k = (int)K.v[ki];
                /* the prefill is plain decoding's: the KV cache keeps its positions 0 .. np-1 */
                memcpy(txt, plain, (size_t)(np + 1) * sizeof(int));
                int len = np + 1, passes = 0;
                long accepted = 0;
                drift_model_set_shape(m, (size_t)k + 1, k + 1); /* every later step is a row of a k+1-row verify */
                while (len < np + T) {
                    drift_draft_propose(&D, vin, txt, len, k);
                    /* the target verifies: row j predicts position len + j */
                    int a = 0, next = -1;
                    for (int j = 0; j <= k; j++) {
                        int y = drift_greedy_step(m, lg, len - 1 + j, 1, &vin[j], V);
                        target_rows++;
                        if (j < k && y == vin[j + 1]) {
                            a++;
                            continue;
                        }
                        next = y;
                        break;
                    }
                    passes++, accepted += a;
                    for (int j = 1; j <= a && len < np + T; j++) txt[len++] = vin[j];
                    if (len < np + T) txt[len++] = next;
                }
                int fd = -1;
                for (int t = 0; t < T && fd < 0; t++)
                    if (txt[np + t] != plain[np + t]) fd = t;
                const size_t i = (size_t)c * (size_t)K.n + (size_t)ki;
                differ[i] += fd >= 0;
                if (fd >= 0 && (fdmin[i] < 0 || fd < fdmin[i])) fdmin[i] = fd;
                if (fd >= 0) pdiff[(size_t)r * DRIFT_NPOLICIES + (strcmp(CONFS[c].policy, "vendor-like") ? 1 : 0)] = 1;
                acc[i] += (double)accepted / (double)passes;
                if (cp)
                    drift_row(&out, T_RUN, DRIFT_TXT(CONFS[c].name), DRIFT_INT(k), DRIFT_INT(r), DRIFT_INT(cp[r].index),
                        DRIFT_TXT(cp[r].kind), DRIFT_INT(np), DRIFT_INT(T), DRIFT_INT(passes),
                        DRIFT_NUM((double)accepted / (double)passes), DRIFT_INT(fd), DRIFT_INT(fd < 0));
                else
                    drift_row(&out, T_RUN, DRIFT_TXT(CONFS[c].name), DRIFT_INT(k), DRIFT_INT(r), DRIFT_INT(first_token),
                        DRIFT_INT(T), DRIFT_INT(passes), DRIFT_NUM((double)accepted / (double)passes), DRIFT_INT(fd),
                        DRIFT_INT(fd < 0));
            }
        }
        /* Which pass sizes M change the kernels at all (independent of the prompts): on the bf16
         * configurations' models, one per policy */
        if (!strcmp(CONFS[c].recipe, "bf16/tc:h100/fp32/bf16")) {
            const int pi = (int)nx.policy;
            int dif[PLAN_SEARCH + 1] = {0};
            first_change[pi] = drift_plans_differ(dif, m, T, PLAN_SEARCH);
            if (plan_max < 0) /* the first policy's: both tables cover the same M */
                plan_max =
                    first_change[pi] > 0 && 2 * first_change[pi] - 1 > PLAN_MAX ? 2 * first_change[pi] - 1 : PLAN_MAX;
            for (int M = 2; M <= plan_max; M++)
                drift_row(
                    &out, T_PLAN, DRIFT_TXT(drift_policy_name((drift_policy_t)pi)), DRIFT_INT(M), DRIFT_INT(dif[M]));
        }
        drift_model_free(m);
    }
    drift_progress(&cli, (size_t)(NCONF * R), (size_t)(NCONF * R));
    if (!cli.quiet)
        fprintf(stderr, "speculative: %ld target rows, %ld draft rows (in steps of at most %d), shared prefix %d\n",
            target_rows, D.rows, D.chunk, shared);
    drift_draft_close(&D);
    drift_spec_takeaway_t tk = {ck.gguf ? base : "stories260K", sms, min_slice, scaled, R, K.n, kmax, first_change[0],
        PLAN_SEARCH, {0}, {0}, {0}, INFINITY, -INFINITY};
    for (int c = 0; c < NCONF; c++)
        for (int ki = 0; ki < K.n; ki++) {
            const size_t i = (size_t)c * (size_t)K.n + (size_t)ki;
            drift_row(&out, T_SUM, DRIFT_TXT(CONFS[c].name), DRIFT_TXT(CONFS[c].policy), DRIFT_TXT(CONFS[c].recipe),
                DRIFT_INT(K.v[ki]), DRIFT_INT(K.v[ki] + 1), DRIFT_INT(R), DRIFT_INT(differ[i]),
                DRIFT_NUM((double)differ[i] / R), DRIFT_INT(fdmin[i]), DRIFT_NUM(acc[i] / R));
            drift_row(&out, T_MD, DRIFT_TXT(CONFS[c].name), DRIFT_INT(K.v[ki]), DRIFT_INT(R), DRIFT_INT(differ[i]),
                DRIFT_INT(fdmin[i]), DRIFT_NUM(acc[i] / R));
            const int pi = strcmp(CONFS[c].policy, "vendor-like") ? 1 : 0;
            tk.differ[pi] += differ[i], tk.runs[pi] += R;
            const double share = acc[i] / R / (double)K.v[ki];
            tk.acc_min = share < tk.acc_min ? share : tk.acc_min, tk.acc_max = share > tk.acc_max ? share : tk.acc_max;
        }
    for (int r = 0; r < R; r++)
        for (int pi = 0; pi < DRIFT_NPOLICIES; pi++) tk.prompts[pi] += pdiff[(size_t)r * DRIFT_NPOLICIES + (size_t)pi];
    drift_md_end(&out, T_MD);
    drift_spec_takeaway(&out, &tk);
    drift_out_commit(&out);
    if (cp) drift_chat_prompts_free(cp, R);
    free(plain), free(txt), free(vin), free(lg), free(differ), free(fdmin), free(acc), free(pdiff);
    drift_checkpoint_free(&ck);
    return 0;
}