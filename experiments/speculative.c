/* speculative.c — does speculative decoding, whose verify pass runs the target model on k+1
 * tokens at once, accept a different text than plain greedy decoding of the same model?
 *
 * Sweep: --prompts prompts (BOS and one random first token from the seed's Philox stream) of
 * stories260K; target configurations: vendor-like and batch-invariant kernel policy, fp32 and
 * bf16 (H100 tensor-core model) recipes, the policy on a device scaled to the tiny model as
 * greedy_divergence does (--sms 16 multiprocessors, split-K from a --min-slice 4 slice, so the
 * tiny model's GEMMs split as a big model's do on an H100); draft lengths k in --draft.
 * Measure: plain greedy decoding of --tokens tokens (one row per step, M = 1) against greedy
 * speculative decoding: a draft (the same model under LayerCast, bf16 weights and fp32 compute,
 * decoding one token at a time with its own KV cache) proposes k tokens; the target verifies
 * them in one pass of M = k+1 rows (emulated row by row with drift_model_set_shape(k+1, k+1):
 * each row gets the bits it gets inside the k+1-row pass, the LM head included), accepts the
 * longest prefix that matches its own argmax, then adds its own token. Per (configuration, k,
 * prompt): the first token where the accepted text differs from plain greedy decoding, and the
 * mean tokens accepted per verify pass. Per (policy, M = 2..129): whether a pass of M rows
 * gets other kernels than M = 1 (drift_model_plan).
 * Run: ./lab run speculative
 * Look for: batch-invariant kernels never part from plain greedy; the vendor-like policy keeps the
 * same kernels while M = k+1 fits one 64-row tile, so short drafts do not part either. */
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
#include "output.h"
#include "philox.h"

static const char QUESTION[] =
    "Does speculative decoding, whose verify pass runs the target on k+1 tokens at once, accept a different text than plain greedy decoding of the same model?";
static const char SUMMARY[] =
    "greedy speculative decoding is meant to give exactly the target's greedy text, but the verify pass runs M = k+1 "
    "rows where plain decoding runs one. Under batch-invariant kernels the accepted text is exactly the plain greedy "
    "text whatever the draft; under the lab's vendor-like policy it is too as long as M = k+1 stays inside one "
    "64-row output tile, and kernels change only for longer drafts (the plan table says from which M).";

enum { T_RUN, T_SUM, T_PLAN, T_MD };
static const drift_col_t RUN[] = {DRIFT_C_TEXT("config"), DRIFT_C_INT("k"), DRIFT_C_INT("prompt"), DRIFT_C_INT("first_token"),
                                  DRIFT_C_INT("tokens"), DRIFT_C_INT("verify_passes"), DRIFT_C_NUM("accepted_per_pass", "%.6g"),
                                  DRIFT_C_INT("first_div_vs_plain"), DRIFT_C_INT("same_as_plain")};
static const drift_col_t SUM[] = {DRIFT_C_TEXT("config"), DRIFT_C_TEXT("policy"), DRIFT_C_TEXT("recipe"), DRIFT_C_INT("k"),
                                  DRIFT_C_INT("M"), DRIFT_C_INT("prompts"), DRIFT_C_INT("differ"),
                                  DRIFT_C_NUM("frac_differ", "%.6g"), DRIFT_C_INT("first_div_min"),
                                  DRIFT_C_NUM("accepted_per_pass", "%.6g")};
static const drift_col_t PLAN[] = {DRIFT_C_TEXT("policy"), DRIFT_C_INT("M"), DRIFT_C_INT("kernels_differ_from_M1")};
static const drift_col_t MD[] = {DRIFT_C_TEXT("config"), DRIFT_C_INT("k"), DRIFT_C_INT("prompts"),
                                 DRIFT_C_INT("texts differing from plain greedy"), DRIFT_C_INT("earliest divergence"),
                                 DRIFT_C_NUM("accepted per verify", "%.3g")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, RUN, 9}, {"_summary.csv", NULL, 0, SUM, 10},
                                            {"_plans.csv", NULL, 0, PLAN, 3},
                                            {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 6}};

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

static void numerics(drift_numerics_t *nx, const char *policy, const char *recipe, long sms, long min_slice)
{
    *nx = drift_numerics_fp32();
    drift_recipe_t r;
    if (drift_model_recipe_parse(&r, recipe)) drift_die("bad recipe %s", recipe);
    drift_numerics_set_mm(nx, &r);
    if (drift_policy_parse(&nx->policy, policy)) drift_die("bad policy %s", policy);
    nx->sms = (int)sms, nx->min_slice = (int)min_slice;
}

static int argmax(const double *l, size_t V)
{
    drift_top2_t t;
    drift_top2(&t, l, V);
    return (int)t.top1;
}

/* One step of ntok tokens at pos; the argmax after the last. */
static int step(drift_model_t *m, double *lg, int pos, int ntok, const int *tok, size_t V)
{
    drift_seq_step_t s = {0, pos, ntok, tok};
    if (drift_model_step(m, lg, &s, 1)) drift_die("forward step failed");
    return argmax(lg, V);
}

int main(int argc, char **argv)
{
    long R_ = 0, T_ = 0, sms = 16, min_slice = 4;
    drift_intlist_t K = {{0}, 0};
    const char *ckpt = NULL;
    const drift_cli_opt_t opts[] = {
        {"prompts", DRIFT_OPT_INT, &R_, "R", "prompts (BOS and one random first token each)", 1, 4096, {"2", "4", "64"}},
        {"tokens", DRIFT_OPT_INT, &T_, "T", "greedy tokens per completion", 1, 4096, {"16", "32", "256"}},
        {"draft", DRIFT_OPT_INTLIST, &K, "K,K,...", "draft lengths k (the verify pass has M = k+1 rows)", 1, 64, {"4", "2,4,8", "1,2,3,4,6,8"}},
        {"sms", DRIFT_OPT_INT, &sms, "N", "multiprocessors the kernel policy fills (16: scaled to the tiny model)", 1, 100000, {0}},
        {"min-slice", DRIFT_OPT_INT, &min_slice, "N", "split-K minimum slice (4: scaled to the tiny model)", 1, 1 << 30, {0}},
        DRIFT_CHECKPOINT_OPT(&ckpt),
    };
    const drift_cli_spec_t spec = DRIFT_LLM_SPEC("speculative", QUESTION, opts, "takes no formats or orders (the configurations are the sweep: vendor-like and batch-invariant, fp32 and bf16)", SUMMARY);
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    const int R = (int)R_, T = (int)T_;
    drift_checkpoint_t ck;
    drift_llm_run_open(&ck, &ckpt); /* and one thread: the model's GEMMs are too small for a parallel region each */
    char err[DRIFT_LLM_ERR_MAX];
    int kmax = 0;
    for (int i = 0; i < K.n; i++) kmax = K.v[i] > kmax ? (int)K.v[i] : kmax;
    if (2 + T + kmax > ck.cfg.seq_len) drift_die("--tokens: at most %d with --draft up to %d on this checkpoint", ck.cfg.seq_len - 2 - kmax, kmax);
    const size_t V = (size_t)ck.cfg.vocab_size;
    const int cap = 2 + T + kmax + 1;

    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 4, 1);
    drift_out_meta(&out, T_RUN, "table", "per (config, k, prompt): stories260K, %d tokens after BOS and a random first token; draft = the same model with bf16 weights under %s (LayerCast); kernel policy on %ld SMs with split-K minimum slice %ld (scaled to the tiny model as greedy_divergence)", T, DRAFT_RECIPE, sms, min_slice);
    drift_out_meta(&out, T_RUN, "columns", "verify_passes = target passes of M = k+1 rows; accepted_per_pass = draft tokens accepted per pass (0..k); first_div_vs_plain = first generated token that differs from plain greedy (M = 1 per step) of the same configuration (-1: none)");
    drift_out_meta(&out, T_SUM, "table", "per (config, k): differ = prompts whose accepted text differs from plain greedy");
    drift_out_meta(&out, T_PLAN, "table", "per (policy, M): whether a pass of M rows (the LM head's included) gets other GEMM kernels, split counts or ring chunks than M = 1 (drift_model_plan), on the scaled device");
    drift_md_intro(&out, "%d prompts of stories260K (BOS and a random first token), %d greedy tokens each, decoded plainly (one row per step) and speculatively (a draft, the same model under LayerCast: bf16 weights, fp32 compute, proposes k tokens; the target verifies them in one pass of M = k+1 rows); kernel policy on a device scaled to the tiny model (%ld SMs, split-K from a %ld slice, as greedy_divergence: on an unscaled H100 no GEMM of this model splits).", R, T, sms, min_slice);

    int *plain = malloc((size_t)cap * sizeof(int)), *txt = malloc((size_t)cap * sizeof(int)), *vin = malloc((size_t)(kmax + 1) * sizeof(int));
    double *lg = malloc(V * sizeof(double));
    long *differ = calloc((size_t)NCONF * (size_t)K.n, sizeof(long)), *fdmin = malloc((size_t)NCONF * (size_t)K.n * sizeof(long));
    double *acc = calloc((size_t)NCONF * (size_t)K.n, sizeof(double));
    if (!plain || !txt || !vin || !lg || !differ || !fdmin || !acc)
        drift_die_oom((double)V * sizeof(double) + 2.0 * cap * sizeof(int) + (double)NCONF * K.n * 3 * sizeof(double), "a row of %zu logits, two texts of %d tokens and %d x %d results (--draft: fewer)", (size_t)V, (int)cap, NCONF, K.n);
    for (int i = 0; i < NCONF * K.n; i++) fdmin[i] = -1;
    drift_numerics_t nxd;
    numerics(&nxd, "vendor-like", DRAFT_RECIPE, sms, min_slice);
    nxd.weights = DRIFT_BF16;
    drift_model_t *m, *d; /* reused: a step at an earlier position cuts the KV cache back */
    if (drift_model_create(&d, &ck, &nxd, 1, err, sizeof err)) drift_die("draft model: %s", err);
    for (int c = 0; c < NCONF; c++) {
        drift_numerics_t nx;
        numerics(&nx, CONFS[c].policy, CONFS[c].recipe, sms, min_slice);
        if (drift_model_create(&m, &ck, &nx, 1, err, sizeof err)) drift_die("model: %s", err);
        for (int r = 0; r < R; r++) {
            drift_progress(&cli, (size_t)(c * R + r), (size_t)(NCONF * R));
            drift_stream_t st;
            drift_stream_init(&st, cli.seed, drift_fnv1a32("speculative.prompt"), (uint32_t)r, 0);
            const int prompt[2] = {1, 3 + (int)drift_stream_below(&st, (uint32_t)V - 3)};
            /* plain greedy: the prompt in one step, then one row per step */
            drift_model_set_shape(m, 0, 0);
            plain[0] = prompt[0], plain[1] = prompt[1];
            plain[2] = step(m, lg, 0, 2, prompt, V);
            for (int t = 1; t < T; t++) plain[2 + t] = step(m, lg, 1 + t, 1, &plain[1 + t], V);
            for (int ki = 0; ki < K.n; ki++) {
                const int k = (int)K.v[ki];
                drift_model_set_shape(m, 0, 0);
                txt[0] = prompt[0], txt[1] = prompt[1];
                txt[2] = step(m, lg, 0, 2, prompt, V); /* the prefill, as plain decoding's */
                int len = 3, dvalid = 0, passes = 0;
                long accepted = 0;
                drift_model_set_shape(m, (size_t)k + 1, k + 1); /* every later step is a row of a k+1-row verify */
                while (len < 2 + T) {
                    /* the draft catches up with the accepted text and proposes k tokens */
                    vin[0] = txt[len - 1];
                    vin[1] = step(d, lg, dvalid, len - dvalid, txt + dvalid, V);
                    for (int i = 2; i <= k; i++) vin[i] = step(d, lg, len + i - 2, 1, &vin[i - 1], V);
                    /* the target verifies: row j predicts position len + j */
                    int a = 0, next = -1;
                    for (int j = 0; j <= k; j++) {
                        int y = step(m, lg, len - 1 + j, 1, &vin[j], V);
                        if (j < k && y == vin[j + 1]) {
                            a++;
                            continue;
                        }
                        next = y;
                        break;
                    }
                    passes++, accepted += a;
                    for (int j = 1; j <= a && len < 2 + T; j++) txt[len++] = vin[j];
                    if (len < 2 + T) txt[len++] = next;
                    dvalid = len - 1 - a + (a < k - 1 ? a : k - 1);
                    if (dvalid > len - 1) dvalid = len - 1;
                }
                int fd = -1;
                for (int t = 0; t < T && fd < 0; t++)
                    if (txt[2 + t] != plain[2 + t]) fd = t;
                const size_t i = (size_t)c * (size_t)K.n + (size_t)ki;
                differ[i] += fd >= 0;
                if (fd >= 0 && (fdmin[i] < 0 || fd < fdmin[i])) fdmin[i] = fd;
                acc[i] += (double)accepted / (double)passes;
                drift_row(&out, T_RUN, DRIFT_TXT(CONFS[c].name), DRIFT_INT(k), DRIFT_INT(r), DRIFT_INT(prompt[1]), DRIFT_INT(T),
                          DRIFT_INT(passes), DRIFT_NUM((double)accepted / (double)passes), DRIFT_INT(fd), DRIFT_INT(fd < 0));
            }
        }
        drift_model_free(m);
    }
    drift_model_free(d);
    long vendor_differ = 0, invariant_differ = 0, vendor_runs = 0, invariant_runs = 0;
    for (int c = 0; c < NCONF; c++)
        for (int ki = 0; ki < K.n; ki++) {
            const size_t i = (size_t)c * (size_t)K.n + (size_t)ki;
            drift_row(&out, T_SUM, DRIFT_TXT(CONFS[c].name), DRIFT_TXT(CONFS[c].policy), DRIFT_TXT(CONFS[c].recipe), DRIFT_INT(K.v[ki]),
                      DRIFT_INT(K.v[ki] + 1), DRIFT_INT(R), DRIFT_INT(differ[i]), DRIFT_NUM((double)differ[i] / R), DRIFT_INT(fdmin[i]),
                      DRIFT_NUM(acc[i] / R));
            drift_row(&out, T_MD, DRIFT_TXT(CONFS[c].name), DRIFT_INT(K.v[ki]), DRIFT_INT(R), DRIFT_INT(differ[i]), DRIFT_INT(fdmin[i]),
                      DRIFT_NUM(acc[i] / R));
            if (!strcmp(CONFS[c].policy, "vendor-like")) vendor_differ += differ[i], vendor_runs += R;
            else invariant_differ += differ[i], invariant_runs += R;
        }
    drift_md_end(&out, T_MD);
    /* Which verify sizes M change the kernels at all (independent of the prompts). */
    int first_change[DRIFT_NPOLICIES] = {-1, -1};
    for (int pi = 0; pi < DRIFT_NPOLICIES; pi++) {
        drift_numerics_t nx;
        numerics(&nx, drift_policy_name((drift_policy_t)pi), "bf16/tc:h100/fp32/bf16", sms, min_slice);
        if (drift_model_create(&m, &ck, &nx, 1, err, sizeof err)) drift_die("model: %s", err);
        long p1[256], pm[256];
        int n1 = drift_model_plan(m, 1, 1, T, p1, 256);
        if (n1 < 0) drift_die("plan failed");
        for (int M = 2; M <= 129; M++) {
            int nm = drift_model_plan(m, (size_t)M, M, T, pm, 256);
            if (nm < 0) drift_die("plan failed");
            int dif = nm != n1 || memcmp(p1, pm, (size_t)n1 * sizeof(long)) != 0;
            if (dif && first_change[pi] < 0) first_change[pi] = M;
            drift_row(&out, T_PLAN, DRIFT_TXT(drift_policy_name((drift_policy_t)pi)), DRIFT_INT(M), DRIFT_INT(dif));
        }
        drift_model_free(m);
    }
    drift_md_text(&out, "**Takeaway.**\n\n");
    if (vendor_differ)
        drift_md_text(&out, "- Vendor-like kernels: %ld of %ld speculative completions (over the configurations, draft lengths and prompts) differ from plain greedy decoding of the same model: the verify pass's M = k+1 rows make the policy pick other GEMM kernels than the M = 1 of plain decoding.\n",
                vendor_differ, vendor_runs);
    else
        drift_md_text(&out, "- Vendor-like kernels: none of %ld speculative completions differs from plain greedy decoding. The lab's vendor-like policy picks kernels by output tiles of at least 64 rows, so a verify pass of M = k+1 <= %d rows gets the same kernels as M = 1; ",
                vendor_runs, kmax + 1);
    if (!vendor_differ && first_change[0] > 0)
        drift_md_text(&out, "the first pass size that changes them on this device is M = %d (data/speculative_plans.csv), i.e. a draft of k = %d tokens. Real libraries also send M = 1 to GEMV kernels, which this policy does not model.\n", first_change[0], first_change[0] - 1);
    else if (!vendor_differ)
        drift_md_text(&out, "no pass size up to 129 rows changes them on this device.\n");
    drift_md_text(&out, "- Batch-invariant kernels: %ld of %ld differ%s.\n", invariant_differ, invariant_runs,
            invariant_differ ? "" : ": every row computes the same bits whatever M, so the accepted text is exactly the plain greedy text, whatever the draft proposes");
    drift_md_text(&out, "- The policy is scaled to the tiny model (%ld SMs, split-K from %ld); with the unscaled H100 policy (132 SMs, slice 256) no GEMM of stories260K splits and vendor-like is batch invariant on it.\n\n", sms, min_slice);
    drift_out_commit(&out);
    free(plain), free(txt), free(vin), free(lg), free(differ), free(fdmin), free(acc);
    drift_checkpoint_free(&ck);
    return 0;
}
