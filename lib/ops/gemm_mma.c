/* gemm_mma.c — MMA-built GEMM kernels whose tile size changes the bits (gemm_mma.h). */
#include "gemm_mma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "tc_model.h"

/* ---- specs ---------------------------------------------------------------------------------- */


/* A decimal integer 1 .. DRIFT_MMA_MAX without sign or leading zero; *s advanced past it. */
static int parse_int(int *out, const char **s)
{
    const char *p = *s;
    if (*p < '1' || *p > '9') return DRIFT_EINVAL;
    long v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        if (v > DRIFT_MMA_MAX) return DRIFT_EINVAL;
    }
    *out = (int)v;
    *s = p;
    return DRIFT_OK;
}

static int parse_arch(drift_tc_arch_t *a, const char **s)
{
    for (int i = 0; i < DRIFT_TC_NARCH; i++) { /* the architectures of order.h's tc:ARCH */
        const char *name = drift_tc_arch_name((drift_tc_arch_t)i);
        size_t n = strlen(name);
        if (!strncmp(*s, name, n) && ((*s)[n] == ',' || (*s)[n] == 0)) {
            *a = (drift_tc_arch_t)i;
            *s += n;
            return DRIFT_OK;
        }
    }
    return DRIFT_EINVAL;
}

static int expect_comma(const char **s)
{
    if (**s != ',') return DRIFT_EINVAL;
    (*s)++;
    return DRIFT_OK;
}

int drift_mma_kernel_parse(drift_mma_kernel_t *k, const char *spec)
{
    if (!k || !spec) return DRIFT_EINVAL;
    drift_mma_kernel_t r;
    memset(&r, 0, sizeof r);
    const char *s;
    if (!strncmp(spec, "tc:", 3)) {
        r.family = DRIFT_MMA_TC;
        s = spec + 3;
        if (parse_arch(&r.arch, &s)) return DRIFT_EINVAL;
    } else if (!strncmp(spec, "mma:", 4)) {
        r.family = DRIFT_MMA_TILE;
        s = spec + 4;
        if (parse_arch(&r.arch, &s) || expect_comma(&s) || parse_int(&r.bk, &s)) return DRIFT_EINVAL;
    } else if (!strncmp(spec, "slicedk:", 8)) {
        r.family = DRIFT_MMA_SLICEDK;
        s = spec + 8;
        if (parse_arch(&r.arch, &s) || expect_comma(&s) || parse_int(&r.bk, &s) || expect_comma(&s) ||
            parse_int(&r.slices, &s))
            return DRIFT_EINVAL;
        if (r.bk % r.slices) return DRIFT_EINVAL;
    } else if (!strncmp(spec, "streamk:", 8)) {
        r.family = DRIFT_MMA_STREAMK;
        s = spec + 8;
        if (parse_arch(&r.arch, &s) || expect_comma(&s) || parse_int(&r.bm, &s) || expect_comma(&s) ||
            parse_int(&r.bn, &s) || expect_comma(&s) || parse_int(&r.bk, &s) || expect_comma(&s) ||
            parse_int(&r.workers, &s))
            return DRIFT_EINVAL;
    } else {
        return DRIFT_EINVAL;
    }
    if (*s) return DRIFT_EINVAL;
    *k = r;
    return DRIFT_OK;
}

static int kernel_ok(const drift_mma_kernel_t *k)
{
    if (!k || (unsigned)k->arch >= DRIFT_TC_NARCH) return 0;
    switch (k->family) {
    case DRIFT_MMA_TC: return 1;
    case DRIFT_MMA_TILE: return k->bk >= 1 && k->bk <= DRIFT_MMA_MAX;
    case DRIFT_MMA_SLICEDK:
        return k->bk >= 1 && k->bk <= DRIFT_MMA_MAX && k->slices >= 1 && k->slices <= k->bk && k->bk % k->slices == 0;
    case DRIFT_MMA_STREAMK:
        return k->bk >= 1 && k->bk <= DRIFT_MMA_MAX && k->bm >= 1 && k->bm <= DRIFT_MMA_MAX && k->bn >= 1 &&
               k->bn <= DRIFT_MMA_MAX && k->workers >= 1 && k->workers <= DRIFT_MMA_MAX;
    default: return 0;
    }
}

int drift_mma_kernel_print(char *buf, size_t size, const drift_mma_kernel_t *k)
{
    if (!buf || !kernel_ok(k)) return DRIFT_EINVAL;
    int n;
    const char *a = drift_tc_arch_name(k->arch);
    switch (k->family) {
    case DRIFT_MMA_TC: n = snprintf(buf, size, "tc:%s", a); break;
    case DRIFT_MMA_TILE: n = snprintf(buf, size, "mma:%s,%d", a, k->bk); break;
    case DRIFT_MMA_SLICEDK: n = snprintf(buf, size, "slicedk:%s,%d,%d", a, k->bk, k->slices); break;
    default: n = snprintf(buf, size, "streamk:%s,%d,%d,%d,%d", a, k->bm, k->bn, k->bk, k->workers); break;
    }
    return n < 0 || (size_t)n >= size ? DRIFT_EINVAL : n;
}

/* ---- one output ---------------------------------------------------------------------------- */

static double add32(double x, double y) { return drift_add(x, y, DRIFT_FP32, DRIFT_RNE); }

/* The MMAs over a[lo, hi) chained from c (NULL: zero). */
static int chain(double *out, const double *a, const double *b, size_t lo, size_t hi, const double *c,
    drift_tc_arch_t arch, drift_format_t in)
{
    return drift_tc_dot(out, a + lo, b + lo, hi - lo, c, arch, in, DRIFT_FP32);
}

int drift_mma_dot(double *out, const double *a, const double *b, size_t K, const drift_mma_kernel_t *k,
    drift_format_t in, size_t tile, size_t tiles)
{
    if (!out || (K && (!a || !b)) || !kernel_ok(k)) return DRIFT_EINVAL;
    drift_tc_params_t prm;
    int rc = drift_tc_params(&prm, k->arch, in);
    if (rc) return rc;
    if (K == 0) {
        *out = 0.0;
        return DRIFT_OK;
    }
    size_t BK = (size_t)k->bk;
    switch (k->family) {
    case DRIFT_MMA_TC: return chain(out, a, b, 0, K, NULL, k->arch, in);
    case DRIFT_MMA_TILE: {
        double acc = 0;
        for (size_t lo = 0; lo < K; lo += BK) {
            size_t hi = lo + BK < K ? lo + BK : K;
            double p;
            if ((rc = chain(&p, a, b, lo, hi, NULL, k->arch, in))) return rc;
            acc = lo == 0 ? p : add32(acc, p);
        }
        *out = acc;
        return DRIFT_OK;
    }
    case DRIFT_MMA_SLICEDK: {
        size_t S = (size_t)k->slices, w = BK / S;
        double total = 0;
        for (size_t s = 0; s < S; s++) {
            double acc = 0;
            for (size_t lo = 0; lo < K; lo += BK) {
                size_t a0 = lo + s * w, a1 = a0 + w;
                if (a0 >= K) break;
                if (a1 > K) a1 = K;
                if ((rc = chain(&acc, a, b, a0, a1, &acc, k->arch, in))) return rc;
            }
            total = s == 0 ? acc : add32(total, acc);
        }
        *out = total;
        return DRIFT_OK;
    }
    case DRIFT_MMA_STREAMK: {
        if (tiles == 0 || tile >= tiles) return DRIFT_EINVAL;
        size_t I = (K + BK - 1) / BK, W = (size_t)k->workers;
        size_t run = (tiles * I + W - 1) / W; /* iterations per worker */
        size_t g0 = tile * I, g1 = g0 + I;    /* this tile's global iterations */
        double acc = 0;
        int first = 1;
        for (size_t g = g0; g < g1;) {
            size_t end = (g / run + 1) * run; /* where this worker's run ends */
            if (end > g1) end = g1;
            size_t lo = (g - g0) * BK, hi = (end - g0) * BK;
            if (hi > K) hi = K;
            double p;
            if ((rc = chain(&p, a, b, lo, hi, NULL, k->arch, in))) return rc;
            acc = first ? p : add32(acc, p);
            first = 0;
            g = end;
        }
        *out = acc;
        return DRIFT_OK;
    }
    }
    return DRIFT_EINVAL;
}

int drift_mma_gemm(double *C, const double *A, const double *B, size_t M, size_t N, size_t K,
    const drift_mma_kernel_t *k, drift_format_t in, drift_format_t out)
{
    if (!C || (M && N && K && (!A || !B)) || !kernel_ok(k) || (unsigned)in >= DRIFT_NFORMATS ||
        (unsigned)out >= DRIFT_NFORMATS)
        return DRIFT_EINVAL;
    drift_tc_params_t prm;
    int rc = drift_tc_params(&prm, k->arch, in);
    if (rc) return rc;
    if (M == 0 || N == 0) return DRIFT_OK;
    if (K > ((size_t)-1) / 2 / sizeof(double) || M > ((size_t)-1) / (N ? N : 1) / sizeof(double)) return DRIFT_ENOMEM;
    double *tmp = malloc(M * N * sizeof *tmp);
    if (!tmp) return DRIFT_ENOMEM;
    size_t tm = k->family == DRIFT_MMA_STREAMK ? (M + (size_t)k->bm - 1) / (size_t)k->bm : 1;
    size_t tn = k->family == DRIFT_MMA_STREAMK ? (N + (size_t)k->bn - 1) / (size_t)k->bn : 1;
    int *rowerr = calloc(M, sizeof *rowerr); /* one status per row: threads never share a word */
    if (!rowerr) {
        free(tmp);
        return DRIFT_ENOMEM;
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) if (M * N * K >= ((size_t)1 << 18)) /* DRIFT_PAR_MIN_FMAS_GEN */
#endif
    for (long ii = 0; ii < (long)M; ii++) {
        size_t i = (size_t)ii;
        double *row = malloc((K ? 2 * K : 1) * sizeof *row);
        if (!row) {
            rowerr[i] = DRIFT_ENOMEM;
            continue;
        }
        double *col = row + K;
        for (size_t t = 0; t < K; t++) row[t] = drift_rne(A[i * K + t], in);
        for (size_t j = 0; j < N && !rowerr[i]; j++) {
            for (size_t t = 0; t < K; t++) col[t] = drift_rne(B[t * N + j], in);
            size_t tile = k->family == DRIFT_MMA_STREAMK ? (i / (size_t)k->bm) * tn + j / (size_t)k->bn : 0;
            double v;
            int r = drift_mma_dot(&v, row, col, K, k, in, tile, tm * tn);
            if (r)
                rowerr[i] = r;
            else
                tmp[i * N + j] = drift_rne(v, out);
        }
        free(row);
    }
    int err = 0;
    for (size_t i = 0; i < M; i++)
        if (rowerr[i] && !err) err = rowerr[i];
    free(rowerr);
    if (!err) memcpy(C, tmp, M * N * sizeof *C);
    free(tmp);
    return err;
}

int drift_mma_from_gemm(drift_mma_kernel_t *out, const drift_gemm_kernel_t *k, drift_tc_arch_t arch, size_t K)
{
    if (!out || !k || (unsigned)arch >= DRIFT_TC_NARCH || K == 0) return DRIFT_EINVAL;
    memset(out, 0, sizeof *out);
    out->arch = arch;
    switch (k->family) {
    case DRIFT_GEMM_NAIVE:
    case DRIFT_GEMM_TILED: out->family = DRIFT_MMA_TC; return DRIFT_OK;
    case DRIFT_GEMM_SPLITK: {
        if (k->tree || k->splits < 1) return DRIFT_EUNSUPPORTED;
        size_t chunk = (K + (size_t)k->splits - 1) / (size_t)k->splits;
        if (chunk > DRIFT_MMA_MAX) return DRIFT_EUNSUPPORTED;
        out->family = DRIFT_MMA_TILE;
        out->bk = (int)chunk;
        return DRIFT_OK;
    }
    default: return DRIFT_EUNSUPPORTED;
    }
}
