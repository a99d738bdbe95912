// convert.cu — number-format conversions on the GPU with the hardware's own instructions
// (see drift_cuda.h for the table of instructions and why each is a single rounding).
//
// Layout in the style of llm.c dev/cuda: device conversion functions, numbered kernel
// versions, launchers, and a dispatcher; the CPU reference and the validating main live
// in check_convert.cu. Every CUDA call and launch goes through CUDA_CHECK, which records
// the failing call in the message buffer and returns DRIFT_EIO after freeing.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "drift_cuda.h"

extern "C" {
#include "drift.h"
}

// ---- messages and error checking -------------------------------------------------------

static char g_message[512];

static void set_message(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_message, sizeof g_message, fmt, ap);
    va_end(ap);
}

extern "C" const char *drift_cuda_message(void) { return g_message; }

// Record the failing call and jump to the cleanup label `done` with rc = DRIFT_EIO.
#define CUDA_CHECK(call)                                                                                 \
    do {                                                                                                 \
        cudaError_t err_ = (call);                                                                       \
        if (err_ != cudaSuccess) {                                                                       \
            set_message("%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, cudaGetErrorString(err_),        \
                        cudaGetErrorName(err_));                                                         \
            rc = DRIFT_EIO;                                                                              \
            goto done;                                                                                   \
        }                                                                                                \
    } while (0)

extern "C" int drift_cuda_device_count(void)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        set_message("cudaGetDeviceCount: %s", cudaGetErrorString(err));
        cudaGetLastError(); // clear the error so that later calls start clean
        return 0;
    }
    if (count == 0) set_message("no CUDA device");
    return count;
}

// ---- device conversions ---------------------------------------------------------------

// Round to odd at fp32: truncate, then set the last bit when inexact. A later rounding of
// this float to p <= 22 bits (bf16, tf32) in any mode equals the direct rounding of x
// (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
// using rounding to odd", IEEE TC 2008). Below 2^-149 this gives +-2^-149, above FLT_MAX
// it gives FLT_MAX: odd values of the same rounding class.
static __device__ float f32_round_odd(double x)
{
    float f = __double2float_rz(x);
    if (!isnan(x) && (double)f != x) f = __uint_as_float(__float_as_uint(f) | 1u);
    return f;
}

static __device__ double tf32_bits_to_double(unsigned r)
{
    return (double)__uint_as_float(r & ~0x1fffu); // tf32 is the top 19 bits of the word
}

static __device__ double half_bits_to_double(unsigned short h)
{
    return (double)__half2float(__ushort_as_half(h)); // exact widening
}

static __device__ double bf16_bits_to_double(unsigned short h)
{
    return (double)__bfloat162float(__ushort_as_bfloat16(h)); // exact widening
}

static __device__ double fp8_to_double(__nv_fp8_storage_t v, __nv_fp8_interpretation_t kind)
{
    __half_raw h = __nv_cvt_fp8_to_halfraw(v, kind); // exact widening
    return half_bits_to_double(h.x);
}

// One conversion; F and M are drift_format_t and drift_mode_t values. Combinations the
// host never launches (checked by supported()) return NaN.
template <int F, int M>
static __device__ double convert_one(double x)
{
    unsigned short h = 0;
    unsigned r = 0;
    if constexpr (F == DRIFT_FP64) {
        return x;
    } else if constexpr (F == DRIFT_FP32) {
        if constexpr (M == DRIFT_RNE) return (double)__double2float_rn(x);
        if constexpr (M == DRIFT_RZ) return (double)__double2float_rz(x);
        if constexpr (M == DRIFT_RU) return (double)__double2float_ru(x);
        if constexpr (M == DRIFT_RD) return (double)__double2float_rd(x);
    } else if constexpr (F == DRIFT_FP16) {
        if constexpr (M == DRIFT_RNE) asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(x));
        if constexpr (M == DRIFT_RZ) asm("cvt.rz.f16.f64 %0, %1;" : "=h"(h) : "d"(x));
        if constexpr (M == DRIFT_RU) asm("cvt.rp.f16.f64 %0, %1;" : "=h"(h) : "d"(x));
        if constexpr (M == DRIFT_RD) asm("cvt.rm.f16.f64 %0, %1;" : "=h"(h) : "d"(x));
        if constexpr (M == DRIFT_RNE || M == DRIFT_RZ || M == DRIFT_RU || M == DRIFT_RD) return half_bits_to_double(h);
    } else if constexpr (F == DRIFT_BF16) {
#if __CUDA_ARCH__ >= 900
        if constexpr (M == DRIFT_RNE) asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(h) : "d"(x));
        if constexpr (M == DRIFT_RZ) asm("cvt.rz.bf16.f64 %0, %1;" : "=h"(h) : "d"(x));
        if constexpr (M == DRIFT_RU) asm("cvt.rp.bf16.f64 %0, %1;" : "=h"(h) : "d"(x));
        if constexpr (M == DRIFT_RD) asm("cvt.rm.bf16.f64 %0, %1;" : "=h"(h) : "d"(x));
#else
        float f = f32_round_odd(x);
        if constexpr (M == DRIFT_RNE) asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
        if constexpr (M == DRIFT_RZ) asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
        if constexpr (M == DRIFT_RU) asm("cvt.rp.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
        if constexpr (M == DRIFT_RD) asm("cvt.rm.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
#endif
        if constexpr (M == DRIFT_RNE || M == DRIFT_RZ || M == DRIFT_RU || M == DRIFT_RD) return bf16_bits_to_double(h);
    } else if constexpr (F == DRIFT_TF32) {
        float f = f32_round_odd(x);
        if constexpr (M == DRIFT_RNA) {
            asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(f));
            return tf32_bits_to_double(r);
        }
#if __CUDA_ARCH__ >= 900
        if constexpr (M == DRIFT_RNE) asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(f));
        if constexpr (M == DRIFT_RZ) asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(r) : "f"(f));
        if constexpr (M == DRIFT_RNE || M == DRIFT_RZ) return tf32_bits_to_double(r);
#else
        (void)f;
#endif
    } else if constexpr (F == DRIFT_FP8E4M3) {
        if constexpr (M == DRIFT_RNE) return fp8_to_double(__nv_cvt_double_to_fp8(x, __NV_NOSAT, __NV_E4M3), __NV_E4M3);
    } else if constexpr (F == DRIFT_FP8E5M2) {
        if constexpr (M == DRIFT_RNE) return fp8_to_double(__nv_cvt_double_to_fp8(x, __NV_NOSAT, __NV_E5M2), __NV_E5M2);
    }
    (void)h;
    (void)r;
    return __longlong_as_double(0x7ff8000000000000ll); // NaN: never launched
}

// ---- kernels --------------------------------------------------------------------------

// Kernel 1: one element per thread, grid-stride loop.
template <int F, int M>
static __global__ void convert_kernel1(double *out, const double *in, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = convert_one<F, M>(in[i]);
}

// Kernel 2: four consecutive elements per thread (more independent work per thread; the
// conversions are elementwise, so the results are identical to kernel 1).
template <int F, int M>
static __global__ void convert_kernel2(double *out, const double *in, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x * 4;
    for (size_t base = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 4; base < n; base += stride) {
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (base + j < n) out[base + j] = convert_one<F, M>(in[base + j]);
    }
}

// ---- launchers ------------------------------------------------------------------------

static const int BLOCK = 256;

static unsigned grid_for(size_t work)
{
    size_t g = (work + BLOCK - 1) / BLOCK;
    if (g > 65535u * 16u) g = 65535u * 16u; // the loops cover the rest
    return (unsigned)(g ? g : 1);
}

template <int F, int M>
static void launch(int kernel, double *out, const double *in, size_t n)
{
    if (kernel == 1)
        convert_kernel1<F, M><<<grid_for(n), BLOCK>>>(out, in, n);
    else
        convert_kernel2<F, M><<<grid_for((n + 3) / 4), BLOCK>>>(out, in, n);
}

template <int F>
static int launch_mode(int kernel, double *out, const double *in, size_t n, drift_mode_t m)
{
    switch (m) {
    case DRIFT_RNE: launch<F, DRIFT_RNE>(kernel, out, in, n); return 0;
    case DRIFT_RZ: launch<F, DRIFT_RZ>(kernel, out, in, n); return 0;
    case DRIFT_RNA: launch<F, DRIFT_RNA>(kernel, out, in, n); return 0;
    case DRIFT_RU: launch<F, DRIFT_RU>(kernel, out, in, n); return 0;
    case DRIFT_RD: launch<F, DRIFT_RD>(kernel, out, in, n); return 0;
    default: return DRIFT_EINVAL;
    }
}

// Dispatcher over formats.
static int launch_any(int kernel, double *out, const double *in, size_t n, drift_format_t f, drift_mode_t m)
{
    switch (f) {
    case DRIFT_FP64: return launch_mode<DRIFT_FP64>(kernel, out, in, n, m);
    case DRIFT_FP32: return launch_mode<DRIFT_FP32>(kernel, out, in, n, m);
    case DRIFT_TF32: return launch_mode<DRIFT_TF32>(kernel, out, in, n, m);
    case DRIFT_FP16: return launch_mode<DRIFT_FP16>(kernel, out, in, n, m);
    case DRIFT_BF16: return launch_mode<DRIFT_BF16>(kernel, out, in, n, m);
    case DRIFT_FP8E4M3: return launch_mode<DRIFT_FP8E4M3>(kernel, out, in, n, m);
    case DRIFT_FP8E5M2: return launch_mode<DRIFT_FP8E5M2>(kernel, out, in, n, m);
    default: return DRIFT_EINVAL;
    }
}

// ---- support table --------------------------------------------------------------------

// The method for (f, m) on a device of compute capability `cc` (major * 10 + minor), or
// NULL when there is none.
static const char *method_for(drift_format_t f, drift_mode_t m, int cc)
{
    int directed = m == DRIFT_RNE || m == DRIFT_RZ || m == DRIFT_RU || m == DRIFT_RD;
    switch (f) {
    case DRIFT_FP64: return m == DRIFT_SR ? NULL : "copy";
    case DRIFT_FP32:
        return m == DRIFT_RNE ? "cvt.rn.f32.f64"
               : m == DRIFT_RZ ? "cvt.rz.f32.f64"
               : m == DRIFT_RU ? "cvt.rp.f32.f64"
               : m == DRIFT_RD ? "cvt.rm.f32.f64"
                               : NULL;
    case DRIFT_FP16:
        return m == DRIFT_RNE ? "cvt.rn.f16.f64"
               : m == DRIFT_RZ ? "cvt.rz.f16.f64"
               : m == DRIFT_RU ? "cvt.rp.f16.f64"
               : m == DRIFT_RD ? "cvt.rm.f16.f64"
                               : NULL;
    case DRIFT_BF16:
        if (!directed) return NULL;
        if (cc >= 90)
            return m == DRIFT_RNE ? "cvt.rn.bf16.f64"
                   : m == DRIFT_RZ ? "cvt.rz.bf16.f64"
                   : m == DRIFT_RU ? "cvt.rp.bf16.f64"
                                   : "cvt.rm.bf16.f64";
        return m == DRIFT_RNE ? "odd f32 + cvt.rn.bf16.f32"
               : m == DRIFT_RZ ? "odd f32 + cvt.rz.bf16.f32"
               : m == DRIFT_RU ? "odd f32 + cvt.rp.bf16.f32"
                               : "odd f32 + cvt.rm.bf16.f32";
    case DRIFT_TF32:
        if (m == DRIFT_RNA) return "odd f32 + cvt.rna.tf32.f32";
        if (cc >= 90 && m == DRIFT_RNE) return "odd f32 + cvt.rn.tf32.f32";
        if (cc >= 90 && m == DRIFT_RZ) return "odd f32 + cvt.rz.tf32.f32";
        return NULL;
    case DRIFT_FP8E4M3: return m == DRIFT_RNE ? "__nv_cvt_double_to_fp8 E4M3 NOSAT" : NULL;
    case DRIFT_FP8E5M2: return m == DRIFT_RNE ? "__nv_cvt_double_to_fp8 E5M2 NOSAT" : NULL;
    default: return NULL;
    }
}

// Names for messages (kept here so that drift_cuda needs nothing from libdrift at link time).
static const char *fmt_name(drift_format_t f)
{
    static const char *const names[] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8e4m3", "fp8e5m2"};
    return (unsigned)f < DRIFT_NFORMATS ? names[f] : "?";
}

static const char *mode_name(drift_mode_t m)
{
    static const char *const names[] = {"rne", "rz", "rna", "ru", "rd", "sr"};
    return (unsigned)m < DRIFT_NMODES ? names[m] : "?";
}

// Compute capability of the current device, or a negative DRIFT_E* code.
static int current_cc(void)
{
    int rc = 0, dev = 0, major = 0, minor = 0;
    if (drift_cuda_device_count() == 0) return DRIFT_EUNSUPPORTED;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major < 8) {
        set_message("device %d is sm_%d%d; the conversions need sm_80 or newer", dev, major, minor);
        return DRIFT_EUNSUPPORTED;
    }
    return major * 10 + minor;
done:
    return rc;
}

extern "C" int drift_cuda_round_supported(drift_format_t f, drift_mode_t m)
{
    if ((unsigned)f >= DRIFT_NFORMATS || (unsigned)m >= DRIFT_NMODES) return DRIFT_EINVAL;
    int cc = current_cc();
    if (cc == DRIFT_EUNSUPPORTED) return 0;
    if (cc < 0) return cc;
    if (method_for(f, m, cc)) return 1;
    set_message("no GPU conversion to %s in mode %s on sm_%d", fmt_name(f), mode_name(m), cc);
    return 0;
}

extern "C" const char *drift_cuda_round_method(drift_format_t f, drift_mode_t m)
{
    if ((unsigned)f >= DRIFT_NFORMATS || (unsigned)m >= DRIFT_NMODES) return "none";
    int cc = current_cc();
    const char *s = cc > 0 ? method_for(f, m, cc) : NULL;
    return s ? s : "none";
}

// ---- entry points ---------------------------------------------------------------------

extern "C" int drift_cuda_round_kernel(double *out, const double *in, size_t n, drift_format_t f, drift_mode_t m,
                                       int kernel)
{
    int rc = 0;
    double *d_in = NULL, *d_out = NULL;
    if ((unsigned)f >= DRIFT_NFORMATS || (unsigned)m >= DRIFT_NMODES || kernel < 1 ||
        kernel > DRIFT_CUDA_ROUND_KERNELS || (n > 0 && (!out || !in))) {
        set_message("drift_cuda_round: invalid argument");
        return DRIFT_EINVAL;
    }
    int sup = drift_cuda_round_supported(f, m);
    if (sup < 0) return sup;
    if (sup == 0) return DRIFT_EUNSUPPORTED;
    if (n == 0) return 0;
    if (n > ((size_t)-1) / sizeof(double)) {
        set_message("drift_cuda_round: n = %zu is too large", n);
        return DRIFT_ENOMEM;
    }
    CUDA_CHECK(cudaMalloc((void **)&d_in, n * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&d_out, n * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(d_in, in, n * sizeof(double), cudaMemcpyHostToDevice));
    if (launch_any(kernel, d_out, d_in, n, f, m) != 0) {
        set_message("drift_cuda_round: no launcher for %s %s", fmt_name(f), mode_name(m));
        rc = DRIFT_EINVAL;
        goto done;
    }
    CUDA_CHECK(cudaGetLastError());      // launch configuration errors
    CUDA_CHECK(cudaDeviceSynchronize()); // errors while the kernel ran
    CUDA_CHECK(cudaMemcpy(out, d_out, n * sizeof(double), cudaMemcpyDeviceToHost));
done:
    // free whatever was allocated; a failure here must not hide the first error
    if (d_in) cudaFree(d_in);
    if (d_out) cudaFree(d_out);
    return rc;
}

extern "C" int drift_cuda_round(double *out, const double *in, size_t n, drift_format_t f, drift_mode_t m)
{
    return drift_cuda_round_kernel(out, in, n, f, m, 2);
}
