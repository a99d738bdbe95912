/* layer_drift.c — how the rounding error of a transformer's hidden state accumulates with
 * depth, sub-block by sub-block, against an exact-as-possible reference.
 *
 * Sweep: two models — the shipped stories260K (5 layers, real TinyStories weights) and a seeded
 * synthetic model (drift_checkpoint_synth, dim 64, --layers layers) — under the numerics
 * configurations of --configs (default all four): fp32 (fp32/seq/fp32/fp32), bf16 on the H100
 * tensor-core model (bf16/tc:h100/fp32/bf16), fp16 likewise, and LayerCast (bf16 weights, fp32
 * compute).
 * Measure: each model scores the same --tokens tokens teacher-forced (BOS then uniform random
 * ids from the Philox stream of the seed) alone; drift_model_set_trace reports the hidden state
 * after each sub-block (attention norm, attention residual, MLP norm, MLP residual, final norm);
 * per (model, configuration, layer, sub-block) the relative error ||h - h_exact|| / ||h_exact||
 * of each token's row against the exact model (exact = 1: fp64 with correctly rounded dot
 * products and sums), mean and max over the tokens.
 * Run: ./lab run layer_drift   (./lab run layer_drift --configs fp32,layercast: two of them)
 * Look for: each configuration's error sits near its format's unit roundoff after the first
 * block and grows with depth; bf16/fp16 sit three to four decades above fp32; LayerCast sits with
 * bf16 (its bf16 weights are another model, measured against the fp32 one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "cli.h"
#include "llm_run.h"
#include "drift.h"
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
    "how many decades each 16-bit configuration sits above fp32, and whether LayerCast (bf16 weights, fp32 compute) "
    "sits with bf16, which would make rounding the weights a change of the model rather than a rounding of its "
    "arithmetic.";

enum { T_ERR, T_MD };
static const drift_col_t ERR[] = {DRIFT_C_TEXT("model"), DRIFT_C_INT("layers"), DRIFT_C_TEXT("config"),
                                  DRIFT_C_INT("layer"), DRIFT_C_TEXT("block"), DRIFT_C_INT("depth"),
                                  DRIFT_C_NUM("rel_err_mean", "%.6e"), DRIFT_C_NUM("rel_err_max", "%.6e")};
static const drift_col_t MD[] = {DRIFT_C_TEXT("model"), DRIFT_C_TEXT("config"), DRIFT_C_NUM("after layer 1", "%.3g"),
                                 DRIFT_C_NUM("after last layer", "%.3g"), DRIFT_C_NUM("final norm", "%.3g"),
                                 DRIFT_C_NUM("growth last / first", "%.3g")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, ERR, 8}, {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 6}};

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
    if (!lg) drift_die_oom((double)t->T * ck->cfg.vocab_size * sizeof(double), "the logits of %zu tokens x %d (--tokens: fewer)", (size_t)t->T, ck->cfg.vocab_size);
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
        at += (size_t)snprintf(buf + at, size - at, "%s%s%s", tc ? "" : drift_list_sep(item++, nitem), drift_list_sep(tc, ntc), CONFS[c].shown);
        if (++tc == ntc && at < size) at += (size_t)snprintf(buf + at, size - at, " (H100 tensor-core model)");
    }
}

/* "a" or "a to b" with fmt, as printed (a range whose ends print alike is one number). */
static void range_text(char *buf, size_t size, const char *fmt, double lo, double hi)
{
    char a[40], b[40];
    snprintf(a, sizeof a, fmt, lo);
    snprintf(b, sizeof b, fmt, hi);
    if (strcmp(a, b)) snprintf(buf, size, "%s to %s", a, b);
    else snprintf(buf, size, "%s", a);
}

int main(int argc, char **argv)
{
    long L_ = 0, T_ = 0;
    const char *ckpt = NULL, *confs_opt = "all";
    const drift_cli_opt_t opts[] = {
        {"layers", DRIFT_OPT_INT, &L_, "L", "layers of the synthetic model", 1, 32, {"4", "16", "32"}},
        {"tokens", DRIFT_OPT_INT, &T_, "T", "tokens scored teacher-forced per model", 1, 256, {"8", "64", "128"}},
        DRIFT_CHECKPOINT_OPT(&ckpt),
        {"configs", DRIFT_OPT_LIST, &confs_opt, "LIST", "configurations, comma-separated, from fp32, bf16, fp16, layercast (run in that order), or all (default)", 0, 0, {0}},
    };
    const drift_cli_spec_t spec = DRIFT_LLM_SPEC("layer_drift", QUESTION, opts, "takes no formats or orders (the configurations are the sweep: --configs fp32,bf16,fp16,layercast)", SUMMARY);
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    /* the configurations: the list is checked as a list by the parser (no empty or repeated item) */
    static const char *const CONF_NAMES[NCONF + 1] = {"fp32", "bf16", "fp16", "layercast", "all"};
    int use[NCONF] = {0}, nuse = 0;
    {
        char buf[256], *save = NULL;
        if (strlen(confs_opt) >= sizeof buf) drift_die("--configs: too long (accepted: fp32, bf16, fp16, layercast, all)");
        strcpy(buf, confs_opt);
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            int c = drift_name_pick("--configs", t, CONF_NAMES, NCONF + 1);
            if (c == NCONF && strcmp(confs_opt, "all")) drift_die("--configs: 'all' stands alone (accepted: all, or names from fp32, bf16, fp16, layercast)");
            for (int k = 0; k < NCONF; k++) use[k] |= c == NCONF || c == k;
        }
        for (int k = 0; k < NCONF; k++) nuse += use[k];
    }
    const size_t T = (size_t)T_;
    drift_checkpoint_t ck[2];
    drift_llm_run_open(&ck[0], &ckpt);
    char err[DRIFT_LLM_ERR_MAX];
    if ((long)T > ck[0].cfg.seq_len) drift_die("--tokens: at most %d on this checkpoint", ck[0].cfg.seq_len);
    const drift_llm_config_t syn = {64, 172, (int)L_, 8, 4, 512, (int)T, 0, 0, 0};
    if (drift_checkpoint_synth(&ck[1], &syn, cli.seed, err, sizeof err)) drift_die("synthetic model: %s", err);
    const char *model_name[2] = {"stories260K", "synthetic"};

    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 2, 1);
    drift_out_meta(&out, T_ERR, "table", "per (model, config, layer, block): %zu tokens (BOS then uniform random ids) scored teacher-forced alone; synthetic = drift_checkpoint_synth dim 64 hidden 172 heads 8/4 vocab 512, seed %llu", T, (unsigned long long)cli.seed);
    drift_out_meta(&out, T_ERR, "columns", "depth = 4 layer + block index (attn-norm 0, attn 1, mlp-norm 2, mlp 3; final-norm = 4 L); rel_err = ||h - h_exact||_2 / ||h_exact||_2 per token row, mean and max over the tokens; h_exact from the exact model (fp64, correctly rounded dots and sums)");
    char under[192];
    configs_phrase(under, sizeof under, use);
    drift_md_intro(&out, "Hidden states of stories260K (5 layers, real weights) and of a synthetic model (%ld layers), %zu tokens teacher-forced, under %s, against the exact reference: fp64 throughout with every dot product and sum correctly rounded to fp64 (the superaccumulator of exact.h) and glibc fp64 elementwise functions, so each operation errs by at most ~2^-52 relative and the reference sits at least eight orders of magnitude below the fp32 effects measured.", L_, T, under);

    double growth[2][NCONF], last[2][NCONF], first_u[2][NCONF];
    int step = 0;
    for (int mi = 0; mi < 2; mi++) {
        const drift_llm_config_t *c = &ck[mi].cfg;
        trace_t ex = {c->n_layers, (size_t)c->dim, T, NULL, NULL}, tr = ex;
        size_t nd = (size_t)c->n_layers * NBLK + 1;
        ex.h = malloc(nd * T * ex.dim * sizeof(double)), tr.h = malloc(nd * T * ex.dim * sizeof(double));
        ex.count = calloc(nd, sizeof(size_t)), tr.count = calloc(nd, sizeof(size_t));
        int *tok = malloc(T * sizeof(int));
        if (!ex.h || !tr.h || !ex.count || !tr.count || !tok)
            drift_die_oom(2.0 * nd * T * ex.dim * sizeof(double), "two traces of %zu points x %zu tokens x %zu (--tokens, --layers: fewer)", nd, (size_t)T, ex.dim);
        drift_stream_t st;
        drift_stream_init(&st, cli.seed, drift_fnv1a32("layer_drift.tokens"), (uint32_t)mi, 0);
        tok[0] = 1;
        for (size_t i = 1; i < T; i++) tok[i] = (int)drift_stream_below(&st, (uint32_t)c->vocab_size);
        drift_numerics_t nxe = drift_numerics_exact();
        run_model(&ex, &ck[mi], &nxe, tok);
        for (int ci = 0; ci < NCONF; ci++) {
            if (!use[ci]) continue;
            drift_progress(&cli, (size_t)step++, 2 * (size_t)nuse);
            drift_numerics_t nx = drift_numerics_fp32();
            drift_recipe_t r;
            if (drift_model_recipe_parse(&r, CONFS[ci].recipe)) drift_die("bad recipe %s", CONFS[ci].recipe);
            drift_numerics_set_mm(&nx, &r);
            if (drift_format_parse(&nx.weights, CONFS[ci].weights)) drift_die("bad weights %s", CONFS[ci].weights);
            run_model(&tr, &ck[mi], &nx, tok);
            double first = 0, lastl = 0, fin = 0;
            for (size_t d = 0; d < nd; d++) {
                double sum = 0, mx = 0;
                for (size_t i = 0; i < T; i++) {
                    const double *a = tr.h + (d * T + i) * ex.dim, *b = ex.h + (d * T + i) * ex.dim;
                    double num = 0, den = 0;
                    for (size_t j = 0; j < ex.dim; j++) num += (a[j] - b[j]) * (a[j] - b[j]), den += b[j] * b[j];
                    double e = den > 0 ? sqrt(num / den) : 0;
                    sum += e, mx = fmax(mx, e);
                }
                double mean = sum / (double)T;
                int layer = (int)(d / NBLK), blk = d == nd - 1 ? 4 : (int)(d % NBLK);
                if (d == NBLK - 1) first = mean;
                if (d == nd - 2) lastl = mean;
                if (d == nd - 1) fin = mean;
                drift_row(&out, T_ERR, DRIFT_TXT(model_name[mi]), DRIFT_INT(c->n_layers), DRIFT_TXT(CONFS[ci].name),
                          DRIFT_INT(layer), DRIFT_TXT(BLOCK_NAMES[blk]), DRIFT_INT(d), DRIFT_NUM(mean), DRIFT_NUM(mx));
            }
            growth[mi][ci] = first > 0 ? lastl / first : 0, last[mi][ci] = lastl;
            first_u[mi][ci] = first / drift_format_info(CONFS[ci].rounded)->unit_roundoff;
            drift_row(&out, T_MD, DRIFT_TXT(model_name[mi]), DRIFT_TXT(CONFS[ci].name), DRIFT_NUM(first), DRIFT_NUM(lastl),
                      DRIFT_NUM(fin), DRIFT_NUM(growth[mi][ci]));
        }
        free(ex.h), free(tr.h), free(ex.count), free(tr.count), free(tok);
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
        /* how the growth compares with the two additive models, said from the data */
        const double L = ck[mi].cfg.n_layers, sq = sqrt(L);
        const char *how = gmin[mi] > L    ? "faster than both sqrt(L) = %.3g (independent per-layer errors adding up) and L = %d (errors adding in step): the network amplifies the errors of earlier layers"
                        : gmin[mi] > sq   ? "between sqrt(L) = %.3g (independent per-layer errors adding up) and L = %d (errors adding in step)"
                        : gmax[mi] < sq   ? "less than sqrt(L) = %.3g (independent per-layer errors adding up; errors adding in step would give L = %d): later layers damp part of the earlier errors"
                                          : "around sqrt(L) = %.3g (independent per-layer errors adding up; in step: L = %d)";
        char hb[320], grows[64];
        snprintf(hb, sizeof hb, how, sq, ck[mi].cfg.n_layers);
        if (nuse > 1) snprintf(grows, sizeof grows, "%.3g to %.3g", gmin[mi], gmax[mi]);
        else snprintf(grows, sizeof grows, "%.3g", gmin[mi]);
        drift_md_text(&out, "- %s (%d layers): from the first layer's output to the last, the mean relative error grows %s times, %s",
                      model_name[mi], ck[mi].cfg.n_layers, grows, hb);
        /* each other configuration against fp32, when fp32 ran */
        for (int ci = 0, k = 0; use[C_FP32] && ci < NCONF; ci++) {
            if (ci == C_FP32 || !use[ci]) continue;
            if (k++ == 0) drift_md_text(&out, "; after the last layer %s is %.3g times fp32", CONFS[ci].shown, last[mi][ci] / last[mi][C_FP32]);
            else drift_md_text(&out, ", %s %.3g times", CONFS[ci].shown, last[mi][ci] / last[mi][C_FP32]);
        }
        drift_md_text(&out, ".\n");
    }
    drift_md_text(&out, "- The reference is fp64 with correctly rounded dot products: its own error is near 1e-13 relative for the whole pass, far below every number above.\n\n");

    /* What you just saw, from this run's data and configurations only. */
    char r[96];
    drift_out_summary(&out, "after the first layer the relative error of the hidden state is");
    for (int ci = 0, k = 0; ci < NCONF; ci++) {
        if (!use[ci]) continue;
        range_text(r, sizeof r, "%.2g", fmin(first_u[0][ci], first_u[1][ci]), fmax(first_u[0][ci], first_u[1][ci]));
        drift_out_summary(&out, "%s%s u for %s", k ? drift_list_sep(k, nuse) : " ", r, CONFS[ci].shown);
        k++;
    }
    drift_out_summary(&out, " (u = the unit roundoff of the configuration's format%s; both models); by the last layer it has grown",
                      use[C_LAYERCAST] ? ", bf16's for LayerCast's weights" : "");
    for (int mi = 0; mi < 2; mi++) {
        range_text(r, sizeof r, "%.3g", gmin[mi], gmax[mi]);
        drift_out_summary(&out, "%s %s times on %s (%d layers)", mi ? " and" : "", r, mi ? "the synthetic model" : model_name[mi], ck[mi].cfg.n_layers);
    }
    if (use[C_FP32] && nuse > 1) {
        drift_out_summary(&out, "; after the last layer");  /* "bf16 sits 4.0 decades above fp32, fp16 3.2 and LayerCast 4.0" */
        for (int ci = 0, k = 0; ci < NCONF; ci++) {
            if (ci == C_FP32 || !use[ci]) continue;
            double d0 = log10(last[0][ci] / last[0][C_FP32]), d1 = log10(last[1][ci] / last[1][C_FP32]);
            range_text(r, sizeof r, "%.1f", fmin(d0, d1), fmax(d0, d1));
            drift_out_summary(&out, "%s%s %s%s%s", k ? drift_list_sep(k, nuse - 1) : " ", CONFS[ci].shown, k ? "" : "sits ", r, k ? "" : " decades above fp32");
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
            drift_out_summary(&out, ". LayerCast (bf16 weights, fp32 compute) sits with bf16 (%s times its error after the last layer): measured against the fp32 model, rounding the weights to bf16 is a change of the model, not a rounding of its arithmetic", r);
        else
            drift_out_summary(&out, ". LayerCast (bf16 weights, fp32 compute) has %s times bf16's error after the last layer", r);
    }
    drift_out_summary(&out, ".");
    drift_out_commit(&out);
    drift_checkpoint_free(&ck[0]), drift_checkpoint_free(&ck[1]);
    return 0;
}
