// attention.cu — attention on the GPU, the twin of drift_attention's float path for the subset
// documented in drift_cuda_attention.h. Layout after llm.c dev/cuda: the CPU reference is
// drift_attention itself (lib/ops/attention.c); device arithmetic (its float path, step for
// step); the correctly rounded exp / log with their guard; kernel 1 (one thread per row) for
// standard, flash and split-KV; the launcher, the dispatcher over versions, and the host entry
// point (which recomputes a call on the host when some exponential was not decided).
#include "drift_cuda_attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_try.h"

// ---- device arithmetic ------------------------------------------------------------------

// The correctly rounded fp32 exp(t) (drift_kexpf): CUDA's double exp is within 1 ulp, so the
// exact value lies in y +- 2 ulp(double); when both ends round to the same float so does
// every value between. Otherwise *hard is set and the host decides the call.
static __device__ float attn_expf(float t, int *hard)
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

// The correctly rounded fp32 log(t) of a positive finite float (drift_klog(t, fp32)); log
// is 0 exactly at 1 only; elsewhere y is a nonzero normal double and the same guard holds
// (for a negative y the two neighbours swap, which the comparison does not mind).
static __device__ float attn_logf(float t, int *hard)
{
    if (t == 1.0f) return 0.0f;
    if (!(t > 0.0f) || isinf(t)) return t == 0.0f ? -INFINITY : (isinf(t) ? t : NAN);
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

struct attn_args_t {
    float *res;            // [rows][d]: the float result before the host's rounding to pv.out
    int *hard;             // [rows]
    float *scratch;        // [rows][per_row]
    const float *q;        // [rows][d], rounded to qk.in
    const float *K, *V;    // [G][Lpad][d], rounded to qk.in / pv.in, zero padded
    const unsigned char *mask;
    size_t rows, L, Lpad, d, heads, grp, q_pos, per_row, bc;
    int causal, kind, l_fma;
    long splits, size;
    float scale;           // round_fp32(scale)
    int scale_is_one;      // the double scale was exactly 1 (softmax's load skips the product)
    drift_format_t qk_out, pv_in;
};

static __device__ __forceinline__ bool attn_live(const attn_args_t &a, size_t j, size_t lim)
{
    return j < lim && (!a.mask || a.mask[j]);
}

// q . k in attention.c's scores_f order: the first product rounded, then an fmaf chain.
static __device__ __forceinline__ float attn_score(const float *q, const float *k, size_t d)
{
    float s = __fmul_rn(q[0], k[0]);
    for (size_t c = 1; c < d; c++) s = __fmaf_rn(q[c], k[c], s);
    return s;
}

// flash_rows_fast: tiles [t0, t1) of one row; m, l, O continue.
static __device__ void attn_flash_tiles(const attn_args_t &a, const float *q, const float *K, const float *V, size_t t0,
                                        size_t t1, size_t lim, float *m_io, float *l_io, float *O, float *S, float *pr,
                                        int *hard)
{
    size_t d = a.d, bc = a.bc;
    float m = *m_io, l = *l_io;
    for (size_t t = t0; t < t1; t++) {
        size_t j0 = t * bc;
        float tmax = -INFINITY;
        for (size_t jj = 0; jj < bc; jj++) {
            size_t j = j0 + jj;
            float s = (j < a.L && attn_live(a, j, lim)) ? __fmul_rn(attn_score(q, K + j * d, d), a.scale) : -INFINITY;
            S[jj] = s;
            tmax = s > tmax ? s : tmax;
        }
        if (tmax == -INFINITY) continue; // no live key: the tile is skipped
        float mn = tmax > m ? tmax : m;
        float alpha = m == -INFINITY ? 0.0f : attn_expf(__fsub_rn(m, mn), hard);
        for (size_t jj = 0; jj < bc; jj++) {
            float e = S[jj] == -INFINITY ? 0.0f : attn_expf(__fsub_rn(S[jj], mn), hard);
            S[jj] = e;
            pr[jj] = attn_round(e, a.pv_in);
        }
        float r = S[0];
        for (size_t jj = 1; jj < bc; jj++) r = __fadd_rn(r, S[jj]);
        l = a.l_fma ? __fmaf_rn(l, alpha, r) : __fadd_rn(__fmul_rn(l, alpha), r);
        for (size_t c = 0; c < d; c++) O[c] = __fmul_rn(O[c], alpha);
        for (size_t jj = 0; jj < bc; jj++) {
            const float pj = pr[jj], *vr = V + (j0 + jj) * d;
            for (size_t c = 0; c < d; c++) O[c] = __fmaf_rn(pj, vr[c], O[c]);
        }
        m = mn;
    }
    *m_io = m;
    *l_io = l;
}

// row_standard on the float path: scores rounded to qk.out, the safe softmax of softmax.c
// (scaled on load, max, exp, seq sum), P = round_{pv.in}(e / l), O an fmaf chain from +0.
static __device__ void attn_row_standard(const attn_args_t &a, float *res, const float *q, const float *K, const float *V,
                                         size_t lim, float *S, int *hard)
{
    size_t d = a.d, L = a.L;
    float m = -INFINITY;
    for (size_t j = 0; j < L; j++) {
        float s = attn_live(a, j, lim) ? attn_round(attn_score(q, K + j * d, d), a.qk_out) : -INFINITY;
        if (!a.scale_is_one) s = __fmul_rn(s, a.scale);
        S[j] = s;
        if (s > m || isnan(s)) m = isnan(m) ? m : s; // softmax.c's max_of: a NaN sticks
    }
    for (size_t c = 0; c < d; c++) res[c] = 0.0f;
    if (m == -INFINITY) return; // fully masked
    float l = 0.0f;
    for (size_t j = 0; j < L; j++) {
        float e = S[j] == -INFINITY ? 0.0f : attn_expf(__fsub_rn(S[j], m), hard);
        S[j] = e;
        l = j == 0 ? e : __fadd_rn(l, e);
    }
    if (l == 0.0f) return;
    for (size_t j = 0; j < L; j++) S[j] = attn_round(__fdiv_rn(S[j], l), a.pv_in);
    for (size_t j = 0; j < L; j++) {
        const float pj = S[j], *vr = V + j * d;
        for (size_t c = 0; c < d; c++) res[c] = __fmaf_rn(pj, vr[c], res[c]);
    }
}

// row_flash: one pass over every tile, then O * round(1 / l).
static __device__ void attn_row_flash(const attn_args_t &a, float *res, const float *q, const float *K, const float *V,
                                      size_t lim, float *S, int *hard)
{
    size_t d = a.d, tiles = (a.L + a.bc - 1) / a.bc;
    float *pr = S + a.bc;
    float m = -INFINITY, l = 0.0f;
    for (size_t c = 0; c < d; c++) res[c] = 0.0f;
    attn_flash_tiles(a, q, K, V, 0, tiles, lim, &m, &l, res, S, pr, hard);
    if (l == 0.0f) {
        for (size_t c = 0; c < d; c++) res[c] = 0.0f;
        return;
    }
    float inv = __fdiv_rn(1.0f, l);
    for (size_t c = 0; c < d; c++) res[c] = __fmul_rn(res[c], inv);
}

// row_splitkv: the flash loop per split (O_s normalised, lse_s = m_s + log l_s), then the
// combine: M = max lse, Z = seq sum of exp(lse_s - M), lse = log Z + M, O = fmaf chain of
// exp(lse_s - lse) O_s from +0.
static __device__ void attn_row_splitkv(const attn_args_t &a, float *res, const float *q, const float *K, const float *V,
                                        size_t lim, float *S, int *hard)
{
    size_t d = a.d, tiles = (a.L + a.bc - 1) / a.bc, per;
    if (a.kind == DRIFT_ATTN_SPLITKV_N) per = (tiles + (size_t)a.splits - 1) / (size_t)a.splits;
    else per = (size_t)(a.size / (long)a.bc);
    if (per == 0) per = 1;
    size_t nsplit = (tiles + per - 1) / per;
    float *pr = S + a.bc, *O = pr + a.bc, *lse = O + d, *Os = lse + nsplit;
    for (size_t s = 0; s < nsplit; s++) {
        float m = -INFINITY, l = 0.0f;
        for (size_t c = 0; c < d; c++) O[c] = 0.0f;
        size_t t0 = s * per, t1 = t0 + per < tiles ? t0 + per : tiles;
        attn_flash_tiles(a, q, K, V, t0, t1, lim, &m, &l, O, S, pr, hard);
        if (l == 0.0f) {
            lse[s] = -INFINITY;
            continue;
        }
        float inv = __fdiv_rn(1.0f, l);
        for (size_t c = 0; c < d; c++) Os[s * d + c] = __fmul_rn(O[c], inv);
        lse[s] = __fadd_rn(m, attn_logf(l, hard));
    }
    for (size_t c = 0; c < d; c++) res[c] = 0.0f;
    float M = -INFINITY;
    for (size_t s = 0; s < nsplit; s++) M = lse[s] > M ? lse[s] : M;
    if (M == -INFINITY) return;
    float Z = 0.0f;
    int first = 1;
    for (size_t s = 0; s < nsplit; s++) {
        if (lse[s] == -INFINITY) continue;
        float e = attn_expf(__fsub_rn(lse[s], M), hard);
        Z = first ? e : __fadd_rn(Z, e);
        first = 0;
    }
    float LSE = __fadd_rn(attn_logf(Z, hard), M);
    for (size_t s = 0; s < nsplit; s++) {
        if (lse[s] == -INFINITY) continue;
        float w = attn_expf(__fsub_rn(lse[s], LSE), hard);
        for (size_t c = 0; c < d; c++) res[c] = __fmaf_rn(w, Os[s * d + c], res[c]);
    }
}

// ---- kernel 1: one thread per (query, head) row ------------------------------------------

__global__ void attention_rows1(attn_args_t a)
{
    size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= a.rows) return;
    size_t i = r / a.heads, h = r % a.heads, g = h / a.grp;
    size_t lim = a.causal ? a.q_pos + i + 1 : a.L;
    const float *q = a.q + r * a.d, *K = a.K + g * a.Lpad * a.d, *V = a.V + g * a.Lpad * a.d;
    float *res = a.res + r * a.d, *S = a.scratch + r * a.per_row;
    int hard = 0;
    if (a.kind == DRIFT_ATTN_STANDARD) attn_row_standard(a, res, q, K, V, lim, S, &hard);
    else if (a.kind == DRIFT_ATTN_FLASH) attn_row_flash(a, res, q, K, V, lim, S, &hard);
    else attn_row_splitkv(a, res, q, K, V, lim, S, &hard);
    a.hard[r] = hard;
}

// ---- launcher and dispatcher ---------------------------------------------------------------

static int launch_attention(int version, const attn_args_t &a, unsigned threads)
{
    int rc = 0;
    unsigned blocks = (unsigned)((a.rows + threads - 1) / threads);
    switch (version) {
    case 1: LAUNCH_TRY(attention_rows1<<<blocks, threads>>>(a)); break;
    default: return drift_cuda_fail(DRIFT_EINVAL, "attention: kernel version %d (accepted: 1..%d)", version,
                                    DRIFT_CUDA_ATTENTION_KERNELS);
    }
    CUDA_TRY(cudaDeviceSynchronize());
done:
    return rc;
}

// ---- host entry point -----------------------------------------------------------------------

static float rounded(double x, drift_format_t f) { return (float)(f == DRIFT_FP64 ? x : drift_rne(x, f)); }

extern "C" int drift_cuda_attention(double *out, const double *q, size_t nq, size_t q_pos, const drift_kv_cache_t *kv,
                                    const unsigned char *key_mask, const drift_attn_opts_t *o, int version,
                                    size_t *host_calls)
{
    int rc = drift_cuda_check_attention(out, q, nq, q_pos, kv, key_mask, o);
    if (rc) return rc;
    if (host_calls) *host_calls = 0;
    if (version == 0) version = 1;
    if (version < 1 || version > DRIFT_CUDA_ATTENTION_KERNELS)
        return drift_cuda_fail(DRIFT_EINVAL, "attention: kernel version %d (accepted: 1..%d)", version,
                               DRIFT_CUDA_ATTENTION_KERNELS);
    if (drift_cuda_device_count() == 0) return DRIFT_EUNSUPPORTED;
    if (nq == 0) return 0;
    attn_args_t a;
    memset(&a, 0, sizeof a);
    size_t d = (size_t)o->head_dim, H = (size_t)o->heads, G = (size_t)o->kv_heads, L = kv->len;
    a.rows = nq * H;
    a.L = L;
    a.d = d;
    a.heads = H;
    a.grp = H / G;
    a.q_pos = q_pos;
    a.causal = o->causal;
    a.kind = (int)o->kernel.kind;
    a.l_fma = o->softmax_acc.fma != 0;
    a.splits = o->kernel.splits;
    a.size = o->kernel.size;
    a.bc = o->kernel.kind == DRIFT_ATTN_STANDARD ? (L ? L : 1) : (size_t)o->kernel.bc;
    a.Lpad = (L + a.bc - 1) / a.bc * a.bc;
    if (a.Lpad == 0) a.Lpad = a.bc;
    double scale_d = o->scale > 0 ? o->scale : 1.0 / sqrt((double)d);
    a.scale = (float)drift_rne(scale_d, DRIFT_FP32);
    a.scale_is_one = scale_d == 1.0;
    a.qk_out = o->qk.out;
    a.pv_in = o->pv.in;
    size_t tiles = a.Lpad / a.bc;
    a.per_row = a.kind == DRIFT_ATTN_STANDARD ? (L ? L : 1) : 2 * a.bc + d + tiles * (d + 1);
    unsigned threads = 128;
    if (o->kernel.kind == DRIFT_ATTN_FLASH) threads = (unsigned)(o->kernel.br < 1 ? 1 : o->kernel.br > 256 ? 256 : o->kernel.br);

    size_t nkv = G * a.Lpad * d, nqv = a.rows * d;
    float *hq = (float *)malloc(nqv * sizeof(float)), *hk = (float *)calloc(nkv, sizeof(float));
    float *hv = (float *)calloc(nkv, sizeof(float)), *hres = (float *)malloc(nqv * sizeof(float));
    int *hh = (int *)malloc(a.rows * sizeof(int));
    float *dq = NULL, *dk = NULL, *dv = NULL, *dres = NULL, *dscr = NULL;
    int *dh = NULL;
    unsigned char *dmask = NULL;
    int any_hard = 0;
    if (!hq || !hk || !hv || !hres || !hh) FAIL_TO_DONE(DRIFT_ENOMEM, "attention: out of host memory");
    // load: what attention.c's float path loads (q and K rounded to qk.in, V to pv.in)
    for (size_t i = 0; i < nqv; i++) hq[i] = rounded(q[i], o->qk.in);
    for (size_t g = 0; g < G; g++)
        for (size_t j = 0; j < L; j++)
            for (size_t c = 0; c < d; c++) {
                size_t src = (j * G + g) * d + c, dst = (g * a.Lpad + j) * d + c;
                hk[dst] = rounded(kv->k[src], o->qk.in);
                hv[dst] = rounded(kv->v[src], o->pv.in);
            }
    CUDA_TRY(cudaMalloc(&dq, nqv * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dk, nkv * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dv, nkv * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dres, nqv * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dscr, a.rows * a.per_row * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dh, a.rows * sizeof(int)));
    CUDA_TRY(cudaMemcpy(dq, hq, nqv * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(dk, hk, nkv * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(dv, hv, nkv * sizeof(float), cudaMemcpyHostToDevice));
    if (key_mask && L) {
        CUDA_TRY(cudaMalloc(&dmask, L));
        CUDA_TRY(cudaMemcpy(dmask, key_mask, L, cudaMemcpyHostToDevice));
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
        if ((rc = drift_attention(out, q, nq, q_pos, kv, key_mask, o, err, sizeof err)))
            FAIL_TO_DONE(rc, "%s", err);
        if (host_calls) ++*host_calls;
    } else {
        for (size_t i = 0; i < nqv; i++) out[i] = o->pv.out == DRIFT_FP64 ? (double)hres[i] : drift_rne(hres[i], o->pv.out);
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
