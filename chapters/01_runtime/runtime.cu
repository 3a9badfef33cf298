// Chapter 01: the CUDA runtime. Your exercise: replace every TODO.
//
// Read notes/01_runtime.md first, and README.md beside this file for the tasks. The exercises,
// in the order of the notes:
//   1. initialize the runtime on a device and describe it
//   2. errors: a checking helper, a bad launch configuration, an asynchronous fault
//   3. thread indexing: a 2D grid of 2D blocks, and a grid-stride loop
//   4. vector addition at the speed of the memory
//   5. timing with events
// Grade it with:  ./grade 01_runtime
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
    DeviceReport r;
    // TODO: initialize the runtime on `device` (cudaInitDevice) and make it current
    //       (cudaSetDevice); then fill every field of r from cudaGetDeviceProperties and
    //       cudaDeviceGetAttribute (cluster launch: the clusterLaunch field, or its attribute).
    (void)device;
    return r;
}

// ---- Exercise 2: errors ----------------------------------------------------------------------

std::string describe_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
    // TODO: return "<call> failed at <file>:<line>: <error name> (<error description>)".
    //       cudaGetErrorName and cudaGetErrorString give the last two.
    (void)error, (void)call, (void)file, (void)line;
    return "";
}

// Given: writes each element's index.
__global__ void fill_with_index(int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i;
}

cudaError_t launch_fill(int* out, int n, int threads_per_block) {
    // TODO: launch fill_with_index over out[0, n) with threads_per_block threads per block and
    //       return the launch's error. The grader tries invalid configurations too; afterwards
    //       no error may be left pending (cudaGetLastError vs cudaPeekAtLastError).
    (void)out, (void)n, (void)threads_per_block;
    return cudaSuccess;
}

// Given: writes through p.
__global__ void write_one(int* p) { *p = 1; }

AsyncFaultReport run_faulting_kernel() {
    AsyncFaultReport r;
    // TODO: launch write_one<<<1, 1>>>(nullptr), then record in r what the launch reported, what
    //       cudaDeviceSynchronize reported, and what a cudaMalloc of 4 bytes reports afterwards.
    //       (No CHECK here: we want the codes, not an exception.)
    return r;
}

// ---- Exercise 3: thread indexing ---------------------------------------------------------------

// TODO: a kernel for a 2D grid of 2D blocks. The thread for element (x, y) adds 1 to
//       visits[y * width + x] (atomicAdd) and stores (y << 16) | x in coords[y * width + x].
//       The grid covers the array; threads outside it must not write.

void visit_2d(int* visits, int* coords, int width, int height) {
    // TODO: launch your kernel with 2D blocks and a 2D grid that covers width x height.
    (void)visits, (void)coords, (void)width, (void)height;
}

// TODO: a grid-stride kernel: each thread adds 1 to visits[i] for its first index i, then
//       i + (total number of threads), and so on while i < n.

void visit_grid_stride(int* visits, size_t n, int blocks, int threads) {
    // TODO: launch your kernel with exactly `blocks` blocks of `threads` threads.
    (void)visits, (void)n, (void)blocks, (void)threads;
}

// ---- Exercise 4: vector addition at the memory's speed -----------------------------------------

// TODO: a kernel for c[i] = a[i] + b[i].

void vector_add(const float* a, const float* b, float* c, size_t n, cudaStream_t stream) {
    // TODO: launch your kernel on `stream` over all n elements. Do not synchronize: the grader
    //       times this function back to back with a device-to-device copy.
    (void)a, (void)b, (void)c, (void)n, (void)stream;
}

// ---- Exercise 5: timing with events ------------------------------------------------------------

float time_with_events_ms(const std::function<void(cudaStream_t)>& work, cudaStream_t stream) {
    // TODO: create two events, record one on `stream`, call work(stream), record the other on
    //       `stream`, wait for it, and return the milliseconds between them. Destroy the events.
    (void)work, (void)stream;
    return 0.0f;
}

}  // namespace ch01
