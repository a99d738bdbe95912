/* bench/forward.c — what the lab's decoder costs against a plain forward pass.
 *
 * On the same checkpoint (default models/stories260K.bin) and the same token sequence (BOS
 * then the fp32 greedy text, --tokens long), in one run, it times a whole teacher-forced pass
 * (one forward step per token, KV cache growing) of:
 *   - plain: a straightforward float forward pass written here (llama2.c's loops);
 *   - lab fp32: drift_model_score with the fp32/seq/fp32/fp32 recipe (every matmul through
 *     drift_gemm with the policy's kernel, every attention dot in the lab's orders);
 *   - lab bf16 tc: the bf16/tc:h100/fp32/bf16 recipe (the tensor-core model).
 * and prints  lab_fp32/plain = X.XXx (goal <= 1.5x, issue 11)  and  bf16_tc/fp32 = X.XXx.
 * Times are thread CPU time, one OpenMP thread, the minimum and median over --reps runs,
 * interleaved so that a noisy neighbour slows every side alike.
 *
 * usage: bench_forward [--checkpoint FILE] [--tokens N] [--reps N] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "checkpoint.h"
#include "drift.h"
#include "model.h"

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

static void rmsnorm(float *o, const float *x, const float *w, int n)
{
    float ss = 0;
    for (int j = 0; j < n; j++) ss += x[j] * x[j];
    ss = 1.0f / sqrtf(ss / n + 1e-5f);
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
        float *kc = p->kc + ((size_t)l * S + (size_t)pos) * (size_t)kvd, *vc = p->vc + ((size_t)l * S + (size_t)pos) * (size_t)kvd;
        matmul(p->q, p->xb, ck->wq + (size_t)l * d * d, d, d);
        matmul(kc, p->xb, ck->wk + (size_t)l * kvd * d, d, kvd);
        matmul(vc, p->xb, ck->wv + (size_t)l * kvd * d, d, kvd);
        for (int i = 0; i < d; i += 2) {
            float freq = 1.0f / powf(10000.0f, (i % hs) / (float)hs), val = pos * freq;
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

int main(int argc, char **argv)
{
    const char *path = DRIFT_SOURCE_DIR "/models/stories260K.bin";
    int ntok = 128, reps = 5;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) die("every option takes a value: --checkpoint FILE, --tokens N, --reps N");
        if (!strcmp(argv[i], "--checkpoint")) path = argv[++i];
        else if (!strcmp(argv[i], "--tokens")) ntok = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else die("unknown option (accepted: --checkpoint FILE, --tokens N, --reps N)");
    }
    if (ntok < 1 || reps < 1 || reps > 1000) die("--tokens and --reps must be positive (reps <= 1000)");
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    drift_checkpoint_t ck;
    char err[DRIFT_LLM_ERR_MAX];
    if (drift_checkpoint_read(&ck, path, err, sizeof err)) die(err);
    const drift_llm_config_t *c = &ck.cfg;
    if (ntok > c->seq_len) ntok = c->seq_len;
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
    drift_model_recipe_parse(&r, "bf16/tc:h100/fp32/bf16");
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
    drift_model_free(mf), drift_model_free(mb);
    free(L), free(tok), free(p.x), free(p.xb), free(p.xb2), free(p.q), free(p.hb), free(p.hb2), free(p.att);
    free(p.logits), free(p.kc), free(p.vc);
    for (int k = 0; k < 3; k++) free(t[k]);
    drift_checkpoint_free(&ck);
    return 0;
}
