/* bench/attention.c — what bit-exact attention emulation costs.
 *
 * On the same bf16-valued data (causal prefill, heads H, kv heads G, head_dim d, L tokens),
 * in one run, it times:
 *   - flash:64,64 emulated (drift_attention: bf16 inputs, fp32 RNE fma accumulation, seq
 *     order, correctly rounded expf, P rounded to bf16 before P.V);
 *   - standard emulated (materialised bf16 scores, safe softmax, P.V), the same recipe;
 *   - a plain fp32 C loop on the same values (scores, expf, normalise, P.V; the compiler's
 *     own float code with the project's flags, no emulation);
 * and prints flash/standard and flash/plain. Goal: flash/plain <= 3 for bf16
 * inputs with fp32 accumulation. Each time is the thread CPU time of one call; the three
 * are interleaved per repetition so a noisy neighbour slows all alike; min and median over
 * --reps repetitions. Single thread.
 *
 * usage: bench_attention [--len L] [--heads H] [--kv-heads G] [--dim D] [--reps N] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_util.h"
#include "attention.h"
#include "drift.h"
#include "format.h"
#include "philox.h"
#include "cli.h"

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long parse_pos(const char *s, const char *opt)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1 || v > 100000) {
        fprintf(stderr, "bench_attention: %s: '%s' is not an integer 1..100000\n", opt, s);
        exit(2);
    }
    return v;
}

/* The plain loop: float arithmetic as a straightforward CPU implementation writes it. */
static void plain_attention(
    float *out, const float *q, const float *Kt, const float *V, size_t L, int H, int G, int d, float *S)
{
    float scale = 1.0f / sqrtf((float)d);
    for (size_t i = 0; i < L; i++)
        for (int h = 0; h < H; h++) {
            int g = h / (H / G);
            const float *qi = q + (i * (size_t)H + (size_t)h) * (size_t)d;
            const float *Kg = Kt + (size_t)g * (size_t)d * L;
            size_t n = i + 1;
            for (size_t j = 0; j < n; j++) S[j] = 0;
            for (int c = 0; c < d; c++) {
                float qc = qi[c];
                const float *kr = Kg + (size_t)c * L;
                for (size_t j = 0; j < n; j++) S[j] += qc * kr[j];
            }
            float m = -INFINITY, sum = 0;
            for (size_t j = 0; j < n; j++) {
                S[j] *= scale;
                m = S[j] > m ? S[j] : m;
            }
            for (size_t j = 0; j < n; j++) {
                S[j] = expf(S[j] - m);
                sum += S[j];
            }
            float inv = 1.0f / sum;
            float *o = out + (i * (size_t)H + (size_t)h) * (size_t)d;
            for (int c = 0; c < d; c++) o[c] = 0;
            for (size_t j = 0; j < n; j++) {
                float p = S[j] * inv;
                const float *vr = V + (j * (size_t)G + (size_t)g) * (size_t)d;
                for (int c = 0; c < d; c++) o[c] += p * vr[c];
            }
        }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *len_s = NULL, *heads_s = NULL, *kv_s = NULL, *dim_s = NULL, *reps_s = NULL;
    const drift_arg_opt_t opts[] = {{"len", &len_s, NULL, 0, "L"}, {"heads", &heads_s, NULL, 0, "H"},
        {"kv-heads", &kv_s, NULL, 0, "G"}, {"dim", &dim_s, NULL, 0, "D"}, {"reps", &reps_s, NULL, 0, "N"}};
    bench_args(opts, 5, NULL, 0, argc, argv,
        "usage: bench_attention [--len L] [--heads H] [--kv-heads G] [--dim D] [--reps N]   (each 1..100000; 512, 8, 2, 64, 5)");
    long L = len_s ? parse_pos(len_s, "--len") : 512, H = heads_s ? parse_pos(heads_s, "--heads") : 8;
    long G = kv_s ? parse_pos(kv_s, "--kv-heads") : 2, D = dim_s ? parse_pos(dim_s, "--dim") : 64;
    long reps = reps_s ? parse_pos(reps_s, "--reps") : 5;
#ifdef _OPENMP
    omp_set_num_threads(1); /* thread CPU time measures this thread only */
#endif
    drift_attn_opts_t o = drift_attn_opts((int)H, (int)G, (int)D, DRIFT_BF16);
    char err[DRIFT_ERRMSG_MAX];
    if (drift_attn_validate(&o, err, sizeof err)) {
        fprintf(stderr, "bench_attention: %s\n", err);
        return 2;
    }
    size_t nq = (size_t)L * (size_t)H * (size_t)D, nk = (size_t)L * (size_t)G * (size_t)D;
    double *q = malloc(nq * sizeof *q), *k = malloc(nk * sizeof *k), *v = malloc(nk * sizeof *v);
    double *of = malloc(nq * sizeof *of), *os = malloc(nq * sizeof *os);
    float *qf = malloc(nq * sizeof *qf), *Kt = malloc(nk * sizeof *Kt), *Vf = malloc(nk * sizeof *Vf);
    float *op = malloc(nq * sizeof *op), *S = malloc((size_t)L * sizeof *S);
    if (!q || !k || !v || !of || !os || !qf || !Kt || !Vf || !op || !S) {
        fprintf(stderr, "bench_attention: out of memory\n");
        return 2;
    }
    drift_stream_t st;
    drift_stream_init(&st, 1, 10, 0, 0);
    for (size_t i = 0; i < nq; i++) q[i] = drift_rne(drift_stream_normal(&st), DRIFT_BF16), qf[i] = (float)q[i];
    for (size_t i = 0; i < nk; i++) {
        k[i] = drift_rne(drift_stream_normal(&st), DRIFT_BF16);
        v[i] = drift_rne(drift_stream_normal(&st), DRIFT_BF16);
    }
    for (long j = 0; j < L; j++)
        for (long g = 0; g < G; g++)
            for (long c = 0; c < D; c++) {
                size_t src = ((size_t)j * (size_t)G + (size_t)g) * (size_t)D + (size_t)c;
                Kt[((size_t)g * (size_t)D + (size_t)c) * (size_t)L + (size_t)j] = (float)k[src];
                Vf[src] = (float)v[src];
            }
    drift_kv_format_t kf = {DRIFT_KV_FLOAT, DRIFT_BF16};
    drift_kv_cache_t kv;
    if (drift_kv_init(&kv, (int)G, (int)D, (size_t)L, &kf, err, sizeof err) ||
        drift_kv_append(&kv, k, v, (size_t)L, err, sizeof err)) {
        fprintf(stderr, "bench_attention: %s\n", err);
        return 2;
    }
    drift_attn_opts_t fo = o, so = o;
    if (drift_attn_kernel_parse(&fo.kernel, "flash:64,64", NULL, 0)) abort();
    double *tf = malloc((size_t)reps * sizeof *tf), *ts = malloc((size_t)reps * sizeof *ts),
           *tp = malloc((size_t)reps * sizeof *tp);
    for (long r = 0; r < reps; r++) {
        double t0 = cpu_now();
        if (drift_attention(of, q, (size_t)L, 0, &kv, NULL, &fo, err, sizeof err)) {
            fprintf(stderr, "bench_attention: %s\n", err);
            return 2;
        }
        double t1 = cpu_now();
        if (drift_attention(os, q, (size_t)L, 0, &kv, NULL, &so, err, sizeof err)) {
            fprintf(stderr, "bench_attention: %s\n", err);
            return 2;
        }
        double t2 = cpu_now();
        plain_attention(op, qf, Kt, Vf, (size_t)L, (int)H, (int)G, (int)D, S);
        double t3 = cpu_now();
        tf[r] = t1 - t0, ts[r] = t2 - t1, tp[r] = t3 - t2;
    }
    double maxdiff = 0;
    for (size_t i = 0; i < nq; i++) {
        double dd = fabs(of[i] - (double)op[i]);
        maxdiff = dd > maxdiff ? dd : maxdiff;
    }
    qsort(tf, (size_t)reps, sizeof *tf, cmp);
    qsort(ts, (size_t)reps, sizeof *ts, cmp);
    qsort(tp, (size_t)reps, sizeof *tp, cmp);
    size_t md = (size_t)reps / 2;
    printf(
        "attention prefill, causal: L=%ld heads=%ld kv_heads=%ld head_dim=%ld, bf16 in, fp32 acc (seed 1, %ld reps)\n",
        L, H, G, D, reps);
    printf("%-28s %12s %12s\n", "", "min (ms)", "median (ms)");
    printf("%-28s %12.2f %12.2f\n", "flash:64,64 emulated", 1e3 * tf[0], 1e3 * tf[md]);
    printf("%-28s %12.2f %12.2f\n", "standard emulated", 1e3 * ts[0], 1e3 * ts[md]);
    printf("%-28s %12.2f %12.2f\n", "plain fp32 C loop", 1e3 * tp[0], 1e3 * tp[md]);
    printf("flash/standard = %.2fx (median %.2fx)   flash/plain = %.2fx (median %.2fx; goal <= 3x)\n", tf[0] / ts[0],
        tf[md] / ts[md], tf[0] / tp[0], tf[md] / tp[md]);
    printf(
        "max |flash - plain| = %.3g (bf16 P and bf16 output vs fp32 throughout: a few bf16 ulps of |out|)\n", maxdiff);
    drift_kv_free(&kv);
    free(q), free(k), free(v), free(of), free(os), free(qf), free(Kt), free(Vf), free(op), free(S), free(tf), free(ts),
        free(tp);
    return 0;
}
