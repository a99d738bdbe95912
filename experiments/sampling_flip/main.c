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
#include "philox.h"
#include "sampling_lab.h"
#include "sampling_sweep.h"
#include "tie_demo.h"

#define EXP "sampling_flip"
#define MAXF DRIFT_SF_MAXF
#define MAXC DRIFT_SF_MAXC

static const double TEMPS[] = {0, 1e-8, 1e-4, 1e-3, 1e-2, 0.03, 0.1, 0.3, 0.6, 1.0, 1.5, 2.0};
#define NT ((int)(sizeof TEMPS / sizeof TEMPS[0]))
#define NS DRIFT_NCUTS
/* the plain inverse-CDF sampler's cuts, in drift_cut_t order (sampling_sweep.h sets each temperature) */
static const char *const CUTS[NS] = {"full", "top-k:k=50", "top-p:p=0.9"};

/* The engines' samplers (lib/llm/sampler.h), all driven by the same keyed randomness: the step
 * (hidden state r, draw j) has its own exponentials and uniforms, shared by every numerics. */
static const char *const SAMPLERS[] = {"inverse-cdf", "exp-race", "gumbel", "rejection:k=50"};
#define NK2 ((int)(sizeof SAMPLERS / sizeof SAMPLERS[0]))
static const double TEMPS2[] = {0.3, 0.6, 1.0, 1.5};
#define NT2 ((int)(sizeof TEMPS2 / sizeof TEMPS2[0]))
_Static_assert(NT <= DRIFT_SF_MAXT && NT2 <= DRIFT_SF_MAXT && NK2 <= DRIFT_SF_MAXE, "the report's tables hold them");

typedef struct {
    char name[96];
    int exact;             /* the reference: exact logits (rounded once to double) */
    drift_recipe_t recipe; /* the others: a GEMM kernel built from it (dispatch.h) */
} conf_t;

int main(int argc, char **argv)
{
    long K = 0, V = 0, rows = 0, draws = 0, ties = 8;
    const drift_cli_opt_t opts[] = {
        {"K", DRIFT_OPT_INT, &K, "N", "hidden size", 16, 65536, {"256", "1024", "4096"}},
        {"V", DRIFT_OPT_INT, &V, "N", "vocabulary", 64, 1000000, {"2048", "16384", "32000"}},
        {"rows", DRIFT_OPT_INT, &rows, "N", "hidden states", 1, 100000, {"16", "128", "256"}},
        {"draws", DRIFT_OPT_INT, &draws, "N", "uniforms per hidden state", 1, 100000, {"16", "16", "64"}},
        {"ties", DRIFT_OPT_INT, &ties, "N", "planted exact-tie rows for the T = 1e-8 demonstration (default 8)", 1,
            10000, {0}},
    };
    const drift_cli_spec_t spec = {.name = EXP,
        .question =
            "With the random stream fixed, how often does the sampled token change when only the numerics of the LM head "
            "change, per temperature, and is temperature 1e-8 the same as greedy?",
        .default_formats = "bf16",
        .default_orders = "seq,splitk:16,tc:h100",
        DRIFT_CLI_OPTS(opts),
        .cpu_only = NULL, /* logits go through the dispatcher (--backend cuda) */
        .summary =
            "with the random stream fixed, the token still changes when the logits' rounding changes, because the uniform "
            "lands on a CDF whose boundaries moved; at T = 0 only an argmax flip changes it. A temperature of 1e-8 is not "
            "greedy: it samples from a softmax that splits computed ties evenly, and the uniform decides. Plot: ./lab plot "
            "sampling_flip."};
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    if (cli.nformats > MAXF) drift_die("--formats: at most %d formats", MAXF);
    drift_require_memory(
        &cli, 16.0 * (double)V * (double)K + 16.0 * (double)rows * (double)(K + V), "--K, --V, --rows");
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
        if (drift_hidden_model(&model, (size_t)K, &s)) drift_die("--K: no hidden-state model for K = %ld", (long)K);
    }
    double *W = malloc((size_t)V * K * sizeof *W), *H = malloc((size_t)rows * K * sizeof *H);
    if (!W || !H)
        drift_die_oom(8.0 * ((double)V * K + (double)rows * K),
            "the %ld x %ld head and %ld hidden rows (--V, --K, --rows: smaller)", (long)V, (long)K, (long)rows);
    if (drift_gen_head(W, NULL, NULL, NULL, (size_t)V, (size_t)K, cli.seed, drift_fnv1a32(EXP ".W")))
        drift_die_oom(8.0 * (double)V * K, "generating the %ld x %ld head (--V, --K: smaller)", (long)V, (long)K);
    for (long r = 0; r < rows; r++) {
        drift_stream_t s;
        drift_stream_init(&s, cli.seed, drift_fnv1a32(EXP ".h"), (uint32_t)K, (uint32_t)r);
        drift_gen_hidden(H + (size_t)r * K, &model, &s);
    }
    double *U = malloc((size_t)rows * draws * sizeof *U);
    if (!U)
        drift_die_oom((double)rows * draws * sizeof *U, "%ld rows x %ld draws of uniforms (--rows, --draws: fewer)",
            (long)rows, (long)draws);
    for (long r = 0; r < rows; r++) {
        drift_stream_t s;
        drift_stream_init(&s, cli.seed, drift_fnv1a32(EXP ".u"), (uint32_t)r, 0);
        for (long j = 0; j < draws; j++) U[(size_t)r * draws + j] = drift_stream_uniform(&s);
    }

    /* -- per format: logits of every configuration, then every sampler at every temperature;
     * tok[f][c][t][cut][step], tok2[f][c][t2][engine][step]: the sampled tokens -- */
    const size_t nsteps = (size_t)rows * draws, per_tok = (size_t)NT * NS * nsteps,
                 per_tok2 = (size_t)NT2 * NK2 * nsteps;
    size_t *tok = malloc((size_t)nF * MAXC * per_tok * sizeof *tok),
           *tok2 = malloc((size_t)nF * MAXC * per_tok2 * sizeof *tok2);
    double *WT = malloc((size_t)K * V * sizeof *WT), *L = malloc((size_t)rows * V * sizeof *L),
           *Hf = malloc((size_t)rows * K * sizeof *Hf);
    if (!tok || !tok2 || !WT || !L || !Hf)
        drift_die_oom(
            (double)nF * MAXC * (per_tok + per_tok2) * sizeof *tok + 8.0 * ((double)K * V + (double)rows * (V + K)),
            "the sampled tokens of %zu steps and the %ld x %ld logits (--rows, --draws, --V: smaller)", nsteps,
            (long)rows, (long)V);
#define TOK(f, c, t, s) (tok + ((size_t)(f)*MAXC + (c)) * per_tok + ((size_t)(t)*NS + (s)) * nsteps)
#define TOK2(f, c, t, k) (tok2 + ((size_t)(f)*MAXC + (c)) * per_tok2 + ((size_t)(t)*NK2 + (k)) * nsteps)
    drift_sampler_t CUT[NS], SM[NK2];
    for (int s = 0; s < NS; s++)
        if (drift_sampler_parse(&CUT[s], CUTS[s]) || CUT[s].cut != (drift_cut_t)s)
            drift_die("internal: sampler spec %s", CUTS[s]);
    for (int k = 0; k < NK2; k++)
        if (drift_sampler_parse(&SM[k], SAMPLERS[k])) drift_die("internal: sampler spec %s", SAMPLERS[k]);
    const drift_sf_sweep_t SW = {(size_t)rows, (size_t)V, draws, U, cli.seed, TEMPS, NT, CUT, SM, NK2, TEMPS2, NT2};
    long top_ties[MAXF][MAXC];
    double softmax_check = 0;     /* largest relative difference, double softmax vs exact softmax */
    size_t pdone = 0, ptotal = 0; /* progress: one unit per (format, configuration) */
    for (int fi = 0; fi < nF; fi++) ptotal += (size_t)nC[fi];
    drift_progress_phase(&cli, "logits and samplers per configuration");
    drift_progress(&cli, 0, ptotal);
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
            drift_sf_check_t chk;
            if (drift_sampling_sweep_run(TOK(fi, c, 0, 0), TOK2(fi, c, 0, 0), &chk, L, &SW))
                drift_die("sampling failed (out of memory or an internal inconsistency)");
            top_ties[fi][c] = chk.top_ties;
            softmax_check = fmax(softmax_check, chk.softmax_diff);
            drift_progress(&cli, ++pdone, ptotal);
        }
    }

    /* -- the planted exact ties: T = 1e-8 against T = 0 with the exact logits -- */
    drift_tie_demo_t *TI = calloc((size_t)ties, sizeof *TI);
    if (!TI) drift_die_oom((double)ties * sizeof *TI, "%ld planted ties (--ties: fewer)", (long)ties);
    const drift_format_t ft = cli.formats[0];
    for (long q = 0; q < ties; q++) {
        if (drift_tie_demo(&TI[q], &model, (size_t)K, ft, cli.seed, drift_fnv1a32(EXP ".tie"),
                drift_fnv1a32(EXP ".tie.u"), q, draws))
            drift_die(
                "--ties: planted tie %ld of %ld (K = %ld, %ld draws) failed: out of memory (--K, --draws: smaller)",
                q + 1, (long)ties, (long)K, (long)draws);
    }
    const char *cname[MAXF][MAXC];
    for (int fi = 0; fi < nF; fi++)
        for (int c = 0; c < nC[fi]; c++) cname[fi][c] = C[fi][c].name;
    const drift_sf_lab_t lab = {&cli, K, V, rows, draws, ties, &SW, SAMPLERS, nF, nC, (const char *const(*)[MAXC])cname,
        tok, tok2, (const long(*)[MAXC])top_ties, softmax_check, TI, ft};
    if (drift_sampling_write(&lab)) /* sampling_report.c */
        drift_die("writing the results: out of memory for the tables of %ld rows x %ld draws (--rows, --draws: fewer)",
            (long)rows, (long)draws);
    free(tok), free(tok2), free(WT), free(L), free(Hf), free(W), free(H), free(U), free(TI);
    return 0;
}
