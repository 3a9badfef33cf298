#include "device.h"

#include <cuda_runtime.h>

#include <stdexcept>

#include "cuda_check.h"
#include "gpu_work.h"

namespace grade {

std::string why_no_gpu() {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess)
        return std::string("no usable CUDA GPU: cudaGetDeviceCount returned ") + cudaGetErrorName(err) + " (" +
               cudaGetErrorString(err) + ")";
    if (count == 0) return "no CUDA GPU on this machine";
    return "";
}

std::string compute_capability(int device) {
    int major = 0, minor = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return std::to_string(major) + "." + std::to_string(minor);
}

nlohmann::json device_fingerprint(int device) {
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    int driver = 0, runtime = 0, sm_clock_khz = 0, mem_clock_khz = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device));
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    return {{"name", p.name},
            {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
            {"sms", p.multiProcessorCount},
            {"memory_bytes", p.totalGlobalMem},
            {"l2_bytes", p.l2CacheSize},
            {"max_sm_clock_mhz", sm_clock_khz / 1000},
            {"max_memory_clock_mhz", mem_clock_khz / 1000},
            {"driver_cuda_version", version(driver)},
            {"runtime_cuda_version", version(runtime)}};
}

void check_build_runs_on_gpu() {
    const cudaError_t err = launch_probe_kernel();
    if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorUnsupportedPtxVersion ||
        err == cudaErrorInvalidKernelImage)
        throw std::runtime_error("this build has no code for the GPU (compute capability " + compute_capability() +
                                 "): set it up again with -Dgpu_arch=" + [] {
                                     std::string cc = compute_capability();
                                     return cc.erase(cc.find('.'), 1);
                                 }() + " (" + cudaGetErrorName(err) + ")");
    if (err != cudaSuccess) throw_cuda_error(err, "launch_probe_kernel()", __FILE__, __LINE__);
}

}  // namespace grade
