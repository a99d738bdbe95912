/* bench/argmax.c — what does one realistic argmax_flip row cost, with the tighter first pruning
 * stage against the global one, per hidden size K?
 *
 * The experiment's realistic head (V = 32000 tokens, weights N(0, 1/K) from drift_gen_head,
 * hidden states with outlier channels, seed 1) and its kernel sets (every default order with
 * fp32 accumulation, logits in the format, the exact dot, the GEMM policies' picks; own-format
 * accumulation left out as in the experiment). Per row and input format, interleaved:
 *   new  drift_lmhead_eval_pruned_head with the split channels and residual norms (the
 *        experiment's call);
 *   old  the same with stage1_global = 1 (one radius from Cauchy-Schwarz and the worst-case
 *        input rounding for every token).
 * Both give the same outcome (checked here: exact top-2 and every kernel's top-2); they differ in
 * the stage-1 survivors (printed: mean per row) and the time. Thread CPU time, one thread,
 * per-row samples: min and median of old/new, and the approximate pass's cost per row (one call
 * on 128 rows, as the experiment makes it; shared by both stages, linear in V K) for scale.
 *
 * Usage: bench_argmax [ROWS [K,K,...]]   (default 8 rows; K = 1024,4096,8192; 16384 needs 2 GiB) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "argmax_kernels.h"
#include "bench_util.h"
#include "drift.h"
#include "gen_logits.h"
#include "lmhead.h"
#include "philox.h"
#include "policy.h"
#include "cli.h"

enum { V = 32000 }; /* the experiment's vocabulary */
static const drift_format_t FMTS[] = {DRIFT_BF16, DRIFT_FP16, DRIFT_TF32, DRIFT_FP32};

static int kernels(drift_recipe_t *c, drift_format_t f, size_t K)
{
    static const char *const ORD[] = {"seq", "splitk:16", "pairwise", "warp:32", "tc:h100"};
    drift_order_t o[5];
    for (int i = 0; i < 5; i++)
        if (drift_order_parse(&o[i], ORD[i])) abort();
    drift_device_t dev;
    if (drift_device_lookup(&dev, "h100")) abort();
    static drift_polrow_t pol[DRIFT_AF_NPOL];
    for (int q = 0; q < DRIFT_AF_NPOL; q++)
        if (drift_policy_row(&pol[q], q, V, 8, K, &dev)) abort();
    static drift_kset_t ks;
    int polcfg[DRIFT_AF_NPOL][2];
    if (drift_kset_build(&ks, polcfg, f, o, 5, pol, DRIFT_AF_NPOL, K)) abort();
    int n = 0;
    for (int k = 0; k < ks.n; k++)
        if (ks.k[k].role != DRIFT_ROLE_OWN) c[n++] = ks.k[k].c;
    return n;
}

static int same(const drift_lmhead_result_t *a, const drift_lmhead_result_t *b)
{
    if (a->exact.top1 != b->exact.top1 || a->exact.top2 != b->exact.top2 || a->exact.gap != b->exact.gap) return 0;
    for (int k = 0; k < a->ncfg; k++)
        if (a->computed[k].top1 != b->computed[k].top1 || a->computed[k].top2 != b->computed[k].top2 ||
            a->computed[k].v1 != b->computed[k].v1 || a->n_eval[k] != b->n_eval[k])
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    const char *pos[2];
    int np = bench_args(NULL, 0, pos, 2, argc, argv,
        "usage: bench_argmax [ROWS [K,K,...]]   (ROWS 1..4096, default 8; K 1..16384, at most 8, default 1024,4096,8192; 16384 needs 2 GiB)");
#ifdef _OPENMP
    omp_set_num_threads(1); /* thread CPU time measures the one thread that works */
#endif
    int R = np > 0 ? (int)bench_long("ROWS", pos[0], 1, 4096) : 8;
    size_t Ks[8] = {1024, 4096, 8192};
    int nK = 3;
    if (np > 1) {
        char list[256], *save = NULL;
        if (strlen(pos[1]) >= sizeof list) drift_die("K,K,...: too long (at most 8 sizes)");
        strcpy(list, pos[1]);
        nK = 0;
        if (!*list || list[strlen(list) - 1] == ',' || strstr(list, ",,") || list[0] == ',')
            drift_die("K,K,...: an empty item in '%s'", pos[1]);
        for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (nK == 8) drift_die("K,K,...: at most 8 sizes, found more in '%s'", pos[1]);
            Ks[nK++] = (size_t)bench_long("K", t, 1, 16384);
        }
    }
    printf("argmax_flip realistic rows: V = %d, %d rows per K, thread CPU time, one thread\n", V, R);
    printf("%6s %-5s %12s %12s %11s %11s %11s %11s %13s\n", "K", "fmt", "stage1 old", "stage1 new", "old ms/row",
        "new ms/row", "old/new min", "old/new med", "approx ms/row");
    int bad = 0;
    for (int ki = 0; ki < nK; ki++) {
        size_t K = Ks[ki];
        float *W = malloc((size_t)V * K * sizeof *W);
        double *l1 = malloc(V * sizeof *l1), *l2 = malloc(V * sizeof *l2), *dl2 = malloc(V * sizeof *dl2);
        double *H = malloc((size_t)R * K * sizeof *H), *ap = malloc((size_t)R * V * sizeof *ap);
        float *cols = malloc((size_t)V * DRIFT_LMHEAD_MAXSPLIT * sizeof *cols);
        if (!W || !l1 || !l2 || !dl2 || !H || !ap || !cols) {
            fprintf(stderr, "bench_argmax: out of memory at K = %zu\n", K);
            return 1;
        }
        if (drift_gen_head(NULL, W, l1, l2, V, K, 1, drift_fnv1a32("bench_argmax.W"))) abort();
        drift_stream_t s;
        drift_stream_init(&s, 1, drift_fnv1a32("bench_argmax"), (uint32_t)K, 0);
        drift_hidden_model_t m;
        if (drift_hidden_model(&m, K, &s)) abort();
        for (int r = 0; r < R; r++) drift_gen_hidden(H + (size_t)r * K, &m, &s);
        /* the approximate pass as the experiment calls it: 128 hidden states at once */
        double *H128 = malloc(128 * K * sizeof *H128), *ap128 = malloc(128 * (size_t)V * sizeof *ap128);
        if (!H128 || !ap128) abort();
        for (int r = 0; r < 128; r++) memcpy(H128 + (size_t)r * K, H + (size_t)(r % R) * K, K * sizeof *H);
        double t0 = bench_cpu_now();
        if (drift_lmhead_approx(ap128, H128, 128, W, V, K)) abort();
        double t_ap = (bench_cpu_now() - t0) / 128;
        free(H128);
        free(ap128);
        if (drift_lmhead_approx(ap, H, (size_t)R, W, V, K)) abort();
        size_t M = K / 256 < DRIFT_LMHEAD_MAXSPLIT ? K / 256 : DRIFT_LMHEAD_MAXSPLIT, split[DRIFT_LMHEAD_MAXSPLIT];
        if (drift_lmhead_split_choose(split, M, H, (size_t)R, K) || drift_lmhead_split_cols(cols, W, V, K, split, M))
            abort();
        for (int fi = 0; fi < 4; fi++) {
            drift_recipe_t c[DRIFT_LMHEAD_MAXCFG];
            int nc = kernels(c, FMTS[fi], K);
            if (drift_lmhead_round_norms(dl2, W, V, K, FMTS[fi])) abort();
            drift_lmhead_head_t hn = {.W = W,
                .V = (size_t)V,
                .K = K,
                .row_l1 = l1,
                .row_l2 = l2,
                .row_dl2 = dl2,
                .nsplit = M,
                .split = split,
                .split_cols = cols};
            drift_lmhead_head_t ho = hn;
            ho.stage1_global = 1;
            if (drift_lmhead_head_prepare(&hn)) abort();
            double tn[64], to[64], sn = 0, so = 0;
            int n = R < 64 ? R : 64;
            for (int r = 0; r < n; r++) {
                drift_lmhead_result_t a, b;
                const double *h = H + (size_t)r * K, *apr = ap + (size_t)r * V;
                double t1 = bench_cpu_now();
                if (drift_lmhead_eval_pruned_head(&a, h, &hn, apr, c, nc, NULL)) abort();
                double t2 = bench_cpu_now();
                if (drift_lmhead_eval_pruned_head(&b, h, &ho, apr, c, nc, NULL)) abort();
                double t3 = bench_cpu_now();
                tn[r] = t2 - t1, to[r] = t3 - t2;
                sn += (double)a.n_stage1, so += (double)b.n_stage1;
                if (!same(&a, &b)) {
                    fprintf(
                        stderr, "bench_argmax: K %zu %s row %d: outcomes differ\n", K, drift_format_name(FMTS[fi]), r);
                    bad = 1;
                }
            }
            bench_stat_t q = bench_ratio(to, tn, n), a = bench_stat(tn, n), b = bench_stat(to, n);
            printf("%6zu %-5s %12.2f %12.2f %11.3f %11.3f %11.2f %11.2f %13.3f\n", K, drift_format_name(FMTS[fi]),
                so / n, sn / n, b.med * 1e3, a.med * 1e3, q.min, q.med, t_ap * 1e3);
            fflush(stdout);
        }
        free(W);
        free(l1);
        free(l2);
        free(dl2);
        free(H);
        free(ap);
        free(cols);
    }
    printf("stage1 = mean survivors of the first pruning stage per row; ms/row = median per row and format\n"
           "(the approximate pass, shared by all formats and both stages, is the last column).\n");
    return bad;
}
