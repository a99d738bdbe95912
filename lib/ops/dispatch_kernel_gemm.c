/* dispatch_kernel_gemm.c — a recipe's GEMM under a kernel a policy chose (dispatch.h): the
 * decoder's matmuls. The one place besides dispatch.c that knows the tensor-core case. */
#include "dispatch.h"

#include <string.h>

#include "backend.h"
#include "drift.h"
#include "format.h"
#include "tc_model.h"

/* The tensor-core model on B as it lies in floats when that path takes the case, else on
 * the doubles (tc_model.h: both give the model's bits). */
static int tc_gemm(double *C, const double *A, const double *B, const float *Bf, int bf_valid, size_t M, size_t N,
    size_t K, drift_tc_arch_t arch, drift_format_t in, drift_format_t acc)
{
    int done = 0;
    if (Bf) {
        int rc = drift_tc_gemm_floatb(C, A, Bf, M, N, K, arch, in, acc, bf_valid, &done);
        if (rc || done) return rc;
    }
    return drift_tc_gemm(C, A, B, M, N, K, 0, arch, in, acc);
}

int drift_dispatch_gemm_b_valid(const float *Bf, size_t n, const drift_recipe_t *r)
{
    if (!Bf || !r || r->exact || !drift_order_tc_arch(NULL, &r->order)) return 0;
    return drift_tc_floatb_valid(Bf, n, r->in) == 1;
}

int drift_dispatch_kernel_gemm(double *C, const double *A, const double *B, const float *Bf, size_t M, size_t N,
    size_t K, const drift_recipe_t *r, const drift_gemm_kernel_t *kern, drift_format_t out, double *scratch_a,
    double *scratch_c)
{
    return drift_dispatch_kernel_gemm_b(C, A, B, Bf, 0, M, N, K, r, kern, out, scratch_a, scratch_c);
}

int drift_dispatch_kernel_gemm_b(double *C, const double *A, const double *B, const float *Bf, int bf_valid, size_t M,
    size_t N, size_t K, const drift_recipe_t *r, const drift_gemm_kernel_t *kern, drift_format_t out, double *scratch_a,
    double *scratch_c)
{
    if (!C || !A || !B || !r || !kern || !scratch_a || !scratch_c || r->exact) return DRIFT_EINVAL;
    drift_tc_arch_t arch;
    int tc = drift_order_tc_arch(&arch, &r->order);
    drift_format_t in = r->in, acc = r->acc.acc;
    int rc;
    if (!tc && drift_backend_active()) { /* checked against drift_gemm (= the float path) */
        drift_gemm_opts_t o = drift_gemm_opts(in, acc);
        o.out = out;
        return drift_dispatch_gemm(C, A, B, M, N, K, kern, &o);
    }
    if (!tc && Bf && acc == DRIFT_FP32 && in != DRIFT_FP64 && kern->family == DRIFT_GEMM_TILED) {
        /* a tiled kernel is seq over k (gemm.h): the same chain in fp32 registers */
        float *Af = (float *)scratch_a, *Cf = (float *)scratch_c;
        for (size_t i = 0; i < M * K; i++) Af[i] = (float)drift_rne(A[i], in);
        rc = drift_seq_gemm_f32(Cf, Af, Bf, M, N, K);
        for (size_t i = 0; i < M * N && !rc; i++) C[i] = out == DRIFT_FP32 ? (double)Cf[i] : drift_rne(Cf[i], out);
        return rc;
    }
    if (!tc && Bf && acc == DRIFT_FP32 && in != DRIFT_FP64 && kern->family == DRIFT_GEMM_SPLITK && !kern->tree &&
        K > 0) {
        /* split-K (gemm_splitk.c): each chunk of ceil(K/S) is a tiled chain from its own first
         * product, the chunks added in fp32 in order; the same in fp32 registers, B's rows of a
         * chunk being contiguous. scratch_c: the result, one chunk's partial, A's chunk. */
        float *Af = (float *)scratch_a, *Cf = (float *)scratch_c, *Pf = Cf + M * N, *As = Pf + M * N;
        for (size_t i = 0; i < M * K; i++) Af[i] = (float)drift_rne(A[i], in);
        size_t S = (size_t)kern->splits, chunk = (K + S - 1) / S;
        rc = 0;
        for (size_t k0 = 0; k0 < K && !rc; k0 += chunk) {
            size_t ks = k0 + chunk < K ? chunk : K - k0;
            for (size_t i = 0; i < M; i++) memcpy(As + i * ks, Af + i * K + k0, ks * sizeof(float));
            rc = drift_seq_gemm_f32(k0 ? Pf : Cf, As, Bf + k0 * N, M, N, ks);
            if (k0)
                for (size_t t = 0; t < M * N; t++) Cf[t] = Cf[t] + Pf[t];
        }
        for (size_t i = 0; i < M * N && !rc; i++) C[i] = out == DRIFT_FP32 ? (double)Cf[i] : drift_rne(Cf[i], out);
        return rc;
    }
    if (!tc) {
        drift_gemm_opts_t o = drift_gemm_opts(in, acc);
        o.out = out;
        return drift_gemm(C, A, B, M, N, K, kern, &o);
    }
    /* tensor cores: inputs must be values of `in` */
    double *Ar = scratch_a;
    for (size_t i = 0; i < M * K; i++) Ar[i] = drift_rne(A[i], in);
    size_t S = kern->family == DRIFT_GEMM_SPLITK ? (size_t)kern->splits : 1;
    size_t Ls = (K + S - 1) / S;
    rc = 0;
    if (S == 1 || Ls >= K) {
        rc = tc_gemm(C, Ar, B, Bf, bf_valid, M, N, K, arch, in, acc);
    } else {
        /* split-K: the model on each slice, slices added in the accumulator (RNE) in order */
        double *As = scratch_c, *Ps = scratch_c + M * Ls;
        for (size_t k0 = 0; k0 < K && !rc; k0 += Ls) {
            size_t ks = k0 + Ls > K ? K - k0 : Ls;
            for (size_t i = 0; i < M; i++) memcpy(As + i * ks, Ar + i * K + k0, ks * sizeof(double));
            rc = tc_gemm(k0 ? Ps : C, As, B + k0 * N, Bf ? Bf + k0 * N : NULL, bf_valid, M, N, ks, arch, in, acc);
            if (k0)
                for (size_t i = 0; i < M * N; i++) C[i] = drift_add(C[i], Ps[i], acc, DRIFT_RNE);
        }
    }
    if (!rc && out != acc)
        for (size_t i = 0; i < M * N; i++) C[i] = drift_rne(C[i], out);
    return rc;
}
