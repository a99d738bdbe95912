/* bench/tc_decode.c — what the decoder's tensor-core recipes cost per token against the seq one.
 *
 * On one checkpoint (default models/SmolLM2-135M-Instruct.Q4_1.gguf), bf16 weights, it decodes
 * --tokens steps of B sequences side by side (one row each per step: GEMMs with M = B; B from
 * --batch, default 1 and 8) under bf16/seq/fp32/bf16 and under each tensor-core recipe
 * (bf16/tc:a100, bf16/tc:h100, fp16/tc:h100, fp32 accumulation), with the vendor-like policy
 * (split-K at small M) and the batch-invariant one. The tensor-core recipes run twice: the
 * model on B read in place (drift_tc_gemm_floatb) and the general path that packs B at every
 * call (drift_tc_gemm, forced by DRIFT_TC_NO_FLOATB=1). Times are thread CPU time per token,
 * one OpenMP thread, interleaved repetitions (seq, new, old in each), min and median; the
 * ratios are per repetition.
 *
 * usage: bench_tc_decode [--checkpoint FILE] [--tokens N] [--reps N] [--batch B[,B...]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_util.h"
#include "checkpoint.h"
#include "drift.h"
#include "model.h"
#include "cli.h"

static void die(const char *msg)
{
    fprintf(stderr, "bench_tc_decode: %s\n", msg);
    exit(2);
}

static drift_model_t *make(const drift_checkpoint_t *ck, const char *recipe, drift_policy_t pol, int slots)
{
    drift_numerics_t nx = drift_numerics_fp32();
    drift_recipe_t r;
    if (drift_model_recipe_parse(&r, recipe)) die("bad recipe");
    drift_numerics_set_mm(&nx, &r);
    nx.weights = DRIFT_BF16;
    nx.policy = pol;
    char err[DRIFT_LLM_ERR_MAX];
    drift_model_t *m;
    if (drift_model_create(&m, ck, &nx, slots, err, sizeof err)) die(err);
    return m;
}

/* CPU seconds per token of ntok steps of B sequences (positions 0 .. ntok-1). */
static double decode(drift_model_t *m, double *L, int B, int ntok, int V)
{
    drift_seq_step_t sq[64];
    int tok[64];
    double t0 = bench_cpu_now();
    for (int i = 0; i < ntok; i++) {
        for (int b = 0; b < B; b++) {
            tok[b] = (int)((1u + 7919u * (unsigned)(i * 64 + b)) % (unsigned)V);
            sq[b] = (drift_seq_step_t){b, i, 1, &tok[b]};
        }
        if (drift_model_step(m, L, sq, B)) die("decode step failed");
    }
    return (bench_cpu_now() - t0) / (ntok * B);
}

int main(int argc, char **argv)
{
    const char *path = DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf", *t_s = NULL, *reps_s = NULL,
               *b_s = NULL;
    const drift_arg_opt_t opts[] = {{"checkpoint", &path, NULL, 0, "FILE"}, {"tokens", &t_s, NULL, 0, "N"},
        {"reps", &reps_s, NULL, 0, "N"}, {"batch", &b_s, NULL, 0, "B,B"}};
    bench_args(opts, 4, NULL, 0, argc, argv,
        "usage: bench_tc_decode [--checkpoint FILE] [--tokens N] [--reps N] [--batch B[,B...]]   (tokens >= 1, default 8; reps 1..1000, default 5; B 1..64, at most 8, default 1,8)");
    int ntok = t_s ? (int)bench_long("--tokens", t_s, 1, 1000000) : 8,
        reps = reps_s ? (int)bench_long("--reps", reps_s, 1, 1000) : 5;
    int batch[8] = {1, 8}, nbatch = 2;
    if (b_s) {
        long b[8];
        nbatch = bench_long_list("--batch", b_s, b, 8, 1, 64);
        for (int k = 0; k < nbatch; k++) batch[k] = (int)b[k];
    }
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    drift_checkpoint_t ck;
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_checkpoint_read(&ck, path, err, sizeof err)) die(err);
    if (ntok > ck.cfg.seq_len) ntok = ck.cfg.seq_len;
    const int V = ck.cfg.vocab_size;
    int bmax = 1;
    for (int k = 0; k < nbatch; k++) bmax = batch[k] > bmax ? batch[k] : bmax;
    double *L = malloc((size_t)V * (size_t)bmax * sizeof(double));
    double *ts = malloc(3 * (size_t)reps * sizeof(double)), *tn = ts + reps, *to = tn + reps;
    if (!L || !ts)
        drift_die_oom(
            (double)V * bmax * sizeof(double), "the logits of a batch of %d x %d (--batch: smaller)", bmax, V);
    printf(
        "bench_tc_decode: %s, bf16 weights, %d steps, %d reps, 1 thread (thread CPU s per token)\n", path, ntok, reps);
    const char *seq = "bf16/seq/fp32/bf16";
    const char *tcs[] = {"bf16/tc:a100/fp32/bf16", "bf16/tc:h100/fp32/bf16", "fp16/tc:h100/fp32/fp16"};
    for (int p = 0; p < DRIFT_NPOLICIES; p++) {
        drift_model_t *ms = make(&ck, seq, (drift_policy_t)p, bmax);
        for (size_t q = 0; q < sizeof tcs / sizeof *tcs; q++) {
            drift_model_t *mt = make(&ck, tcs[q], (drift_policy_t)p, bmax);
            for (int k = 0; k < nbatch; k++) {
                for (int rep = 0; rep < reps; rep++) {
                    ts[rep] = decode(ms, L, batch[k], ntok, V);
                    unsetenv("DRIFT_TC_NO_FLOATB");
                    tn[rep] = decode(mt, L, batch[k], ntok, V);
                    setenv("DRIFT_TC_NO_FLOATB", "1", 1);
                    to[rep] = decode(mt, L, batch[k], ntok, V);
                    unsetenv("DRIFT_TC_NO_FLOATB");
                }
                bench_stat_t rn = bench_ratio(tn, ts, reps), ro = bench_ratio(to, ts, reps);
                bench_stat_t s = bench_stat(ts, reps), n = bench_stat(tn, reps), o = bench_stat(to, reps);
                printf("%-15s B=%-2d %-24s seq %.4f/%.4f  tc %.4f/%.4f (%.2fx/%.2fx)  old tc %.4f/%.4f (%.2fx/%.2fx)\n",
                    drift_policy_name((drift_policy_t)p), batch[k], tcs[q], s.min, s.med, n.min, n.med, rn.min, rn.med,
                    o.min, o.med, ro.min, ro.med);
                fflush(stdout);
            }
            drift_model_free(mt);
        }
        drift_model_free(ms);
    }
    printf("columns: min/median s per token; (x): tc/seq per repetition, min/median; goal tc/seq <= 1.5-2x\n");
    free(L), free(ts);
    drift_checkpoint_free(&ck);
    return 0;
}
