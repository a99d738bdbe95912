// softmax.cu — softmax on the GPU, the twin of drift_softmax for the subset documented in
// drift_cuda_softmax.h. Layout after llm.c dev/cuda: device arithmetic (softmax.c's F32 path),
// the correctly rounded exponential with its guard, kernel 1 (one thread per row), the
// launcher and the host entry point (which finishes undecided rows with drift_softmax).
#include "drift_cuda_softmax.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_try.h"

// drift_kexp(t, fp32) for an fp32 t: the correctly rounded fp32 exp. CUDA's double exp is
// within 1 ulp (CUDA C Programming Guide, mathematical functions, double precision), so the
// exact value lies within y +- 2 ulp(double); when both ends round to the same float, so
// does every value between (rounding is monotone) and that float is the answer. Otherwise
// *hard is set and the host decides the row (MPFR, through drift_softmax).
static __device__ float cr_expf(float t, int *hard)
{
    if (isnan(t)) return t;
    if (t < -200.0f) return 0.0f; // exp < 2^-288: below half the smallest fp32 subnormal (and -inf -> 0)
    if (t > 200.0f) return INFINITY;
    double y = exp((double)t);
    // y is positive, normal and finite here (exp of [-200, 200]): stepping the bit pattern by
    // 2 moves exactly 2 ulp down and up (nextafter twice)
    long long yb = __double_as_longlong(y);
    double lo = __longlong_as_double(yb - 2), hi = __longlong_as_double(yb + 2);
    float rl = __double2float_rn(lo), rh = __double2float_rn(hi);
    if (rl != rh || signbit(rl) != signbit(rh)) *hard = 1;
    return rl;
}

// softmax.c's max_of: a NaN sticks.
static __device__ float max_of(const float *x, int n)
{
    float m = -INFINITY;
    for (int i = 0; i < n; i++)
        if (x[i] > m || isnan(x[i])) m = isnan(m) ? m : x[i];
    return m;
}

// e_of in expf mode: exp(x - m), x == -inf gives 0.
static __device__ float e_of(float x, float m, int *hard)
{
    if (x == -INFINITY) return 0.0f;
    return cr_expf(__fsub_rn(x, m), hard);
}

// Kernel 1: one thread per row. p receives round_A(e_i / s) (fp32); the host rounds it to
// the output format with drift_round, as drift_softmax does.
__global__ void softmax_row1(
    float *p, int *hard_rows, float *x_all, int n, int batch, int kind, long block, int fma, float scale)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= batch) return;
    float *x = x_all + (size_t)r * n, *pr = p + (size_t)r * n;
    int hard = 0;
    if (scale != 1.0f)
        for (int i = 0; i < n; i++) x[i] = __fmul_rn(x[i], scale); // load(): x * round_A(scale)
    float m = -INFINITY, s = 0.0f;
    if (kind == DRIFT_SOFTMAX_NAIVE) {
        m = 0.0f;
        for (int i = 0; i < n; i++) {
            float e = x[i] == -INFINITY ? 0.0f : cr_expf(x[i], &hard);
            s = i == 0 ? e : __fadd_rn(s, e); // order seq
        }
    } else if (kind == DRIFT_SOFTMAX_SAFE) {
        m = max_of(x, n);
        if (m != -INFINITY)
            for (int i = 0; i < n; i++) {
                float e = e_of(x[i], m, &hard);
                s = i == 0 ? e : __fadd_rn(s, e);
            }
    } else { // online:B (online = online:1)
        for (long b0 = 0; b0 < n; b0 += block) {
            int len = (int)(n - b0 < block ? n - b0 : block);
            float bm = max_of(x + b0, len);
            float mn = bm > m || isnan(bm) ? bm : m;
            if (mn == -INFINITY) continue; // nothing live yet: d stays 0
            float alpha = m == -INFINITY ? 0.0f : cr_expf(__fsub_rn(m, mn), &hard);
            float rs = 0.0f;
            for (int i = 0; i < len; i++) {
                float e = e_of(x[b0 + i], mn, &hard);
                rs = i == 0 ? e : __fadd_rn(rs, e);
            }
            s = fma ? __fmaf_rn(s, alpha, rs) : __fadd_rn(__fmul_rn(s, alpha), rs);
            m = mn;
        }
    }
    if (m == -INFINITY) s = 0.0f; // fully masked
    for (int i = 0; i < n; i++) {
        float e = m == -INFINITY                ? 0.0f
                  : kind == DRIFT_SOFTMAX_NAIVE ? (x[i] == -INFINITY ? 0.0f : cr_expf(x[i], &hard))
                                                : e_of(x[i], m, &hard);
        pr[i] = s == 0.0f ? 0.0f : __fdiv_rn(e, s);
    }
    hard_rows[r] = hard;
}

extern "C" int drift_cuda_softmax(
    double *out, const double *x, size_t n, size_t batch, const drift_softmax_opts_t *o, size_t *host_rows)
{
    int rc = drift_cuda_check_softmax(out, x, n, batch, o);
    if (rc) return rc;
    if (host_rows) *host_rows = 0;
    if (drift_cuda_device_count() == 0) return DRIFT_EUNSUPPORTED;
    if (n == 0 || batch == 0) return 0;
    size_t total = n * batch;
    float *hx = (float *)malloc(total * sizeof(float)), *hp = (float *)malloc(total * sizeof(float));
    int *hh = (int *)malloc(batch * sizeof(int));
    float *dx = NULL, *dp = NULL;
    int *dh = NULL;
    float scale = 1.0f;
    long block = o->variant.kind == DRIFT_SOFTMAX_ONLINE ? o->variant.block : 0;
    if (!hx || !hp || !hh) FAIL_TO_DONE(DRIFT_ENOMEM, "softmax: out of host memory");
    for (size_t i = 0; i < total; i++) hx[i] = (float)drift_rne(x[i], o->in); // load(): rounded to in (exact as float)
    if (o->scale != 1.0) scale = (float)drift_rne(o->scale, DRIFT_FP32);
    CUDA_TRY(cudaMalloc(&dx, total * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dp, total * sizeof(float)));
    CUDA_TRY(cudaMalloc(&dh, batch * sizeof(int)));
    CUDA_TRY(cudaMemcpy(dx, hx, total * sizeof(float), cudaMemcpyHostToDevice));
    LAUNCH_TRY(softmax_row1<<<(unsigned)((batch + 127) / 128), 128>>>(
        dp, dh, dx, (int)n, (int)batch, (int)o->variant.kind, block, o->acc.fma != 0, scale));
    CUDA_TRY(cudaDeviceSynchronize());
    CUDA_TRY(cudaMemcpy(hp, dp, total * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_TRY(cudaMemcpy(hh, dh, batch * sizeof(int), cudaMemcpyDeviceToHost));
    for (size_t r = 0; r < batch; r++) {
        if (hh[r]) { // an exponential the device could not decide: the host's twin decides the row
            if ((rc = drift_softmax(out + r * n, x + r * n, n, o, NULL, 0))) goto done;
            if (host_rows) ++*host_rows;
            continue;
        }
        for (size_t i = 0; i < n; i++) out[r * n + i] = drift_round(hp[r * n + i], o->out, NULL, 0);
    }
done:
    free(hx), free(hp), free(hh);
    if (dx) cudaFree(dx);
    if (dp) cudaFree(dp);
    if (dh) cudaFree(dh);
    return rc;
}
