// Chapter 01: the CUDA runtime. Reference solution.
//
// Read notes/01_runtime.md first. The exercises, in the order of the notes:
//   1. initialize the runtime on a device and describe it
//   2. errors: a checking helper, a bad launch configuration, an asynchronous fault
//   3. thread indexing: a 2D grid of 2D blocks, and a grid-stride loop
//   4. vector addition at the speed of the memory
//   5. timing with events
#include "01_runtime.h"

#include <cstdint>
#include <stdexcept>

namespace ch01 {

// Every runtime call below goes through CHECK, built on exercise 2's describe_cuda_error.
#define CHECK(call)                                                                           \
    do {                                                                                      \
        cudaError_t check_status_ = (call);                                                   \
        if (check_status_ != cudaSuccess)                                                     \
            throw std::runtime_error(describe_cuda_error(check_status_, #call, __FILE__, __LINE__)); \
    } while (0)

// ---- Exercise 1: initialize the runtime and describe the device ----------------------------

DeviceReport init_and_describe(int device) {
    // cudaInitDevice creates the device's primary context now, so that its cost is paid here and
    // not inside the first timed call.
    CHECK(cudaInitDevice(device, 0, 0));
    CHECK(cudaSetDevice(device));

    cudaDeviceProp props{};
    CHECK(cudaGetDeviceProperties(&props, device));
    int cluster_launch = 0;
    CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device));

    DeviceReport r;
    r.device = device;
    r.name = props.name;
    r.compute_major = props.major;
    r.compute_minor = props.minor;
    r.sm_count = props.multiProcessorCount;
    r.global_memory_bytes = props.totalGlobalMem;
    r.l2_cache_bytes = props.l2CacheSize;
    r.persisting_l2_max_bytes = props.persistingL2CacheMaxSize;
    r.async_engine_count = props.asyncEngineCount;
    r.shared_memory_per_block_optin = props.sharedMemPerBlockOptin;
    r.cluster_launch = cluster_launch != 0;
    return r;
}

// ---- Exercise 2: errors ----------------------------------------------------------------------

std::string describe_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
    return std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
           cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")";
}

__global__ void fill_with_index(int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i;
}

cudaError_t launch_fill(int* out, int n, int threads_per_block) {
    const int blocks = threads_per_block > 0 ? (n + threads_per_block - 1) / threads_per_block : 1;
    fill_with_index<<<blocks, threads_per_block>>>(out, n);
    // cudaGetLastError returns the launch's error and clears it; cudaPeekAtLastError would leave
    // it pending, to be returned again by the next unrelated cudaGetLastError.
    return cudaGetLastError();
}

__global__ void write_one(int* p) { *p = 1; }

AsyncFaultReport run_faulting_kernel() {
    AsyncFaultReport r;
    write_one<<<1, 1>>>(nullptr);
    r.at_launch = cudaGetLastError();     // the launch itself was fine: cudaSuccess
    r.at_sync = cudaDeviceSynchronize();  // the fault happened on the GPU, reported here
    int* p = nullptr;
    r.afterwards = cudaMalloc(&p, sizeof(int));  // sticky: the context is unusable from now on
    return r;
}

// ---- Exercise 3: thread indexing ---------------------------------------------------------------

__global__ void visit_2d_kernel(int* visits, int* coords, int width, int height) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;  // the last blocks stick out past the edges
    const size_t i = static_cast<size_t>(y) * width + x;
    atomicAdd(&visits[i], 1);
    coords[i] = (y << 16) | x;
}

void visit_2d(int* visits, int* coords, int width, int height) {
    const dim3 block(32, 8);  // 32 wide: a warp reads one contiguous row segment
    const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    visit_2d_kernel<<<grid, block>>>(visits, coords, width, height);
    CHECK(cudaGetLastError());
}

__global__ void visit_grid_stride_kernel(int* visits, size_t n) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&visits[i], 1);
}

void visit_grid_stride(int* visits, size_t n, int blocks, int threads) {
    visit_grid_stride_kernel<<<blocks, threads>>>(visits, n);
    CHECK(cudaGetLastError());
}

// ---- Exercise 4: vector addition at the memory's speed -----------------------------------------

// Each thread adds one float4 (16 bytes from each input): a quarter of the instructions and
// memory transactions of one float per thread. The first n % 4 threads past the float4 part
// add the leftover elements.
__global__ void vector_add_float4(const float4* __restrict__ a, const float4* __restrict__ b,
                                  float4* __restrict__ c, size_t n) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t n4 = n / 4;
    if (i < n4) {
        const float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    } else if (i - n4 < n % 4) {
        const size_t j = 4 * n4 + (i - n4);
        reinterpret_cast<float*>(c)[j] = reinterpret_cast<const float*>(a)[j] + reinterpret_cast<const float*>(b)[j];
    }
}

__global__ void vector_add_scalar(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                  size_t n) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

void vector_add(const float* a, const float* b, float* c, size_t n, cudaStream_t stream) {
    if (n == 0) return;
    const int threads = 256;
    auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % sizeof(float4) == 0; };
    if (aligned(a) && aligned(b) && aligned(c)) {
        const size_t work = n / 4 + n % 4;
        vector_add_float4<<<(work + threads - 1) / threads, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b), reinterpret_cast<float4*>(c), n);
    } else {
        vector_add_scalar<<<(n + threads - 1) / threads, threads, 0, stream>>>(a, b, c, n);
    }
    CHECK(cudaGetLastError());
}

// ---- Exercise 5: timing with events ------------------------------------------------------------

float time_with_events_ms(const std::function<void(cudaStream_t)>& work, cudaStream_t stream) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    // Both events go on the work's own stream: on another stream they would not bracket it.
    CHECK(cudaEventRecord(start, stream));
    work(stream);
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));  // the host waits here until the work is done
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return ms;
}

}  // namespace ch01
