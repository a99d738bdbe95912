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
 *   fp8e4m3, fp8e5m2  __nv_cvt_double_to_fp8(x, __NV_NOSAT or __NV_SATFINITE, ...) from
 *            cuda_fp8.h (NVIDIA's device conversion, rne only; SATFINITE is the lab's
 *            saturate = 1: overflow and infinities give +-max_finite)
 * Kernel 3 is the fp32-input path the tensor-core pipelines use, for inputs that are fp32
 * values (DRIFT_EINVAL otherwise): __float2half_{rn,rz,ru,rd}, __float2bfloat16_{rn,rz,ru,rd},
 * cvt.rna.tf32.f32 (sm_90: also cvt.{rn,rz}.tf32.f32), __nv_cvt_float_to_fp8 (NOSAT and
 * SATFINITE), fp32 copy.
 * Everything else (rna for fp32/fp16/bf16, ru/rd for tf32, sr, flush_subnormals, saturate
 * outside fp8) has no instruction here: DRIFT_EUNSUPPORTED. Subnormals are kept and overflow
 * follows IEEE 754 unless saturate is asked for (fp8 only).
 *
 * Argument checking (cuda/args.c) is plain C and runs without a device or even without the
 * CUDA backend: drift_cuda_check_round() gives exactly the DRIFT_E* code the entry point would
 * give before it touches CUDA, with the reason in drift_cuda_message().
 *
 * Error convention of the whole backend: every function returns 0 or a negative DRIFT_E*
 * code and leaves a one-line reason in drift_cuda_message(): DRIFT_EINVAL (bad argument, the
 * CPU path gives the same), DRIFT_EUNSUPPORTED (no device, or no GPU path for the
 * combination), DRIFT_EIO (a CUDA, cuBLAS or launch call failed: the message names the call,
 * file and line). Not thread-safe: the message is one static buffer. */
#ifndef DRIFT_CUDA_H
#define DRIFT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "drift.h"
#include "format.h"

/* ---- always available (cuda/args.c, plain C) ---------------------------------------- */

/* The last error (or the reason for the last DRIFT_EUNSUPPORTED) as one line; "" if none. */
const char *drift_cuda_message(void);
/* Set the message (printf format); returns code, so that `return drift_cuda_fail(rc, ...)`. */
int drift_cuda_fail(int code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Kernel versions of the conversion (llm.c style): 1 = one element per thread in a
 * grid-stride loop, 2 = four consecutive elements per thread (identical results), 3 = the
 * fp32-input instructions (inputs must be fp32 values). */
#define DRIFT_CUDA_ROUND_KERNELS 3

/* What drift_cuda_round_opts would return before touching the device: DRIFT_EINVAL for a
 * NULL pointer with n > 0, a format or mode out of range, a kernel outside 1..3, or (kernel 3)
 * an input that is not an fp32 value; DRIFT_EUNSUPPORTED for SR, flush_subnormals, saturate
 * outside fp8, or rounding modes no instruction has (rna outside tf32, tf32 ru/rd).
 * Modes that only sm_90 has (bf16 from fp64 is done through round-to-odd elsewhere; tf32
 * rne/rz) pass here and are refused by the device check. */
DRIFT_MUST_CHECK int drift_cuda_check_round(
    const double *out, const double *in, size_t n, drift_format_t f, const drift_round_opts_t *o, int kernel);

/* ---- needs the CUDA backend (cuda/convert.cu, cuda/describe.cu) -------------------- */

/* Number of CUDA devices; 0 when there is no driver, no device, or CUDA reports an
 * error (the reason is then in drift_cuda_message()). Never negative. */
int drift_cuda_device_count(void);

/* Compute capability of the current device as major * 10 + minor (90 on an H100/H200), or
 * DRIFT_EUNSUPPORTED (no device, or older than sm_80: the message says which) or DRIFT_EIO. */
DRIFT_MUST_CHECK int drift_cuda_current_cc(void);

/* One line describing runtime, driver and device 0 (cuda/describe.cu); never fails. */
void drift_cuda_describe(char *buf, size_t size);

/* 1 when (f, m) has a conversion on the current device, 0 when not (reason in the
 * message), or a negative DRIFT_E* code when CUDA fails. */
DRIFT_MUST_CHECK int drift_cuda_round_supported(drift_format_t f, drift_mode_t m);

/* The instruction(s) drift_cuda_round uses for (f, m) on the current device, or "none". */
const char *drift_cuda_round_method(drift_format_t f, drift_mode_t m);

/* out[i] = in[i] rounded once to f in mode m by the GPU (host pointers; the function
 * allocates, copies and frees). Returns 0, DRIFT_EINVAL (bad pointer, format, mode or
 * kernel), DRIFT_EUNSUPPORTED (no device, or no instruction for (f, m) on it) or
 * DRIFT_EIO (a CUDA call or launch failed; drift_cuda_message() names it). */
DRIFT_MUST_CHECK int drift_cuda_round_kernel(
    double *out, const double *in, size_t n, drift_format_t f, drift_mode_t m, int kernel);

/* drift_cuda_round_kernel with the default kernel (2). */
DRIFT_MUST_CHECK int drift_cuda_round(double *out, const double *in, size_t n, drift_format_t f, drift_mode_t m);

/* The general entry: o gives mode and saturate (fp8 only; o == NULL: RNE). The CPU twin is
 * drift_round(in[i], f, o, 0) for every i, bit for bit (NaN equals NaN). */
DRIFT_MUST_CHECK int drift_cuda_round_opts(
    double *out, const double *in, size_t n, drift_format_t f, const drift_round_opts_t *o, int kernel);
/* 1 when (f, o, kernel) has an instruction on the current device, 0 when not (reason in the
 * message), negative on CUDA failure. */
DRIFT_MUST_CHECK int drift_cuda_round_opts_supported(drift_format_t f, const drift_round_opts_t *o, int kernel);
/* The instruction(s) for (f, o, kernel) on the current device, or "none". */
const char *drift_cuda_round_opts_method(drift_format_t f, const drift_round_opts_t *o, int kernel);

#ifdef __cplusplus
}
#endif

#endif
