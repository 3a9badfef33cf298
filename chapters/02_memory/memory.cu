// Chapter 02: memory spaces.
//
// Read notes/02_memory.md first. The exercises, in the order of the notes:
//   1. pitched 2D memory: a kernel that walks rows by the pitch, and the round trip through it
//   2. constant memory and symbols: a filter whose coefficients live in __constant__ memory
//   3. coalescing and bank conflicts: a matrix transpose, naive, tiled, and tiled with padding
//   4. a tiled matrix multiply
//   5. register pressure: __launch_bounds__
//   6. page-locked and mapped (zero-copy) memory
//   7. unified memory, prefetched
// Replace every TODO; the grader's contract is grader/contracts/02_memory.h.
#include <cstdlib>

#include "02_memory.h"
#include "check.h"

namespace ch02 {

// ---- Exercise 1: pitched 2D memory --------------------------------------------------------------
__global__ void brighten_kernel(float* image, size_t pitch, int width, int height, float delta) {
    // TODO: one thread per pixel (x, y). Row y starts y * pitch *bytes* after `image`.
}

void brighten_pitched(float* image, size_t pitch, int width, int height, float delta, cudaStream_t stream) {
    // TODO: a 2D grid of 2D blocks covering width x height, launched on `stream`.
}

size_t brighten_round_trip(const float* host_in, float* host_out, int width, int height, float delta) {
    // TODO: cudaMallocPitch, cudaMemcpy2D in, brighten_pitched, cudaMemcpy2D out, cudaFree.
    // The host rows are packed: their pitch is width * sizeof(float).
    return 0;
}

// ---- Exercise 2: constant memory and symbols ----------------------------------------------------
// TODO: a __constant__ array of kTaps floats for the coefficients, and a __device__ unsigned counter.

__global__ void filter_kernel_impl(const float* in, float* out, int n, float threshold) {
    // TODO: out[i] as the contract says, reading the coefficients from constant memory; count the
    // outputs above `threshold` in the __device__ counter (atomicAdd; one per warp is enough).
}

void set_filter(const float* coefficients) {
    // TODO: cudaMemcpyToSymbol.
}

void filter(const float* in, float* out, int n, float threshold, cudaStream_t stream) {
    // TODO: launch filter_kernel_impl on `stream`.
}

void reset_count() {
    // TODO: cudaMemcpyToSymbol of a 0.
}

unsigned read_count() {
    // TODO: wait for the device, then cudaMemcpyFromSymbol.
    return 0;
}

const void* filter_kernel() { return reinterpret_cast<const void*>(filter_kernel_impl); }

// ---- Exercise 3: a matrix transpose ---------------------------------------------------------------
void transpose_naive(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
    // TODO: a kernel where a warp reads 32 neighbours of a row of `in` and writes them down a column
    // of `out`.
}

void transpose_tiled(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
    // TODO: a 32 x 32 tile in shared memory; a block of 32 x 8 threads reads the tile along rows of
    // `in`, waits, and writes its transpose along rows of `out`. Mind the edges of ragged sizes.
}

void transpose_padded(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
    // TODO: as transpose_tiled, with a tile 33 floats wide. Which bank does tile[r][c] fall in?
}

// ---- Exercise 4: a tiled matrix multiply ----------------------------------------------------------
void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
    // TODO: one thread per element of c, a 2D grid of 2D blocks.
}

void matmul_tiled(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
    // TODO: a block loads a tile of a and a tile of b into shared memory, waits, multiplies them
    // into its tile of c, waits again, and moves one tile along k. Zeros outside the matrices add
    // nothing. Then let each thread compute several elements of c, reusing what it read.
}

// ---- Exercise 5: register pressure ------------------------------------------------------------------
// TODO: the bounds below let the compiler give each thread all the registers it likes, so few
// blocks fit on an SM. Ask for what the contract needs instead, and check with nvcc -Xptxas -v
// that nothing spills.
__global__ void __launch_bounds__(kHeavyThreads, 1) heavy_kernel_impl(const float4* in, float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 values[kHeavyValues];
#pragma unroll
    for (int v = 0; v < kHeavyValues; ++v) values[v] = in[size_t(v) * n + i];
    float sum = 0;
#pragma unroll
    for (int v = 0; v < kHeavyValues; ++v) {
        const float4 x = values[v];
        sum += ((x.x * 0.5f + x.y) * x.z + x.w) * float(v + 1);
    }
    out[i] = sum;
}

void launch_heavy(const float4* in, float* out, int n, cudaStream_t stream) {
    heavy_kernel_impl<<<(n + kHeavyThreads - 1) / kHeavyThreads, kHeavyThreads, 0, stream>>>(in, out, n);
    CHECK(cudaGetLastError());
}

const void* heavy_kernel() { return reinterpret_cast<const void*>(heavy_kernel_impl); }

// ---- Exercise 6: page-locked and mapped memory ----------------------------------------------------
void* allocate_pinned(size_t bytes) {
    // TODO: page-locked and mapped (cudaHostAlloc). This is ordinary pageable memory.
    return std::malloc(bytes);
}

void free_pinned(void* host) {
    // TODO: memory from cudaHostAlloc goes back with cudaFreeHost.
    std::free(host);
}

void sum_mapped(const int* host, size_t n, unsigned long long* total, cudaStream_t stream) {
    // TODO: the device's view of `host` (cudaHostGetDevicePointer), and a kernel that adds the ints
    // up from there into *total: wide loads, a warp's partial sums, one atomicAdd per warp.
}

// ---- Exercise 7: unified memory ---------------------------------------------------------------------
void scale_managed(float* data, size_t n, float factor, cudaStream_t stream) {
    // TODO: cudaMemPrefetchAsync to this device (a cudaMemLocation) on `stream`, then a kernel that
    // multiplies every element by `factor`.
}

}  // namespace ch02
