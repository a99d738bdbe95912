/* bench/forecast.c — what a parting forecast costs against running deployment B.
 *
 * The forecast (lib/llm/forecast.h) needs deployment A's per-step top-2 gaps, which A's own run
 * gives, and the pair's fitted law; running B means decoding every prompt again. Per
 * interleaved repetition: B (`vllm-like,card=a100,batch=alone`) decodes one chat-wrapped prompt
 * of the lab's set for --tokens tokens (the cost of running B on one prompt); the law is fitted
 * to 512 prompts' steps; 512 texts of --tokens steps (that prompt's gaps) are forecast. Thread CPU
 * time, one thread, min and median over --reps; the ratio is B's cost for 512 prompts (512 x
 * one prompt) over the forecast's.
 *
 * usage: bench_forecast [--checkpoint FILE] [--tokens N] [--reps N] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "chat_prompts.h"
#include "checkpoint.h"
#include "deployment.h"
#include "drift.h"
#include "forecast.h"
#include "model.h"
#include "philox.h"
#include "cli.h"

#define PROMPTS 512

static void die(const char *msg)
{
    fprintf(stderr, "bench_forecast: %s\n", msg);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *ckpt = DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf", *t_s = NULL, *reps_s = NULL;
    const drift_arg_opt_t opts[] = {
        {"checkpoint", &ckpt, NULL, 0, "FILE"}, {"tokens", &t_s, NULL, 0, "N"}, {"reps", &reps_s, NULL, 0, "N"}};
    bench_args(opts, 3, NULL, 0, argc, argv,
        "usage: bench_forecast [--checkpoint FILE] [--tokens N] [--reps N]   (tokens 1..1000, default 24; reps 1..100, default 3)");
    int T = t_s ? (int)bench_long("--tokens", t_s, 1, 1000) : 24,
        reps = reps_s ? (int)bench_long("--reps", reps_s, 1, 100) : 3;
    drift_checkpoint_t ck;
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_checkpoint_read(&ck, ckpt, err, sizeof err)) {
        fprintf(stderr, "bench_forecast: skipped: %s (./lab models get smollm2-135m)\n", err);
        return 0;
    }
    drift_chat_prompt_t *pr;
    if (drift_chat_prompts_load(&pr, &ck, DRIFT_SOURCE_DIR "/prompts/lab-prompts.txt", 1, 1, "bench.forecast",
            ck.cfg.seq_len - T, err, sizeof err))
        die(err);
    drift_deployment_t dep;
    if (drift_deployment_parse(&dep, "vllm-like,card=a100,batch=alone", err, sizeof err)) die(err);
    drift_model_t *m;
    if (drift_model_create(&m, &ck, &dep.nx, 1, err, sizeof err)) die(err);
    /* the law's input: 512 prompts' steps of deltas drawn from a known law (their values do
     * not change the cost) */
    size_t nd = (size_t)PROMPTS * (size_t)T;
    double *delta = malloc(nd * sizeof *delta), *gaps = malloc((size_t)T * sizeof *gaps);
    double *tb = malloc((size_t)reps * sizeof(double)), *tf = malloc((size_t)reps * sizeof(double)),
           *tx = malloc((size_t)reps * sizeof(double));
    if (!delta || !gaps || !tb || !tf || !tx)
        drift_die_oom((double)nd * sizeof *delta, "%zu steps of deltas (--tokens: fewer)", nd);
    drift_stream_t st;
    drift_stream_init(&st, 1, drift_fnv1a32("bench.forecast"), 0, 0);
    for (size_t i = 0; i < nd; i++) delta[i] = drift_stream_uniform(&st) < 0.5 ? 0 : drift_stream_uniform(&st) - 0.5;
    volatile double sink = 0;
    for (int r = 0; r < reps; r++) {
        drift_gen_t g;
        double t0 = bench_cpu_now();
        if (drift_deploy_generate(&g, m, &dep, pr[0].tok, pr[0].n, pr[0].prefix, T, 1, 0)) die("decode failed");
        tb[r] = bench_cpu_now() - t0;
        for (int t = 0; t < T; t++) gaps[t] = t < g.n ? g.top1_logit[t] - g.top2_logit[t] : 1;
        drift_gen_free(&g);
        drift_delta_fit_t f;
        t0 = bench_cpu_now();
        if (drift_delta_fit(&f, delta, NULL, nd)) die("fit failed");
        tx[r] = bench_cpu_now() - t0;
        t0 = bench_cpu_now();
        for (int i = 0; i < PROMPTS; i++) {
            drift_forecast_t fc;
            if (drift_forecast_text(&fc, &f, -1, gaps, NULL, T)) die("forecast failed");
            sink += fc.p;
        }
        tf[r] = bench_cpu_now() - t0;
    }
    double rb[100], rf[100];
    for (int r = 0; r < reps; r++) rb[r] = PROMPTS * tb[r], rf[r] = tf[r];
    bench_stat_t ratio = bench_ratio(rb, rf, reps), b = bench_stat(tb, reps), f = bench_stat(tf, reps),
                 x = bench_stat(tx, reps);
    printf(
        "bench_forecast: SmolLM2-135M, %d tokens per prompt, %d reps, 1 thread (thread CPU s, min/median)\n", T, reps);
    printf("run B on 1 prompt       %.3g/%.3g   (x %d prompts: %.3g/%.3g)\n", b.min, b.med, PROMPTS, PROMPTS * b.min,
        PROMPTS * b.med);
    printf("fit the law, %d x %d steps  %.3g/%.3g\n", PROMPTS, T, x.min, x.med);
    printf("forecast %d prompts     %.3g/%.3g\n", PROMPTS, f.min, f.med);
    printf("running B / forecast    %.3gx/%.3gx\n", ratio.min, ratio.med);
    free(delta), free(gaps), free(tb), free(tf), free(tx);
    drift_model_free(m);
    drift_chat_prompts_free(pr, 1);
    drift_checkpoint_free(&ck);
    return sink < 0;
}
