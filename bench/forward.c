/* bench/forward.c — what the lab's decoder costs against a plain forward pass.
 *
 * On the same checkpoint (default models/stories260K.bin) and the same token sequence (BOS
 * then the fp32 greedy text, --tokens long), in one run, it times a whole teacher-forced pass
 * (one forward step per token, KV cache growing) of:
 *   - plain: a straightforward float forward pass written here (llama2.c's loops);
 *   - lab fp32: drift_model_score with the fp32/seq/fp32/fp32 recipe (every matmul through
 *     drift_gemm with the policy's kernel, every attention dot in the lab's orders);
 *   - lab bf16 tc: the bf16/tc:h100/fp32/bf16 recipe (the tensor-core model).
 * and prints  lab_fp32/plain = X.XXx (goal <= 1.5x)  and  bf16_tc/fp32 = X.XXx.
 * Times are thread CPU time, one OpenMP thread, the minimum and median over --reps runs,
 * interleaved so that a noisy neighbour slows every side alike.
 *
 * With a GGUF checkpoint (./lab bench forward --checkpoint models/SmolLM2-135M-Instruct.Q4_1.gguf)
 * it adds decode tokens/s of the lab's fp32 recipe and of llamacpp-cpu against llama.cpp's own
 * build (the witness of tools/peers/llamacpp.sh, DRIFT_LLAMACPP_WITNESS or build-peers/), batched
 * decode at 1, 8 and 64 sequences, and the exact reference's cost per token.
 *
 * usage: bench_forward [--checkpoint FILE] [--tokens N] [--reps N] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_util.h"
#include "checkpoint.h"
#include "drift.h"
#include "model.h"
#include "cli.h"

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *msg)
{
    fprintf(stderr, "bench_forward: %s\n", msg);
    exit(2);
}

/* ---- the plain forward pass (float, llama2.c's loops) ------------------------------------------ */
typedef struct {
    const drift_checkpoint_t *ck;
    float *x, *xb, *xb2, *q, *hb, *hb2, *att, *logits, *kc, *vc;
} plain_t;

static void matmul(float *o, const float *x, const float *w, int n, int d)
{
    for (int i = 0; i < d; i++) {
        float s = 0;
        for (int j = 0; j < n; j++) s += w[(size_t)i * (size_t)n + (size_t)j] * x[j];
        o[i] = s;
    }
}

static float plain_eps = 1e-5f, plain_theta = 10000.0f; /* the checkpoint's (main sets them) */

static void rmsnorm(float *o, const float *x, const float *w, int n)
{
    float ss = 0;
    for (int j = 0; j < n; j++) ss += x[j] * x[j];
    ss = 1.0f / sqrtf(ss / n + plain_eps);
    for (int j = 0; j < n; j++) o[j] = w[j] * (ss * x[j]);
}

static void plain_forward(plain_t *p, int token, int pos)
{
    const drift_checkpoint_t *ck = p->ck;
    const drift_llm_config_t *c = &ck->cfg;
    int d = c->dim, hs = d / c->n_heads, kvd = c->n_kv_heads * hs, kvmul = c->n_heads / c->n_kv_heads,
        hd = c->hidden_dim;
    size_t S = (size_t)c->seq_len;
    memcpy(p->x, ck->token_embedding + (size_t)token * (size_t)d, (size_t)d * sizeof(float));
    for (int l = 0; l < c->n_layers; l++) {
        rmsnorm(p->xb, p->x, ck->rms_att + l * d, d);
        float *kc = p->kc + ((size_t)l * S + (size_t)pos) * (size_t)kvd,
              *vc = p->vc + ((size_t)l * S + (size_t)pos) * (size_t)kvd;
        matmul(p->q, p->xb, ck->wq + (size_t)l * d * d, d, d);
        matmul(kc, p->xb, ck->wk + (size_t)l * kvd * d, d, kvd);
        matmul(vc, p->xb, ck->wv + (size_t)l * kvd * d, d, kvd);
        for (int i = 0; i < d; i += 2) {
            float freq = 1.0f / powf(plain_theta, (i % hs) / (float)hs), val = pos * freq;
            float fr = cosf(val), fi = sinf(val);
            for (int w = 0; w < (i < kvd ? 2 : 1); w++) {
                float *v = w ? kc : p->q, a = v[i], b = v[i + 1];
                v[i] = a * fr - b * fi;
                v[i + 1] = a * fi + b * fr;
            }
        }
        for (int h = 0; h < c->n_heads; h++) {
            float *q = p->q + h * hs, mx = -INFINITY, sum = 0;
            for (int t = 0; t <= pos; t++) {
                const float *k = p->kc + ((size_t)l * S + (size_t)t) * (size_t)kvd + (h / kvmul) * hs;
                float s = 0;
                for (int i = 0; i < hs; i++) s += q[i] * k[i];
                p->att[t] = s / sqrtf((float)hs);
                if (p->att[t] > mx) mx = p->att[t];
            }
            for (int t = 0; t <= pos; t++) sum += p->att[t] = expf(p->att[t] - mx);
            float *o = p->xb + h * hs;
            memset(o, 0, (size_t)hs * sizeof(float));
            for (int t = 0; t <= pos; t++) {
                const float *v = p->vc + ((size_t)l * S + (size_t)t) * (size_t)kvd + (h / kvmul) * hs;
                float a = p->att[t] / sum;
                for (int i = 0; i < hs; i++) o[i] += a * v[i];
            }
        }
        matmul(p->xb2, p->xb, ck->wo + (size_t)l * d * d, d, d);
        for (int i = 0; i < d; i++) p->x[i] += p->xb2[i];
        rmsnorm(p->xb, p->x, ck->rms_ffn + l * d, d);
        matmul(p->hb, p->xb, ck->w1 + (size_t)l * hd * d, d, hd);
        matmul(p->hb2, p->xb, ck->w3 + (size_t)l * hd * d, d, hd);
        for (int i = 0; i < hd; i++) p->hb[i] = p->hb[i] * (1.0f / (1.0f + expf(-p->hb[i]))) * p->hb2[i];
        matmul(p->xb, p->hb, ck->w2 + (size_t)l * d * hd, hd, d);
        for (int i = 0; i < d; i++) p->x[i] += p->xb[i];
    }
    rmsnorm(p->x, p->x, ck->rms_final, d);
    matmul(p->logits, p->x, ck->wcls, d, c->vocab_size);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void min_median(double *v, int n, double *mn, double *md)
{
    qsort(v, (size_t)n, sizeof(double), cmp_dbl);
    *mn = v[0], *md = v[n / 2];
}

/* CPU seconds (user + system) of a child command, from getrusage(RUSAGE_CHILDREN). */
static double child_cpu(const char *cmd)
{
    struct rusage a, b;
    getrusage(RUSAGE_CHILDREN, &a);
    if (system(cmd) != 0) return -1;
    getrusage(RUSAGE_CHILDREN, &b);
    return (double)(b.ru_utime.tv_sec - a.ru_utime.tv_sec) + 1e-6 * (double)(b.ru_utime.tv_usec - a.ru_utime.tv_usec) +
           (double)(b.ru_stime.tv_sec - a.ru_stime.tv_sec) + 1e-6 * (double)(b.ru_stime.tv_usec - a.ru_stime.tv_usec);
}

/* A GGUF model: decode tokens/s of the lab's fp32 recipe and of llamacpp-cpu against llama.cpp's
 * own witness build (tools/peers/llamacpp.sh; its per-token cost is the CPU time of a run of
 * 8 + ntok steps minus one of 8, so its start-up cancels), batched decode at 1, 8 and 64
 * sequences, and the exact reference's cost per token. Interleaved rounds, min and median. */
static void gguf_bench(const drift_checkpoint_t *ck, const char *path, const int *tok, int ntok, int reps)
{
    char err[DRIFT_LLM_ERR_MAX];
    const size_t V = (size_t)ck->cfg.vocab_size;
    drift_numerics_t nf = drift_numerics_fp32(), nl = drift_numerics_fp32(), ne = drift_numerics_exact();
    if (drift_numerics_set_recipe(&nl, "llamacpp-cpu")) abort();
    drift_model_t *mf, *ml = NULL, *me;
    if (drift_model_create(&mf, ck, &nf, 64, err, sizeof err) || drift_model_create(&me, ck, &ne, 1, err, sizeof err))
        die(err);
    char lerr[DRIFT_LLM_ERR_MAX] = "";
    if (drift_model_create(&ml, ck, &nl, 1, lerr, sizeof lerr))
        ml = NULL; /* e.g. F32 matrices: the twin models Q4_1/Q8_0 */
    const char *wit = getenv("DRIFT_LLAMACPP_WITNESS");
    char wdef[1024];
    snprintf(wdef, sizeof wdef, "%s/build-peers/llamacpp-avx2/bin/drift-llama-witness", DRIFT_SOURCE_DIR);
    if (!wit) wit = wdef;
    int have_witness = access(wit, X_OK) == 0;
    char pf[] = "/tmp/bench_forward_prompt_XXXXXX";
    int fd = mkstemp(pf);
    if (fd < 0) die("cannot create a prompt file");
    if (write(fd, "Once upon a time\n", 17) != 17) die("cannot write the prompt file");
    close(fd);
    double *L = malloc(V * 64 * sizeof(double)), *tl[4], *tb[3];
    for (int k = 0; k < 4; k++) tl[k] = malloc((size_t)reps * sizeof(double));
    for (int k = 0; k < 3; k++) tb[k] = malloc((size_t)reps * sizeof(double));
    const int B[3] = {1, 8, 64};
    const int nb = ntok < 16 ? ntok : 16; /* batched decode steps */
    for (int rep = 0; rep < reps; rep++) {
        double t0 = cpu_now();
        for (int i = 0; i < ntok; i++) {
            drift_seq_step_t sq = {0, i, 1, &tok[i]};
            if (drift_model_step(mf, L, &sq, 1)) die("lab fp32 decode failed");
        }
        double t1 = cpu_now();
        for (int i = 0; ml && i < ntok; i++) {
            drift_seq_step_t sq = {0, i, 1, &tok[i]};
            if (drift_model_step(ml, L, &sq, 1)) die("llamacpp-cpu decode failed");
        }
        double t2 = cpu_now();
        tl[0][rep] = (t1 - t0) / ntok, tl[1][rep] = (t2 - t1) / ntok;
        tl[2][rep] = -1;
        if (have_witness) {
            char cmd[2048];
            snprintf(cmd, sizeof cmd, "'%s' --model '%s' --threads 1 --tokens %d --out '%s.csv' '%s' >/dev/null 2>&1",
                wit, path, 8, pf, pf);
            double a = child_cpu(cmd);
            snprintf(cmd, sizeof cmd, "'%s' --model '%s' --threads 1 --tokens %d --out '%s.csv' '%s' >/dev/null 2>&1",
                wit, path, 8 + ntok, pf, pf);
            double b = child_cpu(cmd);
            if (a >= 0 && b >= 0) tl[2][rep] = (b - a) / ntok;
        }
        for (int k = 0; k < 3; k++) { /* B sequences decoding side by side: one row each per step */
            drift_seq_step_t sq[64];
            double s0 = cpu_now();
            for (int i = 0; i < nb; i++) {
                for (int b = 0; b < B[k]; b++) sq[b] = (drift_seq_step_t){b, i, 1, &tok[(i + b) % ntok]};
                if (drift_model_step(mf, L, sq, B[k])) die("batched decode failed");
            }
            tb[k][rep] = (cpu_now() - s0) / (nb * B[k]);
        }
        if (rep == 0) { /* the exact reference: once (it does not vary) */
            double e0 = cpu_now();
            for (int i = 0; i < nb; i++) {
                drift_seq_step_t sq = {0, i, 1, &tok[i]};
                if (drift_model_step(me, L, &sq, 1)) die("exact pass failed");
            }
            tl[3][0] = (cpu_now() - e0) / nb;
        }
    }
    double mn[4], md[4], bmn[3], bmd[3];
    for (int k = 0; k < 3; k++) min_median(tl[k], reps, &mn[k], &md[k]);
    mn[3] = md[3] = tl[3][0];
    for (int k = 0; k < 3; k++) min_median(tb[k], reps, &bmn[k], &bmd[k]);
    printf("decode, one token per step, 1 thread (CPU s per token; tokens/s = 1 / that):\n");
    printf("  lab fp32 recipe       min %8.5f  median %8.5f   (%.1f tokens/s)\n", mn[0], md[0], 1 / md[0]);
    if (ml)
        printf("  lab llamacpp-cpu      min %8.5f  median %8.5f   (%.1f tokens/s)\n", mn[1], md[1], 1 / md[1]);
    else
        printf("  lab llamacpp-cpu      skipped: %s\n", lerr);
    if (have_witness)
        printf(
            "  llama.cpp (witness)   min %8.5f  median %8.5f   (%.1f tokens/s; its own build, the weights as stored)\n",
            mn[2], md[2], 1 / md[2]);
    else
        printf("  llama.cpp             skipped: no %s (tools/peers/llamacpp.sh builds it)\n", wit);
    printf("  exact reference       %8.5f s per token (fp64, correctly rounded dots)\n", mn[3]);
    if (have_witness && mn[2] > 0) {
        if (ml)
            printf("llamacpp_cpu/llama.cpp = %.2fx (min) %.2fx (median)   goal <= 3x\n", mn[1] / mn[2], md[1] / md[2]);
        printf(
            "lab_fp32/llama.cpp     = %.2fx (min) %.2fx (median)   goal <= 2x against llama.cpp on F32 weights (%s)\n",
            mn[0] / mn[2], md[0] / md[2], ml ? "these are quantized: run it on an F32 GGUF" : "this file");
    }
    printf("batched decode, lab fp32 (CPU s per token):  1: %.5f   8: %.5f   64: %.5f (medians)\n", bmd[0], bmd[1],
        bmd[2]);
    printf("tokens/s at 64 sequences / at 1 = %.2fx (min) %.2fx (median)   goal >= 8x\n", bmn[0] / bmn[2],
        bmd[0] / bmd[2]);
    char csv[64];
    snprintf(csv, sizeof csv, "%s.csv", pf);
    remove(pf), remove(csv);
    drift_model_free(mf), drift_model_free(ml), drift_model_free(me);
    free(L);
    for (int k = 0; k < 4; k++) free(tl[k]);
    for (int k = 0; k < 3; k++) free(tb[k]);
}

int main(int argc, char **argv)
{
    const char *path = DRIFT_SOURCE_DIR "/models/stories260K.bin", *t_s = NULL, *reps_s = NULL;
    const drift_arg_opt_t opts[] = {
        {"checkpoint", &path, NULL, 0, "FILE"}, {"tokens", &t_s, NULL, 0, "N"}, {"reps", &reps_s, NULL, 0, "N"}};
    bench_args(opts, 3, NULL, 0, argc, argv,
        "usage: bench_forward [--checkpoint FILE] [--tokens N] [--reps N]   (tokens 1..1000000, default 128, at most the model's context; reps 1..1000, default 5)");
    int ntok = t_s ? (int)bench_long("--tokens", t_s, 1, 1000000) : 128,
        reps = reps_s ? (int)bench_long("--reps", reps_s, 1, 1000) : 5;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    drift_checkpoint_t ck;
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_checkpoint_read(&ck, path, err, sizeof err)) die(err);
    const drift_llm_config_t *c = &ck.cfg;
    if (ntok > c->seq_len) ntok = c->seq_len;
    plain_eps = (float)drift_llm_rms_eps(c), plain_theta = (float)drift_llm_rope_theta(c);
    size_t V = (size_t)c->vocab_size, kvd = (size_t)c->n_kv_heads * (size_t)(c->dim / c->n_heads);
    plain_t p = {&ck, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    size_t d = (size_t)c->dim, h = (size_t)c->hidden_dim;
    p.x = malloc(d * 4), p.xb = malloc(d * 4), p.xb2 = malloc(d * 4), p.q = malloc(d * 4);
    p.hb = malloc(h * 4), p.hb2 = malloc(h * 4), p.att = malloc((size_t)c->seq_len * 4), p.logits = malloc(V * 4);
    p.kc = malloc((size_t)c->n_layers * (size_t)c->seq_len * kvd * 4);
    p.vc = malloc((size_t)c->n_layers * (size_t)c->seq_len * kvd * 4);
    /* the token sequence: BOS then the plain pass's own greedy text (BOS ends nothing here) */
    int *tok = malloc((size_t)ntok * sizeof(int));
    tok[0] = 1;
    for (int i = 0; i + 1 < ntok; i++) {
        plain_forward(&p, tok[i], i);
        int b = 0;
        for (size_t v = 1; v < V; v++)
            if (p.logits[v] > p.logits[b]) b = (int)v;
        tok[i + 1] = b;
    }
    drift_numerics_t nf = drift_numerics_fp32(), nb = drift_numerics_fp32();
    drift_recipe_t r;
    if (drift_model_recipe_parse(&r, "bf16/tc:h100/fp32/bf16")) abort();
    drift_numerics_set_mm(&nb, &r);
    drift_model_t *mf, *mb;
    if (drift_model_create(&mf, &ck, &nf, 1, err, sizeof err) || drift_model_create(&mb, &ck, &nb, 1, err, sizeof err))
        die(err);
    double *L = malloc((size_t)ntok * V * sizeof(double));
    double *t[3];
    for (int k = 0; k < 3; k++) t[k] = malloc((size_t)reps * sizeof(double));
    for (int rep = 0; rep < reps; rep++) {
        double t0 = cpu_now();
        for (int i = 0; i < ntok; i++) plain_forward(&p, tok[i], i);
        double t1 = cpu_now();
        if (drift_model_score(mf, L, tok, ntok)) die("lab fp32 forward failed");
        double t2 = cpu_now();
        if (drift_model_score(mb, L, tok, ntok)) die("lab bf16 forward failed");
        double t3 = cpu_now();
        t[0][rep] = t1 - t0, t[1][rep] = t2 - t1, t[2][rep] = t3 - t2;
    }
    double mn[3], md[3];
    for (int k = 0; k < 3; k++) {
        qsort(t[k], (size_t)reps, sizeof(double), cmp_dbl);
        mn[k] = t[k][0], md[k] = t[k][reps / 2];
    }
    printf("bench_forward: %s, %d tokens teacher-forced, %d reps, 1 thread (thread CPU time)\n", path, ntok, reps);
    printf("  plain float loops   min %8.4f s  median %8.4f s\n", mn[0], md[0]);
    printf("  lab fp32 recipe     min %8.4f s  median %8.4f s\n", mn[1], md[1]);
    printf("  lab bf16 tc:h100    min %8.4f s  median %8.4f s\n", mn[2], md[2]);
    printf("lab_fp32/plain = %.2fx (min) %.2fx (median)   goal <= 1.5x\n", mn[1] / mn[0], md[1] / md[0]);
    printf("bf16_tc/fp32   = %.2fx (min) %.2fx (median)\n", mn[2] / mn[1], md[2] / md[1]);
    if (ck.gguf) gguf_bench(&ck, path, tok, ntok, reps);
    drift_model_free(mf), drift_model_free(mb);
    free(L), free(tok), free(p.x), free(p.xb), free(p.xb2), free(p.q), free(p.hb), free(p.hb2), free(p.att);
    free(p.logits), free(p.kc), free(p.vc);
    for (int k = 0; k < 3; k++) free(t[k]);
    drift_checkpoint_free(&ck);
    return 0;
}
