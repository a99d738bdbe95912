/* allreduce_order.c — does the order in which P tensor-parallel ranks add their partial sums
 * change the result, and does changing P alone change a greedy completion?
 *
 * Sweep: P = 2 .. --ranks-max ranks; the all-reduce orders of lib/llm/model.h (drift_allreduce):
 * rank order ((p0 + p1) + p2 ...), tree (pairwise over ranks) and ring (the buffer cut into P
 * chunks, chunk c reduced from rank c+1, as a ring reduce-scatter does).
 * Measure: (1) on the same fp32 partial sums (--elements values per rank, N(0, 1) rounded to
 * fp32, as the partials of a row-parallel GEMM), how many results differ between the orders and
 * their error against the exact sum (drift_exact_sum), normalised by sum |p_r| (the condition-
 * free scale: the exact sum may cancel to 0); (2) a model decoded greedily under tp = P with
 * each order, against tp = 1: SmolLM2-135M-Instruct (GGUF) by default, --prompts prompts of the
 * lab's prompt set drawn by the seed in its chat template; stories260K with --checkpoint and in
 * the quick profile (BOS and a random first token). The model splits attention by heads, so P
 * must divide the KV heads: SmolLM2's 9 query heads over 3 KV heads allow tp = 3 only (3 query
 * heads and 1 KV head a rank; the MLP's 1536 and the vocabulary split in 3 alike); stories260K's
 * 4 allow 2 and 4. The unit is the prompt (its tokens are not independent): per (recipe, tp,
 * order) the prompts whose text parts, with a Wilson interval, the parting step, and there the
 * tp = 1 run's own top-1/top-2 gap and the two runs' largest logit difference; the exact model's
 * gap (fp64, correctly rounded dots) with --exact-gaps 1 (quick, full: a real model's exact pass
 * costs about 0.2 s a token).
 * Run: ./lab run allreduce_order
 * Look for: the orders disagree in a fraction of elements that grows with P, all within a few
 * fp32 ulps of the exact sum; whether a completion moves when P changes, and whether every
 * order moves it at the same step (one near-tie, not three events). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chat_prompts.h"
#include "checkpoint.h"
#include "greedy_batch.h"
#include "pair_stats.h"
#include "parting.h"
#include "stats.h"
#include "cli.h"
#include "llm_run.h"
#include "drift.h"
#include "exact.h"
#include "metrics.h"
#include "model.h"
#include "output.h"
#include "philox.h"

static const char QUESTION[] =
    "Does the order in which tensor-parallel ranks add their partial sums change the result, and does changing the rank count alone change a greedy completion?";
static const char SUMMARY[] =
    "the same P partial sums added in rank order, as a tree, or as a ring (each chunk starting at another rank) "
    "give different fp32 results for a fraction of the elements that grows with P, each within a few ulps of the "
    "exact sum; in the model, changing the number of ranks changes which terms each partial holds, and a greedy "
    "completion can part from the single-rank one, at a step where the top two logits are nearly tied.";

enum { T_AR, T_GEN, T_MD, T_MDG };
static const drift_col_t AR[] = {DRIFT_C_INT("P"), DRIFT_C_TEXT("allreduce"), DRIFT_C_INT("elements"),
    DRIFT_C_NUM("frac_differs_from_rank", "%.6g"), DRIFT_C_NUM("frac_differs_from_ring", "%.6g"),
    DRIFT_C_NUM("max_err", "%.6e"), DRIFT_C_NUM("rms_err", "%.6e"), DRIFT_C_NUM("frac_not_correctly_rounded", "%.6g")};
static const drift_col_t GEN[] = {DRIFT_C_TEXT("recipe"), DRIFT_C_INT("tp"), DRIFT_C_TEXT("allreduce"),
    DRIFT_C_INT("prompt"), DRIFT_C_INT("prompt_tokens"), DRIFT_C_INT("tokens"), DRIFT_C_INT("first_div_vs_tp1"),
    DRIFT_C_INT("same_as_tp1"), DRIFT_C_INT("token_tp1"), DRIFT_C_INT("token_tp"), DRIFT_C_NUM("gap12_tp1", "%.6e"),
    DRIFT_C_NUM("gap_ab_tp1", "%.6e"), DRIFT_C_NUM("spread", "%.6e"), DRIFT_C_NUM("exact_gap12", "%.6e"),
    DRIFT_C_NUM("exact_gap_ab", "%.6e")};
static const drift_col_t MDG[] = {DRIFT_C_TEXT("recipe"), DRIFT_C_INT("tp"), DRIFT_C_TEXT("order"),
    DRIFT_C_TEXT("prompts parted"), DRIFT_C_TEXT("parting steps"), DRIFT_C_TEXT("tp=1 top-2 gap there (max)"),
    DRIFT_C_TEXT("logit spread there (max)")};
static const drift_col_t MD[] = {DRIFT_C_INT("P"), DRIFT_C_TEXT("order"),
    DRIFT_C_NUM("differs from rank order", "%.3g"), DRIFT_C_NUM("max error / sum|p|", "%.3g"),
    DRIFT_C_NUM("not correctly rounded", "%.3g")};
static const drift_table_spec_t TABLES[] = {{".csv", NULL, 0, AR, 8}, {"_generate.csv", NULL, 0, GEN, 15},
    {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MD, 5}, {NULL, NULL, DRIFT_SHOW_MD | DRIFT_SHOW_STDOUT, MDG, 7}};

#define MAXR 4  /* recipes */
#define MAXTP 4 /* rank counts besides 1 */

int main(int argc, char **argv)
{
    long Pmax = 0, N_ = 0, T_ = 0, NR_ = 0, exact_gaps = 0;
    const char *ckpt = NULL, *set = NULL, *recipes_opt = NULL;
    const drift_cli_opt_t opts[] = {
        {"ranks-max", DRIFT_OPT_INT, &Pmax, "P", "largest rank count of the partial-sum sweep", 2, 64,
            {"8", "16", "16"}},
        {"elements", DRIFT_OPT_INT, &N_, "N", "elements per rank (the all-reduced buffer)", 1, 1 << 24,
            {"4096", "65536", "1048576"}},
        {"tokens", DRIFT_OPT_INT, &T_, "T", "greedy tokens per completion", 1, 4096, {"16", "16", "64"}},
        {"prompts", DRIFT_OPT_INT, &NR_, "N", "prompts decoded (drawn by the seed)", 1, 1024, {"3", "12", "32"}},
        {"recipes", DRIFT_OPT_STRING, &recipes_opt, "LIST", "matmul recipes of the greedy text, comma-separated", 0, 0,
            {"fp32/seq/fp32/fp32,bf16/tc:h100/fp32/bf16", "bf16/tc:h100/fp32/bf16",
                "fp32/seq/fp32/fp32,bf16/tc:h100/fp32/bf16"}},
        {"exact-gaps", DRIFT_OPT_INT, &exact_gaps, "0|1",
            "1: the exact model's top-2 gap at every parting (about 0.2 s a token on SmolLM2)", 0, 1, {"1", "0", "1"}},
        {"checkpoint", DRIFT_OPT_STRING, &ckpt, "FILE",
            "checkpoint, llama2.c .bin or GGUF (default SmolLM2-135M-Instruct; stories260K in the quick profile)", 0, 0,
            {0}},
        {"prompt-set", DRIFT_OPT_STRING, &set, "FILE",
            "prompt set a GGUF model's prompts are drawn from (default prompts/lab-prompts.txt)", 0, 0, {0}},
    };
    const drift_cli_spec_t spec = DRIFT_LLM_SPEC("allreduce_order", QUESTION, opts,
        "takes no formats or orders (the partial sums are fp32; the all-reduce orders are the sweep: rank, tree, ring)",
        SUMMARY);
    drift_cli_t cli;
    drift_cli_parse(&cli, &spec, argc, argv);
    const size_t N = (size_t)N_;
    const int T = (int)T_, NR = (int)NR_;
    drift_recipe_t rec[MAXR];
    char rname[MAXR][64];
    int nrec = 0;
    {
        char buf[512];
        if (strlen(recipes_opt) >= sizeof buf) drift_die("--recipes: too long");
        strcpy(buf, recipes_opt);
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
            if (nrec == MAXR) drift_die("--recipes: at most %d", MAXR);
            if (drift_model_recipe_parse(&rec[nrec], t) || strlen(t) >= sizeof rname[0])
                drift_die("--recipes: '%s' is not a decoder recipe IN/ORDER/ACC/OUT (e.g. bf16/tc:h100/fp32/bf16)", t);
            strcpy(rname[nrec++], t);
        }
        if (!nrec) drift_die("--recipes: no recipe named");
    }
    if (drift_llm_run_choose(&ckpt, &cli, NULL)) return DRIFT_EXIT_SKIPPED;
    drift_checkpoint_t ck;
    drift_llm_run_open(&ck, &ckpt); /* and one thread: the model's GEMMs are too small for a parallel region each */
    char err[DRIFT_LLM_ERR_MAX];
    const int V = ck.cfg.vocab_size;
    if (set && !ck.gguf)
        drift_die("--prompt-set: a llama2.c checkpoint holds no tokenizer (its prompts are BOS and a random token)");
    if (V < 4) drift_die("--checkpoint: a vocabulary of %d has no token to prompt with", V);
    /* the prompts: the set's, in the chat template (GGUF); BOS and a random first token, not 0-2 (llama2.c) */
    int **prompt = calloc((size_t)NR, sizeof *prompt), *plen = calloc((size_t)NR, sizeof *plen),
        *ptag = calloc((size_t)NR, sizeof *ptag);
    if (!prompt || !plen || !ptag) drift_die_oom(3.0 * NR * sizeof(int *), "the prompts (--prompts: fewer)");
    int maxlen = 0, minlen = 1 << 30;
    {
        drift_chat_prompt_t *cp = NULL;
        if (ck.gguf && drift_chat_prompts_load(&cp, &ck, set ? set : DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt", NR,
                           cli.seed, "allreduce_order.prompt", 512, err, sizeof err))
            drift_die("--prompt-set: %s", err);
        for (int r = 0; r < NR; r++) {
            int n = cp ? cp[r].n : 2;
            if (!(prompt[r] = malloc((size_t)n * sizeof(int)))) drift_die_oom((double)n * sizeof(int), "a prompt");
            if (cp)
                memcpy(prompt[r], cp[r].tok, (size_t)n * sizeof(int)), ptag[r] = cp[r].index;
            else {
                drift_stream_t ps;
                drift_stream_init(&ps, cli.seed, drift_fnv1a32("allreduce_order.prompt"), (uint32_t)r, 0);
                prompt[r][0] = 1, prompt[r][1] = 3 + (int)drift_stream_below(&ps, (uint32_t)V - 3), ptag[r] = r;
            }
            plen[r] = n, maxlen = n > maxlen ? n : maxlen, minlen = n < minlen ? n : minlen;
        }
        if (cp) drift_chat_prompts_free(cp, NR);
    }
    if (maxlen + T - 1 > ck.cfg.seq_len)
        drift_die("--tokens: the prompt (%d) and %d tokens must fit the context of %d", maxlen, T, ck.cfg.seq_len);
    /* the rank counts: P > 1 dividing the KV heads (the model splits attention by heads) */
    int tps[MAXTP], ntp = 0;
    for (int P = 2; P <= 8 && ntp < MAXTP; P++)
        if (ck.cfg.n_kv_heads % P == 0) tps[ntp++] = P;
    if (!ntp)
        drift_die("--checkpoint: %d KV head(s) cannot be split over ranks (tensor parallelism needs a divisor > 1)",
            ck.cfg.n_kv_heads);
    char tplist[64] = "";
    for (int i = 0; i < ntp; i++)
        snprintf(tplist + strlen(tplist), sizeof tplist - strlen(tplist), "%s%d", i ? ", " : "", tps[i]);
    const double params =
        (double)ck.cfg.n_layers * ck.cfg.dim *
            (2.0 * ck.cfg.dim + 2.0 * ck.cfg.dim * ck.cfg.n_kv_heads / ck.cfg.n_heads + 3.0 * ck.cfg.hidden_dim) +
        2.0 * V * ck.cfg.dim;
    /* two models' weights (double and float), kept logits of every (config, prompt) of a recipe, KV caches, the exact model */
    drift_require_memory(&cli,
        24.0 * params + 8.0 * (1 + ntp * DRIFT_NALLREDUCE) * NR * (double)T * V +
            16.0 * NR * ck.cfg.n_layers * (double)(maxlen + T) * ck.cfg.dim +
            (exact_gaps ? 8.0 * params + 8.0 * (maxlen + T) * (double)V : 0) + 8.0 * Pmax * (double)N * 4,
        "--prompts, --tokens, --elements");
    const char *model = strrchr(ckpt, '/') ? strrchr(ckpt, '/') + 1 : ckpt;

    drift_out_t out;
    drift_out_open(&out, &cli, TABLES, 4, 1);
    drift_out_meta(
        &out, T_AR, "table", "per (P, order): the same P x %zu fp32 partial sums N(0,1) reduced in fp32 (RNE)", N);
    drift_out_meta(&out, T_AR, "columns",
        "frac_differs_* = fraction of elements whose result differs bitwise from rank order / ring; "
        "max_err, rms_err = |result - exact sum| / sum_r |p_r| over the elements; frac_not_correctly_rounded = results other than the exact sum rounded to fp32");
    char pdesc[512];
    if (ck.gguf)
        snprintf(pdesc, sizeof pdesc,
            "%d prompts of %s drawn by seed %llu, in the model's chat template (%d to %d tokens)", NR,
            set ? set : "prompts/lab-prompts.txt", (unsigned long long)cli.seed, minlen, maxlen);
    else
        snprintf(pdesc, sizeof pdesc, "%d prompts of BOS and a random first token, drawn by seed %llu", NR,
            (unsigned long long)cli.seed);
    drift_out_meta(&out, T_GEN, "setup",
        "%s (dim %d, layers %d, %d query heads over %d KV heads, vocab %d); %s; %d greedy tokens each, no stop at BOS; "
        "batch-invariant policy, the prompts decoded side by side; tp = 1 and tp = %s (P must divide the KV heads: attention is split by heads)",
        ckpt, ck.cfg.dim, ck.cfg.n_layers, ck.cfg.n_heads, ck.cfg.n_kv_heads, V, pdesc, T, tplist);
    drift_out_meta(&out, T_GEN, "table",
        "one row per (recipe, tp > 1, order, prompt); prompt = its line in the prompt set (GGUF) or its draw (llama2.c); "
        "first_div_vs_tp1 = first generated token (0-based) that differs from tp = 1 (-1: none); at that step: "
        "token_tp1, token_tp the two tokens, gap12_tp1 = the tp = 1 run's own top-1 - top-2 logit gap, "
        "gap_ab_tp1 = its logit of token_tp1 - of token_tp, spread = max over the vocabulary of |logit_tp1 - logit_tp|; "
        "exact_* = the exact reference (fp64, correctly rounded dots) teacher-forced on the common context, %s",
        exact_gaps ? "computed (--exact-gaps 1)" : "not computed here (--exact-gaps 0: nan)");
    drift_md_intro(&out,
        "P fp32 partial sums (N(0, 1), %zu elements per rank) reduced by P = 2..%ld ranks in rank order, as a tree, and as a ring; "
        "then %s decoded greedily (%s; %d tokens) under tensor parallelism tp = 1 and tp = %s with each order (the model splits attention by heads, "
        "so tp must divide its %d KV heads).",
        N, Pmax, model, pdesc, T, tplist, ck.cfg.n_kv_heads);
    drift_md_text(&out, "**The same partial sums, three orders:**\n\n");

    /* -- (1) partial sums -- */
    double *part = malloc((size_t)Pmax * N * sizeof(double)), *Y[DRIFT_NALLREDUCE], v[64];
    for (int a = 0; a < DRIFT_NALLREDUCE; a++)
        if (!(Y[a] = malloc(N * sizeof(double))))
            drift_die_oom((double)N * sizeof(double), "a result of %zu elements (--elements: fewer)", (size_t)N);
    if (!part)
        drift_die_oom((double)Pmax * N * sizeof(double),
            "%d ranks' partial sums of %zu elements (--ranks-max, --elements: fewer)", (int)Pmax, (size_t)N);
    double worst_err = 0, frac_hi = 0, worst_by[DRIFT_NALLREDUCE] = {0};
    long frac_hi_P = 0;
    for (long P = 2; P <= Pmax; P++) {
        drift_progress(&cli, (size_t)P, (size_t)Pmax + 1);
        drift_stream_t st;
        drift_stream_init(&st, cli.seed, drift_fnv1a32("allreduce_order"), (uint32_t)P, 0);
        for (size_t i = 0; i < (size_t)P * N; i++) part[i] = (double)(float)drift_stream_normal(&st);
        for (int a = 0; a < DRIFT_NALLREDUCE; a++)
            if (drift_allreduce(Y[a], part, N, N, (int)P, (drift_allreduce_t)a, DRIFT_FP32, DRIFT_FP32))
                drift_die("all-reduce failed");
        for (int a = 0; a < DRIFT_NALLREDUCE; a++) {
            long d_rank = 0, d_ring = 0, ncr = 0;
            double mx = 0, ss = 0;
            for (size_t e = 0; e < N; e++) {
                double ex, scale = 0;
                for (long r = 0; r < P; r++) v[r] = part[(size_t)r * N + e], scale += fabs(v[r]);
                if (drift_exact_sum(&ex, v, (size_t)P, DRIFT_FP64, DRIFT_RNE)) drift_die("exact sum failed");
                double er = scale > 0 ? fabs(Y[a][e] - ex) / scale : 0;
                mx = fmax(mx, er), ss += er * er;
                ncr += Y[a][e] != (double)(float)ex;
                d_rank += Y[a][e] != Y[DRIFT_ALLREDUCE_RANK][e];
                d_ring += Y[a][e] != Y[DRIFT_ALLREDUCE_RING][e];
            }
            double fr = (double)d_rank / (double)N;
            drift_row(&out, T_AR, DRIFT_INT(P), DRIFT_TXT(drift_allreduce_name((drift_allreduce_t)a)), DRIFT_INT(N),
                DRIFT_NUM(fr), DRIFT_NUM((double)d_ring / (double)N), DRIFT_NUM(mx), DRIFT_NUM(sqrt(ss / (double)N)),
                DRIFT_NUM((double)ncr / (double)N));
            drift_row(&out, T_MD, DRIFT_INT(P), DRIFT_TXT(drift_allreduce_name((drift_allreduce_t)a)), DRIFT_NUM(fr),
                DRIFT_NUM(mx), DRIFT_NUM((double)ncr / (double)N));
            worst_err = fmax(worst_err, mx);
            worst_by[a] = fmax(worst_by[a], mx);
            if (fr > frac_hi) frac_hi = fr, frac_hi_P = P;
        }
    }
    drift_md_end(&out, T_MD);

    /* -- (2) greedy completions: every (recipe, tp, order) decodes the prompts side by side; each against tp = 1 -- */
    const int nconf = 1 + ntp * DRIFT_NALLREDUCE; /* [0]: tp = 1; then (tp, order) */
    drift_gen_t *gen = calloc((size_t)nconf * NR, sizeof *gen);
    drift_parting_t *pt = calloc((size_t)MAXR * nconf * NR, sizeof *pt); /* [recipe][conf][prompt] */
    if (!gen || !pt) drift_die_oom((double)nconf * NR * (sizeof *gen + MAXR * sizeof *pt), "the completions' records");
    drift_model_t *exm = NULL;
    drift_prefix_logits_t exl;
    if (exact_gaps) {
        drift_numerics_t exn = drift_numerics_exact();
        if (drift_model_create(&exm, &ck, &exn, 1, err, sizeof err)) drift_die("exact model: %s", err);
        if (drift_prefix_logits_init(&exl, exm))
            drift_die_oom((double)ck.cfg.seq_len * V * sizeof(double), "the exact logits of the context");
    }
    for (int ri = 0; ri < nrec; ri++) {
        for (int c = 0; c < nconf; c++) {
            drift_progress(
                &cli, (size_t)Pmax + 1 + (size_t)(ri * nconf + c), (size_t)Pmax + 1 + (size_t)(nrec * nconf));
            drift_numerics_t nx = drift_numerics_fp32();
            drift_numerics_set_mm(&nx, &rec[ri]);
            /* a prompt's GEMMs do not depend on the prompts beside it; the ring all-reduce still does
             * (it cuts the whole batch's buffer into P chunks, as NCCL does), the tree and rank orders not */
            nx.policy = DRIFT_POLICY_BATCH_INVARIANT;
            nx.tp = c ? tps[(c - 1) / DRIFT_NALLREDUCE] : 1;
            nx.allreduce = c ? (drift_allreduce_t)((c - 1) % DRIFT_NALLREDUCE) : DRIFT_ALLREDUCE_RING;
            drift_model_t *m;
            if (drift_model_create(&m, &ck, &nx, NR, err, sizeof err))
                drift_die("model (%s, tp %d): %s", rname[ri], nx.tp, err);
            int rc = drift_greedy_batch_var(gen + (size_t)c * NR, m, (const int *const *)prompt, plen, NR, T, 1);
            if (rc) drift_die("greedy decoding (%s, tp %d): %s", rname[ri], nx.tp, drift_strerror(rc));
            drift_model_free(m);
        }
        for (int c = 1; c < nconf; c++)
            for (int r = 0; r < NR; r++) {
                const drift_gen_t *a1 = &gen[r], *b1 = &gen[(size_t)c * NR + r];
                drift_parting_t *p = &pt[((size_t)ri * nconf + c) * NR + r];
                int rc = drift_parting(p, a1->token, a1->logits, b1->token, b1->logits, T, V, prompt[r], plen[r],
                    exact_gaps ? &exl : NULL);
                if (rc) drift_die("parting: %s", drift_strerror(rc));
                int t = p->step;
                double g12 = t >= 0 ? a1->top1_logit[t] - a1->top2_logit[t] : NAN;
                double gab = t >= 0 ? a1->logits[(size_t)t * V + p->tok_a] - a1->logits[(size_t)t * V + p->tok_b] : NAN;
                drift_row(&out, T_GEN, DRIFT_TXT(rname[ri]), DRIFT_INT(tps[(c - 1) / DRIFT_NALLREDUCE]),
                    DRIFT_TXT(drift_allreduce_name((drift_allreduce_t)((c - 1) % DRIFT_NALLREDUCE))),
                    DRIFT_INT(ptag[r]), DRIFT_INT(plen[r]), DRIFT_INT(T), DRIFT_INT(t), DRIFT_INT(t < 0),
                    DRIFT_INT(t >= 0 ? p->tok_a : -1), DRIFT_INT(t >= 0 ? p->tok_b : -1), DRIFT_NUM(g12),
                    DRIFT_NUM(gab), DRIFT_NUM(t >= 0 ? p->spread : NAN), DRIFT_NUM(t >= 0 ? p->gap12 : NAN),
                    DRIFT_NUM(t >= 0 ? p->gap_ab : NAN));
                p->dev = g12; /* kept for the summary: the tp = 1 run's own gap there */
            }
        for (int i = 0; i < nconf * NR; i++) drift_gen_free(&gen[i]);
    }
    /* the fragment's table: per (recipe, tp, order), counted by prompt */
    drift_md_text(&out,
        "**Greedy text under tp = %s against tp = 1** (%s, %d prompts, %d tokens; a prompt is the unit):\n\n", tplist,
        model, NR, T);
    for (int ri = 0; ri < nrec; ri++)
        for (int c = 1; c < nconf; c++) {
            int k = 0;
            double gmax = 0, smax = 0;
            char steps[256] = "", cell[96], g[32], sp[32];
            for (int r = 0; r < NR; r++) {
                const drift_parting_t *p = &pt[((size_t)ri * nconf + c) * NR + r];
                if (p->step < 0) continue;
                k++, gmax = fmax(gmax, p->dev), smax = fmax(smax, p->spread);
                size_t l = strlen(steps);
                if (l < sizeof steps - 16) snprintf(steps + l, sizeof steps - l, "%s%d", l ? ", " : "", p->step);
            }
            drift_rate_text(cell, sizeof cell, k, NR);
            snprintf(g, sizeof g, k ? "%.3g" : "-", gmax), snprintf(sp, sizeof sp, k ? "%.3g" : "-", smax);
            drift_row(&out, T_MDG, DRIFT_TXT(rname[ri]), DRIFT_INT(tps[(c - 1) / DRIFT_NALLREDUCE]),
                DRIFT_TXT(drift_allreduce_name((drift_allreduce_t)((c - 1) % DRIFT_NALLREDUCE))), DRIFT_TXT(cell),
                DRIFT_TXT(k ? steps : "-"), DRIFT_TXT(g), DRIFT_TXT(sp));
        }
    drift_md_end(&out, T_MDG);

    drift_md_text(&out,
        "**Takeaway.**\n\n- On the same partial sums, the orders disagree in up to %.3g of the elements (P = %ld); "
        "every result is within %.2g of sum |p_r| from the exact sum (largest error / sum |p_r|: rank %.2g, tree %.2g, ring %.2g): "
        "different roundings of one sum, each a few fp32 ulps (2^-24 = 6e-8) from it.\n",
        frac_hi, frac_hi_P, worst_err, worst_by[DRIFT_ALLREDUCE_RANK], worst_by[DRIFT_ALLREDUCE_TREE],
        worst_by[DRIFT_ALLREDUCE_RING]);
    /* per (recipe, tp): the prompts parted by some order, and whether every order parted them at one step (one near-tie) */
    for (int ri = 0; ri < nrec; ri++)
        for (int ti = 0; ti < ntp; ti++) {
            int any = 0, every = 0, one_step = 0, nparts = 0, ties = 0;
            double gmax = 0, smax = 0, egmax = 0;
            for (int r = 0; r < NR; r++) {
                int parted = 0, s0 = -2, same = 1;
                for (int o = 0; o < DRIFT_NALLREDUCE; o++) {
                    const drift_parting_t *p = &pt[((size_t)ri * nconf + 1 + ti * DRIFT_NALLREDUCE + o) * NR + r];
                    if (p->step >= 0)
                        parted++, nparts++, ties += p->dev == 0, gmax = fmax(gmax, p->dev),
                                                                 smax = fmax(smax, p->spread),
                                                                 egmax = fmax(egmax, fabs(p->gap12));
                    if (s0 == -2)
                        s0 = p->step;
                    else if (p->step != s0)
                        same = 0;
                }
                any += parted > 0;
                every += parted == DRIFT_NALLREDUCE;
                one_step += parted == DRIFT_NALLREDUCE && same;
            }
            char cell[96];
            drift_rate_text(cell, sizeof cell, any, NR);
            if (!any) {
                double lo, hi;
                if (drift_wilson(&lo, &hi, 0, NR, DRIFT_Z95)) drift_die("no Wilson interval for 0 of %d prompts", NR);
                drift_md_text(&out,
                    "- %s, tp = 1 -> %d: no prompt's completion moved within %d tokens under any order (0 of %d prompts, < %.3g%% at 95%%): a bound, not identity.\n",
                    rname[ri], tps[ti], T, NR, 100 * hi);
                continue;
            }
            drift_md_text(&out,
                "- %s, tp = 1 -> %d: the completion moved for %s of prompts under some order within %d tokens; "
                "%d of those %d under all %d orders, %d of them at one step under each%s. "
                "At the %d (order, prompt) partings the tp = 1 run's own top-2 gap is at most %.3g (0, a tie, at %d), the two runs' logits differ by up to %.3g",
                rname[ri], tps[ti], cell, T, every, any, DRIFT_NALLREDUCE, one_step,
                one_step ? " (one near-tie, not one event per order)" : "", nparts, gmax, ties, smax);
            if (exact_gaps)
                drift_md_text(&out, "; the exact model's top-1/top-2 gap there is at most %.3g", egmax);
            else
                drift_md_text(&out, " (the exact gaps: --exact-gaps 1)");
            drift_md_text(&out, ".\n");
        }
    drift_md_text(&out, "\n");
    if (exact_gaps) drift_prefix_logits_free(&exl), drift_model_free(exm);
    for (int r = 0; r < NR; r++) free(prompt[r]);
    free(prompt), free(plen), free(ptag), free(gen), free(pt);
    drift_out_commit(&out);
    for (int a = 0; a < DRIFT_NALLREDUCE; a++) free(Y[a]);
    free(part);
    drift_checkpoint_free(&ck);
    return 0;
}
