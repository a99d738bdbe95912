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
#include "hidden_trace.h"
#include "layer_configs.h"
#include "layer_drift_lab.h"
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

static const char *BLOCK_NAMES[] = {"attn-norm", "attn", "mlp-norm", "mlp", "final-norm"};

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
    int use[DRIFT_NCONFS];
    const int nuse = drift_layer_configs_pick(use, confs_opt);
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
    drift_layer_configs_phrase(under, sizeof under, use);
    drift_md_intro(&out,
        "Hidden states of %s (%d layers, real weights%s; %s) and of a synthetic model (%ld layers; "
        "%s), teacher-forced, under %s, against the exact reference: fp64 throughout with every dot product and sum correctly rounded to fp64 (the "
        "superaccumulator of exact.h) and glibc fp64 elementwise functions, so each operation errs by at most ~2^-52 relative and the reference sits "
        "at least eight orders of magnitude below the fp32 effects measured.",
        model_name[0], ck[0].cfg.n_layers, ck[0].gguf ? ", GGUF dequantized" : "", sample[0], L_, sample[1], under);

    drift_layer_lab_t lab = {.use = use,
        .nuse = nuse,
        .model = {model_name[0], model_name[1]},
        .layers = {ck[0].cfg.n_layers, ck[1].cfg.n_layers},
        .brief = {brief[0], brief[1]}};
    int step = 0;
    for (int mi = 0; mi < 2; mi++) {
        const drift_llm_config_t *c = &ck[mi].cfg;
        const size_t Tk = Tm[mi];
        drift_hidden_trace_t ex, tr;
        const size_t nd = (size_t)c->n_layers * DRIFT_TRACE_BLOCKS + 1;
        double *xl = malloc((size_t)c->n_layers * sizeof(double)), *yl = malloc((size_t)c->n_layers * sizeof(double));
        if (drift_hidden_trace_alloc(&ex, c->n_layers, (size_t)c->dim, Tk) ||
            drift_hidden_trace_alloc(&tr, c->n_layers, (size_t)c->dim, Tk) || !xl || !yl)
            drift_die_oom(2.0 * nd * Tk * (size_t)c->dim * sizeof(double),
                "two traces of %zu points x %zu tokens x %d (--tokens, --layers: fewer)", nd, Tk, c->dim);
        drift_numerics_t nxe = drift_numerics_exact();
        drift_hidden_trace_run(&ex, &ck[mi], &nxe, tok[mi]);
        for (int ci = 0; ci < DRIFT_NCONFS; ci++) {
            if (!use[ci]) continue;
            drift_progress(&cli, (size_t)step++, 2 * (size_t)nuse);
            drift_numerics_t nx;
            if (drift_model_config_numerics(&nx, ci)) drift_die("configuration %d: no such numerics", ci);
            drift_hidden_trace_run(&tr, &ck[mi], &nx, tok[mi]);
            double first = 0, lastl = 0, fin = 0;
            for (size_t d = 0; d < nd; d++) {
                double mx, mean = drift_hidden_trace_err(&mx, &tr, &ex, d);
                int layer = (int)(d / DRIFT_TRACE_BLOCKS), blk = d == nd - 1 ? 4 : (int)(d % DRIFT_TRACE_BLOCKS);
                if (d == DRIFT_TRACE_BLOCKS - 1) first = mean;
                if (d == nd - 2) lastl = mean;
                if (d == nd - 1) fin = mean;
                if (blk == DRIFT_BLOCK_MLP) xl[layer] = layer + 1, yl[layer] = mean;
                drift_row(&out, T_ERR, DRIFT_TXT(model_name[mi]), DRIFT_INT(c->n_layers),
                    DRIFT_TXT(drift_model_configs[ci].name), DRIFT_INT(layer), DRIFT_TXT(BLOCK_NAMES[blk]),
                    DRIFT_INT(d), DRIFT_NUM(mean), DRIFT_NUM(mx));
            }
            lab.growth[mi][ci] = first > 0 ? lastl / first : 0, lab.last[mi][ci] = lastl;
            lab.first_u[mi][ci] = first / drift_format_info(drift_model_configs[ci].rounded)->unit_roundoff;
            drift_loglin_fit(&lab.fexp[mi][ci], xl, yl, c->n_layers);
            drift_loglog_fit(&lab.fpow[mi][ci], xl, yl, c->n_layers);
            drift_row(&out, T_FIT, DRIFT_TXT(model_name[mi]), DRIFT_INT(c->n_layers),
                DRIFT_TXT(drift_model_configs[ci].name), DRIFT_INT(1), DRIFT_INT(c->n_layers),
                DRIFT_NUM(exp(lab.fexp[mi][ci].slope)), DRIFT_NUM(exp(lab.fexp[mi][ci].rms)),
                DRIFT_NUM(lab.fpow[mi][ci].slope), DRIFT_NUM(exp(lab.fpow[mi][ci].rms)), DRIFT_NUM(lab.growth[mi][ci]));
            drift_row(&out, T_MD, DRIFT_TXT(model_name[mi]), DRIFT_TXT(drift_model_configs[ci].name), DRIFT_NUM(first),
                DRIFT_NUM(lastl), DRIFT_NUM(fin), DRIFT_NUM(lab.growth[mi][ci]), DRIFT_NUM(exp(lab.fexp[mi][ci].slope)),
                DRIFT_NUM(lab.fpow[mi][ci].slope));
        }
        drift_hidden_trace_free(&ex), drift_hidden_trace_free(&tr), free(xl), free(yl);
    }
    drift_progress(&cli, 2 * (size_t)nuse, 2 * (size_t)nuse);
    drift_md_end(&out, T_MD);
    drift_layer_drift_write(&out, &lab);
    drift_out_commit(&out);
    drift_checkpoint_free(&ck[0]), drift_checkpoint_free(&ck[1]);
    free(tok[0]), free(tok[1]);
    return 0;
}