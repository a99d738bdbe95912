// check_versions.cu — the versions every GPU result depends on: device, compute capability,
// driver, runtime, cuBLAS / cuBLASLt, and the nvcc that built the backend. Always passes when
// a device answers (its rows are INFO); without one: "no CUDA device: skipped".
#include <cuda_runtime.h>
#include <stdio.h>

#include "check_common.h"
#include "drift_cuda_gemm.h"

int main(void)
{
    if (skip_without_device("check_versions")) return 0;
    char desc[256], blas[128];
    drift_cuda_describe(desc, sizeof desc);
    drift_cuda_blas_versions(blas, sizeof blas);
    row("INFO", "device: %s", desc);
    row("INFO", "compute capability: sm_%d", drift_cuda_current_cc());
    row("INFO", "libraries: %s", blas);
    row("INFO", "built with nvcc %d.%d for %s", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__,
        "sm_80, sm_90 (CMAKE_CUDA_ARCHITECTURES)");
    int v = 0;
    row(cudaRuntimeGetVersion(&v) == cudaSuccess ? "PASS" : "FAIL", "runtime answers: %d", v);
    return finish("check_versions");
}
