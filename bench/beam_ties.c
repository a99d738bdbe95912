/* bench/beam_ties.c — how fragile beam search is: how often the best beam changes with the
 * numerics (fp32 against bf16 weights and matmuls) and with the order of equal scores
 * (stable against unstable ties), and how many exact score ties occur at all.
 *
 * For each of the first --n prompts of --prompts (GGUF tokenizer, add_special and
 * parse_special as the llama.cpp witness records), under two numerics
 *   fp32: fp32/seq/fp32/fp32, fp32 weights;   bf16: bf16/seq/fp32/bf16, bf16 weights,
 * it runs beam search (--beams W, --tokens T, fixed length) with stable ties and with unstable
 * ties at seeds 1 .. --seeds, and greedy (beams 1) for contrast. Unstable runs are made at
 * seed 1 on every prompt (a check: without a tie the order cannot matter) and at the other
 * seeds only where the stable run met a tie among its kept beams + 1, since elsewhere the
 * result is the stable one by construction.
 *
 * usage: bench_beam_ties [--checkpoint GGUF] [--prompts FILE] [--n N] [--tokens T] [--beams W]
 *                        [--seeds S]
 * One table row per prompt and numerics on stdout, the totals after it. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "beam.h"
#include "checkpoint.h"
#include "drift.h"
#include "model.h"
#include "prompt_file.h"
#include "tokenizer.h"

#include "bench_util.h"
#include "cli.h"

static void die(const char *msg, const char *detail)
{
    fprintf(stderr, "bench_beam_ties: %s%s%s\n", msg, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static int same_best(const drift_beam_t *a, const drift_beam_t *b)
{
    return a->len[0] == b->len[0] && !memcmp(a->tokens, b->tokens, (size_t)a->len[0] * sizeof(int));
}

static int first_diff(const drift_beam_t *a, const drift_beam_t *b)
{
    int n = a->len[0] < b->len[0] ? a->len[0] : b->len[0];
    for (int i = 0; i < n; i++)
        if (a->tokens[i] != b->tokens[i]) return i;
    return a->len[0] == b->len[0] ? -1 : n;
}

static void search(
    drift_beam_t *out, drift_model_t *m, const int *p, int np, int W, int T, drift_beam_ties_t ties, uint64_t seed)
{
    char err[256];
    drift_beam_opts_t o = drift_beam_opts(W, T);
    o.ties = ties, o.seed = seed;
    if (drift_beam_search(out, m, p, np, &o, err, sizeof err)) die("beam search", err);
}

int main(int argc, char **argv)
{
    const char *ckpt = DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
    const char *pf_path = DRIFT_SOURCE_DIR "/tests/data/llamacpp_prompts.txt";
    const char *n_s = NULL, *t_s = NULL, *w_s = NULL, *s_s = NULL;
    const drift_arg_opt_t opts[] = {{"checkpoint", &ckpt, NULL, 0, "GGUF"}, {"prompts", &pf_path, NULL, 0, "FILE"},
        {"n", &n_s, NULL, 0, "N"}, {"tokens", &t_s, NULL, 0, "T"}, {"beams", &w_s, NULL, 0, "W"},
        {"seeds", &s_s, NULL, 0, "S"}};
    bench_args(opts, 6, NULL, 0, argc, argv,
        "usage: bench_beam_ties [--checkpoint GGUF] [--prompts FILE] [--n N] [--tokens T] [--beams W] [--seeds S]   (10, 24, 4, 3)");
    omp_set_num_threads(1);
    int N = n_s ? (int)bench_long("--n", n_s, 1, 100000) : 10,
        T = t_s ? (int)bench_long("--tokens", t_s, 1, 100000) : 24;
    int W = w_s ? (int)bench_long("--beams", w_s, 1, 1024) : 4,
        S = s_s ? (int)bench_long("--seeds", s_s, 1, 100000) : 3;
    char err[512];
    drift_checkpoint_t ck;
    if (drift_checkpoint_read(&ck, ckpt, err, sizeof err)) die("--checkpoint", err);
    if (!ck.gguf) die("--checkpoint: needs a GGUF file (its tokenizer encodes the prompts)", ckpt);
    drift_tokenizer_t tz;
    if (drift_tokenizer_from_gguf(&tz, ck.gguf, err, sizeof err)) die("tokenizer", err);
    drift_prompt_file_t pf;
    if (drift_prompt_file_read(&pf, pf_path, err, sizeof err)) die("--prompts", err);
    if (N > pf.n) N = pf.n;

    drift_numerics_t nx[2] = {drift_numerics_fp32(), drift_numerics_fp32()};
    if (drift_numerics_set_recipe(&nx[1], "bf16/seq/fp32/bf16")) die("recipe", "bf16/seq/fp32/bf16");
    nx[1].weights = DRIFT_BF16;
    static const char *const NXN[2] = {"fp32", "bf16"};
    int cap = ck.cfg.seq_len, *p = malloc((size_t)cap * sizeof *p);
    if (!p) drift_die_oom((double)cap * sizeof *p, "a prompt of %d tokens (the checkpoint's context)", cap);
    long tot_b[2] = {0, 0}, tot_i[2] = {0, 0}, runs_unstable[2] = {0, 0}, differ_unstable[2] = {0, 0};
    int prompts_tied[2] = {0, 0}, beam_nx_differ = 0, greedy_nx_differ = 0, greedy_ties[2] = {0, 0};
    double t0 = bench_cpu_now();
    printf("# beam search W=%d, %d tokens, %s; unstable seeds 1..%d (2.. only where a tie occurred)\n", W, T, ckpt, S);
    printf(
        "prompt,prompt_tokens,numerics,ties_boundary,ties_inside,unstable_differs,unstable_runs,greedy_ties,best_vs_greedy_first_diff\n");
    /* one model at a time (SmolLM2's weights in doubles take ~1.6 GB) */
    drift_beam_t *best = calloc(2 * (size_t)N, sizeof *best), *greedy = calloc(2 * (size_t)N, sizeof *greedy);
    if (!best || !greedy) drift_die_oom(4.0 * N * sizeof *best, "the beams of %d prompts", (int)N);
    for (int k = 0; k < 2; k++) {
        drift_model_t *m;
        if (drift_model_create(&m, &ck, &nx[k], W, err, sizeof err)) die("model", err);
        for (int q = 0; q < N; q++) {
            int np = 0;
            if (drift_tokenizer_encode_ex(&tz, pf.text[q], 1, 1, p, cap - T, &np) || np < 1)
                die("a prompt does not encode", pf.text[q]);
            drift_beam_t *b = &best[k * N + q], *g = &greedy[k * N + q];
            search(b, m, p, np, W, T, DRIFT_BEAM_TIES_STABLE, 0);
            search(g, m, p, np, 1, T, DRIFT_BEAM_TIES_STABLE, 0);
            int tied = b->ties_boundary + b->ties_inside > 0, differs = 0, runs = 0;
            for (int s = 1; s <= S && (s == 1 || tied); s++) {
                drift_beam_t u;
                search(&u, m, p, np, W, T, DRIFT_BEAM_TIES_UNSTABLE, (uint64_t)s);
                differs += !same_best(&u, b), runs++;
                drift_beam_free(&u);
            }
            tot_b[k] += b->ties_boundary, tot_i[k] += b->ties_inside, prompts_tied[k] += tied;
            runs_unstable[k] += runs, differ_unstable[k] += differs;
            greedy_ties[k] += g->ties_boundary > 0;
            printf("%d,%d,%s,%ld,%ld,%d,%d,%ld,%d\n", q, np, NXN[k], b->ties_boundary, b->ties_inside, differs, runs,
                g->ties_boundary, first_diff(b, g));
            fflush(stdout);
        }
        drift_model_free(m);
    }
    for (int q = 0; q < N; q++) {
        int bd = first_diff(&best[q], &best[N + q]), gd = first_diff(&greedy[q], &greedy[N + q]);
        beam_nx_differ += bd >= 0, greedy_nx_differ += gd >= 0;
        printf("# prompt %d: fp32 vs bf16 best beam %s%d, greedy %s%d; best scores %.9g / %.9g\n", q,
            bd < 0 ? "identical " : "parts at step ", bd, gd < 0 ? "identical " : "parts at step ", gd,
            best[q].score[0], best[N + q].score[0]);
    }
    for (int i = 0; i < 2 * N; i++) drift_beam_free(&best[i]), drift_beam_free(&greedy[i]);
    free(best), free(greedy);
    printf("# totals over %d prompts x %d tokens, %d beams:\n", N, T, W);
    for (int k = 0; k < 2; k++)
        printf("#   %s: exact score ties at the cut %ld, among kept beams %ld (%d prompts with any); unstable best != "
               "stable best in %ld of %ld runs; greedy top-2 logit ties on %d prompts\n",
            NXN[k], tot_b[k], tot_i[k], prompts_tied[k], differ_unstable[k], runs_unstable[k], greedy_ties[k]);
    printf("#   fp32 vs bf16: best beam differs on %d of %d prompts, greedy on %d of %d\n", beam_nx_differ, N,
        greedy_nx_differ, N);
    fprintf(stderr, "bench_beam_ties: %.0f s CPU\n", bench_cpu_now() - t0);
    free(p);
    drift_prompt_file_free(&pf);
    drift_tokenizer_free(&tz);
    drift_checkpoint_free(&ck);
    return 0;
}
