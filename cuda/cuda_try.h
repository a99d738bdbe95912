// cuda_try.h — the backend's one error convention for CUDA calls (internal to cuda/*.cu).
//
// Every CUDA runtime call and every launch goes through CUDA_TRY: on failure it records
// "file:line: call: error string (error name)" with drift_cuda_fail, sets rc = DRIFT_EIO
// and jumps to the function's cleanup label `done`, which frees what was allocated and
// returns rc. A launch is checked twice: LAUNCH_TRY checks the configuration at once
// (cudaGetLastError) and the caller synchronises (CUDA_TRY(cudaDeviceSynchronize())) before
// reading results, which reports faults that happened while the kernel ran.
#ifndef DRIFT_CUDA_TRY_H
#define DRIFT_CUDA_TRY_H

#include <cuda_runtime.h>

#include "drift_cuda.h"

extern "C" {
#include "drift.h"
}

#define CUDA_TRY(call)                                                                                                 \
    do {                                                                                                               \
        cudaError_t err_ = (call);                                                                                     \
        if (err_ != cudaSuccess) {                                                                                     \
            rc = drift_cuda_fail(DRIFT_EIO, "%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, cudaGetErrorString(err_), \
                cudaGetErrorName(err_));                                                                               \
            goto done;                                                                                                 \
        }                                                                                                              \
    } while (0)

// A kernel launch (the <<<...>>> expression) followed by the configuration check.
#define LAUNCH_TRY(...)               \
    do {                              \
        __VA_ARGS__;                  \
        CUDA_TRY(cudaGetLastError()); \
    } while (0)

// Fail with DRIFT_EUNSUPPORTED (or any code) and a message, through the same cleanup path.
#define FAIL_TO_DONE(code, ...)                    \
    do {                                           \
        rc = drift_cuda_fail((code), __VA_ARGS__); \
        goto done;                                 \
    } while (0)

#endif
