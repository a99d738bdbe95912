/* bench/round.c — what does rounding an array cost, per format and mode?
 *
 * On n = 10^4 (in L1/L2: the arithmetic) and 10^6 doubles (in L3: mostly memory traffic)
 * (normal with sigma 1 times 2^[-8, 8), Philox seed 1: every format sees normal and, for
 * fp8, subnormal and overflowing values), times
 *   per_element  drift_round called on each element (what callers did before);
 *   array        drift_round_array (the bulk path; bit-identical, checked here);
 *   cpfloat      cpfloat() with the same format, mode and subnormals (only when built with
 *                -DDRIFT_CPFLOAT_DIR=<cpfloat/src>; skipped with a message otherwise), its
 *                one-thread version: cpfloat() itself splits the array over OpenMP threads
 *                when built with OpenMP, and the bench times this thread's CPU only.
 * Thread CPU time, interleaved rounds; prints array/per_element and array/cpfloat as min
 * and median. Goal: array/cpfloat <= 1 in RNE and RZ for every format.
 *
 * Usage: bench_round [ROUNDS]   (default 9) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "bench_util.h"
#include "format.h"
#include "philox.h"
#ifdef DRIFT_HAVE_CPFLOAT
#include "cpfloat_binary64.h"
#endif

#define N 1000000

/* Each timer rounds x[0..n) `inner` times and returns the CPU time of one pass. */
static double per_element(double *y, const double *x, size_t n, long inner, const drift_round_array_opts_t *o)
{
    drift_round_opts_t so = {o->mode, 0, 0};
    double t0 = bench_cpu_now();
    for (long k = 0; k < inner; k++)
        for (size_t i = 0; i < n; i++) y[i] = drift_round(x[i], o->format, &so, 0);
    return (bench_cpu_now() - t0) / (double)inner;
}

static double array(double *y, const double *x, size_t n, long inner, const drift_round_array_opts_t *o)
{
    double t0 = bench_cpu_now();
    for (long k = 0; k < inner; k++)
        if (drift_round_array(y, x, n, o) != 0) abort();
    return (bench_cpu_now() - t0) / (double)inner;
}

#ifdef DRIFT_HAVE_CPFLOAT
static optstruct *cp_opts(drift_format_t f, drift_mode_t m)
{
    const drift_format_info_t *fi = drift_format_info(f);
    optstruct *o = init_optstruct();
    strcpy(o->format, "custom");
    o->precision = fi->p;
    o->emin = fi->emin;
    o->emax = fi->emax;
    o->explim = CPFLOAT_EXPRANGE_TARG;
    o->infinity = fi->has_inf ? CPFLOAT_INF_USE : CPFLOAT_INF_NO;
    o->round = m == DRIFT_RNE ? CPFLOAT_RND_NE : CPFLOAT_RND_TZ;
    o->saturation = CPFLOAT_SAT_NO;
    o->subnormal = CPFLOAT_SUBN_USE;
    o->flip = CPFLOAT_SOFTERR_NO;
    o->p = 0;
    if (cpfloat_validate_optstruct(o) < 0) abort();
    return o;
}

static double cp(double *y, const double *x, size_t n, long inner, optstruct *o)
{
    double t0 = bench_cpu_now();
    for (long k = 0; k < inner; k++)
#ifdef _OPENMP
        cpfloat_sequential(y, x, n, o);
#else
        cpfloat(y, x, n, o);
#endif
    return (bench_cpu_now() - t0) / (double)inner;
}
#endif

int main(int argc, char **argv)
{
    const char *pos[1];
    int np = bench_args(NULL, 0, pos, 1, argc, argv, "usage: bench_round [ROUNDS]   (1..1000, default 9)");
    int rounds = np ? (int)bench_long("ROUNDS", pos[0], 1, 1000) : 9;
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
    if (!x || !y || !z) {
        fprintf(stderr, "bench_round: out of memory\n");
        return 2;
    }
    drift_stream_t s;
    drift_stream_init(&s, 1, drift_fnv1a32("bench_round"), 0, 0);
    for (size_t i = 0; i < N; i++) x[i] = ldexp(drift_stream_normal(&s), (int)(drift_stream_u32(&s) % 16) - 8);

    printf("round: n doubles, N(0,1) * 2^[-8,8) (philox seed 1), thread CPU time, %d interleaved rounds\n", rounds);
#ifndef DRIFT_HAVE_CPFLOAT
    printf("cpfloat: not built (configure with -DDRIFT_CPFLOAT_DIR=<cpfloat/src>): array/cpfloat skipped\n");
#endif
    printf("%-8s %-4s %8s %12s %12s %9s %12s %9s\n", "format", "mode", "n", "array ns/el", "array/per_el", "(median)",
        "array/cpfl", "(median)");
    int bad = 0;
    const drift_format_t fs[] = {DRIFT_FP32, DRIFT_TF32, DRIFT_FP16, DRIFT_BF16, DRIFT_FP8E4M3, DRIFT_FP8E5M2};
    const drift_mode_t ms[] = {DRIFT_RNE, DRIFT_RZ};
    const size_t ns[] = {10000, N};
    for (size_t a = 0; a < sizeof fs / sizeof fs[0]; a++)
        for (size_t b = 0; b < 2; b++)
            for (size_t c = 0; c < 2; c++) {
                size_t n = ns[c];
                long inner = bench_inner(n, 2e6);
                drift_round_array_opts_t o = {fs[a], ms[b], 0, 0, NULL};
                double tp[1000], ta[1000], tc[1000];
#ifdef DRIFT_HAVE_CPFLOAT
                optstruct *co = cp_opts(fs[a], ms[b]);
#endif
                for (int r = 0; r < rounds; r++) {
                    tp[r] = per_element(z, x, n, inner, &o);
                    ta[r] = array(y, x, n, inner, &o);
#ifdef DRIFT_HAVE_CPFLOAT
                    tc[r] = cp(y, x, n, inner, co);
                    if (drift_round_array(y, x, n, &o) != 0) abort(); /* y back to ours for the check */
#else
                    tc[r] = 1;
#endif
                }
                for (size_t i = 0; i < n; i++)
                    if (memcmp(&y[i], &z[i], sizeof y[i]) && !(isnan(y[i]) && isnan(z[i]))) bad = 1;
                bench_stat_t sp = bench_stat(tp, rounds), sa = bench_stat(ta, rounds), sc = bench_stat(tc, rounds);
                printf("%-8s %-4s %8zu %12.2f %12.2f %9.2f", drift_format_name(fs[a]), drift_mode_name(ms[b]), n,
                    1e9 * sa.min / (double)n, sa.min / sp.min, sa.med / sp.med);
#ifdef DRIFT_HAVE_CPFLOAT
                printf(" %12.2f %9.2f\n", sa.min / sc.min, sa.med / sc.med);
                free_optstruct(co);
#else
                (void)sc;
                printf(" %12s %9s\n", "-", "-");
#endif
            }
    printf("array == per-element bit for bit: %s\n", bad ? "NO" : "yes");
    free(x);
    free(y);
    free(z);
    return bad;
}
