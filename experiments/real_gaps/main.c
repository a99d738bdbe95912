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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cli.h"
#include "llm_run.h"
#include "drift.h"
#include "fliplaw.h"
#include "metrics.h"
#include "model.h"
#include "model_configs.h"
#include "output.h"
#include "real_gaps_lab.h"
#include "stats.h"

static const char QUESTION[] =
    "How close are a real model's top two logits on its own greedy text, and how many argmax flips does that predict for each numerics configuration?";
static const char SUMMARY[] =
    "the exact top-1/top-2 gaps of a real model's own greedy text spread over decades; the few below a configuration's "
    "logit noise sigma are where it flips. The Gaussian law Phi(-gap/sigma), with sigma measured against the exact "
    "model, predicts how many flips each configuration makes from the gaps alone; fp32's noise is far below almost "
    "every real gap, bf16's is not.";

/* the tables, in the order of real_gaps_lab.h */
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
    drift_rg_text_t *tx = calloc((size_t)R, sizeof *tx);
    if (!tx) drift_die_oom((double)R * sizeof *tx, "%d texts (--sequences: fewer)", R);
    if (!ck.gguf && prompts)
        drift_die("--prompts: a llama2.c checkpoint holds no tokenizer (its texts start from BOS)");
    drift_rg_texts(tx, R, T, &ck, prompts ? prompts : DRIFT_SOURCE_DIR "/tests/data/llamacpp_prompts.txt", cli.seed);
    size_t NP = 0;
    for (int s = 0; s < R; s++) NP += (size_t)(tx[s].n - tx[s].from);
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

    /* -- the texts: fp32 greedy, alone; then scored by the exact model and each configuration -- */
    drift_rg_greedy(tx, R, &ck);
    drift_numerics_t nxc[DRIFT_NCONFS];
    for (int c = 0; c < DRIFT_NCONFS; c++)
        if (drift_model_config_numerics(&nxc[c], c)) drift_die("configuration %d: no such numerics", c);
    drift_rg_scores_t S;
    drift_rg_score(&S, &out, &cli, &ck, tx, R, nxc, DRIFT_NCONFS);
    const double *gap = S.gap, *top = S.top, *egap = S.egap;
    const unsigned char *flip = S.flip;
    /* -- the gap distribution -- */
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
    double median;
    if (drift_median(&median, gap, NP)) drift_die_oom((double)NP * sizeof(double), "a copy of the %zu gaps", NP);
    drift_md_text(&out, "**Exact top-1/top-2 gaps on the model's own greedy text:**\n\n");
    drift_row(&out, T_MD_GAPS, DRIFT_INT(NP), DRIFT_NUM(median), DRIFT_NUM((double)below[0] / (double)NP),
        DRIFT_NUM((double)below[1] / (double)NP), DRIFT_NUM((double)below[2] / (double)NP), DRIFT_NUM(dens0));
    drift_md_end(&out, T_MD_GAPS);
    drift_md_text(&out, "**Flips predicted from the gaps and the configuration's noise, and observed:**\n\n");
    drift_rg_conf_result_t res[DRIFT_NCONFS];
    for (int c = 0; c < DRIFT_NCONFS; c++) {
        drift_rg_conf_result_t *r = &res[c];
        const drift_model_config_t *cf = &drift_model_configs[c];
        double ss = 0;
        for (size_t i = 0; i < NP; i++) ss += egap[(size_t)c * NP + i] * egap[(size_t)c * NP + i];
        *r = (drift_rg_conf_result_t){.name = cf->name, .sigma = sqrt(ss / (double)NP)};
        long bs = 0;
        const drift_format_t of = nxc[c].mm[DRIFT_OP_LMHEAD].out;
        for (size_t i = 0; i < NP; i++) {
            r->pred_gauss +=
                r->sigma > 0 ? drift_fliplaw_p(DRIFT_FLIPLAW_GAUSS, gap[i], r->sigma, 0) : (gap[i] == 0 ? 0.5 : 0);
            r->pred_conv += drift_fliplaw_p(DRIFT_FLIPLAW_CONV, gap[i], r->sigma, drift_ulp(top[i], of));
            r->observed += flip[(size_t)c * NP + i];
            bs += gap[i] < r->sigma;
        }
        drift_row(&out, T_FLIPS, DRIFT_TXT(cf->name), DRIFT_TXT(cf->recipe), DRIFT_TXT(cf->weights), DRIFT_INT(NP),
            DRIFT_NUM(r->sigma), DRIFT_NUM(r->pred_gauss), DRIFT_NUM(r->pred_conv), DRIFT_INT(r->observed),
            DRIFT_NUM((double)bs / (double)NP));
        drift_row(&out, T_MD_FLIPS, DRIFT_TXT(cf->name), DRIFT_NUM(r->sigma), DRIFT_NUM(r->pred_gauss),
            DRIFT_NUM(r->pred_conv), DRIFT_INT(r->observed));
    }
    drift_md_end(&out, T_MD_FLIPS);
    /* -- the law of each configuration's logit error, by logit scale and by position -- */
    for (int c = 0; c < DRIFT_NCONFS; c++)
        drift_rg_errlaw(&res[c].law, &out, &S, c, drift_model_configs[c].name, nxc[c].mm[DRIFT_OP_LMHEAD].out, tx, R);
    drift_rg_takeaway(&out, NP, median, below, res, DRIFT_NCONFS, R);
    drift_out_commit(&out);
    for (int s = 0; s < R; s++) free(tx[s].tok);
    free(tx);
    drift_rg_scores_free(&S);
    drift_checkpoint_free(&ck);
    return 0;
}
