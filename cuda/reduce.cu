// reduce.cu — sums and dot products in every deterministic order of order.h, the twins of
// drift_sum / drift_dot (see drift_cuda_reduce.h). Layout after llm.c dev/cuda: the term
// accessor, numbered kernels per order family, launchers, one dispatcher, the entry points.
// The CPU reference is the library call itself (cuda/check_reduce.cu).
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "arith.cuh"
#include "cuda_try.h"
#include "drift_cuda_reduce.h"

// Terms of row r: a sum's x[i], or a dot product's a[i]*b[i].
template <typename T, int M> struct terms {
    const T *a, *b; // b == NULL: a sum
    bool fma;
    // a term standing alone: x[i], or round(a b)
    __device__ T leaf(long i) const { return b ? arith<T, M>::mul(a[i], b[i]) : a[i]; }
    // a term added into a running chain: s + x[i], or fma / nofma step
    __device__ T step(T s, long i) const
    {
        return b ? chain_step<T, M>(s, a[i], b[i], fma) : arith<T, M>::add(s, a[i]);
    }
    // a chain over first, first + stride, ... (count >= 1 terms)
    __device__ T chain(long first, long stride, long count) const
    {
        T s = leaf(first);
        for (long k = 1; k < count; k++) s = step(s, first + k * stride);
        return s;
    }
};

// ---- kernel 1 for the one-thread orders: seq, rev, pairwise, kahan, neumaier, blocked ----
template <typename T, int M>
__global__ void reduce_row1(T *out, const T *a, const T *b, long n, int batch, int kind, long param, bool fma)
{
    using A = arith<T, M>;
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= batch) return;
    terms<T, M> t{a + (size_t)r * n, b ? b + (size_t)r * n : nullptr, fma};
    T s = 0;
    if (n == 0) {
        out[r] = T(0);
        return;
    }
    switch (kind) {
    case DRIFT_ORDER_SEQ: s = t.chain(0, 1, n); break;
    case DRIFT_ORDER_REV: s = t.chain(n - 1, -1, n); break;
    case DRIFT_ORDER_PAIRWISE: s = pairwise<T, M>([&](long i) { return t.leaf(i); }, 0, n); break;
    case DRIFT_ORDER_BLOCKED:
        for (long lo = 0; lo < n; lo += param) {
            T bs = t.chain(lo, 1, n - lo < param ? n - lo : param);
            s = lo == 0 ? bs : A::add(s, bs);
        }
        break;
    case DRIFT_ORDER_KAHAN: {
        T comp = 0;
        s = t.leaf(0);
        for (long i = 1; i < n; i++) {
            T y = A::add(t.leaf(i), -comp);
            T u = A::add(s, y);
            comp = A::add(A::add(u, -s), -y);
            s = u;
        }
        break;
    }
    case DRIFT_ORDER_NEUMAIER: {
        T comp = 0;
        s = t.leaf(0);
        for (long i = 1; i < n; i++) {
            T x = t.leaf(i);
            T u = A::add(s, x);
            if (fabs(s) >= fabs(x))
                comp = A::add(comp, A::add(A::add(s, -u), x));
            else
                comp = A::add(comp, A::add(A::add(x, -u), s));
            s = u;
        }
        s = A::add(s, comp);
        break;
    }
    }
    out[r] = s;
}

// ---- chunked orders (splitk:S, blocked:B kernel 2): one thread per (row, chunk) ----------
template <typename T, int M>
__global__ void reduce_chunks1(T *P, const T *a, const T *b, long n, int batch, long len, int nparts, bool fma)
{
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; // one 1-D grid: no 65535 limit on rows or chunks
    if (idx >= (size_t)batch * nparts) return;
    int r = (int)(idx / nparts), k = (int)(idx % nparts);
    terms<T, M> t{a + (size_t)r * n, b ? b + (size_t)r * n : nullptr, fma};
    long lo = (long)k * len;
    P[(size_t)r * nparts + k] = t.chain(lo, 1, n - lo < len ? n - lo : len);
}

template <typename T, int M> __global__ void reduce_combine1(T *out, const T *P, int batch, int nparts, int tree)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= batch) return;
    const T *p = P + (size_t)r * nparts;
    if (tree) {
        out[r] = pairwise<T, M>([&](long i) { return p[i]; }, 0, nparts);
        return;
    }
    T s = p[0];
    for (int i = 1; i < nparts; i++) s = arith<T, M>::add(s, p[i]);
    out[r] = s;
}

// ---- warp:W kernel 1: W threads per row (one block), butterfly through shared memory -----
template <typename T, int M> __global__ void reduce_warp1(T *out, const T *a, const T *b, long n, int W, bool fma)
{
    extern __shared__ unsigned char smem_raw[];
    T *v = (T *)smem_raw;
    int i = threadIdx.x, r = blockIdx.x;
    terms<T, M> t{a + (size_t)r * n, b ? b + (size_t)r * n : nullptr, fma};
    long cnt = i < n ? (n - i - 1) / W + 1 : 0;
    T mine = cnt ? t.chain(i, W, cnt) : T(0); // an empty lane holds +0
    for (int off = W / 2; off >= 1; off /= 2) {
        v[i] = mine;
        __syncthreads();
        mine = arith<T, M>::add(mine, v[i ^ off]);
        __syncthreads();
    }
    if (i == 0) out[r] = mine;
}

// ---- warp:W kernel 2 (W <= 32): the shuffle tree, one warp per row ------------------------
template <typename T, int M> __global__ void reduce_warp2(T *out, const T *a, const T *b, long n, int W, bool fma)
{
    int i = threadIdx.x, r = blockIdx.x;
    terms<T, M> t{a + (size_t)r * n, b ? b + (size_t)r * n : nullptr, fma};
    long cnt = i < W && i < n ? (n - i - 1) / W + 1 : 0;
    T mine = cnt ? t.chain(i, W, cnt) : T(0);
    for (int off = W / 2; off >= 1; off /= 2) mine = arith<T, M>::add(mine, __shfl_xor_sync(0xffffffffu, mine, off));
    if (i == 0) out[r] = mine;
}

// ---- launcher and dispatcher ------------------------------------------------------------------

template <typename T, int M>
static int launch(T *dout, const T *da, const T *db, long n, int batch, const drift_order_t *o, int kernel, bool fma)
{
    int rc = 0;
    T *P = NULL;
    int blocks = (batch + 127) / 128;
    int chunked = o->kind == DRIFT_ORDER_SPLITK || (o->kind == DRIFT_ORDER_BLOCKED && kernel == 2);
    if (o->kind == DRIFT_ORDER_WARP) {
        int W = (int)o->param;
        if (kernel == 2)
            LAUNCH_TRY(reduce_warp2<T, M><<<batch, 32>>>(dout, da, db, n, W, fma));
        else
            LAUNCH_TRY(reduce_warp1<T, M><<<batch, W, W * sizeof(T)>>>(dout, da, db, n, W, fma));
    } else if (chunked && n == 0) {
        CUDA_TRY(cudaMemset(dout, 0, (size_t)batch * sizeof(T)));
    } else if (chunked) {
        long len = o->kind == DRIFT_ORDER_BLOCKED ? o->param : (n + o->param - 1) / o->param;
        if (len > n) len = n;
        int nparts = (int)((n + len - 1) / len);
        CUDA_TRY(cudaMalloc(&P, (size_t)batch * nparts * sizeof(T)));
        LAUNCH_TRY(reduce_chunks1<T, M>
            <<<(unsigned)(((size_t)batch * nparts + 127) / 128), 128>>>(P, da, db, n, batch, len, nparts, fma));
        LAUNCH_TRY(
            reduce_combine1<T, M><<<blocks, 128>>>(dout, P, batch, nparts, o->kind == DRIFT_ORDER_SPLITK && o->tree));
    } else { // seq, rev, pairwise, kahan, neumaier, blocked kernel 1: one thread per row
        LAUNCH_TRY(reduce_row1<T, M><<<blocks, 128>>>(dout, da, db, n, batch, (int)o->kind, o->param, fma));
    }
    CUDA_TRY(cudaDeviceSynchronize());
done:
    if (P) cudaFree(P);
    return rc;
}

template <typename T>
static int launch_mode(
    T *dout, const T *da, const T *db, long n, int batch, const drift_order_t *o, int kernel, const drift_acc_t *acc)
{
    bool fma = acc->fma != 0;
    switch (acc->mode) {
    case DRIFT_RNE: return launch<T, DRIFT_RNE>(dout, da, db, n, batch, o, kernel, fma);
    case DRIFT_RZ: return launch<T, DRIFT_RZ>(dout, da, db, n, batch, o, kernel, fma);
    case DRIFT_RU: return launch<T, DRIFT_RU>(dout, da, db, n, batch, o, kernel, fma);
    case DRIFT_RD: return launch<T, DRIFT_RD>(dout, da, db, n, batch, o, kernel, fma);
    default: return drift_cuda_fail(DRIFT_EUNSUPPORTED, "reduce: mode %s", drift_mode_name(acc->mode));
    }
}

// Host arrays of doubles -> device T, run, device T -> host doubles.
template <typename T>
static int run(double *out, const double *a, const double *b, size_t n, size_t batch, const drift_order_t *o,
    const drift_acc_t *acc, int kernel)
{
    int rc = 0;
    size_t total = n * batch;
    T *ha = (T *)malloc((total ? total : 1) * sizeof(T)), *hb = b ? (T *)malloc((total ? total : 1) * sizeof(T)) : NULL;
    T *ho = (T *)malloc((batch ? batch : 1) * sizeof(T));
    T *da = NULL, *db = NULL, *dout = NULL;
    if (!ha || (b && !hb) || !ho) FAIL_TO_DONE(DRIFT_ENOMEM, "reduce: out of host memory");
    for (size_t i = 0; i < total; i++) {
        ha[i] = (T)a[i]; // exact: checked to be values of T
        if (b) hb[i] = (T)b[i];
    }
    CUDA_TRY(cudaMalloc(&da, (total ? total : 1) * sizeof(T)));
    if (b) CUDA_TRY(cudaMalloc(&db, (total ? total : 1) * sizeof(T)));
    CUDA_TRY(cudaMalloc(&dout, batch * sizeof(T)));
    CUDA_TRY(cudaMemcpy(da, ha, total * sizeof(T), cudaMemcpyHostToDevice));
    if (b) CUDA_TRY(cudaMemcpy(db, hb, total * sizeof(T), cudaMemcpyHostToDevice));
    rc = launch_mode<T>(dout, da, db, (long)n, (int)batch, o, kernel, acc);
    if (rc) goto done;
    CUDA_TRY(cudaMemcpy(ho, dout, batch * sizeof(T), cudaMemcpyDeviceToHost));
    for (size_t r = 0; r < batch; r++) out[r] = (double)ho[r];
done:
    free(ha), free(hb), free(ho);
    if (da) cudaFree(da);
    if (db) cudaFree(db);
    if (dout) cudaFree(dout);
    return rc;
}

static int reduce_entry(double *out, const double *a, const double *b, size_t n, size_t batch, const drift_order_t *o,
    const drift_acc_t *acc, int kernel)
{
    int rc = drift_cuda_check_reduce(out, a, b, n, batch, o, acc, kernel);
    if (rc) return rc;
    if (drift_cuda_device_count() == 0) return DRIFT_EUNSUPPORTED;
    if (batch == 0) return 0;
    if (kernel == 0) kernel = drift_cuda_reduce_kernels(o);
    if (o->kind == DRIFT_ORDER_WARP && kernel == 2 && o->param > 32) kernel = 1;
    return acc->acc == DRIFT_FP32 ? run<float>(out, a, b, n, batch, o, acc, kernel)
                                  : run<double>(out, a, b, n, batch, o, acc, kernel);
}

extern "C" int drift_cuda_sum(
    double *out, const double *x, size_t n, size_t batch, const drift_order_t *o, const drift_acc_t *acc, int kernel)
{
    return reduce_entry(out, x, NULL, n, batch, o, acc, kernel);
}

extern "C" int drift_cuda_dot(double *out, const double *a, const double *b, size_t n, size_t batch,
    const drift_order_t *o, const drift_acc_t *acc, int kernel)
{
    if (!b && n > 0 && batch > 0) return drift_cuda_fail(DRIFT_EINVAL, "dot: b is NULL");
    static const double none = 0;
    return reduce_entry(out, a, b ? b : &none, n, batch, o, acc, kernel);
}
