/* layer_drift.c — how the rounding error of a transformer's hidden state accumulates with
 * depth, sub-block by sub-block, against an exact reference forward pass.
 *
 * Models: SmolLM2-135M-Instruct (GGUF, 30 layers, Q4_1 weights dequantized) by default, or the
 * checkpoint of --checkpoint (llama2.c .bin or GGUF), stories260K (5 layers) in the quick
 * profile; and beside it a seeded synthetic model (drift_checkpoint_synth, dim 64, --layers
 * layers: 64 by default, depth beyond the real model's).
 * Sample: a GGUF model scores one prompt of --prompt-set (prompts/lab-prompts.txt), drawn by
 * the seed (stream "layer_drift.prompt", chat_prompts.h) and wrapped in the model's chat
 * template, cut at --tokens tokens (its first tokens are the template's system turn, the same
 * for every prompt); a llama2.c checkpoint and the synthetic model score --tokens tokens, BOS
 * then uniform random ids from the Philox stream (seed, "layer_drift.tokens", model index).
 * Each scores its tokens teacher-forced, alone, once per numerics configuration of --configs
 * (default all four): fp32 (fp32/seq/fp32/fp32), bf16 on the H100 tensor-core model
 * (bf16/tc:h100/fp32/bf16), fp16 likewise, and LayerCast (bf16 weights, fp32 compute), and once
 * under the exact model (exact = 1: fp64 with correctly rounded dot products and sums, the
 * reference, ~1e-13 relative for a whole pass).
 * Measure: drift_model_set_trace reports the hidden state after each sub-block (attention
 * norm, attention residual, MLP norm, MLP residual, final norm); per (model, configuration,
 * layer, sub-block) the relative error ||h - h_exact|| / ||h_exact|| of each token's row, mean
 * and max over the tokens (layer_drift.csv). The growth with depth is fitted, per (model,
 * configuration), on the mean error after each layer's MLP residual, layers l = 1 .. L, by
 * least squares of log rel_err on l (rel_err ~ a g^l: g, the factor per layer) and on log l
 * (rel_err ~ a l^p: p, the power), each with its rms misfit (layer_drift_fit.csv, loglog.h);
 * the takeaway says where p sits against the two additive laws, sqrt(L) (p = 1/2: independent
 * per-layer errors adding up) and L (p = 1: errors adding in step), and names the sample.
 * Cost: the exact pass of SmolLM2 is about 0.3 s per token on one core and each model's set-up
 * a few seconds: the default 48 tokens take about 35 s with --threads 1.
 * Run: ./lab run layer_drift   (./lab run layer_drift --configs fp32,layercast: two of them)
 * Look for: each configuration's error sits near its format's unit roundoff after the first
 * block and grows with depth; bf16/fp16 sit three to four decades above fp32. On SmolLM2 the
 * growth is slow (fitted p 0.30 to 0.46 at seeds 1 to 6: below sqrt(L)); on stories260K's
 * 5 layers it is faster (p near 1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "cli.h"
#include "chat_prompts.h"
#include "llm_run.h"
#include "drift.h"
#include "loglog.h"
#include "model.h"
#include "output.h"
#include "philox.h"

static const char QUESTION[] =
    "How does the rounding error of the hidden state accumulate with depth, sub-block by sub-block, against an exact reference forward pass?";
/* What every run shows, for --describe; the run's own paragraph is built from its data
 * (the configurations it ran and what they measured). */
static const char SUMMARY[] =
    "each configuration's relative error of the hidden state against the exact forward pass, after every sub-block: "
    "where it starts after the first layer, in units of its format's unit roundoff, how much it grows by the last, "
    "the growth law fitted over the layers (a factor per layer, and a power of the layer set against sqrt(L) and L), "
    "how many decades each 16-bit configuration sits above fp32, and whether LayerCast (bf16 weights, fp32 compute) "
    "sits with bf16.";

enum { T_ERR, T_FIT, T_MD, NTABLES };
static const drift_col_t ERR[] = {DRIFT_C_TEXT("model"), DRIFT_C_INT("layers"), DRIFT_C_TEXT("config"),
    DRIFT_C_INT("layer"), DRIFT_C_TEXT("block"), DRIFT_C_INT("depth"), DRIFT_C_NUM("rel_err_mean", "%.6e"),
    DRIFT_C_NUM("rel_err_max", "%.6e")};
static const drift_col_t FIT[] = {DRIFT_C_TEXT("model"), DRIFT_C_INT("layers"), DRIFT_C_TEXT("config"),
    DRIFT_C_INT("from_layer"), DRIFT_C_INT("to_layer"), DRIFT_C_NUM("factor_per_layer", "%.6g"),
    DRIFT_C_NUM("exp_rms_factor", "%.6g"), DRIFT_C_NUM("power", "%.6g"), DRIFT_C_NUM("power_rms_factor", "%.6g"),
    DRIFT_C_NUM("growth", "%.6g")};
static const drift_col_t MD[] = {DRIFT_C_TEXT("model"), DRIFT_C_TEXT("config"), DRIFT_C_NUM("after layer 1", "%.3g"),
    DRIFT_C_NUM("after last layer", "%.3g"), DRIFT_C_NUM("final norm", "%.3g"),
    DRIFT_C_NUM("growth last / first", "%.3g"), DRIFT_C_NUM("fitted factor per layer", "%.4g"),
    DRIFT_C_NUM("fitted power of the layer", "%.3g")};
static const drift_table_spec_t TABLES[] = {
    {".csv", NULL, 0, ERR, 8}, {"_fit.csv", NULL, 0, FIT, 10}, {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 8}};

/* shown: the configuration's name in prose; rounded: the format whose unit roundoff its error
 * is measured in (LayerCast's weights are bf16); tc: computed on the tensor-core model. */
typedef struct {
    const char *name, *recipe, *weights, *shown;
    drift_format_t rounded;
    int tc;
} conf_t;
static const conf_t CONFS[] = {
    {"fp32", "fp32/seq/fp32/fp32", "fp32", "fp32", DRIFT_FP32, 0},
    {"bf16", "bf16/tc:h100/fp32/bf16", "fp32", "bf16", DRIFT_BF16, 1},
    {"fp16", "fp16/tc:h100/fp32/fp16", "fp32", "fp16", DRIFT_FP16, 1},
    {"layercast", "fp32/seq/fp32/fp32", "bf16", "LayerCast", DRIFT_BF16, 0},
};
#define NCONF ((int)(sizeof CONFS / sizeof CONFS[0]))
enum { C_FP32, C_BF16, C_FP16, C_LAYERCAST };
#define NBLK 4 /* sub-blocks per layer; the final norm is depth 4 L */
static const char *BLOCK_NAMES[] = {"attn-norm", "attn", "mlp-norm", "mlp", "final-norm"};

/* The trace: every (layer, block) keeps its rows in token order (one row per step). */
typedef struct {
    int L;
    size_t dim, T;
    double *h;     /* (4 L + 1) x T x dim */
    size_t *count; /* rows seen per depth */
} trace_t;

static void on_trace(void *ctx, int layer, drift_block_t block, const double *x, size_t M, size_t dim)
{
    trace_t *t = ctx;
    size_t d = block == DRIFT_BLOCK_FINAL_NORM ? (size_t)t->L * NBLK : (size_t)layer * NBLK + (size_t)block;
    for (size_t i = 0; i < M && t->count[d] < t->T; i++, t->count[d]++)
        memcpy(t->h + (d * t->T + t->count[d]) * t->dim, x + i * dim, dim * sizeof(double));
}

static void run_model(trace_t *t, const drift_checkpoint_t *ck, const drift_numerics_t *nx, const int *tok)
{
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    if (drift_model_create(&m, ck, nx, 1, err, sizeof err)) drift_die("model: %s", err);
    memset(t->count, 0, ((size_t)t->L * NBLK + 1) * sizeof(size_t));
    double *lg = malloc(t->T * (size_t)ck->cfg.vocab_size * sizeof(double));
    if (!lg)
        drift_die_oom((double)t->T * ck->cfg.vocab_size * sizeof(double),
            "the logits of %zu tokens x %d (--tokens: fewer)", (size_t)t->T, ck->cfg.vocab_size);
    drift_model_set_trace(m, on_trace, t);
    if (drift_model_score(m, lg, tok, (int)t->T)) drift_die("forward pass failed");
    drift_model_free(m);
    free(lg);
}

/* The configurations run, as prose: "fp32, bf16 and fp16 (H100 tensor-core model) and
 * LayerCast" for all four, the tensor-core ones (adjacent in CONFS) named as one item. */
static void configs_phrase(char *buf, size_t size, const int *use)
{
    int nitem = 0, ntc = 0, item = 0, tc = 0;
    for (int c = 0; c < NCONF; c++)
        if (use[c]) CONFS[c].tc ? ntc++ : nitem++;
    nitem += ntc > 0;
    size_t at = 0;
    buf[0] = 0;
    for (int c = 0; c < NCONF && at < size; c++) {
        if (!use[c]) continue;
        if (!CONFS[c].tc) {
            at += (size_t)snprintf(buf + at, size - at, "%s%s", drift_list_sep(item++, nitem), CONFS[c].shown);
            continue;
        }
        at += (size_t)snprintf(buf + at, size - at, "%s%s%s", tc ? "" : drift_list_sep(item++, nitem),
            drift_list_sep(tc, ntc), CONFS[c].shown);
        if (++tc == ntc && at < size) at += (size_t)snprintf(buf + at, size - at, " (H100 tensor-core model)");
    }
}

/* "a" or "a to b" with fmt, as printed (a range whose ends print alike is one number). */
static void range_text(char *buf, size_t size, const char *fmt, double lo, double hi)
{
    char a[40], b[40];
    snprintf(a, sizeof a, fmt, lo);
    snprintf(b, sizeof b, fmt, hi);
    if (strcmp(a, b))
        snprintf(buf, size, "%s to %s", a, b);
    else
        snprintf(buf, size, "%s", a);
}


/* One model's growth with depth, as fitted over the configurations run (fe: the factor per
 * layer, fp: the power of the layer; each a least-squares line through log rel_err after each
 * layer's MLP residual): the ranges over the configurations, their rms misfits, and where the
 * fitted power p sits against the two additive laws, sqrt(L) (p = 1/2) and L (p = 1). */
static void law_text(drift_out_t *out, const drift_logfit_t *fe, const drift_logfit_t *fp, const int *use)
{
    double g[2] = {INFINITY, -INFINITY}, p[2] = {INFINITY, -INFINITY}, re[2] = {INFINITY, -INFINITY},
           rp[2] = {INFINITY, -INFINITY};
    int ok = 1;
    for (int c = 0; c < NCONF; c++) {
        if (!use[c]) continue;
        if (fe[c].n < 2 || !isfinite(fe[c].slope) || !isfinite(fp[c].slope)) ok = 0;
        g[0] = fmin(g[0], exp(fe[c].slope)), g[1] = fmax(g[1], exp(fe[c].slope));
        p[0] = fmin(p[0], fp[c].slope), p[1] = fmax(p[1], fp[c].slope);
        re[0] = fmin(re[0], exp(fe[c].rms)), re[1] = fmax(re[1], exp(fe[c].rms));
        rp[0] = fmin(rp[0], exp(fp[c].rms)), rp[1] = fmax(rp[1], exp(fp[c].rms));
    }
    if (!ok) {
        drift_md_text(out, "; one layer: no growth to fit");
        return;
    }
    char tg[96], tp[96], tre[96], trp[96];
    range_text(tg, sizeof tg, "%.3f", g[0], g[1]);
    range_text(tp, sizeof tp, "%.2f", p[0], p[1]);
    range_text(tre, sizeof tre, "%.2f", re[0], re[1]);
    range_text(trp, sizeof trp, "%.2f", rp[0], rp[1]);
    drift_md_text(out, "; fitted g^l, g = %s (rms misfit x%s), or l^p, p = %s (x%s): ", tg, tre, tp, trp);
    /* where p sits: below, above or holding each law's exponent */
    const int s = p[1] < 0.5 ? -1 : p[0] > 0.5 ? 1 : 0, l = p[1] < 1 ? -1 : p[0] > 1 ? 1 : 0;
    if (s < 0)
        drift_md_text(out, "slower than sqrt(L) and L");
    else if (l > 0)
        drift_md_text(out, "faster than sqrt(L) and L: the network amplifies earlier layers' errors");
    else if (s > 0 && l < 0)
        drift_md_text(out, "between sqrt(L) and L");
    else if (s == 0 && l == 0)
        drift_md_text(out, "p's range holds both 1/2 (sqrt(L)) and 1 (L)");
    else if (s == 0)
        drift_md_text(out, "p's range holds 1/2 (sqrt(L)), all below 1 (L)");
    else
        drift_md_text(out, "p's range holds 1 (L), all above 1/2 (sqrt(L))");
}

/* The model's name for the data: the checkpoint's file name up to its first dot
 * ("stories260K", "SmolLM2-135M-Instruct"). */
static void model_name_of(char *buf, size_t size, const char *path)
{
    const char *b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t n = strcspn(b, ".");
    snprintf(buf, size, "%.*s", (int)(n ? n : strlen(b)), b);
}

int main(int argc, char **argv)
{
    long L_ = 0, T_ = 0;
    const char *ckpt = NULL, *confs_opt = "all", *set = NULL;
    const drift_cli_opt_t opts[] = {
        {"layers", DRIFT_OPT_INT, &L_, "L", "layers of the synthetic model", 1, 256, {"4", "64", "128"}},
        {"tokens", DRIFT_OPT_INT, &T_, "T",
            "tokens scored teacher-forced per model (a GGUF model: its wrapped prompt, cut at T)", 1, 256,
            {"8", "48", "128"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE",
            "checkpoint, llama2.c .bin or GGUF (when not given: SmolLM2-135M-Instruct in the default and full profiles, stories260K in quick)",
            0, 0, {0}},
        {"prompt-set", DRIFT_OPT_STRING, &set, "FILE",
            "prompt set a GGUF model's prompt is drawn from by the seed (default prompts/lab-prompts.txt)", 0, 0, {0}},
        {"configs", DRIFT_OPT_LIST, &confs_opt, "LIST",
            "configurations, comma-separated, from fp32, bf16, fp16, layercast (run in that order), or all (default)",
            0, 0, {0}},
    };
    const drift_cli_spec_t spec = DRIFT_LLM_SPEC("layer_drift", QUESTION, opts,
        "takes no formats or orders (the configurations are the sweep: --configs fp32,bf16,fp16,layercast)", SUMMARY);
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    /* the configurations: the list is checked as a list by the parser (no empty or repeated item) */
    static const char *const CONF_NAMES[NCONF + 1] = {"fp32", "bf16", "fp16", "layercast", "all"};
    int use[NCONF] = {0}, nuse = 0;
    {
        char buf[256], *save = NULL;
        if (strlen(confs_opt) >= sizeof buf)
            drift_die("--configs: too long (accepted: fp32, bf16, fp16, layercast, all)");
        strcpy(buf, confs_opt);
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            int c = drift_name_pick("--configs", t, CONF_NAMES, NCONF + 1);
            if (c == NCONF && strcmp(confs_opt, "all"))
                drift_die("--configs: 'all' stands alone (accepted: all, or names from fp32, bf16, fp16, layercast)");
            for (int k = 0; k < NCONF; k++) use[k] |= c == NCONF || c == k;
        }
        for (int k = 0; k < NCONF; k++) nuse += use[k];
    }
    const size_t T = (size_t)T_;
    if (drift_llm_run_choose(&ckpt, &cli, " (--profile quick: stories260K)")) return DRIFT_EXIT_SKIPPED;
    drift_checkpoint_t ck[2];
    drift_llm_run_open(&ck[0], &ckpt); /* and one thread: the model's GEMMs are too small for a parallel region each */
    char err[DRIFT_LLM_ERR_MAX];
    /* the tokens of each model: a GGUF model's prompt of the set in its chat template, cut at
     * T; a llama2.c checkpoint's and the synthetic model's BOS then uniform random ids */
    int *tok[2];
    size_t Tm[2] = {T, T};
    char sample[2][640], brief[2][256]; /* the sample for the metadata and intro, and for the takeaway */
    for (int mi = 0; mi < 2; mi++)
        if (!(tok[mi] = malloc(T * sizeof(int)))) drift_die_oom(2.0 * T * sizeof(int), "the tokens (--tokens: fewer)");
    if (ck[0].gguf) {
        if (!set) set = DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt";
        drift_chat_prompt_t *cp;
        if (drift_chat_prompts_load(
                &cp, &ck[0], set, 1, cli.seed, "layer_drift.prompt", ck[0].cfg.seq_len, err, sizeof err))
            drift_die("--prompt-set: %s", err);
        Tm[0] = (size_t)cp[0].n < T ? (size_t)cp[0].n : T;
        memcpy(tok[0], cp[0].tok, Tm[0] * sizeof(int));
        const char *sb = strrchr(set, '/') ? strrchr(set, '/') + 1 : set;
        snprintf(sample[0], sizeof sample[0],
            "%s%zu tokens of prompt %d of %s (%s, %d tokens in the chat template, the first %d its system turn and user header: \"%.100s%s\"), drawn by seed %llu",
            Tm[0] < (size_t)cp[0].n ? "the first " : "the ", Tm[0], cp[0].index, sb, cp[0].kind, cp[0].n, cp[0].prefix,
            cp[0].text, strlen(cp[0].text) > 100 ? "..." : "", (unsigned long long)cli.seed);
        char shared[48]; /* the tokens every wrapped prompt shares, among those scored */
        if ((size_t)cp[0].prefix < Tm[0])
            snprintf(shared, sizeof shared, "1-%d: system turn", cp[0].prefix);
        else
            snprintf(shared, sizeof shared, "all in the system turn");
        snprintf(brief[0], sizeof brief[0], "%s%zu%s of prompt %d (%s) of %s in the chat template (seed %llu; %s)",
            Tm[0] < (size_t)cp[0].n ? "tokens 1-" : "all ", Tm[0], Tm[0] < (size_t)cp[0].n ? "" : " tokens",
            cp[0].index, cp[0].kind, sb, (unsigned long long)cli.seed, shared);
        drift_chat_prompts_free(cp, 1);
    } else {
        if (set)
            drift_die(
                "--prompt-set: a llama2.c checkpoint holds no tokenizer or chat template (its tokens are BOS then random ids)");
        if ((long)T > ck[0].cfg.seq_len) drift_die("--tokens: at most %d on this checkpoint", ck[0].cfg.seq_len);
    }
    const drift_llm_config_t syn = {64, 172, (int)L_, 8, 4, 512, (int)T, 0, 0, 0};
    if (drift_checkpoint_synth(&ck[1], &syn, cli.seed, err, sizeof err)) drift_die("synthetic model: %s", err);
    for (int mi = ck[0].gguf ? 1 : 0; mi < 2; mi++) {
        drift_stream_t st;
        drift_stream_init(&st, cli.seed, drift_fnv1a32("layer_drift.tokens"), (uint32_t)mi, 0);
        tok[mi][0] = 1;
        for (size_t i = 1; i < T; i++) tok[mi][i] = (int)drift_stream_below(&st, (uint32_t)ck[mi].cfg.vocab_size);
        snprintf(sample[mi], sizeof sample[mi], "%zu tokens (BOS then uniform random ids, seed %llu)", T,
            (unsigned long long)cli.seed);
        snprintf(
            brief[mi], sizeof brief[mi], "BOS and %zu random ids (seed %llu)", T - 1, (unsigned long long)cli.seed);
        if (ck[0].gguf)
            snprintf(brief[mi], sizeof brief[mi], "BOS and %zu random ids", T - 1); /* the seed named with the prompt */
    }
    char model_name[2][64];
    model_name_of(model_name[0], sizeof model_name[0], ckpt);
    snprintf(model_name[1], sizeof model_name[1], "synthetic");
    if (!strcmp(model_name[0], "synthetic")) snprintf(model_name[0], sizeof model_name[0], "synthetic-checkpoint");

    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, NTABLES, 1);
    if (ck[0].gguf)
        drift_out_meta(&out, T_ERR, "table",
            "per (model, config, layer, block): %s: %s; synthetic = drift_checkpoint_synth dim 64 hidden 172 heads 8/4 vocab "
            "512, seed %llu: %s; each scored teacher-forced alone",
            model_name[0], sample[0], (unsigned long long)cli.seed, sample[1]);
    else /* the words of the runs before the GGUF default: the quick profile's files as they were */
        drift_out_meta(&out, T_ERR, "table",
            "per (model, config, layer, block): %zu tokens (BOS then uniform random ids) scored teacher-forced alone; "
            "synthetic = drift_checkpoint_synth dim 64 hidden 172 heads 8/4 vocab 512, seed %llu",
            T, (unsigned long long)cli.seed);
    drift_out_meta(&out, T_ERR, "columns",
        "depth = 4 layer + block index (attn-norm 0, attn 1, mlp-norm 2, mlp 3; final-norm = 4 L); "
        "rel_err = ||h - h_exact||_2 / ||h_exact||_2 per token row, mean and max over the tokens; h_exact from the exact model (fp64, correctly rounded dots and sums)");
    drift_out_meta(&out, T_FIT, "table",
        "per (model, config): least-squares fits of log rel_err_mean after each layer's MLP residual (block mlp, "
        "layers from .. to, numbered from 1) against the layer number");
    drift_out_meta(&out, T_FIT, "columns",
        "factor_per_layer = exp(slope of log rel_err on layer): rel_err ~ a factor^layer; "
        "power = slope of log rel_err on log layer: rel_err ~ a layer^power (0.5: independent per-layer errors adding up; 1: errors adding in step); "
        "*_rms_factor = exp(rms residual of that fit): the typical factor between a layer's error and the fitted line; "
        "growth = rel_err after the last layer / after the first");
    char under[192];
    configs_phrase(under, sizeof under, use);
    drift_md_intro(&out,
        "Hidden states of %s (%d layers, real weights%s; %s) and of a synthetic model (%ld layers; "
        "%s), teacher-forced, under %s, against the exact reference: fp64 throughout with every dot product and sum correctly rounded to fp64 (the "
        "superaccumulator of exact.h) and glibc fp64 elementwise functions, so each operation errs by at most ~2^-52 relative and the reference sits "
        "at least eight orders of magnitude below the fp32 effects measured.",
        model_name[0], ck[0].cfg.n_layers, ck[0].gguf ? ", GGUF dequantized" : "", sample[0], L_, sample[1], under);

    double growth[2][NCONF], last[2][NCONF], first_u[2][NCONF];
    drift_logfit_t fexp[2][NCONF], fpow[2][NCONF];
    int step = 0;
    for (int mi = 0; mi < 2; mi++) {
        const drift_llm_config_t *c = &ck[mi].cfg;
        const size_t Tk = Tm[mi];
        trace_t ex = {c->n_layers, (size_t)c->dim, Tk, NULL, NULL}, tr = ex;
        size_t nd = (size_t)c->n_layers * NBLK + 1;
        ex.h = malloc(nd * Tk * ex.dim * sizeof(double)), tr.h = malloc(nd * Tk * ex.dim * sizeof(double));
        ex.count = calloc(nd, sizeof(size_t)), tr.count = calloc(nd, sizeof(size_t));
        double *xl = malloc((size_t)c->n_layers * sizeof(double)), *yl = malloc((size_t)c->n_layers * sizeof(double));
        if (!ex.h || !tr.h || !ex.count || !tr.count || !xl || !yl)
            drift_die_oom(2.0 * nd * Tk * ex.dim * sizeof(double),
                "two traces of %zu points x %zu tokens x %zu (--tokens, --layers: fewer)", nd, Tk, ex.dim);
        drift_numerics_t nxe = drift_numerics_exact();
        run_model(&ex, &ck[mi], &nxe, tok[mi]);
        for (int ci = 0; ci < NCONF; ci++) {
            if (!use[ci]) continue;
            drift_progress(&cli, (size_t)step++, 2 * (size_t)nuse);
            drift_numerics_t nx = drift_numerics_fp32();
            drift_recipe_t r;
            if (drift_model_recipe_parse(&r, CONFS[ci].recipe)) drift_die("bad recipe %s", CONFS[ci].recipe);
            drift_numerics_set_mm(&nx, &r);
            if (drift_format_parse(&nx.weights, CONFS[ci].weights)) drift_die("bad weights %s", CONFS[ci].weights);
            run_model(&tr, &ck[mi], &nx, tok[mi]);
            double first = 0, lastl = 0, fin = 0;
            for (size_t d = 0; d < nd; d++) {
                double sum = 0, mx = 0;
                for (size_t i = 0; i < Tk; i++) {
                    const double *a = tr.h + (d * Tk + i) * ex.dim, *b = ex.h + (d * Tk + i) * ex.dim;
                    double num = 0, den = 0;
                    for (size_t j = 0; j < ex.dim; j++) num += (a[j] - b[j]) * (a[j] - b[j]), den += b[j] * b[j];
                    double e = den > 0 ? sqrt(num / den) : 0;
                    sum += e, mx = fmax(mx, e);
                }
                double mean = sum / (double)Tk;
                int layer = (int)(d / NBLK), blk = d == nd - 1 ? 4 : (int)(d % NBLK);
                if (d == NBLK - 1) first = mean;
                if (d == nd - 2) lastl = mean;
                if (d == nd - 1) fin = mean;
                if (blk == DRIFT_BLOCK_MLP) xl[layer] = layer + 1, yl[layer] = mean;
                drift_row(&out, T_ERR, DRIFT_TXT(model_name[mi]), DRIFT_INT(c->n_layers), DRIFT_TXT(CONFS[ci].name),
                    DRIFT_INT(layer), DRIFT_TXT(BLOCK_NAMES[blk]), DRIFT_INT(d), DRIFT_NUM(mean), DRIFT_NUM(mx));
            }
            growth[mi][ci] = first > 0 ? lastl / first : 0, last[mi][ci] = lastl;
            first_u[mi][ci] = first / drift_format_info(CONFS[ci].rounded)->unit_roundoff;
            drift_loglin_fit(&fexp[mi][ci], xl, yl, c->n_layers);
            drift_loglog_fit(&fpow[mi][ci], xl, yl, c->n_layers);
            drift_row(&out, T_FIT, DRIFT_TXT(model_name[mi]), DRIFT_INT(c->n_layers), DRIFT_TXT(CONFS[ci].name),
                DRIFT_INT(1), DRIFT_INT(c->n_layers), DRIFT_NUM(exp(fexp[mi][ci].slope)),
                DRIFT_NUM(exp(fexp[mi][ci].rms)), DRIFT_NUM(fpow[mi][ci].slope), DRIFT_NUM(exp(fpow[mi][ci].rms)),
                DRIFT_NUM(growth[mi][ci]));
            drift_row(&out, T_MD, DRIFT_TXT(model_name[mi]), DRIFT_TXT(CONFS[ci].name), DRIFT_NUM(first),
                DRIFT_NUM(lastl), DRIFT_NUM(fin), DRIFT_NUM(growth[mi][ci]), DRIFT_NUM(exp(fexp[mi][ci].slope)),
                DRIFT_NUM(fpow[mi][ci].slope));
        }
        free(ex.h), free(tr.h), free(ex.count), free(tr.count), free(xl), free(yl);
    }
    drift_progress(&cli, 2 * (size_t)nuse, 2 * (size_t)nuse);
    drift_md_end(&out, T_MD);
    /* Takeaway from the data: the growth over depth and the ranking of the configurations. */
    drift_md_text(&out, "**Takeaway.**\n\n");
    double gmin[2], gmax[2];
    for (int mi = 0; mi < 2; mi++) {
        gmin[mi] = INFINITY, gmax[mi] = -INFINITY;
        for (int ci = 0; ci < NCONF; ci++)
            if (use[ci]) gmin[mi] = fmin(gmin[mi], growth[mi][ci]), gmax[mi] = fmax(gmax[mi], growth[mi][ci]);
        char grows[96];
        range_text(grows, sizeof grows, "%.3g", gmin[mi], gmax[mi]);
        drift_md_text(&out, "- %s (%d layers): mean error x%s from layer 1 to %d", model_name[mi], ck[mi].cfg.n_layers,
            grows, ck[mi].cfg.n_layers);
        law_text(&out, fexp[mi], fpow[mi], use); /* the configurations against fp32: the table, and the summary below */
        drift_md_text(&out, ".\n");
    }
    drift_md_text(&out, "- Fits: least squares of log rel_err on l or log l (l = 1 .. L); sqrt(L) is p = 1/2 "
                        "(independent errors adding), L is p = 1 (errors adding in step). Sample: ");
    if (strcmp(brief[0], brief[1]))
        drift_md_text(&out, "%s; synthetic: %s", brief[0], brief[1]);
    else
        drift_md_text(&out, "%s and synthetic: %s each", model_name[0], brief[0]);
    drift_md_text(&out, ". Reference: exact fp64 pass (correctly rounded dots).\n\n");

    /* What you just saw, from this run's data and configurations only. */
    char r[96];
    drift_out_summary(&out, "after the first layer the relative error of the hidden state is");
    for (int ci = 0, k = 0; ci < NCONF; ci++) {
        if (!use[ci]) continue;
        range_text(r, sizeof r, "%.2g", fmin(first_u[0][ci], first_u[1][ci]), fmax(first_u[0][ci], first_u[1][ci]));
        drift_out_summary(&out, "%s%s u for %s", k ? drift_list_sep(k, nuse) : " ", r, CONFS[ci].shown);
        k++;
    }
    drift_out_summary(&out,
        " (u = the unit roundoff of the configuration's format%s; both models); by the last layer it has grown",
        use[C_LAYERCAST] ? ", bf16's for LayerCast's weights" : "");
    for (int mi = 0; mi < 2; mi++) {
        range_text(r, sizeof r, "%.3g", gmin[mi], gmax[mi]);
        drift_out_summary(&out, "%s %s times on %s (%d layers)", mi ? " and" : "", r,
            mi ? "the synthetic model" : model_name[mi], ck[mi].cfg.n_layers);
    }
    if (use[C_FP32] && nuse > 1) {
        drift_out_summary(
            &out, "; after the last layer"); /* "bf16 sits 4.0 decades above fp32, fp16 3.2 and LayerCast 4.0" */
        for (int ci = 0, k = 0; ci < NCONF; ci++) {
            if (ci == C_FP32 || !use[ci]) continue;
            double d0 = log10(last[0][ci] / last[0][C_FP32]), d1 = log10(last[1][ci] / last[1][C_FP32]);
            range_text(r, sizeof r, "%.1f", fmin(d0, d1), fmax(d0, d1));
            drift_out_summary(&out, "%s%s %s%s%s", k ? drift_list_sep(k, nuse - 1) : " ", CONFS[ci].shown,
                k ? "" : "sits ", r, k ? "" : " decades above fp32");
            k++;
        }
    }
    if (use[C_BF16] && use[C_LAYERCAST]) {
        double q0 = last[0][C_LAYERCAST] / last[0][C_BF16], q1 = last[1][C_LAYERCAST] / last[1][C_BF16];
        double lo = fmin(q0, q1), hi = fmax(q0, q1);
        range_text(r, sizeof r, "%.2g", lo, hi);
        /* within a factor of two either way: the weights' rounding alone gives the error of
         * rounding every GEMM's inputs and outputs */
        if (lo >= 0.5 && hi <= 2)
            drift_out_summary(&out,
                ". LayerCast (bf16 weights, fp32 compute) sits with bf16 (%s times its error after the last layer): "
                "measured against the fp32 model, rounding the weights to bf16 is a change of the model, not a rounding of its arithmetic",
                r);
        else
            drift_out_summary(
                &out, ". LayerCast (bf16 weights, fp32 compute) has %s times bf16's error after the last layer", r);
    }
    drift_out_summary(&out, ".");
    drift_out_commit(&out);
    drift_checkpoint_free(&ck[0]), drift_checkpoint_free(&ck[1]);
    free(tok[0]), free(tok[1]);
    return 0;
}
