/* real_gaps.c — how close are a real model's top two logits on its own greedy text, and how
 * many argmax flips does that predict for each numerics configuration?
 *
 * Sweep: --sequences greedy texts of SmolLM2-135M-Instruct (default; the prompts drawn by the
 * seed from --prompts, the witness prompt set, then --tokens fp32 greedy tokens, run alone;
 * the gaps are those of the generated positions) or of a llama2.c checkpoint (BOS, one random
 * first token from the seed's Philox stream, then the greedy tokens; every position); four
 * configurations: fp32
 * (fp32/seq/fp32/fp32), bf16 and fp16 on the H100 tensor-core model (bf16/tc:h100/fp32/bf16,
 * fp16/tc:h100/fp32/fp16: logits stored in bf16 / fp16), LayerCast (bf16 weights, fp32 compute).
 * Measure: the exact model (fp64, correctly rounded dots) teacher-forced over every text gives
 * the exact logits of every prefix: their top-1/top-2 gap D (distribution, density near 0).
 * Each configuration teacher-forced over the same tokens gives its logits: sigma = the rms of its
 * error in the gap of the exact top pair; the predicted flips sum_i Phi(-D_i / sigma) (fliplaw.h
 * GAUSS) and sum_i P_conv(D_i; sigma, q_i) (CONV, q_i = the output format's spacing at the top
 * logit: the logits are stored in it), beside the flips observed (its argmax != the exact one).
 * Run: ./lab run real_gaps
 * Look for: real gaps are mostly far above fp32's noise, so fp32 flips are rare; bf16 and fp16
 * flip a few percent of positions, and the predicted counts sit near the observed ones. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "cli.h"
#include "llm_run.h"
#include "drift.h"
#include "errlaw.h"
#include "fliplaw.h"
#include "metrics.h"
#include "model.h"
#include "output.h"
#include "philox.h"
#include "prompt_file.h"
#include "prompt_sample.h"

static const char QUESTION[] =
    "How close are a real model's top two logits on its own greedy text, and how many argmax flips does that predict for each numerics configuration?";
static const char SUMMARY[] =
    "the exact top-1/top-2 gaps of a real model's own greedy text spread over decades; the few below a configuration's "
    "logit noise sigma are where it flips. The Gaussian law Phi(-gap/sigma), with sigma measured against the exact "
    "model, predicts how many flips each configuration makes from the gaps alone; fp32's noise is far below almost "
    "every real gap, bf16's is not.";

enum { T_GAPS, T_HIST, T_FLIPS, T_ERRLAW, T_ERRPOS, T_MD_GAPS, T_MD_FLIPS };
static const drift_col_t GAPS[] = {DRIFT_C_INT("seq"), DRIFT_C_INT("pos"), DRIFT_C_INT("token"),
    DRIFT_C_INT("exact_top1"), DRIFT_C_INT("exact_top2"), DRIFT_C_NUM("exact_gap", "%.17g")};
static const drift_col_t HIST[] = {DRIFT_C_NUM("bin_lo", "%.6g"), DRIFT_C_NUM("bin_hi", "%.6g"), DRIFT_C_INT("count"),
    DRIFT_C_NUM("frac", "%.6g"), DRIFT_C_NUM("cum_frac", "%.6g")};
static const drift_col_t FLIPS[] = {DRIFT_C_TEXT("config"), DRIFT_C_TEXT("recipe"), DRIFT_C_TEXT("weights"),
    DRIFT_C_INT("positions"), DRIFT_C_NUM("sigma", "%.6e"), DRIFT_C_NUM("predicted_gauss", "%.6g"),
    DRIFT_C_NUM("predicted_conv", "%.6g"), DRIFT_C_INT("observed"), DRIFT_C_NUM("frac_gaps_below_sigma", "%.6g")};
static const drift_col_t ERRLAW[] = {DRIFT_C_TEXT("config"), DRIFT_C_NUM("logit_lo", "%.6g"),
    DRIFT_C_NUM("logit_hi", "%.6g"), DRIFT_C_INT("logits"), DRIFT_C_INT("folds"), DRIFT_C_NUM("q", "%.6g"),
    DRIFT_C_NUM("rms", "%.6g"), DRIFT_C_NUM("sigma_gauss", "%.6g"), DRIFT_C_NUM("sigma_conv", "%.6g"),
    DRIFT_C_NUM("heldout_dloglik", "%.6g"), DRIFT_C_INT("folds_conv"), DRIFT_C_NUM("power_conv", "%.6g"),
    DRIFT_C_NUM("power_gauss", "%.6g"), DRIFT_C_TEXT("winner")};
static const drift_col_t ERRPOS[] = {DRIFT_C_TEXT("config"), DRIFT_C_INT("pos_lo"), DRIFT_C_INT("pos_hi"),
    DRIFT_C_INT("positions"), DRIFT_C_NUM("rms_gap_error", "%.6g"), DRIFT_C_NUM("rms_top1_error", "%.6g")};
static const drift_col_t MDG[] = {DRIFT_C_INT("positions"), DRIFT_C_NUM("median gap", "%.3g"),
    DRIFT_C_NUM("gap < 0.01", "%.3g"), DRIFT_C_NUM("gap < 0.1", "%.3g"), DRIFT_C_NUM("gap < 1", "%.3g"),
    DRIFT_C_NUM("density at 0 (per logit unit)", "%.3g")};
static const drift_col_t MDF[] = {DRIFT_C_TEXT("config"), DRIFT_C_NUM("sigma", "%.3g"),
    DRIFT_C_NUM("predicted (Phi)", "%.3g"), DRIFT_C_NUM("predicted (conv)", "%.3g"), DRIFT_C_INT("observed")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, GAPS, 6}, {"_hist.csv", NULL, 0, HIST, 5},
    {"_flips.csv", NULL, 0, FLIPS, 9}, {"_errlaw.csv", NULL, 0, ERRLAW, 14}, {"_errpos.csv", NULL, 0, ERRPOS, 6},
    {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDG, 6}, {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDF, 5}};

typedef struct {
    const char *name, *recipe, *weights;
} conf_t;
static const conf_t CONFS[] = {
    {"fp32", "fp32/seq/fp32/fp32", "fp32"},
    {"bf16", "bf16/tc:h100/fp32/bf16", "fp32"},
    {"fp16", "fp16/tc:h100/fp32/fp16", "fp32"},
    {"layercast", "fp32/seq/fp32/fp32", "bf16"},
};
#define NCONF ((int)(sizeof CONFS / sizeof CONFS[0]))

static void numerics(drift_numerics_t *nx, const conf_t *c)
{
    *nx = drift_numerics_fp32();
    drift_recipe_t r;
    if (drift_model_recipe_parse(&r, c->recipe)) drift_die("bad recipe %s", c->recipe);
    drift_numerics_set_mm(nx, &r);
    if (drift_format_parse(&nx->weights, c->weights)) drift_die("bad weights %s", c->weights);
}

static drift_model_t *model(const drift_checkpoint_t *ck, const drift_numerics_t *nx)
{
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    if (drift_model_create(&m, ck, nx, 1, err, sizeof err)) drift_die("model: %s", err);
    return m;
}

/* The texts: each a prompt and its fp32 greedy continuation; the gaps are measured at the
 * positions [from, n) of each (the logits after token p choose token p + 1). */
typedef struct {
    int *tok;
    int n, from;
} text_t;

/* A GGUF model's prompts: R of the prompt set, drawn without replacement by the seed. */
static void gguf_prompts(text_t *tx, int R, int T, const drift_checkpoint_t *ck, const char *path, uint64_t seed)
{
    char err[DRIFT_LLM_ERR_MAX];
    drift_prompt_file_t pf;
    if (drift_prompt_file_read(&pf, path, err, sizeof err)) drift_die("--prompts: %s", err);
    if (R > pf.n) drift_die("--sequences: at most %d (the prompts in %s)", pf.n, path);
    drift_tokenizer_t tz;
    if (drift_tokenizer_from_gguf(&tz, ck->gguf, err, sizeof err)) drift_die("--checkpoint: %s", err);
    int *order = malloc((size_t)R * sizeof(int));
    if (!order) drift_die_oom((double)R * sizeof(int), "the order of %d prompts (--sequences: fewer)", R);
    if (drift_prompt_sample(order, R, &pf, seed, "real_gaps.prompts", err, sizeof err))
        drift_die("--sequences: %s", err);
    for (int s = 0; s < R; s++) {
        int cap = ck->cfg.seq_len, np = 0;
        tx[s].tok = malloc((size_t)cap * sizeof(int));
        if (!tx[s].tok) drift_die_oom((double)cap * sizeof(int), "a text of %d tokens (the checkpoint's context)", cap);
        int rc = drift_tokenizer_encode_ex(&tz, pf.text[order[s]], 1, 1, tx[s].tok, cap, &np);
        if (rc || np < 1 || np + T > cap)
            drift_die(
                "--prompts: prompt %d of %s: %s", order[s], path, rc ? drift_strerror(rc) : "too long for --tokens");
        tx[s].from = np - 1, tx[s].n = np + T;
    }
    free(order);
    drift_tokenizer_free(&tz);
    drift_prompt_file_free(&pf);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The law of each configuration's logit error. At each position the errors of KS logits
 * against the exact ones: the exact top ES, then every STRIDE-th id of the rest (a sample of
 * the whole vocabulary's scale). They are grouped by the binade [2^k, 2^(k+1)) of |exact
 * logit|, k = BIN_LO .. BIN_LO + NBIN - 1, where the output format's spacing q is one value;
 * smaller logits are left out (their q varies within the group). */
#define ES 32
#define STRIDE 64
#define BIN_LO (-3)
#define NBIN 9

/* ids of position's KS logits into idx: the exact top ES (the top one first), then the
 * STRIDE-th ids not among them; returns their count */
static int errlaw_ids(int *idx, const double *ex, int V)
{
    int n = 0;
    for (int v = 0; v < V; v++) { /* the top ES in order, kept sorted; the first id wins ties */
        if (n == ES && !(ex[v] > ex[idx[n - 1]])) continue;
        int j = n < ES ? n++ : n - 1;
        while (j > 0 && ex[v] > ex[idx[j - 1]]) idx[j] = idx[j - 1], j--;
        idx[j] = v;
    }
    const int top = n;
    for (int v = 0; v < V; v += STRIDE) {
        int taken = 0;
        for (int j = 0; j < top && !taken; j++) taken = idx[j] == v;
        if (!taken) idx[n++] = v;
    }
    return n;
}

/* one configuration's error law per binade (errlaw.h: each text held out in turn) into its
 * table; winner[b]: 'c' CONV, 'g' GAUSS, 'u' undecided, 0 no data */
typedef struct {
    double sg_min, sg_max;                    /* GAUSS sigma over the binades fitted */
    double top_lo, top_q, top_power, top_dll; /* the highest binade fitted: its edge, q, the larger power, dloglik */
    double max_power;                         /* the larger power, over the binades */
    double lo_min;                            /* the lowest binade fitted */
} errlaw_sum_t;

static void errlaw_rows(drift_out_t *out, const char *name, drift_format_t of, const double *err, const double *val,
    const int *text, size_t ne, int R, char *winner, errlaw_sum_t *sum)
{
    *sum = (errlaw_sum_t){INFINITY, -INFINITY, NAN, NAN, NAN, NAN, 0, NAN};
    drift_errlaw_bin_t bins[NBIN];
    int nb = drift_errlaw_binades(bins, err, val, text, ne, R, BIN_LO, NBIN, of);
    if (nb < 0) drift_die("out of memory for the error law (%zu errors)", ne);
    memset(winner, 0, NBIN);
    for (int j = 0; j < nb; j++) {
        const drift_errlaw_bin_t *b = &bins[j];
        winner[(int)lround(log2(b->lo)) - BIN_LO] = b->winner;
        if (j == 0) sum->lo_min = b->lo;
        if (b->sigma_gauss < sum->sg_min) sum->sg_min = b->sigma_gauss;
        if (b->sigma_gauss > sum->sg_max) sum->sg_max = b->sigma_gauss;
        sum->top_lo = b->lo, sum->top_q = b->q, sum->top_dll = b->dloglik;
        sum->top_power = b->power_conv > b->power_gauss ? b->power_conv : b->power_gauss;
        if (sum->top_power > sum->max_power) sum->max_power = sum->top_power;
        drift_row(out, T_ERRLAW, DRIFT_TXT(name), DRIFT_NUM(b->lo), DRIFT_NUM(b->hi), DRIFT_INT(b->n),
            DRIFT_INT(b->folds), DRIFT_NUM(b->q), DRIFT_NUM(b->rms), DRIFT_NUM(b->sigma_gauss),
            DRIFT_NUM(b->sigma_conv), DRIFT_NUM(b->dloglik), DRIFT_INT(b->folds_conv), DRIFT_NUM(b->power_conv),
            DRIFT_NUM(b->power_gauss),
            DRIFT_TXT(b->winner == 'c'   ? "conv"
                      : b->winner == 'g' ? "gauss"
                                         : "undecided"));
    }
}

/* "conv at |logit| 2^2..2^5; undecided at 2^-3..2^1" from the per-binade winners */
static void errlaw_words(char *buf, size_t size, const char *winner)
{
    static const char *const NAME[] = {"conv", "gauss", "undecided"};
    static const char CODE[] = "cgu";
    size_t at = 0;
    buf[0] = 0;
    for (int w = 0; w < 3; w++) {
        int first = 1;
        for (int b = 0; b < NBIN; b++) {
            if (winner[b] != CODE[w]) continue;
            int e = b;
            while (e + 1 < NBIN && winner[e + 1] == CODE[w]) e++;
            at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s%s at [2^%d, 2^%d)",
                first ? (at ? "; " : "") : ",", first ? NAME[w] : "", BIN_LO + b, BIN_LO + e + 1);
            first = 0, b = e;
        }
    }
    if (!buf[0]) snprintf(buf, size, "too few logits in every binade");
}

int main(int argc, char **argv)
{
    long R_ = 0, T_ = 0;
    const char *ckpt = NULL, *prompts = NULL;
    const drift_cli_opt_t opts[] = {
        {"sequences", DRIFT_OPT_INT, &R_, "R",
            "greedy texts (GGUF: prompts drawn from --prompts; llama2.c: BOS and one random first token)", 1, 4096,
            {"2", "3", "10"}},
        {"tokens", DRIFT_OPT_INT, &T_, "T", "greedy tokens per text", 1, 4096, {"24", "24", "128"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE",
            "checkpoint, llama2.c .bin or GGUF (when not given: SmolLM2-135M-Instruct in the default and full profiles, stories260K in quick, "
            "whose run is a smoke test of seconds)",
            0, 0, {0}},
        {"prompts", DRIFT_OPT_STRING, &prompts, "FILE",
            "prompt set of a GGUF model (default tests/data/llamacpp_prompts.txt)", 0, 0, {0}},
    };
    const drift_cli_spec_t spec = DRIFT_LLM_SPEC("real_gaps", QUESTION, opts,
        "takes no formats or orders (the configurations are the sweep: fp32, bf16, fp16, LayerCast)", SUMMARY);
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    const int R = (int)R_, T = (int)T_;
    if (drift_llm_run_choose(&ckpt, &cli, NULL)) return DRIFT_EXIT_SKIPPED;
    drift_checkpoint_t ck;
    drift_llm_run_open(&ck, &ckpt); /* and one thread: the model's GEMMs are too small for a parallel region each */
    const size_t V = (size_t)ck.cfg.vocab_size;
    text_t *tx = calloc((size_t)R, sizeof *tx);
    if (!tx) drift_die_oom((double)R * sizeof *tx, "%d texts (--sequences: fewer)", R);
    if (ck.gguf) {
        gguf_prompts(tx, R, T, &ck, prompts ? prompts : DRIFT_SOURCE_DIR "/tests/data/llamacpp_prompts.txt", cli.seed);
    } else {
        if (prompts) drift_die("--prompts: a llama2.c checkpoint holds no tokenizer (its texts start from BOS)");
        if (T + 2 > ck.cfg.seq_len) drift_die("--tokens: at most %d on this checkpoint", ck.cfg.seq_len - 2);
        for (int s = 0; s < R; s++) { /* BOS, the first token, T generated: every position scored */
            if (!(tx[s].tok = malloc((size_t)(T + 2) * sizeof(int))))
                drift_die_oom((double)(T + 2) * sizeof(int), "a text of %d tokens (--tokens: fewer)", T + 2);
            drift_stream_t st;
            drift_stream_init(&st, cli.seed, drift_fnv1a32("real_gaps.first"), (uint32_t)s, 0);
            tx[s].tok[0] = 1,
            tx[s].tok[1] = 3 + (int)drift_stream_below(&st, (uint32_t)V - 3); /* not <unk>, BOS or EOS */
            tx[s].from = 0, tx[s].n = T + 2;
        }
    }
    size_t NP = 0;
    int nmax = 0;
    for (int s = 0; s < R; s++) NP += (size_t)(tx[s].n - tx[s].from), nmax = tx[s].n > nmax ? tx[s].n : nmax;
    const char *base = strrchr(ckpt, '/') ? strrchr(ckpt, '/') + 1 : ckpt;

    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 7, 1);
    drift_out_meta(&out, T_GAPS, "table",
        "per scored position: %d texts of %s (%s, then %d fp32 greedy tokens; %zu positions), the exact model teacher-forced over them",
        R, base, ck.gguf ? "a prompt drawn from the prompt set" : "BOS and a random first token", T, NP);
    drift_out_meta(&out, T_GAPS, "columns",
        "token = the text's next token (the fp32 greedy choice after the prompt); "
        "exact_top1/top2 = the exact model's top two (first index wins ties); exact_gap = their logit difference (fp64 reference: correctly rounded dots)");
    drift_out_meta(&out, T_HIST, "table",
        "histogram of exact_gap over log10 bins (10 per decade, 1e-6 .. 1e2; the first bin also holds gaps below 1e-6)");
    drift_out_meta(&out, T_FLIPS, "table", "per configuration: teacher-forced over the same tokens");
    drift_out_meta(&out, T_FLIPS, "columns",
        "sigma = rms over positions of (config gap - exact gap) on the exact top pair; predicted_gauss = sum Phi(-gap/sigma); "
        "predicted_conv = sum of fliplaw CONV with q = ulp of the LM head's output format at the exact top logit; "
        "observed = positions whose argmax differs from the exact one; frac_gaps_below_sigma = fraction of positions with exact gap < sigma");
    drift_md_intro(&out,
        "%d greedy texts of %s (%s, %d fp32 greedy tokens; %zu positions), scored teacher-forced by the exact model (fp64, "
        "correctly rounded dots: within ~1e-13 relative of the real-number logits) and by fp32, bf16, fp16 (H100 tensor-core model, "
        "logits stored in the format) and LayerCast (bf16 weights, fp32 compute).",
        R, base,
        ck.gguf ? "prompts drawn by the seed from the witness prompt set; the generated positions are measured"
                : "BOS, one random first token",
        T, NP);

    /* -- the texts: fp32 greedy, alone -- */
    double *ex = malloc((size_t)nmax * V * sizeof(double)), *lg = malloc((size_t)nmax * V * sizeof(double));
    double *gap = malloc(NP * sizeof(double)), *top = malloc(NP * sizeof(double)),
           *sorted = malloc(NP * sizeof(double));
    int *t1 = malloc(NP * sizeof(int)), *t2 = malloc(NP * sizeof(int));
    double *egap = malloc((size_t)NCONF * NP * sizeof(double));
    unsigned char *flip = malloc((size_t)NCONF * NP);
    const int KSMAX = ES + (int)(V / STRIDE) + 1;
    int *sidx = malloc(NP * (size_t)KSMAX * sizeof(int)), *ks = malloc(NP * sizeof(int)),
        *stext = malloc(NP * sizeof(int));
    double *sval = malloc(NP * (size_t)KSMAX * sizeof(double)),
           *serr = malloc((size_t)NCONF * NP * (size_t)KSMAX * sizeof(double));
    if (!ex || !lg || !gap || !top || !sorted || !t1 || !t2 || !egap || !flip || !sidx || !ks || !stext || !sval ||
        !serr)
        drift_die_oom(16.0 * (double)nmax * V +
                          (double)NP * (3 * sizeof(double) + 2 * sizeof(int) + NCONF * (sizeof(double) + 1)) +
                          (double)NP * KSMAX * (sizeof(int) + (1.0 + NCONF) * sizeof(double)),
            "two %zu x %zu logit tables, the %zu positions' gaps and their %d sampled logits (--tokens, --sequences: fewer)",
            (size_t)nmax, V, (size_t)NP, KSMAX);
    {
        drift_numerics_t nx = drift_numerics_fp32();
        drift_model_t *m = model(&ck, &nx);
        for (int s = 0; s < R; s++) {
            int *tk = tx[s].tok, first = ck.gguf ? tx[s].from : 1; /* the first step whose choice is kept */
            for (int p = 0; p < tx[s].n - 1; p++) {
                drift_seq_step_t sq = {0, p, 1, &tk[p]};
                if (drift_model_step(m, lg, &sq, 1)) drift_die("forward step failed");
                if (p >= first) {
                    drift_top2_t tt;
                    drift_top2(&tt, lg, V);
                    tk[p + 1] = (int)tt.top1;
                }
            }
        }
        drift_model_free(m);
    }
    /* -- exact scores, then each configuration's, text by text (one model each) -- */
    drift_numerics_t nxe = drift_numerics_exact(), nxc[NCONF];
    for (int c = 0; c < NCONF; c++) numerics(&nxc[c], &CONFS[c]);
    drift_model_t *m = model(&ck, &nxe);
    for (int s = 0, i = 0; s < R; s++) {
        drift_progress(&cli, (size_t)s, (size_t)R * (NCONF + 1));
        const int *tk = tx[s].tok;
        if (drift_model_score(m, ex, tk, tx[s].n)) drift_die("forward pass failed");
        for (int p = tx[s].from; p < tx[s].n; p++, i++) {
            drift_top2_t tt;
            drift_top2(&tt, ex + (size_t)p * V, V);
            t1[i] = (int)tt.top1, t2[i] = (int)tt.top2;
            top[i] = ex[(size_t)p * V + tt.top1];
            gap[i] = top[i] - ex[(size_t)p * V + tt.top2];
            ks[i] = errlaw_ids(sidx + i * (size_t)KSMAX, ex + (size_t)p * V, (int)V), stext[i] = s;
            for (int k = 0; k < ks[i]; k++)
                sval[i * (size_t)KSMAX + k] = ex[(size_t)p * V + sidx[i * (size_t)KSMAX + k]];
            drift_row(&out, T_GAPS, DRIFT_INT(s), DRIFT_INT(p), DRIFT_INT(p + 1 < tx[s].n ? tk[p + 1] : -1),
                DRIFT_INT(t1[i]), DRIFT_INT(t2[i]), DRIFT_NUM(gap[i]));
        }
    }
    drift_model_free(m);
    /* The configurations are independent: side by side on the cores (--threads), each with its
     * own model and one thread inside (the data do not depend on the thread count). */
    int workers = cli.threads > 0 ? cli.threads : omp_get_num_procs();
    if (workers > NCONF) workers = NCONF;
    int failed = 0;
#pragma omp parallel for num_threads(workers) schedule(dynamic, 1) reduction(| : failed)
    for (int c = 0; c < NCONF; c++) {
        double *lc = malloc((size_t)nmax * V * sizeof(double));
        drift_model_t *mc = lc ? model(&ck, &nxc[c]) : NULL;
        for (int s = 0, i = 0; mc && s < R && !failed; s++) {
            if (omp_get_thread_num() == 0)
                drift_progress(&cli, (size_t)R * (size_t)(c + 1) + (size_t)s, (size_t)R * (NCONF + 1));
            if (drift_model_score(mc, lc, tx[s].tok, tx[s].n)) failed = 1;
            for (int p = tx[s].from; p < tx[s].n && !failed; p++, i++) {
                const double *l = lc + (size_t)p * V;
                drift_top2_t tt;
                drift_top2(&tt, l, V);
                egap[(size_t)c * NP + (size_t)i] = (l[t1[i]] - l[t2[i]]) - gap[i];
                double *e = serr + ((size_t)c * NP + (size_t)i) * (size_t)KSMAX;
                for (int k = 0; k < ks[i]; k++) e[k] = l[sidx[i * (size_t)KSMAX + k]] - sval[i * (size_t)KSMAX + k];
                flip[(size_t)c * NP + (size_t)i] = (int)tt.top1 != t1[i];
            }
        }
        failed |= !mc;
        drift_model_free(mc);
        free(lc);
    }
    if (failed) drift_die("forward pass failed (or out of memory for a configuration's model)");
    /* -- the gap distribution -- */
    memcpy(sorted, gap, NP * sizeof(double));
    qsort(sorted, NP, sizeof(double), cmp_double);
    drift_logbins_t bins;
    if (drift_logbins_init(&bins, 1e-6, 1e2, 80)) drift_die("bins");
    long cnt[DRIFT_BINS_MAX] = {0};
    for (size_t i = 0; i < NP; i++) {
        int b = gap[i] < 1e-6 ? 0 : drift_logbins_find(&bins, gap[i]);
        if (b >= 0) cnt[b]++;
    }
    long cum = 0;
    for (int b = 0; b < bins.nbins; b++) {
        cum += cnt[b];
        drift_row(&out, T_HIST, DRIFT_NUM(bins.edge[b]), DRIFT_NUM(bins.edge[b + 1]), DRIFT_INT(cnt[b]),
            DRIFT_NUM((double)cnt[b] / (double)NP), DRIFT_NUM((double)cum / (double)NP));
    }
    long below[3] = {0};
    const double thr[3] = {0.01, 0.1, 1};
    for (size_t i = 0; i < NP; i++)
        for (int k = 0; k < 3; k++) below[k] += gap[i] < thr[k];
    /* density at 0: the fraction of gaps below 0.1, per unit of gap (a histogram bin at 0) */
    const double dens0 = (double)below[1] / (double)NP / 0.1;
    const double median = NP % 2 ? sorted[NP / 2] : 0.5 * (sorted[NP / 2 - 1] + sorted[NP / 2]);
    drift_md_text(&out, "**Exact top-1/top-2 gaps on the model's own greedy text:**\n\n");
    drift_row(&out, T_MD_GAPS, DRIFT_INT(NP), DRIFT_NUM(median), DRIFT_NUM((double)below[0] / (double)NP),
        DRIFT_NUM((double)below[1] / (double)NP), DRIFT_NUM((double)below[2] / (double)NP), DRIFT_NUM(dens0));
    drift_md_end(&out, T_MD_GAPS);
    drift_md_text(&out, "**Flips predicted from the gaps and the configuration's noise, and observed:**\n\n");
    double sig[NCONF], pg[NCONF], pc[NCONF];
    long obs[NCONF];
    for (int c = 0; c < NCONF; c++) {
        double ss = 0;
        for (size_t i = 0; i < NP; i++) ss += egap[(size_t)c * NP + i] * egap[(size_t)c * NP + i];
        sig[c] = sqrt(ss / (double)NP);
        pg[c] = 0, pc[c] = 0, obs[c] = 0;
        long bs = 0;
        const drift_format_t of = nxc[c].mm[DRIFT_OP_LMHEAD].out;
        for (size_t i = 0; i < NP; i++) {
            pg[c] += sig[c] > 0 ? drift_fliplaw_p(DRIFT_FLIPLAW_GAUSS, gap[i], sig[c], 0) : (gap[i] == 0 ? 0.5 : 0);
            pc[c] += drift_fliplaw_p(DRIFT_FLIPLAW_CONV, gap[i], sig[c], drift_ulp(top[i], of));
            obs[c] += flip[(size_t)c * NP + i];
            bs += gap[i] < sig[c];
        }
        drift_row(&out, T_FLIPS, DRIFT_TXT(CONFS[c].name), DRIFT_TXT(CONFS[c].recipe), DRIFT_TXT(CONFS[c].weights),
            DRIFT_INT(NP), DRIFT_NUM(sig[c]), DRIFT_NUM(pg[c]), DRIFT_NUM(pc[c]), DRIFT_INT(obs[c]),
            DRIFT_NUM((double)bs / (double)NP));
        drift_row(&out, T_MD_FLIPS, DRIFT_TXT(CONFS[c].name), DRIFT_NUM(sig[c]), DRIFT_NUM(pg[c]), DRIFT_NUM(pc[c]),
            DRIFT_INT(obs[c]));
    }
    drift_md_end(&out, T_MD_FLIPS);
    /* -- the law of each configuration's logit error, by logit scale and by position -- */
    size_t ne = 0;
    for (size_t i = 0; i < NP; i++) ne += (size_t)ks[i];
    double *ee = malloc(ne * sizeof(double)), *ev = malloc(ne * sizeof(double));
    int *et = malloc(ne * sizeof(int));
    if (!ee || !ev || !et) drift_die("out of memory for the error law (%zu errors)", ne);
    char law_words[NCONF][512];
    errlaw_sum_t lsum[NCONF];
    double pmin[NCONF], pmax[NCONF]; /* the rms gap error's smallest and largest third */
    for (int c = 0; c < NCONF; c++) pmin[c] = INFINITY, pmax[c] = 0;
    int Tm = 0; /* positions measured per text */
    for (int s_ = 0; s_ < R; s_++) Tm = tx[s_].n - tx[s_].from > Tm ? tx[s_].n - tx[s_].from : Tm;
    const int third = Tm / 3 > 0 ? Tm / 3 : 1;
    for (int c = 0; c < NCONF; c++) {
        size_t n = 0;
        for (size_t i = 0; i < NP; i++)
            for (int k = 0; k < ks[i]; k++, n++)
                ee[n] = serr[((size_t)c * NP + i) * (size_t)KSMAX + (size_t)k],
                ev[n] = sval[i * (size_t)KSMAX + (size_t)k], et[n] = stext[i];
        char winner[NBIN];
        errlaw_rows(&out, CONFS[c].name, nxc[c].mm[DRIFT_OP_LMHEAD].out, ee, ev, et, n, R, winner, &lsum[c]);
        errlaw_words(law_words[c], sizeof law_words[c], winner);
        /* by position: thirds of each text's generated positions */
        for (int lo = 0; lo < Tm; lo += third) {
            int hi = lo + 2 * third > Tm ? Tm : lo + third;
            double sg = 0, s1 = 0;
            long np = 0;
            for (int s_ = 0, i = 0; s_ < R; s_++)
                for (int p = tx[s_].from; p < tx[s_].n; p++, i++) {
                    int g = p - tx[s_].from;
                    if (g < lo || g >= hi) continue;
                    double eg = egap[(size_t)c * NP + (size_t)i],
                           e1 = serr[((size_t)c * NP + (size_t)i) * (size_t)KSMAX];
                    sg += eg * eg, s1 += e1 * e1, np++;
                }
            if (!np) break;
            drift_row(&out, T_ERRPOS, DRIFT_TXT(CONFS[c].name), DRIFT_INT(lo), DRIFT_INT(hi), DRIFT_INT(np),
                DRIFT_NUM(sqrt(sg / (double)np)), DRIFT_NUM(sqrt(s1 / (double)np)));
            const double r = sqrt(sg / (double)np);
            if (r < pmin[c]) pmin[c] = r;
            if (r > pmax[c]) pmax[c] = r;
            if (hi == Tm) break;
        }
    }
    free(ee), free(ev), free(et);
    drift_md_text(&out, "**Takeaway.**\n\n");
    drift_md_text(&out,
        "- Over %zu positions the median exact gap is %.3g logits; %.3g of the gaps are below 0.1 and %.3g below 0.01.\n",
        NP, median, (double)below[1] / (double)NP, (double)below[0] / (double)NP);
    drift_md_text(
        &out, "- sigma, and flips predicted by Phi / by the convolved law against observed, of %zu positions:", NP);
    for (int c = 0; c < NCONF; c++)
        drift_md_text(
            &out, "%s %s %.3g, %.3g / %.3g against %ld", c ? ";" : "", CONFS[c].name, sig[c], pg[c], pc[c], obs[c]);
    drift_md_text(&out, ".\n");
    double worst = 1;
    int wc = -1;
    for (int c = 0; c < NCONF; c++) {
        if (obs[c] < 5) continue; /* too few flips to compare a rate */
        double r = pg[c] > 0 ? (double)obs[c] / pg[c] : INFINITY;
        if (r < 1) r = 1 / r;
        if (r > worst || wc < 0) worst = r, wc = c;
    }
    if (wc >= 0)
        drift_md_text(&out,
            "- Where at least 5 flips were observed, the Gaussian prediction from the exact gaps and the measured sigma is within a factor %.3g "
            "of the observed count (worst: %s).\n",
            worst, CONFS[wc].name);
    drift_md_text(&out,
        "- Error law (data/real_gaps_errlaw.csv; gauss: accumulation noise, conv: noise then rounding to the stored grid; "
        "by binade of the exact logit, %d texts held out in turn): ",
        R);
    char tails[256] = "";
    double tail_lo = NAN, spread = 1, span = INFINITY, pspread = 1, power = 0; /* over the configurations: the largest
                                  sigma_max / sigma_min, the smallest ratio of top and bottom binades, the largest
                                  rms ratio of two thirds, the largest power */
    int same = 1, c0 = -1;
    for (int c = 0; c < NCONF; c++) {
        if (!isfinite(lsum[c].sg_min)) continue;
        if (c0 >= 0 && strcmp(law_words[c], law_words[c0])) same = 0;
        if (c0 < 0 || lsum[c].max_power > power) power = lsum[c].max_power;
        c0 = c0 < 0 ? c : c0;
        if (lsum[c].sg_max / lsum[c].sg_min > spread) spread = lsum[c].sg_max / lsum[c].sg_min;
        if (lsum[c].top_lo / lsum[c].lo_min < span) span = lsum[c].top_lo / lsum[c].lo_min;
        if (pmax[c] > 0 && pmax[c] / pmin[c] > pspread) pspread = pmax[c] / pmin[c];
        if (fabs(lsum[c].top_dll) >= 2.995732273553991 && lsum[c].top_power < 2.995732273553991) {
            size_t at = strlen(tails);
            tail_lo = lsum[c].top_lo;
            snprintf(tails + at, sizeof tails - at, "%s%s %.2g", at ? ", " : "", CONFS[c].name, lsum[c].top_dll);
        }
    }
    if (same && c0 >= 0)
        drift_md_text(&out, "every configuration %s (power at most %.2g)", law_words[c0], power);
    else
        for (int c = 0, first = 1; c < NCONF; c++)
            if (isfinite(lsum[c].sg_min))
                drift_md_text(&out, "%s%s %s", first ? "" : "; ", CONFS[c].name, law_words[c]), first = 0;
    /* an error relative to the logit would scale sigma with the binade (by span from the lowest
     * to the highest); flat noise would not move it: the verdict takes the geometric middle */
    if (isfinite(span))
        drift_md_text(&out, ". Over binades %g apart sigma varies at most %.2gx (a relative error: %gx)%s", span,
            spread, span, span > 1 && spread < sqrt(span) ? ": the noise does not follow the logit's size" : "");
    if (tails[0])
        drift_md_text(&out,
            ". At [%g, %g) the held-out ratio conv - gauss (%s) exceeds the power: the tails differ from both laws",
            tail_lo, 2 * tail_lo, tails);
    drift_md_text(&out,
        ". Over thirds of the tokens (data/real_gaps_errpos.csv) the rms gap error varies at most %.2gx.\n\n", pspread);
    drift_out_commit(&out);
    for (int s = 0; s < R; s++) free(tx[s].tok);
    free(tx), free(ex), free(lg), free(gap), free(top), free(sorted), free(t1), free(t2), free(egap), free(flip),
        free(sidx), free(ks), free(stext), free(sval), free(serr);
    drift_checkpoint_free(&ck);
    return 0;
}
