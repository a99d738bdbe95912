// attention.cu — attention on the GPU, the twin of drift_attention's float path for the subset
// documented in drift_cuda_attention.h. Layout after llm.c dev/cuda: the CPU reference is
// drift_attention itself (lib/ops/attention.c); device arithmetic (one fp32 operation per
// step, the correctly rounded exp / log with their guard) feeding the row functions of
// attention_rows.h (shared with the host check of their logic in tests/test_cuda_args.c);
// kernel 1 (one thread per row) for standard, flash and split-KV; the launcher, the dispatcher
// over versions, and the host entry point (which recomputes a call on the host when some
// exponential was not decided).
#include "drift_cuda_attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_try.h"

// ---- device arithmetic (attention_rows.h's contract) ----------------------------------------

// The correctly rounded fp32 exp(t) (drift_kexpf): CUDA's double exp is within 1 ulp, so the
// exact value lies in y +- 2 ulp(double); when both ends round to the same float so does
// every value between. Otherwise *hard is set and the host decides the call.
static __device__ float attn_exp_cr(float t, int *hard)
{
    if (isnan(t)) return t;
    if (t < -200.0f) return 0.0f; // below half the smallest fp32 subnormal (and -inf -> 0)
    if (t > 200.0f) return INFINITY;
    double y = exp((double)t);
    long long yb = __double_as_longlong(y);
    float rl = __double2float_rn(__longlong_as_double(yb - 2)), rh = __double2float_rn(__longlong_as_double(yb + 2));
    if (rl != rh) *hard = 1;
    return rl;
}

// The correctly rounded fp32 log(t) of a positive finite float (drift_klog(t, fp32)): log is
// 0 exactly at 1 only; elsewhere y is a nonzero normal double and the same guard holds (for a
// negative y the two neighbours swap, which the comparison does not mind). The row sums it
// takes are >= 1 (the max key contributes exp(0) = 1); anything else goes to the host.
static __device__ float attn_log_cr(float t, int *hard)
{
    if (t == 1.0f) return 0.0f;
    if (!(t > 0.0f) || isinf(t)) {
        *hard = 1;
        return NAN;
    }
    double y = log((double)t);
    long long yb = __double_as_longlong(y);
    float rl = __double2float_rn(__longlong_as_double(yb - 2)), rh = __double2float_rn(__longlong_as_double(yb + 2));
    if (rl != rh) *hard = 1;
    return rl;
}

// RNE to fp32, bf16 or fp16 (the formats drift_cuda_check_attention lets the device round to).
static __device__ float attn_round(float x, drift_format_t f)
{
    if (f == DRIFT_BF16) return __bfloat162float(__float2bfloat16_rn(x));
    if (f == DRIFT_FP16) return __half2float(__float2half_rn(x));
    return x;
}

#define ATTN_FN static __device__
#define attn_mul __fmul_rn
#define attn_add __fadd_rn
#define attn_sub __fsub_rn
#define attn_div __fdiv_rn
#define attn_fma __fmaf_rn
#include "attention_rows.h"

// ---- kernel 1: one thread per (query, head) row ------------------------------------------

__global__ void attention_rows1(attn_args_t a)
{
    size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < a.rows) attn_row(&a, r);
}

// ---- launcher and dispatcher ---------------------------------------------------------------

static int launch_attention(int version, const attn_args_t &a, unsigned threads)
{
    int rc = 0;
    unsigned blocks = (unsigned)((a.rows + threads - 1) / threads);
    switch (version) {
    case 1: LAUNCH_TRY(attention_rows1<<<blocks, threads>>>(a)); break;
    default:
        return drift_cuda_fail(
            DRIFT_EINVAL, "attention: kernel version %d (accepted: 1..%d)", version, DRIFT_CUDA_ATTENTION_KERNELS);
    }
    CUDA_TRY(cudaDeviceSynchronize());
done:
    return rc;
}

// ---- host entry point -----------------------------------------------------------------------

extern "C" int drift_cuda_attention(double *out, const double *q, size_t nq, size_t q_pos, const drift_kv_cache_t *kv,
    const unsigned char *key_mask, const drift_attn_opts_t *o, int version, size_t *host_calls)
{
    int rc = drift_cuda_check_attention(out, q, nq, q_pos, kv, key_mask, o);
    if (rc) return rc;
    if (host_calls) *host_calls = 0;
    if (version == 0) version = 1;
    if (version < 1 || version > DRIFT_CUDA_ATTENTION_KERNELS)
        return drift_cuda_fail(
            DRIFT_EINVAL, "attention: kernel version %d (accepted: 1..%d)", version, DRIFT_CUDA_ATTENTION_KERNELS);
    if (drift_cuda_device_count() == 0) return DRIFT_EUNSUPPORTED;
    if (nq == 0) return 0;
    attn_args_t a;
    float *hq = NULL, *hk = NULL, *hv = NULL, *hres = NULL;
    int *hh = NULL;
    float *dq = NULL, *dk = NULL, *dv = NULL, *dres = NULL, *dscr = NULL;
    int *dh = NULL;
    unsigned char *dmask = NULL;
    int any_hard = 0;
    size_t nkv = 0, nqv = 0;
    unsigned threads = 128;
    if (attn_stage(&a, &hq, &hk, &hv, q, nq, q_pos, kv, o)) FAIL_TO_DONE(DRIFT_ENOMEM, "attention: out of host memory");
    nkv = (size_t)o->kv_heads * a.Lpad * a.d, nqv = a.rows * a.d;
    hres = (float *)malloc(nqv * sizeof(float));
    hh = (int *)malloc(a.rows * sizeof(int));
    if (!hres || !hh) FAIL_TO_DONE(DRIFT_ENOMEM, "attention: out of host memory");
    if (o->kernel.kind == DRIFT_ATTN_FLASH) threads = (unsigned)(o->kernel.br > 256 ? 256 : o->kernel.br);
    CUDA_TRY(cudaMalloc(&dq, nqv * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dk, nkv * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dv, nkv * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dres, nqv * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dscr, a.rows * a.per_row * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dh, a.rows * sizeof(int)));
    CUDA_TRY(cudaMemcpy(dq, hq, nqv * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(dk, hk, nkv * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(dv, hv, nkv * sizeof(float), cudaMemcpyHostToDevice));
    if (key_mask && a.L) {
        CUDA_TRY(cudaMalloc(&dmask, a.L));
        CUDA_TRY(cudaMemcpy(dmask, key_mask, a.L, cudaMemcpyHostToDevice));
    }
    a.res = dres;
    a.hard = dh;
    a.scratch = dscr;
    a.q = dq;
    a.K = dk;
    a.V = dv;
    a.mask = dmask;
    if ((rc = launch_attention(version, a, threads))) goto done;
    CUDA_TRY(cudaMemcpy(hres, dres, nqv * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_TRY(cudaMemcpy(hh, dh, a.rows * sizeof(int), cudaMemcpyDeviceToHost));
    for (size_t r = 0; r < a.rows; r++) any_hard |= hh[r];
    if (any_hard) { // an exp or log the device could not decide: the CPU twin decides the call
        char err[DRIFT_ERRMSG_MAX];
        if ((rc = drift_attention(out, q, nq, q_pos, kv, key_mask, o, err, sizeof err))) FAIL_TO_DONE(rc, "%s", err);
        if (host_calls) ++*host_calls;
    } else {
        for (size_t i = 0; i < nqv; i++)
            out[i] = o->pv.out == DRIFT_FP64 ? (double)hres[i] : drift_rne(hres[i], o->pv.out);
    }
done:
    free(hq), free(hk), free(hv), free(hres), free(hh);
    if (dq) cudaFree(dq);
    if (dk) cudaFree(dk);
    if (dv) cudaFree(dv);
    if (dres) cudaFree(dres);
    if (dscr) cudaFree(dscr);
    if (dh) cudaFree(dh);
    if (dmask) cudaFree(dmask);
    return rc;
}
