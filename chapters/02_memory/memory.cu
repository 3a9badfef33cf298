// Chapter 02: memory spaces.
//
// Read notes/02_memory.md first. The exercises, in the order of the notes:
//   1. pitched 2D memory: a kernel that walks rows by the pitch, and the round trip through it
//   2. constant memory and symbols: a filter whose coefficients live in __constant__ memory
//   3. coalescing and bank conflicts: a matrix transpose, naive, tiled, and tiled with padding
// Replace every TODO; the grader's contract is grader/contracts/02_memory.h.
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

}  // namespace ch02
