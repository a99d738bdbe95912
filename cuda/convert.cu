// convert.cu — number-format conversions on the GPU with the hardware's own instructions
// (see drift_cuda.h for the table of instructions and why each is a single rounding).
//
// Layout in the style of llm.c dev/cuda: device conversion functions, numbered kernel
// versions, launchers, and a dispatcher; the CPU reference and the validating main live
// in check_convert.cu. Every CUDA call and launch goes through CUDA_TRY (cuda_try.h), which records
// the failing call in the message buffer and returns DRIFT_EIO after freeing.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "drift_cuda.h"

#include "cuda_try.h"

// The user's question is "is there a GPU?": on a machine without one the runtime answers
// cudaErrorNoDevice, or, when no NVIDIA driver is loaded at all, cudaErrorInsufficientDriver,
// whose own text ("CUDA driver version is insufficient for CUDA runtime version") reads like
// an upgrade problem. Both are said as what they mean; a real driver older than the runtime
// (a driver version is reported) keeps its versions in the message.
extern "C" int drift_cuda_device_count(void)
{
    int count = 0, driver = 0, runtime = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count > 0) return count;
    cudaGetLastError(); // clear the error so that later calls start clean
    if (err == cudaSuccess || err == cudaErrorNoDevice) {
        drift_cuda_fail(DRIFT_EUNSUPPORTED, "no CUDA device found");
        return 0;
    }
    if (err == cudaErrorInsufficientDriver) {
        if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
            cudaGetLastError();
            drift_cuda_fail(DRIFT_EUNSUPPORTED, "no CUDA device found (no NVIDIA driver is loaded)");
            return 0;
        }
        cudaRuntimeGetVersion(&runtime);
        drift_cuda_fail(DRIFT_EUNSUPPORTED,
            "no usable CUDA device: the NVIDIA driver supports CUDA %d.%d, this build needs %d.%d", driver / 1000,
            (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10);
        return 0;
    }
    drift_cuda_fail(DRIFT_EUNSUPPORTED, "no usable CUDA device (cudaGetDeviceCount: %s)", cudaGetErrorString(err));
    return 0;
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
template <int F, int M, int SAT = 0> static __device__ double convert_one(double x)
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
        if constexpr (M == DRIFT_RNE)
            return fp8_to_double(__nv_cvt_double_to_fp8(x, SAT ? __NV_SATFINITE : __NV_NOSAT, __NV_E4M3), __NV_E4M3);
    } else if constexpr (F == DRIFT_FP8E5M2) {
        if constexpr (M == DRIFT_RNE)
            return fp8_to_double(__nv_cvt_double_to_fp8(x, SAT ? __NV_SATFINITE : __NV_NOSAT, __NV_E5M2), __NV_E5M2);
    }
    (void)h;
    (void)r;
    return __longlong_as_double(0x7ff8000000000000ll); // NaN: never launched
}

// The fp32-input instructions (kernel 3): x is an fp32 value (checked on the host).
template <int F, int M, int SAT = 0> static __device__ double convert_f32(double xd)
{
    float x = (float)xd; // exact
    if constexpr (F == DRIFT_FP32) {
        return xd;
    } else if constexpr (F == DRIFT_FP16) {
        if constexpr (M == DRIFT_RNE) return (double)__half2float(__float2half_rn(x));
        if constexpr (M == DRIFT_RZ) return (double)__half2float(__float2half_rz(x));
        if constexpr (M == DRIFT_RU) return (double)__half2float(__float2half_ru(x));
        if constexpr (M == DRIFT_RD) return (double)__half2float(__float2half_rd(x));
    } else if constexpr (F == DRIFT_BF16) {
        if constexpr (M == DRIFT_RNE) return (double)__bfloat162float(__float2bfloat16_rn(x));
        if constexpr (M == DRIFT_RZ) return (double)__bfloat162float(__float2bfloat16_rz(x));
        if constexpr (M == DRIFT_RU) return (double)__bfloat162float(__float2bfloat16_ru(x));
        if constexpr (M == DRIFT_RD) return (double)__bfloat162float(__float2bfloat16_rd(x));
    } else if constexpr (F == DRIFT_TF32) {
        unsigned r = 0;
        if constexpr (M == DRIFT_RNA) {
            asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
            return tf32_bits_to_double(r);
        }
#if __CUDA_ARCH__ >= 900
        if constexpr (M == DRIFT_RNE) asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
        if constexpr (M == DRIFT_RZ) asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
        if constexpr (M == DRIFT_RNE || M == DRIFT_RZ) return tf32_bits_to_double(r);
#endif
        (void)r;
    } else if constexpr (F == DRIFT_FP8E4M3) {
        if constexpr (M == DRIFT_RNE)
            return fp8_to_double(__nv_cvt_float_to_fp8(x, SAT ? __NV_SATFINITE : __NV_NOSAT, __NV_E4M3), __NV_E4M3);
    } else if constexpr (F == DRIFT_FP8E5M2) {
        if constexpr (M == DRIFT_RNE)
            return fp8_to_double(__nv_cvt_float_to_fp8(x, SAT ? __NV_SATFINITE : __NV_NOSAT, __NV_E5M2), __NV_E5M2);
    }
    return __longlong_as_double(0x7ff8000000000000ll); // NaN: never launched
}

// ---- kernels --------------------------------------------------------------------------

// Kernel 1: one element per thread, grid-stride loop.
template <int F, int M, int SAT> static __global__ void convert_kernel1(double *out, const double *in, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = convert_one<F, M, SAT>(in[i]);
}

// Kernel 3: one element per thread, the fp32-input instructions.
template <int F, int M, int SAT> static __global__ void convert_kernel3(double *out, const double *in, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = convert_f32<F, M, SAT>(in[i]);
}

// Kernel 2: four consecutive elements per thread (more independent work per thread; the
// conversions are elementwise, so the results are identical to kernel 1).
template <int F, int M, int SAT> static __global__ void convert_kernel2(double *out, const double *in, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x * 4;
    for (size_t base = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 4; base < n; base += stride) {
#pragma unroll
        for (int j = 0; j < 4; j++)
            if (base + j < n) out[base + j] = convert_one<F, M, SAT>(in[base + j]);
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

template <int F, int M, int SAT> static void launch(int kernel, double *out, const double *in, size_t n)
{
    if (kernel == 1)
        convert_kernel1<F, M, SAT><<<grid_for(n), BLOCK>>>(out, in, n);
    else if (kernel == 2)
        convert_kernel2<F, M, SAT><<<grid_for((n + 3) / 4), BLOCK>>>(out, in, n);
    else
        convert_kernel3<F, M, SAT><<<grid_for(n), BLOCK>>>(out, in, n);
}

template <int F> static int launch_mode(int kernel, double *out, const double *in, size_t n, drift_mode_t m, int sat)
{
    if constexpr (F == DRIFT_FP8E4M3 || F == DRIFT_FP8E5M2) {
        if (m != DRIFT_RNE) return DRIFT_EINVAL;
        if (sat)
            launch<F, DRIFT_RNE, 1>(kernel, out, in, n);
        else
            launch<F, DRIFT_RNE, 0>(kernel, out, in, n);
        return 0;
    }
    switch (m) {
    case DRIFT_RNE: launch<F, DRIFT_RNE, 0>(kernel, out, in, n); return 0;
    case DRIFT_RZ: launch<F, DRIFT_RZ, 0>(kernel, out, in, n); return 0;
    case DRIFT_RNA: launch<F, DRIFT_RNA, 0>(kernel, out, in, n); return 0;
    case DRIFT_RU: launch<F, DRIFT_RU, 0>(kernel, out, in, n); return 0;
    case DRIFT_RD: launch<F, DRIFT_RD, 0>(kernel, out, in, n); return 0;
    default: return DRIFT_EINVAL;
    }
}

// Dispatcher over formats.
static int launch_any(int kernel, double *out, const double *in, size_t n, drift_format_t f, drift_mode_t m, int sat)
{
    switch (f) {
    case DRIFT_FP64: return launch_mode<DRIFT_FP64>(kernel, out, in, n, m, sat);
    case DRIFT_FP32: return launch_mode<DRIFT_FP32>(kernel, out, in, n, m, sat);
    case DRIFT_TF32: return launch_mode<DRIFT_TF32>(kernel, out, in, n, m, sat);
    case DRIFT_FP16: return launch_mode<DRIFT_FP16>(kernel, out, in, n, m, sat);
    case DRIFT_BF16: return launch_mode<DRIFT_BF16>(kernel, out, in, n, m, sat);
    case DRIFT_FP8E4M3: return launch_mode<DRIFT_FP8E4M3>(kernel, out, in, n, m, sat);
    case DRIFT_FP8E5M2: return launch_mode<DRIFT_FP8E5M2>(kernel, out, in, n, m, sat);
    default: return DRIFT_EINVAL;
    }
}

// ---- support table --------------------------------------------------------------------

// The method for (f, m, sat, kernel) on a device of compute capability `cc`, or NULL. The
// host check (drift_cuda_check_round) has already refused what no device has.
static const char *method_for(drift_format_t f, drift_mode_t m, int sat, int kernel, int cc)
{
    static const char *const rm[] = {"rn", "rz", "rna", "rp", "rm"};
    static char buf[96];
    if ((unsigned)m > DRIFT_RD) return NULL;
    if (kernel == 3) {
        switch (f) {
        case DRIFT_FP32: return "copy (fp32 input)";
        case DRIFT_FP16:
        case DRIFT_BF16:
            if (m == DRIFT_RNA) return NULL;
            snprintf(buf, sizeof buf, "__float2%s_%s", f == DRIFT_FP16 ? "half" : "bfloat16",
                m == DRIFT_RNE  ? "rn"
                : m == DRIFT_RZ ? "rz"
                : m == DRIFT_RU ? "ru"
                                : "rd");
            return buf;
        case DRIFT_TF32:
            if (m == DRIFT_RNA) return "cvt.rna.tf32.f32";
            if (cc >= 90 && (m == DRIFT_RNE || m == DRIFT_RZ))
                return m == DRIFT_RNE ? "cvt.rn.tf32.f32" : "cvt.rz.tf32.f32";
            return NULL;
        case DRIFT_FP8E4M3:
        case DRIFT_FP8E5M2:
            if (m != DRIFT_RNE) return NULL;
            if (sat && cc >= 89) // cuda_fp8.hpp: the hardware instruction exists only with .satfinite
                snprintf(buf, sizeof buf, "cvt.rn.satfinite.%s.f32", f == DRIFT_FP8E4M3 ? "e4m3x2" : "e5m2x2");
            else
                snprintf(buf, sizeof buf, "__nv_cvt_float_to_fp8 %s %s (software)",
                    f == DRIFT_FP8E4M3 ? "E4M3" : "E5M2", sat ? "SATFINITE" : "NOSAT");
            return buf;
        default: return NULL;
        }
    }
    switch (f) {
    case DRIFT_FP64: return "copy";
    case DRIFT_FP32:
    case DRIFT_FP16:
        if (m == DRIFT_RNA) return NULL;
        snprintf(buf, sizeof buf, "cvt.%s.%s.f64", rm[m], f == DRIFT_FP32 ? "f32" : "f16");
        return buf;
    case DRIFT_BF16:
        if (m == DRIFT_RNA) return NULL;
        snprintf(buf, sizeof buf, cc >= 90 ? "cvt.%s.bf16.f64" : "odd f32 + cvt.%s.bf16.f32", rm[m]);
        return buf;
    case DRIFT_TF32:
        if (m == DRIFT_RNA) return "odd f32 + cvt.rna.tf32.f32";
        if (cc >= 90 && m == DRIFT_RNE) return "odd f32 + cvt.rn.tf32.f32";
        if (cc >= 90 && m == DRIFT_RZ) return "odd f32 + cvt.rz.tf32.f32";
        return NULL;
    case DRIFT_FP8E4M3:
    case DRIFT_FP8E5M2:
        if (m != DRIFT_RNE) return NULL;
        snprintf(buf, sizeof buf, "__nv_cvt_double_to_fp8 %s %s (software)", f == DRIFT_FP8E4M3 ? "E4M3" : "E5M2",
            sat ? "SATFINITE" : "NOSAT");
        return buf;
    default: return NULL;
    }
}

// Compute capability of the current device, or a negative DRIFT_E* code.
extern "C" int drift_cuda_current_cc(void)
{
    int rc = 0, dev = 0, major = 0, minor = 0;
    if (drift_cuda_device_count() == 0) return DRIFT_EUNSUPPORTED;
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major < 8)
        return drift_cuda_fail(
            DRIFT_EUNSUPPORTED, "device %d is sm_%d%d; the backend needs sm_80 or newer", dev, major, minor);
    return major * 10 + minor;
done:
    return rc;
}

static const drift_round_opts_t RNE_OPTS = {DRIFT_RNE, 0, 0};

extern "C" int drift_cuda_round_opts_supported(drift_format_t f, const drift_round_opts_t *o, int kernel)
{
    if (!o) o = &RNE_OPTS;
    int rc = drift_cuda_check_round(NULL, NULL, 0, f, o, kernel);
    if (rc == DRIFT_EUNSUPPORTED) return 0;
    if (rc) return rc;
    int cc = drift_cuda_current_cc();
    if (cc == DRIFT_EUNSUPPORTED) return 0;
    if (cc < 0) return cc;
    if (method_for(f, o->mode, o->saturate, kernel, cc)) return 1;
    drift_cuda_fail(DRIFT_EUNSUPPORTED, "no GPU conversion to %s in mode %s (kernel %d) on sm_%d", drift_format_name(f),
        drift_mode_name(o->mode), kernel, cc);
    return 0;
}

extern "C" const char *drift_cuda_round_opts_method(drift_format_t f, const drift_round_opts_t *o, int kernel)
{
    if (!o) o = &RNE_OPTS;
    if (drift_cuda_check_round(NULL, NULL, 0, f, o, kernel)) return "none";
    int cc = drift_cuda_current_cc();
    const char *s = cc > 0 ? method_for(f, o->mode, o->saturate, kernel, cc) : NULL;
    return s ? s : "none";
}

extern "C" int drift_cuda_round_supported(drift_format_t f, drift_mode_t m)
{
    drift_round_opts_t o = {m, 0, 0};
    return drift_cuda_round_opts_supported(f, &o, 2);
}

extern "C" const char *drift_cuda_round_method(drift_format_t f, drift_mode_t m)
{
    drift_round_opts_t o = {m, 0, 0};
    return drift_cuda_round_opts_method(f, &o, 2);
}

// ---- entry points ---------------------------------------------------------------------

extern "C" int drift_cuda_round_opts(
    double *out, const double *in, size_t n, drift_format_t f, const drift_round_opts_t *o, int kernel)
{
    if (!o) o = &RNE_OPTS;
    int rc = drift_cuda_check_round(out, in, n, f, o, kernel);
    if (rc) return rc;
    double *d_in = NULL, *d_out = NULL;
    int sup = drift_cuda_round_opts_supported(f, o, kernel);
    if (sup < 0) return sup;
    if (sup == 0) return DRIFT_EUNSUPPORTED;
    if (n == 0) return 0;
    if (n > ((size_t)-1) / sizeof(double)) return drift_cuda_fail(DRIFT_ENOMEM, "round: n = %zu is too large", n);
    CUDA_TRY(cudaMalloc((void **)&d_in, n * sizeof(double)));
    CUDA_TRY(cudaMalloc((void **)&d_out, n * sizeof(double)));
    CUDA_TRY(cudaMemcpy(d_in, in, n * sizeof(double), cudaMemcpyHostToDevice));
    if (launch_any(kernel, d_out, d_in, n, f, o->mode, o->saturate) != 0)
        FAIL_TO_DONE(DRIFT_EINVAL, "round: no launcher for %s %s", drift_format_name(f), drift_mode_name(o->mode));
    CUDA_TRY(cudaGetLastError());      // launch configuration errors
    CUDA_TRY(cudaDeviceSynchronize()); // errors while the kernel ran
    CUDA_TRY(cudaMemcpy(out, d_out, n * sizeof(double), cudaMemcpyDeviceToHost));
done:
    // free whatever was allocated; a failure here must not hide the first error
    if (d_in) cudaFree(d_in);
    if (d_out) cudaFree(d_out);
    return rc;
}

extern "C" int drift_cuda_round_kernel(
    double *out, const double *in, size_t n, drift_format_t f, drift_mode_t m, int kernel)
{
    drift_round_opts_t o = {m, 0, 0};
    return drift_cuda_round_opts(out, in, n, f, &o, kernel);
}

extern "C" int drift_cuda_round(double *out, const double *in, size_t n, drift_format_t f, drift_mode_t m)
{
    return drift_cuda_round_kernel(out, in, n, f, m, 2);
}
