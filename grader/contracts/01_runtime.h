// Chapter 01 (runtime): the functions the grader calls. Your runtime.cu implements them; do not
// change this file, or the grader will not build against your code.
//
// No include guard: the grader includes this file twice, once for the code it grades and once,
// under another namespace, for its own copy of the reference solution.
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>

namespace ch01 {

// ---- Exercise 1: initialize the runtime and describe the device ----------------------------
struct DeviceReport {
    int device = -1;
    std::string name;
    int compute_major = 0, compute_minor = 0;
    int sm_count = 0;
    size_t global_memory_bytes = 0;
    int l2_cache_bytes = 0;
    int persisting_l2_max_bytes = 0;    // the most L2 that can be set aside for persisting accesses
    int async_engine_count = 0;         // copy engines
    size_t shared_memory_per_block_optin = 0;  // the most a block may ask for, opting in
    bool cluster_launch = false;        // can launch thread block clusters
};

// Initializes the runtime on `device`, makes it the current device, and describes it.
DeviceReport init_and_describe(int device);

// ---- Exercise 2: errors ----------------------------------------------------------------------
// A message for a failed call that names the call, the file and line, and the error:
//   "cudaMalloc(&p, bytes) failed at runtime.cu:42: cudaErrorMemoryAllocation (out of memory)"
std::string describe_cuda_error(cudaError_t error, const char* call, const char* file, int line);

// Launches fill_with_index over out[0, n) with `threads_per_block` threads per block and returns
// the launch's own error, leaving no error pending behind it.
cudaError_t launch_fill(int* out, int n, int threads_per_block);

// Runs a kernel that writes through a null pointer, and reports what each step returned.
struct AsyncFaultReport {
    cudaError_t at_launch = cudaErrorUnknown;  // what the launch itself reported
    cudaError_t at_sync = cudaErrorUnknown;    // what the next synchronization reported
    cudaError_t afterwards = cudaErrorUnknown; // what a later, unrelated cudaMalloc reported
};
AsyncFaultReport run_faulting_kernel();

// ---- Exercise 3: thread indexing ---------------------------------------------------------------
// A 2D grid of 2D blocks over a width x height array (row-major). The thread for element (x, y)
// adds 1 to visits[y * width + x] and stores (y << 16) | x into coords[y * width + x].
void visit_2d(int* visits, int* coords, int width, int height);

// A grid-stride loop: exactly `blocks` blocks of `threads` threads add 1 to each of visits[0, n).
void visit_grid_stride(int* visits, size_t n, int blocks, int threads);

// ---- Exercise 4: vector addition at the memory's speed -----------------------------------------
// c[i] = a[i] + b[i] for i in [0, n), enqueued on `stream`; returns without waiting.
void vector_add(const float* a, const float* b, float* c, size_t n, cudaStream_t stream);

// ---- Exercise 5: timing with events ------------------------------------------------------------
// Times `work`, which enqueues GPU work on `stream`, with CUDA events; returns milliseconds once
// the work has finished.
float time_with_events_ms(const std::function<void(cudaStream_t)>& work, cudaStream_t stream);

}  // namespace ch01
