/* bench/orders.c — do the memory-bound orders stay linear in n?
 *
 * Sums of n fp32 values (normal, Philox seed 1) with an fp32 accumulator (round to nearest
 * even) under seq, warp:32 and random:1 at n = 2^16, 2^20 and 2^24 (2^24 doubles are 128 MiB:
 * far beyond the cache). Prints ns per term for each order and the per-round ratio
 * order/seq as min and median of thread CPU time over interleaved rounds. Goal:
 * warp:W and random:SEED linear up to 2^24, i.e. the ratio to seq does not grow with n.
 *
 * Usage: bench_orders [ROUNDS] [LOG2_MAX_N]   (defaults 5 and 24) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "order.h"
#include "philox.h"
#include "cli.h"

#define MAXR 64

static double timed_sum(double *out, const double *x, size_t n, const drift_order_t *o, long inner)
{
    drift_acc_t acc = {DRIFT_FP32, DRIFT_RNE, 1};
    double t0 = bench_cpu_now();
    for (long k = 0; k < inner; k++)
        if (drift_sum(out, x, n, o, &acc) != 0) abort();
    return (bench_cpu_now() - t0) / (double)inner;
}

int main(int argc, char **argv)
{
    const char *pos[2];
    char usage[128];
    snprintf(usage, sizeof usage,
        "usage: bench_orders [ROUNDS [LOG2_MAX_N]]   (ROUNDS 1..%d, default 5; LOG2_MAX_N 16..26, default 24)", MAXR);
    int np = bench_args(NULL, 0, pos, 2, argc, argv, usage);
    int rounds = np > 0 ? (int)bench_long("ROUNDS", pos[0], 1, MAXR) : 5,
        lmax = np > 1 ? (int)bench_long("LOG2_MAX_N", pos[1], 16, 26) : 24;
    const char *specs[] = {"seq", "warp:32", "random:1"};
    enum { NO = 3 };
    drift_order_t ord[NO];
    for (int k = 0; k < NO; k++)
        if (drift_order_parse(&ord[k], specs[k]) != 0) abort();
    size_t nmax = (size_t)1 << lmax;
    double *x = malloc(nmax * sizeof *x);
    if (!x) return 1;
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("bench.orders"), 0, 0);
    for (size_t i = 0; i < nmax; i++) x[i] = (double)(float)drift_stream_normal(&s);
    printf("fp32 sums, acc fp32 RNE, %d interleaved rounds, thread CPU time\n", rounds);
    printf("%-6s %-10s %12s %12s %14s %14s\n", "n", "order", "ns/term min", "ns/term med", "/seq min", "/seq med");
    for (int l = 16; l <= lmax; l += 4) {
        size_t n = (size_t)1 << l;
        long inner = bench_inner(n, 4e6);
        double t[NO][MAXR], v;
        for (int r = 0; r < rounds; r++)
            for (int k = 0; k < NO; k++) t[k][r] = timed_sum(&v, x, n, &ord[k], inner);
        for (int k = 0; k < NO; k++) {
            bench_stat_t q = bench_ratio(t[k], t[0], rounds);
            double c[MAXR];
            for (int r = 0; r < rounds; r++) c[r] = t[k][r];
            bench_stat_t a = bench_stat(c, rounds);
            printf("2^%-4d %-10s %12.2f %12.2f %14.2f %14.2f\n", l, specs[k], 1e9 * a.min / (double)n,
                1e9 * a.med / (double)n, q.min, q.med);
        }
    }
    free(x);
    return 0;
}
