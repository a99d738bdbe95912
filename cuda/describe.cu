// describe.cu — the CUDA part of the environment snapshot (lib/run/envinfo.c), with a C ABI.
// Never fails: a machine without a driver or device gets a sentence saying so.
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" void drift_cuda_describe(char *buf, size_t size)
{
    int runtime = 0, driver = 0, count = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaError_t err = cudaDriverGetVersion(&driver);
    if (err != cudaSuccess || driver == 0) {
        snprintf(buf, size, "CUDA runtime %d.%d, no driver", runtime / 1000, (runtime % 1000) / 10);
        return;
    }
    err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) { // said as in drift_cuda_device_count (convert.cu)
        int none = err == cudaSuccess || err == cudaErrorNoDevice;
        snprintf(buf, size, "CUDA runtime %d.%d, driver %d.%d, %s%s%s", runtime / 1000, (runtime % 1000) / 10,
            driver / 1000, (driver % 1000) / 10, none ? "no CUDA device found" : "no usable CUDA device (",
            none ? "" : cudaGetErrorString(err), none ? "" : ")");
        cudaGetLastError(); // clear the sticky error so later calls start clean
        return;
    }
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        snprintf(buf, size, "CUDA runtime %d.%d, driver %d.%d, device 0 unreadable", runtime / 1000,
            (runtime % 1000) / 10, driver / 1000, (driver % 1000) / 10);
        return;
    }
    snprintf(buf, size, "CUDA runtime %d.%d, driver %d.%d, GPU %s (sm_%d%d, %d SMs)", runtime / 1000,
        (runtime % 1000) / 10, driver / 1000, (driver % 1000) / 10, prop.name, prop.major, prop.minor,
        prop.multiProcessorCount);
}
