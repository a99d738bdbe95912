/* drift_cuda.h — the CUDA backend's C ABI: device discovery, the last error message, and
 * the number-format conversions done by the GPU's own instructions.
 *
 * Usable from C and C++ (the functions have C linkage). Every function is safe to call on
 * a machine without a driver or device: drift_cuda_device_count() returns 0 there and the
 * others return DRIFT_EUNSUPPORTED, with drift_cuda_message() saying why.
 *
 * Why conversions on the GPU at all: the lab's CPU rounding (lib/core/format.c) models what the
 * hardware does. The conformance check (cuda/check_convert.cu) holds the two against each
 * other value by value; where they differ, one of them is wrong about the hardware.
 *
 * Which instruction does each conversion (double in, rounded value out, single rounding):
 *   fp64     copy (every mode)
 *   fp32     cvt.{rn,rz,rp,rm}.f32.f64               rne rz ru rd
 *   fp16     cvt.{rn,rz,rp,rm}.f16.f64               rne rz ru rd
 *   bf16     sm_90+: cvt.{rn,rz,rp,rm}.bf16.f64      rne rz ru rd
 *            sm_80 : round to odd at fp32 (cvt.rz.f32.f64 + sticky bit), then
 *                    cvt.{rn,rz,rp,rm}.bf16.f32 — exact by Boldo & Melquiond, since
 *                    24 >= 8 + 2 bits and the exponent ranges are equal
 *   tf32     round to odd at fp32, then cvt.rna.tf32.f32 (sm_80+: rna) or
 *            cvt.{rn,rz}.tf32.f32 (sm_90+: rne, rz)   — the tensor cores' conversion
 *   fp8e4m3, fp8e5m2  __nv_cvt_double_to_fp8(x, __NV_NOSAT, ...) from cuda_fp8.h (NVIDIA's
 *            device conversion, rne only)
 * Everything else (rna for fp32/fp16/bf16, ru/rd for tf32, sr) has no instruction here:
 * DRIFT_EUNSUPPORTED. Subnormals are kept and overflow follows IEEE 754 (the lab's
 * default options): there are no flush or saturate variants.
 *
 * Not thread-safe: the message is one static buffer. */
#ifndef DRIFT_CUDA_H
#define DRIFT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "format.h"

/* Number of CUDA devices; 0 when there is no driver, no device, or CUDA reports an
 * error (the reason is then in drift_cuda_message()). Never negative. */
int drift_cuda_device_count(void);

/* The last error (or the reason for the last DRIFT_EUNSUPPORTED) as one line; "" if none. */
const char *drift_cuda_message(void);

/* One line describing runtime, driver and device 0 (cuda/describe.cu); never fails. */
void drift_cuda_describe(char *buf, size_t size);

/* 1 when (f, m) has a conversion on the current device, 0 when not (reason in the
 * message), or a negative DRIFT_E* code when CUDA fails. */
int drift_cuda_round_supported(drift_format_t f, drift_mode_t m);

/* The instruction(s) drift_cuda_round uses for (f, m) on the current device, or "none". */
const char *drift_cuda_round_method(drift_format_t f, drift_mode_t m);

/* Kernel versions (llm.c style): 1 = one element per thread in a grid-stride loop,
 * 2 = four consecutive elements per thread. Both give identical results. */
#define DRIFT_CUDA_ROUND_KERNELS 2

/* out[i] = in[i] rounded once to f in mode m by the GPU (host pointers; the function
 * allocates, copies and frees). Returns 0, DRIFT_EINVAL (bad pointer, format, mode or
 * kernel), DRIFT_EUNSUPPORTED (no device, or no instruction for (f, m) on it) or
 * DRIFT_EIO (a CUDA call or launch failed; drift_cuda_message() names it). */
int drift_cuda_round_kernel(double *out, const double *in, size_t n, drift_format_t f, drift_mode_t m, int kernel);

/* drift_cuda_round_kernel with the default kernel (2). */
int drift_cuda_round(double *out, const double *in, size_t n, drift_format_t f, drift_mode_t m);

#ifdef __cplusplus
}
#endif

#endif
