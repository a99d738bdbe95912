/* sampling_flip.c — sampling with a fixed seed still changes when only the numerics change.
 *
 * Question: an engine samples the next token by drawing one uniform u per step and walking the
 * cumulative distribution of softmax(logits / T) (inverse CDF), after an optional top-k or
 * top-p cut. With the seed fixed, u is fixed; the logits still depend on the format and the
 * kernel of the LM head. How often does the sampled token change when only the numerics
 * change, as a function of the temperature? And is a tiny temperature the same as greedy?
 *
 * What it sweeps: one LM head (K = --K hidden size, V = --V tokens, weights N(0, 1/K), hidden
 * states with outlier channels: lib/llm/gen_logits.h), --rows hidden states, --draws uniforms per
 * hidden state (shared by every configuration: "the same seed"); for each input format
 * (--formats) the GEMM kernels of --orders (seq = the naive kernel, splitk:S, tc:ARCH; logits
 * in fp32) plus tensor cores with the logits stored in the format (bf16, fp16); the reference
 * is the exact logits of the same rounded inputs (superaccumulator). Temperatures 0 (the
 * argmax path, no softmax at all) and 1e-8 ... 2; samplers: the full softmax, top-k (k = 50)
 * and top-p (p = 0.9).
 *
 * The sampler, identical for every configuration (so that only the logits differ): the
 * candidates are all tokens (full), the k largest logits (top-k; equal logits ordered by token
 * id), or the fewest largest whose probabilities reach p (top-p); the weights are
 * exp((l_v - l_max)/T) in double for the candidates and 0 for the rest; the sampled token is the
 * first v in token-id order whose running sum of weights exceeds u * (sum of weights) (the
 * inverse CDF, as torch.multinomial over a masked vocabulary does). T = 0 never builds a
 * distribution: it takes the argmax (the lowest id among equal maxima). The double softmax is
 * checked against drift_exact_softmax (correctly rounded) on the first rows.
 *
 * How to run:
 *   ./lab run sampling_flip                              default profile (K 1024, V 16384)
 *   ./lab run sampling_flip --K 4096 --V 32000 --rows 128 --formats bf16,fp16
 *   ./lab plot sampling_flip                             plots/sampling_flip.png
 *
 * What to look for: at T = 0 the token changes only when the argmax flips (rare with fp32
 * logits, common with bf16 logits); as T grows the change rate first rises (the uniform now
 * lands near boundaries of the CDF, whose positions move with the logits' errors) and then
 * levels off in proportion to the logits' relative error over T; top-k and top-p change little
 * except at the cut itself. T = 1e-8 is not greedy: where two computed logits tie (common when
 * logits are stored in bf16) the softmax gives each half of the mass and the uniform decides,
 * while T = 0 always takes the lower id; a planted exact tie shows it with the exact logits too.
 *
 * The engines' samplers (lib/llm/sampler.h): inverse-cdf, exp-race (PyTorch multinomial for one
 * sample, vLLM), gumbel and FlashInfer-style rejection (top-k 50) at T = 0.3 .. 1.5, on randomness
 * keyed by (seed, hidden state, draw) so that the same draw meets every numerics. Intervals are
 * clustered by hidden state (the rows, not the steps, are the independent units).
 *
 * Outputs: data/sampling_flip.csv (change rates), data/sampling_flip_tiny.csv (T = 1e-8 against
 * T = 0), data/sampling_flip_samplers.csv (the engines' samplers), data/sampling_flip.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dispatch.h"
#include "drift.h"
#include "format.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "output.h"
#include "philox.h"
#include "cluster_rate.h"
#include "sampling_sweep.h"
#include "tie_demo.h"

#define EXP "sampling_flip"
#define MAXF 4
#define MAXC 8
#define TOPK 50
#define TOPP 0.9

static const double TEMPS[] = {0, 1e-8, 1e-4, 1e-3, 1e-2, 0.03, 0.1, 0.3, 0.6, 1.0, 1.5, 2.0};
#define NT ((int)(sizeof TEMPS / sizeof TEMPS[0]))
#define NS DRIFT_NCUTS
static const drift_cdf_sampler_t CUTS[NS] = {{DRIFT_CUT_FULL, TOPK, TOPP}, {DRIFT_CUT_TOPK, TOPK, TOPP}, {DRIFT_CUT_TOPP, TOPK, TOPP}};

/* The engines' samplers (lib/llm/sampler.h), all driven by the same keyed randomness: the step
 * (hidden state r, draw j) has its own exponentials and uniforms, shared by every numerics. */
static const char *const SAMPLERS[] = {"inverse-cdf", "exp-race", "gumbel", "rejection:k=50"};
#define NK2 ((int)(sizeof SAMPLERS / sizeof SAMPLERS[0]))
static const double TEMPS2[] = {0.3, 0.6, 1.0, 1.5};
#define NT2 ((int)(sizeof TEMPS2 / sizeof TEMPS2[0]))

typedef struct {
    char name[96];
    int exact;             /* the reference: exact logits (rounded once to double) */
    drift_recipe_t recipe; /* the others: a GEMM kernel built from it (dispatch.h) */
} conf_t;

/* Steps whose token differs between a and b (n steps, `per` per row): the total, and per row into row[] when given. */
static long changed(long *row, const size_t *a, const size_t *b, size_t n, long per)
{
    long ch = 0;
    for (size_t i = 0; i < n; i++) {
        if (row && i % (size_t)per == 0) row[i / (size_t)per] = 0;
        long d = a[i] != b[i];
        ch += d;
        if (row) row[i / (size_t)per] += d;
    }
    return ch;
}

int main(int argc, char **argv)
{
    long K = 0, V = 0, rows = 0, draws = 0, ties = 8;
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INT, &K, "N", "hidden size", 16, 65536, {"256", "1024", "4096"}},
        {"V", DRIFT_OPT_INT, &V, "N", "vocabulary", 64, 1000000, {"2048", "16384", "32000"}},
        {"rows", DRIFT_OPT_INT, &rows, "N", "hidden states", 1, 100000, {"16", "128", "256"}},
        {"draws", DRIFT_OPT_INT, &draws, "N", "uniforms per hidden state", 1, 100000, {"16", "16", "64"}},
        {"ties", DRIFT_OPT_INT, &ties, "N", "planted exact-tie rows for the T = 1e-8 demonstration (default 8)", 1, 10000, {0}},
    };
    const drift_cli_spec_t spec = {
        EXP,
        "With the random stream fixed, how often does the sampled token change when only the numerics of the LM head "
        "change, per temperature, and is temperature 1e-8 the same as greedy?",
        "bf16", "seq,splitk:16,tc:h100", opts, (int)(sizeof opts / sizeof opts[0]), NULL /* no_orders */,
        NULL /* cpu_only: logits go through the dispatcher (--backend cuda) */,
        "with the random stream fixed, the token still changes when the logits' rounding changes, because the uniform "
        "lands on a CDF whose boundaries moved; at T = 0 only an argmax flip changes it. A temperature of 1e-8 is not "
        "greedy: it samples from a softmax that splits computed ties evenly, and the uniform decides. Plot: ./lab plot "
        "sampling_flip."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    if (cli.nformats > MAXF) drift_die("--formats: at most %d formats", MAXF);
    drift_require_memory(&cli, 16.0 * (double)V * (double)K + 16.0 * (double)rows * (double)(K + V), "--K, --V, --rows");
    drift_lmhead_require_inputs(cli.formats, cli.nformats);
    for (int o = 0; o < cli.norders; o++) {
        drift_recipe_t probe = drift_recipe(DRIFT_FP32, &cli.orders[o], DRIFT_FP32, DRIFT_FP32);
        drift_gemm_kernel_t kern;
        if (drift_recipe_gemm_kernel(&kern, &probe))
            drift_die("--orders: only GEMM kernel orders here (accepted: seq, splitk:S, splitk:S:tree, tc:ARCH)");
    }
    const int nF = cli.nformats;
    /* -- configurations per format: [0] exact, then the kernels, then tc with logits stored -- */
    conf_t C[MAXF][MAXC];
    int nC[MAXF];
    for (int fi = 0; fi < nF; fi++) {
        drift_format_t f = cli.formats[fi];
        int n = 0;
        memset(C[fi], 0, sizeof C[fi]);
        C[fi][n].exact = 1;
        snprintf(C[fi][n++].name, sizeof C[fi][0].name, "exact");
        int has_tc = -1;
        for (int o = 0; o < cli.norders && n < MAXC - 1; o++) {
            const drift_order_t *od = &cli.orders[o];
            conf_t *c = &C[fi][n];
            char ord[DRIFT_ORDER_SPEC_MAX];
            drift_order_print(ord, sizeof ord, od);
            c->recipe = drift_recipe(f, od, DRIFT_FP32, DRIFT_FP32);
            int tc = drift_order_tc_params(NULL, od, f);
            if (tc < 0) continue; /* no tensor cores for this input */
            if (tc > 0) has_tc = n;
            snprintf(c->name, sizeof c->name, "%s/fp32/fp32", ord);
            n++;
        }
        if (has_tc >= 0 && (f == DRIFT_BF16 || f == DRIFT_FP16) && n < MAXC) {
            C[fi][n] = C[fi][has_tc];
            C[fi][n].recipe.out = f;
            char ord[DRIFT_ORDER_SPEC_MAX];
            drift_order_print(ord, sizeof ord, &C[fi][n].recipe.order);
            snprintf(C[fi][n].name, sizeof C[fi][n].name, "%s/fp32/%s", ord, drift_format_name(f));
            n++;
        }
        nC[fi] = n;
    }

    /* -- the head (fp32 master values) and the hidden states -- */
    drift_hidden_model_t model;
    {
        drift_stream_t s;
        drift_stream_init(&s, cli.seed, drift_fnv1a32(EXP ".model"), (uint32_t)K, 0);
        drift_hidden_model(&model, (size_t)K, &s);
    }
    double *W = malloc((size_t)V * K * sizeof *W), *H = malloc((size_t)rows * K * sizeof *H);
    if (!W || !H) drift_die("out of memory");
    if (drift_gen_head(W, NULL, NULL, NULL, (size_t)V, (size_t)K, cli.seed, drift_fnv1a32(EXP ".W"))) drift_die("out of memory");
    for (long r = 0; r < rows; r++) {
        drift_stream_t s;
        drift_stream_init(&s, cli.seed, drift_fnv1a32(EXP ".h"), (uint32_t)K, (uint32_t)r);
        drift_gen_hidden(H + (size_t)r * K, &model, &s);
    }
    double *U = malloc((size_t)rows * draws * sizeof *U);
    if (!U) drift_die("out of memory");
    for (long r = 0; r < rows; r++) {
        drift_stream_t s;
        drift_stream_init(&s, cli.seed, drift_fnv1a32(EXP ".u"), (uint32_t)r, 0);
        for (long j = 0; j < draws; j++) U[(size_t)r * draws + j] = drift_stream_uniform(&s);
    }

    /* -- per format: logits of every configuration, then every sampler at every temperature;
     * tok[f][c][t][cut][step], tok2[f][c][t2][engine][step]: the sampled tokens -- */
    const size_t nsteps = (size_t)rows * draws, per_tok = (size_t)NT * NS * nsteps, per_tok2 = (size_t)NT2 * NK2 * nsteps;
    size_t *tok = malloc((size_t)nF * MAXC * per_tok * sizeof *tok), *tok2 = malloc((size_t)nF * MAXC * per_tok2 * sizeof *tok2);
    double *WT = malloc((size_t)K * V * sizeof *WT), *L = malloc((size_t)rows * V * sizeof *L), *Hf = malloc((size_t)rows * K * sizeof *Hf);
    if (!tok || !tok2 || !WT || !L || !Hf) drift_die("out of memory");
#define TOK(f, c, t, s) (tok + ((size_t)(f) * MAXC + (c)) * per_tok + ((size_t)(t) * NS + (s)) * nsteps)
#define TOK2(f, c, t, k) (tok2 + ((size_t)(f) * MAXC + (c)) * per_tok2 + ((size_t)(t) * NK2 + (k)) * nsteps)
    drift_sampling_t SM[NK2];
    for (int k = 0; k < NK2; k++)
        if (drift_sampling_parse(&SM[k], SAMPLERS[k])) drift_die("internal: sampler spec %s", SAMPLERS[k]);
    const drift_sampling_sweep_t SW = {(size_t)rows, (size_t)V, draws, U, cli.seed, TEMPS, NT, CUTS, SM, NK2, TEMPS2, NT2};
    long top_ties[MAXF][MAXC];
    double softmax_check = 0; /* largest relative difference, double softmax vs exact softmax */
    for (int fi = 0; fi < nF; fi++) {
        drift_format_t f = cli.formats[fi];
        for (size_t i = 0; i < (size_t)rows * K; i++) Hf[i] = drift_rne(H[i], f);
        for (long v = 0; v < V; v++) /* B = W^T (K x V), rounded */
            for (long i = 0; i < K; i++) WT[(size_t)i * V + v] = drift_rne(W[(size_t)v * K + i], f);
        for (int c = 0; c < nC[fi]; c++) {
            conf_t *cf = &C[fi][c];
            int rc = cf->exact ? drift_exact_logits(L, Hf, WT, (size_t)rows, (size_t)V, (size_t)K)
                               : drift_recipe_gemm(L, Hf, WT, (size_t)rows, (size_t)V, (size_t)K, &cf->recipe, 1, 0);
            if (rc) drift_die("logits failed for %s: %s", cf->name, drift_strerror(rc));
            drift_sampling_check_t chk;
            if (drift_sampling_sweep_run(TOK(fi, c, 0, 0), TOK2(fi, c, 0, 0), &chk, L, &SW))
                drift_die("sampling failed (out of memory or an internal inconsistency)");
            top_ties[fi][c] = chk.top_ties;
            softmax_check = fmax(softmax_check, chk.softmax_diff);
        }
        drift_progress(&cli, (size_t)fi + 1, (size_t)nF);
    }

    /* -- the planted exact ties: T = 1e-8 against T = 0 with the exact logits -- */
    drift_tie_demo_t *TI = calloc((size_t)ties, sizeof *TI);
    if (!TI) drift_die("out of memory");
    const drift_format_t ft = cli.formats[0];
    long nb = 0;
    for (long q = 0; q < ties; q++) {
        if (drift_tie_demo(&TI[q], &model, (size_t)K, ft, cli.seed, drift_fnv1a32(EXP ".tie"), drift_fnv1a32(EXP ".tie.u"), q, draws))
            drift_die("out of memory");
        nb += TI[q].n_b;
    }

    /* -- declared output -- */
    enum { T_RATES, T_TINY, T_SAMP, T_MD_RATES, T_MD_TINY, T_MD_SAMP };
    static const drift_col_t RATES[] = {
        DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("sampler"), DRIFT_C_NUM("temperature", "%g"),
        DRIFT_C_INT("steps"), DRIFT_C_INT("changed_vs_exact"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo", "%.6g"),
        DRIFT_C_NUM("hi", "%.6g"), DRIFT_C_INT("changed_vs_first_kernel"), DRIFT_C_NUM("rate_vs_first", "%.6g")};
    static const drift_col_t TINY[] = {DRIFT_C_TEXT("case"), DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kernel"),
                                       DRIFT_C_INT("steps"), DRIFT_C_INT("rows_with_top_tie"),
                                       DRIFT_C_INT("t1e-8_not_argmax"), DRIFT_C_NUM("rate", "%.6g")};
    static const drift_col_t SAMP[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("sampler"),
                                       DRIFT_C_NUM("temperature", "%g"), DRIFT_C_INT("rows"), DRIFT_C_INT("steps"),
                                       DRIFT_C_INT("changed_vs_exact"), DRIFT_C_NUM("rate", "%.6g"), DRIFT_C_NUM("lo", "%.6g"),
                                       DRIFT_C_NUM("hi", "%.6g")};
    char tname[NT][24], t2name[NT2][24], title[3][1024];
    drift_col_t by_t[2 + NT] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kernel")}, by_t2[3 + NT2] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kernel"), DRIFT_C_TEXT("sampler")};
    for (int t = 0; t < NT; t++) snprintf(tname[t], sizeof tname[t], "T = %g", TEMPS[t]), by_t[2 + t] = (drift_col_t)DRIFT_C_NUM(tname[t], "%.3g");
    for (int t = 0; t < NT2; t++) snprintf(t2name[t], sizeof t2name[t], "T = %g", TEMPS2[t]), by_t2[3 + t] = (drift_col_t)DRIFT_C_CELL(t2name[t]);
    static const drift_col_t MD_TINY[] = {DRIFT_C_TEXT("format"), DRIFT_C_TEXT("kernel"), DRIFT_C_CELL("rows with a tie at the top"),
                                          DRIFT_C_CELL("steps where T = 1e-8 != argmax")};
    snprintf(title[0], sizeof title[0], "**Sampled token differs from the one sampled from the exact logits** (fraction of steps, full softmax):");
    snprintf(title[1], sizeof title[1], "**Temperature 1e-8 is not greedy.** T = 0 takes the argmax (lowest id among equal logits) and never builds a distribution; T = 1e-8 still samples from softmax(l / 1e-8), which gives every token tied at the top an equal share, so the uniform picks among them:");
    snprintf(title[2], sizeof title[2], "**The engines' samplers** (lib/llm/sampler.h; each step's randomness keyed by (seed, hidden state, draw) "
             "and shared by every numerics; fraction of steps whose token differs from the exact logits' [95%% interval "
             "clustered by hidden state, %ld hidden states x %ld draws]). inverse-cdf walks the CDF in token-id order; "
             "exp-race takes argmax p/E with E ~ Exp(1) per token (PyTorch's multinomial for one sample, vLLM); gumbel is "
             "Gumbel-max on the logits (the same draw in exact arithmetic); rejection is FlashInfer's top-k (k = 50) "
             "rejection sampler:", rows, draws);
    const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, RATES, 11}, {"_tiny.csv", NULL, 0, TINY, 7}, {"_samplers.csv", NULL, 0, SAMP, 10},
                                         {NULL, title[0], DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, by_t, 2 + NT},
                                         {NULL, title[1], DRIFT_SHOW_MD, MD_TINY, 4}, {NULL, title[2], DRIFT_SHOW_MD, by_t2, 3 + NT2}};
    long *chrow = malloc((size_t)rows * sizeof *chrow);
    if (!chrow) drift_die("out of memory");
    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 6, 1);
    drift_md_question(&out, NULL);
    char cmd[1024]; /* the Reproduce line goes on with the run's own facts: written here, not by drift_md_reproduce */
    drift_cli_reproduce(cmd, sizeof cmd, &cli);
    drift_md_text(&out, "Reproduce: `%s` (K = %ld, V = %ld, %ld hidden states x %ld uniforms = %zu sampling steps per "
                        "configuration; data/sampling_flip*.csv). The uniform of each step is fixed (the same seed); only "
                        "the LM head's numerics differ. Reference: the exact logits of the same rounded inputs. The "
                        "double-precision softmax agreed with the correctly rounded one (drift_exact_softmax) to %.1e "
                        "relative.\n\n", cmd, K, V, rows, draws, nsteps, softmax_check);
    drift_out_meta(&out, T_RATES, "table", "fraction of sampling steps whose token differs from the one sampled from the exact logits (same uniform), and from the first kernel's");
    drift_out_meta(&out, T_RATES, "head", "K = %ld, V = %ld, %ld hidden states x %ld uniforms = %zu steps; weights N(0,1/K), hidden states with outlier channels", K, V, rows, draws, nsteps);
    drift_out_meta(&out, T_RATES, "sampler", "full softmax | top-k (k = %d) | top-p (p = %g); inverse CDF in token-id order over exp((l - lmax)/T) in double; T = 0: argmax (lowest id)", TOPK, TOPP);
    drift_out_meta(&out, T_RATES, "interval", "95%%, clustered by hidden state (the %ld row fractions are the independent units: mean +- 1.96 sd / sqrt(rows); Wilson over the rows when every row is alike); steps of one hidden state share its logits", rows);
    double worst_top = 0; /* the largest full-softmax change rate, and where */
    const char *worst_name = "";
    drift_cell_t row[3 + NT];
    for (int fi = 0; fi < nF; fi++)
        for (int c = 1; c < nC[fi]; c++)
            for (int s = 0; s < NS; s++) {
                row[0] = DRIFT_TXT(drift_format_name(cli.formats[fi])), row[1] = DRIFT_TXT(C[fi][c].name);
                for (int t = 0; t < NT; t++) {
                    long ch = changed(chrow, TOK(fi, c, t, s), TOK(fi, 0, t, s), nsteps, draws);
                    long ch1 = changed(NULL, TOK(fi, c, t, s), TOK(fi, 1, t, s), nsteps, draws);
                    double lo, hi, rt;
                    drift_clustered_rate(&rt, &lo, &hi, chrow, rows, draws);
                    drift_row(&out, T_RATES, DRIFT_TXT(drift_format_name(cli.formats[fi])), DRIFT_TXT(C[fi][c].name),
                              DRIFT_TXT(drift_cut_name(s)), DRIFT_NUM(TEMPS[t]), DRIFT_INT(nsteps), DRIFT_INT(ch),
                              DRIFT_NUM((double)ch / nsteps), DRIFT_NUM(lo), DRIFT_NUM(hi), DRIFT_INT(ch1),
                              DRIFT_NUM((double)ch1 / nsteps));
                    row[2 + t] = DRIFT_NUM((double)ch / nsteps);
                    if (s == DRIFT_CUT_FULL && (double)ch / nsteps > worst_top) worst_top = (double)ch / nsteps, worst_name = C[fi][c].name;
                }
                if (s == DRIFT_CUT_FULL) drift_row_cells(&out, T_MD_RATES, row, 2 + NT);
            }
    drift_md_end(&out, T_MD_RATES);
    drift_md_text(&out, "**Top-k (k = %d) and top-p (p = %g)** at T = 1 (fraction of steps changed vs the exact logits):", TOPK, TOPP);
    int t1 = 0;
    for (int t = 0; t < NT; t++)
        if (TEMPS[t] == 1.0) t1 = t;
    for (int fi = 0; fi < nF; fi++)
        for (int c = 1; c < nC[fi]; c++) {
            double r[NS];
            for (int s = 0; s < NS; s++) r[s] = (double)changed(NULL, TOK(fi, c, t1, s), TOK(fi, 0, t1, s), nsteps, draws) / nsteps;
            drift_md_text(&out, "%s %s %s: full %.3g, top-k %.3g, top-p %.3g", fi || c > 1 ? ";" : "",
                          drift_format_name(cli.formats[fi]), C[fi][c].name, r[0], r[1], r[2]);
        }
    drift_md_text(&out, ".\n\n");

    drift_out_meta(&out, T_TINY, "table", "temperature 1e-8 against temperature 0 (argmax): steps where the sampled token differs from the argmax");
    char cell[NT2 + 2][96];
    for (int fi = 0; fi < nF; fi++)
        for (int c = 0; c < nC[fi]; c++) {
            long d = changed(NULL, TOK(fi, c, 1, DRIFT_CUT_FULL), TOK(fi, c, 0, DRIFT_CUT_FULL), nsteps, draws);
            drift_row(&out, T_TINY, DRIFT_TXT("head"), DRIFT_TXT(drift_format_name(cli.formats[fi])), DRIFT_TXT(C[fi][c].name),
                      DRIFT_INT(nsteps), DRIFT_INT(top_ties[fi][c]), DRIFT_INT(d), DRIFT_NUM((double)d / nsteps));
            snprintf(cell[0], sizeof cell[0], "%ld / %ld", top_ties[fi][c], rows);
            snprintf(cell[1], sizeof cell[1], "%ld / %zu", d, nsteps);
            drift_row(&out, T_MD_TINY, DRIFT_TXT(drift_format_name(cli.formats[fi])), DRIFT_TXT(C[fi][c].name),
                      DRIFT_TXT(cell[0]), DRIFT_TXT(cell[1]));
        }
    drift_md_end(&out, T_MD_TINY);
    for (long q = 0; q < ties; q++) {
        char name[32];
        snprintf(name, sizeof name, "planted_tie_%ld", q);
        drift_row(&out, T_TINY, DRIFT_TXT(name), DRIFT_TXT(drift_format_name(ft)), DRIFT_TXT("exact"), DRIFT_INT(draws),
                  DRIFT_INT(1), DRIFT_INT(TI[q].n_b), DRIFT_NUM((double)TI[q].n_b / draws));
    }
    drift_out_note(&out, T_TINY, "planted ties: tokens (a, b), exact logits (equal), the sampler's probabilities at T = 1e-8, greedy (T = 0) choice");
    for (long q = 0; q < ties; q++)
        drift_out_note(&out, T_TINY, "tie %ld: a = %zu, b = %zu, l_a = %a, l_b = %a, p_a = %.17g, p_b = %.17g, argmax = %zu", q,
                       TI[q].a, TI[q].b, TI[q].la, TI[q].lb, TI[q].pa, TI[q].pb, TI[q].greedy);
    drift_md_text(&out, "With planted exact ties (%ld rows, %s inputs: two tokens with exactly equal exact logits at the top "
                        "of a 64-token head), softmax at T = 1e-8 gives each tied token p = %.17g (tie 0: tokens %zu and %zu; "
                        "the correctly rounded value of the exact 1/(2 + sum of the others' e^(-gap/T))); greedy always "
                        "returns the lower id, while T = 1e-8 returned the higher id in %ld of %ld draws (%.1f%%).\n\n",
                  ties, drift_format_name(ft), TI[0].pa, TI[0].a, TI[0].b, nb, ties * draws, 100.0 * nb / (ties * draws));

    drift_out_meta(&out, T_SAMP, "table", "the engines' samplers (lib/llm/sampler.h: inverse-cdf = token-id order, exp-race = PyTorch multinomial / vLLM, gumbel = Gumbel-max, rejection = FlashInfer top-k), each driven by keyed randomness shared by every numerics: fraction of steps whose token differs from the one sampled from the exact logits");
    drift_out_meta(&out, T_SAMP, "interval", "95%%, clustered by hidden state (%ld rows of %ld draws)", rows, draws);
    double R2[MAXF][MAXC][NK2][NT2][3]; /* rate, lo, hi per (format, kernel, sampler, temperature) */
    for (int fi = 0; fi < nF; fi++)
        for (int c = 1; c < nC[fi]; c++)
            for (int k = 0; k < NK2; k++) {
                for (int t = 0; t < NT2; t++) {
                    double *x = R2[fi][c][k][t];
                    long ch = changed(chrow, TOK2(fi, c, t, k), TOK2(fi, 0, t, k), nsteps, draws);
                    drift_clustered_rate(&x[0], &x[1], &x[2], chrow, rows, draws);
                    drift_row(&out, T_SAMP, DRIFT_TXT(drift_format_name(cli.formats[fi])), DRIFT_TXT(C[fi][c].name),
                              DRIFT_TXT(SAMPLERS[k]), DRIFT_NUM(TEMPS2[t]), DRIFT_INT(rows), DRIFT_INT(nsteps), DRIFT_INT(ch),
                              DRIFT_NUM(x[0]), DRIFT_NUM(x[1]), DRIFT_NUM(x[2]));
                    snprintf(cell[t], sizeof cell[t], "%.3g [%.3g, %.3g]", x[0], x[1], x[2]);
                    row[3 + t] = DRIFT_TXT(cell[t]);
                }
                row[0] = DRIFT_TXT(drift_format_name(cli.formats[fi])), row[1] = DRIFT_TXT(C[fi][c].name), row[2] = DRIFT_TXT(SAMPLERS[k]);
                drift_row_cells(&out, T_MD_SAMP, row, 3 + NT2);
            }
    drift_md_end(&out, T_MD_SAMP);
    /* the sampler contrast, at the configuration that changes most under the inverse CDF at T = 1 */
    int cf = 0, cc = 1, t1b = 2;
    for (int fi = 0; fi < nF; fi++)
        for (int c = 1; c < nC[fi]; c++)
            if (R2[fi][c][0][t1b][0] > R2[cf][cc][0][t1b][0]) cf = fi, cc = c;
    const double *inv = R2[cf][cc][0][t1b], *race = R2[cf][cc][1][t1b];
    drift_md_text(&out, "**Takeaway.** Fixing the seed does not fix the output: with the random stream held constant, the "
                        "sampled token changed in up to %.3g of the steps (%s, inverse CDF) when only the LM head's numerics "
                        "changed, and the rate depends on the temperature and on the sampler. With `%s` at T = 1 the inverse "
                        "CDF in token-id order changes %.3g [%.3g, %.3g] of the steps and the exponential race (PyTorch/vLLM) "
                        "%.3g [%.3g, %.3g]%s: the inverse CDF turns every shift of the cumulative sum across the uniform into "
                        "a change, the race only an overturned winner. \"Temperature 0\" must mean the argmax path: a tiny "
                        "positive temperature still samples and splits ties by the random stream - unless the engine has a "
                        "greedy threshold (vLLM treats T < 1e-5 as greedy; the lab's samplers take it as `greedy=vllm`).\n",
                  worst_top, worst_name, C[cf][cc].name, inv[0], inv[1], inv[2], race[0], race[1], race[2],
                  inv[1] > race[2] ? " (the intervals do not overlap)" : " (the intervals overlap: no ranking at this size)");
    drift_out_commit(&out);
    free(tok), free(tok2), free(chrow), free(WT), free(L), free(Hf), free(W), free(H), free(U), free(TI);
    return 0;
}
